/**
 * The tool-call syntaxes models write into their text when the server runs no tool parser.
 * This registry is the single source of the README's syntaxes table (scripts/gen-text-calls-table.ts).
 */

export interface TextCallSyntax {
  /** The name used in `textCalls` options and stamped on calls as `textSyntax`. */
  readonly name: string;
  /** Model families that write it. */
  readonly models: string;
  /** What a call looks like (abridged). */
  readonly example: string;
  /** The literal markers that open a call (empty for syntaxes recognized only at the start of the message). */
  readonly markers: readonly string[];
  /**
   * Where it is recognized: anywhere in the text, or at the start of the message (and, with the
   * caller's tool names, anywhere a known tool name opens the call).
   */
  readonly where: "anywhere" | "message start" | "message start; anywhere after a known tool name";
  /** The reasoning markup read with it (routed to reasoning, never a source of calls by default). */
  readonly reasoning: string;
  /** When the call counts as complete (its end marker). */
  readonly complete: string;
  /** The published template or parser tests the scanner follows. */
  readonly reference: string;
  /**
   * Read only when named (`syntaxes: ["firefunction"]`), not under `"auto"`: its marker is plain
   * text a message may begin with, so reading it for everyone would hold back every message that
   * begins like it.
   */
  readonly optIn?: true;
}

/** Every syntax the text-call extractor reads, with its models, markers and the reference it follows. */
export const TEXT_CALL_SYNTAXES = [
  {
    name: "hermes",
    models: "Hermes 2 Pro / 3, Qwen 2.5, Qwen 3, QwQ",
    example: '<tool_call>{"name": "f", "arguments": {…}}</tool_call>',
    markers: ["<tool_call>"],
    where: "anywhere",
    reasoning: "`<think>…</think>`; a lone `</think>` (the prompt opened the block)",
    complete: "the envelope object closes (`</tool_call>` is consumed when present)",
    reference: "Qwen2.5/Qwen3 chat templates; vLLM hermes_tool_parser tests",
  },
  {
    name: "qwen3-coder",
    models: "Qwen3-Coder, Qwen3-Next (XML tool format)",
    example: "<tool_call><function=f><parameter=k>v</parameter></function></tool_call>",
    markers: ["<tool_call>", "<function="],
    where: "anywhere",
    reasoning: "`<think>…</think>`; a lone `</think>`",
    complete: "`</function>` (a stray `</tool_call>` after it is markup, also without the opening tag)",
    reference: "Qwen3-Coder chat template and qwen3coder_tool_parser; vLLM qwen3coder/qwen3_xml parser tests",
  },
  {
    name: "glm",
    models: "GLM-4.5, GLM-4.6, GLM-4.7",
    example: "<tool_call>f\\n<arg_key>k</arg_key>\\n<arg_value>v</arg_value>\\n</tool_call>",
    markers: ["<tool_call>"],
    where: "anywhere",
    reasoning: "`<think>…</think>`",
    complete: "`</tool_call>`",
    reference: "GLM-4.5 chat template; vLLM glm4_moe_tool_parser and SGLang glm4_moe parser tests",
  },
  {
    name: "kimi-k2",
    models: "Kimi K2 (Moonshot; also served raw by Bedrock and relays)",
    example: "<|tool_calls_section_begin|><|tool_call_begin|>functions.f:0<|tool_call_argument_begin|>{…}<|tool_call_end|><|tool_calls_section_end|>",
    markers: ["<|tool_calls_section_begin|>", "<|tool_call_begin|>"],
    where: "anywhere",
    reasoning: "`<think>…</think>`; its call tokens end the block (Kimi K2 Thinking calls from inside it)",
    complete: "the arguments object closes, or `<|tool_call_end|>` ends it (unclosed arguments: an `invalid_json` call); an id without `:INDEX` is text",
    reference: "Kimi K2 tokenizer config and tool-call guide; vLLM kimi_k2_tool_parser and SGLang kimik2 tests",
  },
  {
    name: "mistral",
    models: "Mistral 7B v0.3, Mixtral, Mistral Small 3.x, Magistral, Devstral, Ministral",
    example: '[TOOL_CALLS][{"name": "f", "arguments": {…}}], [TOOL_CALLS]f[ARGS]{…}, [TOOL_CALLS]f[CALL_ID]id[ARGS]{…} or [TOOL_CALLS]f{…}',
    markers: ["[TOOL_CALLS]"],
    where: "anywhere",
    reasoning: "`[THINK]…[/THINK]` (Magistral)",
    complete: "the arguments object closes; `[TOOL_CALLS]` is a control token, never text",
    reference: "mistral-common tokenizers v3 and v11+; vLLM mistral_tool_parser tests",
  },
  {
    name: "llama3-json",
    models: "Llama 3.1, 3.2, 3.3 (JSON tool calling)",
    example: '<|python_tag|>{"name": "f", "parameters": {…}} or a bare {"name": "f", "parameters": {…}}',
    markers: ["<|python_tag|>"],
    where: "message start; anywhere after a known tool name",
    reasoning: "none",
    complete: "the envelope object closes; several calls are separated by `;` or newlines",
    reference: "Llama 3.1/3.2 JSON tool-calling templates; vLLM llama_tool_parser (llama3_json) tests",
  },
  {
    name: "pythonic",
    models: "Llama 3.2 / Llama 4 (pythonic), ToolACE and other pythonic fine-tunes",
    example: '[f(a=1, b="x"), g()] or <|python_start|>[f(a=1)]<|python_end|> (Llama 4)',
    markers: ["<|python_start|>"],
    where: "message start; anywhere after a known tool name",
    reasoning: "none",
    complete: "the list's `]`; Python literals become JSON (True → true, None → null, 'x' → \"x\"); a list that is not valid Python is text",
    reference: "Llama 3.2 and Llama 4 pythonic templates; vLLM pythonic_tool_parser and llama4_pythonic tests",
  },
  {
    name: "deepseek",
    models: "DeepSeek V3, V3-0324, R1, R1-0528, V3.1, V3.2, V4",
    example: '<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>f\\n```json\\n{…}\\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜> (V3.1: f<｜tool▁sep｜>{…}; V3.2 DSML: <｜DSML｜function_calls><｜DSML｜invoke name="f"><｜DSML｜parameter name="k" string="true">v</｜DSML｜parameter></｜DSML｜invoke></｜DSML｜function_calls>)',
    markers: ["<｜tool▁calls▁begin｜>", "<｜tool▁call▁begin｜>", "<｜DSML｜function_calls>", "<｜DSML｜tool_calls>"],
    where: "anywhere",
    reasoning: "`<think>…</think>`; a lone `</think>` (R1)",
    complete: "the arguments object closes, or `<｜tool▁call▁end｜>` ends it (the fence is consumed when present); DSML: `</｜DSML｜invoke>`",
    reference: "DeepSeek V3 / V3.1 / V3.2 chat templates; vLLM deepseekv3, deepseekv31 and deepseekv32 tool parser tests, SGLang deepseekv32 detector",
  },
  {
    name: "harmony",
    models: "gpt-oss-20b, gpt-oss-120b (OpenAI harmony format)",
    example: "<|channel|>commentary to=functions.f <|constrain|>json<|message|>{…}<|call|>",
    markers: [
      "<|start|>assistant<|channel|>commentary to=functions.",
      "<|channel|>commentary to=functions.",
      "<|start|>assistant to=functions.",
      "<|channel|>analysis to=functions.",
      "<|start|>assistant<|channel|>analysis to=functions.",
    ],
    where: "anywhere",
    reasoning: "the `analysis` channel (`<|channel|>analysis<|message|>…<|end|>`, or up to the next `<|start|>` header when `<|end|>` is missing); `final` channel headers and the `<|end|>`, `<|return|>` tokens are markup",
    complete: "the arguments object closes, or `<|call|>` ends it; the recipient may stand in the role header (also ` to=functions.f` opening the message)",
    reference: "OpenAI harmony response format guide; vLLM gpt-oss harmony tool-calling tests",
  },
  {
    name: "nemotron",
    models: "Nemotron Nano v2 (NVIDIA)",
    example: '<TOOLCALL>[{"name": "f", "arguments": {…}}, …]</TOOLCALL>',
    markers: ["<TOOLCALL>"],
    where: "anywhere",
    reasoning: "none",
    complete: "each list item's object closes (`</TOOLCALL>` is consumed when present); an empty list is text",
    reference: "Nemotron Nano v2 chat template; llama.cpp common/chat.cpp and test-chat.cpp (Nemotron v2)",
  },
  {
    name: "firefunction",
    models: "FireFunction v2 (Fireworks)",
    example: 'functools[{"name": "f", "arguments": {…}}, …]',
    markers: [],
    where: "message start",
    reasoning: "none",
    complete: "each list item's object closes; an empty list is text",
    reference: "FireFunction v2 chat template; llama.cpp common/chat.cpp and test-chat.cpp (FireFunction v2)",
    optIn: true,
  },
] as const satisfies readonly TextCallSyntax[];

/** A syntax the text-call extractor can read. */
export type TextCallSyntaxName = (typeof TEXT_CALL_SYNTAXES)[number]["name"];

/** The names accepted by the `textCalls` option (besides "auto"). */
export const TEXT_CALL_SYNTAX_NAMES: readonly TextCallSyntaxName[] = TEXT_CALL_SYNTAXES.map((syntax) => syntax.name);

/** The syntaxes `"auto"` reads: every one but those read only when named (`optIn`). */
export const AUTO_TEXT_CALL_SYNTAX_NAMES: readonly TextCallSyntaxName[] = TEXT_CALL_SYNTAXES.filter((syntax: TextCallSyntax) => syntax.optIn !== true).map((syntax) => syntax.name);

/** True for a name in TEXT_CALL_SYNTAX_NAMES. */
export function isTextCallSyntaxName(value: unknown): value is TextCallSyntaxName {
  return typeof value === "string" && (TEXT_CALL_SYNTAX_NAMES as readonly string[]).includes(value);
}

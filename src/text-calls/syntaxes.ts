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
  /** Where it is recognized: anywhere in the text, or only as the whole message. */
  readonly where: "anywhere" | "message start";
  /** When the call counts as complete (its end marker). */
  readonly complete: string;
  /** The published template or parser tests the scanner follows. */
  readonly reference: string;
}

/** Every syntax the text-call extractor reads, with its models, markers and the reference it follows. */
export const TEXT_CALL_SYNTAXES = [
  {
    name: "hermes",
    models: "Hermes 2 Pro / 3, Qwen 2.5, Qwen 3, QwQ",
    example: '<tool_call>{"name": "f", "arguments": {…}}</tool_call>',
    markers: ["<tool_call>"],
    where: "anywhere",
    complete: "the envelope object closes (`</tool_call>` is consumed when present)",
    reference: "Qwen2.5/Qwen3 chat templates; vLLM hermes_tool_parser tests",
  },
  {
    name: "qwen3-coder",
    models: "Qwen3-Coder, Qwen3-Next (XML tool format)",
    example: "<tool_call><function=f><parameter=k>v</parameter></function></tool_call>",
    markers: ["<tool_call>", "<function="],
    where: "anywhere",
    complete: "`</function>`",
    reference: "Qwen3-Coder chat template and qwen3coder_tool_parser; vLLM qwen3coder/qwen3_xml parser tests",
  },
  {
    name: "glm",
    models: "GLM-4.5, GLM-4.6, GLM-4.7",
    example: "<tool_call>f\\n<arg_key>k</arg_key>\\n<arg_value>v</arg_value>\\n</tool_call>",
    markers: ["<tool_call>"],
    where: "anywhere",
    complete: "`</tool_call>`",
    reference: "GLM-4.5 chat template; vLLM glm4_moe_tool_parser and SGLang glm4_moe parser tests",
  },
  {
    name: "kimi-k2",
    models: "Kimi K2 (Moonshot; also served raw by Bedrock and relays)",
    example: "<|tool_calls_section_begin|><|tool_call_begin|>functions.f:0<|tool_call_argument_begin|>{…}<|tool_call_end|><|tool_calls_section_end|>",
    markers: ["<|tool_calls_section_begin|>", "<|tool_call_begin|>"],
    where: "anywhere",
    complete: "the arguments object closes (`<|tool_call_end|>` is consumed when present)",
    reference: "Kimi K2 tokenizer config and tool-call guide; vLLM kimi_k2_tool_parser and SGLang kimik2 tests",
  },
  {
    name: "mistral",
    models: "Mistral 7B v0.3, Mixtral, Mistral Small 3.x, Magistral, Devstral, Ministral",
    example: '[TOOL_CALLS][{"name": "f", "arguments": {…}}] or [TOOL_CALLS]f[ARGS]{…}',
    markers: ["[TOOL_CALLS]"],
    where: "anywhere",
    complete: "the arguments object closes",
    reference: "mistral-common tokenizers v3 and v11+; vLLM mistral_tool_parser tests",
  },
  {
    name: "llama3-json",
    models: "Llama 3.1, 3.2, 3.3 (JSON tool calling)",
    example: '<|python_tag|>{"name": "f", "parameters": {…}} or a message that is only {"name": "f", "parameters": {…}}',
    markers: ["<|python_tag|>"],
    where: "anywhere",
    complete: "the envelope object closes; several calls are separated by `;`",
    reference: "Llama 3.1/3.2 JSON tool-calling templates; vLLM llama_tool_parser (llama3_json) tests",
  },
  {
    name: "pythonic",
    models: "Llama 3.2 / Llama 4 (pythonic), ToolACE and other pythonic fine-tunes",
    example: '[f(a=1, b="x"), g()]',
    markers: [],
    where: "message start",
    complete: "the call's `)`; Python literals become JSON (True → true, None → null, 'x' → \"x\")",
    reference: "Llama 3.2 and Llama 4 pythonic templates; vLLM pythonic_tool_parser and llama4_pythonic tests",
  },
  {
    name: "deepseek",
    models: "DeepSeek V3, V3-0324, R1, R1-0528, V3.1, V3.2",
    example: "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>f\\n```json\\n{…}\\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜> (V3.1: f<｜tool▁sep｜>{…})",
    markers: ["<｜tool▁calls▁begin｜>", "<｜tool▁call▁begin｜>"],
    where: "anywhere",
    complete: "the arguments object closes (the fence and `<｜tool▁call▁end｜>` are consumed when present)",
    reference: "DeepSeek V3 / V3.1 chat templates; vLLM deepseekv3 and deepseekv31 tool parser tests",
  },
  {
    name: "harmony",
    models: "gpt-oss-20b, gpt-oss-120b (OpenAI harmony format)",
    example: "<|channel|>commentary to=functions.f <|constrain|>json<|message|>{…}<|call|>",
    markers: ["<|start|>assistant<|channel|>commentary to=functions.", "<|channel|>commentary to=functions.", "<|start|>assistant to=functions."],
    where: "anywhere",
    complete: "the arguments object closes (`<|call|>` is consumed when present)",
    reference: "OpenAI harmony response format guide; vLLM gpt-oss harmony tool-calling tests",
  },
] as const satisfies readonly TextCallSyntax[];

/** A syntax the text-call extractor can read. */
export type TextCallSyntaxName = (typeof TEXT_CALL_SYNTAXES)[number]["name"];

/** The names accepted by the `textCalls` option (besides "auto"). */
export const TEXT_CALL_SYNTAX_NAMES: readonly TextCallSyntaxName[] = TEXT_CALL_SYNTAXES.map((syntax) => syntax.name);

/** True for a name in TEXT_CALL_SYNTAX_NAMES. */
export function isTextCallSyntaxName(value: unknown): value is TextCallSyntaxName {
  return typeof value === "string" && (TEXT_CALL_SYNTAX_NAMES as readonly string[]).includes(value);
}

import { ToolwireError } from "../errors.js";
import { AUTO_TEXT_CALL_SYNTAX_NAMES, isTextCallSyntaxName, TEXT_CALL_SYNTAX_NAMES, type TextCallSyntaxName } from "./syntaxes.js";
import { isPlainObject } from "../json/shape.js";

/**
 * A tool the caller offered the model, in any of the common shapes: `{name, parameters}`,
 * OpenAI chat `{type: "function", function: {name, parameters}}`, Anthropic `{name, input_schema}`,
 * Bedrock `{toolSpec: {name, inputSchema: {json}}}`. Only the name and the parameters' JSON schema
 * are read.
 */
export type TextCallTool = Record<string, unknown>;

/** Detailed text-call settings. */
export interface TextCallOptions {
  /** Syntaxes to recognize: `"auto"` (every syntax but FireFunction's, which is read only when named) or a list of names. */
  syntaxes?: "auto" | readonly TextCallSyntaxName[];
  /**
   * Only these tool names become calls; a call naming anything else stays text, with a
   * `text_call_unknown_tool` diagnostic. Defaults to the names of `tools`, else any name.
   */
  toolNames?: readonly string[];
  /**
   * The tools offered to the model. Their names restrict calls (see `toolNames`), and their
   * parameter schemas type XML-style parameter values (Qwen3-Coder, GLM): a value is a string
   * unless the schema says the parameter is a number, integer, boolean, object, array or null
   * (a parameter that may be a string or null is null when its value is the bare word `null`).
   */
  tools?: readonly TextCallTool[];
  /**
   * Also read calls in reasoning: reasoning deltas, and reasoning written into the text
   * (`<think>…</think>`, `[THINK]…[/THINK]`, harmony's analysis channel). Default false: a call a
   * model only writes while it thinks is reasoning, never a call.
   */
  reasoning?: boolean;
  /**
   * Whether the prompt opened a think block (Qwen3 and DeepSeek-R1 templates end the prompt with
   * `<think>`): `"open"`: the text is reasoning until `</think>` (or Magistral's `[/THINK]`); `"closed"`: it is not, and calls
   * are passed on as soon as their markup closes; `"auto"` (default): a lone `</think>` ends
   * reasoning the prompt opened: calls read before it are held until it comes or the text ends
   * (at most 64 KiB), and are reasoning if it comes (not complete if the stream is cut first).
   */
  thinking?: "auto" | "open" | "closed";
}

/**
 * Turns on the text-call extractor: `"auto"`, a list of syntax names, or `TextCallOptions`.
 * Off when absent.
 */
export type TextCallSetting = "auto" | readonly TextCallSyntaxName[] | TextCallOptions;

/**
 * A parameter's JSON kind from the tool schema: `string` (stream as a JSON string), `json`, or
 * `string-or-null` (a string that may be null: the bare value `null` is JSON null, as llama.cpp,
 * vLLM and SGLang read it; anything else is the string written).
 */
export type ParamKind = "string" | "json" | "string-or-null";

/** `textCalls` after validation: the syntaxes to look for, the allowed tool names and parameter kinds. */
export interface ResolvedTextCallOptions {
  syntaxes: ReadonlySet<TextCallSyntaxName>;
  toolNames: ReadonlySet<string> | null;
  reasoning: boolean;
  thinking: "auto" | "open" | "closed";
  /** tool name → parameter name → kind, for the parameters whose schema is not a plain string. */
  paramKinds: ReadonlyMap<string, ReadonlyMap<string, ParamKind>>;
}

/** Thrown when `textCalls` names an unknown syntax or has the wrong shape. */
export class TextCallOptionsError extends ToolwireError {
  constructor(message: string) {
    super("invalid_text_call_options", message);
    this.name = "TextCallOptionsError";
  }
}


/**
 * The names and parameter schemas of a tool definition in any shape sanitizeTools reads (Gemini's
 * `{functionDeclarations: […]}` holds several), or null when it is none.
 */
export function readTools(tool: unknown): Array<{ name: string; schema: unknown }> | null {
  if (!isPlainObject(tool)) return null;
  const declarations = tool.functionDeclarations ?? tool.function_declarations;
  if (Array.isArray(declarations)) {
    const read = declarations.map((declaration) => readTool(declaration));
    return read.every((entry) => entry !== null) ? (read as Array<{ name: string; schema: unknown }>) : null;
  }
  const one = readTool(tool);
  return one ? [one] : null;
}

/**
 * A JSON value holding tool definitions: a list of them, or an object with a `tools` list (a
 * request body). The list, or why it is none (no list, or the position of an entry without a name).
 */
export function toolListOf(value: unknown): { tools: TextCallTool[] } | { error: string } {
  const list = Array.isArray(value) ? value : isPlainObject(value) && Array.isArray(value.tools) ? value.tools : null;
  if (list === null) return { error: 'expected a JSON list of tool definitions, or an object with a "tools" list' };
  const bad = list.findIndex((tool) => readTools(tool) === null);
  if (bad >= 0) return { error: `tools[${bad}] is not a tool definition with a name: ${JSON.stringify(list[bad])?.slice(0, 120)}` };
  return { tools: list as TextCallTool[] };
}

/** The name and parameter schema of a tool in any supported shape, or null. */
export function readTool(tool: unknown): { name: string; schema: unknown } | null {
  if (!isPlainObject(tool)) return null;
  if (isPlainObject(tool.function) && typeof tool.function.name === "string") return { name: tool.function.name, schema: tool.function.parameters };
  if (isPlainObject(tool.toolSpec) && typeof tool.toolSpec.name === "string") {
    const input = tool.toolSpec.inputSchema;
    return { name: tool.toolSpec.name, schema: isPlainObject(input) && "json" in input ? input.json : input };
  }
  if (typeof tool.name === "string") return { name: tool.name, schema: tool.parameters ?? tool.input_schema ?? tool.inputSchema ?? tool.parametersJsonSchema };
  return null;
}

const JSON_KINDS = new Set(["number", "integer", "boolean", "object", "array", "null"]);

/**
 * The kind a parameter schema asks for: a string unless every type it allows is a non-string JSON
 * type; a string or null when it allows exactly those two. The types come from `type` (one or a
 * list) or, without it, from an `anyOf` / `oneOf` of single-typed alternatives, as Pydantic v2
 * writes Optional[int] or Optional[str]: the servers type such a parameter by its non-null type.
 */
function kindOf(schema: unknown): ParamKind {
  if (!isPlainObject(schema)) return "string";
  const type = schema.type;
  const types = typeof type === "string" ? [type] : Array.isArray(type) ? type : alternativeTypes(schema.anyOf ?? schema.oneOf);
  if (types && types.length > 0 && types.every((t) => typeof t === "string" && JSON_KINDS.has(t))) return "json";
  if (isStringOrNull(types)) return "string-or-null";
  return "string";
}

/** The `type` of each alternative of an `anyOf` / `oneOf` list, or null when one has no single type. */
function alternativeTypes(alternatives: unknown): unknown[] | null {
  if (!Array.isArray(alternatives)) return null;
  const types = alternatives.map((alternative) => (isPlainObject(alternative) && typeof alternative.type === "string" ? alternative.type : null));
  return types.every((type) => type !== null) ? types : null;
}

function isStringOrNull(types: readonly unknown[] | null): boolean {
  return types !== null && types.length === 2 && types.includes("string") && types.includes("null");
}

function paramKindsOf(schema: unknown): Map<string, ParamKind> {
  const kinds = new Map<string, ParamKind>();
  if (!isPlainObject(schema) || !isPlainObject(schema.properties)) return kinds;
  for (const [key, property] of Object.entries(schema.properties)) {
    const kind = kindOf(property);
    if (kind !== "string") kinds.set(key, kind);
  }
  return kinds;
}

/** Validates and normalizes a `textCalls` setting; null when it is absent (extraction off). */
export function resolveTextCallOptions(setting: TextCallSetting | undefined | null): ResolvedTextCallOptions | null {
  if (setting === undefined || setting === null) return null;
  // The usual setting, resolved once: every decoder of every turn would otherwise rebuild it.
  if (setting === "auto") return (resolvedAuto ??= resolveSetting("auto"));
  return resolveSetting(setting);
}

let resolvedAuto: ResolvedTextCallOptions | null = null;

function resolveSetting(setting: TextCallSetting): ResolvedTextCallOptions {
  const options: TextCallOptions = setting === "auto" || Array.isArray(setting) ? { syntaxes: setting as "auto" | readonly TextCallSyntaxName[] } : (setting as TextCallOptions);
  if (!isPlainObject(options)) throw new TextCallOptionsError(`textCalls must be "auto", a list of syntax names or an options object; got ${JSON.stringify(setting)}.`);
  const requested = options.syntaxes ?? "auto";
  let syntaxes: TextCallSyntaxName[];
  if (requested === "auto") syntaxes = [...AUTO_TEXT_CALL_SYNTAX_NAMES];
  else if (Array.isArray(requested)) {
    const unknown = requested.filter((name) => !isTextCallSyntaxName(name));
    if (unknown.length > 0) throw new TextCallOptionsError(`Unknown text-call syntax ${unknown.map((n) => JSON.stringify(n)).join(", ")}. Known: auto, ${TEXT_CALL_SYNTAX_NAMES.join(", ")}.`);
    syntaxes = [...requested];
  } else throw new TextCallOptionsError(`textCalls.syntaxes must be "auto" or a list of syntax names; got ${JSON.stringify(requested)}.`);
  const paramKinds = new Map<string, ReadonlyMap<string, ParamKind>>();
  const toolNamesFromTools: string[] = [];
  if (options.tools !== undefined) {
    if (!Array.isArray(options.tools)) throw new TextCallOptionsError("textCalls.tools must be a list of tool definitions.");
    for (const tool of options.tools) {
      const tools = readTools(tool);
      if (!tools) throw new TextCallOptionsError(`A tool in textCalls.tools has no name: ${JSON.stringify(tool)?.slice(0, 200)}.`);
      for (const read of tools) {
        toolNamesFromTools.push(read.name);
        const kinds = paramKindsOf(read.schema);
        if (kinds.size > 0) paramKinds.set(read.name, kinds);
      }
    }
  }
  if (options.toolNames !== undefined && (!Array.isArray(options.toolNames) || options.toolNames.some((n) => typeof n !== "string"))) {
    throw new TextCallOptionsError("textCalls.toolNames must be a list of strings.");
  }
  const names = options.toolNames ?? (options.tools !== undefined ? toolNamesFromTools : null);
  const thinking = options.thinking ?? "auto";
  if (thinking !== "auto" && thinking !== "open" && thinking !== "closed") throw new TextCallOptionsError(`textCalls.thinking must be "auto", "open" or "closed"; got ${JSON.stringify(thinking)}.`);
  return {
    syntaxes: new Set(syntaxes),
    toolNames: names ? new Set(names) : null,
    reasoning: options.reasoning === true,
    thinking,
    paramKinds,
  };
}

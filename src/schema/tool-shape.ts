import { ToolwireError } from "../errors.js";
import { isPlainObject } from "./json-schema.js";

/** Recognizing whole tool definitions (so a schema function can refuse one instead of mangling it). */

/** The tool-definition shapes sanitizeTools reads. */
export type ToolShape =
  /** OpenAI Chat Completions: `{type: "function", function: {name, description, parameters}}`. */
  | "openai-chat"
  /** OpenAI Responses: `{type: "function", name, description, parameters, strict}`. */
  | "openai-responses"
  /** Anthropic Messages: `{name, description, input_schema}`. */
  | "anthropic"
  /** MCP `tools/list`: `{name, description, inputSchema}`. */
  | "mcp"
  /** Bedrock Converse: `{toolSpec: {name, description, inputSchema: {json}}}`. */
  | "bedrock"
  /** Gemini: `{functionDeclarations: [{name, description, parameters | parametersJsonSchema}]}`. */
  | "gemini"
  /** A bare function declaration: `{name, description, parameters}` (Gemini's, or a chat tool's `function`). */
  | "function";

/** Where each shape keeps its schema, for documentation and messages. */
export const TOOL_SHAPES: Readonly<Record<ToolShape, string>> = {
  "openai-chat": "`function.parameters`",
  "openai-responses": "`parameters`",
  anthropic: "`input_schema`",
  mcp: "`inputSchema`",
  bedrock: "`toolSpec.inputSchema.json`",
  gemini: "`functionDeclarations[].parameters` (or `parametersJsonSchema`, which takes JSON Schema: the `gemini` target sanitizes it with the `openai` rules)",
  function: "`parameters`",
};

const JSON_TYPE_NAMES = new Set(["object", "array", "string", "number", "integer", "boolean", "null"]);

/**
 * The tool shape of a value, or null when it is not a tool definition. A JSON Schema is never
 * mistaken for one: a node with `properties` or a JSON type is a schema.
 */
export function detectToolShape(value: unknown): ToolShape | null {
  if (!isPlainObject(value)) return null;
  if (isPlainObject(value.properties) || (typeof value.type === "string" && JSON_TYPE_NAMES.has(value.type))) return null;
  if (isPlainObject(value.toolSpec)) return "bedrock";
  if (Array.isArray(value.functionDeclarations) || Array.isArray(value.function_declarations)) return "gemini";
  if (isPlainObject(value.function) && typeof value.function.name === "string") return "openai-chat";
  if (typeof value.name !== "string") return null;
  if ("input_schema" in value) return "anthropic";
  if ("inputSchema" in value) return "mcp";
  if (value.type === "function") return "openai-responses";
  if ("parameters" in value || "parametersJsonSchema" in value) return "function";
  return null;
}

/** Thrown when sanitizeSchema or checkSchema is given a whole tool definition instead of its parameter schema. */
export class ToolDefinitionGivenError extends ToolwireError {
  constructor(
    readonly shape: ToolShape,
    readonly toolName: string | null,
    fn: "sanitizeSchema" | "checkSchema",
  ) {
    super(
      "schema_is_tool_definition",
      `${fn} was given a whole ${shape} tool definition${toolName ? ` ('${toolName}')` : ""}, not a parameter schema: ` +
        `use sanitizeTools([tool], target), which finds the schema (${TOOL_SHAPES[shape]}) and keeps the tool's shape, or pass the schema itself.`,
    );
  }
}

/** Throws ToolDefinitionGivenError when `value` is a tool definition. */
export function refuseToolDefinition(value: unknown, fn: "sanitizeSchema" | "checkSchema"): void {
  const shape = detectToolShape(value);
  if (shape === null) return;
  throw new ToolDefinitionGivenError(shape, toolName(value as Record<string, unknown>, shape), fn);
}

/** The tool's name (for Gemini, its declarations' names joined). */
export function toolName(tool: Record<string, unknown>, shape: ToolShape): string | null {
  const holder = shape === "openai-chat" ? tool.function : shape === "bedrock" ? tool.toolSpec : tool;
  if (shape === "gemini") {
    const decls = (tool.functionDeclarations ?? tool.function_declarations) as unknown[];
    const names = decls.map((d) => (isPlainObject(d) && typeof d.name === "string" ? d.name : null)).filter((n): n is string => n !== null);
    return names.length > 0 ? names.join(", ") : null;
  }
  return isPlainObject(holder) && typeof holder.name === "string" ? holder.name : null;
}

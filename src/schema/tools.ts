import { ToolwireError } from "../errors.js";
import { checkSchema, type SanitizeOptions, type SchemaProblem, type TargetName } from "./check.js";
import { escapePointer, isPlainObject } from "./json-schema.js";
import { findTarget } from "./targets/index.js";
import { detectToolShape, toolName, type ToolShape } from "./tool-shape.js";
import { restoreArguments, type ArgumentMap } from "./value-map.js";
import { sanitizeSchema, type SanitizeResult, type SchemaChange } from "./sanitize.js";

/**
 * Whole tool definitions, in every provider's shape, sanitized for a target: the schema inside
 * each tool is rewritten and put back where it was, everything else (names, descriptions, flags,
 * provider built-in tools) is left as it came.
 */

/** Thrown by sanitizeTools for input that is not a list of tool objects. */
export class InvalidToolsError extends ToolwireError {
  constructor(message: string) {
    super("invalid_tools", message);
  }
}

/** One schema sanitized inside the tool list. */
export interface SanitizedTool {
  /** Index of the tool in the input list. */
  index: number;
  /** For Gemini, the index of the declaration inside the tool's `functionDeclarations`. */
  declaration?: number;
  name: string | null;
  shape: ToolShape;
  /** JSON pointer of the schema in the input list (`#/0/function/parameters`). */
  path: string;
  result: SanitizeResult;
}

/**
 * The result of `sanitizeTools`: the tools in their own shape with schemas rewritten for the
 * target, every change and remaining problem by tool, and the tools skipped.
 */
export interface SanitizeToolsResult {
  /** The tools in the same shape and order, each schema rewritten for the target. */
  tools: unknown[];
  /** One entry per schema found, in order. */
  entries: SanitizedTool[];
  /** Every change, with the tool it was made in. */
  changes: Array<SchemaChange & { tool: string | null }>;
  /** What is still wrong after sanitizing, with the tool it is in. */
  problems: Array<SchemaProblem & { tool: string | null }>;
  /** Tools passed through unchanged: provider built-ins and tools without a schema. */
  skipped: Array<{ index: number; reason: string }>;
  /** The argument map of a tool by name (undefined for unknown names). */
  argumentMap(name: string): ArgumentMap | undefined;
  /** A call's arguments (shaped by the sanitized schema) in the shape the tool expects. */
  restoreArguments(name: string, args: unknown): unknown;
}

interface Slot {
  name: string | null;
  shape: ToolShape;
  declaration?: number;
  path: string;
  schema: unknown;
}

/**
 * Sanitizes every tool's schema for `target`, with each tool in its provider's own shape (Chat
 * Completions, Responses, Anthropic, MCP, Bedrock Converse, Gemini, a bare function declaration;
 * the list may mix them). Tools that carry no schema (provider built-ins such as `{type: "web_search"}`,
 * `{googleSearch: {}}`) pass through unchanged and are listed in `skipped`. The input is never
 * mutated.
 */
export function sanitizeTools(tools: readonly unknown[], target: TargetName, options: SanitizeOptions = {}): SanitizeToolsResult {
  if (!Array.isArray(tools)) {
    const hint = detectToolShape(tools) !== null ? " (one tool: pass [tool])" : isPlainObject(tools) && Array.isArray(tools.tools) ? " (pass body.tools)" : "";
    throw new InvalidToolsError(`sanitizeTools expects an array of tool definitions, got ${describe(tools)}${hint}`);
  }
  const entries: SanitizedTool[] = [];
  const skipped: Array<{ index: number; reason: string }> = [];
  const out = tools.map((tool, index) => {
    if (!isPlainObject(tool)) throw new InvalidToolsError(`tools[${index}] is ${describe(tool)}, not a tool definition object`);
    const shape = detectToolShape(tool);
    if (shape === null) {
      skipped.push({ index, reason: isPlainObject(tool.properties) || typeof tool.type === "string" ? `not a tool definition shape (type ${JSON.stringify(tool.type)})` : "no tool definition shape found" });
      return tool;
    }
    const replaced = rewrite(tool, shape, index, (slot) => {
      const result = sanitizeSchema(slot.schema, slotTarget(slot, target), options);
      entries.push({ index, ...(slot.declaration !== undefined ? { declaration: slot.declaration } : {}), name: slot.name, shape: slot.shape, path: slot.path, result });
      return result.schema;
    });
    if (replaced === tool) skipped.push({ index, reason: `${shape} tool without a schema` });
    return replaced;
  });
  const maps = new Map<string, ArgumentMap>();
  for (const entry of entries) if (entry.name !== null && !maps.has(entry.name)) maps.set(entry.name, entry.result.argumentMap);
  return {
    tools: out,
    entries,
    changes: entries.flatMap((e) => e.result.changes.map((c) => ({ ...c, tool: e.name }))),
    problems: entries.flatMap((e) => e.result.problems.map((p) => ({ ...p, tool: e.name }))),
    skipped,
    argumentMap: (name) => maps.get(name),
    restoreArguments: (name, args) => {
      const map = maps.get(name);
      return map === undefined ? args : restoreArguments(map, args);
    },
  };
}

/** What checkTools found in one schema of the tool list. */
export interface CheckedTool {
  index: number;
  declaration?: number;
  name: string | null;
  shape: ToolShape;
  path: string;
  problems: SchemaProblem[];
}

/** checkSchema for every schema in a tool list (same shapes and skipping as sanitizeTools). */
export function checkTools(tools: readonly unknown[], target: TargetName, options: SanitizeOptions = {}): CheckedTool[] {
  if (!Array.isArray(tools)) throw new InvalidToolsError(`checkTools expects an array of tool definitions, got ${describe(tools)}`);
  const out: CheckedTool[] = [];
  tools.forEach((tool, index) => {
    if (!isPlainObject(tool)) throw new InvalidToolsError(`tools[${index}] is ${describe(tool)}, not a tool definition object`);
    const shape = detectToolShape(tool);
    if (shape === null) return;
    rewrite(tool, shape, index, (slot) => {
      out.push({ index, ...(slot.declaration !== undefined ? { declaration: slot.declaration } : {}), name: slot.name, shape, path: slot.path, problems: checkSchema(slot.schema, target, options) });
      return slot.schema;
    });
  });
  return out;
}

/**
 * Gemini's `parametersJsonSchema` takes (near-full) JSON Schema, not the OpenAPI subset of
 * `parameters`: the gemini target's dialect (`nullable`, string enums) does not belong there, so
 * that field gets the openai rules.
 */
function slotTarget(slot: Slot, target: TargetName): TargetName {
  const jsonSchemaField = slot.path.endsWith("/parametersJsonSchema") || slot.path.endsWith("/parameters_json_schema");
  return jsonSchemaField && findTarget(target)?.name === "gemini" ? "openai" : target;
}

function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return typeof value === "object" ? "an object" : `a ${typeof value}`;
}

/** The tool with each schema slot replaced by `replace(slot)`; the same object when it has none. */
function rewrite(tool: Record<string, unknown>, shape: ToolShape, index: number, replace: (slot: Slot) => unknown): Record<string, unknown> {
  const name = toolName(tool, shape);
  const base = `#/${index}`;
  switch (shape) {
    case "openai-chat": {
      const fn = tool.function as Record<string, unknown>;
      if (!("parameters" in fn)) return tool;
      return { ...tool, function: { ...fn, parameters: replace({ name, shape, path: `${base}/function/parameters`, schema: fn.parameters }) } };
    }
    case "bedrock": {
      const spec = tool.toolSpec as Record<string, unknown>;
      const input = spec.inputSchema;
      if (!isPlainObject(input) || !("json" in input)) return tool;
      return { ...tool, toolSpec: { ...spec, inputSchema: { ...input, json: replace({ name, shape, path: `${base}/toolSpec/inputSchema/json`, schema: input.json }) } } };
    }
    case "gemini": {
      const key = Array.isArray(tool.functionDeclarations) ? "functionDeclarations" : "function_declarations";
      const decls = tool[key] as unknown[];
      let changed = false;
      const rewritten = decls.map((decl, i) => {
        if (!isPlainObject(decl)) return decl;
        const field = "parameters" in decl ? "parameters" : "parametersJsonSchema" in decl ? "parametersJsonSchema" : "parameters_json_schema" in decl ? "parameters_json_schema" : null;
        if (field === null) return decl;
        changed = true;
        const declName = typeof decl.name === "string" ? decl.name : null;
        return { ...decl, [field]: replace({ name: declName, shape, declaration: i, path: `${base}/${key}/${i}/${escapePointer(field)}`, schema: decl[field] }) };
      });
      return changed ? { ...tool, [key]: rewritten } : tool;
    }
    case "anthropic":
    case "mcp":
    case "openai-responses":
    case "function": {
      const field = shape === "anthropic" ? "input_schema" : shape === "mcp" ? "inputSchema" : "parameters" in tool ? "parameters" : "parametersJsonSchema" in tool ? "parametersJsonSchema" : null;
      if (field === null || !(field in tool)) return tool;
      return { ...tool, [field]: replace({ name, shape, path: `${base}/${escapePointer(field)}`, schema: tool[field] }) };
    }
  }
}

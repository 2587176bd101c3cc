import { repairHistory } from "../history/index.js";
import type { HistoryFormat } from "../history/model.js";
import type { RepairPolicy } from "../history/pairing.js";
import { isPlainObject } from "../json/shape.js";
import { sanitizeSchema } from "../schema/sanitize.js";
import type { SchemaTarget } from "../schema/targets/types.js";
import type { RepairReport } from "../reencode/types.js";
import { readTools, type TextCallSetting, type TextCallTool } from "../text-calls/options.js";
import type { DecoderOptions, ProviderName } from "../types.js";

/** Where a protocol keeps its tools' parameter schemas: each entry reads and replaces one schema. */
interface SchemaSlot {
  tool: string;
  schema: unknown;
  set(schema: unknown): void;
}

function schemaSlots(body: Record<string, unknown>, provider: ProviderName): SchemaSlot[] {
  const slots: SchemaSlot[] = [];
  const slot = (owner: Record<string, unknown>, key: string, tool: unknown): void => {
    if (owner[key] === undefined) return;
    slots.push({ tool: typeof tool === "string" ? tool : "", schema: owner[key], set: (schema) => (owner[key] = schema) });
  };
  if (provider === "bedrock") {
    const config = body.toolConfig;
    if (isPlainObject(config) && Array.isArray(config.tools)) {
      for (const tool of config.tools) {
        const spec = isPlainObject(tool) ? tool.toolSpec : null;
        if (isPlainObject(spec) && isPlainObject(spec.inputSchema)) slot(spec.inputSchema, "json", spec.name);
      }
    }
    return slots;
  }
  if (!Array.isArray(body.tools)) return slots;
  for (const tool of body.tools) {
    if (!isPlainObject(tool)) continue;
    switch (provider) {
      case "anthropic":
        // Server tools (`type: web_search_…`) have no schema of ours.
        if (tool.type === undefined || tool.type === "custom") slot(tool, "input_schema", tool.name);
        break;
      case "openai-chat":
      case "ollama":
        if (isPlainObject(tool.function)) slot(tool.function, "parameters", tool.function.name);
        break;
      case "openai-responses":
        if (tool.type === "function") slot(tool, "parameters", tool.name);
        break;
      case "gemini":
        if (Array.isArray(tool.functionDeclarations)) for (const declaration of tool.functionDeclarations) if (isPlainObject(declaration)) slot(declaration, "parameters", declaration.name);
        break;
    }
  }
  return slots;
}

/**
 * Rewrites the request's tool schemas for `target`. Only rewrites that keep the arguments' shape
 * are applied (a sanitizer that renames keys or turns values into JSON strings needs the
 * arguments restored on the way back, which a client that does not know toolwire cannot do):
 * for such a tool the schema is left as it is and the reason reported.
 */
export function sanitizeTools(body: Record<string, unknown>, provider: ProviderName, target: SchemaTarget, reports: RepairReport[], stage: RepairReport["stage"] = "request", strip: readonly string[] = []): boolean {
  let changed = false;
  for (const slot of schemaSlots(body, provider)) {
    const original = strip.length > 0 ? stripKeywords(slot.schema, strip, slot.tool, reports, stage) : slot.schema;
    const result = sanitizeSchema(original, target);
    if (result.argumentMap.length > 0) {
      reports.push({ stage, action: "classified", code: "schema_needs_argument_mapping", tool: slot.tool, message: `The schema of ${slot.tool} would need its arguments reshaped for ${target} (${result.changes.map((change) => change.rule).join(", ")}); it was left as it is.` });
      if (original !== slot.schema) {
        slot.set(original);
        changed = true;
      }
      continue;
    }
    if (result.changes.length === 0 && original === slot.schema) continue;
    slot.set(result.schema);
    changed = true;
    for (const change of result.changes) reports.push({ stage, action: "sanitized", code: change.rule, tool: slot.tool, message: `${slot.tool} ${change.path}: ${change.message}` });
  }
  return changed;
}

/** Removes keywords a provider's grammar compiler rejects (llama.cpp: `pattern`, `format`), moving each into the description. */
function stripKeywords(schema: unknown, keywords: readonly string[], tool: string, reports: RepairReport[], stage: RepairReport["stage"]): unknown {
  const walk = (node: unknown, path: string): unknown => {
    if (Array.isArray(node)) return node.map((item, index) => walk(item, `${path}/${index}`));
    if (!isPlainObject(node)) return node;
    const out: Record<string, unknown> = {};
    const notes: string[] = [];
    for (const [key, value] of Object.entries(node)) {
      if (keywords.includes(key) && (typeof value === "string" || typeof value === "number")) {
        notes.push(`${key}: ${String(value)}`);
        reports.push({ stage, action: "sanitized", code: `strip_${key}`, tool, message: `${tool} ${path}: '${key}' removed (the provider's grammar rejected it); kept in the description.` });
        continue;
      }
      Object.defineProperty(out, key, { value: key === "properties" && isPlainObject(value) ? Object.fromEntries(Object.entries(value).map(([name, child]) => [name, walk(child, `${path}/properties/${name}`)])) : walk(value, `${path}/${key}`), enumerable: true, writable: true, configurable: true });
    }
    if (notes.length > 0) out.description = [typeof out.description === "string" ? out.description : "", `(${notes.join("; ")})`].filter(Boolean).join(" ");
    return out;
  };
  return walk(schema, "#");
}

/** The list the history lives in, per format. */
function historyKey(format: HistoryFormat): "messages" | "input" | "contents" {
  return format === "openai-responses" ? "input" : format === "gemini" ? "contents" : "messages";
}

/** Repairs the request's history in its own format; returns whether anything changed. */
export function repairRequestHistory(body: Record<string, unknown>, format: HistoryFormat, policy: RepairPolicy, reports: RepairReport[], stage: RepairReport["stage"] = "request"): boolean {
  const key = historyKey(format);
  const messages = body[key];
  if (!Array.isArray(messages)) return false;
  let result;
  try {
    result = repairHistory(messages, format, policy);
  } catch (error) {
    reports.push({ stage, action: "classified", code: "history_unreadable", message: `The history could not be read as ${format}: ${error instanceof Error ? error.message : String(error)}; it was sent as it is.` });
    return false;
  }
  if (result.edits.length === 0) return false;
  body[key] = result.messages;
  for (const edit of result.edits) reports.push({ stage, action: "edited", code: edit.code, messageIndex: edit.index, message: edit.message });
  return true;
}

/**
 * The tools a request offers the model, in whatever protocol's shape (`tools`, Gemini's
 * `functionDeclarations`, Bedrock's `toolConfig.tools`): the ones with a name; null when it offers
 * none. Built-in tools without a name (`{type: "web_search"}`) are left out.
 */
export function requestTools(body: Record<string, unknown>): TextCallTool[] | null {
  const config = body.toolConfig;
  const list = Array.isArray(body.tools) ? body.tools : isPlainObject(config) && Array.isArray(config.tools) ? config.tools : null;
  if (list === null) return null;
  const tools = list.filter((tool): tool is TextCallTool => readTools(tool) !== null);
  return tools.length > 0 ? tools : null;
}

/**
 * The decoder options for one request's response: with `textCalls` on, the tools the request
 * offers (when it offers any) type and name its calls, in place of those configured.
 */
export function withRequestTools(options: DecoderOptions | undefined, body: Record<string, unknown> | null): DecoderOptions | undefined {
  const setting = options?.textCalls;
  if (setting === undefined || body === null) return options;
  const tools = requestTools(body);
  if (tools === null) return options;
  return { ...options, textCalls: textCallsWithTools(setting, tools) };
}

function textCallsWithTools(setting: TextCallSetting, tools: TextCallTool[]): TextCallSetting {
  if (setting === "auto" || Array.isArray(setting)) return { syntaxes: setting as "auto", tools };
  const { toolNames: _names, ...rest } = setting as Exclude<TextCallSetting, "auto" | readonly unknown[]>;
  return { ...rest, tools };
}

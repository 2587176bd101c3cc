/**
 * Gemini `contents[]` ⇄ neutral. The system instruction is a separate request field.
 *
 * Gemini before v3 sends calls without ids and pairs responses by name and position. Such calls
 * get a local id (`syntheticId`), and each id-less response is matched to the nearest earlier
 * unanswered call of the same name; neither local id is sent back.
 */
import { clone, invalidMessage, leftovers, readArguments, wireArgumentsValue, withNative, writeUserAssistant, type Message, type Part, type ToolCallPart, type ToolResultPart } from "../model.js";
import { isPlainObject } from "../../json/shape.js";

/** Marks a response object that had neither an `output` nor an `error` wrapper. */
const BARE_RESPONSE = "toolwireBareResponse";

/**
 * Id-less calls not yet answered, by name: groups of one message each, latest last, each read
 * from `head`. Taking a call is amortized O(1) (a scan of every open call per response would make
 * long histories quadratic).
 */
type OpenCalls = Map<string, Array<{ message: number; calls: ToolCallPart[]; head: number }>>;

/** Gemini `contents` → neutral messages, one to one. */
export function fromGemini(contents: readonly unknown[]): Message[] {
  const open: OpenCalls = new Map();
  return contents.map((value, index) => readContent(value, index, open));
}

function readContent(value: unknown, index: number, open: OpenCalls): Message {
  if (!isPlainObject(value)) return invalidMessage(value, "not an object");
  const { role, parts } = value;
  if (role !== "user" && role !== "model" && role !== "function") return invalidMessage(value, `unknown role ${JSON.stringify(role)}`);
  const neutralRole = role === "model" ? "assistant" : "user";
  if (!Array.isArray(parts)) return invalidMessage(value, "parts is not a list", neutralRole);
  const read = parts.map((part, partIndex) => readPart(part, index, partIndex, open));
  return withNative<Message>({ role: neutralRole, parts: read }, value, role === "function" ? ["parts"] : ["role", "parts"]);
}

function readPart(part: unknown, message: number, index: number, open: OpenCalls): Part {
  if (!isPlainObject(part)) return { type: "opaque", format: "gemini", value: clone(part) };
  const signature = typeof part.thoughtSignature === "string" ? part.thoughtSignature : undefined;
  if (typeof part.text === "string" && part.thought === true) {
    return withNative({ type: "reasoning", text: part.text, ...(signature !== undefined ? { signature } : {}) }, part, ["text", "thought", ...(signature !== undefined ? ["thoughtSignature"] : [])]);
  }
  if (typeof part.text === "string") return withNative({ type: "text", text: part.text }, part, ["text"]);
  const call = part.functionCall;
  if (isPlainObject(call) && typeof call.name === "string") {
    const hasId = typeof call.id === "string";
    const out: ToolCallPart = {
      type: "tool_call",
      id: hasId ? (call.id as string) : `gemini_${message}_${index}`,
      name: call.name,
      ...readArguments(call.args === undefined ? {} : call.args),
      ...(signature !== undefined ? { signature } : {}),
      ...(hasId ? {} : { syntheticId: true as const }),
    };
    if (!hasId) {
      const groups = open.get(call.name) ?? [];
      const last = groups[groups.length - 1];
      if (last && last.message === message) last.calls.push(out);
      else groups.push({ message, calls: [out], head: 0 });
      open.set(call.name, groups);
    }
    return withNative(out, part, ["functionCall", ...(signature !== undefined ? ["thoughtSignature"] : [])]);
  }
  const response = part.functionResponse;
  if (isPlainObject(response) && typeof response.name === "string") return readResponse(part, response, response.name, message, index, open);
  return { type: "opaque", format: "gemini", value: clone(part) };
}

function readResponse(part: Record<string, unknown>, response: Record<string, unknown>, name: string, message: number, index: number, open: OpenCalls): ToolResultPart {
  let callId: string;
  let synthetic = false;
  if (typeof response.id === "string") callId = response.id;
  else {
    synthetic = true;
    callId = takeOpenCall(open, name) ?? `gemini_${message}_${index}`;
  }
  const body = response.response;
  const keys = isPlainObject(body) ? Object.keys(body) : [];
  const wrapper = keys.length === 1 && (keys[0] === "output" || keys[0] === "error") ? keys[0] : null;
  const inner = wrapper !== null && isPlainObject(body) ? body[wrapper] : body;
  const result: ToolResultPart = {
    type: "tool_result",
    callId,
    name,
    content: typeof inner === "string" ? inner : [{ type: "json", value: clone(inner) }],
    ...(wrapper === "error" ? { isError: true } : {}),
    ...(synthetic ? { syntheticId: true as const } : {}),
  };
  const native = { ...leftovers(part, ["functionResponse"]), ...(wrapper === null ? { [BARE_RESPONSE]: true } : {}) };
  return Object.keys(native).length > 0 ? { ...result, native } : result;
}

/** The nearest earlier unanswered id-less call named `name`; the first such call in its message. */
function takeOpenCall(open: OpenCalls, name: string): string | null {
  const groups = open.get(name);
  const group = groups?.[groups.length - 1];
  if (!groups || !group) return null;
  const call = group.calls[group.head++] as ToolCallPart;
  if (group.head === group.calls.length) groups.pop();
  return call.id;
}

/**
 * Neutral → Gemini contents. Assistant messages become `model` contents, everything else `user`;
 * parts that belong to other formats are left out.
 */
export function toGemini(messages: readonly Message[]): unknown[] {
  return writeUserAssistant(messages, "model", "parts", writePart);
}

function writePart(part: Part): unknown {
  switch (part.type) {
    case "text":
      return { text: part.text, ...clone(part.native) };
    case "reasoning":
      return { text: part.text, thought: true, ...(part.signature !== undefined ? { thoughtSignature: part.signature } : {}), ...clone(part.native) };
    case "tool_call": {
      const functionCall = { name: part.name, args: wireArgumentsValue(part), ...(part.syntheticId ? {} : { id: part.id }) };
      return { functionCall, ...(part.signature !== undefined ? { thoughtSignature: part.signature } : {}), ...clone(part.native) };
    }
    case "tool_result": {
      const { [BARE_RESPONSE]: bare, ...native } = clone(part.native) ?? {};
      const inner = typeof part.content === "string" ? part.content : singleJson(part.content);
      const response = bare === true && !part.isError ? inner : { [part.isError ? "error" : "output"]: inner };
      return { functionResponse: { name: part.name ?? "", response, ...(part.syntheticId ? {} : { id: part.callId }) }, ...native };
    }
    case "opaque":
      return part.format === "gemini" ? clone(part.value) : null;
  }
}

function singleJson(content: Exclude<ToolResultPart["content"], string>): unknown {
  const only = content[0];
  if (content.length === 1 && only?.type === "json") return clone(only.value);
  return content.map((item) => (item.type === "text" ? item.text : item.type === "json" ? JSON.stringify(item.value) : "")).join("\n");
}

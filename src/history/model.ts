/**
 * The neutral conversation model: one shape for the histories of every provider format, so that
 * pairing can be checked and repaired once and a history can move between providers.
 *
 * Each format converter maps one provider message (Responses: one input item) to exactly one
 * neutral message, so a neutral index is also the provider index that faults and edits report.
 * Provider fields that carry no meaning here are kept in `native` so that a message converts back
 * to its own format unchanged.
 */
import type { ToolCallErrorCode } from "../types.js";
import { jsonEqual } from "../json/equal.js";
import { isPlainObject, setOwn } from "../json/shape.js";
import { DEFAULT_LIMITS, nestsDeeperThan, TooDeepError } from "../limits.js";

/** The history formats toolwire reads, checks, repairs and writes. */
export const HISTORY_FORMATS = ["anthropic", "openai-chat", "openai-responses", "gemini", "bedrock"] as const;
/** One of `HISTORY_FORMATS`. */
export type HistoryFormat = (typeof HISTORY_FORMATS)[number];

/** True when `value` is one of `HISTORY_FORMATS`. */
export function isHistoryFormat(value: unknown): value is HistoryFormat {
  return typeof value === "string" && (HISTORY_FORMATS as readonly string[]).includes(value);
}

/** `tool` messages hold tool results only (OpenAI `tool` messages, Responses `function_call_output` items). */
export type Role = "system" | "user" | "assistant" | "tool";

/** Neutral text content of a message. */
export interface TextPart {
  type: "text";
  text: string;
  native?: Record<string, unknown>;
}

/** Thinking / reasoning in any of its provider forms. Opaque fields are replayed verbatim. */
export interface ReasoningPart {
  type: "reasoning";
  text: string;
  /** Anthropic/Bedrock thinking signature, Gemini `thoughtSignature` on a thought part. */
  signature?: string;
  /** Anthropic `redacted_thinking.data`, Bedrock `redactedContent`. */
  redacted?: string;
  /** Responses reasoning item id (`rs_…`). */
  id?: string;
  /** Responses reasoning summary texts. */
  summary?: string[];
  /** Responses `encrypted_content`. */
  encryptedContent?: string;
  native?: Record<string, unknown>;
}

/** Why a call's arguments are unusable, as carried into a history (the decoder's `ToolCall.error`). */
export interface CallError {
  code: ToolCallErrorCode;
  /** Written for the model: what was wrong and what to do. */
  message: string;
}

/** Neutral tool call of an assistant message. */
export interface ToolCallPart {
  type: "tool_call";
  id: string;
  name: string;
  /** The arguments object, or null when the call's arguments are unusable (see `error`). */
  arguments: Record<string, unknown> | null;
  error?: CallError;
  /**
   * The unparseable argument text exactly as a provider history held it. Present only on calls read
   * from a history: sending it again is the fault `invalid_call`. Decoded turns never set it.
   */
  rawArguments?: string;
  /** The provider's own spelling of the arguments string, reused while it still parses to `arguments`. */
  argumentsText?: string;
  /** Gemini `thoughtSignature` carried by the functionCall part. */
  signature?: string;
  /** Responses function_call item id (`fc_…`), distinct from the call id. */
  itemId?: string;
  /** The provider sent no id (Gemini before v3); `id` was minted locally and is not sent back. */
  syntheticId?: true;
  /** A free-form (custom) tool: `arguments` is `{input: text}` and the text is sent back as text. */
  custom?: true;
  native?: Record<string, unknown>;
}

/** One block of a tool result's content: text, a JSON value, or a provider block kept as it came. */
export type ResultContent =
  | { type: "text"; text: string; native?: Record<string, unknown> }
  | { type: "json"; value: unknown }
  /** Images, documents and other blocks, kept in their provider form. */
  | { type: "opaque"; value: unknown };

/** Neutral tool result, paired to its call by `callId`. */
export interface ToolResultPart {
  type: "tool_result";
  callId: string;
  /** The called tool's name: Gemini requires it on every functionResponse. */
  name?: string;
  /** A string when the provider used a plain string, else a list of blocks. */
  content: string | ResultContent[];
  /** Tri-state on purpose: absent, `false` and `true` are distinct provider values. */
  isError?: boolean;
  syntheticId?: true;
  native?: Record<string, unknown>;
}

/** A block with no neutral meaning (images, server tool blocks, …), replayed only in its own format. */
export interface OpaquePart {
  type: "opaque";
  format: HistoryFormat;
  value: unknown;
}

/** Any part of a neutral message. */
export type Part = TextPart | ReasoningPart | ToolCallPart | ToolResultPart | OpaquePart;

/** A message in the neutral history model every format is read into and written from. */
export interface Message {
  role: Role;
  parts: Part[];
  /**
   * How the provider spelled content that the parts cannot tell apart: a plain string (`"string"`),
   * `null` (`"null"`) or no content field at all (`"absent"`). Absent means a list of blocks.
   */
  form?: "string" | "null" | "absent";
  /** Provider fields outside the content, by provider name. */
  native?: Record<string, unknown>;
  /** Set when the provider message could not be read; `raw` is replayed unchanged. */
  invalid?: string;
  raw?: unknown;
}

/**
 * The deepest nesting a history may have: the decoders' argument depth (`DEFAULT_LIMITS.maxDepth`)
 * plus the envelope around arguments and results (list, message, content, block, call…). The walks
 * over a history recurse; a deeper one is refused with TooDeepError before any of them runs.
 */
export const MAX_HISTORY_DEPTH = DEFAULT_LIMITS.maxDepth + 8;

/** Throws TooDeepError (code `too_deep`) when `messages` nest deeper than MAX_HISTORY_DEPTH. */
export function assertHistoryDepth(messages: unknown): void {
  if (nestsDeeperThan(messages, MAX_HISTORY_DEPTH)) throw new TooDeepError("history", MAX_HISTORY_DEPTH);
}

// ---------------------------------------------------------------------------------------------


/** Deep copy of JSON-like data; the core never mutates its inputs. */
export function clone<T>(value: T): T {
  if (Array.isArray(value)) return value.map((item) => clone(item)) as T;
  if (isPlainObject(value)) {
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) if (item !== undefined) setOwn(out, key, clone(item));
    return out as T;
  }
  return value;
}

/** The fields of `value` not named in `known`, or undefined when there are none. */
export function leftovers(value: Record<string, unknown>, known: readonly string[]): Record<string, unknown> | undefined {
  let out: Record<string, unknown> | undefined;
  for (const [key, item] of Object.entries(value)) {
    if (known.includes(key) || item === undefined) continue;
    setOwn((out ??= {}), key, clone(item));
  }
  return out;
}

/** `item` with the fields of `source` not named in `known` kept as its `native` (none: `item` itself). */
export function withNative<T extends object>(item: T, source: Record<string, unknown>, known: readonly string[]): T {
  const native = leftovers(source, known);
  return native ? { ...item, native } : item;
}

/** A provider message that could not be read: no parts, the reason, and the message kept to be written back as it came. */
export function invalidMessage(value: unknown, why: string, role: Role = "user"): Message {
  return { role, parts: [], invalid: why, raw: clone(value) };
}

/** A `{type: textType, text}` result block as neutral text, any other block kept as it came. */
export function readTextResultBlock(block: unknown, textType = "text"): ResultContent {
  if (isPlainObject(block) && block.type === textType && typeof block.text === "string") return withNative<ResultContent>({ type: "text", text: block.text }, block, ["type", "text"]);
  return { type: "opaque", value: clone(block) };
}

export function calls(message: Message): ToolCallPart[] {
  return message.parts.filter((part): part is ToolCallPart => part.type === "tool_call");
}

export function resultText(content: ToolResultPart["content"]): string {
  if (typeof content === "string") return content;
  return content
    .map((item) => (item.type === "text" ? item.text : item.type === "json" ? JSON.stringify(item.value) : ""))
    .filter((text) => text !== "")
    .join("\n");
}

// ---------------------------------------------------------------------------------------------
// Replaying calls whose arguments are unusable.

/**
 * The key of the object sent in place of unusable arguments. It tells the model why the call was
 * not run, is never mistaken for a real empty-argument call (as `{}` would be), and lets a history
 * read back restore the call as invalid.
 */
export const INVALID_ARGUMENTS_KEY = "toolwire_invalid_arguments";

const ERROR_CODES: readonly ToolCallErrorCode[] = ["invalid_json", "truncated", "not_object", "too_large", "too_deep", "number_out_of_range"];

export function invalidArgumentsPlaceholder(error: CallError): Record<string, unknown> {
  return { [INVALID_ARGUMENTS_KEY]: { code: error.code, message: error.message } };
}

/**
 * The `CallError` held by an invalid-arguments placeholder (`{"toolwire_invalid_arguments": {code,
 * message}}`), or null when `value` is not exactly such a placeholder.
 */
export function readInvalidArgumentsPlaceholder(value: unknown): CallError | null {
  if (!isPlainObject(value)) return null;
  const keys = Object.keys(value);
  if (keys.length !== 1 || keys[0] !== INVALID_ARGUMENTS_KEY) return null;
  const inner = value[INVALID_ARGUMENTS_KEY];
  if (!isPlainObject(inner) || Object.keys(inner).length !== 2) return null;
  const { code, message } = inner;
  if (typeof message !== "string" || !ERROR_CODES.includes(code as ToolCallErrorCode)) return null;
  return { code: code as ToolCallErrorCode, message };
}

export function defaultCallError(code: ToolCallErrorCode = "invalid_json"): CallError {
  switch (code) {
    case "truncated":
      return { code, message: "The call's arguments were cut off before they were complete, so the call was not run." };
    case "not_object":
      return { code, message: "The call's arguments were not a JSON object, so the call was not run." };
    default:
      return { code: "invalid_json", message: "The call's arguments were not valid JSON, so the call was not run." };
  }
}

/**
 * The arguments to put on the wire for a call: the object, the raw text of a call read from a
 * history (so that an unrepaired history converts back unchanged), or the placeholder.
 */
export function wireArguments(call: ToolCallPart): { value: Record<string, unknown> } | { raw: string } {
  if (call.arguments !== null) return { value: call.arguments };
  if (call.rawArguments !== undefined) return { raw: call.rawArguments };
  return { value: invalidArgumentsPlaceholder(call.error ?? defaultCallError()) };
}

/**
 * The arguments as a JSON value, for formats that send an object (Anthropic, Gemini, Bedrock).
 * Unparseable text read from a history goes back as it came: a JSON value if it is one, else text.
 */
export function wireArgumentsValue(call: ToolCallPart): unknown {
  const wire = wireArguments(call);
  if (!("raw" in wire)) return wire.value;
  try {
    return JSON.parse(wire.raw) as unknown;
  } catch {
    return wire.raw;
  }
}

/** Each part written by `write`, leaving out the parts it has no form for (it returns null). */
export function writeParts<T>(parts: readonly Part[], write: (part: Part) => T | null): T[] {
  return parts.flatMap((part) => {
    const written = write(part);
    return written === null ? [] : [written];
  });
}

/**
 * Neutral → one provider message each, for formats whose only roles are user and assistant (as
 * `assistantRole`) and whose parts sit under `partsKey`; a message that was not read goes back as it came.
 */
export function writeUserAssistant(messages: readonly Message[], assistantRole: string, partsKey: string, write: (part: Part) => unknown): unknown[] {
  return messages.map((message) => {
    if (message.invalid !== undefined) return clone(message.raw);
    return { role: message.role === "assistant" ? assistantRole : "user", [partsKey]: writeParts(message.parts, write), ...clone(message.native) };
  });
}

/** Reads an arguments object from the wire; the inverse of `wireArguments`. */
export function readArguments(value: unknown): Pick<ToolCallPart, "arguments" | "error" | "rawArguments"> {
  const placeholder = readInvalidArgumentsPlaceholder(value);
  if (placeholder) return { arguments: null, error: placeholder };
  if (isPlainObject(value)) return { arguments: clone(value) };
  return { arguments: null, error: defaultCallError("not_object"), rawArguments: JSON.stringify(value) ?? "null" };
}

/** Reads an arguments string (OpenAI Chat, Responses); the inverse of `wireArgumentsText`. */
export function readArgumentsText(text: string): Pick<ToolCallPart, "arguments" | "error" | "rawArguments" | "argumentsText"> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { arguments: null, error: defaultCallError("invalid_json"), rawArguments: text };
  }
  // Arguments sent as text are as deep as the history itself would be with them inline.
  assertHistoryDepth(value);
  const read = readArguments(value);
  if (read.rawArguments !== undefined) return { ...read, rawArguments: text };
  if (read.arguments !== null && JSON.stringify(read.arguments) !== text) return { ...read, argumentsText: text };
  return read;
}

/** The arguments as a string for OpenAI Chat and Responses, keeping the provider's own spelling. */
export function wireArgumentsText(call: ToolCallPart): string {
  const wire = wireArguments(call);
  if ("raw" in wire) return wire.raw;
  if (call.argumentsText !== undefined && call.arguments !== null && sameJson(call.argumentsText, call.arguments)) return call.argumentsText;
  return JSON.stringify(wire.value);
}

function sameJson(text: string, value: unknown): boolean {
  try {
    // Responses servers send `""` for a call without arguments.
    return jsonEqual(text.trim() === "" ? {} : JSON.parse(text), value);
  } catch {
    return false;
  }
}

/**
 * `toolwire/history`: conversation histories in each provider's own message format (five formats).
 * Check and repair tool call / result pairing, convert a history to another format, and encode a
 * decoded turn and tool results for the next request.
 *
 * ```ts
 * import { checkHistory, encodeTurn, repairHistory } from "toolwire/history";
 *
 * const faults = checkHistory(messages, "anthropic");
 * const { messages: fixed, edits } = repairHistory(messages, "anthropic", { danglingCalls: "insert_error_result" });
 * const { messages: assistant, errorResults } = encodeTurn(turn, "anthropic");
 * ```
 */
import type { DecodedTurn } from "../types.js";
import { assertHistoryDepth, clone, HISTORY_FORMATS, isHistoryFormat, type HistoryFormat, type Message } from "./model.js";
import { adaptMessages, encodeResultsWith, encodeTurnWith, type EncodeTurnOptions, type EncodedTurn, type ToolResultInput } from "./encode.js";
import { checkMessages, repairMessages, type Edit, type Fault, type HistoryOptions, type RepairPolicy } from "./pairing.js";
import type { IdMap } from "./ids.js";
import { jsonEqual } from "../json/equal.js";
import * as anthropic from "./formats/anthropic.js";
import * as bedrock from "./formats/bedrock.js";
import * as gemini from "./formats/gemini.js";
import * as openaiChat from "./formats/openai-chat.js";
import * as openaiResponses from "./formats/openai-responses.js";
import { ToolwireError } from "../errors.js";

export { HISTORY_FORMATS, MAX_HISTORY_DEPTH, type HistoryFormat, type Message } from "./model.js";
export type { Edit, Fault, HistoryOptions, RepairPolicy } from "./pairing.js";
export type { EncodeTurnOptions, EncodedTurn, ToolResultInput } from "./encode.js";

interface FormatModule {
  read(messages: readonly unknown[]): Message[];
  write(messages: readonly Message[]): unknown[];
}

const FORMATS: Record<HistoryFormat, FormatModule> = {
  anthropic: { read: anthropic.fromAnthropic, write: anthropic.toAnthropic },
  "openai-chat": { read: openaiChat.fromOpenAIChat, write: openaiChat.toOpenAIChat },
  "openai-responses": { read: openaiResponses.fromOpenAIResponses, write: openaiResponses.toOpenAIResponses },
  gemini: { read: gemini.fromGemini, write: gemini.toGemini },
  bedrock: { read: bedrock.fromBedrock, write: bedrock.toBedrock },
};

function formatOf(format: HistoryFormat): FormatModule {
  if (!isHistoryFormat(format)) throw new ToolwireError("unknown_history_format", `unknown history format ${JSON.stringify(format)}; valid formats: ${HISTORY_FORMATS.join(", ")}`);
  return FORMATS[format];
}

function list(messages: readonly unknown[]): readonly unknown[] {
  if (!Array.isArray(messages)) throw new ToolwireError("invalid_history", "a history is a list of messages");
  return messages;
}

/**
 * Provider messages (Responses: input items, Gemini: contents) → neutral, one to one: with
 * `fromNeutral`, the one conversion pair, for every format. Throws TooDeepError (`too_deep`) for a
 * history nested deeper than MAX_HISTORY_DEPTH, as every function here that reads one does, and a
 * ToolwireError with code `unknown_history_format` for a format not in HISTORY_FORMATS.
 */
export function toNeutral(messages: readonly unknown[], format: HistoryFormat): Message[] {
  assertHistoryDepth(list(messages));
  return formatOf(format).read(messages);
}

/** Neutral → provider messages: the inverse of `toNeutral`. */
export function fromNeutral(messages: readonly Message[], format: HistoryFormat): unknown[] {
  assertHistoryDepth(messages);
  return formatOf(format).write(messages);
}

/** Every fault that would make `format` reject the history, in message order. */
export function checkHistory(messages: readonly unknown[], format: HistoryFormat, options: HistoryOptions = {}): Fault[] {
  return checkMessages(toNeutral(messages, format), format, options);
}

/**
 * The result of `repairHistory`: the repaired messages, every edit made, the id replacements and
 * the faults left on purpose.
 */
export interface RepairResult {
  /** The repaired history in the same format. Messages the repair did not touch are copies of the input's. */
  messages: unknown[];
  edits: Edit[];
  /** Replaced call ids and the originals they stand for. */
  idMap: IdMap;
  /** Faults the policy left in place; empty unless the policy says `keep`. */
  remaining: Fault[];
}

/** Repairs every fault of the history; a history without faults comes back unchanged, with no edits. */
export function repairHistory(messages: readonly unknown[], format: HistoryFormat, policy: RepairPolicy = {}): RepairResult {
  const input = list(messages);
  const neutral = toNeutral(input, format);
  const outcome = repairMessages(neutral, format, policy);
  if (outcome.edits.length === 0) return { messages: input.map((message) => clone(message)), edits: [], idMap: outcome.idMap, remaining: outcome.remaining };
  const output = outcome.messages.flatMap((message, index) => {
    const origin = outcome.origins[index] ?? null;
    // An untouched message goes back exactly as it came, whatever the converter would write.
    if (origin !== null && jsonEqual(message, neutral[origin])) return [clone(input[origin])];
    return fromNeutral([message], format);
  });
  return { messages: output, edits: outcome.edits, idMap: outcome.idMap, remaining: checkHistory(output, format, policy) };
}

/**
 * The result of `convertHistory`: a repaired history in the target format, plus the system text
 * lifted out and notes on what had no equivalent or could not be carried as written.
 */
export interface ConvertResult extends RepairResult {
  /** System text lifted out of the messages, for formats that take it as a separate request field. */
  system: string | null;
  /**
   * What had no equivalent in the target and was left out, and what it cannot carry as written
   * (an integer beyond ±2^53 in arguments text, going to a format that takes arguments as objects).
   */
  notes: string[];
}

/**
 * Moves a history to another format: results are regrouped the target's way, reasoning and blocks
 * the target cannot verify are left out, then the result is repaired for the target (ids the
 * target rejects are renamed, and so on). Edit indices refer to the regrouped history.
 */
export function convertHistory(messages: readonly unknown[], from: HistoryFormat, to: HistoryFormat, policy: RepairPolicy = {}): ConvertResult {
  if (from === to) return { ...repairHistory(messages, to, policy), system: null, notes: [] };
  const adapted = adaptMessages(toNeutral(messages, from), to, { sameProvider: false });
  const outcome = repairMessages(adapted.messages, to, policy);
  const output = fromNeutral(outcome.messages, to);
  return { messages: output, edits: outcome.edits, idMap: outcome.idMap, remaining: checkHistory(output, to, policy), system: adapted.system, notes: adapted.notes };
}

/**
 * A decoded turn as the assistant message(s) of `format`: arguments as objects, the thinking,
 * `reasoning_content`, `thoughtSignature` and reasoning items the provider requires kept (when the
 * turn came from that provider), and calls that cannot run made safe (see `EncodeTurnOptions`).
 */
export function encodeTurn(turn: DecodedTurn, format: HistoryFormat, options?: EncodeTurnOptions): EncodedTurn {
  return encodeTurnWith(format, formatOf(format).write, turn, options);
}

/** Tool results as `format` wants them after an assistant turn (one user message, or tool messages / output items). */
export function encodeToolResults(results: readonly ToolResultInput[], format: HistoryFormat): unknown[] {
  return encodeResultsWith(format, formatOf(format).write, results);
}

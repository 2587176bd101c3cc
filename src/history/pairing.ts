/**
 * Pairing check and repair on the neutral model.
 *
 * A call and its result are paired by id. Where the result must sit depends on the format:
 * - Anthropic: in the very next message, a user message, before any other block of it;
 * - Bedrock, Gemini: in the very next message, a user message;
 * - OpenAI Chat: in the run of `tool` messages right after the assistant message;
 * - Responses: anywhere after the call (the API only checks that every call has an output).
 *
 * `checkMessages` reports every rule a request would break, each fault located by message index
 * (the provider index: converters map messages one to one). `repairMessages` fixes them with
 * named, located edits, touching nothing else; a history with no fault comes back unchanged.
 */
import {
  assertHistoryDepth,
  calls,
  clone,
  defaultCallError,
  resultText,
  type HistoryFormat,
  type Message,
  type Part,
  type ToolCallPart,
  type ToolResultPart,
} from "./model.js";
import { defaultIdRule, emptyIdMap, IdMinter, idProblem, type IdMap, type IdRule } from "./ids.js";
import { droppedCallNote, errorResult, invalidCallResult } from "./encode.js";
import { isPlainObject } from "../json/shape.js";

/** Every fault `checkHistory` reports, as codes. */
export const FAULT_CODES = [
  "malformed_message",
  "missing_result",
  "result_not_adjacent",
  "result_not_leading",
  "orphan_result",
  "orphan_server_result",
  "duplicate_call_id",
  "duplicate_result",
  "invalid_call_id",
  "invalid_item_id",
  "invalid_call",
  "empty_text",
  "empty_message",
  "empty_error_result",
  "missing_thinking",
  "thinking_not_first",
  "thinking_not_allowed",
  "missing_reasoning_content",
  "missing_thought_signature",
  "missing_reasoning_item",
  "orphan_reasoning",
  "response_count_mismatch",
  "call_turn_order",
  "roles_not_alternating",
  "first_message_not_user",
] as const;
/** One of `FAULT_CODES`. */
export type FaultCode = (typeof FAULT_CODES)[number];

/** A problem in a history that would make the provider reject it, located by message (and block) index. */
export interface Fault {
  code: FaultCode;
  /** Index of the message (Responses: input item) the fault is in. */
  index: number;
  /** Index of the block within the message, when the fault is about one block. */
  part?: number;
  /** Call ids involved. */
  ids: string[];
  message: string;
  /** The other message involved (e.g. where the call of a misplaced result is). */
  related?: number;
}

/** Every edit `repairHistory` makes, as codes. */
export const EDIT_CODES = [
  "message_dropped",
  "call_dropped",
  "result_inserted",
  "result_moved",
  "orphan_result_dropped",
  "orphan_result_to_text",
  "duplicate_result_dropped",
  "orphan_server_result_dropped",
  "id_remapped",
  "item_id_removed",
  "invalid_call_replaced",
  "invalid_call_dropped",
  "empty_text_removed",
  "empty_error_result_filled",
  "thinking_moved_first",
  "tool_exchange_to_text",
  "reasoning_dropped",
  "reasoning_padded",
  "thought_signature_placeholder",
  "messages_merged",
  "user_turn_inserted",
] as const;
/** One of `EDIT_CODES`. */
export type EditCode = (typeof EDIT_CODES)[number];

/** One change `repairHistory` made, located by the index of the input message it concerns. */
export interface Edit {
  code: EditCode;
  /** Index in the input history of the message the edit concerns. */
  index: number;
  part?: number;
  ids: string[];
  message: string;
}

/** Options of the history check: the target's id rule and whether the request enables thinking. */
export interface HistoryOptions {
  /**
   * Id rule of the target behind the format (a Chat Completions history sent to Mistral: `mistral`);
   * defaults to the format's own: `anthropic`, `openai` for openai-chat, `bedrock`, else `none`.
   * `anthropic`: `[a-zA-Z0-9_-]+`; `openai`: at most 40 characters; `bedrock`: 1 to 64 of
   * `[a-zA-Z0-9_.:-]`; `kimi`: `functions.<name>:<index>`; `mistral`: exactly 9 of `[a-zA-Z0-9]`;
   * `none`: any non-empty id. `kimi` also applies Kimi's other history rule: no empty text content
   * beside tool calls.
   */
  ids?: IdRule;
  /**
   * Whether the request enables thinking. `auto` (default) assumes it does when the history holds
   * reasoning the provider verifies (signatures, `reasoning_content`, reasoning items).
   */
  thinking?: "auto" | "on" | "off";
}

/** How `repairHistory` fixes each kind of fault (the defaults never invent a success). */
export interface RepairPolicy extends HistoryOptions {
  /** A call with no result: pair it with an error result (default), or remove the call. */
  danglingCalls?: "insert_error_result" | "drop_call";
  /** A result with no call: turn it into user text (default) or remove it. */
  orphanResults?: "to_text" | "drop";
  /** A call whose raw, unparseable arguments are in the history: see `EncodeTurnOptions.invalidCalls`. */
  invalidCalls?: "placeholder" | "drop";
  /**
   * Thinking is on but the last tool-calling assistant message has no thinking block (which cannot
   * be invented): rewrite that call/result exchange as plain text (default), or leave it reported.
   */
  missingThinking?: "to_text" | "keep";
  /** Text of the error result inserted for a call with no result. */
  danglingResultText?: string;
  /**
   * Remove the reasoning state only its provider can verify: signed, redacted or encrypted
   * reasoning blocks, Gemini call signatures, Responses item ids. For when the provider rejects the
   * signatures it is given (`thinking_signature_invalid`). Plain reasoning text stays.
   */
  stripReasoning?: boolean;
}

/** The error result text inserted for a call that has no result. */
export const DANGLING_RESULT_TEXT =
  "No result was recorded for this call: the run was interrupted before the tool returned. The tool may or may not have run; check its effects before calling it again.";

/** Gemini's documented value for function calls whose original thought signature is unavailable. */
export const GEMINI_SIGNATURE_PLACEHOLDER = "skip_thought_signature_validator";

const OMITTED_TEXT = "(The earlier part of this conversation was removed.)";

// ---------------------------------------------------------------------------------------------
// Analysis

interface CallInfo {
  message: number;
  position: number;
  part: ToolCallPart;
  ordinal: number;
  result: ResultInfo | null;
}

interface ResultInfo {
  message: number;
  position: number;
  part: ToolResultPart;
  call: CallInfo | null;
  kind: "assigned" | "orphan" | "duplicate";
}

function before(a: { message: number; position: number }, b: { message: number; position: number }): boolean {
  return a.message < b.message || (a.message === b.message && a.position < b.position);
}

/**
 * Links each result to a call with its id. Calls are grouped by turn (a run of consecutive
 * assistant messages: Responses sends parallel calls as separate items). A result goes to the
 * latest earlier turn holding an unanswered call with its id, and within that turn to the first
 * such call: results answer calls in order, so two calls sharing an id get their own results,
 * never each other's. A result placed before every call with its id goes to the first unanswered
 * of them. Results left over are duplicates (their calls are all answered) or orphans (no call has
 * their id). Linear: each call enters and leaves its id's queues once.
 */
function analyze(messages: readonly Message[]): { calls: CallInfo[]; results: ResultInfo[] } {
  const found: CallInfo[] = [];
  const tracks = new Map<string, IdTrack>();
  const turns = turnStarts(messages);
  messages.forEach((message, index) => {
    if (message.invalid !== undefined || message.role !== "assistant") return;
    message.parts.forEach((part, position) => {
      if (part.type !== "tool_call") return;
      const info: CallInfo = { message: index, position, part, ordinal: found.length, result: null };
      found.push(info);
      const track = tracks.get(part.id);
      if (track) track.calls.push(info);
      else tracks.set(part.id, { calls: [info], entered: 0, turns: [], firstOpen: 0 });
    });
  });
  const linked: ResultInfo[] = [];
  messages.forEach((message, index) => {
    if (message.invalid !== undefined) return;
    message.parts.forEach((part, position) => {
      if (part.type !== "tool_result") return;
      const info: ResultInfo = { message: index, position, part, call: null, kind: "orphan" };
      const track = tracks.get(part.callId);
      const target = track ? takeCall(track, info, turns) : null;
      if (target) {
        target.result = info;
        info.call = target;
        info.kind = "assigned";
      } else if (track) info.kind = "duplicate";
      linked.push(info);
    });
  });
  return { calls: found, results: linked };
}

/** The calls of one id, in document order, and those before the current result grouped by turn. */
interface IdTrack {
  calls: CallInfo[];
  /** How many of `calls` lie before the result being linked (results are linked in document order). */
  entered: number;
  /** Entered calls by turn, latest last; each queue is read from `head`. */
  turns: Array<{ turn: number; queue: CallInfo[]; head: number }>;
  /** No call before it is unanswered (for results that precede all their calls). */
  firstOpen: number;
}

function takeCall(track: IdTrack, result: ResultInfo, turns: readonly number[]): CallInfo | null {
  while (track.entered < track.calls.length && before(track.calls[track.entered] as CallInfo, result)) {
    const call = track.calls[track.entered++] as CallInfo;
    const turn = turns[call.message] as number;
    const last = track.turns[track.turns.length - 1];
    if (last && last.turn === turn) last.queue.push(call);
    else track.turns.push({ turn, queue: [call], head: 0 });
  }
  if (track.entered === 0) {
    while (track.firstOpen < track.calls.length && (track.calls[track.firstOpen] as CallInfo).result) track.firstOpen++;
    return track.calls[track.firstOpen] ?? null;
  }
  for (let group = track.turns[track.turns.length - 1]; group; group = track.turns[track.turns.length - 1]) {
    while (group.head < group.queue.length && (group.queue[group.head] as CallInfo).result) group.head++;
    if (group.head < group.queue.length) return group.queue[group.head++] as CallInfo;
    track.turns.pop();
  }
  return null;
}

/** For each message, the index where its run of consecutive assistant messages starts. */
function turnStarts(messages: readonly Message[]): number[] {
  const starts: number[] = [];
  messages.forEach((message, index) => {
    const previous = messages[index - 1];
    const continues = message.role === "assistant" && message.invalid === undefined && previous?.role === "assistant" && previous.invalid === undefined;
    starts.push(continues ? (starts[index - 1] as number) : index);
  });
  return starts;
}

type Placement = "ok" | "not_adjacent" | "not_leading";

/**
 * Judges where a result sits relative to its call. What the rules need about runs of messages and
 * leading blocks is computed once per history, so judging every result stays linear.
 */
function placementJudge(messages: readonly Message[], format: HistoryFormat): (call: { message: number }, result: { message: number; position: number }) => Placement {
  // toolRun[i]: where the run of `tool` messages ending at i starts (i + 1 when i is not one).
  const toolRun: number[] = [];
  if (format === "openai-chat") messages.forEach((message, i) => toolRun.push(message.role === "tool" ? (i > 0 ? (toolRun[i - 1] as number) : 0) : i + 1));
  // leading[i]: how many tool results open message i.
  const leading = new Map<number, number>();
  const leadingResults = (index: number): number => {
    let count = leading.get(index);
    if (count === undefined) {
      const parts = (messages[index] as Message).parts;
      count = parts.findIndex((part) => part.type !== "tool_result");
      if (count === -1) count = parts.length;
      leading.set(index, count);
    }
    return count;
  };
  return (call, result) => {
    const answer = messages[result.message];
    if (!answer || result.message <= call.message || answer.role === "assistant" || answer.role === "system") return "not_adjacent";
    switch (format) {
      case "openai-responses":
        return "ok";
      case "openai-chat":
        return (toolRun[result.message] as number) <= call.message + 1 ? "ok" : "not_adjacent";
      case "anthropic":
        if (result.message !== call.message + 1) return "not_adjacent";
        return result.position <= leadingResults(result.message) ? "ok" : "not_leading";
      default:
        return result.message === call.message + 1 ? "ok" : "not_adjacent";
    }
  };
}

function isInline(format: HistoryFormat): boolean {
  return format === "anthropic" || format === "bedrock" || format === "gemini";
}

function hasSignedReasoning(message: Message): boolean {
  return message.parts.some((part) => part.type === "reasoning" && (part.signature !== undefined || part.redacted !== undefined));
}

/** Whether the request is taken to have thinking on; `auto` reads the history. */
function thinkingOn(messages: readonly Message[], format: HistoryFormat, setting: HistoryOptions["thinking"]): boolean {
  if (setting === "on") return true;
  if (setting === "off") return false;
  return messages.some((message) => {
    if (message.invalid !== undefined || message.role !== "assistant") return false;
    switch (format) {
      case "anthropic":
      case "bedrock":
        return hasSignedReasoning(message);
      case "gemini":
        return message.parts.some((part) => (part.type === "reasoning" || part.type === "tool_call" ? part.signature !== undefined : part.type === "text" && part.native?.thoughtSignature !== undefined));
      default:
        return message.parts.some((part) => part.type === "reasoning");
    }
  });
}

function lastAssistant(messages: readonly Message[]): number {
  for (let i = messages.length - 1; i >= 0; i--) if (messages[i]?.role === "assistant" && messages[i]?.invalid === undefined) return i;
  return -1;
}

/** Index of the last user message with content of its own (not only tool results): where the current turn starts. */
function turnStart(messages: readonly Message[]): number {
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i] as Message;
    if ((message.role === "user" || message.role === "system") && message.parts.some((part) => part.type !== "tool_result")) return i;
  }
  return -1;
}

function isEmptyText(part: Part, format: HistoryFormat): boolean {
  if (part.type !== "text") return false;
  if (format === "gemini") return part.text === "" && part.native?.thoughtSignature === undefined;
  return part.text.trim() === "";
}

function side(message: Message): "assistant" | "user" {
  return message.role === "assistant" ? "assistant" : "user";
}

function isReasoningOnly(message: Message | undefined): boolean {
  return message !== undefined && message.parts.length > 0 && message.parts.every((part) => part.type === "reasoning");
}

function isEmptyResult(result: ToolResultPart): boolean {
  return typeof result.content === "string" ? result.content.trim() === "" : result.content.length === 0;
}

/**
 * Ids of server tool results (`web_search_tool_result`, `advisor_tool_result`, …) whose
 * `server_tool_use` does not come before them anywhere in the history (a paused turn continues in
 * the next assistant message, so the use may sit in an earlier one). Yields message and block index.
 */
function orphanServerResults(messages: readonly Message[]): Array<{ message: number; position: number; id: string }> {
  const opened = new Set<string>();
  const found: Array<{ message: number; position: number; id: string }> = [];
  messages.forEach((message, index) => {
    message.parts.forEach((part, position) => {
      if (part.type !== "opaque" || !isPlainObject(part.value)) return;
      const { type, id, tool_use_id: useId } = part.value;
      if (typeof id === "string") opened.add(id);
      if (typeof type === "string" && type.endsWith("_tool_result") && typeof useId === "string" && !opened.has(useId)) found.push({ message: index, position, id: useId });
    });
  });
  return found;
}

/** OpenAI item ids carry a type prefix; a function_call sent with another type's id (`msg_…`) is rejected. Other hosts use UUIDs. */
function misprefixedItemId(call: ToolCallPart): boolean {
  return !call.custom && call.itemId !== undefined && /^[a-z]{2,5}_/.test(call.itemId) && !call.itemId.startsWith("fc");
}

// ---------------------------------------------------------------------------------------------
// Check

/** `checkHistory` on neutral messages: every fault that would make `format` reject them, in message order. */
export function checkMessages(messages: readonly Message[], format: HistoryFormat, options: HistoryOptions = {}): Fault[] {
  assertHistoryDepth(messages);
  const faults: Fault[] = [];
  const add = (code: FaultCode, index: number, ids: string[], message: string, extra: Partial<Fault> = {}) =>
    faults.push({ code, index, ids, message, ...extra });
  const rule = options.ids ?? defaultIdRule(format);

  messages.forEach((message, index) => {
    if (message.invalid !== undefined) {
      add("malformed_message", index, [], `Message ${index} cannot be read: ${message.invalid}.`);
      return;
    }
    message.parts.forEach((part, position) => {
      if (part.type === "tool_call" && message.role !== "assistant") {
        add("malformed_message", index, [part.id], `Message ${index} is a ${message.role} message holding a tool call; only assistant messages make calls.`, { part: position });
      }
    });
  });

  const { calls: found, results: linked } = analyze(messages);
  const seen = new Set<string>();
  for (const call of found) {
    const { id, name } = call.part;
    if (seen.has(id)) add("duplicate_call_id", call.message, [id], `Call id ${id} is used by more than one call; ids must be unique in a request.`, { part: call.position });
    seen.add(id);
    const problem = idProblem(id, rule, { name, ordinal: call.ordinal });
    if (problem !== null) add("invalid_call_id", call.message, [id], `Call id ${JSON.stringify(id)} is rejected by the ${rule} id rule: ${problem}.`, { part: call.position });
    if (call.part.rawArguments !== undefined) {
      add("invalid_call", call.message, [id], `The call to ${name} (${id}) holds arguments that are not a JSON object; sending them again fails or replays garbage.`, { part: call.position });
    }
    if (format === "openai-responses" && misprefixedItemId(call.part)) {
      add("invalid_item_id", call.message, [id], `The function_call item id ${JSON.stringify(call.part.itemId)} does not begin with 'fc'.`, { part: call.position });
    }
  }

  const judge = placementJudge(messages, format);
  for (const result of linked) {
    const id = result.part.callId;
    if (result.kind === "orphan") {
      add("orphan_result", result.message, [id], `The result for ${id} answers no call in the conversation (trimmed or compacted history).`, { part: result.position });
    } else if (result.kind === "duplicate") {
      add("duplicate_result", result.message, [id], `Call ${id} already has a result; this one is a second answer.`, { part: result.position });
    } else if (result.call) {
      const status = judge(result.call, result);
      if (status === "not_leading") {
        add("result_not_leading", result.message, [id], `The result for ${id} follows other content; results must come first in the message after the call.`, { part: result.position, related: result.call.message });
      } else if (status === "not_adjacent") {
        add("result_not_adjacent", result.message, [id], `The result for ${id} is not where ${format} requires it (right after the call in message ${result.call.message}).`, {
          part: result.position,
          related: result.call.message,
        });
      }
    }
  }

  const missing = new Map<number, string[]>();
  for (const call of found) {
    if (call.result) continue;
    const ids = missing.get(call.message);
    if (ids) ids.push(call.part.id);
    else missing.set(call.message, [call.part.id]);
  }
  for (const [index, ids] of missing) add("missing_result", index, ids, `No result follows the call${ids.length > 1 ? "s" : ""} ${ids.join(", ")}; every call needs a result in the next turn.`);

  checkFormatRules(messages, format, options, add);
  return faults.sort((a, b) => a.index - b.index || (a.part ?? -1) - (b.part ?? -1));
}

type AddFault = (code: FaultCode, index: number, ids: string[], message: string, extra?: Partial<Fault>) => void;

function checkFormatRules(messages: readonly Message[], format: HistoryFormat, options: HistoryOptions, add: AddFault): void {
  const thinking = thinkingOn(messages, format, options.thinking);
  const last = lastAssistant(messages);
  const valid = (message: Message) => message.invalid === undefined;
  // Computed once, on first need: per-message scans of the whole history would be quadratic.
  let reasoned: boolean[] | undefined;
  let currentTurn: number | undefined;
  if (format === "anthropic") {
    for (const orphan of orphanServerResults(messages)) {
      add("orphan_server_result", orphan.message, [orphan.id], `The server tool result ${orphan.id} has no server_tool_use before it.`, { part: orphan.position });
    }
  }

  messages.forEach((message, index) => {
    if (!valid(message)) return;
    const callIds = calls(message).map((call) => call.id);
    if (isInline(format)) {
      const empty = message.parts.findIndex((part) => isEmptyText(part, format));
      if (empty >= 0) add("empty_text", index, callIds, `Message ${index} has an empty text block; ${format} rejects empty text.`, { part: empty });
      const finalAssistant = format === "anthropic" && index === messages.length - 1 && message.role === "assistant";
      if (message.parts.length === 0 && !finalAssistant) add("empty_message", index, [], `Message ${index} has no content.`);
    }
    if (kimiEmptyText(format, options, message)) {
      const empty = message.parts.findIndex((part) => part.type === "text" && part.text === "");
      add("empty_text", index, callIds, "An assistant message with tool calls has empty text content; Kimi rejects it (send null).", { part: empty });
    }
    if (format === "bedrock") {
      message.parts.forEach((part, position) => {
        if (part.type === "tool_result" && part.isError === true && isEmptyResult(part)) {
          add("empty_error_result", index, [part.callId], "A toolResult with status error has empty content; Bedrock rejects it.", { part: position });
        }
      });
      const previous = messages[index - 1];
      if (index === 0 && message.role === "assistant") add("first_message_not_user", index, [], "A Bedrock conversation must start with a user message.");
      if (previous && valid(previous) && side(previous) === side(message)) add("roles_not_alternating", index, [], `Messages ${index - 1} and ${index} are both ${side(message)} messages; Bedrock requires alternating roles.`);
    }
    if (message.role !== "assistant") return;

    if (format === "anthropic" || format === "bedrock") {
      const firstReasoning = message.parts.findIndex((part) => part.type === "reasoning");
      if (firstReasoning > 0) add("thinking_not_first", index, callIds, "An assistant message with thinking blocks must start with one.", { part: 0 });
      if (thinking && index === last && callIds.length > 0 && message.parts[0]?.type !== "reasoning") {
        add("missing_thinking", index, callIds, "Thinking is on, but the last assistant message, which makes tool calls, does not start with a thinking block.");
      }
      if (options.thinking === "off" && index === messages.length - 1 && firstReasoning >= 0) {
        add("thinking_not_allowed", index, [], "Thinking is off, but the final assistant message holds thinking.");
      }
    }
    if (format === "openai-chat" && thinking && callIds.length > 0 && !message.parts.some((part) => part.type === "reasoning")) {
      add("missing_reasoning_content", index, callIds, "Thinking mode is on, but this assistant tool-call message has no reasoning_content (DeepSeek, Kimi).");
    }
    if (format === "gemini" && callIds.length > 0) {
      const next = messages[index + 1];
      const answered = next && next.role !== "assistant" ? next.parts.filter((part) => part.type === "tool_result").length : 0;
      if (answered > 0 && answered !== callIds.length) {
        add("response_count_mismatch", index + 1, callIds, `Message ${index} makes ${callIds.length} function call(s) but message ${index + 1} holds ${answered} function response(s); the counts must be equal.`, {
          related: index,
        });
      }
      const previous = messages[index - 1];
      if (index === 0 || previous?.role === "assistant") {
        add("call_turn_order", index, callIds, "A function call turn must come right after a user turn or a function response turn.");
      }
      const first = calls(message)[0];
      if (thinking && index > (currentTurn ??= turnStart(messages)) && first && first.signature === undefined) {
        add("missing_thought_signature", index, [first.id], `The function call ${first.name} in the current turn has no thought_signature; Gemini 3 rejects it.`, {
          part: message.parts.indexOf(first),
        });
      }
    }
    if (format === "openai-responses") {
      if (isReasoningOnly(message)) {
        const next = messages[index + 1];
        if (!next || next.role !== "assistant" || isReasoningOnly(next)) add("orphan_reasoning", index, [], "A reasoning item must be followed by the item it belongs to (a message or a call).");
      }
      const call = calls(message).find((item) => item.itemId !== undefined);
      if (thinking && call && !(reasoned ??= reasoningInRun(messages))[index]) {
        add("missing_reasoning_item", index, [call.id], `The function_call item ${call.itemId} is sent by id without the reasoning item that preceded it.`);
      }
    }
  });
}

/** Kimi (the `kimi` id rule) rejects `content: ""` beside tool calls, which OpenAI itself accepts. */
function kimiEmptyText(format: HistoryFormat, options: HistoryOptions, message: Message): boolean {
  if (format !== "openai-chat" || options.ids !== "kimi" || message.role !== "assistant" || calls(message).length === 0) return false;
  return message.parts.some((part) => part.type === "text" && part.text === "");
}

function isVerifiedReasoning(part: Part): boolean {
  return part.type === "reasoning" && (part.signature !== undefined || part.redacted !== undefined || part.encryptedContent !== undefined || part.id !== undefined);
}

function holdsVerifiedState(message: Message): boolean {
  return message.parts.some(
    (part) => isVerifiedReasoning(part) || (part.type === "tool_call" && (part.itemId !== undefined || (part.signature !== undefined && part.signature !== GEMINI_SIGNATURE_PLACEHOLDER))),
  );
}

/** For each message: whether it or an assistant message of its run before it holds reasoning. One pass. */
function reasoningInRun(messages: readonly Message[]): boolean[] {
  const out: boolean[] = [];
  messages.forEach((message, index) => {
    const own = message.role === "assistant" && message.parts.some((part) => part.type === "reasoning");
    out.push(message.role === "assistant" && (own || (index > 0 && messages[index - 1]?.role === "assistant" && (out[index - 1] as boolean))));
  });
  return out;
}

// ---------------------------------------------------------------------------------------------
// Repair

/**
 * The result of `repairMessages`: repaired neutral messages, where each came from, the edits, id
 * replacements and faults left in place.
 */
export interface RepairOutcome {
  messages: Message[];
  /** For each output message, the input index it came from, or null for an inserted message. */
  origins: Array<number | null>;
  edits: Edit[];
  idMap: IdMap;
  /** Faults the policy left in place (e.g. `missingThinking: "keep"`), as found in the output. */
  remaining: Fault[];
}

interface Slot {
  message: Message;
  origin: number | null;
  /** Input index to report for edits on an inserted message. */
  near: number;
}

/** `repairHistory` on neutral messages; messages without faults come back unchanged, with no edits. */
export function repairMessages(input: readonly Message[], format: HistoryFormat, policy: RepairPolicy = {}): RepairOutcome {
  assertHistoryDepth(input);
  if (checkMessages(input, format, policy).length === 0 && !(policy.stripReasoning && input.some(holdsVerifiedState))) {
    return { messages: input.map((message) => clone(message)), origins: input.map((_, index) => index), edits: [], idMap: emptyIdMap(), remaining: [] };
  }
  const repair = new Repair(input, format, policy);
  repair.run();
  const messages = repair.slots.map((slot) => slot.message);
  return {
    messages,
    origins: repair.slots.map((slot) => slot.origin),
    edits: [...repair.edits].sort((a, b) => a.index - b.index),
    idMap: repair.idMap,
    remaining: checkMessages(messages, format, policy),
  };
}

class Repair {
  slots: Slot[];
  readonly edits: Edit[] = [];
  readonly idMap = emptyIdMap();
  private readonly thinking: boolean;

  constructor(
    private readonly input: readonly Message[],
    private readonly format: HistoryFormat,
    private readonly policy: RepairPolicy,
  ) {
    this.slots = input.map((message, index) => ({ message: clone(message), origin: index, near: index }));
    this.thinking = thinkingOn(input, format, policy.thinking);
  }

  run(): void {
    this.dropUnreadable();
    this.dropStrayBlocks();
    this.fixIds();
    this.fixInvalidCalls();
    this.settleExtraResults();
    this.placeResults();
    this.dropEmptyMessages();
    this.fillEmptyErrorResults();
    // Merges come before the reasoning rules, which judge whole messages; a second pass handles
    // neighbours that only met when a message emptied by those rules was dropped.
    this.fixTurnOrder();
    this.fixReasoning();
    this.dropEmptyMessages();
    this.fixTurnOrder();
  }

  private get messages(): Message[] {
    return this.slots.map((slot) => slot.message);
  }

  private at(index: number): number {
    return this.slots[index]?.near ?? this.input.length;
  }

  private edit(code: EditCode, index: number, ids: string[], message: string, part?: number): void {
    this.edits.push({ code, index, ids, message, ...(part !== undefined ? { part } : {}) });
  }

  private dropUnreadable(): void {
    this.slots = this.slots.filter((slot) => {
      if (slot.message.invalid === undefined) return true;
      this.edit("message_dropped", slot.near, [], `Dropped an unreadable message (${slot.message.invalid}).`);
      return false;
    });
  }

  /** Calls outside assistant messages, empty text the format rejects, orphan server-tool results. */
  private dropStrayBlocks(): void {
    for (const slot of this.slots) {
      const message = slot.message;
      const stray = new Set<Part>();
      for (const part of message.parts) {
        if (part.type === "tool_call" && message.role !== "assistant") {
          stray.add(part);
          this.edit("call_dropped", slot.near, [part.id], `Removed a tool call from a ${message.role} message.`);
        }
      }
      const kimi = kimiEmptyText(this.format, this.policy, message);
      for (const part of message.parts) {
        const rejected = isInline(this.format) ? isEmptyText(part, this.format) : kimi && part.type === "text" && part.text === "";
        if (!rejected || stray.has(part)) continue;
        stray.add(part);
        if (this.format === "openai-chat" && message.form === "string") message.form = "null";
        this.edit("empty_text_removed", slot.near, [], "Removed an empty text block.");
      }
      if (stray.size > 0) message.parts = message.parts.filter((part) => !stray.has(part));
    }
    if (this.format === "anthropic") {
      const orphans = new Set<Part>();
      for (const orphan of orphanServerResults(this.messages).reverse()) {
        const slot = this.slots[orphan.message] as Slot;
        orphans.add(slot.message.parts[orphan.position] as Part);
        this.edit("orphan_server_result_dropped", slot.near, [orphan.id], `Removed the server tool result ${orphan.id}, whose server_tool_use is gone.`, orphan.position);
      }
      this.rewriteParts(new Map([...orphans].map((part) => [part, null])));
    }
  }

  /** Duplicate ids and ids the target rejects get a deterministic new id, applied to the call and its result alike. */
  private fixIds(): void {
    const rule = this.policy.ids ?? defaultIdRule(this.format);
    const { calls: found } = analyze(this.messages);
    const keep = new Map<string, CallInfo>();
    for (const call of found) {
      if (!keep.has(call.part.id) && idProblem(call.part.id, rule, { name: call.part.name, ordinal: call.ordinal }) === null) keep.set(call.part.id, call);
    }
    const minter = new IdMinter(rule, new Set(keep.keys()));
    const uses = new Map<string, number>();
    for (const call of found) uses.set(call.part.id, (uses.get(call.part.id) ?? 0) + 1);
    for (const call of found) {
      const old = call.part.id;
      if (keep.get(old) === call) continue;
      const problem = idProblem(old, rule, { name: call.part.name, ordinal: call.ordinal });
      const id = minter.mint(old, { name: call.part.name, ordinal: call.ordinal });
      call.part.id = id;
      delete call.part.syntheticId;
      if (call.result) {
        call.result.part.callId = id;
        delete call.result.part.syntheticId;
      }
      this.idMap.toOriginal[id] = old;
      if (uses.get(old) === 1) this.idMap.fromOriginal[old] = id;
      const why = problem ?? "the id was already used by another call";
      this.edit("id_remapped", this.at(call.message), [old, id], `Renamed call id ${JSON.stringify(old)} to ${id} (${why})${call.result ? ", and its result" : ""}.`, call.position);
    }
    if (this.format === "openai-responses") {
      for (const call of found) {
        if (!misprefixedItemId(call.part)) continue;
        this.edit("item_id_removed", this.at(call.message), [call.part.id], `Removed the item id ${JSON.stringify(call.part.itemId)}, which does not begin with 'fc'.`);
        delete call.part.itemId;
      }
    }
  }

  private fixInvalidCalls(): void {
    const { calls: found } = analyze(this.messages);
    const changes = new Map<Part, Part | null>();
    for (const call of found) {
      const part = call.part;
      if (part.rawArguments === undefined) continue;
      if (this.policy.invalidCalls === "drop") {
        changes.set(part, { type: "text", text: droppedCallNote(part) });
        if (call.result) changes.set(call.result.part, null);
        this.edit("invalid_call_dropped", this.at(call.message), [part.id], `Replaced the call to ${part.name}, whose arguments are not a JSON object, with a note${call.result ? ", and removed its result" : ""}.`);
        continue;
      }
      delete part.rawArguments;
      delete part.argumentsText;
      part.error ??= defaultCallError();
      this.edit("invalid_call_replaced", this.at(call.message), [part.id], `Replaced the unusable arguments of the call to ${part.name} with a placeholder saying why it was not run.`, call.position);
    }
    this.rewriteParts(changes);
  }

  private settleExtraResults(): void {
    const { results: linked } = analyze(this.messages);
    const changes = new Map<Part, Part | null>();
    for (const result of linked) {
      if (result.kind === "assigned") continue;
      const slot = this.slots[result.message] as Slot;
      const id = result.part.callId;
      if (result.kind === "duplicate") {
        changes.set(result.part, null);
        this.edit("duplicate_result_dropped", slot.near, [id], `Removed a second result for call ${id}.`, result.position);
      } else if (this.policy.orphanResults === "drop") {
        changes.set(result.part, null);
        this.edit("orphan_result_dropped", slot.near, [id], `Removed the result for ${id}, whose call is not in the conversation.`, result.position);
      } else {
        const label = result.part.name ? `${result.part.name} call` : "tool call";
        const text = `[Result of an earlier ${label} (${id}) whose call is no longer in the conversation]\n${resultText(result.part.content)}`;
        changes.set(result.part, { type: "text", text });
        if (slot.message.role === "tool") {
          slot.message.role = "user";
          slot.message.form = "string";
        }
        this.edit("orphan_result_to_text", slot.near, [id], `Turned the result for ${id}, whose call is not in the conversation, into user text.`, result.position);
      }
    }
    this.rewriteParts(changes);
  }

  private placeResults(): void {
    const messages = this.messages;
    const { calls: found, results: linked } = analyze(messages);
    const moving = new Map<ToolCallPart, ToolResultPart>();
    const answered = new Set<ToolCallPart>();
    const removed = new Set<Part>();
    // Every placement is judged on the history as it stands before any result moves.
    const judge = placementJudge(messages, this.format);
    const misplaced = linked.filter((result) => {
      if (result.kind !== "assigned" || !result.call) return false;
      answered.add(result.call.part);
      return judge(result.call, result) !== "ok";
    });
    for (const result of misplaced) {
      const call = result.call as CallInfo;
      moving.set(call.part, result.part);
      removed.add(result.part);
      const where = isInline(this.format) ? "to the start of the message after its call" : this.format === "openai-chat" ? "into the tool messages right after its call" : "after its call";
      this.edit("result_moved", this.at(result.message), [result.part.callId], `Moved the result for ${result.part.callId} ${where} (message ${this.at(call.message)}).`, result.position);
    }
    const byMessage = new Map<number, CallInfo[]>();
    for (const call of found) {
      const group = byMessage.get(call.message);
      if (group) group.push(call);
      else byMessage.set(call.message, [call]);
    }
    const pending = new Map<number, ToolResultPart[]>();
    for (let index = this.slots.length - 1; index >= 0; index--) {
      const group = byMessage.get(index);
      if (!group) continue;
      const slot = this.slots[index] as Slot;
      const add: ToolResultPart[] = [];
      for (const { part } of group) {
        const moved = moving.get(part);
        if (moved) add.push(moved);
        else if (answered.has(part)) continue;
        else if (part.arguments === null) {
          add.push(invalidCallResult(part));
          this.edit("result_inserted", slot.near, [part.id], `Added an error result for the call to ${part.name}, which was not run because its arguments were unusable.`);
        } else if (this.policy.danglingCalls === "drop_call") {
          removed.add(part);
          this.edit("call_dropped", slot.near, [part.id], `Removed the call to ${part.name}, which has no result.`);
        } else {
          add.push(errorResult(part, this.policy.danglingResultText ?? DANGLING_RESULT_TEXT));
          this.edit("result_inserted", slot.near, [part.id], `Added an error result for the call to ${part.name}, which has none.`);
        }
      }
      if (add.length > 0) pending.set(index, add);
    }
    this.rewriteParts(new Map([...removed].map((part) => [part, null])));
    if (pending.size > 0) this.insertResults(pending);
  }

  /**
   * Puts each call message's results where the format wants them, in one pass over the history:
   * inline formats at the start of the next (user) message or in a new one; the others as tool
   * messages after the run of messages that may sit between a call and its results.
   */
  private insertResults(pending: ReadonlyMap<number, ToolResultPart[]>): void {
    const slots = this.slots;
    const out: Slot[] = [];
    if (isInline(this.format)) {
      slots.forEach((slot, index) => {
        out.push(slot);
        const add = pending.get(index);
        if (!add) return;
        const next = slots[index + 1];
        if (next && next.message.role !== "assistant") {
          const leading = next.message.parts.findIndex((part) => part.type !== "tool_result");
          next.message.parts.splice(leading === -1 ? next.message.parts.length : leading, 0, ...add);
        } else out.push({ message: { role: "user", parts: add }, origin: null, near: slot.near });
      });
      this.slots = out;
      return;
    }
    const passes = (message: Message) => message.role === "tool" || (this.format === "openai-responses" && message.role === "assistant");
    // stop[k]: the first slot at or after k that a call's results may not pass.
    const stop: number[] = new Array<number>(slots.length + 1);
    stop[slots.length] = slots.length;
    for (let k = slots.length - 1; k >= 0; k--) stop[k] = passes((slots[k] as Slot).message) ? (stop[k + 1] as number) : k;
    const before = new Map<number, Slot[]>();
    for (const [index, add] of [...pending].sort((a, b) => a[0] - b[0])) {
      const at = stop[index + 1] as number;
      const near = (slots[index] as Slot).near;
      const list = before.get(at) ?? [];
      for (const result of add) list.push({ message: { role: "tool", parts: [result] }, origin: null, near });
      before.set(at, list);
    }
    for (let k = 0; k <= slots.length; k++) {
      for (const slot of before.get(k) ?? []) out.push(slot);
      if (k < slots.length) out.push(slots[k] as Slot);
    }
    this.slots = out;
  }

  /**
   * Replaces parts (null: removes them) in every message holding one, each message rewritten once:
   * one part at a time would cost a pass over the message per part.
   */
  private rewriteParts(changes: ReadonlyMap<Part, Part | null>): void {
    if (changes.size === 0) return;
    for (const slot of this.slots) {
      if (!slot.message.parts.some((part) => changes.has(part))) continue;
      slot.message.parts = slot.message.parts.flatMap((part) => {
        const change = changes.get(part);
        return change === undefined ? [part] : change === null ? [] : [change];
      });
    }
  }

  private dropEmptyMessages(): void {
    const last = this.slots.length - 1;
    this.slots = this.slots.filter((slot, index) => {
      if (slot.message.parts.length > 0) return true;
      const original = slot.origin === null ? undefined : this.input[slot.origin];
      const emptied = original === undefined || original.parts.length > 0;
      const flagged = isInline(this.format) && !(this.format === "anthropic" && index === last && slot.message.role === "assistant");
      if (!emptied && !flagged) return true;
      this.edit("message_dropped", slot.near, [], emptied ? "Dropped a message left empty by the repair." : "Dropped an empty message.");
      return false;
    });
  }

  private fillEmptyErrorResults(): void {
    if (this.format !== "bedrock") return;
    for (const slot of this.slots) {
      for (const part of slot.message.parts) {
        if (part.type !== "tool_result" || part.isError !== true || !isEmptyResult(part)) continue;
        part.content = "The tool reported an error without details.";
        this.edit("empty_error_result_filled", slot.near, [part.callId], `Gave the error result for ${part.callId} a text, which Bedrock requires.`);
      }
    }
  }

  private fixReasoning(): void {
    const format = this.format;
    if (this.policy.stripReasoning) this.stripReasoning();
    if (format === "anthropic" || format === "bedrock") this.fixThinkingBlocks();
    if (format === "openai-chat" && this.thinking) {
      for (const slot of this.slots) {
        const message = slot.message;
        if (message.role !== "assistant" || calls(message).length === 0 || message.parts.some((part) => part.type === "reasoning")) continue;
        message.parts.unshift({ type: "reasoning", text: " " });
        this.edit("reasoning_padded", slot.near, calls(message).map((call) => call.id), "Added a blank reasoning_content to an assistant tool-call message, which thinking mode requires.");
      }
    }
    if (format === "gemini" && this.thinking) {
      const start = turnStart(this.messages);
      this.slots.forEach((slot, index) => {
        const first = calls(slot.message)[0];
        if (index <= start || slot.message.role !== "assistant" || !first || first.signature !== undefined) return;
        first.signature = GEMINI_SIGNATURE_PLACEHOLDER;
        this.edit("thought_signature_placeholder", slot.near, [first.id], `Gave the call to ${first.name} Gemini's placeholder thought signature; its own was lost.`);
      });
    }
    if (format === "openai-responses") this.fixReasoningItems();
  }

  private stripReasoning(): void {
    for (const slot of this.slots) {
      const message = slot.message;
      if (message.parts.some(isVerifiedReasoning)) {
        message.parts = message.parts.filter((part) => !isVerifiedReasoning(part));
        this.edit("reasoning_dropped", slot.near, [], "Removed signed or encrypted reasoning, as the policy asks.");
      }
      for (const call of calls(message)) {
        if (call.itemId !== undefined) {
          delete call.itemId;
          this.edit("item_id_removed", slot.near, [call.id], "Removed the call's item id, which points at reasoning that is gone.");
        }
        if (call.signature !== undefined && call.signature !== GEMINI_SIGNATURE_PLACEHOLDER) {
          delete call.signature;
          this.edit("reasoning_dropped", slot.near, [call.id], "Removed the call's thought signature, as the policy asks.");
        }
      }
    }
    this.dropEmptyMessages();
  }

  private fixThinkingBlocks(): void {
    for (const slot of this.slots) {
      const message = slot.message;
      if (message.role !== "assistant" || message.parts.findIndex((part) => part.type === "reasoning") <= 0) continue;
      message.parts = [...message.parts.filter((part) => part.type === "reasoning"), ...message.parts.filter((part) => part.type !== "reasoning")];
      this.edit("thinking_moved_first", slot.near, [], "Moved the thinking blocks to the start of the assistant message.");
    }
    const last = lastAssistant(this.messages);
    const slot = this.slots[last];
    if (this.thinking && slot && calls(slot.message).length > 0 && slot.message.parts[0]?.type !== "reasoning" && this.policy.missingThinking !== "keep") {
      this.exchangeToText(last);
    }
    // Dropping a final message emptied of its thinking makes the one before it final.
    for (let final = this.slots[this.slots.length - 1]; this.policy.thinking === "off" && final?.message.role === "assistant"; final = this.slots[this.slots.length - 1]) {
      if (!final.message.parts.some((part) => part.type === "reasoning")) break;
      final.message.parts = final.message.parts.filter((part) => part.type !== "reasoning");
      this.edit("reasoning_dropped", final.near, [], "Removed thinking from the final assistant message, since thinking is off.");
      if (final.message.parts.length > 0) break;
      this.slots.pop();
      this.edit("message_dropped", final.near, [], "Dropped a message left empty by the repair.");
    }
  }

  /** Rewrites the calls of an assistant message, and their results, as plain text. */
  private exchangeToText(index: number): void {
    const slot = this.slots[index] as Slot;
    const next = this.slots[index + 1];
    const ids: string[] = [];
    const results = new Map<string, ToolResultPart>();
    for (const part of next?.message.parts ?? []) if (part.type === "tool_result" && !results.has(part.callId)) results.set(part.callId, part);
    const changes = new Map<Part, Part | null>();
    for (const call of calls(slot.message)) {
      ids.push(call.id);
      const input = call.arguments === null ? `(not run: ${call.error?.message ?? "unusable arguments"})` : JSON.stringify(call.arguments);
      changes.set(call, { type: "text", text: `[Called ${call.name} with ${input}]` });
      const result = results.get(call.id);
      if (next && result) {
        const label = result.isError ? "Error from" : "Result of";
        changes.set(result, { type: "text", text: `[${label} ${call.name}]\n${resultText(result.content)}` });
      }
    }
    this.rewriteParts(changes);
    this.edit("tool_exchange_to_text", slot.near, ids, "Thinking is on but this tool-calling message has no thinking block, which cannot be recreated: rewrote its calls and results as text.");
  }

  private fixReasoningItems(): void {
    // From the end: a reasoning item is judged against what follows it once later orphans are gone.
    const kept: Slot[] = [];
    for (let index = this.slots.length - 1; index >= 0; index--) {
      const slot = this.slots[index] as Slot;
      const next = kept[kept.length - 1]?.message;
      if (!isReasoningOnly(slot.message) || (next && next.role === "assistant" && !isReasoningOnly(next))) {
        kept.push(slot);
        continue;
      }
      this.edit("reasoning_dropped", slot.near, [], "Removed a reasoning item that is not followed by the item it belongs to.");
    }
    this.slots = kept.reverse();
    if (!this.thinking) return;
    const messages = this.messages;
    const reasoned = reasoningInRun(messages);
    messages.forEach((message, index) => {
      for (const call of calls(message)) {
        if (call.itemId === undefined || reasoned[index]) continue;
        this.edit("item_id_removed", this.at(index), [call.id], `Removed the item id ${call.itemId}: its reasoning item is gone, so the call is sent as a new item.`);
        delete call.itemId;
      }
    });
  }

  /** One pass each (merging by splicing one message at a time would be quadratic in a long run). */
  private fixTurnOrder(): void {
    if (this.format === "gemini") {
      const out: Slot[] = [];
      for (const slot of this.slots) {
        if (slot.message.role === "assistant" && calls(slot.message).length > 0) {
          const merged: Slot[] = [];
          for (let previous = out[out.length - 1]; previous?.message.role === "assistant"; previous = out[out.length - 1]) {
            merged.push(out.pop() as Slot);
            this.edit("messages_merged", previous.near, [], `Merged model message ${previous.near} into the function call turn after it.`);
          }
          if (merged.length > 0) slot.message.parts = [...merged.reverse().flatMap((previous) => previous.message.parts), ...slot.message.parts];
          if (out.length === 0) {
            out.push({ message: { role: "user", parts: [{ type: "text", text: OMITTED_TEXT }] }, origin: null, near: slot.near });
            this.edit("user_turn_inserted", slot.near, [], "Inserted a user turn before the function call turn that opened the conversation.");
          }
        }
        out.push(slot);
      }
      this.slots = out;
    }
    if (this.format === "bedrock") {
      const first = this.slots[0];
      if (first?.message.role === "assistant") {
        this.slots.unshift({ message: { role: "user", parts: [{ type: "text", text: OMITTED_TEXT }] }, origin: null, near: first.near });
        this.edit("user_turn_inserted", first.near, [], "Inserted a user message: a Bedrock conversation must start with one.");
      }
      const out: Slot[] = [];
      for (let start = 0; start < this.slots.length; ) {
        const head = this.slots[start] as Slot;
        let end = start + 1;
        while (end < this.slots.length && side((this.slots[end] as Slot).message) === side(head.message)) end++;
        const run = this.slots.slice(start, end);
        if (run.length > 1) {
          for (const slot of run.slice(1).reverse()) this.edit("messages_merged", slot.near, [], `Merged message ${slot.near} into the ${side(head.message)} message before it, since roles must alternate.`);
          head.message = { ...head.message, role: side(head.message), parts: run.flatMap((slot) => slot.message.parts) };
        }
        out.push(head);
        start = end;
      }
      this.slots = out;
    }
  }
}

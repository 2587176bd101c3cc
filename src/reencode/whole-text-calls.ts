import { createDecoder } from "../providers/registry.js";
import type { DecodedTurn, DecoderOptions, ProviderName, ToolCall } from "../types.js";
import { DecoderTap, isPlainObject } from "./common.js";
import { textCallDecoderOptions, TextParts, type TextPart } from "./text-call-parts.js";
import { functionCallItem, reasoningItem } from "./responses-text-calls.js";
import { REASONING_MOVED, reasoningField, reasoningMoved, stopReasonForTextCalls, TEXT_CALL_REPORT } from "./text-calls.js";
import type { WholeResponseRepair } from "./whole-common.js";

/**
 * Non-streamed bodies with `textCalls`: a Chat Completions message and Ollama's `/api/chat` with
 * `stream: false` (one message: its text calls appended to its `tool_calls`), and the protocols
 * whose bodies are lists of blocks or items (Anthropic Messages, OpenAI Responses): the body,
 * already repaired as `repairWholeResponse` repairs it, is read again by the protocol's decoder with
 * the extractor on, and each text block or message item is rebuilt from what the extractor released
 * for it, in order, as the stream re-encoders write it (anthropic-text-calls.ts,
 * responses-text-calls.ts, ollama.ts): text before a call, the call, text after it; reasoning as
 * the protocol's reasoning; a call that cannot run withheld. A body whose text holds no call and no
 * reasoning comes back as the same object.
 */

/** The parts of one text block or message item, in order; adjacent parts of one kind joined (a withheld call between them leaves nothing). */
type Piece = { kind: "text" | "reasoning"; text: string } | { kind: "call"; call: ToolCall };

/** Sorts what was released into the blocks it was read in, and settles each call (runnable, or withheld and reported). */
function settle(tap: DecoderTap, parts: TextParts, byBlock: Map<number, TextPart[]>, atEnd: readonly TextPart[], last: number | null): { pieces: Map<number, Piece[]>; runnable: number } {
  for (const part of atEnd) {
    const block = parts.blockOf(part) ?? last;
    if (block !== null) byBlock.get(block)?.push(part);
  }
  let runnable = 0;
  const pieces = new Map<number, Piece[]>();
  for (const [block, list] of byBlock) {
    const out: Piece[] = [];
    for (const part of list) {
      if (part.kind === "call") {
        const call = tap.ended.get(part.index);
        if (!call || call.textSyntax === undefined) continue;
        if (call.arguments === null) {
          tap.withheld(call);
          continue;
        }
        runnable++;
        tap.rewritten(call, [TEXT_CALL_REPORT.code]);
        out.push({ kind: "call", call });
        continue;
      }
      if (part.text === "") continue;
      const previous = out[out.length - 1];
      if (previous !== undefined && previous.kind === part.kind) previous.text += part.text;
      else out.push({ kind: part.kind, text: part.text });
    }
    pieces.set(block, out);
  }
  return { pieces, runnable };
}

/** Whether a block's pieces are its text as it came (nothing to rewrite). */
function unchanged(pieces: readonly Piece[] | undefined, text: string): boolean {
  if (pieces === undefined) return true;
  if (pieces.length === 0) return text === "";
  return pieces.length === 1 && pieces[0]?.kind === "text" && pieces[0].text === text;
}

/**
 * `repaired` with the text-call reader's reports added; with `rebuilt`, the body rebuilt from the
 * text's calls and the turn to report: the wire calls' turn when the wire carried calls, else the
 * one read with the text calls.
 */
function withTextCalls(repaired: WholeResponseRepair, tap: DecoderTap, rebuilt?: { body: unknown; turn: DecodedTurn }): WholeResponseRepair {
  const repairs = [...repaired.repairs, ...tap.repairs];
  if (rebuilt === undefined) return tap.repairs.length === 0 ? repaired : { ...repaired, repairs };
  const turn = repaired.turn !== null && repaired.turn.toolCalls.length > 0 ? repaired.turn : rebuilt.turn;
  return { body: rebuilt.body, changed: true, turn, repairs };
}

/**
 * A whole body read again as the events of its stream, with the extractor on: `push` an event,
 * `text` the text delta of block or item `index` (what the extractor releases is kept for it),
 * then `settle`.
 */
class WholeReader {
  readonly tap: DecoderTap;
  readonly parts: TextParts;
  private readonly byBlock = new Map<number, TextPart[]>();
  private last: number | null = null;

  constructor(provider: ProviderName, options: DecoderOptions, reasoningGoesTo: string) {
    this.tap = new DecoderTap(provider, createDecoder(provider, { ...textCallDecoderOptions(options), retainText: true }));
    this.parts = new TextParts(this.tap, reasoningGoesTo);
  }

  push(data: Record<string, unknown>): void {
    this.tap.push({ event: data.type as string, data });
  }

  text(index: number, data: Record<string, unknown>): void {
    this.byBlock.set(index, this.parts.collect(() => this.push(data), index));
    this.last = index;
  }

  /** The end of the body: each block's pieces, its calls settled (see `settle`). */
  settle(): { pieces: Map<number, Piece[]>; runnable: number; turn: DecodedTurn } {
    const atEnd = this.parts.collect(() => this.tap.end());
    return { ...settle(this.tap, this.parts, this.byBlock, atEnd, this.last), turn: this.tap.turn as DecodedTurn };
  }
}

/** An Anthropic Messages body (`content` blocks) with the calls its text blocks hold as `tool_use` blocks. */
export function extractWholeAnthropicTextCalls(repaired: WholeResponseRepair, options: DecoderOptions): WholeResponseRepair {
  const body = repaired.body;
  if (!isPlainObject(body) || !Array.isArray(body.content)) return repaired;
  const content = body.content as unknown[];
  const reader = new WholeReader("anthropic", options, "thinking block");
  const { tap, parts } = reader;
  const push = (data: Record<string, unknown>): void => reader.push(data);
  push({ type: "message_start", message: { id: typeof body.id === "string" ? body.id : "msg", type: "message", role: "assistant", content: [], stop_reason: null, stop_sequence: null } });
  content.forEach((block: unknown, index) => {
    if (!isPlainObject(block) || block.type !== "text" || typeof block.text !== "string") return;
    push({ type: "content_block_start", index, content_block: { type: "text", text: "" } });
    reader.text(index, { type: "content_block_delta", index, delta: { type: "text_delta", text: block.text } });
    push({ type: "content_block_stop", index });
  });
  const stopReason = body.stop_reason;
  push({ type: "message_delta", delta: { stop_reason: typeof stopReason === "string" ? stopReason : null, stop_sequence: null } });
  push({ type: "message_stop" });
  const { pieces, runnable, turn } = reader.settle();
  if (content.every((block, index) => !isPlainObject(block) || unchanged(pieces.get(index), typeof block.text === "string" ? block.text : ""))) {
    return withTextCalls(repaired, tap);
  }
  const out: unknown[] = [];
  content.forEach((block: unknown, index) => {
    const list = pieces.get(index);
    if (list === undefined || !isPlainObject(block)) {
      out.push(block);
      return;
    }
    let first = true;
    for (const piece of list) {
      if (piece.kind === "call") out.push({ type: "tool_use", id: piece.call.id, name: piece.call.name, input: piece.call.arguments });
      else if (piece.kind === "reasoning") {
        parts.reportReasoning();
        out.push({ type: "thinking", thinking: piece.text, signature: "" });
      } else {
        // The block's own fields (citations) stay on its first text.
        out.push(first ? { ...block, text: piece.text } : { type: "text", text: piece.text });
        first = false;
      }
    }
  });
  let next: Record<string, unknown> = { ...body, content: out };
  if (runnable > 0 && (stopReason === "end_turn" || stopReason === "stop_sequence")) {
    next = { ...next, stop_reason: "tool_use" };
    tap.report(stopReasonForTextCalls("stop_reason", stopReason, "tool_use"));
  }
  return withTextCalls(repaired, tap, { body: next, turn });
}

/**
 * A non-streamed Chat Completions body (already repaired as `repairChatWhole` does) with the calls
 * the model wrote into its message text read out, by the same decoder a stream gets: the text and
 * reasoning become what it released, each runnable call is appended to `tool_calls` (whole, id
 * `tw_text_<n>`), one that cannot run is withheld, and the finish reason says `tool_calls` only
 * when a runnable call was read. One choice only (several are left as they are).
 */
export function extractWholeChatTextCalls(repaired: WholeResponseRepair, options: DecoderOptions): WholeResponseRepair {
  const body = repaired.body;
  if (!isPlainObject(body) || !Array.isArray(body.choices) || body.choices.length !== 1) return repaired;
  const choice = body.choices[0];
  if (!isPlainObject(choice) || !isPlainObject(choice.message)) return repaired;
  const message = choice.message;
  const content = typeof message.content === "string" ? message.content : "";
  const field = reasoningField(message);
  const reasoning = typeof message[field] === "string" ? (message[field] as string) : "";
  const finish = typeof choice.finish_reason === "string" ? choice.finish_reason : null;
  const tap = new DecoderTap("openai-chat", createDecoder("openai-chat", { ...options, retainText: true }));
  tap.push({ data: { choices: [{ index: 0, delta: { role: "assistant", ...(reasoning !== "" ? { reasoning_content: reasoning } : {}), content } }] } });
  tap.push({ data: { choices: [{ index: 0, delta: {}, finish_reason: finish }] } });
  tap.push({ data: "[DONE]" });
  const read = messageTextCalls(tap, content, reasoning, message.tool_calls, (call) => ({ id: call.id, type: "function", function: { name: call.name, arguments: JSON.stringify(call.arguments) } }));
  if (read === null) return repaired;
  const { turn, entries, runnable } = read;
  if (turn.reasoning.length > reasoning.length) tap.report(REASONING_MOVED);
  const next: Record<string, unknown> = { ...message, content: turn.text === "" && entries.length > 0 ? null : turn.text };
  if (turn.reasoning !== "" || field in message) next[field] = turn.reasoning;
  if (entries.length > 0) next.tool_calls = entries;
  let finishReason = choice.finish_reason;
  if (runnable > 0 && (finish === "stop" || finish === null)) {
    finishReason = "tool_calls";
    tap.report(stopReasonForTextCalls("finish_reason", finish, "tool_calls"));
  }
  return withTextCalls(repaired, tap, { body: { ...body, choices: [{ ...choice, message: next, finish_reason: finishReason }] }, turn });
}

/**
 * The calls the text of a whole message holds, read by `tap` (which has decoded the message as one
 * event): each runnable call is reported and written by `entry` after the message's own
 * `wireCalls`, one that cannot run is withheld. Null when the text held no call and no reasoning
 * (the body stays as sent).
 */
function messageTextCalls(tap: DecoderTap, text: string, reasoning: string, wireCalls: unknown, entry: (call: ToolCall, position: number) => unknown): { turn: DecodedTurn; entries: unknown[]; runnable: number } | null {
  tap.end();
  const turn = tap.turn as DecodedTurn;
  if (turn.text === text && turn.reasoning === reasoning && turn.toolCalls.length === 0) return null;
  const entries: unknown[] = Array.isArray(wireCalls) ? [...wireCalls] : [];
  let runnable = 0;
  for (const call of turn.toolCalls) {
    if (call.textSyntax === undefined) continue;
    if (call.arguments === null) {
      tap.withheld(call);
      continue;
    }
    tap.rewritten(call, [TEXT_CALL_REPORT.code]);
    entries.push(entry(call, runnable++));
  }
  return { turn, entries, runnable };
}

/**
 * An Ollama `/api/chat` body (`stream: false`) with the calls its `message.content` holds as
 * `message.tool_calls`, as the stream re-encoder sends them; `done_reason` stays as sent (Ollama
 * says `stop` for a turn with calls too).
 */
export function extractWholeOllamaTextCalls(repaired: WholeResponseRepair, options: DecoderOptions): WholeResponseRepair {
  const body = repaired.body;
  if (!isPlainObject(body) || !isPlainObject(body.message)) return repaired;
  const message = body.message;
  const content = typeof message.content === "string" ? message.content : "";
  const thinking = typeof message.thinking === "string" ? message.thinking : "";
  const tap = new DecoderTap("ollama", createDecoder("ollama", { ...textCallDecoderOptions(options), retainText: true }));
  tap.push({ data: { model: body.model, message: { role: "assistant", content, ...(thinking !== "" ? { thinking } : {}) }, done: true, done_reason: typeof body.done_reason === "string" ? body.done_reason : "stop" } });
  const read = messageTextCalls(tap, content, thinking, message.tool_calls, (call, position) => ({ id: call.id, function: { index: position, name: call.name, arguments: call.arguments } }));
  if (read === null) return repaired;
  const { turn, entries } = read;
  if (turn.reasoning.length > thinking.length) tap.report(reasoningMoved("message.thinking"));
  const next: Record<string, unknown> = { ...message, content: turn.text };
  if (turn.reasoning !== "" || "thinking" in message) next.thinking = turn.reasoning;
  if (entries.length > 0) next.tool_calls = entries;
  return withTextCalls(repaired, tap, { body: { ...body, message: next }, turn });
}

/** The text of a message item that is one `output_text` part (the only shape read for text calls), else null. */
function messageText(item: unknown): string | null {
  if (!isPlainObject(item) || item.type !== "message" || !Array.isArray(item.content) || item.content.length !== 1) return null;
  const part = item.content[0];
  return isPlainObject(part) && part.type === "output_text" && typeof part.text === "string" ? part.text : null;
}

/**
 * An OpenAI Responses body (`output` items) with the calls its message items hold as
 * `function_call` items (`call_id` `tw_text_<n>`), reasoning as `reasoning` items, as the stream
 * re-encoder writes them (responses-text-calls.ts). Read on message items of one `output_text` part.
 */
export function extractWholeResponsesTextCalls(repaired: WholeResponseRepair, options: DecoderOptions): WholeResponseRepair {
  const body = repaired.body;
  if (!isPlainObject(body) || !Array.isArray(body.output)) return repaired;
  const output = body.output as unknown[];
  const reader = new WholeReader("openai-responses", options, "reasoning item");
  const { tap, parts } = reader;
  const push = (data: Record<string, unknown>): void => reader.push(data);
  const response = { ...body, output: [] };
  push({ type: "response.created", response });
  output.forEach((item: unknown, index) => {
    const text = messageText(item);
    if (text === null || !isPlainObject(item)) {
      if (isPlainObject(item)) push({ type: "response.output_item.done", output_index: index, item });
      return;
    }
    const id = typeof item.id === "string" ? item.id : `msg_${index}`;
    push({ type: "response.output_item.added", output_index: index, item: { ...item, id, content: [] } });
    push({ type: "response.content_part.added", item_id: id, output_index: index, content_index: 0, part: { type: "output_text", text: "" } });
    reader.text(index, { type: "response.output_text.delta", item_id: id, output_index: index, content_index: 0, delta: text });
    push({ type: "response.output_item.done", output_index: index, item: { ...item, id } });
  });
  push({ type: typeof body.status === "string" && body.status === "incomplete" ? "response.incomplete" : "response.completed", response: body });
  const { pieces, turn } = reader.settle();
  if (output.every((item, index) => unchanged(pieces.get(index), messageText(item) ?? ""))) {
    return withTextCalls(repaired, tap);
  }
  const next: unknown[] = [];
  output.forEach((item: unknown, index) => {
    const list = pieces.get(index);
    if (list === undefined || !isPlainObject(item)) {
      next.push(item);
      return;
    }
    const id = typeof item.id === "string" ? item.id : `msg_${index}`;
    const part = (item.content as unknown[])[0] as Record<string, unknown>;
    let segments = 0;
    let originalTaken = false;
    for (const piece of list) {
      if (piece.kind === "call") {
        next.push(functionCallItem(piece.call));
      } else if (piece.kind === "reasoning") {
        parts.reportReasoning();
        next.push(reasoningItem(`${id}_rs_${++segments}`, piece.text));
      } else {
        const segmentId = originalTaken ? `${id}_${++segments}` : id;
        next.push({ ...item, id: segmentId, content: [{ ...(originalTaken ? { type: "output_text", annotations: [] } : part), text: piece.text }] });
        originalTaken = true;
      }
    }
  });
  return withTextCalls(repaired, tap, { body: { ...body, output: next }, turn });
}

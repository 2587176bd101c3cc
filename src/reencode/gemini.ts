import { isPlaceholderId } from "../assemble/turn.js";
import { numberField, stringField } from "../providers/fields.js";
import { jsonText } from "../json/stringify.js";
import type { DecoderOptions, ProviderEvent, ToolCall } from "../types.js";
import { isPlainObject, TappedReencoder } from "./common.js";
import { CallPartReader, type CallTrack as CallPartTrack } from "./gemini-calls.js";
import { HoldQueue } from "./hold.js";
import { JsonArraySplitter } from "../framing/json-array.js";
import { encodeOut, SseEventSplitter, type WireEvent } from "./sse-events.js";
import type { Reencoder } from "./types.js";

/**
 * Google Gemini `streamGenerateContent` (Gemini API and Vertex): decoded, then re-emitted as the
 * same `GenerateContentResponse` chunks, in the body's own form: Server-Sent Events (`alt=sse`) or
 * the default streamed JSON array (`[{…}\n,\r\n{…}]`), told apart by the body's first character.
 *
 * - Chunks pass as they came, byte for byte (the array's separators too), as soon as they are
 *   decided. A chunk holding a `functionCall` part is held until the decoder decides that call:
 *   at once for a whole call with object `args`; at the part without `willContinue` for a call
 *   whose arguments stream as `partialArgs` (Vertex `streamFunctionCallArguments`), so the chunks
 *   from its first part to its last are held; at the end of the stream for `args` sent as a string
 *   that does not parse (a `MAX_TOKENS` stop then makes it truncated rather than invalid). Chunks
 *   after a held one wait behind it, so the client sees every part in its order.
 * - Only the parts of calls toolwire fixed change, inside the chunk's
 *   `candidates[].content.parts`, the rest of the chunk kept: a call whose only fault is its id (none
 *   sent, a placeholder such as `"null"`, or a duplicate of an earlier call's) gets toolwire's id on
 *   the part that opened it, so the client's calls carry the ids of toolwire's turn (not on Vertex,
 *   which rejects ids in a history: `addMissingIds: false`, set by the repairing fetch for Vertex
 *   URLs, leaves a call sent without an id without one); a call decoded
 *   with any other repair, `args` sent as a JSON string, or a streamed call that also carried an
 *   `args` snapshot becomes one whole part `{functionCall: {id, name, args}}` (the decoded
 *   arguments; the `thoughtSignature` and other fields of its first part kept) where its first part
 *   was, and its other parts are removed. A chunk re-encoded this way is the compact JSON of the
 *   chunk as parsed, everything but the call's parts as sent.
 * - A call that is truncated (the stream ended or was cut while it still said `willContinue`, a
 *   `MAX_TOKENS` stop inside it, a new call that began before it ended) or invalid (`args` not an
 *   object, streamed leaves that cannot be assembled) is withheld: its parts are removed, so no
 *   client sees a runnable call. A `MAX_TOKENS` finishReason already tells the client the turn was
 *   cut. Gemini has no tool-call finish reason (`STOP` ends a turn with calls too), so a `STOP`
 *   turn whose every call was withheld would read as a finished answer; it says
 *   `MALFORMED_FUNCTION_CALL` instead, Gemini's own reason for "the model generated a call that is
 *   not valid", which clients (and toolwire) read as a turn to retry rather than an answer.
 * - Everything else passes untouched: text, thought parts and `thoughtSignature`s, other
 *   candidates, `usageMetadata`, `groundingMetadata`, prompt feedback, errors. A chunk the decoder
 *   ignores (nested deeper than any call may) is not forwarded (an array element becomes `{}`).
 * - Calls are not deduplicated beyond what the decoder does: a call sent again in a later chunk is
 *   a second call to the decoder (with a unique id), and is delivered as one.
 */
export function createGeminiReencoder(options: GeminiReencoderOptions = {}): Reencoder {
  return new GeminiReencoder(options);
}

/** Options of `createGeminiReencoder`: the decoder options, and whether calls sent without an id get toolwire's. */
export interface GeminiReencoderOptions extends DecoderOptions {
  /**
   * Put toolwire's id on a call Gemini sent without one (default true), so that the client's calls
   * carry the ids of toolwire's turn. Off for Vertex AI: its FunctionCall has no `id` field, and a
   * client that sends the id back in its history gets a 400 ("Unknown name \"id\""); the client
   * then mints its own, as it does without toolwire.
   */
  addMissingIds?: boolean;
}

interface PartRef {
  chunk: HeldChunk;
  candidate: number;
  part: number;
}

interface CallTrack extends CallPartTrack<PartRef> {
  /** The call's index in the turn, counted as the decoder counts calls. */
  index: number;
  decided: boolean;
}

interface HeldChunk {
  kind: "chunk";
  /** The chunk as it came: forwarded when nothing in it changed. */
  wire: WireEvent;
  data: Record<string, unknown>;
  /** The SSE event's line ending and name, for writing the chunk again in the same shape (null: an array element). */
  sse: { eol: string; name: string | undefined } | null;
  calls: CallTrack[];
  /** Replaced parts (null: removed), by candidate position, then part position. */
  edits: Map<number, Map<number, unknown>> | null;
  /** The position of the first decoded candidate that carries a finishReason, and the reason. */
  finish: { candidate: number; reason: string } | null;
}

type Item = HeldChunk | { kind: "text"; wire: WireEvent };

const REMOVED = null;

class GeminiReencoder extends TappedReencoder {
  private form: "sse" | "json" | null = null;
  /** Leading white space, held until the body's first character tells its form. */
  private sniffed: Uint8Array[] = [];
  private readonly sse = new SseEventSplitter();
  private readonly array = new JsonArraySplitter();
  private readonly queue = new HoldQueue<Item, WireEvent>((item, out) => this.handle(item, out));
  /** Calls not decided yet, by their index in the turn. */
  private readonly undecided = new Map<number, CallTrack>();
  /** The call whose arguments are still streaming (it said willContinue). */
  private readonly callParts = new CallPartReader<PartRef, CallTrack>((sentId, ref) => this.openTrack(sentId, ref));
  private opened = 0;
  private delivered = 0;
  private withheldCalls = 0;
  private ended = false;
  private readonly addMissingIds: boolean;

  constructor(options: GeminiReencoderOptions) {
    const { addMissingIds = true, ...decoderOptions } = options;
    super("gemini", decoderOptions);
    this.addMissingIds = addMissingIds;
  }

  push(chunk: Uint8Array): Uint8Array[] {
    if (this.ended) return [];
    const out: WireEvent[] = [];
    if (this.form === null) {
      const at = firstSignificant(chunk);
      if (at < 0) {
        this.sniffed.push(chunk);
        return [];
      }
      const first = chunk[at] as number;
      this.form = first === 0x5b || first === 0x7b ? "json" : "sse";
      for (const held of this.sniffed) this.feed(held, out);
      this.sniffed = [];
    }
    this.feed(chunk, out);
    return encodeOut(out);
  }

  flush(): Uint8Array[] {
    if (this.ended) return [];
    this.ended = true;
    const out: WireEvent[] = [];
    if (this.form === null) {
      // Nothing but white space: forwarded as it came, SSE-split so the decoder sees the same.
      this.form = "sse";
      for (const held of this.sniffed) this.feed(held, out);
      this.sniffed = [];
    }
    if (this.form === "sse") for (const raw of this.sse.flush()) this.onPiece(raw.raw, raw.wire, raw.event, out);
    else for (const piece of this.array.flush()) this.onPiece(piece.raw, piece.raw, piece.kind === "element" ? piece.event : null, out);
    this.decide(this.tap.end());
    // A call the decoder did not keep (over a limit) goes on as it came.
    for (const track of this.undecided.values()) track.decided = true;
    this.undecided.clear();
    this.queue.settle(out, true);
    return encodeOut(out);
  }

  private feed(bytes: Uint8Array, out: WireEvent[]): void {
    if (this.form === "sse") for (const raw of this.sse.push(bytes)) this.onPiece(raw.raw, raw.wire, raw.event, out);
    else for (const piece of this.array.push(bytes)) this.onPiece(piece.raw, piece.raw, piece.kind === "element" ? piece.event : null, out);
  }

  /** One SSE event or array element (`event`), or text that dispatches nothing (null); `wire` is what forwards it as it came. */
  private onPiece(raw: string, wire: WireEvent, event: ProviderEvent | null, out: WireEvent[]): void {
    if (event === null) {
      this.queue.push({ kind: "text", wire }, out);
      return;
    }
    const ended = this.tap.push(event);
    const data = event.data;
    let item: Item | null = null;
    if (this.tap.refused) {
      // The decoder ignored it (too deep to check): not forwarded, and its parts are not calls.
      // An array element still needs a value between its commas.
      this.tap.refusedEvent();
      if (this.form === "json") item = { kind: "text", wire: "{}" };
    } else if (!isPlainObject(data) || data.error !== undefined) item = { kind: "text", wire };
    else item = this.track(wire, data, this.form === "sse" ? { eol: lineEnding(raw), name: event.event } : null);
    // After track(): a whole call opens and ends in the same chunk.
    this.decide(ended);
    if (item !== null) this.queue.push(item, out);
    else this.queue.settle(out, false);
  }

  /** A chunk waits until each of its calls is decided (and every piece after it waits behind it). */
  private handle(item: Item, out: WireEvent[]): void {
    if (item.kind === "chunk" && item.calls.some((track) => !track.decided)) {
      this.queue.hold({ decided: () => item.calls.every((track) => track.decided), release: (later) => later.push(this.render(item)) });
      return;
    }
    out.push(item.kind === "text" ? item.wire : this.render(item));
  }

  /** Follows the chunk's call parts the way the decoder reads them (src/providers/gemini.ts). */
  private track(wire: WireEvent, data: Record<string, unknown>, sse: HeldChunk["sse"]): HeldChunk {
    const chunk: HeldChunk = { kind: "chunk", wire, data, sse, calls: [], edits: null, finish: null };
    if (!Array.isArray(data.candidates)) return chunk;
    data.candidates.forEach((candidate: unknown, position) => {
      if (!isPlainObject(candidate) || (numberField(candidate, "index") ?? position) !== 0) return;
      const content = isPlainObject(candidate.content) ? candidate.content : null;
      const parts = content && Array.isArray(content.parts) ? content.parts : [];
      parts.forEach((part: unknown, at) => {
        if (!isPlainObject(part) || !isPlainObject(part.functionCall)) return;
        const track = this.callParts.read(part.functionCall, { chunk, candidate: position, part: at });
        if (track !== null) this.addCall(chunk, track);
      });
      const reason = stringField(candidate, "finishReason");
      if (reason !== null && chunk.finish === null) chunk.finish = { candidate: position, reason };
    });
    return chunk;
  }

  private openTrack(sentId: string | null, ref: PartRef): CallTrack {
    const track: CallTrack = { index: this.opened++, refs: [ref], sentId, plain: true, decided: false };
    this.undecided.set(track.index, track);
    return track;
  }

  private addCall(chunk: HeldChunk, track: CallTrack): void {
    if (!chunk.calls.includes(track)) chunk.calls.push(track);
  }

  /** Settles the calls the decoder just ended. */
  private decide(ended: readonly ToolCall[]): void {
    for (const call of ended) {
      const track = this.undecided.get(call.index);
      if (!track) continue;
      this.undecided.delete(call.index);
      track.decided = true;
      this.settle(track, call);
    }
  }

  private settle(track: CallTrack, call: ToolCall): void {
    if (call.arguments === null) {
      this.withheldCalls++;
      for (const ref of track.refs) edit(ref, REMOVED);
      this.tap.withheld(call);
      return;
    }
    this.delivered++;
    const sentNone = track.sentId === null || isPlaceholderId(track.sentId);
    // The id the client gets: toolwire's, unless none was sent and none may be added (Vertex).
    const id = sentNone && !this.addMissingIds ? null : call.id;
    // call_id_minted when the wire's id changed for it: toolwire's id added, or a placeholder dropped.
    const codes = sentNone && call.providerId === undefined && (id !== null || track.sentId !== null) ? ["call_id_minted"] : [];
    const clean = track.plain && call.complete && call.error === null && call.repairs.every((code) => code === "minted_id");
    const first = track.refs[0] as PartRef;
    if (clean) {
      if (id === track.sentId) return;
      // Only the id needs a fix: the call's parts stay as sent, its first part gets toolwire's id
      // (or loses a placeholder one where no id may be added).
      const part = partAt(first) as Record<string, unknown>;
      const { id: _sentId, ...functionCall } = part.functionCall as Record<string, unknown>;
      edit(first, { ...part, functionCall: id === null ? functionCall : { ...functionCall, id } });
      this.tap.rewritten(call, codes);
      return;
    }
    const { functionCall: _sent, ...fields } = partAt(first) as Record<string, unknown>;
    const signature = call.providerFields?.thoughtSignature;
    if (fields.thoughtSignature === undefined && typeof signature === "string") fields.thoughtSignature = signature;
    edit(first, { functionCall: { ...(id === null ? {} : { id }), name: call.name, args: call.arguments }, ...fields });
    for (const ref of track.refs.slice(1)) edit(ref, REMOVED);
    this.tap.rewritten(call, codes);
  }

  private render(chunk: HeldChunk): WireEvent {
    const finish = chunk.finish;
    const noCallLeft = finish !== null && finish.reason === "STOP" && this.delivered === 0 && this.withheldCalls > 0;
    if (chunk.edits === null && !noCallLeft) return chunk.wire;
    const candidates = (chunk.data.candidates as unknown[]).slice();
    for (const [position, edits] of chunk.edits ?? []) {
      const candidate = candidates[position] as Record<string, unknown>;
      const content = candidate.content as Record<string, unknown>;
      const parts: unknown[] = [];
      (content.parts as unknown[]).forEach((part, at) => {
        const replacement = edits.has(at) ? edits.get(at) : part;
        if (replacement !== REMOVED) parts.push(replacement);
      });
      candidates[position] = { ...candidate, content: { ...content, parts } };
    }
    if (noCallLeft && finish) {
      candidates[finish.candidate] = { ...(candidates[finish.candidate] as Record<string, unknown>), finishReason: "MALFORMED_FUNCTION_CALL" };
      this.tap.report({
        action: "normalized",
        code: "finish_reason_without_calls",
        message: "Every tool call of the turn was withheld, so finishReason STOP became MALFORMED_FUNCTION_CALL: the turn is one to retry, not an answer.",
      });
    }
    const json = jsonText({ ...chunk.data, candidates });
    if (chunk.sse === null) return json;
    const { eol, name } = chunk.sse;
    return `${name !== undefined ? `event: ${name}${eol}` : ""}data: ${json}${eol}${eol}`;
  }
}

function partAt(ref: PartRef): unknown {
  const edited = ref.chunk.edits?.get(ref.candidate);
  if (edited?.has(ref.part)) return edited.get(ref.part);
  const candidate = (ref.chunk.data.candidates as unknown[])[ref.candidate] as Record<string, unknown>;
  return ((candidate.content as Record<string, unknown>).parts as unknown[])[ref.part];
}

function edit(ref: PartRef, value: unknown): void {
  const edits = (ref.chunk.edits ??= new Map());
  let parts = edits.get(ref.candidate);
  if (!parts) edits.set(ref.candidate, (parts = new Map()));
  parts.set(ref.part, value);
}

/** The line ending an SSE event ends with (a rewritten event is written with it). */
function lineEnding(raw: string): string {
  if (raw.endsWith("\r\n")) return "\r\n";
  return raw.endsWith("\r") ? "\r" : "\n";
}

/** The position of the first byte that is not white space or a byte-order mark, or -1. */
function firstSignificant(bytes: Uint8Array): number {
  for (let i = 0; i < bytes.length; i++) {
    const byte = bytes[i] as number;
    if (byte === 0x20 || byte === 0x09 || byte === 0x0a || byte === 0x0d || byte === 0xef || byte === 0xbb || byte === 0xbf) continue;
    return i;
  }
  return -1;
}

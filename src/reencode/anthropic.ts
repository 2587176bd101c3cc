import type { DecoderOptions, ProviderEvent, ToolCall } from "../types.js";
import { decodedAsSent, extraFields, isPlainObject } from "./common.js";
import { holdWire, SseEventSplitter, sseComment, sseText, wireText, type RawSseEvent, type WireEvent } from "./sse-events.js";
import type { HeldBlock } from "./hold.js";
import { BlockNumbers, writeHeld } from "./block-numbers.js";
import { SseReencoder } from "./sse-reencoder.js";

/**
 * Anthropic Messages: decoded, then re-emitted as Messages events.
 *
 * - Every event passes as it arrives, byte for byte, except the events of client `tool_use`
 *   blocks: those are held from `content_block_start` to `content_block_stop` (one call's worth),
 *   then released as they came when the call was sent well (a strict parse of its deltas, its own
 *   id), or replaced by one well-formed block (`input: {}`, one `input_json_delta` holding the
 *   decoded arguments, `content_block_stop`) when toolwire had to fix it: Kimi's start input plus
 *   deltas, cumulative or duplicated deltas, a duplicate or missing id.
 * - A call cut by `max_tokens` (no `content_block_stop` before `message_delta`), cut by an error
 *   or by the end of the stream, or whose arguments are not a JSON object is withheld: the client
 *   never sees it. The stop reason already says `max_tokens` for a cut call; when an invalid call
 *   was the only call and the stop reason says `tool_use`, it says `end_turn` instead, so that no
 *   client waits for a call that is not there.
 * - Blocks after a withheld call move down by one (`index` rewritten), so the client's content
 *   list has no hole.
 * - Protocol repairs: a stream without `message_start` gets one (Anthropic-compatible servers and
 *   translators that leave it out make the SDK throw), a flat `message_delta` (`stop_reason` at the
 *   top) gets its `delta` object, and a non-JSON data line becomes an SSE comment.
 * - Thinking blocks, signatures, server tool blocks and everything else pass untouched.
 */
export function createAnthropicReencoder(options: DecoderOptions = {}): SseReencoder {
  return new AnthropicReencoder(options);
}

interface HeldCall extends HeldBlock<WireEvent> {
  /** The tap's log length when the block started: calls ended before belong to earlier blocks. */
  since: number;
  /** `content_block_start` had no index: the decoder gave it one, and so must the client's copy. */
  indexAdded: boolean;
}

class AnthropicReencoder extends SseReencoder {
  private started = false;
  private readonly numbers = new BlockNumbers();
  private readonly held = new Map<number, HeldCall>();
  private runnable = 0;
  private invalidWithheld = 0;
  /** The highest block index the decoder knows in this message (it numbers a block sent without one after it). */
  private lastBlock = -1;

  constructor(options: DecoderOptions) {
    super("anthropic", options);
  }

  protected endHeld(out: WireEvent[]): void {
    // A call whose block never closed but whose input the decoder keeps whole (a closed object,
    // `call_closed_at_stream_end`) is sent as one well-formed block, as the decoder's turn has it.
    for (const [index, held] of [...this.held]) {
      const calls = this.tap.endedSince(held.since, index);
      if (!calls.some((call) => call.arguments !== null)) continue;
      this.held.delete(index);
      this.release(index, held, calls, out, false);
    }
    this.dropHeld("The stream ended before the call's content_block_stop");
    this.flushDeferredDelta(out);
  }

  /**
   * The message_delta that came while calls were still held: their content_block_stop may follow
   * it (servers do send it late), so it goes out once they are decided, or when the message ends
   * (message_stop, an error, a restart, the end of the body).
   */
  private deferredDelta: { raw: RawSseEvent; data: Record<string, unknown>; name: string | undefined } | null = null;

  private flushDeferredDelta(out: WireEvent[]): void {
    const deferred = this.deferredDelta;
    if (deferred === null) return;
    this.deferredDelta = null;
    this.sendDelta(deferred.raw, deferred.data, deferred.name, out);
  }

  protected handle(raw: RawSseEvent, event: ProviderEvent, ended: readonly ToolCall[], out: WireEvent[]): void {
    const data = event.data;
    if (!isPlainObject(data)) {
      if (typeof data === "string") {
        out.push(sseComment(data));
        this.tap.report({ action: "normalized", code: "non_json_data", message: "A data line that is not JSON (a keep-alive) was sent as an SSE comment, which clients skip." });
      } else out.push(raw.wire);
      return;
    }
    const type = typeof data.type === "string" ? data.type : (event.event ?? "");
    // The decoder leaves a call open past message_delta until its stop or the message's end, so
    // the deferred delta waits for those; other events (pings, unknown ones, other blocks) pass it.
    if (this.deferredDelta !== null && (type === "message_stop" || type === "message_start" || type === "error")) {
      this.flushDeferredDelta(out);
    }
    if (type === "ping") {
      out.push(raw.wire);
      return;
    }
    if (type === "message_start") {
      if (this.started) {
        // A retry spliced into the stream: the decoder starts over, and so does the numbering.
        this.dropHeld("A second message_start restarted the message");
        this.numbers.clear();
        this.runnable = 0;
        this.invalidWithheld = 0;
        this.lastBlock = -1;
      }
      this.started = true;
      const message = isPlainObject(data.message) ? data.message : null;
      if (message && Array.isArray(message.content)) this.lastBlock = Math.max(this.lastBlock, message.content.length - 1);
      out.push(raw.wire);
      return;
    }
    if (type === "error") {
      this.dropHeld("The provider sent an error before the call's content_block_stop");
      out.push(raw.wire);
      return;
    }
    if (!this.started) {
      this.started = true;
      out.push(sseText(syntheticMessageStart(), "message_start"));
      this.tap.report({ action: "normalized", code: "event_before_message_start", message: "The stream had no message_start; one was added before its first event." });
    }
    const index = typeof data.index === "number" ? data.index : null;
    switch (type) {
      case "content_block_start": {
        const block = isPlainObject(data.content_block) ? data.content_block : null;
        // Without an index the decoder numbers the block after the last it knows: the client gets
        // that number too, else its own numbering would drift from the decoder's.
        const blockIndex = index ?? this.lastBlock + 1;
        if (block) this.lastBlock = Math.max(this.lastBlock, blockIndex);
        // Any block started at the index of a held call ends that call as cut in the decoder,
        // whatever the new block is (a tool_use, text, or one whose type did not survive).
        if (block && this.held.has(blockIndex)) this.dropHeld("A new block started at the same index", blockIndex);
        if (block?.type === "tool_use") {
          this.held.set(blockIndex, { events: [raw.wire], start: block, plainDeltas: true, since: this.logPosition, indexAdded: index === null });
          return;
        }
        if (index === null && block) {
          out.push(sseText({ ...data, index: this.numbers.open(blockIndex) }, raw.event?.event ?? "content_block_start"));
          this.tap.report({ action: "normalized", code: "block_index_missing", message: `content_block_start had no index; it was given index ${blockIndex}, as toolwire's decoder numbers it.` });
          return;
        }
        if (index !== null) this.numbers.open(index);
        out.push(this.mapped(raw, data, index));
        return;
      }
      case "content_block_delta": {
        const held = index === null ? undefined : this.held.get(index);
        if (held) {
          holdWire(held.events, raw.wire);
          const delta = data.delta;
          if (!isPlainObject(delta) || delta.type !== "input_json_delta" || typeof delta.partial_json !== "string") held.plainDeltas = false;
          return;
        }
        out.push(this.mapped(raw, data, index));
        return;
      }
      case "content_block_stop": {
        const held = index === null ? undefined : this.held.get(index);
        if (held && index !== null) {
          this.held.delete(index);
          holdWire(held.events, raw.wire);
          const calls = ended.filter((candidate) => candidate.providerIndex === index);
          if (calls.length > 0) this.release(index, held, calls, out);
          else this.awaitVerdict(index, (verdict, later) => this.release(index, held, verdict, later));
          if (this.held.size === 0) this.flushDeferredDelta(out);
          return;
        }
        out.push(this.mapped(raw, data, index));
        return;
      }
      case "message_delta": {
        const delta = isPlainObject(data.delta) ? data.delta : null;
        const stopReason = typeof delta?.stop_reason === "string" ? delta.stop_reason : typeof data.stop_reason === "string" ? data.stop_reason : null;
        // A message_delta sent again (a relay's retry) replaces the one waiting, which goes out
        // first without cutting the calls still held: the decoder does not cut them either.
        const waiting = this.deferredDelta;
        if (waiting !== null) {
          this.deferredDelta = null;
          this.sendDelta(waiting.raw, waiting.data, waiting.name, out, false);
        }
        if (this.held.size > 0 && stopReason !== "max_tokens") {
          this.deferredDelta = { raw, data, name: event.event };
          return;
        }
        this.sendDelta(raw, data, event.event, out);
        return;
      }
      default:
        out.push(index !== null ? this.mapped(raw, data, index) : raw.wire);
    }
  }

  /** message_delta: calls still held are cut; the stop reason is made to agree with what was delivered. */
  private sendDelta(raw: RawSseEvent, data: Record<string, unknown>, name: string | undefined, out: WireEvent[], cut = true): void {
    const delta = isPlainObject(data.delta) ? data.delta : null;
    const stopReason = typeof delta?.stop_reason === "string" ? delta.stop_reason : typeof data.stop_reason === "string" ? data.stop_reason : null;
    if (cut) this.dropHeld(stopReason === "max_tokens" ? "The model hit max_tokens inside the call" : "The message ended before the call's content_block_stop", undefined, stopReason === "max_tokens" ? "max_tokens" : undefined);
    let rewritten: Record<string, unknown> | null = null;
    if (!delta) {
      const { stop_reason: _reason, stop_sequence: sequence, type: _type, usage, ...rest } = data;
      rewritten = { type: "message_delta", ...rest, delta: { stop_reason: stopReason, stop_sequence: typeof sequence === "string" ? sequence : null }, ...(usage !== undefined ? { usage } : {}) };
      this.tap.report({ action: "normalized", code: "message_delta_flat", message: "message_delta carried stop_reason at the top; it was moved into `delta`, where clients read it." });
    }
    if (stopReason === "tool_use" && this.runnable === 0 && this.invalidWithheld > 0) {
      const base = rewritten ?? data;
      rewritten = { ...base, delta: { ...(isPlainObject(base.delta) ? base.delta : {}), stop_reason: "end_turn" } };
      this.tap.report({ action: "normalized", code: "stop_reason_without_calls", message: "Every tool call of the turn was withheld, so stop_reason tool_use became end_turn." });
    }
    out.push(rewritten ? sseText(rewritten, name ?? "message_delta") : raw.wire);
  }

  /** The event as sent, or with its block index moved down past withheld blocks. */
  private mapped(raw: RawSseEvent, data: Record<string, unknown>, index: number | null): WireEvent {
    if (index === null) return raw.wire;
    const out = this.numbers.of(index);
    if (out === undefined || out === index) return raw.wire;
    return sseText({ ...data, index: out }, raw.event?.event);
  }

  /**
   * The calls the decoder made of one tool_use block (one, or several when it split glued objects)
   * go out as they came when they were sent well, else as well-formed blocks; the ones that did not
   * decode are withheld. `closed`: the block's content_block_stop came (else the body ended first,
   * and the block is never sent as it came).
   */
  private release(index: number, held: HeldCall, calls: readonly ToolCall[], out: WireEvent[], closed = true): void {
    if (calls.length === 0) {
      // Not a call the decoder kept (over a limit): pass it on as it came.
      writeHeld(held.events, index, this.numbers.open(index), reindexed, out);
      return;
    }
    const startInput = held.start.input;
    // `input: null` means "none" to toolwire, but clients that validate the block (the AI SDK) drop it.
    const emptyStart = startInput === undefined || (isPlainObject(startInput) && Object.keys(startInput).length === 0);
    let first = true;
    for (const call of calls) {
      const isFirst = first;
      first = false;
      if (call.arguments === null) {
        if (call.complete) this.invalidWithheld++;
        this.tap.withheld(call);
        continue;
      }
      this.runnable++;
      // The block's own index goes to its first delivered call; calls split from it get new ones.
      const outIndex = this.numbers.forHeld(index);
      const asSent = isFirst && calls.length === 1 && closed && !held.indexAdded && decodedAsSent(call) && held.plainDeltas && emptyStart && held.start.id === call.id && (call.source === "delta" || call.source === "empty");
      if (asSent) {
        writeHeld(held.events, index, outIndex, reindexed, out);
        continue;
      }
      const extra = extraFields(call, ["blockType"]);
      out.push(sseText({ type: "content_block_start", index: outIndex, content_block: { type: "tool_use", id: call.id, name: call.name, input: {}, ...extra } }, "content_block_start"));
      out.push(sseText({ type: "content_block_delta", index: outIndex, delta: { type: "input_json_delta", partial_json: JSON.stringify(call.arguments) } }, "content_block_delta"));
      out.push(sseText({ type: "content_block_stop", index: outIndex }, "content_block_stop"));
      this.tap.rewritten(call, [
        ...(emptyStart || !isFirst ? [] : [startInput === null ? "start_input_null" : "start_input"]),
        ...(closed ? [] : ["call_closed_at_stream_end"]),
        ...(held.indexAdded && isFirst ? ["block_index_missing"] : []),
      ]);
    }
  }

  /** Calls still open when the message ended, errored or restarted: cut, so never delivered. */
  private dropHeld(why: string, only?: number, cause?: string): void {
    for (const [index, held] of this.held) {
      if (only !== undefined && index !== only) continue;
      this.held.delete(index);
      this.tap.cut(why, `block ${index}`, held.start.id, held.start.name, cause);
    }
  }
}

/** Held events with their block index moved (read again from their text: rare, and only then). */
function reindexed(held: WireEvent, index: number): string {
  const splitter = new SseEventSplitter();
  const events = [...splitter.pushText(wireText(held)), ...splitter.flush()];
  return events.map(({ raw, event }) => (event && isPlainObject(event.data) ? sseText({ ...event.data, index }, event.event) : raw)).join("");
}

function syntheticMessageStart(): Record<string, unknown> {
  return {
    type: "message_start",
    message: { id: "msg_toolwire_added", type: "message", role: "assistant", model: "unknown", content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 0, output_tokens: 0 } },
  };
}

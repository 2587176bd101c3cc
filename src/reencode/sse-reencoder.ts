import type { DecoderOptions, ProviderEvent, ProviderName, ToolCall } from "../types.js";
import { TappedReencoder, type CallMatcher, type DecoderTap } from "./common.js";
import { HoldQueue } from "./hold.js";
import { encodeOut, SseEventSplitter, type RawSseEvent, type WireEvent } from "./sse-events.js";

const NO_CALLS: ToolCall[] = [];

/** An event of the body, decoded: the calls it ended, and the tap's log length right after it. */
interface Decoded {
  raw: RawSseEvent;
  ended: ToolCall[];
  logAt: number;
}

/**
 * What every SSE re-encoder shares: the body is split into events, each is decoded on a tap and
 * handed (through the hold queue) to the protocol's `handle`, which writes what can be forwarded
 * now; at the end the protocol decides what it still holds. The protocols differ only in `handle`
 * and `endHeld`.
 *
 * A call closed with arguments that do not parse strictly is decided by the decoder only with the
 * stop reason (invalid, repaired, or cut by max_tokens): `awaitVerdict` holds it, and the events
 * after it are decoded at once but handled in order once the verdict is in, since whether the call
 * is delivered changes how they are numbered.
 */
export abstract class SseReencoder extends TappedReencoder {
  private readonly splitter = new SseEventSplitter();
  private ended = false;
  private readonly queue = new HoldQueue<Decoded, WireEvent>((item, out) => this.handleDecoded(item, out));
  /** While an event is handled: the tap's log length right after it was decoded. */
  private handledLogAt: number | null = null;

  protected constructor(provider: ProviderName, options: DecoderOptions) {
    super(provider, options);
  }

  /**
   * Whether events wait behind a call whose verdict comes only with the end of the body: bytes a
   * caller writes after this re-encoder's output must wait for `flush` too, or they would pass them.
   */
  get waitsForVerdict(): boolean {
    return this.queue.holding;
  }

  push(chunk: Uint8Array): Uint8Array[] {
    const out: WireEvent[] = [];
    for (const event of this.splitter.push(chunk)) this.next(event, out);
    return encodeOut(out);
  }

  flush(): Uint8Array[] {
    if (this.ended) return [];
    this.ended = true;
    const out: WireEvent[] = [];
    // What the body ends with but dispatches nothing (a line cut before its blank line) goes out
    // last: forwarded now, it would run into the front of events still held.
    const trailing: WireEvent[] = [];
    for (const event of this.splitter.flush()) {
      if (event.event === null) trailing.push(event.wire);
      else this.next(terminated(event, this.tap), out);
    }
    this.tap.end();
    this.queue.settle(out, true);
    if (!this.queue.heldToEnd) this.endHeld(out);
    for (const wire of trailing) out.push(wire);
    return encodeOut(out);
  }

  /**
   * One event of the body, already decoded (`ended`: the calls it ended): write to `out` what is
   * forwarded now (`raw.wire` for the event as it came). Text that dispatches no event (comments,
   * keep-alives) is forwarded as it came without coming here.
   */
  protected abstract handle(raw: RawSseEvent, event: ProviderEvent, ended: readonly ToolCall[], out: WireEvent[]): void;

  /** The body ended: decide every call still held (write what is released to `out`). Not called after `holdToEnd`. */
  protected abstract endHeld(out: WireEvent[]): void;

  /**
   * Called from `handle` for the stream's last event while calls are undecided that the decoder
   * decides only with the end of the body: `release` ends the turn then (in place of `endHeld`)
   * and writes the event; the events after it follow as they came.
   */
  protected holdToEnd(release: (out: WireEvent[]) => void): void {
    this.queue.holdToEnd(release, (item, out) => out.push(item.raw.wire));
  }

  /**
   * Called from `handle` for a held call that closed without the decoder ending it: `resume` gets
   * the calls once the decoder ends them (none if it never does: a call it did not keep).
   */
  protected awaitVerdict(of: CallMatcher, resume: (calls: ToolCall[], out: WireEvent[]) => void): void {
    const since = this.logPosition;
    this.queue.hold({ decided: () => this.tap.endedSince(since, of).length > 0, release: (out) => resume(this.tap.endedSince(since, of), out) });
  }

  /**
   * The tap's log length right after the event being handled was decoded: calls that end from here
   * on are the ones it (or what follows it) ended. An event handled behind a hold was decoded
   * earlier than now, so the log's current length would skip calls that ended since.
   */
  protected get logPosition(): number {
    return this.handledLogAt ?? this.tap.log.length;
  }

  /** Every event is decoded here, first, and handled now or, behind a waiting call, later. */
  private next(raw: RawSseEvent, out: WireEvent[]): void {
    const ended = raw.event === null ? NO_CALLS : this.tap.push(raw.event);
    if (raw.event !== null && this.tap.refused) {
      this.tap.refusedEvent();
      return;
    }
    this.queue.push({ raw, ended, logAt: this.tap.log.length }, out);
  }

  private handleDecoded(item: Decoded, out: WireEvent[]): void {
    if (item.raw.event === null) {
      out.push(item.raw.wire);
      return;
    }
    this.handledLogAt = item.logAt;
    try {
      this.handle(item.raw, item.raw.event, item.ended, out);
    } finally {
      this.handledLogAt = null;
    }
  }
}

/**
 * An event the body ended inside, after its data lines: the decoder reads it as an event, so the
 * client must too, and whatever the re-encoder writes after it (calls it still held) must not run
 * into it. It gets the blank line it lacked (its text, bad bytes read as U+FFFD as the decoder read
 * them), which is reported.
 */
function terminated(event: RawSseEvent, tap: DecoderTap): RawSseEvent {
  const raw = event.raw;
  const last = lineEndBefore(raw, raw.length);
  if (last > 0 && lineEndBefore(raw, raw.length - last) > 0) return event;
  // After a lone CR, an LF would join it into one CRLF line end: the blank line is a second CR.
  const end = last === 0 ? "\n\n" : last === 1 && raw.charCodeAt(raw.length - 1) === 0x0d ? "\r" : "\n";
  tap.report({ action: "normalized", code: "event_unterminated", message: "The body ended inside an event, after its data; the event was given the blank line that ends it, so that it reads as toolwire read it." });
  return { raw: raw + end, wire: raw + end, event: event.event };
}

/** The length of the line end (CRLF, LF or CR) that ends at `end` in `text`, 0 when none does. */
function lineEndBefore(text: string, end: number): number {
  if (end >= 2 && text.charCodeAt(end - 2) === 0x0d && text.charCodeAt(end - 1) === 0x0a) return 2;
  const c = text.charCodeAt(end - 1);
  return c === 0x0a || c === 0x0d ? 1 : 0;
}

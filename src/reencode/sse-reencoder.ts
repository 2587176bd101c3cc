import { createDecoder } from "../providers/registry.js";
import type { DecodedTurn, DecoderOptions, ProviderName, ToolCall } from "../types.js";
import { DecoderTap, type CallMatcher } from "./common.js";
import { encodeOut, SseEventSplitter, type RawSseEvent, type WireEvent } from "./sse-events.js";
import type { Reencoder, RepairReport } from "./types.js";

/** A closed call whose verdict the decoder gives with the stop reason, and what to do then. */
interface Waiting {
  /** The held block's or item's calls. */
  of: CallMatcher;
  /** Position in the tap's log from which the call's end is looked for. */
  since: number;
  /** Gets the calls the decoder ended for the block (none if it never did: a call it did not keep). */
  resume: (calls: ToolCall[], out: WireEvent[]) => void;
}

const NO_CALLS: ToolCall[] = [];

/**
 * What every SSE re-encoder shares: the body is split into events, each is decoded on a tap and
 * handed to the protocol's `handle`, which writes what can be forwarded now; at the end the
 * protocol decides what it still holds. The protocols differ only in `handle` and `endHeld`.
 *
 * A call closed with arguments that do not parse strictly is decided by the decoder only with the
 * stop reason (invalid, repaired, or cut by max_tokens): `awaitVerdict` holds it, and the events
 * after it are decoded at once but handled in order once the verdict is in, since whether the call
 * is delivered changes how they are numbered.
 */
export abstract class SseReencoder implements Reencoder {
  private readonly splitter = new SseEventSplitter();
  protected readonly tap: DecoderTap;
  private ended = false;
  private waiting: Waiting | null = null;
  private backlog: Array<{ raw: RawSseEvent; ended: ToolCall[]; logAt: number }> = [];
  /** While an event is handled: the tap's log length right after it was decoded. */
  private handledLogAt: number | null = null;

  protected constructor(
    readonly provider: ProviderName,
    options: DecoderOptions,
  ) {
    this.tap = new DecoderTap(provider, createDecoder(provider, options));
  }

  get turn(): DecodedTurn | null {
    return this.tap.turn;
  }

  get repairs(): readonly RepairReport[] {
    return this.tap.repairs;
  }

  /**
   * Whether events wait behind a call whose verdict comes only with the end of the body: bytes a
   * caller writes after this re-encoder's output must wait for `end` too, or they would pass them.
   */
  get waitsForVerdict(): boolean {
    return this.waiting !== null;
  }

  push(chunk: Uint8Array): Uint8Array[] {
    const out: WireEvent[] = [];
    for (const event of this.splitter.push(chunk)) this.next(event, out);
    return encodeOut(out);
  }

  end(): Uint8Array[] {
    if (this.ended) return [];
    this.ended = true;
    const out: WireEvent[] = [];
    // What the body ends with but dispatches nothing (a line cut before its blank line) goes out
    // last: forwarded now, it would run into the front of events still held.
    const trailing: WireEvent[] = [];
    for (const event of this.splitter.finish()) {
      if (event.event === null) trailing.push(event.wire);
      else this.next(terminated(event, this.tap), out);
    }
    this.tap.end();
    this.settle(out, true);
    this.endHeld(out);
    for (const wire of trailing) out.push(wire);
    return encodeOut(out);
  }

  /**
   * One event of the body, already decoded (`ended`: the calls it ended): write to `out` what is
   * forwarded now (`raw.wire` for the event as it came).
   */
  protected abstract handle(raw: RawSseEvent, ended: readonly ToolCall[], out: WireEvent[]): void;

  /** The body ended: decide every call still held (write what is released to `out`). */
  protected abstract endHeld(out: WireEvent[]): void;

  /**
   * Called from `handle` for a held call that closed without the decoder ending it: `resume` gets
   * the calls once the decoder ends them (none if it never does: a call it did not keep).
   */
  protected awaitVerdict(of: CallMatcher, resume: Waiting["resume"]): void {
    this.waiting = { of, since: this.logPosition, resume };
  }

  /**
   * The tap's log length right after the event being handled was decoded: calls that end from here
   * on are the ones it (or what follows it) ended. An event handled from the backlog was decoded
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
    if (this.waiting !== null) {
      this.backlog.push({ raw, ended, logAt: this.tap.log.length });
      this.settle(out, false);
      return;
    }
    this.handleDecoded(raw, ended, this.tap.log.length, out);
  }

  private handleDecoded(raw: RawSseEvent, ended: ToolCall[], logAt: number, out: WireEvent[]): void {
    this.handledLogAt = logAt;
    try {
      this.handle(raw, ended, out);
    } finally {
      this.handledLogAt = null;
    }
  }

  /** Resumes the waiting call once its verdict is in, then handles the events behind it. */
  private settle(out: WireEvent[], atEnd: boolean): void {
    while (this.waiting !== null) {
      const waiting = this.waiting;
      const calls = this.tap.endedSince(waiting.since, waiting.of);
      if (calls.length === 0 && !atEnd) return;
      this.waiting = null;
      waiting.resume(calls, out);
      const backlog = this.backlog;
      this.backlog = [];
      for (const item of backlog) {
        // Another call waits now: the rest is its backlog (decoded already).
        if (this.waiting !== null) this.backlog.push(item);
        else this.handleDecoded(item.raw, item.ended, item.logAt, out);
      }
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

import { createDecoder } from "../providers/registry.js";
import type { DecodedTurn, DecoderOptions, ProviderEvent, ProviderName, ToolCall } from "../types.js";
import { DecoderTap, isPlainObject } from "./common.js";
import { encodeOut, SseEventSplitter, type WireEvent } from "./sse-events.js";
import { textCallDecoderOptions, TextParts, type TextPart } from "./text-call-parts.js";
import type { Reencoder, RepairReport } from "./types.js";

/** One event of the first stage's output, with the text parts the extractor released while reading it. */
export interface StagedEvent {
  wire: WireEvent;
  data: Record<string, unknown>;
  name: string | undefined;
  parts: TextPart[];
}

/** A part of released text or reasoning. */
export type TextOnly = Extract<TextPart, { kind: "text" | "reasoning" }>;

/** A text block or message item of the wire: the parts not written yet (those behind a call still undecided). */
export interface TextCarrier {
  queue: TextPart[];
}

/**
 * The second stage of a block-structured protocol's text-call re-encoding (Messages, Responses):
 * the protocol's own re-encoder (`inner`, without `textCalls`) repairs the wire's calls, and its
 * output is decoded again here with the extractor on. Each text block (a "carrier") collects what
 * the extractor released for it; the protocol writes it (`handle`, `drain`). Everything from the
 * first event that closes a carrier (`startsTail`) on waits for the end of the body, when the
 * extractor releases what it still holds and decides the calls still open; what it releases then
 * goes to the block it was read in.
 */
export abstract class TextCallStage<Carrier extends TextCarrier> implements Reencoder {
  protected readonly tap: DecoderTap;
  protected readonly parts: TextParts;
  protected readonly carriers = new Map<number, Carrier>();
  private readonly splitter = new SseEventSplitter();
  private ended = false;
  /** The last carrier seen: what the extractor releases at the end without a known block goes there. */
  private lastCarrier: number | null = null;
  private tail: StagedEvent[] | null = null;

  protected constructor(
    readonly provider: ProviderName,
    private readonly inner: Reencoder,
    options: DecoderOptions,
    reasoningGoesTo: string,
  ) {
    this.tap = new DecoderTap(provider, createDecoder(provider, textCallDecoderOptions(options)));
    this.parts = new TextParts(this.tap, reasoningGoesTo);
  }

  get turn(): DecodedTurn | null {
    return this.tap.turn;
  }

  get repairs(): readonly RepairReport[] {
    return [...this.inner.repairs, ...this.tap.repairs];
  }

  push(chunk: Uint8Array): Uint8Array[] {
    const out: WireEvent[] = [];
    for (const piece of this.inner.push(chunk)) this.read(this.splitter.push(piece), out);
    return encodeOut(out);
  }

  flush(): Uint8Array[] {
    if (this.ended) return [];
    this.ended = true;
    const out: WireEvent[] = [];
    for (const piece of this.inner.flush()) this.read(this.splitter.push(piece), out);
    this.read(this.splitter.flush(), out);
    const atEnd = this.parts.collect(() => this.tap.end());
    for (const part of atEnd) {
      const wire = this.parts.blockOf(part) ?? this.lastCarrier;
      if (wire !== null) this.carriers.get(wire)?.queue.push(part);
    }
    const tail = this.tail ?? [];
    this.tail = null;
    for (const staged of tail) this.dispatch(staged, out);
    for (const [wire, carrier] of this.carriers) this.drain(wire, carrier, out, null);
    return encodeOut(out);
  }

  /** `end` is `flush`'s former name. */
  end(): Uint8Array[] {
    return this.flush();
  }

  /** The wire index (block or output index) an event is about, or null. */
  protected abstract indexOf(data: Record<string, unknown>): number | null;

  /** Whether the event is a text delta of carrier `index` (its parts are collected for it). */
  protected abstract isText(type: string, data: Record<string, unknown>, index: number): boolean;

  /** Takes an event that opens (or belongs to the opening of) a carrier; false when it is not one. */
  protected abstract opens(staged: StagedEvent, type: string, index: number | null): boolean;

  /** Whether the event closes a carrier or ends the response: it and everything after it wait for the end of the body. */
  protected abstract startsTail(type: string, index: number | null): boolean;

  /** Writes one event (a carrier's parts, moved indexes, the stop reason or final output). */
  protected abstract handle(staged: StagedEvent, type: string, index: number | null, out: WireEvent[]): void;

  /** Writes a carrier's parts in order, up to a call still undecided; `same`: the event written as it came when nothing moved. */
  protected abstract drain(wire: number, carrier: Carrier, out: WireEvent[], same: StagedEvent | null): void;

  /** Writes a call read from the carrier's text: a runnable one as the protocol's call, else withheld. */
  protected abstract writeCall(call: ToolCall, carrier: Carrier, out: WireEvent[]): void;

  /**
   * The carrier's next text or reasoning part, once the decided calls before it are written (`writeCall`);
   * null when none is left or a call before it is still undecided.
   */
  protected nextText(carrier: Carrier, out: WireEvent[]): TextOnly | null {
    for (;;) {
      const part = carrier.queue[0];
      if (part === undefined) return null;
      if (part.kind === "call") {
        const call = this.tap.ended.get(part.index);
        if (!call) return null;
        carrier.queue.shift();
        if (call.textSyntax !== undefined) this.writeCall(call, carrier, out);
        continue;
      }
      carrier.queue.shift();
      if (part.text !== "") return part;
    }
  }

  /** Registers a carrier (called from `opens`). */
  protected addCarrier(index: number, carrier: Carrier): void {
    this.carriers.set(index, carrier);
    this.lastCarrier = index;
  }

  private read(events: ReturnType<SseEventSplitter["push"]>, out: WireEvent[]): void {
    for (const raw of events) {
      const event = raw.event;
      if (event === null || !isPlainObject(event.data)) {
        if (event !== null) this.tap.push(event);
        const staged: StagedEvent = { wire: raw.wire, data: {}, name: undefined, parts: [] };
        if (this.tail !== null) this.tail.push(staged);
        else out.push(raw.wire);
        continue;
      }
      const data = event.data;
      const type = typeof data.type === "string" ? data.type : (event.event ?? "");
      const index = this.indexOf(data);
      const text = index !== null && this.carriers.has(index) && this.isText(type, data, index);
      const parts = text ? this.parts.collect(() => this.tap.push(event as ProviderEvent), index) : pushed(this.tap, event);
      const staged: StagedEvent = { wire: raw.wire, data, name: event.event, parts };
      if (this.opens(staged, type, index)) continue;
      if (this.tail === null && this.startsTail(type, index)) this.tail = [];
      if (this.tail !== null) this.tail.push(staged);
      else this.dispatch(staged, out);
    }
  }

  private dispatch(staged: StagedEvent, out: WireEvent[]): void {
    // Text that dispatched no JSON event (a comment, a keep-alive) goes out as it came.
    if (staged.name === undefined && Object.keys(staged.data).length === 0) {
      out.push(staged.wire);
      return;
    }
    const type = typeof staged.data.type === "string" ? staged.data.type : (staged.name ?? "");
    this.handle(staged, type, this.indexOf(staged.data), out);
  }
}

function pushed(tap: DecoderTap, event: ProviderEvent): TextPart[] {
  tap.push(event);
  return [];
}

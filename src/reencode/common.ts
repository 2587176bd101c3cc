import { isPlainObject } from "../json/shape.js";
import type { StreamingDecoder } from "../providers/codec.js";
import { createDecoder } from "../providers/registry.js";
import type { CodecEvent, DecodedTurn, DecoderOptions, ProviderEvent, ProviderName, ToolCall } from "../types.js";
import type { Reencoder, RepairReport } from "./types.js";

export { isPlainObject };

/** Which calls belong to a held block or item: its provider index, or a test (items known by id). */
export type CallMatcher = number | ((call: ToolCall) => boolean);

/**
 * What every re-encoder that decodes the body itself shares: the decoder on a tap, the turn and
 * the report it gives, and the lifecycle (`end` is `flush`'s old name).
 */
export abstract class TappedReencoder implements Reencoder {
  protected readonly tap: DecoderTap;

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

  abstract push(chunk: Uint8Array): Uint8Array[];

  abstract flush(): Uint8Array[];

  /** @deprecated Use `flush`. */
  end(): Uint8Array[] {
    return this.flush();
  }
}

/** Decoder bookkeeping every re-encoder shares: the calls as they end, the turn, the report. */
export class DecoderTap {
  readonly ended = new Map<number, ToolCall>();
  turn: DecodedTurn | null = null;
  readonly repairs: RepairReport[] = [];
  /** Every call ended so far, in the order the decoder ended them. */
  readonly log: ToolCall[] = [];
  /**
   * The decoder ignored the last event pushed (it nests deeper than any call may): a re-encoder
   * does not forward what toolwire could not check.
   */
  refused = false;
  /** Sees every event the decoder writes, pushed or at the end (the text-call hook: text-calls.ts). */
  observer: ((event: CodecEvent) => void) | null = null;
  /**
   * What the decoder wrote for recent events: appended to, and replaced once it holds a few.
   * Emptying it for every event (setting its length, a runtime call) took 1.4% of a re-encode; a
   * fresh array per event allocates 16% more. Not kept long: with hundreds of streams at once,
   * codec events kept for a stream's next pushes outlive two scavenges, are promoted, and fill the
   * old generation with garbage. Replaced past 8 events, it promotes a third less than past 16
   * (which also grew the array once more) for the same allocation (docs/proxy.md, Cost).
   */
  private sink: CodecEvent[] = [];
  private started = 0;

  constructor(
    readonly provider: ProviderName,
    private readonly decoder: StreamingDecoder,
  ) {}

  /** Pushes one event; returns the calls it ended. */
  push(event: ProviderEvent): ToolCall[] {
    if (this.sink.length > 8) this.sink = [];
    const sink = this.sink;
    const from = sink.length;
    this.decoder.pushInto(event, sink);
    this.refused = false;
    let calls: ToolCall[] | null = null;
    // A loop of its own: without an observer (no textCalls) the per-event loop below stays as it was.
    if (this.observer !== null) for (let i = from; i < sink.length; i++) this.observer(sink[i] as CodecEvent);
    for (let i = from; i < sink.length; i++) {
      const codecEvent = sink[i] as CodecEvent;
      if (codecEvent.type === "diagnostic") {
        if (codecEvent.diagnostic.code === "event_too_deep") this.refused = true;
      } else if (codecEvent.type === "tool_call_start" || codecEvent.type === "tool_call_end") {
        calls = this.collectOne(codecEvent, calls);
      }
    }
    return calls ?? NO_CALLS;
  }

  end(): ToolCall[] {
    const events = this.decoder.end();
    if (this.observer !== null) for (const event of events) this.observer(event);
    const calls = this.collect(events);
    for (const event of events) if (event.type === "finish") this.turn = event.turn;
    return calls;
  }

  private collect(events: readonly CodecEvent[]): ToolCall[] {
    let calls: ToolCall[] | null = null;
    for (const event of events) calls = this.collectOne(event, calls);
    return calls ?? NO_CALLS;
  }

  /** Counts a client call's start; logs its end, added to `calls`. */
  private collectOne(event: CodecEvent, calls: ToolCall[] | null): ToolCall[] | null {
    if (event.type === "tool_call_start" && event.kind !== "server") this.started++;
    if (event.type === "tool_call_end" && event.call.kind !== "server") {
      this.ended.set(event.call.index, event.call);
      this.log.push(event.call);
      (calls ??= []).push(event.call);
    }
    return calls;
  }

  /**
   * Calls opened and not ended yet: still streaming, or closed with arguments that do not parse
   * strictly, which the decoder decides only when the stream ends (with the stop reason).
   */
  get callsAwaitingEnd(): number {
    return this.started - this.log.length;
  }

  /**
   * The calls of one wire block or item (at `providerIndex`, or those `of` matches) that ended at or
   * after position `since` of the log: one, or several when the decoder split glued objects into
   * calls of their own.
   */
  endedSince(since: number, of: CallMatcher): ToolCall[] {
    const found: ToolCall[] = [];
    for (let i = since; i < this.log.length; i++) {
      const call = this.log[i] as ToolCall;
      if (typeof of === "number" ? call.providerIndex === of : of(call)) found.push(call);
    }
    return found;
  }

  report(report: Omit<RepairReport, "stage" | "provider">): void {
    this.repairs.push({ stage: "response", provider: this.provider, ...report });
  }

  /** Reports an event that was not forwarded because the decoder ignored it (see `refused`). */
  refusedEvent(): void {
    this.report({ action: "withheld", code: "event_too_deep", message: "An event nested deeper than any tool call may, so toolwire ignored it; it was not forwarded." });
  }

  /**
   * Reports a call cut before its end marker, so never delivered: `where` names its block or item,
   * `id` and `name` are as its start sent them, `cause` what cut it when the stop reason says.
   */
  cut(why: string, where: string, id: unknown, name: unknown, cause?: string): void {
    this.report({
      action: "withheld",
      code: "truncated",
      message: `${why}: the call ${typeof name === "string" ? name : ""} (${where}) was cut${cause ? ` (${cause})` : ""} and was not delivered.`,
      ...(typeof id === "string" ? { id } : {}),
      ...(typeof name === "string" ? { name } : {}),
    });
  }

  /** Reports a call that is not delivered: its error code, with the model-facing message. */
  withheld(call: ToolCall, why?: string): void {
    this.report({
      action: "withheld",
      code: call.error?.code ?? "truncated",
      message: why ?? `Call ${call.index} (${call.name}) was not delivered: ${call.error?.message ?? "it is not complete"}`,
      callIndex: call.index,
      id: call.id,
      name: call.name,
    });
  }

  /** Reports a call whose events were replaced, with every repair code it carries. */
  rewritten(call: ToolCall, extra: readonly string[] = []): void {
    const codes = new Set<string>([...call.repairs, ...extra]);
    if (call.providerId !== undefined) codes.add("minted_id");
    if (codes.size === 0) codes.add(`source_${call.source ?? "none"}`);
    for (const code of codes) {
      this.report({
        action: "rewritten",
        code,
        message: `Call ${call.index} (${call.name}) was re-sent as one well-formed call with the arguments toolwire decoded (${code}).`,
        callIndex: call.index,
        id: call.id,
        ...(call.providerId !== undefined ? { providerId: call.providerId } : {}),
        name: call.name,
      });
    }
  }
}

const NO_CALLS: ToolCall[] = [];

/** A call that can go to the client exactly as the provider sent it, as far as the decoder sees. */
export function decodedAsSent(call: ToolCall): boolean {
  return call.complete && call.arguments !== null && call.error === null && call.repairs.length === 0 && call.providerId === undefined;
}

/** Fields of a call the provider sent beside id/name/arguments, to keep on a rewritten call. */
export function extraFields(call: ToolCall, skip: readonly string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(call.providerFields ?? {})) {
    if (!skip.includes(key)) Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
  }
  return out;
}


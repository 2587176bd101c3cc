import { createDecoder } from "../providers/registry.js";
import type { DecodedTurn, DecoderOptions, ProviderEvent, ToolCall } from "../types.js";
import { createAnthropicReencoder } from "./anthropic.js";
import { DecoderTap, isPlainObject } from "./common.js";
import { encodeOut, SseEventSplitter, sseText, type WireEvent } from "./sse-events.js";
import { textCallDecoderOptions, TextParts, type TextPart } from "./text-call-parts.js";
import { TEXT_CALL_REPORT } from "./text-calls.js";
import type { Reencoder, RepairReport } from "./types.js";

/**
 * Anthropic Messages with `textCalls` (llama-server, vLLM and Ollama serve `/v1/messages`; without
 * a tool parser the model's calls stay in its text blocks). Two stages: the Messages re-encoder
 * repairs the wire's own `tool_use` blocks as always; its output is then decoded again with the
 * text-call extractor on, and each text block is rewritten from what the extractor released for
 * it, in order:
 *
 * - text stays in a text block (the block's own start and deltas, byte for byte, while they carry
 *   exactly what was released: plain text passes unchanged);
 * - a runnable call read from the text closes the text block and goes out as a `tool_use` block of
 *   its own (id `tw_text_<n>`, the decoded input in one `input_json_delta`); text after it opens a
 *   new text block; a call that cannot run (invalid_json, truncated) is withheld and reported;
 * - reasoning written into the text (`<think>…</think>`) goes out as a `thinking` block with an
 *   empty `signature`: the servers that speak this protocol without a tool parser do not sign
 *   their thinking either, and take such a block back in the history (Anthropic's own API would
 *   refuse it, but the route does not lead there);
 * - every block after an inserted one moves up (`index` rewritten), so the client's list has no
 *   hole and no collision;
 * - the text block's `content_block_stop`, and everything after it, waits for the end of the body:
 *   the extractor releases the text it holds (a possible marker start) and decides the calls
 *   still open only then. `message_delta`'s `stop_reason` then says `tool_use` when a runnable
 *   call was read from the text and it said `end_turn` or `stop_sequence`.
 *
 * Calls in thinking blocks the server sent are not read (`reasoning: true` is ignored here): a
 * signed or server-parsed thinking block passes as it came.
 */
export function createAnthropicTextCallReencoder(options: DecoderOptions): Reencoder {
  return new AnthropicTextCallReencoder(options);
}

/** One event of the inner re-encoder's output, with the text parts the extractor released while reading it. */
interface Pending {
  wire: WireEvent;
  data: Record<string, unknown>;
  name: string | undefined;
  parts: TextPart[];
}

/** One text block of the wire and what has been written for it. */
interface Carrier {
  /** The block's own `content_block_start`, written before its first text (or with its stop when it stays empty). */
  start: Pending;
  /** The block written now: its kind and output index; `original` when it is the wire block itself. */
  open: { kind: "text" | "thinking"; out: number; original: boolean } | null;
  /** Something was written for this block (text, reasoning, or a call). */
  used: boolean;
  /** Parts not written yet: those behind a call still undecided. */
  queue: TextPart[];
}

class AnthropicTextCallReencoder implements Reencoder {
  readonly provider = "anthropic" as const;
  private readonly inner: Reencoder;
  private readonly tap: DecoderTap;
  private readonly parts: TextParts;
  private readonly splitter = new SseEventSplitter();
  private ended = false;
  private nextOut = 0;
  private readonly outOf = new Map<number, number>();
  private readonly carriers = new Map<number, Carrier>();
  /** The last text block seen: text the extractor releases at the end of the body without a known block goes there. */
  private lastCarrier: number | null = null;
  /** Events after the first text block's stop (or the message_delta): written once the body ends. */
  private tail: Pending[] | null = null;
  private runnable = 0;

  constructor(options: DecoderOptions) {
    const { textCalls: _textCalls, ...plain } = options;
    this.inner = createAnthropicReencoder(plain);
    this.tap = new DecoderTap("anthropic", createDecoder("anthropic", textCallDecoderOptions(options)));
    this.parts = new TextParts(this.tap, "thinking block");
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
    // Text and reasoning released at the end belong to the block the extractor read them in.
    for (const part of atEnd) {
      const wire = this.parts.blockOf(part) ?? this.lastCarrier;
      const carrier = wire === null ? undefined : this.carriers.get(wire);
      if (carrier) carrier.queue.push(part);
    }
    const tail = this.tail ?? [];
    this.tail = null;
    for (const pending of tail) this.handle(pending, out);
    for (const [wire, carrier] of this.carriers) this.drain(wire, carrier, out, null);
    return encodeOut(out);
  }

  /** `end` is `flush`'s former name. */
  end(): Uint8Array[] {
    return this.flush();
  }

  private read(events: ReturnType<SseEventSplitter["push"]>, out: WireEvent[]): void {
    for (const raw of events) {
      const event = raw.event;
      if (event === null || !isPlainObject(event.data)) {
        if (event !== null) this.tap.push(event);
        if (this.tail !== null) this.tail.push({ wire: raw.wire, data: {}, name: undefined, parts: [] });
        else out.push(raw.wire);
        continue;
      }
      const data = event.data;
      const type = typeof data.type === "string" ? data.type : (event.event ?? "");
      const index = typeof data.index === "number" ? data.index : null;
      const delta = isPlainObject(data.delta) ? data.delta : null;
      const textEvent = type === "content_block_delta" && index !== null && this.carriers.has(index) && delta?.type === "text_delta";
      const parts = textEvent ? this.parts.collect(() => this.tap.push(event as ProviderEvent), index) : this.pushPlain(event);
      const pending: Pending = { wire: raw.wire, data, name: event.event, parts };
      if (type === "content_block_start" && index !== null && isPlainObject(data.content_block) && data.content_block.type === "text" && !data.content_block.text) {
        this.carriers.set(index, { start: pending, open: null, used: false, queue: [] });
        this.lastCarrier = index;
        continue;
      }
      if (this.tail === null && (type === "message_delta" || type === "message_stop" || (type === "content_block_stop" && index !== null && this.carriers.has(index)))) this.tail = [];
      if (this.tail !== null) this.tail.push(pending);
      else this.handle(pending, out);
    }
  }

  private pushPlain(event: ProviderEvent): TextPart[] {
    this.tap.push(event);
    return [];
  }

  private handle(pending: Pending, out: WireEvent[]): void {
    const { data } = pending;
    if (Object.keys(data).length === 0 && pending.parts.length === 0 && pending.name === undefined) {
      out.push(pending.wire);
      return;
    }
    const type = typeof data.type === "string" ? data.type : (pending.name ?? "");
    const index = typeof data.index === "number" ? data.index : null;
    const carrier = index === null ? undefined : this.carriers.get(index);
    if (type === "message_start") {
      this.nextOut = 0;
      this.outOf.clear();
      this.carriers.clear();
      this.runnable = 0;
      out.push(pending.wire);
      return;
    }
    if (carrier && index !== null) {
      if (type === "content_block_delta") {
        const delta = isPlainObject(data.delta) ? data.delta : null;
        if (delta?.type === "text_delta" && delta.text === "" && pending.parts.length === 0 && carrier.queue.length === 0) {
          // An empty delta (servers send one first) passes as it came, in the block's own text block.
          if (!carrier.used) this.openBlock(index, carrier, "text", out);
          if (carrier.open?.original === true) out.push(this.moved(pending, carrier.open.out, index));
        } else if (delta?.type === "text_delta") {
          const same = pending.parts.length === 1 && pending.parts[0]?.kind === "text" && pending.parts[0].text === delta.text && carrier.queue.length === 0;
          carrier.queue.push(...pending.parts);
          this.drain(index, carrier, out, same ? pending : null);
        } else if (carrier.open !== null) out.push(this.moved(pending, carrier.open.out, index));
        return;
      }
      if (type === "content_block_stop") {
        this.drain(index, carrier, out, null);
        if (carrier.open !== null) {
          out.push(this.moved(pending, carrier.open.out, index));
          carrier.open = null;
        } else if (!carrier.used) {
          const at = this.nextOut++;
          out.push(this.moved(carrier.start, at, index), this.moved(pending, at, index));
        }
        this.carriers.delete(index);
        return;
      }
    }
    if (type === "content_block_start" && index !== null) {
      const at = this.nextOut++;
      this.outOf.set(index, at);
      out.push(this.moved(pending, at, index));
      return;
    }
    if (type === "message_delta") {
      // Blocks cut before their stop: what the extractor released for them goes out before the stop reason.
      for (const [wire, open] of this.carriers) this.drain(wire, open, out, null);
      out.push(this.withStopReason(pending));
      return;
    }
    if (index !== null) {
      const at = this.outOf.get(index);
      out.push(at === undefined ? pending.wire : this.moved(pending, at, index));
      return;
    }
    out.push(pending.wire);
  }

  /**
   * Writes a text block's parts in order, up to a call the decoder has not decided yet. `same`:
   * the event whose single text part is what it carried, written as it came when nothing moved.
   */
  private drain(wire: number, carrier: Carrier, out: WireEvent[], same: Pending | null): void {
    while (carrier.queue.length > 0) {
      const part = carrier.queue[0] as TextPart;
      if (part.kind === "call") {
        const call = this.tap.ended.get(part.index);
        if (!call) return;
        carrier.queue.shift();
        if (call.textSyntax !== undefined) this.writeCall(call, carrier, out);
        continue;
      }
      carrier.queue.shift();
      if (part.text === "") continue;
      const kind = part.kind === "text" ? "text" : "thinking";
      if (carrier.open !== null && carrier.open.kind !== kind) this.close(carrier, out);
      if (carrier.open === null) this.openBlock(wire, carrier, kind, out);
      const open = carrier.open as unknown as { kind: "text" | "thinking"; out: number; original: boolean };
      if (kind === "thinking") this.parts.reportReasoning();
      if (same !== null && open.original && open.out === wire) out.push(same.wire);
      else out.push(sseText({ type: "content_block_delta", index: open.out, delta: kind === "text" ? { type: "text_delta", text: part.text } : { type: "thinking_delta", thinking: part.text } }, "content_block_delta"));
      same = null;
    }
  }

  private openBlock(wire: number, carrier: Carrier, kind: "text" | "thinking", out: WireEvent[]): void {
    const at = this.nextOut++;
    const original = kind === "text" && !carrier.used;
    if (original) out.push(this.moved(carrier.start, at, wire));
    else out.push(sseText({ type: "content_block_start", index: at, content_block: kind === "text" ? { type: "text", text: "" } : { type: "thinking", thinking: "", signature: "" } }, "content_block_start"));
    carrier.open = { kind, out: at, original };
    carrier.used = true;
  }

  private close(carrier: Carrier, out: WireEvent[]): void {
    if (carrier.open === null) return;
    out.push(sseText({ type: "content_block_stop", index: carrier.open.out }, "content_block_stop"));
    carrier.open = null;
  }

  private writeCall(call: ToolCall, carrier: Carrier, out: WireEvent[]): void {
    if (call.arguments === null) {
      this.tap.withheld(call);
      return;
    }
    this.close(carrier, out);
    carrier.used = true;
    const at = this.nextOut++;
    this.runnable++;
    this.tap.rewritten(call, [TEXT_CALL_REPORT.code]);
    out.push(sseText({ type: "content_block_start", index: at, content_block: { type: "tool_use", id: call.id, name: call.name, input: {} } }, "content_block_start"));
    out.push(sseText({ type: "content_block_delta", index: at, delta: { type: "input_json_delta", partial_json: JSON.stringify(call.arguments) } }, "content_block_delta"));
    out.push(sseText({ type: "content_block_stop", index: at }, "content_block_stop"));
  }

  /** The event at output index `at`: as it came when that is its own index. */
  private moved(pending: Pending, at: number, wire: number): WireEvent {
    return at === wire ? pending.wire : sseText({ ...pending.data, index: at }, pending.name);
  }

  private withStopReason(pending: Pending): WireEvent {
    const delta = isPlainObject(pending.data.delta) ? pending.data.delta : null;
    const reason = delta?.stop_reason;
    if (this.runnable === 0 || delta === null || (reason !== "end_turn" && reason !== "stop_sequence")) return pending.wire;
    this.tap.report({ action: "normalized", code: "finish_reason_text_calls", message: `stop_reason '${String(reason)}' became 'tool_use' to match the calls read from the text.` });
    return sseText({ ...pending.data, delta: { ...delta, stop_reason: "tool_use" } }, pending.name ?? "message_delta");
  }
}

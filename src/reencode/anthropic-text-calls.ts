import type { DecoderOptions, ToolCall } from "../types.js";
import { createAnthropicReencoder } from "./anthropic.js";
import { BlockNumbers } from "./block-numbers.js";
import { isPlainObject } from "./common.js";
import { sseText, type WireEvent } from "./sse-events.js";
import { TextCallStage, type StagedEvent, type TextCarrier } from "./text-call-stage.js";
import { stopReasonForTextCalls, TEXT_CALL_REPORT } from "./text-calls.js";
import type { Reencoder } from "./types.js";

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

/** One text block of the wire and what has been written for it. */
interface Carrier extends TextCarrier {
  /** The block's own `content_block_start`, written before its first text (or with its stop when it stays empty). */
  start: StagedEvent;
  /** The block written now: its kind and output index; `original` when it is the wire block itself. */
  open: { kind: "text" | "thinking"; out: number; original: boolean } | null;
  /** Something was written for this block (text, reasoning, or a call). */
  used: boolean;
}

class AnthropicTextCallReencoder extends TextCallStage<Carrier> {
  private readonly numbers = new BlockNumbers();
  private runnable = 0;

  constructor(options: DecoderOptions) {
    const { textCalls: _textCalls, ...plain } = options;
    super("anthropic", createAnthropicReencoder(plain), options, "thinking block");
  }

  protected indexOf(data: Record<string, unknown>): number | null {
    return typeof data.index === "number" ? data.index : null;
  }

  protected isText(type: string, data: Record<string, unknown>): boolean {
    return type === "content_block_delta" && isPlainObject(data.delta) && data.delta.type === "text_delta";
  }

  protected opens(staged: StagedEvent, type: string, index: number | null): boolean {
    const block = staged.data.content_block;
    if (type !== "content_block_start" || index === null || !isPlainObject(block) || block.type !== "text" || block.text) return false;
    this.addCarrier(index, { start: staged, open: null, used: false, queue: [] });
    return true;
  }

  protected startsTail(type: string, index: number | null): boolean {
    return type === "message_delta" || type === "message_stop" || (type === "content_block_stop" && index !== null && this.carriers.has(index));
  }

  protected handle(pending: StagedEvent, type: string, index: number | null, out: WireEvent[]): void {
    const { data } = pending;
    const carrier = index === null ? undefined : this.carriers.get(index);
    if (type === "message_start") {
      this.numbers.clear();
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
          const at = this.numbers.insert();
          out.push(this.moved(carrier.start, at, index), this.moved(pending, at, index));
        }
        this.carriers.delete(index);
        return;
      }
    }
    if (type === "content_block_start" && index !== null) {
      const at = this.numbers.open(index);
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
      const at = this.numbers.of(index);
      out.push(at === undefined ? pending.wire : this.moved(pending, at, index));
      return;
    }
    out.push(pending.wire);
  }

  /**
   * Writes a text block's parts in order, up to a call the decoder has not decided yet. `same`:
   * the event whose single text part is what it carried, written as it came when nothing moved.
   */
  protected drain(wire: number, carrier: Carrier, out: WireEvent[], same: StagedEvent | null): void {
    for (let part = this.nextText(carrier, out); part !== null; part = this.nextText(carrier, out)) {
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
    const at = this.numbers.insert();
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

  protected writeCall(call: ToolCall, carrier: Carrier, out: WireEvent[]): void {
    if (call.arguments === null) {
      this.tap.withheld(call);
      return;
    }
    this.close(carrier, out);
    carrier.used = true;
    const at = this.numbers.insert();
    this.runnable++;
    this.tap.rewritten(call, [TEXT_CALL_REPORT.code]);
    out.push(sseText({ type: "content_block_start", index: at, content_block: { type: "tool_use", id: call.id, name: call.name, input: {} } }, "content_block_start"));
    out.push(sseText({ type: "content_block_delta", index: at, delta: { type: "input_json_delta", partial_json: JSON.stringify(call.arguments) } }, "content_block_delta"));
    out.push(sseText({ type: "content_block_stop", index: at }, "content_block_stop"));
  }

  /** The event at output index `at`: as it came when that is its own index. */
  private moved(pending: StagedEvent, at: number, wire: number): WireEvent {
    return at === wire ? pending.wire : sseText({ ...pending.data, index: at }, pending.name);
  }

  private withStopReason(pending: StagedEvent): WireEvent {
    const delta = isPlainObject(pending.data.delta) ? pending.data.delta : null;
    const reason = delta?.stop_reason;
    if (this.runnable === 0 || delta === null || (reason !== "end_turn" && reason !== "stop_sequence")) return pending.wire;
    this.tap.report(stopReasonForTextCalls("stop_reason", reason, "tool_use"));
    return sseText({ ...pending.data, delta: { ...delta, stop_reason: "tool_use" } }, pending.name ?? "message_delta");
  }
}

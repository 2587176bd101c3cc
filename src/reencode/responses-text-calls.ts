import type { DecoderOptions, ToolCall } from "../types.js";
import { BlockNumbers } from "./block-numbers.js";
import { isPlainObject } from "./common.js";
import { createOpenAIResponsesReencoder } from "./openai-responses.js";
import { sseText, type WireEvent } from "./sse-events.js";
import { TextCallStage, type StagedEvent, type TextCarrier } from "./text-call-stage.js";
import { TEXT_CALL_REPORT } from "./text-calls.js";
import type { Reencoder } from "./types.js";

/**
 * OpenAI Responses with `textCalls` (vLLM and llama-server serve `/v1/responses`; without a tool
 * parser the model's calls stay in its message text). Two stages, as for Messages
 * (anthropic-text-calls.ts): the Responses re-encoder repairs the wire's own call items, then its
 * output is decoded again with the extractor on, and each message item is rewritten from what the
 * extractor released for it, in order:
 *
 * - text stays in a message item: the item's own events, as they came while they carry exactly
 *   what was released; text after a call goes to a new message item (id `<item id>_<n>`);
 * - a runnable call goes out as a `function_call` item of its own (`call_id` `tw_text_<n>`, id
 *   `fc_tw_text_<n>`, the decoded arguments in one delta); one that cannot run is withheld;
 * - reasoning written into the text goes out as a `reasoning` item, whole (added and done with its
 *   `reasoning_text` content) when the text after it starts or the item ends;
 * - `output_index` of every later item moves up, `sequence_number` counts the events as written,
 *   and the terminal event's `response.output` lists the items as streamed;
 * - the item's closing events (`output_text.done` on) and everything after them wait for the end
 *   of the body, when the extractor releases what it holds and decides the calls still open.
 *
 * Calls in reasoning items the server sent are not read (`reasoning: true` is ignored here).
 */
export function createResponsesTextCallReencoder(options: DecoderOptions): Reencoder {
  return new ResponsesTextCallReencoder(options);
}

/** A message item of the wire and the items written for it. */
interface Carrier extends TextCarrier {
  id: string;
  added: StagedEvent;
  partAdded: StagedEvent | null;
  /** The item written now. `original`: the wire item itself (its own id and events). */
  open: { kind: "message"; out: number; id: string; text: string; original: boolean } | { kind: "reasoning"; text: string } | null;
  used: boolean;
  /** The wire item's own id and events went to a message written already. */
  originalTaken: boolean;
  segments: number;
  /** The wire's closing events, kept to pass as they came when the item was not changed. */
  closing: StagedEvent[];
  /** The item's text as the wire's done events say it. */
  finalText: string | null;
}

const CLOSING = new Set(["response.output_text.done", "response.content_part.done", "response.output_item.done"]);
const TERMINAL = new Set(["response.completed", "response.incomplete", "response.failed"]);

class ResponsesTextCallReencoder extends TextCallStage<Carrier> {
  private readonly numbers = new BlockNumbers();
  private sequence = 0;
  /** The items as written, by output index (their done form): the terminal event's output. */
  private readonly items: unknown[] = [];
  private rewrote = false;

  constructor(options: DecoderOptions) {
    const { textCalls: _textCalls, ...plain } = options;
    super("openai-responses", createOpenAIResponsesReencoder(plain), options, "reasoning item");
  }

  protected indexOf(data: Record<string, unknown>): number | null {
    return typeof data.output_index === "number" ? data.output_index : null;
  }

  protected isText(type: string): boolean {
    return type === "response.output_text.delta";
  }

  protected opens(staged: StagedEvent, type: string, index: number | null): boolean {
    if (index === null) return false;
    const item = staged.data.item;
    if (type === "response.output_item.added" && isPlainObject(item) && item.type === "message" && typeof item.id === "string" && (!Array.isArray(item.content) || item.content.length === 0)) {
      this.addCarrier(index, { id: item.id, added: staged, partAdded: null, open: null, used: false, originalTaken: false, segments: 0, queue: [], closing: [], finalText: null });
      return true;
    }
    const carrier = this.carriers.get(index);
    const part = staged.data.part;
    if (type === "response.content_part.added" && carrier && carrier.partAdded === null && !carrier.used && isPlainObject(part) && part.type === "output_text") {
      carrier.partAdded = staged;
      return true;
    }
    return false;
  }

  protected startsTail(type: string, index: number | null): boolean {
    return TERMINAL.has(type) || (index !== null && this.carriers.has(index) && CLOSING.has(type));
  }

  protected handle(pending: StagedEvent, type: string, index: number | null, out: WireEvent[]): void {
    const { data } = pending;
    const carrier = index === null ? undefined : this.carriers.get(index);
    if (carrier && index !== null) {
      if (type === "response.output_text.delta") {
        const same = pending.parts.length === 1 && pending.parts[0]?.kind === "text" && pending.parts[0].text === data.delta && carrier.queue.length === 0;
        carrier.queue.push(...pending.parts);
        this.drain(index, carrier, out, same ? pending : null);
        return;
      }
      if (CLOSING.has(type)) {
        if (type === "response.output_text.done" && typeof data.text === "string") carrier.finalText = data.text;
        carrier.closing.push(pending);
        if (type === "response.output_item.done") {
          this.drain(index, carrier, out, null);
          this.closeCarrier(index, carrier, out);
          this.carriers.delete(index);
        }
        return;
      }
      // Another event of the message (an annotation, a refusal): in the message written now.
      if (carrier.open?.kind === "message") this.write(out, pending, { output_index: carrier.open.out, item_id: carrier.open.id });
      return;
    }
    if (type === "response.output_item.added" && index !== null) {
      const at = this.numbers.open(index);
      this.write(out, pending, { output_index: at });
      return;
    }
    if (type === "response.output_item.done" && index !== null) {
      const at = this.numbers.of(index) ?? index;
      this.items[at] = data.item;
      this.write(out, pending, { output_index: at });
      return;
    }
    if (TERMINAL.has(type)) {
      for (const [wire, open] of this.carriers) this.drain(wire, open, out, null);
      this.terminal(pending, out);
      return;
    }
    if (index !== null) {
      const at = this.numbers.of(index);
      this.write(out, pending, at === undefined ? {} : { output_index: at });
      return;
    }
    this.write(out, pending, {});
  }

  /** Writes an event with its next sequence number and the fields given: as it came when nothing changes. */
  private write(out: WireEvent[], pending: StagedEvent, fields: Record<string, unknown>): void {
    const seq = typeof pending.data.sequence_number === "number" ? this.sequence++ : null;
    const changes = seq !== null && pending.data.sequence_number !== seq ? { ...fields, sequence_number: seq } : fields;
    const same = Object.entries(changes).every(([key, value]) => pending.data[key] === value);
    out.push(same ? pending.wire : sseText({ ...pending.data, ...changes }, pending.name));
  }

  /** An event toolwire adds, with the next sequence number. */
  private add(out: WireEvent[], type: string, fields: Record<string, unknown>): void {
    out.push(sseText({ type, sequence_number: this.sequence++, ...fields }, type));
  }

  protected drain(wire: number, carrier: Carrier, out: WireEvent[], same: StagedEvent | null): void {
    for (let part = this.nextText(carrier, out); part !== null; part = this.nextText(carrier, out)) {
      if (part.kind === "reasoning") {
        this.parts.reportReasoning();
        if (carrier.open?.kind === "message") this.closeMessage(carrier, out);
        if (carrier.open === null) carrier.open = { kind: "reasoning", text: "" };
        (carrier.open as { text: string }).text += part.text;
        carrier.used = true;
        this.rewrote = true;
        continue;
      }
      if (carrier.open?.kind === "reasoning") this.closeReasoning(carrier, out);
      if (carrier.open === null) this.openMessage(wire, carrier, out);
      const open = carrier.open as { kind: "message"; out: number; id: string; text: string; original: boolean };
      open.text += part.text;
      if (same !== null && open.original) this.write(out, same, { output_index: open.out });
      else this.add(out, "response.output_text.delta", { item_id: open.id, output_index: open.out, content_index: 0, delta: part.text, logprobs: [] });
      same = null;
    }
  }

  private openMessage(wire: number, carrier: Carrier, out: WireEvent[]): void {
    const at = this.numbers.insert();
    const original = !carrier.originalTaken;
    carrier.originalTaken = true;
    carrier.used = true;
    if (original) {
      this.write(out, carrier.added, { output_index: at });
      if (carrier.partAdded !== null) this.write(out, carrier.partAdded, { output_index: at });
      else this.add(out, "response.content_part.added", { item_id: carrier.id, output_index: at, content_index: 0, part: { type: "output_text", text: "", annotations: [] } });
      carrier.open = { kind: "message", out: at, id: carrier.id, text: "", original };
      if (at !== wire) this.rewrote = true;
      return;
    }
    const id = `${carrier.id}_${++carrier.segments}`;
    this.rewrote = true;
    this.add(out, "response.output_item.added", { output_index: at, item: { ...messageItem(carrier, id, ""), status: "in_progress", content: [] } });
    this.add(out, "response.content_part.added", { item_id: id, output_index: at, content_index: 0, part: { type: "output_text", text: "", annotations: [] } });
    carrier.open = { kind: "message", out: at, id, text: "", original };
  }

  private closeMessage(carrier: Carrier, out: WireEvent[]): void {
    const open = carrier.open;
    if (open?.kind !== "message") return;
    carrier.open = null;
    const item = messageItem(carrier, open.id, open.text);
    this.items[open.out] = item;
    this.add(out, "response.output_text.done", { item_id: open.id, output_index: open.out, content_index: 0, text: open.text, logprobs: [] });
    this.add(out, "response.content_part.done", { item_id: open.id, output_index: open.out, content_index: 0, part: (item.content as unknown[])[0] });
    this.add(out, "response.output_item.done", { output_index: open.out, item });
  }

  private closeReasoning(carrier: Carrier, out: WireEvent[]): void {
    const open = carrier.open;
    if (open?.kind !== "reasoning") return;
    carrier.open = null;
    const at = this.numbers.insert();
    const id = `${carrier.id}_rs_${++carrier.segments}`;
    const item = reasoningItem(id, open.text);
    this.items[at] = item;
    this.add(out, "response.output_item.added", { output_index: at, item: { ...item, content: [], status: "in_progress" } });
    this.add(out, "response.output_item.done", { output_index: at, item });
  }

  /** The wire item's end: the message written now is closed, as it came when it is the wire's own, unchanged. */
  private closeCarrier(wire: number, carrier: Carrier, out: WireEvent[]): void {
    const open = carrier.open;
    if (open?.kind === "reasoning") this.closeReasoning(carrier, out);
    if (open?.kind === "message" && open.original && open.text === carrier.finalText && carrier.closing.length === 3) {
      carrier.open = null;
      for (const pending of carrier.closing) this.write(out, pending, { output_index: open.out });
      const done = carrier.closing[2]?.data.item;
      this.items[open.out] = done;
      return;
    }
    if (open?.kind === "message") {
      this.rewrote = true;
      this.closeMessage(carrier, out);
      return;
    }
    if (!carrier.used) {
      // A message with no text at all: as it came.
      const at = this.numbers.insert();
      this.write(out, carrier.added, { output_index: at });
      if (carrier.partAdded !== null) this.write(out, carrier.partAdded, { output_index: at });
      for (const pending of carrier.closing) this.write(out, pending, { output_index: at });
      this.items[at] = carrier.closing.at(-1)?.data.item;
      if (at !== wire) this.rewrote = true;
    }
  }

  protected writeCall(call: ToolCall, carrier: Carrier, out: WireEvent[]): void {
    if (call.arguments === null) {
      this.tap.withheld(call);
      return;
    }
    if (carrier.open?.kind === "message") this.closeMessage(carrier, out);
    else if (carrier.open?.kind === "reasoning") this.closeReasoning(carrier, out);
    carrier.used = true;
    this.rewrote = true;
    const at = this.numbers.insert();
    this.tap.rewritten(call, [TEXT_CALL_REPORT.code]);
    const item = functionCallItem(call);
    const { id, arguments: args } = item;
    this.items[at] = item;
    this.add(out, "response.output_item.added", { output_index: at, item: { ...item, arguments: "", status: "in_progress" } });
    this.add(out, "response.function_call_arguments.delta", { item_id: id, output_index: at, delta: args });
    this.add(out, "response.function_call_arguments.done", { item_id: id, output_index: at, arguments: args });
    this.add(out, "response.output_item.done", { output_index: at, item });
  }

  /** The terminal event, its `response.output` the items as written when any was changed. */
  private terminal(pending: StagedEvent, out: WireEvent[]): void {
    const response = isPlainObject(pending.data.response) ? pending.data.response : null;
    if (!this.rewrote || response === null) {
      this.write(out, pending, {});
      return;
    }
    const output = this.items.filter((item) => item !== undefined);
    this.write(out, pending, { response: { ...response, output } });
  }
}

/** A message item holding one output_text part, in its done form. */
function messageItem(carrier: Carrier, id: string, text: string): Record<string, unknown> {
  const added = isPlainObject(carrier.added.data.item) ? carrier.added.data.item : {};
  return { ...added, id, type: "message", status: "completed", role: "assistant", content: [{ type: "output_text", text, annotations: [] }] };
}

/** A call read from the text as a Responses `function_call` item, in its done form (the stream and the whole body write the same). */
export function functionCallItem(call: ToolCall): { id: string; type: "function_call"; call_id: string; name: string; arguments: string; status: "completed" } {
  return { id: `fc_${call.id}`, type: "function_call", call_id: call.id, name: call.name, arguments: JSON.stringify(call.arguments), status: "completed" };
}

/** Reasoning taken out of the text as a Responses `reasoning` item, in its done form. */
export function reasoningItem(id: string, text: string): Record<string, unknown> {
  return { id, type: "reasoning", summary: [], content: [{ type: "reasoning_text", text }], status: "completed" };
}

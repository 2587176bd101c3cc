import type { DecoderOptions, ToolCall } from "../types.js";
import { decodedAsSent, isPlainObject } from "./common.js";
import { holdWire, sseComment, sseText, type RawSseEvent, type WireEvent } from "./sse-events.js";
import type { Reencoder } from "./types.js";
import { SseReencoder } from "./sse-reencoder.js";

/**
 * OpenAI Responses: decoded, then re-emitted as Responses events.
 *
 * - Every event passes as it arrives, as it came, except a `function_call` or `custom_tool_call`
 *   item's events, held from `response.output_item.added` to its `response.output_item.done` (one
 *   call's worth);
 * - they are released as they came when toolwire took the call as sent; otherwise the item is
 *   re-sent as `output_item.added` (arguments or input ""), one delta with the decoded arguments
 *   (a custom tool's input text), `.done` and `output_item.done`, with the call's id as `call_id`;
 * - a call cut (`response.incomplete`, an error, the end of the stream) or invalid is withheld, and
 *   the terminal event's `response.output` is made to agree: rewritten items replaced, withheld
 *   ones removed (the SDK's `finalResponse()` is that list). A call whose arguments were done
 *   (`function_call_arguments.done`) when the stream was cut is one toolwire decodes whole: it is
 *   re-sent complete, as its decoder verdict says;
 * - a `parallel` wrapper item passes as it came.
 */
export function createOpenAIResponsesReencoder(options: DecoderOptions = {}): Reencoder {
  return new OpenAIResponsesReencoder(options);
}

interface HeldItem {
  events: WireEvent[];
  item: Record<string, unknown>;
  outputIndex: number;
  /** Sequence numbers of the held events, reused by a rewrite. */
  sequence: number[];
}

class OpenAIResponsesReencoder extends SseReencoder {
  private readonly held = new Map<number, HeldItem>();
  /** Item id (and call_id) → the item as delivered, or null when withheld. */
  private readonly changed = new Map<string, Record<string, unknown> | null>();

  constructor(options: DecoderOptions) {
    super("openai-responses", options);
  }

  protected endHeld(out: WireEvent[]): void {
    // What the decoder made of each call still held: runnable ones are re-sent whole.
    for (const [index, held] of this.held) {
      const calls = [...this.tap.ended.values()].filter((call) => call.providerIndex === index);
      if (calls.length === 1 && calls[0]?.arguments !== null) {
        this.held.delete(index);
        this.rewrite(held, held.item, calls[0] as ToolCall, out);
      }
    }
    this.dropHeld("The stream ended before the call's output_item.done");
  }

  protected handle(raw: RawSseEvent, out: WireEvent[]): void {
    const event = raw.event;
    if (event === null) {
      out.push(raw.wire);
      return;
    }
    this.tap.push(event);
    const data = event.data;
    if (!isPlainObject(data)) {
      if (typeof data === "string" && data.trim() !== "") {
        out.push(sseComment(data));
        this.tap.report({ action: "normalized", code: "non_json_data", message: "A data line that is not JSON was sent as an SSE comment, which clients skip." });
      } else out.push(raw.wire);
      return;
    }
    const type = typeof data.type === "string" ? data.type : (event.event ?? "");
    const outputIndex = typeof data.output_index === "number" ? data.output_index : null;
    const sequence = typeof data.sequence_number === "number" ? data.sequence_number : null;
    if (type === "response.output_item.added" && outputIndex !== null && isPlainObject(data.item) && (data.item.type === "function_call" || data.item.type === "custom_tool_call")) {
      this.held.set(outputIndex, { events: [raw.wire], item: data.item, outputIndex, sequence: sequence !== null ? [sequence] : [] });
      return;
    }
    const held = outputIndex !== null ? this.held.get(outputIndex) : undefined;
    if (held) {
      holdWire(held.events, raw.wire);
      if (sequence !== null) held.sequence.push(sequence);
      if (type === "response.output_item.done") {
        this.held.delete(outputIndex as number);
        this.release(held, isPlainObject(data.item) ? data.item : held.item, out);
      }
      return;
    }
    if (type === "response.completed" || type === "response.incomplete" || type === "response.failed" || type === "error") {
      this.dropHeld(type === "response.incomplete" ? "The response ended incomplete inside the call" : "The response ended before the call's output_item.done");
      if (this.changed.size > 0 && isPlainObject(data.response) && Array.isArray(data.response.output)) {
        const output = data.response.output.flatMap((item) => {
          if (!isPlainObject(item)) return [item];
          const key = typeof item.id === "string" ? item.id : typeof item.call_id === "string" ? item.call_id : null;
          if (key === null || !this.changed.has(key)) return [item];
          const replacement = this.changed.get(key);
          return replacement ? [replacement] : [];
        });
        out.push(sseText({ ...data, response: { ...data.response, output } }, event.event));
        return;
      }
    }
    out.push(raw.wire);
  }

  private release(held: HeldItem, doneItem: Record<string, unknown>, out: WireEvent[], waited = false): void {
    const calls = [...this.tap.ended.values()].filter((call) => call.providerIndex === held.outputIndex);
    if (calls.length === 0 && !waited) {
      // Closed with arguments that do not parse strictly: the decoder decides with the stop reason.
      this.awaitVerdict(held.outputIndex, (_call, later) => this.release(held, doneItem, later, true));
      return;
    }
    const call = calls.length === 1 ? (calls[0] as ToolCall) : null;
    if (!call) {
      // A `parallel` wrapper (several calls from one item) or a call the decoder did not keep.
      for (const event of held.events) out.push(event);
      return;
    }
    const itemId = typeof doneItem.id === "string" ? doneItem.id : typeof held.item.id === "string" ? held.item.id : null;
    if (call.arguments === null) {
      this.tap.withheld(call);
      if (itemId) this.changed.set(itemId, null);
      return;
    }
    if (decodedAsSent(call) && doneItem.call_id === call.id) {
      for (const event of held.events) out.push(event);
      return;
    }
    this.rewrite(held, doneItem, call, out);
  }

  /** The item re-sent as one well-formed call with the arguments toolwire decoded. */
  private rewrite(held: HeldItem, doneItem: Record<string, unknown>, call: ToolCall, out: WireEvent[]): void {
    const itemId = typeof doneItem.id === "string" ? doneItem.id : typeof held.item.id === "string" ? held.item.id : null;
    const base = { ...held.item, ...doneItem };
    const custom = base.type === "custom_tool_call";
    const args = custom ? String(call.arguments?.input ?? "") : JSON.stringify(call.arguments);
    const field = custom ? "input" : "arguments";
    const events = custom ? "response.custom_tool_call_input" : "response.function_call_arguments";
    const item = { ...base, call_id: call.id, name: call.name, [field]: args, status: "completed" };
    const seq = (n: number): Record<string, unknown> => {
      const value = held.sequence[Math.min(n, held.sequence.length - 1)];
      return value === undefined ? {} : { sequence_number: value };
    };
    const ids = { ...(itemId ? { item_id: itemId } : {}), output_index: held.outputIndex };
    out.push(sseText({ type: "response.output_item.added", ...seq(0), output_index: held.outputIndex, item: { ...base, call_id: call.id, name: call.name, [field]: "", status: "in_progress" } }, "response.output_item.added"));
    out.push(sseText({ type: `${events}.delta`, ...seq(1), ...ids, delta: args }, `${events}.delta`));
    out.push(sseText({ type: `${events}.done`, ...seq(2), ...ids, [field]: args }, `${events}.done`));
    out.push(sseText({ type: "response.output_item.done", ...seq(3), output_index: held.outputIndex, item }, "response.output_item.done"));
    if (itemId) this.changed.set(itemId, item);
    this.tap.rewritten(call);
  }

  private dropHeld(why: string): void {
    for (const [index, held] of this.held) {
      this.held.delete(index);
      const id = typeof held.item.id === "string" ? held.item.id : null;
      if (id) this.changed.set(id, null);
      this.tap.report({
        action: "withheld",
        code: "truncated",
        message: `${why}: the call ${typeof held.item.name === "string" ? held.item.name : ""} (output ${index}) was cut and was not delivered.`,
        ...(typeof held.item.call_id === "string" ? { id: held.item.call_id } : {}),
        ...(typeof held.item.name === "string" ? { name: held.item.name } : {}),
      });
    }
  }
}

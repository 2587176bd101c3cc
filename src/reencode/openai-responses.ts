import type { DecoderOptions, ProviderEvent, ToolCall } from "../types.js";
import { decodedAsSent, isPlainObject, type CallMatcher } from "./common.js";
import { holdWire, SseEventSplitter, sseComment, sseText, wireText, type RawSseEvent, type WireEvent } from "./sse-events.js";
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
  /** Null when the server left it out: the item is then known by its id alone, as the decoder knows it. */
  outputIndex: number | null;
  itemId: string | null;
  /** Sequence numbers of the held events, reused by a rewrite. */
  sequence: number[];
  /** The tap's log position when the item was added: its calls end after it (an earlier item may have had the same output_index). */
  since: number;
}

class OpenAIResponsesReencoder extends SseReencoder {
  /** Held items in the order they were added, found as the decoder finds them: by item id, else by output index. */
  private readonly held = new Set<HeldItem>();
  private readonly heldById = new Map<string, HeldItem>();
  /**
   * The item the decoder last registered at each output_index, as it keeps them: the held call, or
   * null for any other item (a message, a call already released). An event without a known item id
   * is about that item.
   */
  private readonly itemAtIndex = new Map<number, HeldItem | null>();
  /**
   * Every item id the decoder has an item for (added, or done without added; any kind of item): an
   * event naming one of them is about that item, held or not, and never about the item that
   * holds its output_index; the decoder ignores a second `output_item.added` for one.
   */
  private readonly knownIds = new Set<string>();
  /** Call items the stream sent (added, or done without added): the others are known only from the terminal output. */
  private readonly streamedIds = new Set<string>();
  /** Item id (and call_id) → the items delivered in its place (none when withheld). */
  private readonly changed = new Map<string, Array<Record<string, unknown>>>();
  /**
   * Items added after a wire item whose arguments the decoder split into several calls: every
   * later item's output_index moves up by their count, so the client's output list has no clash;
   * a withheld item counts -1, so later items move down into its place.
   */
  private readonly inserted: Array<{ after: number; count: number }> = [];

  constructor(options: DecoderOptions) {
    super("openai-responses", options);
  }

  protected endHeld(out: WireEvent[]): void {
    this.deliverDecided(out);
    this.dropHeld("The stream ended before the call's output_item.done");
  }

  /**
   * Items still held when the response ends: those the decoder ended with runnable arguments
   * (their arguments were done, or the terminal response carries the item) are re-sent whole.
   */
  private deliverDecided(out: WireEvent[]): void {
    for (const held of [...this.held]) {
      const calls = this.callsOf(held);
      if (calls.some((call) => call.arguments !== null)) {
        this.unhold(held);
        this.deliver(held, held.item, calls, out);
      }
    }
  }

  protected handle(raw: RawSseEvent, event: ProviderEvent, ended: readonly ToolCall[], out: WireEvent[]): void {
    const data = event.data;
    if (!isPlainObject(data)) {
      if (typeof data === "string" && data.trim() !== "") {
        out.push(sseComment(data));
        this.tap.report({ action: "normalized", code: "non_json_data", message: "A data line that is not JSON was sent as an SSE comment, which clients skip." });
      } else out.push(raw.wire);
      return;
    }
    const type = typeof data.type === "string" ? data.type : (event.event ?? "");
    const outputIndex = Number.isInteger(data.output_index) ? (data.output_index as number) : null;
    const sequence = typeof data.sequence_number === "number" ? data.sequence_number : null;
    const itemEvent = (type === "response.output_item.added" || type === "response.output_item.done") && isPlainObject(data.item);
    const eventItemId = itemEvent ? nonEmptyString((data.item as Record<string, unknown>).id) : nonEmptyString(data.item_id);
    const idKnown = eventItemId !== null && this.knownIds.has(eventItemId);
    // The decoder registers an item on its output_item.added (ignoring a repeat: a known id, or no
    // id and an index taken) and on an output_item.done it finds no item for.
    const indexTaken = outputIndex !== null && this.itemAtIndex.has(outputIndex);
    const registers = itemEvent && (type === "response.output_item.added" ? (eventItemId !== null ? !idKnown : !indexTaken) : !idKnown && !indexTaken);
    if (registers) {
      if (eventItemId !== null) this.knownIds.add(eventItemId);
      if (outputIndex !== null) this.itemAtIndex.set(outputIndex, null);
    }
    if (type === "response.output_item.added" && isCallItem(data.item)) {
      const itemId = nonEmptyString(data.item.id);
      if (!registers) {
        // The decoder ignores it (item_added_twice): the item's events go on to the one added first.
        this.tap.report({ action: "withheld", code: "item_added_twice", message: `Output item ${itemId ?? String(outputIndex)} was added a second time; the repeat was not forwarded.` });
        return;
      }
      if (itemId !== null) this.streamedIds.add(itemId);
      this.hold({ events: [raw.wire], item: data.item, outputIndex, itemId, sequence: sequence !== null ? [sequence] : [], since: this.logPosition });
      return;
    }
    const held = this.heldFor(eventItemId, idKnown, outputIndex);
    if (held) {
      holdWire(held.events, raw.wire);
      if (sequence !== null) held.sequence.push(sequence);
      if (type === "response.output_item.done") {
        this.unhold(held);
        this.release(held, isPlainObject(data.item) ? data.item : held.item, out);
      }
      return;
    }
    if (type === "response.output_item.done" && isCallItem(data.item) && !registers) {
      // A done for a call already over (its id again, or another id at the index of an item the
      // decoder has ended): the decoder takes nothing from it, and a client that keys items by
      // output_index would let it replace another item.
      this.tap.report({ action: "withheld", code: "item_done_twice", message: `Output item ${eventItemId ?? String(outputIndex)} was done again after its call ended; the repeat was not forwarded.` });
      return;
    }
    if (type === "response.output_item.done" && isCallItem(data.item)) {
      // A call item that arrives whole, never added: the decoder decided it with this event, and
      // it goes out as that verdict says, like any held item.
      const item = data.item;
      const whole: HeldItem = { events: [raw.wire], item, outputIndex, itemId: nonEmptyString(item.id), sequence: sequence !== null ? [sequence] : [], since: this.logPosition - ended.length };
      if (whole.itemId !== null) this.streamedIds.add(whole.itemId);
      this.release(whole, item, out);
      return;
    }
    if (type === "response.completed" || type === "response.incomplete" || type === "response.failed" || type === "error") {
      if (this.tap.callsAwaitingEnd > 0 || [...this.held].some((held) => this.callsOf(held).length === 0)) {
        // A call still held, or one only the terminal output holds, that the decoder ends only
        // with the stream (its arguments do not parse strictly): the terminal event waits for it.
        this.holdToEnd((later) => this.sendTerminal(raw, data, type, later));
        return;
      }
      this.sendTerminal(raw, data, type, out);
      return;
    }
    out.push(outputIndex === null ? raw.wire : this.moved(raw, data, outputIndex));
  }

  /** The calls the decoder ended for a held item (several when it split glued objects). */
  private callsOf(held: HeldItem): ToolCall[] {
    return this.tap.endedSince(held.since, matcherOf(held));
  }

  private hold(held: HeldItem): void {
    this.held.add(held);
    if (held.itemId !== null) this.heldById.set(held.itemId, held);
    if (held.outputIndex !== null) this.itemAtIndex.set(held.outputIndex, held);
  }

  private unhold(held: HeldItem): void {
    this.held.delete(held);
    if (held.itemId !== null && this.heldById.get(held.itemId) === held) this.heldById.delete(held.itemId);
    if (held.outputIndex !== null && this.itemAtIndex.get(held.outputIndex) === held) this.itemAtIndex.set(held.outputIndex, null);
  }

  /** The held item an event is about, found as the decoder finds it: by item id, else by output index. */
  private heldFor(itemId: string | null, idKnown: boolean, outputIndex: number | null): HeldItem | undefined {
    const byId = itemId !== null ? this.heldById.get(itemId) : undefined;
    if (byId || idKnown) return byId;
    return (outputIndex !== null ? this.itemAtIndex.get(outputIndex) : null) ?? undefined;
  }

  /** The terminal event: held calls decided, its `response.output` made to agree with what was delivered. */
  private sendTerminal(raw: RawSseEvent, data: Record<string, unknown>, type: string, out: WireEvent[]): void {
    this.deliverDecided(out);
    this.dropHeld(type === "response.incomplete" ? "The response ended incomplete inside the call" : "The response ended before the call's output_item.done");
    const response = isPlainObject(data.response) && Array.isArray(data.response.output) ? data.response : null;
    const output = response?.output as unknown[] | undefined;
    if (output !== undefined) this.decideOutputOnly(output);
    if (this.changed.size > 0 && output !== undefined) {
      const sent = output.flatMap((item) => {
        if (!isPlainObject(item)) return [item];
        const key = typeof item.id === "string" ? item.id : typeof item.call_id === "string" ? item.call_id : null;
        if (key === null || !this.changed.has(key)) return [item];
        return this.changed.get(key) ?? [];
      });
      out.push(sseText({ ...data, response: { ...response, output: sent } }, raw.event?.event));
      return;
    }
    out.push(raw.wire);
  }

  private release(held: HeldItem, doneItem: Record<string, unknown>, out: WireEvent[], waited = false): void {
    const calls = this.callsOf(held);
    if (calls.length === 0 && !waited) {
      // Closed with arguments that do not parse strictly: the decoder decides with the stop reason.
      this.awaitVerdict(matcherOf(held), (_calls, later) => this.release(held, doneItem, later, true));
      return;
    }
    if (calls.length === 0) {
      // A call the decoder did not keep (over a limit): pass it on as it came.
      for (const event of held.events) out.push(this.shiftOf(held.outputIndex) === 0 ? event : this.movedText(event));
      return;
    }
    const call = calls[0] as ToolCall;
    if (calls.length === 1 && call.arguments !== null && decodedAsSent(call) && doneItem.call_id === call.id) {
      // As sent; only its output_index moves where an earlier item was split or withheld.
      const moves = this.shiftOf(held.outputIndex) !== 0;
      for (const event of held.events) out.push(moves ? this.movedText(event) : event);
      return;
    }
    this.deliver(held, doneItem, calls, out);
  }

  /**
   * The calls the decoder made of one item: runnable ones re-sent as well-formed items (the first
   * in the item's place, any split from it right after), the others withheld.
   */
  private deliver(held: HeldItem, doneItem: Record<string, unknown>, calls: readonly ToolCall[], out: WireEvent[]): void {
    const itemId = typeof doneItem.id === "string" ? doneItem.id : typeof held.item.id === "string" ? held.item.id : null;
    const delivered: Array<Record<string, unknown>> = [];
    const at = held.outputIndex === null ? null : held.outputIndex + this.shiftOf(held.outputIndex);
    for (const call of calls) {
      if (call.arguments === null) {
        this.tap.withheld(call);
        continue;
      }
      const id = delivered.length === 0 ? itemId : `${itemId ?? "fc"}_tw${delivered.length + 1}`;
      delivered.push(this.rewrite(held, doneItem, call, out, at === null ? null : at + delivered.length, id));
    }
    // Split calls push later items up; a withheld item (nothing delivered) pulls them down, so the
    // client's output list stays dense (the SDKs index it by output_index).
    if (delivered.length !== 1 && held.outputIndex !== null) this.inserted.push({ after: held.outputIndex, count: delivered.length - 1 });
    if (itemId) this.changed.set(itemId, delivered);
  }

  /** How far the item at wire output index `index` moves up (items inserted before it). */
  private shiftOf(index: number | null): number {
    if (index === null) return 0;
    let shift = 0;
    for (const { after, count } of this.inserted) if (after < index) shift += count;
    return shift;
  }

  /** An event as it came, or with its output_index moved up past inserted items. */
  private moved(raw: RawSseEvent, data: Record<string, unknown>, outputIndex: number): WireEvent {
    const shift = this.shiftOf(outputIndex);
    if (shift === 0) return raw.wire;
    const moved: Record<string, unknown> = { ...data, output_index: outputIndex + shift };
    return sseText(moved, raw.event?.event);
  }

  /**
   * Call items that only the terminal response holds (their events never came): the decoder decodes
   * them from there, so the client's copy must agree. A call the decoder did not keep as runnable
   * is withheld from the output; one it repaired (arguments, id) is replaced by what it decoded.
   */
  private decideOutputOnly(output: readonly unknown[]): void {
    const byItem = new Map<unknown, ToolCall>();
    for (const call of this.tap.log) if (call.providerFields?.itemId !== undefined && !byItem.has(call.providerFields.itemId)) byItem.set(call.providerFields.itemId, call);
    for (const item of output) {
      if (!isCallItem(item)) continue;
      const itemId = nonEmptyString(item.id);
      if (itemId === null || this.streamedIds.has(itemId) || this.changed.has(itemId)) continue;
      const call = byItem.get(itemId);
      if (!call) continue;
      if (call.arguments === null) {
        this.tap.withheld(call);
        this.changed.set(itemId, []);
      } else if (!decodedAsSent(call) || item.call_id !== call.id) {
        const custom = item.type === "custom_tool_call";
        this.changed.set(itemId, [callItem(item, call, custom, itemArguments(call, custom), "completed")]);
        this.tap.rewritten(call);
      }
    }
  }

  /** Held events with their output_index moved (read again from their text: rare, and only then). */
  private movedText(held: WireEvent): string {
    const splitter = new SseEventSplitter();
    const events = [...splitter.pushText(wireText(held)), ...splitter.flush()];
    return events.map((raw) => (raw.event && isPlainObject(raw.event.data) && typeof raw.event.data.output_index === "number" ? wireText(this.moved(raw, raw.event.data, raw.event.data.output_index)) : raw.raw)).join("");
  }

  /** The item re-sent as one well-formed call with the arguments toolwire decoded, at `outputIndex`. */
  private rewrite(held: HeldItem, doneItem: Record<string, unknown>, call: ToolCall, out: WireEvent[], outputIndex: number | null, itemId: string | null): Record<string, unknown> {
    // The type is the held item's, which made it a call: the done item's may be damaged (the
    // decoder keeps the call it opened, and the re-sent item must read as that call).
    const custom = held.item.type === "custom_tool_call";
    const base: Record<string, unknown> = { ...held.item, ...doneItem, ...(itemId !== null ? { id: itemId } : {}), type: custom ? "custom_tool_call" : "function_call" };
    const args = itemArguments(call, custom);
    const field = custom ? "input" : "arguments";
    const events = custom ? "response.custom_tool_call_input" : "response.function_call_arguments";
    const item = callItem(base, call, custom, args, "completed");
    const seq = (n: number): Record<string, unknown> => {
      const value = held.sequence[Math.min(n, held.sequence.length - 1)];
      return value === undefined ? {} : { sequence_number: value };
    };
    const at = outputIndex === null ? {} : { output_index: outputIndex };
    const ids = { ...(itemId ? { item_id: itemId } : {}), ...at };
    out.push(sseText({ type: "response.output_item.added", ...seq(0), ...at, item: callItem(base, call, custom, "", "in_progress") }, "response.output_item.added"));
    out.push(sseText({ type: `${events}.delta`, ...seq(1), ...ids, delta: args }, `${events}.delta`));
    out.push(sseText({ type: `${events}.done`, ...seq(2), ...ids, [field]: args }, `${events}.done`));
    out.push(sseText({ type: "response.output_item.done", ...seq(3), ...at, item }, "response.output_item.done"));
    this.tap.rewritten(call);
    return item;
  }

  private dropHeld(why: string): void {
    for (const held of [...this.held]) {
      this.unhold(held);
      const index = held.outputIndex ?? held.itemId;
      const id = typeof held.item.id === "string" ? held.item.id : null;
      if (id) this.changed.set(id, []);
      this.tap.cut(why, `output ${index}`, held.item.call_id, held.item.name);
    }
  }
}

/**
 * A held item's calls: those of its item id (the decoder keys items by id first, and two items can
 * share an output index), or, for an item sent without an id, those at its output index.
 */
function matcherOf(held: HeldItem): CallMatcher {
  const itemId = held.itemId;
  if (itemId !== null) return (call) => call.providerFields?.itemId === itemId;
  if (held.outputIndex !== null) return held.outputIndex;
  return (call) => call.providerIndex === undefined && call.providerFields?.itemId === undefined;
}

/** A `function_call` or `custom_tool_call` item: one the decoder reads as a call. */
function isCallItem(value: unknown): value is Record<string, unknown> {
  return isPlainObject(value) && (value.type === "function_call" || value.type === "custom_tool_call");
}

/** The call's arguments as its item carries them: JSON text, or a custom tool's raw input. */
function itemArguments(call: ToolCall, custom: boolean): string {
  return custom ? String(call.arguments?.input ?? "") : JSON.stringify(call.arguments);
}

/** `base` as the item of the call toolwire decoded, carrying `args`. */
function callItem(base: Record<string, unknown>, call: ToolCall, custom: boolean, args: string, status: "in_progress" | "completed"): Record<string, unknown> {
  return { ...base, call_id: call.id, name: call.name, [custom ? "input" : "arguments"]: args, status };
}

function nonEmptyString(value: unknown): string | null {
  return typeof value === "string" && value !== "" ? value : null;
}

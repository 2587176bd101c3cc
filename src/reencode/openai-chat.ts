import type { DecoderOptions, ProviderEvent, ToolCall } from "../types.js";
import { decodedAsSent, extraFields, isPlainObject } from "./common.js";
import { holdWire, SseEventSplitter, sseComment, sseText, wireText, type RawSseEvent, type WireEvent } from "./sse-events.js";
import type { Reencoder } from "./types.js";
import { SseReencoder } from "./sse-reencoder.js";
import { ReleasedText, TEXT_CALL_REPORT } from "./text-calls.js";

/**
 * OpenAI Chat Completions: decoded, then re-emitted as Chat chunks.
 *
 * Chat has no per-call end marker: the decoder decides calls at `[DONE]` (or at the end of a
 * stream that closed with a finish_reason). So from the first chunk carrying `tool_calls`, the
 * chunks that carry calls, the finish_reason and usage are held until then; chunks that carry only
 * text or reasoning pass at once (accumulators keep text and calls apart, so their order relative
 * to held call chunks does not matter). Then:
 *
 * - When every call was sent well (one first fragment with index, id, type and name, then
 *   fragments with only argument text, indexes 0, 1, … in order, one finish_reason, and a strict
 *   parse of the fragments as the decoded arguments), the held chunks go out byte for byte.
 * - Otherwise the turn's calls are re-sent: the held chunks without their `tool_calls`, and one
 *   chunk per call (index 0, 1, …; its id, `type: "function"`, name and the decoded arguments
 *   whole) before the finish_reason chunk. Chat fragments of different calls share chunks and
 *   indexes (the quirks being fixed are exactly that), so the calls of such a turn are re-sent
 *   together rather than one by one.
 * - A call that is truncated (finish_reason `length`, a cut connection, an error) or invalid is
 *   withheld. A `length` stop already says so; a `tool_calls` finish with no call left says
 *   `stop`, and a `stop` finish with calls (Gemini's compat endpoint) says `tool_calls`.
 * - Protocol repairs: a stream whose chunks never carry `role` gets `role: "assistant"` on its
 *   first chunk; a stream that ends with `[DONE]` but no finish_reason gets a finish chunk; extra
 *   finish_reasons (a proxy that sends one on every chunk) are dropped from held chunks; a
 *   non-JSON data line (a keep-alive) becomes an SSE comment.
 * - With `textCalls` (a server without a tool parser): each chunk carries the text and reasoning
 *   the decoder released for it (text-calls.ts), each call read from the text goes out as one
 *   whole `tool_calls` entry once its markup closes (numbered after the calls sent before it), and
 *   the finish_reason chunk and `[DONE]` wait for the end of the body, when the text still held
 *   is released and the calls still open are decided.
 */
export function createOpenAIChatReencoder(options: DecoderOptions = {}): Reencoder {
  return new OpenAIChatReencoder(options);
}

const ENVELOPE_KEYS = ["id", "object", "created", "model", "system_fingerprint", "service_tier"];

class OpenAIChatReencoder extends SseReencoder {
  private envelope: Record<string, unknown> | null = null;
  private roleChecked = false;
  private holding = false;
  /**
   * The held chunks as they came, neighbours as one range: read again (split into chunks and
   * parsed) only on the rarer paths that change them.
   */
  private held: WireEvent[] = [];
  private finishes = 0;
  private decided = false;
  /** An error event came while calls were held: all of them are withheld. */
  private failedWithCalls = false;
  private errored = false;
  /** The calls were sent in the well-formed shape (see the class comment). */
  private wellFormed = true;
  private readonly seenEntries = new Set<number>();
  /** With `textCalls`: what the decoder released from the text, per event. */
  private readonly released: ReleasedText | null;
  /** Calls read from the text that were sent (or reported withheld) as they ended: `decide` leaves them out. */
  private readonly textCallsDone = new Set<ToolCall>();
  /** Chat indexes given to calls read from the text so far (the calls `decide` sends come after). */
  private textCallsSent = 0;
  /** With `textCalls`: text and reasoning the decoder released at the end of the body. */
  private releasedAtEnd: { text: string; reasoning: string } | null = null;

  constructor(options: DecoderOptions) {
    super("openai-chat", options);
    this.released = options.textCalls ? new ReleasedText(this.tap) : null;
  }

  /** `done`: `[DONE]` came, held until the end of the body (it follows what this writes). */
  protected endHeld(out: WireEvent[], done = false): void {
    if (this.released !== null) this.releasedAtEnd = this.released.take();
    if (this.failedWithCalls) {
      for (const call of this.undecidedCalls()) {
        this.tap.withheld(call, call.arguments === null ? undefined : `Call ${call.index} (${call.name}) was not delivered: the stream failed before the turn finished, and a Chat call without a finish_reason reads as cut.`);
      }
    }
    this.decide(out, done);
  }

  protected handle(raw: RawSseEvent, event: ProviderEvent, ended: readonly ToolCall[], out: WireEvent[]): void {
    const data = event.data;
    if (typeof data === "string") {
      if (data.trim() === "[DONE]") {
        // Text calls: the extractor releases what it holds only when the body ends.
        if (!this.errored && (this.tap.callsAwaitingEnd > 0 || this.released !== null)) {
          // The decoder gives the verdicts with the end of the stream, right after.
          this.holdToEnd((later) => {
            this.endHeld(later, true);
            later.push(raw.wire);
          });
          return;
        }
        if (!this.errored) this.decide(out, true);
        out.push(raw.wire);
      } else if (event.event === "error") {
        this.failWith(raw, out);
      } else {
        out.push(sseComment(data));
        this.tap.report({ action: "normalized", code: "non_json_data", message: "A data line that is not JSON (a keep-alive) was sent as an SSE comment, which clients skip." });
      }
      return;
    }
    if (!isPlainObject(data)) {
      out.push(raw.wire);
      return;
    }
    if ((data.error !== undefined && data.error !== null) || event.event === "error") {
      this.failWith(raw, out);
      return;
    }
    if (this.envelope === null) {
      this.envelope = {};
      for (const key of ENVELOPE_KEYS) if (data[key] !== undefined) this.envelope[key] = data[key];
    }
    if (this.released !== null) {
      const rewritten = this.released.rewriteChatChunk(data, this.released.take());
      if (rewritten === "drop") {
        this.sendTextCalls(ended, out);
        return;
      }
      if (rewritten !== "same") {
        const text = sseText(rewritten, event.event);
        this.handleChunk({ raw: text, wire: text, event: { ...event, data: rewritten } }, rewritten, out);
      } else this.handleChunk(raw, data, out);
      this.sendTextCalls(ended, out);
      return;
    }
    this.handleChunk(raw, data, out);
  }

  /** A chunk of the body (text calls already read out of it): forwarded, or held with the calls. */
  private handleChunk(raw: RawSseEvent, data: Record<string, unknown>, out: WireEvent[]): void {
    const choices = Array.isArray(data.choices) ? data.choices : [];
    let calls = false;
    let finish = false;
    let text = false;
    for (const choice of choices) {
      if (!isPlainObject(choice)) continue;
      if (typeof choice.finish_reason === "string" && choice.finish_reason !== "") finish = true;
      const delta = isPlainObject(choice.delta) ? choice.delta : null;
      if (!delta) continue;
      if ((Array.isArray(delta.tool_calls) && delta.tool_calls.length > 0) || isPlainObject(delta.function_call)) {
        calls = true;
        this.checkEntries(choice, delta);
      }
      if (hasText(delta)) text = true;
    }
    if (finish) this.finishes++;
    // Text calls: the finish waits for the text and calls the extractor still holds.
    if (calls || (finish && this.released !== null)) this.holding = true;
    if (this.holding && !this.decided && (calls || finish || !text)) {
      holdWire(this.held, raw.wire);
      return;
    }
    out.push(this.withRole(raw, data));
  }

  /**
   * Calls read from the text that ended at this event go out now, one whole `tool_calls` entry
   * each; one that cannot run is withheld as a wire call would be. While wire calls are held,
   * `decide` sends them with those.
   */
  private sendTextCalls(ended: readonly ToolCall[], out: WireEvent[]): void {
    if (this.holding && !this.decided) return;
    for (const call of ended) {
      if (call.source !== "text" || this.textCallsDone.has(call)) continue;
      this.textCallsDone.add(call);
      if (call.arguments === null) {
        this.tap.withheld(call);
        continue;
      }
      this.tap.rewritten(call, [TEXT_CALL_REPORT.code]);
      out.push(sseText(this.chunk({ tool_calls: [callEntry(call, this.textCallsSent++)] }, null)));
    }
  }

  /** The calls not sent yet (those read from the text and sent as they ended left out), in turn order. */
  private undecidedCalls(): ToolCall[] {
    return [...this.tap.ended.values()].filter((call) => !this.textCallsDone.has(call)).sort((a, b) => a.index - b.index);
  }

  /**
   * An error event ends the turn. Chat has no end marker per call (only the finish_reason and
   * `[DONE]`, which an errored turn does not get), so no call held so far can reach the client as
   * complete: each is withheld, what else was held goes out without its call fragments, then the
   * error, as it came.
   */
  private failWith(raw: RawSseEvent, out: WireEvent[]): void {
    if (!this.errored && this.holding && !this.decided) {
      this.decide(out, false, true);
      this.failedWithCalls = true;
    }
    this.errored = true;
    out.push(raw.wire);
  }

  /** Whether the fragments of this chunk keep the well-formed shape. */
  private checkEntries(choice: Record<string, unknown>, delta: Record<string, unknown>): void {
    if (choice.index !== undefined && choice.index !== 0) this.wellFormed = false;
    if (!Array.isArray(delta.tool_calls)) {
      this.wellFormed = false;
      return;
    }
    for (const entry of delta.tool_calls) {
      if (!isPlainObject(entry) || typeof entry.index !== "number" || !isPlainObject(entry.function)) {
        this.wellFormed = false;
        continue;
      }
      const fn = entry.function;
      if (fn.arguments !== undefined && typeof fn.arguments !== "string") this.wellFormed = false;
      if (!this.seenEntries.has(entry.index)) {
        if (entry.index !== this.seenEntries.size) this.wellFormed = false;
        this.seenEntries.add(entry.index);
        if (typeof entry.id !== "string" || entry.id === "" || entry.type !== "function" || typeof fn.name !== "string" || fn.name === "") this.wellFormed = false;
      } else if ((typeof entry.id === "string" && entry.id !== "") || (typeof fn.name === "string" && fn.name !== "")) {
        // Accumulators that concatenate strings (the Python SDK's) would double the id or name.
        this.wellFormed = false;
      }
    }
  }

  /** The first chunk gets `role: "assistant"` when the stream never says it (the SDK requires it). */
  private withRole(raw: RawSseEvent, data: Record<string, unknown>): WireEvent {
    if (this.roleChecked || !Array.isArray(data.choices) || data.choices.length === 0) return raw.wire;
    this.roleChecked = true;
    const first = data.choices[0];
    if (!isPlainObject(first) || !isPlainObject(first.delta) || typeof first.delta.role === "string") return raw.wire;
    this.tap.report({ action: "normalized", code: "role_missing", message: "The first chunk carried no role; role: assistant was added." });
    const choices = [{ ...first, delta: { role: "assistant", ...first.delta } }, ...data.choices.slice(1)];
    return sseText({ ...data, choices }, raw.event?.event);
  }

  /** `failed`: an error event came, and every call is withheld (see `failWith`). */
  private decide(out: WireEvent[], done: boolean, failed = false): void {
    if (this.decided) return;
    this.decided = true;
    const calls = this.undecidedCalls();
    const runnable = failed ? [] : calls.filter((call) => call.arguments !== null);
    const tail = this.releasedAtEnd;
    this.releasedAtEnd = null;
    const tailCarries = tail !== null && (tail.text !== "" || tail.reasoning !== "");
    /** Calls sent before, read from the text: the finish counts them, the calls sent now come after them. */
    const sentBefore = this.textCallsSent;
    // A failed turn's calls are reported when the decoder has ended them all (with the body).
    if (!failed) for (const call of calls) if (call.arguments === null) this.tap.withheld(call);
    const asSent =
      !failed &&
      sentBefore === 0 &&
      !tailCarries &&
      this.wellFormed &&
      this.finishes <= 1 &&
      calls.length === this.seenEntries.size &&
      calls.every((call) => decodedAsSent(call) && call.source === "delta" && !call.providerFields?.customToolInput);
    if (asSent) {
      if (this.roleChecked) for (const held of this.held) out.push(held);
      else for (const event of this.heldEvents()) out.push(isPlainObject(event.event?.data) ? this.withRole(event, event.event.data) : event.wire);
      this.held = [];
      if (done && this.finishes === 0) this.addFinish(out, runnable.length > 0 ? "tool_calls" : "stop");
      return;
    }
    for (const call of runnable) this.tap.rewritten(call, call.source === "text" ? [TEXT_CALL_REPORT.code] : []);
    const delivered = sentBefore + runnable.length;
    let lastFinish = -1;
    const held = this.heldEvents();
    held.forEach((event, position) => {
      if (carriesFinish(event.event?.data)) lastFinish = position;
    });
    let sent = false;
    const sendCalls = (): void => {
      if (sent) return;
      sent = true;
      if (tail !== null && tailCarries) out.push(sseText(this.chunk(releasedDelta(tail), null)));
      runnable.forEach((call, index) => out.push(sseText(this.chunk({ tool_calls: [callEntry(call, sentBefore + index)] }, null))));
      this.textCallsSent += runnable.length;
    };
    held.forEach(({ wire, event }, position) => {
      if (position === lastFinish) sendCalls();
      if (!event || !isPlainObject(event.data)) {
        out.push(wire);
        return;
      }
      const stripped = this.strip(event.data, position === lastFinish, delivered, this.released !== null && (sentBefore > 0 || runnable.some((call) => call.source === "text")));
      if (stripped) {
        const text = sseText(stripped, event.event);
        out.push(this.withRole({ raw: text, wire: text, event }, stripped));
      }
    });
    this.held = [];
    sendCalls();
    if (done && this.finishes === 0) this.addFinish(out, delivered > 0 ? "tool_calls" : "stop");
  }

  private addFinish(out: WireEvent[], reason: string): void {
    out.push(sseText(this.chunk({}, reason)));
    this.tap.report({ action: "normalized", code: "finish_reason_missing", message: `The stream ended with [DONE] but no finish_reason; a chunk with finish_reason '${reason}' was added before [DONE].` });
  }

  private chunk(delta: Record<string, unknown>, finishReason: string | null): Record<string, unknown> {
    const delta0 = this.roleChecked ? delta : { role: "assistant", ...delta };
    this.roleChecked = true;
    return { ...(this.envelope ?? {}), choices: [{ index: 0, delta: delta0, finish_reason: finishReason }] };
  }

  /** The held chunks one by one, read again from what was held. */
  private heldEvents(): RawSseEvent[] {
    const splitter = new SseEventSplitter();
    const events: RawSseEvent[] = [];
    for (const held of this.held) events.push(...splitter.pushText(wireText(held)));
    events.push(...splitter.flush());
    return events;
  }

  /** A held chunk without its call fragments (null when nothing else is left in it). */
  private strip(data: Record<string, unknown>, lastFinish: boolean, runnable: number, textCalls: boolean): Record<string, unknown> | null {
    const choices = Array.isArray(data.choices) ? data.choices : null;
    let keep = !choices || choices.length === 0 || (data.usage !== undefined && data.usage !== null);
    const stripped = choices?.map((choice) => {
      if (!isPlainObject(choice)) return choice;
      const { tool_calls: _calls, function_call: _legacy, ...delta } = isPlainObject(choice.delta) ? choice.delta : {};
      let finish = typeof choice.finish_reason === "string" && choice.finish_reason !== "" ? choice.finish_reason : null;
      if (finish !== null && !lastFinish) finish = null;
      if (finish !== null) {
        const fixed = runnable > 0 && (finish === "stop" || finish === "eos" || finish === "end_turn") ? "tool_calls" : runnable === 0 && (finish === "tool_calls" || finish === "function_call") ? "stop" : finish;
        if (fixed !== finish) {
          const code = runnable === 0 ? "stop_reason_without_calls" : textCalls ? "finish_reason_text_calls" : "finish_reason_stop_with_tool_calls";
          this.tap.report({ action: "normalized", code, message: `finish_reason '${finish}' became '${fixed}' to match the calls delivered${textCalls ? " (calls read from the text)" : ""}.` });
          finish = fixed;
        }
        keep = true;
      }
      if (hasText(delta)) keep = true;
      return { ...choice, delta, finish_reason: finish };
    });
    return keep ? { ...data, ...(stripped ? { choices: stripped } : {}) } : null;
  }
}

/** The text and reasoning released at the end of the body, as a Chat delta. */
function releasedDelta(released: { text: string; reasoning: string }): Record<string, unknown> {
  return { ...(released.reasoning !== "" ? { reasoning_content: released.reasoning } : {}), ...(released.text !== "" ? { content: released.text } : {}) };
}

function carriesFinish(data: unknown): boolean {
  if (!isPlainObject(data) || !Array.isArray(data.choices)) return false;
  return data.choices.some((choice) => isPlainObject(choice) && typeof choice.finish_reason === "string" && choice.finish_reason !== "");
}

function hasText(delta: Record<string, unknown>): boolean {
  const content = delta.content;
  if ((typeof content === "string" && content !== "") || (Array.isArray(content) && content.length > 0)) return true;
  for (const key of ["reasoning_content", "reasoning", "refusal"]) {
    const value = delta[key];
    if (typeof value === "string" && value !== "") return true;
  }
  return Array.isArray(delta.reasoning_details) && delta.reasoning_details.length > 0;
}

function callEntry(call: ToolCall, index: number): Record<string, unknown> {
  const extra = extraFields(call, ["choice", "legacyFunctionCall", "customToolInput", "thoughtSignature"]);
  const args = call.arguments ?? {};
  if (call.providerFields?.customToolInput === true && typeof args.input === "string") {
    return { index, id: call.id, type: "custom", custom: { name: call.name, input: args.input }, ...extra };
  }
  return { index, id: call.id, type: "function", function: { name: call.name, arguments: JSON.stringify(args) }, ...extra };
}

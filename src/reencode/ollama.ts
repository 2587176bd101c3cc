import { createDecoder } from "../providers/registry.js";
import type { DecodedTurn, DecoderOptions, ToolCall } from "../types.js";
import { DecoderTap, decodedAsSent, isPlainObject } from "./common.js";
import { encodeOut } from "./sse-events.js";
import type { Reencoder, RepairReport } from "./types.js";
import { ollamaText, ReleasedText, rewriteOllamaLine, TEXT_CALL_REPORT } from "./text-calls.js";

/**
 * Ollama native `/api/chat` (NDJSON): decoded, then re-emitted line by line. Calls arrive whole, so
 * nothing is held, except behind a call whose arguments do not parse strictly, which the decoder
 * decides with the stop reason: its line and the lines after it wait for that verdict. A line
 * passes as it came unless its `tool_calls` need a fix (no id or a
 * colliding id, arguments sent as a string, the same call sent again in a later line); then the
 * line is re-sent with `tool_calls` holding exactly the calls toolwire decoded from it (its ids,
 * arguments as objects). Invalid calls are withheld from the line.
 *
 * With `textCalls`: each line carries the text and thinking the decoder released for it, the calls
 * read from the text go out in a line of their own (`message.tool_calls`, whole) once their markup
 * closes, and the `done: true` line waits for the end of the body, when the text still held and
 * the calls still open are released before it. `done_reason` stays as sent (Ollama says `stop`
 * for a turn with calls too).
 */
export function createOllamaReencoder(options: DecoderOptions = {}): Reencoder {
  return new OllamaReencoder(options);
}

class OllamaReencoder implements Reencoder {
  readonly provider = "ollama" as const;
  private readonly tap: DecoderTap;
  private readonly decoder = new TextDecoder();
  private pending = "";
  private ended = false;

  /** With `textCalls`: what the decoder released from the text, per line. */
  private readonly released: ReleasedText | null;
  /** The `done: true` line and what follows it, held (with `textCalls`) until the body ends. */
  private heldDone: Array<() => string> | null = null;
  /** The envelope of the last line (`model`, `created_at`), for the lines toolwire adds. */
  private envelope: Record<string, unknown> = {};
  private textCallsSent = 0;

  constructor(options: DecoderOptions) {
    this.tap = new DecoderTap("ollama", createDecoder("ollama", options));
    this.released = options.textCalls ? new ReleasedText(this.tap) : null;
  }

  get turn(): DecodedTurn | null {
    return this.tap.turn;
  }

  get repairs(): readonly RepairReport[] {
    return this.tap.repairs;
  }

  push(chunk: Uint8Array): Uint8Array[] {
    return encodeOut(this.lines(this.decoder.decode(chunk, { stream: true }), false));
  }

  end(): Uint8Array[] {
    if (this.ended) return [];
    this.ended = true;
    const out = this.lines(this.decoder.decode(), true);
    const ended = this.tap.end();
    // The turn is over: every call is decided.
    if (this.waiting !== null) out.push(this.release());
    if (this.released !== null) {
      out.push(this.textLine(this.released.take(), ended, false));
      for (const line of this.heldDone ?? []) out.push(line());
      this.heldDone = null;
    }
    return encodeOut(out);
  }

  private lines(text: string, last: boolean): string[] {
    const out: string[] = [];
    let start = 0;
    for (;;) {
      const at = text.indexOf("\n", start);
      if (at < 0) break;
      const line = this.pending + text.slice(start, at + 1);
      this.pending = "";
      out.push(this.line(line));
      start = at + 1;
    }
    this.pending += text.slice(start);
    if (last && this.pending !== "") {
      out.push(this.line(this.pending));
      this.pending = "";
    }
    return out;
  }

  /**
   * From the first line holding a call the decoder decides only at the end of the turn (arguments
   * that do not parse strictly: cut or invalid, as the stop reason tells), that line and every
   * later one, in order, with the range of call indexes each opened.
   */
  private waiting: Array<{ raw: string; data: unknown; from: number; to: number }> | null = null;

  /** Calls the decoder has opened so far (Ollama's calls are all the client's, indexed in order). */
  private opened(): number {
    return this.tap.callsAwaitingEnd + this.tap.log.length;
  }

  private line(raw: string): string {
    if (this.heldDone !== null) {
      // After `done: true`: decoded (the decoder reports it), sent after the released text.
      const text = raw.trim();
      if (text !== "") {
        try {
          this.tap.push({ data: JSON.parse(text) });
        } catch {
          this.tap.push({ data: text });
        }
      }
      this.heldDone.push(() => raw);
      return "";
    }
    const text = raw.trim();
    if (text === "") return this.waiting === null ? raw : this.wait(raw, undefined, 0, 0);
    let data: unknown;
    try {
      data = JSON.parse(text);
    } catch {
      this.tap.push({ data: text });
      return this.waiting === null ? raw : this.wait(raw, undefined, 0, 0);
    }
    const from = this.opened();
    const calls = this.tap.push({ data });
    if (this.tap.refused) {
      this.tap.refusedEvent();
      return "";
    }
    const to = this.opened();
    if (this.released !== null) return this.withTextCalls(raw, data, calls, from, to);
    return this.wire(raw, data, calls, from, to);
  }

  /** A line with its text as released and its text calls after it in a line of their own (`textCalls`). */
  private withTextCalls(raw: string, data: unknown, calls: ToolCall[], from: number, to: number): string {
    const released = (this.released as ReleasedText).take();
    if (!isPlainObject(data)) return this.wire(raw, data, calls, from, to);
    if (typeof data.model === "string") this.envelope = { model: data.model, ...(data.created_at !== undefined ? { created_at: data.created_at } : {}) };
    const rewritten = rewriteOllamaLine(data, released);
    let line = "";
    if (rewritten !== "drop") {
      const next = rewritten === "same" ? data : rewritten;
      const nextRaw = rewritten === "same" ? raw : `${JSON.stringify(rewritten)}\n`;
      if (next.done === true) {
        // Written at the end, after the lines queued behind a waiting call and the text released last.
        this.heldDone = [() => this.wire(nextRaw, next, calls, from, to)];
        return this.textLine({ text: "", reasoning: "" }, calls, true);
      }
      line = this.wire(nextRaw, next, calls, from, to);
    }
    return line + this.textLine({ text: "", reasoning: "" }, calls, true);
  }

  /**
   * The calls read from the text among `calls` (and text released at the end) as one line; "" when
   * there is none. `queue`: behind a waiting call, the line waits too.
   */
  private textLine(released: { text: string; reasoning: string }, calls: readonly ToolCall[], queue: boolean): string {
    const entries: unknown[] = [];
    for (const call of calls) {
      if (call.source !== "text") continue;
      if (call.arguments === null) {
        this.tap.withheld(call);
        continue;
      }
      this.tap.rewritten(call, [TEXT_CALL_REPORT.code]);
      entries.push({ id: call.id, function: { index: this.textCallsSent++, name: call.name, arguments: call.arguments } });
    }
    if (entries.length === 0 && released.text === "" && released.reasoning === "") return "";
    const line = `${JSON.stringify({ ...this.envelope, message: ollamaText(released, entries), done: false })}\n`;
    return queue && this.waiting !== null ? this.wait(line, undefined, 0, 0) : line;
  }

  /** A line's wire calls: sent as they came or rewritten, or held behind a call awaiting its verdict. */
  private wire(raw: string, data: unknown, calls: ToolCall[], from: number, to: number): string {
    if (this.waiting !== null) return this.wait(raw, data, from, to);
    if (calls.length < to - from) {
      // A call of this line waits for its verdict: the line, and the lines after it, wait with it.
      this.waiting = [];
      return this.wait(raw, data, from, to);
    }
    return this.rewritten(raw, data, calls);
  }

  /** Queues a line behind an undecided call; sends the queue once every call in it is decided. */
  private wait(raw: string, data: unknown, from: number, to: number): string {
    (this.waiting as NonNullable<typeof this.waiting>).push({ raw, data, from, to });
    return this.tap.callsAwaitingEnd > 0 ? "" : this.release();
  }

  /** The waiting lines, each with the calls it opened (by index, as the decoder ended them). */
  private release(): string {
    const waiting = this.waiting ?? [];
    this.waiting = null;
    let out = "";
    for (const { raw, data, from, to } of waiting) {
      const calls: ToolCall[] = [];
      for (let index = from; index < to; index++) {
        const call = this.tap.ended.get(index);
        if (call) calls.push(call);
      }
      out += data === undefined ? raw : this.rewritten(raw, data, calls);
    }
    return out;
  }

  /** The line as it came when toolwire took its calls as sent, else re-sent with the calls it decoded. */
  private rewritten(raw: string, data: unknown, lineCalls: readonly ToolCall[]): string {
    // Calls read from the text are sent in lines of their own (`textLine`).
    const calls = lineCalls.filter((call) => call.source !== "text");
    if (!isPlainObject(data) || !isPlainObject(data.message)) return raw;
    const entries = Array.isArray(data.message.tool_calls) ? data.message.tool_calls : null;
    if (!entries || entries.length === 0) return raw;
    const asSent =
      calls.length === entries.length &&
      calls.every((call, i) => {
        const entry = entries[i];
        return decodedAsSent(call) && isPlainObject(entry) && entry.id === call.id && isPlainObject(entry.function) && isPlainObject(entry.function.arguments);
      });
    if (asSent) return raw;
    const delivered: ToolCall[] = [];
    for (const call of calls) {
      if (call.arguments === null) this.tap.withheld(call);
      else {
        delivered.push(call);
        this.tap.rewritten(call);
      }
    }
    if (calls.length < entries.length) {
      this.tap.report({ action: "normalized", code: "repeated_call_dropped", message: `${entries.length - calls.length} tool call(s) of a line repeated a call already sent; they were left out.` });
    }
    const toolCalls = delivered.map((call) => ({ id: call.id, function: { ...(typeof call.providerIndex === "number" ? { index: call.providerIndex } : {}), name: call.name, arguments: call.arguments } }));
    const { tool_calls: _calls, ...message } = data.message;
    const rewritten = { ...data, message: toolCalls.length > 0 ? { ...message, tool_calls: toolCalls } : message };
    return `${JSON.stringify(rewritten)}\n`;
  }
}

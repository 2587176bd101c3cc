import type { DecoderOptions, ToolCall } from "../types.js";
import { decodedAsSent, isPlainObject, TappedReencoder } from "./common.js";
import { HoldQueue } from "./hold.js";
import { encodeOut } from "./sse-events.js";
import { ollamaText, ReleasedText, rewriteOllamaLine, TEXT_CALL_REPORT } from "./text-calls.js";
import type { Reencoder } from "./types.js";

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

/** A line written as it is (opening no call), in its turn: behind an undecided call it waits too. */
function asIs(raw: string): Line {
  return { raw, data: undefined, from: 0, to: 0 };
}

/** A line of the body, decoded: its JSON (undefined for a line that is not), and the range of call indexes it opened. */
interface Line {
  raw: string;
  data: unknown;
  from: number;
  to: number;
}

class OllamaReencoder extends TappedReencoder {
  private readonly decoder = new TextDecoder();
  private pending = "";
  private ended = false;
  private readonly queue = new HoldQueue<Line, string>((line, out) => this.handle(line, out));

  /** With `textCalls`: what the decoder released from the text, per line. */
  private readonly released: ReleasedText | null;
  /** The `done: true` line and what follows it, held (with `textCalls`) until the body ends. */
  private heldDone: Line[] | null = null;
  /** The envelope of the last line (`model`, `created_at`), for the lines toolwire adds. */
  private envelope: Record<string, unknown> = {};
  private textCallsSent = 0;

  constructor(options: DecoderOptions) {
    super("ollama", options);
    this.released = options.textCalls ? new ReleasedText(this.tap) : null;
  }

  push(chunk: Uint8Array): Uint8Array[] {
    return encodeOut(this.lines(this.decoder.decode(chunk, { stream: true }), false));
  }

  flush(): Uint8Array[] {
    if (this.ended) return [];
    this.ended = true;
    const out = this.lines(this.decoder.decode(), true);
    const ended = this.tap.end();
    // The turn is over: every call is decided.
    this.queue.settle(out, true);
    if (this.released !== null) {
      // Then the text released last and the calls read from it, then the `done: true` line.
      this.textLine(this.released.take(), ended, out);
      for (const line of this.heldDone ?? []) this.queue.push(line, out);
      this.heldDone = null;
      this.queue.settle(out, true);
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
      this.line(line, out);
      start = at + 1;
    }
    this.pending += text.slice(start);
    if (last && this.pending !== "") {
      this.line(this.pending, out);
      this.pending = "";
    }
    return out;
  }

  /** Calls the decoder has opened so far (Ollama's calls are all the client's, indexed in order). */
  private opened(): number {
    return this.tap.callsAwaitingEnd + this.tap.log.length;
  }

  private line(raw: string, out: string[]): void {
    const text = raw.trim();
    let data: unknown;
    if (text !== "") {
      try {
        data = JSON.parse(text);
      } catch {
        this.tap.push({ data: text });
      }
    }
    if (this.heldDone !== null) {
      // After `done: true`: decoded (the decoder reports it), sent as it came after the released text.
      if (data !== undefined) this.tap.push({ data });
      this.heldDone.push(asIs(raw));
      return;
    }
    const from = this.opened();
    if (data !== undefined) {
      const calls = this.tap.push({ data });
      if (this.tap.refused) {
        this.tap.refusedEvent();
        return;
      }
      if (this.released !== null) {
        this.withTextCalls({ raw, data, from, to: this.opened() }, calls, this.released.take(), out);
        return;
      }
    }
    this.queue.push({ raw, data, from, to: this.opened() }, out);
  }

  /**
   * A line with its text as released and its text calls after it in a line of their own
   * (`textCalls`); the `done: true` line is held for the end of the body.
   */
  private withTextCalls(line: Line, calls: readonly ToolCall[], released: { text: string; reasoning: string }, out: string[]): void {
    const data = line.data;
    if (!isPlainObject(data)) {
      this.queue.push(line, out);
      return;
    }
    if (typeof data.model === "string") this.envelope = { model: data.model, ...(data.created_at !== undefined ? { created_at: data.created_at } : {}) };
    const rewritten = rewriteOllamaLine(data, released);
    if (rewritten !== "drop") {
      const next = rewritten === "same" ? line : { ...line, raw: `${JSON.stringify(rewritten)}\n`, data: rewritten };
      // Written at the end, after the lines held behind an undecided call and the text released last.
      if ((next.data as Record<string, unknown>).done === true) this.heldDone = [next];
      else this.queue.push(next, out);
    }
    this.textLine({ text: "", reasoning: "" }, calls, out);
  }

  /**
   * The calls read from the text among `calls` (and text released at the end) as one line, none
   * when there is nothing to send. Reported now; behind an undecided wire call the line waits too.
   */
  private textLine(released: { text: string; reasoning: string }, calls: readonly ToolCall[], out: string[]): void {
    const entries: unknown[] = [];
    for (const call of calls) {
      if (call.textSyntax === undefined) continue;
      if (call.arguments === null) {
        this.tap.withheld(call);
        continue;
      }
      this.tap.rewritten(call, [TEXT_CALL_REPORT.code]);
      entries.push({ id: call.id, function: { index: this.textCallsSent++, name: call.name, arguments: call.arguments } });
    }
    if (entries.length === 0 && released.text === "" && released.reasoning === "") return;
    this.queue.push(asIs(`${JSON.stringify({ ...this.envelope, message: ollamaText(released, entries), done: false })}\n`), out);
  }

  /**
   * A line holding a call the decoder decides only at the end of the turn (arguments that do not
   * parse strictly: cut or invalid, as the stop reason tells) holds, with every later line, until
   * no call is left undecided.
   */
  private handle(line: Line, out: string[]): void {
    const calls = this.callsOf(line);
    if (calls.length < line.to - line.from) {
      this.queue.hold({ decided: () => this.tap.callsAwaitingEnd === 0, release: (later) => later.push(this.rewritten(line.raw, line.data, this.callsOf(line))) });
      return;
    }
    out.push(line.data === undefined ? line.raw : this.rewritten(line.raw, line.data, calls));
  }

  /** The calls a line opened (by index, as the decoder ended them). */
  private callsOf(line: Line): ToolCall[] {
    const calls: ToolCall[] = [];
    for (let index = line.from; index < line.to; index++) {
      const call = this.tap.ended.get(index);
      if (call) calls.push(call);
    }
    return calls;
  }

  /** The line as it came when toolwire took its calls as sent, else re-sent with the calls it decoded. */
  private rewritten(raw: string, data: unknown, lineCalls: readonly ToolCall[]): string {
    // Calls read from the text are sent in lines of their own (`textLine`).
    const calls = lineCalls.filter((call) => call.textSyntax === undefined);
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

import type { DecoderOptions, ToolCall } from "../types.js";
import { decodedAsSent, isPlainObject, TappedReencoder } from "./common.js";
import { HoldQueue } from "./hold.js";
import { encodeOut } from "./sse-events.js";
import type { Reencoder } from "./types.js";

/**
 * Ollama native `/api/chat` (NDJSON): decoded, then re-emitted line by line. Calls arrive whole, so
 * nothing is held, except behind a call whose arguments do not parse strictly, which the decoder
 * decides with the stop reason: its line and the lines after it wait for that verdict. A line
 * passes as it came unless its `tool_calls` need a fix (no id or a
 * colliding id, arguments sent as a string, the same call sent again in a later line); then the
 * line is re-sent with `tool_calls` holding exactly the calls toolwire decoded from it (its ids,
 * arguments as objects). Invalid calls are withheld from the line.
 */
export function createOllamaReencoder(options: DecoderOptions = {}): Reencoder {
  return new OllamaReencoder(options);
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

  constructor(options: DecoderOptions) {
    super("ollama", options);
  }

  push(chunk: Uint8Array): Uint8Array[] {
    return encodeOut(this.lines(this.decoder.decode(chunk, { stream: true }), false));
  }

  flush(): Uint8Array[] {
    if (this.ended) return [];
    this.ended = true;
    const out = this.lines(this.decoder.decode(), true);
    this.tap.end();
    // The turn is over: every call is decided.
    this.queue.settle(out, true);
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
    const from = this.opened();
    if (data !== undefined) {
      this.tap.push({ data });
      if (this.tap.refused) {
        this.tap.refusedEvent();
        return;
      }
    }
    this.queue.push({ raw, data, from, to: this.opened() }, out);
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
  private rewritten(raw: string, data: unknown, calls: readonly ToolCall[]): string {
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

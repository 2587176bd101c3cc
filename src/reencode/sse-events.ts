import { parseSseData } from "../framing/sse.js";
import type { ProviderEvent } from "../types.js";

/**
 * One SSE event as it came off the wire: its exact bytes (blank line included), and what it
 * means. `event` is null for blocks that dispatch nothing (comments, keep-alives, stray blank
 * lines): they are forwarded as they are.
 */
export interface RawSseEvent {
  raw: Uint8Array;
  event: ProviderEvent | null;
}

const LF = 0x0a;
const CR = 0x0d;

/**
 * Splits an SSE body into its events without re-encoding them, so that an event nobody needs to
 * change can be forwarded byte for byte. Splitting works on bytes: line terminators are ASCII and
 * never occur inside a UTF-8 sequence, so a chunk boundary anywhere is fine. Each byte is looked at
 * once; bytes of an unfinished event are kept as the chunks they arrived in and joined once.
 */
export class SseEventSplitter {
  private pending: Uint8Array[] = [];
  private pendingLength = 0;
  /** Characters on the current line so far (terminator excluded). */
  private lineLength = 0;
  /** The previous byte was a CR: an LF now belongs to the same terminator. */
  private afterCR = false;
  /** A blank line ended with CR: the event ends after a following LF, or before any other byte. */
  private boundaryAfterCR = false;
  private readonly decoder = new TextDecoder();

  push(chunk: Uint8Array): RawSseEvent[] {
    const out: RawSseEvent[] = [];
    let start = 0;
    for (let i = 0; i < chunk.length; i++) {
      const byte = chunk[i] as number;
      if (this.boundaryAfterCR) {
        this.boundaryAfterCR = false;
        if (byte === LF) {
          this.afterCR = false;
          out.push(this.take(chunk, start, i + 1));
          start = i + 1;
          continue;
        }
        out.push(this.take(chunk, start, i));
        start = i;
      }
      if (byte === LF) {
        if (this.afterCR) {
          this.afterCR = false;
          continue;
        }
        if (this.lineLength === 0) {
          out.push(this.take(chunk, start, i + 1));
          start = i + 1;
        }
        this.lineLength = 0;
      } else if (byte === CR) {
        this.afterCR = true;
        if (this.lineLength === 0) this.boundaryAfterCR = true;
        this.lineLength = 0;
      } else {
        this.afterCR = false;
        this.lineLength++;
      }
    }
    if (start < chunk.length) {
      this.pending.push(start === 0 ? chunk : chunk.subarray(start));
      this.pendingLength += chunk.length - start;
    }
    return out;
  }

  /** The last event, if the body ended without its blank line. */
  finish(): RawSseEvent[] {
    this.boundaryAfterCR = false;
    if (this.pendingLength === 0) return [];
    return [this.take(new Uint8Array(0), 0, 0)];
  }

  private take(chunk: Uint8Array, start: number, end: number): RawSseEvent {
    let raw: Uint8Array;
    if (this.pendingLength === 0) raw = chunk.slice(start, end);
    else {
      raw = new Uint8Array(this.pendingLength + end - start);
      let offset = 0;
      for (const piece of this.pending) {
        raw.set(piece, offset);
        offset += piece.length;
      }
      raw.set(chunk.subarray(start, end), offset);
      this.pending = [];
      this.pendingLength = 0;
    }
    return { raw, event: parseSseEvent(this.decoder.decode(raw)) };
  }
}

/** The event an SSE block dispatches (WHATWG rules: `data` lines joined by LF), or null. */
export function parseSseEvent(text: string): ProviderEvent | null {
  let data: string | null = null;
  let name: string | undefined;
  let position = 0;
  if (text.charCodeAt(0) === 0xfeff) position = 1;
  while (position < text.length) {
    let end = position;
    while (end < text.length && text.charCodeAt(end) !== LF && text.charCodeAt(end) !== CR) end++;
    const line = text.slice(position, end);
    position = end + (text.charCodeAt(end) === CR && text.charCodeAt(end + 1) === LF ? 2 : 1);
    if (line === "" || line.startsWith(":")) continue;
    const colon = line.indexOf(":");
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (field === "data") data = data === null ? value : `${data}\n${value}`;
    else if (field === "event") name = value;
  }
  if (data === null) return null;
  const parsed = parseSseData(data);
  return name !== undefined && name !== "" ? { event: name, data: parsed } : { data: parsed };
}

const encoder = new TextEncoder();

/** One event as SSE bytes, for events that had to be rewritten or added. */
export function sseBytes(data: unknown, name?: string): Uint8Array {
  const payload = typeof data === "string" ? data : JSON.stringify(data);
  let out = name !== undefined ? `event: ${name}\n` : "";
  for (const line of payload.split("\n")) out += `data: ${line}\n`;
  return encoder.encode(`${out}\n`);
}

/** A comment line (what a keep-alive should have been). */
export function sseComment(text: string): Uint8Array {
  return encoder.encode(`: ${text.replace(/[\r\n]+/g, " ")}\n\n`);
}

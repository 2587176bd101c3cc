import { framedEvent } from "../framing/framed-event.js";
import { parseSseData } from "../framing/sse.js";
import type { ProviderEvent } from "../types.js";

/**
 * One SSE event as it came off the wire: its exact text (blank line included), and what it
 * means. `event` is null for blocks that dispatch nothing (comments, keep-alives, stray blank
 * lines): they are forwarded as they are.
 */
export interface RawSseEvent {
  raw: string;
  event: ProviderEvent | null;
}

const LF = 0x0a;
const CR = 0x0d;

/**
 * Splits an SSE body into its events without re-encoding them, so that an event nobody needs to
 * change can be forwarded as it came. The body is decoded as UTF-8 once, as a stream (a chunk may
 * end inside a character); forwarding the text re-encodes it to the same bytes (a body that is not
 * valid UTF-8 gets U+FFFD where any SSE client would see one too). Each character is looked at
 * once; text of an unfinished event is kept as the pieces it arrived in and joined once.
 */
export class SseEventSplitter {
  private pending: string[] = [];
  /** Characters on the current line so far (terminator excluded). */
  private lineLength = 0;
  /** The previous character was a CR: an LF now belongs to the same terminator. */
  private afterCR = false;
  /** A blank line ended with CR: the event ends after a following LF, or before any other character. */
  private boundaryAfterCR = false;
  private readonly decoder = new TextDecoder();

  push(chunk: Uint8Array): RawSseEvent[] {
    return this.pushText(this.decoder.decode(chunk, { stream: true }));
  }

  pushText(text: string): RawSseEvent[] {
    if (!this.afterCR && !this.boundaryAfterCR && text.indexOf("\r") < 0) return this.pushLf(text);
    const out: RawSseEvent[] = [];
    let start = 0;
    // Locals, not fields, in the loop: this runs once per character of the body.
    let lineLength = this.lineLength;
    let afterCR = this.afterCR;
    let boundaryAfterCR = this.boundaryAfterCR;
    const length = text.length;
    for (let i = 0; i < length; i++) {
      const code = text.charCodeAt(i);
      if (code > CR && !boundaryAfterCR) {
        afterCR = false;
        lineLength++;
        continue;
      }
      if (boundaryAfterCR) {
        boundaryAfterCR = false;
        if (code === LF) {
          afterCR = false;
          out.push(this.take(text, start, i + 1));
          start = i + 1;
          continue;
        }
        out.push(this.take(text, start, i));
        start = i;
      }
      if (code === LF) {
        if (afterCR) {
          afterCR = false;
          continue;
        }
        if (lineLength === 0) {
          out.push(this.take(text, start, i + 1));
          start = i + 1;
        }
        lineLength = 0;
      } else if (code === CR) {
        afterCR = true;
        if (lineLength === 0) boundaryAfterCR = true;
        lineLength = 0;
      } else {
        afterCR = false;
        lineLength++;
      }
    }
    this.lineLength = lineLength;
    this.afterCR = afterCR;
    this.boundaryAfterCR = boundaryAfterCR;
    if (start < length) this.pending.push(start === 0 ? text : text.slice(start));
    return out;
  }

  /**
   * The common case, text with LF line ends only: events end at "\n\n", found by indexOf rather
   * than a loop over every character. A run of blank lines may be grouped differently than the
   * general path groups it; the text and the events dispatched are the same.
   */
  private pushLf(text: string): RawSseEvent[] {
    const out: RawSseEvent[] = [];
    let start = 0;
    if (this.lineLength === 0 && text.charCodeAt(0) === LF) {
      out.push(this.take(text, 0, 1));
      start = 1;
    }
    for (;;) {
      const at = text.indexOf("\n\n", start);
      if (at < 0) break;
      out.push(this.take(text, start, at + 2));
      start = at + 2;
    }
    if (start < text.length) {
      this.pending.push(start === 0 ? text : text.slice(start));
      this.lineLength = text.charCodeAt(text.length - 1) === LF ? 0 : 1;
    } else this.lineLength = 0;
    return out;
  }

  /** The last event, if the body ended without its blank line. */
  finish(): RawSseEvent[] {
    const rest = this.pushText(this.decoder.decode());
    this.boundaryAfterCR = false;
    if (this.pending.length > 0) rest.push(this.take("", 0, 0));
    return rest;
  }

  private take(text: string, start: number, end: number): RawSseEvent {
    let raw = text.slice(start, end);
    if (this.pending.length > 0) {
      this.pending.push(raw);
      raw = this.pending.join("");
      this.pending = [];
    }
    return { raw, event: parseSseEvent(raw) };
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
  // framedEvent: a short payload is provably shallow, so the decoder skips its depth walk.
  return framedEvent(parseSseData(data), name !== undefined && name !== "" ? name : undefined, data.length);
}

const encoder = new TextEncoder();

/** One event as SSE text, for events that had to be rewritten or added. */
export function sseText(data: unknown, name?: string): string {
  const payload = typeof data === "string" ? data : JSON.stringify(data);
  let out = name !== undefined ? `event: ${name}\n` : "";
  for (const line of payload.split("\n")) out += `data: ${line}\n`;
  return `${out}\n`;
}

/** A comment line (what a keep-alive should have been). */
export function sseComment(text: string): string {
  return `: ${text.replace(/[\r\n]+/g, " ")}\n\n`;
}

/** The text released by one push, as one chunk of bytes (none when nothing was released). */
export function encodeOut(pieces: readonly string[]): Uint8Array[] {
  if (pieces.length === 0) return [];
  const text = pieces.length === 1 ? (pieces[0] as string) : pieces.join("");
  return text.length === 0 ? [] : [encoder.encode(text)];
}

import { framedEvent } from "../framing/framed-event.js";
import type { ProviderEvent } from "../types.js";

/**
 * One piece of a streamed JSON-array body (Gemini `streamGenerateContent` without `alt=sse`) as it
 * came off the wire: either an element, with what it means, or the text between elements (`[`,
 * `,\r\n`, `]`, white space, anything after the array), which is forwarded as it is.
 */
export type RawArrayPiece = { kind: "element"; raw: string; event: ProviderEvent } | { kind: "between"; raw: string };

type Phase = "start" | "between" | "element" | "after";

/**
 * Splits a JSON-array body into its elements without re-encoding them (the raw-preserving twin of
 * `createJsonArrayFramer`), so that an element nobody needs to change is forwarded as it came. A
 * body that is one object (an HTTP error body) is one element. Each character is looked at once;
 * text between elements is released as soon as it is read, an element when its last character is.
 * Pieces are text: forwarding one re-encodes it to the same bytes (a body that is not valid UTF-8
 * gets U+FFFD where any JSON client would see one too).
 */
export class JsonArraySplitter {
  private readonly decoder = new TextDecoder();
  private phase: Phase = "start";
  private single = false;
  private pieces: string[] = [];
  private depth = 0;
  private inString = false;
  private escaped = false;
  /** The element is a scalar (it ends at a delimiter rather than a closing bracket). */
  private scalar = false;

  push(chunk: Uint8Array): RawArrayPiece[] {
    return this.scan(this.decoder.decode(chunk, { stream: true }));
  }

  /** The body ended: the rest of it (an element cut short is forwarded as text: it cannot be decoded). */
  flush(): RawArrayPiece[] {
    const out = this.scan(this.decoder.decode());
    if (this.phase === "element") {
      const text = this.pieces.join("");
      this.pieces = [];
      if (this.scalar && !this.inString && text.trim() !== "") out.push(element(text));
      else if (text !== "") out.push({ kind: "between", raw: text });
    }
    this.phase = "after";
    return out;
  }

  private scan(text: string): RawArrayPiece[] {
    const out: RawArrayPiece[] = [];
    let start = 0;
    const length = text.length;
    // Locals, not fields, in the loop: this runs once per character of the body.
    let phase = this.phase;
    let depth = this.depth;
    let inString = this.inString;
    let escaped = this.escaped;
    let scalar = this.scalar;
    for (let i = 0; i < length; i++) {
      const ch = text.charCodeAt(i);
      if (phase === "element") {
        if (inString) {
          if (escaped) escaped = false;
          else if (ch === 0x5c) escaped = true;
          else if (ch === 0x22) {
            inString = false;
            if (scalar) {
              // A string element ends with its closing quote.
              out.push(this.take(text, start, i + 1));
              start = i + 1;
              phase = "between";
            }
          }
          continue;
        }
        if (scalar) {
          if (ch === 0x2c || ch === 0x5d || isSpace(ch)) {
            out.push(this.take(text, start, i));
            start = i;
            phase = "between";
            i--;
          }
          continue;
        }
        if (ch === 0x22) inString = true;
        else if (ch === 0x7b || ch === 0x5b) depth++;
        else if (ch === 0x7d || ch === 0x5d) {
          depth--;
          if (depth === 0) {
            out.push(this.take(text, start, i + 1));
            start = i + 1;
            phase = this.single ? "after" : "between";
          }
        }
        continue;
      }
      if (phase === "after" || isSpace(ch) || ch === 0xfeff) continue;
      if (phase === "start") {
        if (ch === 0x5b) {
          phase = "between";
          continue;
        }
        this.single = ch === 0x7b;
        if (!this.single) {
          // Not JSON at all: forwarded as text, never decoded.
          phase = "after";
          continue;
        }
      } else if (ch === 0x2c) continue;
      else if (ch === 0x5d) {
        phase = "after";
        continue;
      }
      // An element begins: what came before it is forwarded.
      if (i > start) out.push({ kind: "between", raw: text.slice(start, i) });
      start = i;
      phase = "element";
      depth = ch === 0x7b || ch === 0x5b ? 1 : 0;
      scalar = depth === 0;
      inString = ch === 0x22;
      escaped = false;
    }
    this.phase = phase;
    this.depth = depth;
    this.inString = inString;
    this.escaped = escaped;
    this.scalar = scalar;
    if (start < length) {
      if (phase === "element") this.pieces.push(start === 0 ? text : text.slice(start));
      else out.push({ kind: "between", raw: text.slice(start) });
    }
    return out;
  }

  private take(text: string, start: number, end: number): RawArrayPiece {
    let raw = text.slice(start, end);
    if (this.pieces.length > 0) {
      this.pieces.push(raw);
      raw = this.pieces.join("");
      this.pieces = [];
    }
    return element(raw);
  }
}

function element(raw: string): RawArrayPiece {
  let data: unknown;
  try {
    data = JSON.parse(raw);
  } catch {
    data = raw;
  }
  return { kind: "element", raw, event: framedEvent(data, undefined, raw.length) };
}

function isSpace(ch: number): boolean {
  return ch === 0x20 || ch === 0x0a || ch === 0x0d || ch === 0x09;
}

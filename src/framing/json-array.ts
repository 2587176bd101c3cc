import type { Diagnostic, ProviderEvent } from "../types.js";
import { framedEvent } from "./framed-event.js";
import type { DiagnosticCode } from "../diagnostics/codes.js";
import type { Framer } from "./framer.js";

type Phase = "start" | "between" | "element" | "after" | "failed";

export interface JsonArrayFramerOptions {
  /** Longest element, in characters, before the framer stops reading (what it must buffer for one element). */
  maxLineChars?: number;
}

/**
 * A push framer for a body that streams one JSON array (Gemini `streamGenerateContent` without
 * `alt=sse`): each top-level element becomes one event as soon as its closing bracket arrives,
 * with bytes split anywhere. A body that is a single object instead (an HTTP error body) is one
 * event.
 */
export function createJsonArrayFramer(options: JsonArrayFramerOptions = {}): Framer {
  const decoder = new TextDecoder("utf-8");
  const maxLineChars = options.maxLineChars ?? Number.POSITIVE_INFINITY;
  /** Characters of the element being read held in `pieces`. */
  let pendingLength = 0;
  const diagnostics: Diagnostic[] = [];
  let phase: Phase = "start";
  /** True when the body is one bare object rather than an array. */
  let single = false;
  let pieces: string[] = [];
  let depth = 0;
  let inString = false;
  let escaped = false;
  let offset = 0;

  const fail = (code: DiagnosticCode, message: string): void => {
    phase = "failed";
    diagnostics.push({ code, severity: "error", message });
  };

  const tooLong = (length: number): boolean => {
    if (length <= maxLineChars) return false;
    fail("json_array_element_too_long", `An array element exceeded ${maxLineChars} characters; the rest of the body was not read.`);
    return true;
  };

  const emit = (text: string, out: ProviderEvent[]): void => {
    pendingLength = 0;
    // Checked on complete elements too, so that the outcome does not depend on chunking.
    if (tooLong(text.length)) return;
    out.push(elementEvent(text));
  };

  const scan = (text: string): ProviderEvent[] => {
    const out: ProviderEvent[] = [];
    let elementStart = phase === "element" ? 0 : -1;
    for (let i = 0; i < text.length && phase !== "failed"; i++) {
      const ch = text.charCodeAt(i);
      if (phase === "element") {
        if (inString) {
          if (escaped) escaped = false;
          else if (ch === 0x5c) escaped = true;
          else if (ch === 0x22) inString = false;
          continue;
        }
        const nesting = nestingChange(ch);
        if (ch === 0x22) inString = true;
        else if (nesting !== 0) {
          depth += nesting;
          if (depth === 0 && nesting < 0) {
            pieces.push(text.slice(elementStart, i + 1));
            emit(pieces.join(""), out);
            pieces = [];
            elementStart = -1;
            if ((phase as Phase) !== "failed") phase = single ? "after" : "between";
          }
        } else if (depth === 0 && (ch === 0x2c || ch === 0x5d || isSpace(ch))) {
          // A scalar element ends at the first delimiter after it.
          pieces.push(text.slice(elementStart, i));
          emit(pieces.join(""), out);
          pieces = [];
          elementStart = -1;
          if ((phase as Phase) !== "failed") phase = ch === 0x5d ? "after" : "between";
        }
        continue;
      }
      if (isSpace(ch) || (ch === 0xfeff && offset + i === 0)) continue;
      if (phase === "start") {
        if (ch === 0x5b) {
          phase = "between";
        } else if (ch === 0x7b) {
          single = true;
          phase = "element";
          elementStart = i;
          depth = 1;
        } else {
          fail(
            "json_array_not_array",
            `The body does not start with a JSON array or object (found ${JSON.stringify(text[i])} at character ${offset + i})${ch === 0x64 ? "; it looks like Server-Sent Events: use the sse framing" : ""}.`,
          );
        }
      } else if (phase === "between") {
        if (ch === 0x2c) continue;
        if (ch === 0x5d) {
          phase = "after";
          continue;
        }
        phase = "element";
        elementStart = i;
        depth = 0;
        if (ch === 0x7b || ch === 0x5b) depth = 1;
        else if (ch === 0x22) inString = true;
      } else if (phase === "after") {
        fail("json_array_trailing_data", `Data follows the end of the JSON ${single ? "object" : "array"} at character ${offset + i}; it was not read.`);
      }
    }
    if (phase === "element" && elementStart >= 0) {
      const rest = text.slice(elementStart);
      pieces.push(rest);
      pendingLength += rest.length;
      if (tooLong(pendingLength)) pieces = [];
    }
    offset += text.length;
    return out;
  };

  return {
    diagnostics,
    push(chunk) {
      if (phase === "failed") return [];
      const text = typeof chunk === "string" ? chunk : decoder.decode(chunk, { stream: true });
      return text.length > 0 ? scan(text) : [];
    },
    flush() {
      if (phase === "failed") return [];
      const tail = decoder.decode();
      const out = tail.length > 0 ? scan(tail) : [];
      if (phase === "element") {
        const partial = pieces.join("");
        pieces = [];
        if (depth === 0 && !inString && partial.trim() !== "") {
          emit(partial, out);
        } else {
          diagnostics.push({
            code: "json_array_truncated",
            severity: "warning",
            message: `The body ended inside an array element (${partial.length} characters received); the incomplete element was not decoded.`,
          });
        }
      } else if (phase === "between" || phase === "start") {
        diagnostics.push({
          code: "json_array_unterminated",
          severity: "info",
          message: phase === "start" ? "The body is empty." : "The body ended before the closing ']' of the array.",
        });
      }
      phase = "failed";
      return out;
    },
  };
}

/** How a character changes the bracket depth of JSON text outside strings. */
function nestingChange(ch: number): number {
  return ch === 0x7b || ch === 0x5b ? 1 : ch === 0x7d || ch === 0x5d ? -1 : 0;
}

function isSpace(ch: number): boolean {
  return ch === 0x20 || ch === 0x0a || ch === 0x0d || ch === 0x09;
}

/**
 * One piece of a streamed JSON-array body (Gemini `streamGenerateContent` without `alt=sse`) as it
 * came off the wire: either an element, with what it means, or the text between elements (`[`,
 * `,\r\n`, `]`, white space, anything after the array), which is forwarded as it is.
 */
export type RawArrayPiece = { kind: "element"; raw: string; event: ProviderEvent } | { kind: "between"; raw: string };

/**
 * Splits a JSON-array body into its elements without re-encoding them (the raw-preserving twin of
 * `createJsonArrayFramer`, which test/framing/twins.test.ts runs beside it), so that an element nobody needs to change is forwarded as it came. A
 * body that is one object (an HTTP error body) is one element. Each character is looked at once;
 * text between elements is released as soon as it is read, an element when its last character is.
 * Pieces are text: forwarding one re-encodes it to the same bytes (a body that is not valid UTF-8
 * gets U+FFFD where any JSON client would see one too).
 */
export class JsonArraySplitter {
  private readonly decoder = new TextDecoder();
  private phase: Exclude<Phase, "failed"> = "start";
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
        else {
          depth += nestingChange(ch);
          if (depth === 0 && (ch === 0x7d || ch === 0x5d)) {
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
  return { kind: "element", raw, event: elementEvent(raw) };
}

/** An element as the event it is: its JSON, or its text when it is not JSON (for the decoder to report). */
function elementEvent(text: string): ProviderEvent {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    data = text;
  }
  return framedEvent(data, undefined, text.length);
}

/** Serializes payloads as a JSON-array body (tests and replay servers). */
export function encodeJsonArray(payloads: readonly unknown[]): string {
  return "[" + payloads.map((payload) => JSON.stringify(payload)).join(",\r\n") + "]";
}

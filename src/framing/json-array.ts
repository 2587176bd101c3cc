import type { Diagnostic, ProviderEvent } from "../types.js";
import { isJsonSpace } from "../json/whitespace.js";
import { framedEvent } from "./framed-event.js";
import type { DiagnosticCode } from "../diagnostics/codes.js";
import type { Framer } from "./framer.js";

type Phase = "start" | "between" | "element" | "after";

export interface JsonArrayFramerOptions {
  /** Longest element, in characters, before the framer stops reading (what it must buffer for one element). */
  maxLineChars?: number;
}

/**
 * A push framer for a body that streams one JSON array (Gemini `streamGenerateContent` without
 * `alt=sse`): each top-level element becomes one event as soon as its closing bracket arrives,
 * with bytes split anywhere. A body that is a single object instead (an HTTP error body) is one
 * event. It reads through `JsonArraySplitter` (the re-encoders' reader) and adds what a decoder
 * needs: the element limit and the diagnostics; the reading stops at the first error.
 */
export function createJsonArrayFramer(options: JsonArrayFramerOptions = {}): Framer {
  const maxLineChars = options.maxLineChars ?? Number.POSITIVE_INFINITY;
  const diagnostics: Diagnostic[] = [];
  const splitter = new JsonArraySplitter();
  let failed = false;

  const fail = (code: DiagnosticCode, message: string): void => {
    failed = true;
    diagnostics.push({ code, severity: "error", message });
  };

  const tooLong = (): void => fail("json_array_element_too_long", `An array element exceeded ${maxLineChars} characters; the rest of the body was not read.`);

  const events = (pieces: readonly RawArrayPiece[]): ProviderEvent[] => {
    const out: ProviderEvent[] = [];
    for (const piece of pieces) {
      if (piece.kind !== "element") continue;
      // Checked on complete elements too, so that the outcome does not depend on chunking.
      if (piece.raw.length > maxLineChars) {
        tooLong();
        return out;
      }
      out.push(piece.event);
    }
    const stray = splitter.stray;
    if (stray?.after === false) {
      const hint = stray.found === "d" ? "; it looks like Server-Sent Events: use the sse framing" : "";
      fail("json_array_not_array", `The body does not start with a JSON array or object (found ${JSON.stringify(stray.found)} at character ${stray.at})${hint}.`);
    } else if (stray) {
      fail("json_array_trailing_data", `Data follows the end of the JSON ${splitter.bareObject ? "object" : "array"} at character ${stray.at}; it was not read.`);
    } else if (splitter.pendingChars > maxLineChars) tooLong();
    return out;
  };

  return {
    diagnostics,
    push(chunk) {
      if (failed) return [];
      return events(typeof chunk === "string" ? splitter.pushText(chunk) : splitter.push(chunk));
    },
    flush() {
      if (failed) return [];
      const state = splitter.state;
      const pieces = splitter.flush();
      const out = events(pieces);
      const last = pieces.at(-1);
      if (failed) return out;
      failed = true;
      if (state === "element" && last?.kind === "between") {
        diagnostics.push({
          code: "json_array_truncated",
          severity: "warning",
          message: `The body ended inside an array element (${last.raw.length} characters received); the incomplete element was not decoded.`,
        });
      } else if (state === "between" || state === "start") {
        diagnostics.push({
          code: "json_array_unterminated",
          severity: "info",
          message: state === "start" ? "The body is empty." : "The body ended before the closing ']' of the array.",
        });
      }
      return out;
    },
  };
}

/** How a character changes the bracket depth of JSON text outside strings. */
function nestingChange(ch: number): number {
  return ch === 0x7b || ch === 0x5b ? 1 : ch === 0x7d || ch === 0x5d ? -1 : 0;
}

/**
 * One piece of a streamed JSON-array body (Gemini `streamGenerateContent` without `alt=sse`) as it
 * came off the wire: either an element, with what it means, or the text between elements (`[`,
 * `,\r\n`, `]`, white space, anything after the array), which is forwarded as it is.
 */
export type RawArrayPiece = { kind: "element"; raw: string; event: ProviderEvent } | { kind: "between"; raw: string };

/**
 * Splits a JSON-array body into its elements without re-encoding them, so that an element nobody
 * needs to change is forwarded as it came (the re-encoders), or read (`createJsonArrayFramer`). A
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
  /** Characters of the element being read held in `pieces`. */
  private held = 0;
  /** Characters scanned before the text being scanned. */
  private read = 0;
  private depth = 0;
  private inString = false;
  private escaped = false;
  /** The element is a scalar (it ends at a delimiter rather than a closing bracket). */
  private scalar = false;

  /**
   * The first text that is not the array's (forwarded as text, never decoded): what was found at
   * which character, before the array or object began, or `after` it ended.
   */
  stray: { found: string; at: number; after: boolean } | null = null;

  /** Where the reading is: before the array, between its elements, inside one, after its end. */
  get state(): Phase {
    return this.phase;
  }

  /** The body is one object rather than an array. */
  get bareObject(): boolean {
    return this.single;
  }

  /** Characters of the element being read that wait for its end (what a reader buffers). */
  get pendingChars(): number {
    return this.held;
  }

  push(chunk: Uint8Array): RawArrayPiece[] {
    return this.scan(this.decoder.decode(chunk, { stream: true }));
  }

  /** Text rather than bytes (a body already decoded). */
  pushText(text: string): RawArrayPiece[] {
    return this.scan(text);
  }

  /** The body ended: the rest of it (an element cut short is forwarded as text: it cannot be decoded). */
  flush(): RawArrayPiece[] {
    const out = this.scan(this.decoder.decode());
    if (this.phase === "element") {
      const text = this.pieces.join("");
      this.pieces = [];
      this.held = 0;
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
          if (ch === 0x2c || ch === 0x5d || isJsonSpace(ch)) {
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
      if (phase === "after") {
        if (this.stray === null && !isJsonSpace(ch)) this.stray = { found: text.charAt(i), at: this.read + i, after: true };
        continue;
      }
      if (isJsonSpace(ch) || ch === 0xfeff) continue;
      if (phase === "start") {
        if (ch === 0x5b) {
          phase = "between";
          continue;
        }
        this.single = ch === 0x7b;
        if (!this.single) {
          // Not JSON at all: forwarded as text, never decoded.
          this.stray = { found: text.charAt(i), at: this.read + i, after: false };
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
      if (phase === "element") {
        this.pieces.push(start === 0 ? text : text.slice(start));
        this.held += length - start;
      } else out.push({ kind: "between", raw: text.slice(start) });
    }
    this.read += length;
    return out;
  }

  private take(text: string, start: number, end: number): RawArrayPiece {
    let raw = text.slice(start, end);
    if (this.pieces.length > 0) {
      this.pieces.push(raw);
      raw = this.pieces.join("");
      this.pieces = [];
      this.held = 0;
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

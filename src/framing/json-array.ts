import type { Diagnostic, ProviderEvent } from "../types.js";
import { framedEvent } from "./framed-event.js";
import type { DiagnosticCode } from "../diagnostics/codes.js";

/**
 * Framing for a body that streams one JSON array, an element at a time (Gemini's
 * `streamGenerateContent` without `alt=sse`): each top-level element becomes one event as soon as
 * its closing bracket arrives, with bytes split anywhere. A body that is a single object instead
 * (an HTTP error body) is one event.
 */
export interface JsonArrayFramer {
  push(chunk: Uint8Array | string): ProviderEvent[];
  finish(): ProviderEvent[];
  readonly diagnostics: Diagnostic[];
}

type Phase = "start" | "between" | "element" | "after" | "failed";

export interface JsonArrayFramerOptions {
  /** Longest element, in characters, before the framer stops reading (what it must buffer for one element). */
  maxElementLength?: number;
}

/**
 * A push framer for a streamed JSON array (Gemini `streamGenerateContent` without `alt=sse`): each
 * element becomes one event as soon as it is complete.
 */
export function createJsonArrayFramer(options: JsonArrayFramerOptions = {}): JsonArrayFramer {
  const decoder = new TextDecoder("utf-8");
  const maxElementLength = options.maxElementLength ?? Number.POSITIVE_INFINITY;
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
    if (length <= maxElementLength) return false;
    fail("json_array_element_too_long", `An array element exceeded ${maxElementLength} characters; the rest of the body was not read.`);
    return true;
  };

  const emit = (text: string, out: ProviderEvent[]): void => {
    pendingLength = 0;
    // Checked on complete elements too, so that the outcome does not depend on chunking.
    if (tooLong(text.length)) return;
    try {
      out.push(framedEvent(JSON.parse(text), undefined, text.length));
    } catch {
      out.push(framedEvent(text, undefined, text.length));
    }
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
        if (ch === 0x22) inString = true;
        else if (ch === 0x7b || ch === 0x5b) depth++;
        else if (ch === 0x7d || ch === 0x5d) {
          depth--;
          if (depth === 0) {
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
    finish() {
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

function isSpace(ch: number): boolean {
  return ch === 0x20 || ch === 0x0a || ch === 0x0d || ch === 0x09;
}

/** Serializes payloads as a JSON-array body (tests and replay servers). */
export function encodeJsonArray(payloads: readonly unknown[]): string {
  return "[" + payloads.map((payload) => JSON.stringify(payload)).join(",\r\n") + "]";
}

import type { Diagnostic, ProviderEvent } from "../types.js";
import { framedEvent } from "./framed-event.js";
import { EventJsonReader } from "./event-template.js";
import type { Framer } from "./framer.js";

export interface NdjsonFramerOptions {
  /**
   * Longest line, in characters, before the framer stops reading (what it must buffer while a
   * line is incomplete). Checked on complete and partial lines alike, so that the outcome does not
   * depend on how the bytes were chunked.
   */
  maxLineChars?: number;
}

/**
 * A push framer for newline-delimited JSON bodies (Ollama's /api/chat): one event per non-blank
 * line, lines cut anywhere across chunks. A line that is not JSON is passed on as a string for the
 * decoder to report; a line longer than `maxLineChars` is a finding.
 */
export function createNdjsonFramer(options: NdjsonFramerOptions = {}): Framer {
  const decoder = new TextDecoder("utf-8");
  // Ollama's lines repeat their envelope around the text, a timestamp and the thinking.
  const json = new EventJsonReader();
  const maxLineChars = options.maxLineChars ?? Number.POSITIVE_INFINITY;
  const diagnostics: Diagnostic[] = [];
  let partial = "";
  let failed = false;

  // The length seen depends on chunking, so the message does not quote it.
  const fail = (_length: number): void => {
    failed = true;
    partial = "";
    diagnostics.push({
      code: "ndjson_line_too_long",
      severity: "error",
      message: `An NDJSON line exceeded ${maxLineChars} characters; the rest of the stream was not read.`,
    });
  };

  /** Complete lines of `text` become events; the unterminated rest is kept. */
  const lines = (text: string): ProviderEvent[] => {
    const events: ProviderEvent[] = [];
    let start = 0;
    let newline = text.indexOf("\n");
    while (newline >= 0) {
      if (newline - start > maxLineChars) {
        fail(newline - start);
        return events;
      }
      pushLine(text.slice(start, newline), events, json);
      start = newline + 1;
      newline = text.indexOf("\n", start);
    }
    partial = text.slice(start);
    if (partial.length > maxLineChars) fail(partial.length);
    return events;
  };

  return {
    diagnostics,
    push(chunk) {
      if (failed) return [];
      const text = typeof chunk === "string" ? chunk : decoder.decode(chunk, { stream: true });
      if (text.indexOf("\n") < 0) {
        partial += text;
        if (partial.length > maxLineChars) fail(partial.length);
        return [];
      }
      return lines(partial + text);
    },
    flush() {
      if (failed) return [];
      const rest = partial + decoder.decode();
      partial = "";
      if (rest.length > maxLineChars) {
        fail(rest.length);
        return [];
      }
      const events: ProviderEvent[] = [];
      pushLine(rest, events, json);
      return events;
    },
  };
}

function pushLine(raw: string, events: ProviderEvent[], json: EventJsonReader): void {
  const line = raw.endsWith("\r") ? raw.slice(0, -1) : raw;
  if (line.trim() === "") return;
  try {
    events.push(framedEvent(json.parse(line), undefined, line.length));
  } catch {
    events.push(framedEvent(line, undefined, line.length));
  }
}

import { createSseFramer } from "../framing/sse.js";
import type { ProviderEvent } from "../types.js";
import { plural, quoteShort } from "./text.js";

/**
 * Frames an SSE body with the same framer a live stream uses, and reports what the record
 * format cannot keep: comments, multi-line data, payloads that are not JSON.
 */
export function sseBodyToEvents(body: string | Uint8Array, label: string, notes: string[]): ProviderEvent[] {
  const comments: string[] = [];
  const framer = createSseFramer({ onComment: (comment) => comments.push(comment) });
  const events = [...framer.push(body), ...framer.flush()];

  if (comments.length > 0) {
    const distinct = [...new Set(comments.map((c) => c.trim()))];
    notes.push(`${label}${plural(comments.length, "SSE comment line")} dropped (${distinct.slice(0, 3).map((c) => quoteShort(c)).join(", ")})`);
  }
  const text = typeof body === "string" ? body : new TextDecoder().decode(body);
  const multiLine = countMultiLineDataEvents(text);
  if (multiLine > 0) notes.push(`${label}${plural(multiLine, "event")} with several data: lines (joined with \\n)`);
  const strings = events.filter((event) => typeof event.data === "string").map((event) => event.data as string);
  if (strings.length > 0) {
    const distinct = [...new Set(strings)];
    notes.push(`${label}${plural(strings.length, "non-JSON data payload")} kept as ${strings.length === 1 ? "a string" : "strings"} (${distinct.slice(0, 3).map((s) => quoteShort(s)).join(", ")})`);
  }
  for (const diagnostic of framer.diagnostics) {
    // The spec ignores lines with unknown field names; say so, since it can drop a payload.
    const consequence = diagnostic.code === "sse_unknown_field" ? " (line ignored, as the SSE spec requires)" : "";
    notes.push(`${label}SSE framing: ${diagnostic.message}${consequence}`);
  }
  return events;
}

/** Events whose payload spanned several `data:` lines; the framer joins them, the note keeps the fact. */
function countMultiLineDataEvents(text: string): number {
  let count = 0;
  let dataLines = 0;
  for (const line of text.split(/\r\n|\r|\n/)) {
    if (line === "") {
      if (dataLines > 1) count++;
      dataLines = 0;
    } else if (line.startsWith("data:") || line === "data") {
      dataLines++;
    }
  }
  if (dataLines > 1) count++;
  return count;
}

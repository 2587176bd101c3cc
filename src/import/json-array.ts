import { createJsonArrayFramer } from "../framing/json-array.js";
import type { ProviderEvent } from "../types.js";
import { ImportError } from "./errors.js";

/**
 * A body that is one JSON array streamed an element at a time: Gemini's `streamGenerateContent`
 * without `alt=sse`. The framer the live path uses splits it, so an imported recording decodes
 * exactly as the live body would; each element becomes one record.
 */
export function jsonArrayBodyToEvents(text: string, file: string, label: string, notes: string[]): ProviderEvent[] {
  const framer = createJsonArrayFramer();
  // Plain objects: records are compared and serialized, and the framer's events carry a prototype mark.
  const events = [...framer.push(text), ...framer.flush()].map((event) => ({ data: event.data }));
  for (const diagnostic of framer.diagnostics) {
    if (diagnostic.severity === "error") throw new ImportError(`${label}${diagnostic.message}`, "malformed", file);
    notes.push(`${label}${diagnostic.message}`);
  }
  return events;
}

/**
 * Whether text is a JSON array body rather than JSON per line: it opens with '[', and either its
 * first line is not a JSON value by itself (a pretty-printed array) or it is the only line.
 */
export function looksLikeJsonArray(text: string): boolean {
  const trimmed = text.replace(/^\uFEFF/, "").trimStart();
  if (!trimmed.startsWith("[")) return false;
  const lines = trimmed.split("\n").filter((line) => line.trim() !== "");
  if (lines.length <= 1) return true;
  try {
    JSON.parse(lines[0] as string);
    return false;
  } catch {
    return true;
  }
}

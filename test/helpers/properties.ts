import { createDecoder } from "../../src/providers/registry.js";
import type { CodecEvent, DecodedTurn, ProviderEvent, ProviderName, ToolCall } from "../../src/types.js";

/** Shared pieces of the property suites: decode a list of events, split bytes, check a prefix's calls. */

export function decodeEvents(provider: ProviderName, events: ProviderEvent[], previews = false): { turn: DecodedTurn; out: CodecEvent[] } {
  const decoder = createDecoder(provider, { previews });
  const out: CodecEvent[] = [];
  for (const event of events) decoder.pushInto(event, out);
  out.push(...decoder.end());
  return { turn: decoder.finish(), out };
}

/** Splits bytes at the given cut points (taken modulo the length, sorted, deduplicated). */
export function splitAt(bytes: Uint8Array, cuts: number[]): Uint8Array[] {
  const points = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((x, y) => x - y);
  const chunks: Uint8Array[] = [];
  let start = 0;
  for (const point of points) {
    chunks.push(bytes.subarray(start, point));
    start = point;
  }
  chunks.push(bytes.subarray(start));
  return chunks;
}

/** True when the call was kept complete only because its object had closed when the stream ended cleanly. */
export function closedAtStreamEnd(turn: DecodedTurn, callIndex: number): boolean {
  return turn.diagnostics.some((d) => d.code === "call_closed_at_stream_end" && d.callIndex === callIndex);
}

export function runsFor(events: ProviderEvent[], small: number): number {
  return events.length > 2000 ? 3 : events.length > 300 ? Math.max(5, Math.floor(small / 4)) : small;
}

/**
 * What a decode of a cut stream may say about its calls: a complete call is one the full stream
 * also completes, with the same id, name and arguments; anything else is truncated and carries
 * no arguments. Returns a description of the first violation, or null.
 */
export function prefixViolation(prefixCalls: ToolCall[], fullCalls: ToolCall[]): string | null {
  for (const call of prefixCalls) {
    const full = fullCalls[call.index];
    if (!call.complete) {
      if (call.arguments !== null || call.error?.code !== "truncated") return `call ${call.index} is incomplete but not reported as truncated`;
      continue;
    }
    if (!full || !full.complete) return `call ${call.index} is complete in the prefix but not in the full stream`;
    if (full.id !== call.id || full.name !== call.name) return `call ${call.index} changed identity`;
    if (JSON.stringify(full.arguments) !== JSON.stringify(call.arguments)) return `call ${call.index} has other arguments than in the full stream`;
  }
  return null;
}

import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { createByteDecoder } from "../../src/adapters/bytes.js";
import { encodeSse } from "../../src/framing/sse.js";
import { isPlainObject } from "../../src/json/shape.js";
import { eventType } from "../../src/providers/fields.js";
import { createDecoder } from "../../src/providers/registry.js";
import type { CodecEvent, DecodedTurn, ProviderEvent } from "../../src/types.js";
import { testdataFiles } from "../helpers/testdata.js";

/**
 * The five properties of issue 2 over every recorded Anthropic stream in testdata/.
 * Large streams get fewer runs so the suite stays fast; every stream gets some.
 */

const streams = testdataFiles("anthropic").flatMap((file) =>
  file.streams.map((stream) => ({ label: `${file.name} ${stream.sequence ?? ""}`.trim(), events: stream.events })),
);

function decodeEvents(events: ProviderEvent[], previews = false): { turn: DecodedTurn; out: CodecEvent[] } {
  const decoder = createDecoder("anthropic", { previews });
  const out: CodecEvent[] = [];
  for (const event of events) decoder.pushInto(event, out);
  out.push(...decoder.end());
  return { turn: decoder.finish(), out };
}

function runsFor(events: ProviderEvent[], small: number): number {
  return events.length > 2000 ? 3 : events.length > 300 ? Math.max(5, Math.floor(small / 4)) : small;
}

/** Splits a byte array at the given (sorted, deduplicated) cut points. */
function splitAt(bytes: Uint8Array, cuts: number[]): Uint8Array[] {
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

const isDelta = (event: ProviderEvent, index: number): boolean =>
  isPlainObject(event.data) &&
  eventType(event) === "content_block_delta" &&
  event.data.index === index &&
  isPlainObject(event.data.delta) &&
  event.data.delta.type === "input_json_delta";

describe.each(streams)("anthropic properties: $label", ({ events }) => {
  const reference = decodeEvents(events).turn;

  it("(a) splitting the byte stream anywhere never changes the DecodedTurn", () => {
    const bytes = new TextEncoder().encode(encodeSse(events));
    fc.assert(
      fc.property(fc.array(fc.nat(), { maxLength: 40 }), (cuts) => {
        const decoder = createByteDecoder("anthropic");
        for (const chunk of splitAt(bytes, cuts)) decoder.push(chunk);
        expect(decoder.finish()).toEqual(reference);
      }),
      { numRuns: runsFor(events, 25) },
    );
  });

  it("(b) re-splitting the partial_json fragments never changes it", () => {
    // Each block occurrence (a block index can recur after a spliced message_start) is re-split on its own.
    const occurrenceOf: number[] = [];
    const counter = new Map<number, number>();
    events.forEach((event, i) => {
      const data = event.data;
      if (isPlainObject(data) && eventType(event) === "content_block_start" && typeof data.index === "number") counter.set(data.index, (counter.get(data.index) ?? 0) + 1);
      occurrenceOf[i] = isPlainObject(data) && typeof data.index === "number" ? (counter.get(data.index) ?? 0) : 0;
    });
    const groups = new Map<string, number[]>();
    events.forEach((event, i) => {
      const index = (event.data as { index?: number }).index;
      if (typeof index === "number" && isDelta(event, index)) {
        const key = `${index}:${occurrenceOf[i]}`;
        groups.set(key, [...(groups.get(key) ?? []), i]);
      }
    });
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 1, max: 64 }), { minLength: 1, maxLength: 8 }), (sizes) => {
        const replacement = new Map<number, ProviderEvent[]>();
        const dropped = new Set<number>();
        for (const positions of groups.values()) {
          const first = positions[0] as number;
          const index = (events[first]?.data as { index: number }).index;
          const text = positions.map((i) => (events[i]?.data as { delta: { partial_json: string } }).delta.partial_json).join("");
          const pieces: ProviderEvent[] = [];
          for (let at = 0, k = 0; at < text.length; k++) {
            const size = sizes[k % sizes.length] as number;
            pieces.push({ event: "content_block_delta", data: { type: "content_block_delta", index, delta: { type: "input_json_delta", partial_json: text.slice(at, at + size) } } });
            at += size;
          }
          replacement.set(first, pieces);
          for (const i of positions) dropped.add(i);
        }
        const resplit = events.flatMap((event, i) => replacement.get(i) ?? (dropped.has(i) ? [] : [event]));
        const turn = decodeEvents(resplit).turn;
        expect(turn.toolCalls).toEqual(reference.toolCalls);
        expect(turn.serverToolCalls).toEqual(reference.serverToolCalls);
        expect([turn.status, turn.finishReason, turn.text]).toEqual([reference.status, reference.finishReason, reference.text]);
      }),
      { numRuns: runsFor(events, 20) },
    );
  });

  it("(c) adding a start input equal to the final arguments never changes it", () => {
    const finalByBlock = new Map(reference.toolCalls.filter((c) => c.complete && c.arguments).map((c) => [c.providerIndex, c.arguments]));
    const withStart = events.map((event) => {
      const data = event.data;
      if (!isPlainObject(data) || eventType(event) !== "content_block_start" || !isPlainObject(data.content_block)) return event;
      const final = finalByBlock.get(data.index as number);
      if (!final || data.content_block.type !== "tool_use") return event;
      return { ...event, data: { ...data, content_block: { ...data.content_block, input: final } } };
    });
    const turn = decodeEvents(withStart).turn;
    expect(turn.toolCalls).toEqual(reference.toolCalls);
    expect([turn.status, turn.finishReason, turn.text]).toEqual([reference.status, reference.finishReason, reference.text]);
    const withoutRepeat = (t: DecodedTurn) => t.diagnostics.filter((d) => d.code !== "start_input_repeated");
    expect(withoutRepeat(turn)).toEqual(withoutRepeat(reference));
  });

  it("(d) cutting the stream at any event never throws and never yields a call complete that was not", () => {
    const check = (cut: number): void => {
      const prefix = events.slice(0, cut);
      const { turn } = decodeEvents(prefix);
      const stopped = new Set(prefix.flatMap((e) => (isPlainObject(e.data) && eventType(e) === "content_block_stop" ? [e.data.index] : [])));
      for (const call of [...turn.toolCalls, ...turn.serverToolCalls]) {
        if (!call.complete) {
          expect(call.arguments).toBeNull();
          expect(call.error?.code).toBe("truncated");
          continue;
        }
        // Complete only if its end marker is in the prefix (or the block arrived whole in
        // message_start), or, the stream having ended cleanly, its arguments already are one
        // closed object (issue 17), which the diagnostic says.
        const full = [...reference.toolCalls, ...reference.serverToolCalls].find((c) => c.id === call.id);
        expect(full?.complete).toBe(true);
        expect(call.arguments).toEqual(full?.arguments);
        const closedAtEnd = turn.diagnostics.some((d) => d.code === "call_closed_at_stream_end" && d.providerIndex === call.providerIndex);
        expect(stopped.has(call.providerIndex) || call.source === "start" || call.source === "empty" || closedAtEnd).toBe(true);
      }
      if (cut < events.length && turn.status === "complete") {
        // Only a prefix that already holds message_stop may be complete.
        expect(prefix.some((e) => eventType(e) === "message_stop")).toBe(true);
      }
    };
    if (events.length <= 400) {
      for (let cut = 0; cut <= events.length; cut++) check(cut);
    } else {
      fc.assert(fc.property(fc.integer({ min: 0, max: events.length }), check), { numRuns: 60 });
    }
  });

  it("(e) the last preview equals the final arguments", () => {
    const { turn, out } = decodeEvents(events, true);
    const lastPreview = new Map<string, unknown>();
    for (const event of out) if (event.type === "tool_call_delta") lastPreview.set(`${event.kind}:${event.index}`, event.preview);
    for (const call of [...turn.toolCalls, ...turn.serverToolCalls]) {
      if (!call.complete || (call.source !== "delta" && call.source !== "merged")) continue;
      if (call.repairs.some((r) => r !== "start_continuation")) continue;
      expect(lastPreview.get(`${call.kind}:${call.index}`)).toEqual(call.arguments);
    }
    // Previews do not change the decoded turn.
    expect(turn).toEqual(reference);
  });
});

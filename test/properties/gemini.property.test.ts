import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { createByteDecoder } from "../../src/adapters/bytes.js";
import { encodeJsonArray } from "../../src/framing/json-array.js";
import { encodeSse } from "../../src/framing/sse.js";
import { isPlainObject } from "../../src/json/shape.js";
import type { ProviderEvent } from "../../src/types.js";
import { decodeEvents, prefixViolation, runsFor, splitAt } from "../helpers/properties.js";
import { testdataFiles } from "../helpers/testdata.js";

/**
 * The properties of issue 2 over every Gemini stream in testdata/: byte splits (SSE with CRLF and
 * the JSON-array form), re-chunking (parts regrouped across chunks, string leaves re-split),
 * truncation at any event and at any byte, and previews.
 */

const streams = testdataFiles("gemini").flatMap((file) =>
  file.streams.map((stream) => ({ label: `${file.name} ${stream.sequence ?? ""}`.trim(), events: stream.events })),
);

type Chunk = Record<string, unknown> & { candidates: Array<Record<string, unknown> & { content?: { parts?: unknown[] } }> };

function partsOf(event: ProviderEvent): unknown[] | null {
  const data = event.data as Chunk;
  const parts = isPlainObject(data) && Array.isArray(data.candidates) ? data.candidates[0]?.content?.parts : undefined;
  return Array.isArray(parts) ? parts : null;
}

/** The same chunk envelope with other parts; finishReason only when `last`. */
function withParts(event: ProviderEvent, parts: unknown[], last: boolean): ProviderEvent {
  const data = event.data as Chunk;
  const [candidate, ...others] = data.candidates;
  const { finishReason: _finish, finishMessage: _message, ...rest } = candidate as Record<string, unknown>;
  const next = last ? { ...candidate, content: { ...candidate?.content, parts } } : { ...rest, content: { ...candidate?.content, parts } };
  return { ...event, data: { ...data, candidates: [next, ...others] } };
}

/**
 * Regroups the parts of every chunk into several chunks (sizes from `sizes`) and re-splits each
 * string leaf of streamed arguments into pieces (lengths from `sizes`), keeping `willContinue`
 * right: the same stream, chunked differently.
 */
function rechunk(events: ProviderEvent[], sizes: number[]): ProviderEvent[] {
  let k = 0;
  const next = (): number => sizes[k++ % sizes.length] as number;
  const out: ProviderEvent[] = [];
  for (const event of events) {
    const parts = partsOf(event);
    if (!parts || parts.length === 0) {
      out.push(event);
      continue;
    }
    const split: unknown[] = [];
    for (const part of parts) {
      const fc = isPlainObject(part) && isPlainObject(part.functionCall) ? part.functionCall : null;
      const leaves = fc && Array.isArray(fc.partialArgs) ? fc.partialArgs : null;
      const leaf = leaves && leaves.length === 1 && isPlainObject(leaves[0]) ? leaves[0] : null;
      if (!fc || !leaf || typeof leaf.stringValue !== "string" || leaf.stringValue.length < 2 || fc.name !== undefined) {
        split.push(part);
        continue;
      }
      const text = leaf.stringValue;
      for (let at = 0; at < text.length; ) {
        const size = next();
        const end = Math.min(text.length, at + size);
        const lastPiece = end === text.length;
        const piece = { ...leaf, stringValue: text.slice(at, end), ...(lastPiece ? {} : { willContinue: true }) };
        if (lastPiece && leaf.willContinue === undefined) delete (piece as { willContinue?: unknown }).willContinue;
        split.push({ ...(part as object), functionCall: { ...fc, partialArgs: [piece], ...(lastPiece ? {} : { willContinue: true }) } });
        at = end;
      }
    }
    for (let at = 0; at < split.length; ) {
      const end = Math.min(split.length, at + next());
      out.push(withParts(event, split.slice(at, end), end === split.length));
      at = end;
    }
  }
  return out;
}

describe.each(streams)("gemini properties: $label", ({ events }) => {
  const reference = decodeEvents("gemini", events).turn;
  const payloads = events.map((event) => event.data);

  it("(a) splitting the SSE body (CRLF) or the JSON-array body anywhere never changes the DecodedTurn", () => {
    const sse = new TextEncoder().encode(encodeSse(events).replace(/\n/g, "\r\n"));
    const array = new TextEncoder().encode(encodeJsonArray(payloads));
    fc.assert(
      fc.property(fc.array(fc.nat(), { maxLength: 40 }), fc.boolean(), (cuts, useArray) => {
        const decoder = createByteDecoder("gemini", useArray ? { framing: "json-array" } : {});
        for (const chunk of splitAt(useArray ? array : sse, cuts)) decoder.push(chunk);
        expect(decoder.finish()).toEqual(reference);
      }),
      { numRuns: runsFor(events, 30) },
    );
  });

  it("(b) regrouping parts across chunks and re-splitting string leaves never changes the calls", () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 1, max: 6 }), { minLength: 1, maxLength: 8 }), (sizes) => {
        const turn = decodeEvents("gemini", rechunk(events, sizes)).turn;
        expect(turn.toolCalls).toEqual(reference.toolCalls);
        expect([turn.status, turn.finishReason, turn.text, turn.reasoning]).toEqual([reference.status, reference.finishReason, reference.text, reference.reasoning]);
      }),
      { numRuns: runsFor(events, 20) },
    );
  });

  it("(d) cutting the stream at any event never throws and never yields a call complete that was not", () => {
    for (let cut = 0; cut <= events.length; cut++) {
      const prefix = events.slice(0, cut);
      const { turn } = decodeEvents("gemini", prefix);
      expect(prefixViolation(turn.toolCalls, reference.toolCalls)).toBeNull();
      const finished = prefix.some((e) => isPlainObject(e.data) && Array.isArray(e.data.candidates) && e.data.candidates.some((c) => isPlainObject(c) && typeof c.finishReason === "string"));
      if (turn.status === "complete") expect(finished).toBe(true);
    }
  });

  it("(d) cutting the body at any byte never throws and never yields a call complete that was not", () => {
    const sse = new TextEncoder().encode(encodeSse(events));
    fc.assert(
      fc.property(fc.integer({ min: 0, max: sse.length }), (cut) => {
        const decoder = createByteDecoder("gemini");
        decoder.push(sse.subarray(0, cut));
        const turn = decoder.finish();
        expect(prefixViolation(turn.toolCalls, reference.toolCalls)).toBeNull();
      }),
      { numRuns: 40 },
    );
  });

  it("(e) the last preview of a streamed call equals its final arguments", () => {
    const { turn, out } = decodeEvents("gemini", events, true);
    const lastPreview = new Map<number, unknown>();
    for (const event of out) if (event.type === "tool_call_delta") lastPreview.set(event.index, event.preview);
    for (const call of turn.toolCalls) {
      if (call.complete && call.source === "delta") expect(lastPreview.get(call.index)).toEqual(call.arguments);
    }
    expect(turn).toEqual(reference);
  });
});

import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { createByteDecoder } from "../../src/adapters/bytes.js";
import { encodeEventStreamMessage } from "../../src/framing/aws-eventstream.js";
import { isPlainObject } from "../../src/json/shape.js";
import { readBedrockEvent } from "../../src/providers/bedrock.js";
import type { DecodedTurn, ProviderEvent } from "../../src/types.js";
import { concat } from "../helpers/bedrock-events.js";
import { closedAtStreamEnd, decodeEvents, prefixViolation, runsFor, splitAt } from "../helpers/properties.js";
import { testdataFiles } from "../helpers/testdata.js";

/**
 * The properties of issue 2 over every Bedrock stream in testdata/, on the binary event stream
 * the records are re-encoded into (arbitrary splits of the frames, truncation at any byte), plus:
 * a flipped byte anywhere is a checksum error naming its frame and never changes a call that was
 * complete before that frame.
 */

const streams = testdataFiles("bedrock").flatMap((file) =>
  file.streams.map((stream) => ({ label: `${file.name} ${stream.sequence ?? ""}`.trim(), events: stream.events })),
);

/** One binary frame per event, in the form Bedrock sends it; returns the frames separately. */
function toFrames(events: ProviderEvent[]): Uint8Array[] {
  return events.map((event) => {
    const { name, body } = readBedrockEvent(event);
    if (name === "exception" && isPlainObject(body)) {
      const { exceptionType, ...payload } = body;
      return encodeEventStreamMessage({ ":message-type": "exception", ":exception-type": String(exceptionType), ":content-type": "application/json" }, JSON.stringify(payload));
    }
    if (name !== null && name.endsWith("Exception")) {
      return encodeEventStreamMessage({ ":message-type": "exception", ":exception-type": name, ":content-type": "application/json" }, JSON.stringify(body));
    }
    return encodeEventStreamMessage({ ":event-type": String(name), ":content-type": "application/json", ":message-type": "event" }, JSON.stringify(body));
  });
}

function decodeBytes(chunks: Uint8Array[]): DecodedTurn {
  const decoder = createByteDecoder("bedrock");
  for (const chunk of chunks) decoder.push(chunk);
  return decoder.finish();
}

const inputOf = (event: ProviderEvent): { index: number; input: string } | null => {
  const { name, body } = readBedrockEvent(event);
  if (name !== "contentBlockDelta" || !isPlainObject(body) || !isPlainObject(body.delta) || !isPlainObject(body.delta.toolUse)) return null;
  const input = body.delta.toolUse.input;
  return typeof input === "string" && typeof body.contentBlockIndex === "number" ? { index: body.contentBlockIndex, input } : null;
};

describe.each(streams)("bedrock properties: $label", ({ events }) => {
  const reference = decodeEvents("bedrock", events).turn;
  const frames = toFrames(events);
  const body = concat(frames);
  const offsets = frames.reduce<number[]>((acc, frame, i) => [...acc, i === 0 ? 0 : (acc[i - 1] as number) + (frames[i - 1] as Uint8Array).length], []);

  it("(a) the binary body, split anywhere, decodes to the DecodedTurn of the records", () => {
    fc.assert(
      fc.property(fc.array(fc.nat(), { maxLength: 40 }), (cuts) => {
        expect(decodeBytes(splitAt(body, cuts))).toEqual(reference);
      }),
      { numRuns: runsFor(events, 30) },
    );
  });

  it("(b) re-splitting the toolUse input fragments never changes the calls", () => {
    const positions = new Map<number, number[]>();
    events.forEach((event, i) => {
      const found = inputOf(event);
      if (found) positions.set(found.index, [...(positions.get(found.index) ?? []), i]);
    });
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 1, max: 16 }), { minLength: 1, maxLength: 8 }), (sizes) => {
        const replacement = new Map<number, ProviderEvent[]>();
        const dropped = new Set<number>();
        for (const [index, at] of positions) {
          const text = at.map((i) => inputOf(events[i] as ProviderEvent)?.input ?? "").join("");
          const pieces: ProviderEvent[] = [];
          for (let from = 0, k = 0; from < text.length; k++) {
            const size = sizes[k % sizes.length] as number;
            pieces.push({ data: { contentBlockDelta: { contentBlockIndex: index, delta: { toolUse: { input: text.slice(from, from + size) } } } } });
            from += size;
          }
          replacement.set(at[0] as number, pieces);
          for (const i of at) dropped.add(i);
        }
        const resplit = events.flatMap((event, i) => replacement.get(i) ?? (dropped.has(i) ? [] : [event]));
        const turn = decodeEvents("bedrock", resplit).turn;
        expect(turn.toolCalls).toEqual(reference.toolCalls);
        expect(turn.serverToolCalls).toEqual(reference.serverToolCalls);
        expect([turn.status, turn.finishReason, turn.text]).toEqual([reference.status, reference.finishReason, reference.text]);
      }),
      { numRuns: runsFor(events, 20) },
    );
  });

  it("(c) a start input equal to the final arguments never changes the calls", () => {
    const finalByBlock = new Map([...reference.toolCalls, ...reference.serverToolCalls].filter((c) => c.complete && c.arguments).map((c) => [c.providerIndex, c.arguments]));
    const withStart = events.map((event) => {
      const { name, body } = readBedrockEvent(event);
      if (name !== "contentBlockStart" || !isPlainObject(body) || !isPlainObject(body.start) || !isPlainObject(body.start.toolUse)) return event;
      const final = finalByBlock.get(body.contentBlockIndex as number);
      return final ? { data: { contentBlockStart: { ...body, start: { toolUse: { ...body.start.toolUse, input: final } } } } } : event;
    });
    const turn = decodeEvents("bedrock", withStart).turn;
    expect(turn.toolCalls).toEqual(reference.toolCalls);
    expect(turn.serverToolCalls).toEqual(reference.serverToolCalls);
  });

  it("(d) cutting the stream at any event or any byte never throws and never yields a call complete that was not", () => {
    for (let cut = 0; cut <= events.length; cut++) {
      const prefix = events.slice(0, cut);
      const { turn } = decodeEvents("bedrock", prefix);
      expect(prefixViolation([...turn.toolCalls], reference.toolCalls)).toBeNull();
      if (turn.status === "complete") expect(prefix.some((e) => readBedrockEvent(e).name === "messageStop")).toBe(true);
    }
    fc.assert(
      fc.property(fc.integer({ min: 0, max: body.length }), (cut) => {
        const turn = decodeBytes([body.subarray(0, cut)]);
        expect(prefixViolation(turn.toolCalls, reference.toolCalls)).toBeNull();
        if (cut < body.length && !offsets.includes(cut)) expect(turn.diagnostics.some((d) => d.code === "eventstream_truncated")).toBe(true);
      }),
      { numRuns: 40 },
    );
  });

  it("(f) a flipped byte anywhere is a checksum error naming its frame; calls complete before that frame are unchanged", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: body.length - 1 }), fc.integer({ min: 1, max: 255 }), fc.array(fc.nat(), { maxLength: 10 }), (at, mask, cuts) => {
        const corrupted = body.slice();
        corrupted[at]! ^= mask;
        const turn = decodeBytes(splitAt(corrupted, cuts));
        const frame = offsets.filter((offset) => offset <= at).length - 1;
        expect(turn.status).toBe("error");
        const diagnostic = turn.diagnostics.find((d) => d.code === "eventstream_prelude_crc" || d.code === "eventstream_message_crc" || d.code === "eventstream_invalid_length");
        expect(diagnostic?.data).toMatchObject({ offset: offsets[frame] });
        expect(prefixViolation(turn.toolCalls, reference.toolCalls)).toBeNull();
        // Exactly the frames before the corrupt one were decoded.
        const before = decodeEvents("bedrock", events.slice(0, frame)).turn;
        // A clean cut keeps a call whose object already closed (issue 17); a corrupt frame is an error, which does not.
        expect(turn.toolCalls.filter((c) => c.complete)).toEqual(before.toolCalls.filter((c) => c.complete && !closedAtStreamEnd(before, c.index)));
        expect(turn.text).toBe(before.text);
      }),
      { numRuns: 40 },
    );
  });
});

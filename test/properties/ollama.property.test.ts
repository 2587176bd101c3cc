import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { createByteDecoder } from "../../src/adapters/bytes.js";
import { isPlainObject } from "../../src/json/shape.js";
import type { ProviderEvent } from "../../src/types.js";
import { decodeEvents, prefixViolation, splitAt } from "../helpers/properties.js";
import { testdataFiles } from "../helpers/testdata.js";

/**
 * The properties of issue 2 over every Ollama stream in testdata/: NDJSON byte splits, calls
 * regrouped across lines, truncation at any line and any byte. (Ollama sends whole calls, so
 * there are no argument fragments to re-split and no previews.)
 */

const streams = testdataFiles("ollama").flatMap((file) =>
  file.streams.map((stream) => ({ label: `${file.name} ${stream.sequence ?? ""}`.trim(), events: stream.events })),
);

/** Moves each line's tool calls onto lines of their own, `sizes` calls per line, in order. */
function regroupCalls(events: ProviderEvent[], sizes: number[]): ProviderEvent[] {
  let k = 0;
  return events.flatMap((event) => {
    const data = event.data;
    if (!isPlainObject(data) || !isPlainObject(data.message) || !Array.isArray(data.message.tool_calls)) return [event];
    const calls = data.message.tool_calls;
    const { tool_calls: _calls, ...message } = data.message;
    const out: ProviderEvent[] = [{ ...event, data: { ...data, message, done: false } }];
    for (let at = 0; at < calls.length; ) {
      const size = sizes[k++ % sizes.length] as number;
      out.push({ ...event, data: { ...data, message: { role: "assistant", content: "", tool_calls: calls.slice(at, at + size) }, done: false } });
      at += size;
    }
    // A final line that carried calls keeps its done flag on a line after them.
    if (data.done === true) out.push({ ...event, data: { ...data, message: { role: "assistant", content: "" } } });
    return out;
  });
}

describe.each(streams)("ollama properties: $label", ({ events }) => {
  const reference = decodeEvents("ollama", events).turn;
  const body = new TextEncoder().encode(events.map((e) => JSON.stringify(e.data)).join("\n") + "\n");

  it("(a) splitting the NDJSON body anywhere never changes the DecodedTurn", () => {
    fc.assert(
      fc.property(fc.array(fc.nat(), { maxLength: 40 }), (cuts) => {
        const decoder = createByteDecoder("ollama");
        for (const chunk of splitAt(body, cuts)) decoder.push(chunk);
        expect(decoder.finish()).toEqual(reference);
      }),
      { numRuns: 30 },
    );
  });

  it("(b) regrouping the calls across lines never changes them", () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 1, max: 3 }), { minLength: 1, maxLength: 4 }), (sizes) => {
        const turn = decodeEvents("ollama", regroupCalls(events, sizes)).turn;
        expect(turn.toolCalls.map(({ id: _id, providerIndex: _p, ...rest }) => rest)).toEqual(reference.toolCalls.map(({ id: _id, providerIndex: _p, ...rest }) => rest));
        // Ids the provider sent are kept; minted ones only depend on the stream's first line and the position.
        expect(turn.toolCalls.map((c) => c.id)).toEqual(reference.toolCalls.map((c) => c.id));
        expect([turn.status, turn.finishReason, turn.text, turn.reasoning]).toEqual([reference.status, reference.finishReason, reference.text, reference.reasoning]);
      }),
      { numRuns: 15 },
    );
  });

  it("(d) cutting the stream at any line or any byte never throws and never yields a call complete that was not", () => {
    // A call line whose arguments do not parse waits for done_reason: under `length` it was cut
    // (truncated); a prefix without the done line reports it invalid. Either way never runnable.
    const waitsForStop = (index: number): boolean => reference.diagnostics.some((d) => d.code === "call_truncated_by_stop" && d.callIndex === index);
    for (let cut = 0; cut <= events.length; cut++) {
      const prefix = events.slice(0, cut);
      const { turn } = decodeEvents("ollama", prefix);
      const judged = turn.toolCalls.filter((call) => !(call.arguments === null && waitsForStop(call.index)));
      expect(prefixViolation(judged, reference.toolCalls)).toBeNull();
      if (turn.status === "complete") expect(prefix.some((e) => isPlainObject(e.data) && e.data.done === true)).toBe(true);
    }
    fc.assert(
      fc.property(fc.integer({ min: 0, max: body.length }), (cut) => {
        const decoder = createByteDecoder("ollama");
        decoder.push(body.subarray(0, cut));
        const calls = decoder.finish().toolCalls.filter((call) => !(call.arguments === null && waitsForStop(call.index)));
        expect(prefixViolation(calls, reference.toolCalls)).toBeNull();
      }),
      { numRuns: 40 },
    );
  });
});

import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { createByteDecoder } from "../../src/adapters/bytes.js";
import { framedEvent, provablyShallow, SHALLOW_DEPTH } from "../../src/framing/framed-event.js";
import { createSseFramer, encodeSse } from "../../src/framing/sse.js";
import { nestingDepth } from "../../src/json/finalize.js";

describe("framed events: a depth proof from the text length", () => {
  it("a short event is marked, yet its own keys, serialization and equality are a plain event's", () => {
    const event = framedEvent({ type: "ping" }, "ping", 15);
    expect(provablyShallow(event)).toBe(true);
    expect(Object.keys(event)).toEqual(["data", "event"]);
    expect(JSON.stringify(event)).toBe('{"data":{"type":"ping"},"event":"ping"}');
    expect(event).toEqual({ data: { type: "ping" }, event: "ping" });
    expect(Object.keys(framedEvent("[DONE]", undefined, 6))).toEqual(["data"]);
  });

  it("a long event and an event built by hand carry no proof", () => {
    expect(provablyShallow(framedEvent({}, undefined, 2 * SHALLOW_DEPTH))).toBe(false);
    expect(provablyShallow({ data: {} })).toBe(false);
  });

  it("the proof holds: JSON text shorter than 2 × SHALLOW_DEPTH never nests deeper than SHALLOW_DEPTH", () => {
    const nested = fc.letrec((tie) => ({
      value: fc.oneof({ depthSize: "small", withCrossShrink: true }, fc.constant(0), fc.array(tie("value"), { maxLength: 2 }), fc.dictionary(fc.constant("k"), tie("value"), { maxKeys: 1 })),
    })).value;
    fc.assert(
      fc.property(nested, fc.integer({ min: 1, max: 4 * SHALLOW_DEPTH }), (inner, wrap) => {
        const text = "[".repeat(wrap) + JSON.stringify(inner) + "]".repeat(wrap);
        if (text.length < 2 * SHALLOW_DEPTH) expect(nestingDepth(JSON.parse(text))).toBeLessThanOrEqual(SHALLOW_DEPTH);
      }),
      { numRuns: 300 },
    );
  });

  it("the SSE framer marks short events only", () => {
    const framer = createSseFramer();
    const events = framer.push(encodeSse([{ event: "ping", data: { type: "ping" } }, { data: { pad: "x".repeat(2 * SHALLOW_DEPTH) } }]));
    expect(events.map(provablyShallow)).toEqual([true, false]);
  });

  it("an over-deep event that arrives as bytes is still refused before a decoder sees it", () => {
    const depth = 5000;
    const deep = "[".repeat(depth) + "]".repeat(depth);
    const body = encodeSse([{ event: "message_start", data: { type: "message_start", message: { id: "m", content: [] } } }]) + `event: content_block_start\ndata: {"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"t","name":"n","input":{"a":${deep}}}}\n\n`;
    const decoder = createByteDecoder("anthropic");
    decoder.push(body);
    const turn = decoder.finish();
    expect(turn.diagnostics.map((d) => d.code)).toContain("event_too_deep");
    expect(turn.toolCalls).toEqual([]);
  });
});

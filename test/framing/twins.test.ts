import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { createJsonArrayFramer, JsonArraySplitter } from "../../src/framing/json-array.js";
import { createSseFramer } from "../../src/framing/sse.js";
import { SseEventSplitter } from "../../src/reencode/sse-events.js";
import type { ProviderEvent } from "../../src/types.js";
import { cyclicPieces } from "../helpers/pieces.js";

/**
 * Each wire format with two readers, the framer (decoders) and the raw-preserving splitter
 * (re-encoders, which forward untouched bytes), is run through one suite, as jsonrepair runs its
 * two grammars: on the same body, however it is chunked, both give the same events.
 */

const encoder = new TextEncoder();

interface Twin {
  name: string;
  /** The events one reader gives for `bytes` cut after every `sizes[i % n]` bytes. */
  read(bytes: Uint8Array, sizes: readonly number[]): ProviderEvent[];
}

const plain = (event: ProviderEvent): ProviderEvent => (event.event === undefined ? { data: event.data } : { event: event.event, data: event.data });

/** A reader as a twin: `event` picks the event a piece it gives carries (null: text that is none). */
function twin<Piece>(name: string, create: () => { push(bytes: Uint8Array): Piece[]; flush(): Piece[] }, event: (piece: Piece) => ProviderEvent | null): Twin {
  return {
    name,
    read(bytes, sizes) {
      const reader = create();
      const pieces: Piece[] = [];
      for (const piece of cyclicPieces(bytes, sizes)) pieces.push(...reader.push(piece));
      pieces.push(...reader.flush());
      return pieces.flatMap((piece) => {
        const found = event(piece);
        return found === null ? [] : [plain(found)];
      });
    },
  };
}

const jsonArrayTwins: Twin[] = [
  twin("createJsonArrayFramer", createJsonArrayFramer, (event) => event),
  twin("JsonArraySplitter", () => new JsonArraySplitter(), (piece) => (piece.kind === "element" ? piece.event : null)),
];

const sseTwins: Twin[] = [twin("createSseFramer", createSseFramer, (event) => event), twin("SseEventSplitter", () => new SseEventSplitter(), (raw) => raw.event)];

const json = fc.jsonValue({ maxDepth: 3 }).filter((value) => typeof value === "object" && value !== null);
const sizes = fc.array(fc.integer({ min: 1, max: 9 }), { minLength: 1, maxLength: 5 });

describe.each(jsonArrayTwins)("JSON array twins: $name", (twin) => {
  it("gives each element of a streamed array as its event, however the body is chunked", () => {
    fc.assert(
      fc.property(fc.array(json, { maxLength: 5 }), fc.constantFrom(",", ",\r\n", "\n,", " , "), sizes, (values, separator, cuts) => {
        const body = encoder.encode(`[${values.map((value) => JSON.stringify(value)).join(separator)}]`);
        expect(twin.read(body, cuts)).toEqual(values.map((value) => ({ data: JSON.parse(JSON.stringify(value)) as unknown })));
      }),
    );
  });

  it("reads a body that is one object (an HTTP error) as one event", () => {
    expect(twin.read(encoder.encode(' {"error": {"code": 429}}'), [3])).toEqual([{ data: { error: { code: 429 } } }]);
  });

  it("agrees with its twin on any array of JSON text, strings with brackets and escapes included", () => {
    const other = jsonArrayTwins.find((candidate) => candidate !== twin) as Twin;
    fc.assert(
      fc.property(fc.array(fc.oneof(json, fc.constantFrom('{"a":"]}\\"["}', '{"b":[{"c":"\\\\"}]}', '[1,[2]]')), { maxLength: 4 }), sizes, (values, cuts) => {
        const body = encoder.encode(`[${values.map((value) => (typeof value === "string" ? value : JSON.stringify(value))).join(",")}]`);
        expect(twin.read(body, cuts)).toEqual(other.read(body, [body.length || 1]));
      }),
    );
  });
});

describe.each(sseTwins)("SSE twins: $name", (twin) => {
  const event = fc.record({
    name: fc.option(fc.constantFrom("message_start", "content_block_delta", "error"), { nil: undefined }),
    data: fc.oneof(json.map((value) => JSON.stringify(value)), fc.constantFrom("[DONE]", "keep-alive")),
  });

  it("gives each event with its name and data, under any line ending and chunking, comments skipped", () => {
    fc.assert(
      fc.property(fc.array(event, { maxLength: 5 }), fc.constantFrom("\n", "\r\n", "\r"), fc.boolean(), sizes, (events, eol, comments, cuts) => {
        const text = events.map((e) => `${comments ? `: ping${eol}` : ""}${e.name !== undefined ? `event: ${e.name}${eol}` : ""}data: ${e.data}${eol}${eol}`).join("");
        const expected = events.map((e) => {
          let data: unknown = e.data;
          try {
            data = JSON.parse(e.data);
          } catch {
            // Not JSON: passed on as text.
          }
          return e.name === undefined ? { data } : { event: e.name, data };
        });
        expect(twin.read(encoder.encode(text), cuts)).toEqual(expected);
      }),
    );
  });

  it("reads a last event the body ended without its blank line", () => {
    expect(twin.read(encoder.encode('event: a\ndata: {"x":1}\n'), [4])).toEqual([{ event: "a", data: { x: 1 } }]);
  });
});

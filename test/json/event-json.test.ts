import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parseEventJson } from "../../src/json/event-json.js";

/** What JSON.parse does with `text`: its value, or the fact that it throws. */
function outcome(parse: (text: string) => unknown, text: string): { value: unknown } | { throws: true } {
  try {
    return { value: parse(text) };
  } catch {
    return { throws: true };
  }
}

/** Same value, same key order at every level (toEqual ignores key order). */
function expectSameAsJsonParse(text: string): void {
  const mine = outcome(parseEventJson, text);
  const reference = outcome(JSON.parse, text);
  expect(mine).toEqual(reference);
  if ("value" in mine && "value" in reference) expect(JSON.stringify(mine.value)).toBe(JSON.stringify(reference.value));
}

const DELTAS = [
  ["input_json_delta", "partial_json"],
  ["text_delta", "text"],
  ["thinking_delta", "thinking"],
] as const;

/** The delta event as Anthropic serializes it (JSON.stringify's own layout). */
const deltaEvent = fc
  .record({
    index: fc.oneof(fc.nat({ max: 20 }), fc.integer({ min: -5, max: 2 ** 40 }), fc.double()),
    kind: fc.constantFrom(...DELTAS),
    value: fc.oneof(fc.string(), fc.string({ unit: "grapheme" }), fc.string({ unit: "binary" }), fc.string({ unit: fc.constantFrom("\\", '"', "\n", "\t", "\u0000", "\ud800", "a", "/", "u") })),
  })
  .map(({ index, kind, value }) => JSON.stringify({ type: "content_block_delta", index, delta: { type: kind[0], [kind[1]]: value } }));

describe("parseEventJson: exactly JSON.parse", () => {
  it("on Anthropic delta events of any index and string", () => {
    fc.assert(fc.property(deltaEvent, (text) => expectSameAsJsonParse(text)), { numRuns: 2000 });
  });

  it("on delta events with one character inserted, deleted or replaced anywhere", () => {
    const mutated = fc.tuple(deltaEvent, fc.nat(), fc.constantFrom("insert", "delete", "replace"), fc.constantFrom(" ", "\t", "\\", '"', "}", "{", "0", "9", ",", ":", "a", "\u0001", "\u0010", "\u001f", "\u007f", "\u2028", "-", ".", "e")).map(([text, at, op, ch]) => {
      const i = at % (text.length + 1);
      if (op === "insert") return text.slice(0, i) + ch + text.slice(i);
      if (op === "delete") return text.slice(0, i) + text.slice(i + 1);
      return text.slice(0, i) + ch + text.slice(i + 1);
    });
    fc.assert(fc.property(mutated, (text) => expectSameAsJsonParse(text)), { numRuns: 3000 });
  });

  it("on cut-off delta events", () => {
    fc.assert(fc.property(deltaEvent, fc.nat(), (text, at) => expectSameAsJsonParse(text.slice(0, at % (text.length + 1)))), { numRuns: 1000 });
  });

  it("on any other JSON text", () => {
    fc.assert(fc.property(fc.json(), (text) => expectSameAsJsonParse(text)), { numRuns: 500 });
  });

  it.each([
    ['{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\\"a\\":"}}', "escapes"],
    ['{"type":"content_block_delta","index":12,"delta":{"type":"text_delta","text":"plain"}}', "a two-digit index"],
    ['{"type":"content_block_delta","index":123456789,"delta":{"type":"text_delta","text":""}}', "nine digits, an empty string"],
    ['{"type":"content_block_delta","index":1234567890,"delta":{"type":"text_delta","text":"x"}}', "ten digits"],
    ['{"type":"content_block_delta","index":01,"delta":{"type":"text_delta","text":"x"}}', "a leading zero"],
    ['{"type":"content_block_delta","index":-1,"delta":{"type":"text_delta","text":"x"}}', "a negative index"],
    ['{"type":"content_block_delta","index":1.5,"delta":{"type":"text_delta","text":"x"}}', "a fraction"],
    ['{"type":"content_block_delta","index":1e2,"delta":{"type":"text_delta","text":"x"}}', "an exponent"],
    ['{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"x"}} ', "trailing space"],
    ['{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"x"}}}', "an extra brace"],
    ['{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"x","more":1}}', "a further key"],
    ['{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"a\tb"}}', "a raw tab"],
    ['{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"\\x"}}', "an invalid escape"],
    ['{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"\\ud800\\u0041"}}', "a lone surrogate escape"],
    ['{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"abc\\', "a cut escape"],
    ['{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"abc', "a cut string"],
    ['{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"s"}}', "another delta type"],
    ['{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"a"},"index":1}', "a duplicate key"],
    ['{"type":"content_block_delta","index":', "only the head"],
  ])("on %j (%s)", (text) => expectSameAsJsonParse(text));
});

import { describe, expect, it } from "vitest";
import { createJsonArrayFramer } from "../../src/framing/json-array.js";

/**
 * The JSON-array framer's events and diagnostics, however the body comes (text, bytes whole, one
 * byte at a time, one character at a time): arrays, a bare object, scalars, bodies cut, bodies
 * that are not an array, trailing data, the element limit.
 */

interface Read {
  events: unknown[];
  diagnostics: Array<[string, string | undefined, string]>;
}

function read(pieces: ReadonlyArray<string | Uint8Array>, maxLineChars?: number): Read {
  const framer = createJsonArrayFramer(maxLineChars === undefined ? {} : { maxLineChars });
  const events = pieces.flatMap((piece) => framer.push(piece));
  events.push(...framer.flush());
  return { events: events.map((event) => event.data), diagnostics: framer.diagnostics.map((d) => [d.code, d.severity, d.message]) };
}

const truncated = (chars: number): [string, string | undefined, string] => ["json_array_truncated", "warning", `The body ended inside an array element (${chars} characters received); the incomplete element was not decoded.`];
const trailing = (what: string, at: number): [string, string | undefined, string] => ["json_array_trailing_data", "error", `Data follows the end of the JSON ${what} at character ${at}; it was not read.`];
const tooLong: [string, string | undefined, string] = ["json_array_element_too_long", "error", "An array element exceeded 10 characters; the rest of the body was not read."];
const unterminated = (message: string): [string, string | undefined, string] => ["json_array_unterminated", "info", message];

const cases: Array<[string, string, Read, number?]> = [
  ["elements", '[{"a":1},{"b":2}]', { events: [{ a: 1 }, { b: 2 }], diagnostics: [] }],
  ["a bare object", ' {"error":1}', { events: [{ error: 1 }], diagnostics: [] }],
  ["brackets and escaped quotes in strings", '[{"a":"\\"}]"},[[]]]', { events: [{ a: '"}]' }, [[]]], diagnostics: [] }],
  ["characters of several bytes", '[{"é":"✓😀"}]', { events: [{ é: "✓😀" }], diagnostics: [] }],
  ["scalars, the last before the closing bracket (found: it was lost as truncated)", '[1, "x", true, null, -2.5e3]', { events: [1, "x", true, null, -2500], diagnostics: [] }],
  ["strings before the closing bracket (found: the last was lost)", '["a" , "b"]', { events: ["a", "b"], diagnostics: [] }],
  ["scalars without a comma between them", "[1 2]", { events: [1, 2], diagnostics: [] }],
  ["empty elements", "[,,1,,]", { events: [1], diagnostics: [] }],
  ["a scalar the body ends in", "[12", { events: [12], diagnostics: [] }],
  ["a body cut inside an element", '[{"a":1},{"b":', { events: [{ a: 1 }], diagnostics: [truncated(5)] }],
  ["a body cut inside a string", '["abc', { events: [], diagnostics: [truncated(4)] }],
  ["a body cut between elements", '[{"a":1},', { events: [{ a: 1 }], diagnostics: [unterminated("The body ended before the closing ']' of the array.")] }],
  ["an empty body", "  ", { events: [], diagnostics: [unterminated("The body is empty.")] }],
  ["Server-Sent Events", "data: {}", { events: [], diagnostics: [["json_array_not_array", "error", 'The body does not start with a JSON array or object (found "d" at character 0); it looks like Server-Sent Events: use the sse framing.']] }],
  ["text", "x", { events: [], diagnostics: [["json_array_not_array", "error", 'The body does not start with a JSON array or object (found "x" at character 0).']] }],
  ["text after the array", '[{"a":1}] x', { events: [{ a: 1 }], diagnostics: [trailing("array", 10)] }],
  ["a second array", "[] []", { events: [], diagnostics: [trailing("array", 3)] }],
  ["a second closing bracket", '[{"a":1}]]', { events: [{ a: 1 }], diagnostics: [trailing("array", 9)] }],
  ["an object after the object", '{"a":1} {"b":2}', { events: [{ a: 1 }], diagnostics: [trailing("object", 8)] }],
  ["a long first element", '[{"a":"0123456789"},{"b":1}]', { events: [], diagnostics: [tooLong] }, 10],
  ["a long later element", '[{"a":1},{"b":"0123456789"}]', { events: [{ a: 1 }], diagnostics: [tooLong] }, 10],
];

describe.each(cases)("the JSON-array framer: %s", (_name, body, expected, max) => {
  const bytes = new TextEncoder().encode(body);
  it("reads it the same however it comes", () => {
    expect(read([body], max)).toEqual(expected);
    expect(read([bytes], max)).toEqual(expected);
    expect(read([...bytes].map((byte) => new Uint8Array([byte])), max)).toEqual(expected);
    expect(read(body.split(""), max)).toEqual(expected);
  });
});

describe("the JSON-array framer: a byte order mark", () => {
  it("is skipped before the array, one or two (found: a second one was read as text that is not an array)", () => {
    for (const body of ["\uFEFF[1]", "\uFEFF\uFEFF[1]"]) {
      expect(read([body])).toEqual({ events: [1], diagnostics: [] });
      expect(read([new TextEncoder().encode(body)])).toEqual({ events: [1], diagnostics: [] });
    }
  });
});

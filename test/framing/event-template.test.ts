import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { EventJsonReader } from "../../src/framing/event-template.js";
import { checkEventJson } from "../../src/testing/invariants.js";
import { TESTDATA, upstreamImported } from "../helpers/testdata.js";

/** What a parser does with `text`: its value, or the fact that it throws. */
function outcome(parse: (text: string) => unknown, text: string): { value: unknown } | { throws: true } {
  try {
    return { value: parse(text) };
  } catch {
    return { throws: true };
  }
}

/** Same value (-0 included), same key order at every level (toStrictEqual ignores key order). */
function expectSameAsJsonParse(reader: EventJsonReader, text: string): void {
  const mine = outcome((t) => reader.parse(t), text);
  const reference = outcome(JSON.parse, text);
  expect(mine).toStrictEqual(reference);
  if ("value" in mine && "value" in reference) expect(JSON.stringify(mine.value)).toBe(JSON.stringify(reference.value));
}

/** A JSON string token for `value`, written the way some server might: plain, all `\u`, or with `\/`. */
function encodeString(value: string, style: number): string {
  if (style === 1) {
    let out = '"';
    for (let i = 0; i < value.length; i++) {
      const code = value.charCodeAt(i);
      out += /[A-Za-z0-9 ]/.test(value[i] as string) ? value[i] : `\\u${code.toString(16).padStart(4, "0")}`;
    }
    return `${out}"`;
  }
  const plain = JSON.stringify(value);
  return style === 2 ? plain.replace(/\//g, "\\/") : plain;
}

/** Event texts with one to three changing strings, as Chat, Anthropic, Kimi-via-OpenRouter and Python servers write them. */
const SHAPES: Array<(holes: string[], counter: string) => string> = [
  ([a]) => `{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":${a}},"logprobs":null,"finish_reason":null}]}`,
  ([a]) => `{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":${a}}}]},"finish_reason":null}],"usage":null}`,
  ([a]) => `{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"arguments":${a}}}]},"finish_reason":null}],"usage":null}`,
  ([a, b]) => `{"id":"c","choices":[{"index":0,"delta":{"content":${a}},"finish_reason":null}],"obfuscation":${b}}`,
  ([a, b, c]) => `{"id":"gen-1","choices":[{"index":0,"delta":{"content":${a},"role":"assistant","reasoning":${b},"reasoning_details":[{"type":"reasoning.text","text":${c},"index":0}]},"finish_reason":null}]}`,
  ([a]) => `{"id": "chatcmpl-1", "choices": [{"index": 0, "delta": {"content": ${a}}, "finish_reason": null}]}`,
  ([a]) => `{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":${a}}}`,
  ([a]) => `{"choices":[{"delta":{"content":${a},"content":"x"}}]}`,
  ([a]) => `{"choices":[{"delta":{"content":${a}},"logprobs":{"content":[]}}]}`,
  ([a]) => `{"__proto__":{"x":1},"choices":[{"delta":{"content":${a}}}]}`,
  ([a]) => `{"a":-0,"b":1e400,"c":[true,false,null],"content":${a}}`,
  ([a, b], n) => `{"type":"response.output_text.delta","content_index":0,"delta":${a},"item_id":"msg_1","logprobs":[],"obfuscation":${b},"output_index":0,"sequence_number":${n}}`,
  ([a, b], n) => `{"type":"response.function_call_arguments.delta","delta":${a},"item_id":"fc_1","obfuscation":${b},"output_index":1,"sequence_number":${n}}`,
  ([a, b, c]) => `{"model":"qwen3","created_at":${a},"message":{"role":"assistant","content":${b},"thinking":${c}},"done":false}`,
  ([a], n) => `{"sequence_number":${n},"delta":${a}}`,
];

const holeValue = fc.oneof(
  fc.string(),
  fc.string({ unit: "grapheme" }),
  fc.string({ unit: "binary" }),
  fc.string({ unit: fc.constantFrom("\\", '"', "\n", "\t", "\u0000", "\ud800", "a", "/", "u", "toolwire-hole-0", "}", ",") }),
  fc.constantFrom("toolwire-hole-0", "toolwire-hole-1", "x", ""),
);

/** A counter as servers write it, and as they might: leading zeros, fractions, exponents, signs, 16 digits. */
const counter = fc.oneof(
  { weight: 6, arbitrary: fc.nat({ max: 100_000 }).map(String) },
  { weight: 1, arbitrary: fc.constantFrom("0", "00", "01", "-0", "-1", "1.5", "1e3", "1E3", "2.0", "987654321", "987654322", "999999999999999", "1000000000000000", "12345678901234567890") },
);

/** An event of one of `shapes`, its strings written in one of the styles. */
const eventOf = (shapes: readonly number[]) =>
  fc
    .record({ shape: fc.constantFrom(...shapes), holes: fc.array(holeValue, { minLength: 3, maxLength: 3 }), style: fc.nat({ max: 2 }), counter })
    .map(({ shape, holes, style, counter }) => (SHAPES[shape] as (typeof SHAPES)[number])(holes.map((hole) => encodeString(hole, style)), counter));

function mutate(text: string, at: number, op: number, ch: string): string {
  const i = at % (text.length + 1);
  if (op === 0) return text.slice(0, i) + ch + text.slice(i);
  if (op === 1) return text.slice(0, i) + text.slice(i + 1);
  return text.slice(0, i) + ch + text.slice(i + 1);
}

/**
 * A stream over a few shapes: mostly their events, some with one character inserted, deleted or
 * replaced, some cut, some any other JSON.
 */
const stream = fc.uniqueArray(fc.nat({ max: SHAPES.length - 1 }), { minLength: 1, maxLength: 3 }).chain((shapes) => {
  const event = eventOf(shapes);
  return fc.array(
    fc.oneof(
      { weight: 6, arbitrary: event },
      {
        weight: 2,
        arbitrary: fc
          .tuple(event, fc.nat(), fc.nat({ max: 2 }), fc.constantFrom(" ", "\\", '"', "}", "{", "0", ",", ":", "a", "\u0001", "\u001f", "u", "-"))
          .map(([text, at, op, ch]) => mutate(text, at, op, ch)),
      },
      { weight: 1, arbitrary: fc.tuple(event, fc.nat()).map(([text, at]) => text.slice(0, at % (text.length + 1))) },
      { weight: 1, arbitrary: fc.json() },
    ),
    { maxLength: 60 },
  );
});

describe("EventJsonReader: exactly JSON.parse", () => {
  it("on streams of repeating envelopes with changing strings, mutations, cuts and other JSON", () => {
    let hits = 0;
    let events = 0;
    fc.assert(
      fc.property(stream, (texts) => {
        const reader = new EventJsonReader();
        for (const text of texts) expectSameAsJsonParse(reader, text);
        hits += reader.stats.hits;
        events += texts.length;
      }),
      { numRuns: 1500 },
    );
    // The property is about the template path: a good share of the events must have taken it.
    expect(hits).toBeGreaterThan(events / 10);
  });

  it("on every recorded event of testdata, in stream order", () => {
    let events = 0;
    let hits = 0;
    // The project's own streams, and the upstream corpus's imported in memory where it is present.
    const texts = [
      ...["openai-chat", "anthropic", "openai-responses", "gemini", "ollama", "bedrock", "text-calls"].flatMap((protocol) =>
        readdirSync(join(TESTDATA, protocol)).filter((file) => file.endsWith(".ndjson")).map((name) => readFileSync(join(TESTDATA, protocol, name), "utf8")),
      ),
      ...upstreamImported().map((file) => file.text),
    ];
    for (const text of texts) {
      {
        const reader = new EventJsonReader();
        for (const line of text.split("\n")) {
          if (!line.startsWith("{")) continue;
          const data = (JSON.parse(line) as { data?: unknown }).data;
          if (typeof data !== "object" || data === null) continue;
          expectSameAsJsonParse(reader, JSON.stringify(data));
          events++;
        }
        hits += reader.stats.hits;
      }
    }
    expect(events).toBeGreaterThan(upstreamImported().length > 0 ? 3000 : 800);
    // Most repeating deltas are built from templates (a third of all events is a conservative floor).
    expect(hits).toBeGreaterThan(events / 3);
  });

  it.each([
    ['{"choices":[{"delta":{"content":"a"}}]}', '{"choices":[{"delta":{"content":"\\x"}}]}', "an invalid escape"],
    ['{"choices":[{"delta":{"content":"a"}}]}', '{"choices":[{"delta":{"content":"\\u12"}}]}', "a short \\u escape"],
    ['{"choices":[{"delta":{"content":"a"}}]}', '{"choices":[{"delta":{"content":"a\tb"}}]}', "a raw tab"],
    ['{"choices":[{"delta":{"content":"a"}}]}', '{"choices":[{"delta":{"content":"a"b"}}]}', "an unescaped quote"],
    ['{"choices":[{"delta":{"content":"a"}}]}', '{"choices":[{"delta":{"content":"a\\', "a cut escape"],
    ['{"choices":[{"delta":{"content":"a"}}]}', '{"choices":[{"delta":{"content":"a"}}]} ', "trailing space"],
    ['{"choices":[{"delta":{"content":"a"}}]}', '{"choices":[{"delta":{"content":"a","content":"b"}}]}', "a duplicate key"],
    ['{"choices":[{"delta":{"content":"a"}}]}', '{"choices":[{"delta":{"content":"\\ud800"}}]}', "a lone surrogate"],
    ['{"x":"toolwire-hole-0","content":"\\u0061"}', '{"x":"toolwire-hole-0","content":"b"}', "a hole encoded unlike JSON.stringify"],
    ['{"content":"toolwire-hole-0","y":{"content":"toolwire-hole-0"}}', '{"content":"z","y":{"content":"toolwire-hole-0"}}', "a marker as a value"],
    ['{"content":"a","content":"\\u0061"}', '{"content":"b","content":"\\u0061"}', "a shadowed key holding the same string"],
  ])("after %j, on %j (%s)", (first, second) => {
    const reader = new EventJsonReader();
    expectSameAsJsonParse(reader, first);
    expectSameAsJsonParse(reader, first);
    expectSameAsJsonParse(reader, second);
  });
});

describe("EventJsonReader: templates", () => {
  const chatDelta = (fragment: string, index = 0): string =>
    `{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"index":${index},"function":{"arguments":${JSON.stringify(fragment)}}}]},"logprobs":null,"finish_reason":null}]}`;

  it("builds the repeated deltas of a stream, interleaved calls included, from templates", () => {
    const reader = new EventJsonReader();
    for (let i = 0; i < 1000; i++) expectSameAsJsonParse(reader, chatDelta(`{"k${i}":"\\n"`, i % 4));
    expect(reader.stats.hits).toBeGreaterThanOrEqual(990);
    expect(reader.stats.off).toBe(false);
  });

  it("reads OpenAI's changing obfuscation string as a second hole", () => {
    const reader = new EventJsonReader();
    for (let i = 0; i < 100; i++) expectSameAsJsonParse(reader, `{"id":"c","choices":[{"index":0,"delta":{"content":"w${i}"},"finish_reason":null}],"usage":null,"obfuscation":"${"x".repeat(i % 7)}"}`);
    expect(reader.stats.hits).toBe(99);
  });

  it("gives every event its own objects", () => {
    const reader = new EventJsonReader();
    const first = reader.parse(chatDelta("a")) as { choices: Array<{ delta: { tool_calls: Array<{ function: { arguments: string } }> } }> };
    const second = reader.parse(chatDelta("b")) as typeof first;
    const third = reader.parse(chatDelta("c")) as typeof first;
    expect(reader.stats.hits).toBe(2);
    (second.choices[0] as (typeof second.choices)[0]).delta.tool_calls[0]!.function.arguments = "changed";
    expect(third.choices[0]!.delta.tool_calls[0]!.function.arguments).toBe("c");
    expect(third.choices).not.toBe(second.choices);
    expect(first.choices[0]!.delta.tool_calls[0]!.function.arguments).toBe("a");
  });

  it("keeps later events as JSON.parse makes them when the caller changes an event it was handed", () => {
    const reader = new EventJsonReader();
    type Event = { choices: Array<{ delta: { tool_calls: Array<{ function: { arguments: string }; extra?: unknown }> } }> };
    for (let i = 0; i < 40; i++) {
      const text = chatDelta(`f${i}`, i % 2);
      const event = reader.parse(text) as Event;
      expect(event).toStrictEqual(JSON.parse(text));
      // What a consumer might do with an event: annotate it, empty it.
      event.choices[0]!.delta.tool_calls[0]!.extra = { seen: i };
      event.choices[0]!.delta.tool_calls[0]!.function.arguments = "";
      event.choices.push(event.choices[0]!);
    }
    expect(reader.stats.hits).toBeGreaterThan(30);
  });

  it("copies containers no hole is under for each event", () => {
    const reader = new EventJsonReader();
    type Event = { choices: Array<{ logprobs: { content: unknown[] } }> };
    const events = Array.from({ length: 10 }, (_, i) => reader.parse(`{"choices":[{"delta":{"content":"${i}"},"logprobs":{"content":[]}}]}`) as Event);
    expect(reader.stats.hits).toBe(9);
    events[5]!.choices[0]!.logprobs.content.push("changed");
    expect(events[6]!.choices[0]!.logprobs.content).toEqual([]);
  });

  it("reads the Responses API's counter and Ollama's timestamp as holes", () => {
    const reader = new EventJsonReader();
    for (let i = 0; i < 100; i++) expectSameAsJsonParse(reader, `{"type":"response.function_call_arguments.delta","delta":"{\\"a\\":${i}","item_id":"fc_1","obfuscation":"x${i}","output_index":0,"sequence_number":${i + 3}}`);
    for (let i = 0; i < 100; i++) expectSameAsJsonParse(reader, `{"model":"qwen3","created_at":"2025-07-01T10:00:00.${i}Z","message":{"role":"assistant","content":"w${i}"},"done":false}`);
    expect(reader.stats.hits).toBe(198);
  });

  it("builds exactly JSON.parse's objects for many shapes in one process, past the shapes it gives copy sites", () => {
    // More shapes than the reader remembers (64), each read by a stream of its own, then all again:
    // shapes that share a copy site, or were never remembered, are built alike.
    const shapes = Array.from({ length: 150 }, (_, i) => (content: string) => `{"id":"s${i}","k${i}":${i},"choices":[{"index":0,"delta":{"content":${JSON.stringify(content)},"x${i % 7}":null}}]}`);
    for (let round = 0; round < 2; round++) {
      for (const shape of shapes) {
        const reader = new EventJsonReader();
        for (let i = 0; i < 5; i++) expectSameAsJsonParse(reader, shape(`w${round}${i}`));
        expect(reader.stats.hits).toBe(4);
      }
    }
  });

  it("keeps an event's own keys when it has keys an object's prototype holds", () => {
    const reader = new EventJsonReader();
    for (let i = 0; i < 10; i++) expectSameAsJsonParse(reader, `{"constructor":"c","toString":1,"hasOwnProperty":null,"choices":[{"delta":{"content":"${i}","valueOf":{}}}]}`);
    expect(reader.stats.hits).toBe(9);
  });

  it("stops learning and matching on a stream whose envelope never repeats", () => {
    const reader = new EventJsonReader();
    for (let i = 0; i < 2000; i++) expectSameAsJsonParse(reader, `{"id":"chunk-${i}","choices":[{"index":0,"delta":{"content":"x"}}]}`);
    expect(reader.stats.hits).toBe(0);
    expect(reader.stats.attempts).toBeLessThanOrEqual(6);
    expect(reader.stats.off).toBe(true);
  });
});

describe("the fuzzer's event_json_exact check", () => {
  it("passes a stream whose events the reader builds from templates, and one with payloads that do not parse", () => {
    const deltas = Array.from({ length: 50 }, (_, i) => `data: {"id":"c","choices":[{"index":0,"delta":{"content":"w${i}\\\\n"}}]}\n\n`).join("");
    expect(checkEventJson(deltas)).toEqual([]);
    expect(checkEventJson(`${deltas}data: {"id":"c","choices":[{"index":0,"delta":{"content":"w\\x"}}]}\n\ndata: [DONE]\n\n`)).toEqual([]);
  });
});

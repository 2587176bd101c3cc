import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { isWrappedRecord, parseRecords, RecordFormatError, serializeRecords, type RecordedStream } from "../../src/framing/records.js";
import { PROVIDERS } from "../../src/types.js";

function formatError(text: string): RecordFormatError {
  try {
    parseRecords(text);
  } catch (error) {
    if (error instanceof RecordFormatError) return error;
    throw error;
  }
  throw new Error("expected a RecordFormatError");
}

describe("parseRecords", () => {
  it("reads the kilroy {sequence, event, data} form, grouping by sequence in first-appearance order", () => {
    const text = [
      "# Sequence: one",
      '{"sequence":"b","event":"content_block_start","data":{"index":0}}',
      "",
      '{"sequence":"a","event":"message_stop","data":{}}',
      '{"sequence":"b","event":"content_block_stop","data":{"index":0}}',
    ].join("\n");
    expect(parseRecords(text)).toEqual([
      {
        sequence: "b",
        provider: null,
        events: [
          { event: "content_block_start", data: { index: 0 } },
          { event: "content_block_stop", data: { index: 0 } },
        ],
      },
      { sequence: "a", provider: null, events: [{ event: "message_stop", data: {} }] },
    ]);
  });

  it("reads bare payload lines as one unnamed stream", () => {
    const text = '{"type":"message_start"}\n{"choices":[]}\n"[DONE]"\n';
    expect(parseRecords(text)).toEqual([
      { sequence: null, provider: null, events: [{ data: { type: "message_start" } }, { data: { choices: [] } }, { data: "[DONE]" }] },
    ]);
  });

  it("treats a line as wrapped only when data is present and every key is a wrapper key", () => {
    expect(isWrappedRecord({ data: 1 })).toBe(true);
    expect(isWrappedRecord({ data: null, event: "x", sequence: "s", provider: "anthropic", t: 3 })).toBe(true);
    expect(isWrappedRecord({ data: 1, type: "x" })).toBe(false);
    expect(isWrappedRecord({ event: "x" })).toBe(false);
    expect(isWrappedRecord([{ data: 1 }])).toBe(false);
    const [stream] = parseRecords('{"data":{"a":1},"object":"chat.completion.chunk"}');
    expect(stream?.events).toEqual([{ data: { data: { a: 1 }, object: "chat.completion.chunk" } }]);
  });

  it("keeps provider and times, and accepts CRLF and a byte-order mark", () => {
    const text = '\uFEFF{"sequence":"s","provider":"gemini","data":{"x":1}}\r\n{"sequence":"s","t":12.5,"data":{"x":2}}\r\n';
    expect(parseRecords(text)).toEqual([
      { sequence: "s", provider: "gemini", events: [{ data: { x: 1 } }, { data: { x: 2 } }], times: [undefined, 12.5] },
    ]);
  });

  it("names the line and the problem for malformed lines", () => {
    const cases: Array<[string, number, RegExp]> = [
      ['{"data":1}\n\n{"data":', 3, /not a JSON value/],
      ['# c\n{"data":1,"provider":"openai"}', 2, /unknown provider "openai"; expected one of anthropic/],
      ['{"data":1,"event":5}', 1, /"event" must be a string/],
      ['{"data":1,"sequence":["x"]}', 1, /"sequence" must be a string or null/],
      ['{"data":1,"t":-1}', 1, /"t" must be a non-negative number/],
      ['{"data":1,"sequence":"s","provider":"gemini"}\n{"data":2,"sequence":"s","provider":"ollama"}', 2, /conflicts with "gemini"/],
      ["data: {}", 1, /not a JSON value/],
    ];
    for (const [text, line, message] of cases) {
      const error = formatError(text);
      expect(error.line).toBe(line);
      expect(error.message).toMatch(new RegExp(`^line ${line}: `));
      expect(error.message).toMatch(message);
    }
  });
});

describe("serializeRecords", () => {
  it("writes wrapped records with a comment header", () => {
    const text = serializeRecords(
      [
        { sequence: "interaction-0", provider: "openai-chat", events: [{ data: { choices: [] } }, { data: "[DONE]" }] },
        { sequence: null, provider: null, events: [{ event: "ping", data: { type: "ping" } }], times: [5] },
      ],
      { header: ["source: x.yaml", "", "note: multi\nline"] },
    );
    expect(text).toBe(
      [
        "# source: x.yaml",
        "#",
        "# note: multi",
        "# line",
        '{"sequence":"interaction-0","provider":"openai-chat","data":{"choices":[]}}',
        '{"sequence":"interaction-0","provider":"openai-chat","data":"[DONE]"}',
        '{"event":"ping","t":5,"data":{"type":"ping"}}',
        "",
      ].join("\n"),
    );
  });

  it("keeps payloads containing newlines and line separators on one line", () => {
    const streams: RecordedStream[] = [{ sequence: null, provider: null, events: [{ data: { text: "a\nb\r\u2028c" } }] }];
    const text = serializeRecords(streams);
    expect(text.split("\n")).toHaveLength(2);
    expect(parseRecords(text)).toEqual(streams);
  });
});

// JSON values as they survive JSON (no -0, no undefined): what a recorded payload can be.
const jsonData = fc.jsonValue({ maxDepth: 3 }).map((value) => JSON.parse(JSON.stringify(value)) as unknown);
const eventArb = fc.record({ event: fc.option(fc.string({ maxLength: 20 }), { nil: undefined }), data: jsonData }).map(({ event, data }) =>
  event === undefined ? { data } : { event, data },
);
const streamArb = fc
  .record({
    provider: fc.option(fc.constantFrom(...PROVIDERS), { nil: null }),
    events: fc.array(eventArb, { minLength: 1, maxLength: 6 }),
    timed: fc.boolean(),
  })
  .chain(({ provider, events, timed }) =>
    (timed ? fc.array(fc.option(fc.double({ min: 0, max: 1e7, noNaN: true }), { nil: undefined }), { minLength: events.length, maxLength: events.length }) : fc.constant(null)).map(
      (times) => ({ provider, events, times }),
    ),
  );

describe("round trip", () => {
  it("parseRecords(serializeRecords(streams)) gives the streams back", () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.option(fc.string({ maxLength: 12 }), { nil: null }), { minLength: 1, maxLength: 4 }),
        fc.array(streamArb, { minLength: 4, maxLength: 4 }),
        fc.option(fc.array(fc.string({ maxLength: 30 }), { maxLength: 3 }), { nil: undefined }),
        (sequences, bodies, header) => {
          const streams: RecordedStream[] = sequences.map((sequence, i) => {
            const body = bodies[i]!;
            const stream: RecordedStream = { sequence, provider: body.provider, events: body.events };
            // A stream whose records carry no t at all reads back without times.
            if (body.times && body.times.some((t) => t !== undefined)) stream.times = body.times.map((t) => (Object.is(t, -0) ? 0 : t));
            return stream;
          });
          const text = serializeRecords(streams, header ? { header } : {});
          expect(parseRecords(text)).toEqual(streams);
        },
      ),
      { numRuns: 300 },
    );
  });
});

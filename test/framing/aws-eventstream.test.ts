import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  base64ToBytes,
  crc32,
  createEventStreamFramer,
  decodeEventStream,
  encodeEventStreamMessage,
  EventStreamError,
  toProviderEvent,
  unwrapInvokeModelChunk,
  type EventStreamMessage,
} from "../../src/framing/aws-eventstream.js";
import { describeCorpus } from "../helpers/corpus.js";
import { corpusFile } from "../import/corpus.js";

/**
 * A Bedrock exception frame as the service sends one mid-stream (headers in the order AWS writes
 * them), built here so the framing tests need no recording. The upstream corpus's recorded
 * exception frame is checked separately where the corpus is present.
 */
const EXCEPTION_PAYLOAD = { message: "Stream interrupted", originalStatusCode: 503, originalMessage: "The upstream model was unavailable." };
const FIXTURE_BYTES = encodeEventStreamMessage(
  { ":message-type": "exception", ":exception-type": "modelStreamErrorException", ":content-type": "application/json" },
  JSON.stringify(EXCEPTION_PAYLOAD),
);

const fixtureBytes = (): Uint8Array => FIXTURE_BYTES.slice();
const text = (bytes: Uint8Array): string => new TextDecoder().decode(bytes);

function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.length;
  }
  return out;
}

function catchError(fn: () => unknown): EventStreamError {
  try {
    fn();
  } catch (error) {
    if (error instanceof EventStreamError) return error;
    throw error;
  }
  throw new Error("expected an EventStreamError");
}

describe("crc32", () => {
  it("matches the IEEE check value", () => {
    expect(crc32(new TextEncoder().encode("123456789"))).toBe(0xcbf43926);
    expect(crc32(new Uint8Array(0))).toBe(0);
  });

  it("chains across ranges", () => {
    const bytes = new TextEncoder().encode("hello, event stream");
    expect(crc32(bytes, 7, bytes.length, crc32(bytes, 0, 7))).toBe(crc32(bytes));
  });
});

describeCorpus("upstream", "the recorded model-stream-error frame (vercel/ai's fixture, in the corpus)", () => {
  it("decodes to one exception frame with valid checksums", () => {
    const { bytes } = corpusFile("vercel__ai/packages__amazon-bedrock__src____fixtures____model-stream-error-exception.eventstream.base64.txt");
    const [message, ...rest] = decodeEventStream(base64ToBytes(new TextDecoder().decode(bytes).trim()));
    expect(rest).toHaveLength(0);
    expect(message?.headers).toEqual({ ":message-type": "exception", ":exception-type": "modelStreamErrorException", ":content-type": "application/json" });
    expect(Object.keys(JSON.parse(text(message!.payload)) as object)).toEqual(["message", "originalStatusCode", "originalMessage"]);
  });
});

describe("a model-stream-error exception frame", () => {
  it("decodes to one exception frame with valid checksums", () => {
    const [message, ...rest] = decodeEventStream(fixtureBytes());
    expect(rest).toHaveLength(0);
    expect(message?.headers).toEqual({
      ":message-type": "exception",
      ":exception-type": "modelStreamErrorException",
      ":content-type": "application/json",
    });
    expect(JSON.parse(text(message!.payload))).toEqual(EXCEPTION_PAYLOAD);
  });

  it("maps to an exception provider event", () => {
    const [message] = decodeEventStream(fixtureBytes());
    expect(toProviderEvent(message!)).toEqual({
      event: "exception",
      data: { exceptionType: "modelStreamErrorException", ...EXCEPTION_PAYLOAD },
    });
  });

  it("reports a checksum error naming the frame offset for every flipped byte", () => {
    const first = encodeEventStreamMessage({ ":message-type": "event", ":event-type": "messageStart" }, '{"role":"assistant"}');
    const fixture = fixtureBytes();
    for (let i = 0; i < fixture.length; i++) {
      const corrupted = concat([first, fixture]);
      corrupted[first.length + i]! ^= 0x01;
      const error = catchError(() => decodeEventStream(corrupted));
      expect(error.code).toBe(i < 12 ? "prelude_crc" : "message_crc");
      expect(error.offset).toBe(first.length);
      expect(error.message).toContain(`byte offset ${first.length}`);
      expect(error.message).toMatch(i < 12 ? /prelude CRC32/ : /message CRC32/);
    }
  });

  it("reports truncation at finish() with the offset of the incomplete frame", () => {
    const bytes = fixtureBytes();
    for (const cut of [1, 11, 12, 100, bytes.length - 1]) {
      const framer = createEventStreamFramer();
      expect(framer.push(bytes.subarray(0, cut))).toEqual([]);
      const error = catchError(() => framer.flush());
      expect(error.code).toBe("truncated");
      expect(error.offset).toBe(0);
      expect(error.message).toContain(`${cut} trailing bytes`);
    }
  });

  it("stays failed after an error", () => {
    const bytes = fixtureBytes();
    bytes[20]! ^= 0xff;
    const framer = createEventStreamFramer();
    const error = catchError(() => framer.push(bytes));
    expect(catchError(() => framer.push(new Uint8Array(1)))).toBe(error);
    expect(catchError(() => framer.flush())).toBe(error);
  });
});

describe("header value types", () => {
  it("round-trips every type of the spec", () => {
    const bytes = encodeEventStreamMessage(
      {
        t: true,
        f: false,
        b: { type: "byte", value: -7 },
        s: { type: "short", value: -30000 },
        i: 123456789,
        l: { type: "long", value: 2 ** 40 + 3 },
        bytes: new Uint8Array([0, 1, 254, 255]),
        str: "héllo",
        ts: { type: "timestamp", value: 1_750_000_000_123 },
        id: { type: "uuid", value: "0123abcd-4567-89ef-0123-456789abcdef" },
      },
      "{}",
    );
    const [message] = decodeEventStream(bytes);
    expect(message?.headers).toEqual({
      t: true,
      f: false,
      b: -7,
      s: -30000,
      i: 123456789,
      l: 2 ** 40 + 3,
      bytes: new Uint8Array([0, 1, 254, 255]),
      str: "héllo",
      ts: 1_750_000_000_123,
      id: "0123abcd-4567-89ef-0123-456789abcdef",
    });
  });

  it("rejects an unknown header type with the frame offset", () => {
    const frame = encodeEventStreamMessage({ a: "x" }, "");
    // Rewrite the value type byte (after len, name) to 42 and fix both checksums.
    frame[12 + 1 + 1] = 42;
    const view = new DataView(frame.buffer);
    view.setUint32(frame.length - 4, crc32(frame, 0, frame.length - 4));
    const error = catchError(() => decodeEventStream(frame));
    expect(error.code).toBe("invalid_header");
    expect(error.message).toContain("unknown value type 42");
  });

  it("rejects a length field that passed the prelude CRC but cannot be a frame", () => {
    const frame = new Uint8Array(16);
    const view = new DataView(frame.buffer);
    view.setUint32(0, 8);
    view.setUint32(8, crc32(frame, 0, 8));
    expect(catchError(() => decodeEventStream(frame)).code).toBe("invalid_length");
  });
});

const headerValue = fc.oneof(
  fc.boolean(),
  fc.string({ maxLength: 40 }),
  fc.integer({ min: -0x80000000, max: 0x7fffffff }),
  fc.uint8Array({ maxLength: 20 }),
);
const messageArb = fc.record({
  headers: fc.dictionary(fc.string({ minLength: 1, maxLength: 12 }), headerValue, { maxKeys: 5 }),
  payload: fc.uint8Array({ maxLength: 300 }),
});

describe("push framing", () => {
  it("gives identical messages however the bytes are split", () => {
    fc.assert(
      fc.property(fc.array(messageArb, { minLength: 1, maxLength: 5 }), fc.array(fc.nat(), { maxLength: 12 }), (messages, cuts) => {
        const frames = [fixtureBytes(), ...messages.map((m) => encodeEventStreamMessage(m.headers, m.payload))];
        const stream = concat(frames);
        const whole = decodeEventStream(stream);
        const points = [...new Set(cuts.map((c) => c % (stream.length + 1)))].sort((a, b) => a - b);
        const framer = createEventStreamFramer();
        const split: EventStreamMessage[] = [];
        let last = 0;
        for (const point of [...points, stream.length]) {
          split.push(...framer.push(stream.slice(last, point)));
          last = point;
        }
        split.push(...framer.flush());
        expect(split).toEqual(whole);
        expect(whole).toHaveLength(frames.length);
        whole.slice(1).forEach((message, i) => {
          expect(message.headers).toEqual(messages[i]!.headers);
          expect(message.payload).toEqual(messages[i]!.payload);
        });
      }),
      { numRuns: 200 },
    );
  });

  it("decodes byte-at-a-time", () => {
    const stream = concat([fixtureBytes(), fixtureBytes()]);
    const framer = createEventStreamFramer();
    const out: EventStreamMessage[] = [];
    for (const byte of stream) out.push(...framer.push(new Uint8Array([byte])));
    out.push(...framer.flush());
    expect(out).toHaveLength(2);
    expect(out[1]).toEqual(decodeEventStream(fixtureBytes())[0]);
  });
});

describe("provider events", () => {
  it("maps event frames to {event: :event-type, data: JSON payload}", () => {
    const [message] = decodeEventStream(
      encodeEventStreamMessage(
        { ":event-type": "contentBlockDelta", ":content-type": "application/json", ":message-type": "event" },
        '{"contentBlockIndex":1,"delta":{"toolUse":{"input":"{\\"a\\":"}},"p":"abc"}',
      ),
    );
    expect(toProviderEvent(message!)).toEqual({
      event: "contentBlockDelta",
      data: { contentBlockIndex: 1, delta: { toolUse: { input: '{"a":' } }, p: "abc" },
    });
  });

  it("maps protocol error frames", () => {
    const [message] = decodeEventStream(
      encodeEventStreamMessage({ ":message-type": "error", ":error-code": "InternalFailure", ":error-message": "boom" }, ""),
    );
    expect(toProviderEvent(message!)).toEqual({ event: "error", data: { errorCode: "InternalFailure", errorMessage: "boom" } });
  });

  it("unwraps InvokeModel chunk frames into the inner Anthropic event", () => {
    const inner = { type: "content_block_delta", index: 1, delta: { type: "input_json_delta", partial_json: '{"a": 2' } };
    const bytes = btoa(JSON.stringify(inner));
    const [message] = decodeEventStream(
      encodeEventStreamMessage({ ":event-type": "chunk", ":content-type": "application/json", ":message-type": "event" }, JSON.stringify({ bytes, p: "abcd" })),
    );
    const event = toProviderEvent(message!);
    expect(event.event).toBe("chunk");
    expect(unwrapInvokeModelChunk(event)).toEqual({ event: "content_block_delta", data: inner });
  });

  it("leaves other events alone and rejects a chunk whose bytes are not base64 JSON", () => {
    expect(unwrapInvokeModelChunk({ event: "messageStart", data: { role: "assistant" } })).toBeNull();
    expect(unwrapInvokeModelChunk({ event: "chunk", data: { p: "x" } })).toBeNull();
    const error = catchError(() => unwrapInvokeModelChunk({ event: "chunk", data: { bytes: "!!!" } }));
    expect(error.code).toBe("invalid_chunk");
    expect(catchError(() => unwrapInvokeModelChunk({ event: "chunk", data: { bytes: btoa("not json") } })).code).toBe("invalid_chunk");
  });
});

import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { corpusDir } from "../helpers/corpus.js";
import { createEventStreamFramer, decodeEventStream, toProviderEvent } from "../../src/framing/aws-eventstream.js";
import { encodeJsonEventFrame } from "../../src/framing/aws-eventstream-encode.js";
import { concatBytes } from "../../src/testing/wire.js";
import { cassetteBodies } from "../corpus/support.js";
import { cyclicPieces } from "../helpers/pieces.js";

/** The frame encoder the Bedrock re-encoder writes its rewritten frames with. */

// Objects, as every ConverseStream payload is (a string body is written as payload text).
const json = fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 2 })).map((value) => JSON.parse(JSON.stringify(value)) as unknown);
const eventType = fc.string({ minLength: 1, maxLength: 40 });

describe("encodeJsonEventFrame", () => {
  it("round-trips through the framing decoder, in any chunking, with Bedrock's three headers", () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(eventType, json), { minLength: 1, maxLength: 5 }), fc.array(fc.integer({ min: 1, max: 50 }), { minLength: 1, maxLength: 4 }), (events, sizes) => {
        const bytes = concatBytes(events.map(([name, body]) => encodeJsonEventFrame(name, body)));
        const framer = createEventStreamFramer();
        const messages = [];
        for (const piece of cyclicPieces(bytes, sizes)) messages.push(...framer.push(piece));
        messages.push(...framer.flush());
        expect(messages.map((message) => message.headers)).toEqual(events.map(([name]) => ({ ":event-type": name, ":content-type": "application/json", ":message-type": "event" })));
        expect(messages.map((message) => toProviderEvent(message))).toEqual(events.map(([name, body]) => ({ event: name, data: body })));
      }),
    );
  });

  it("writes a payload given as text as it is", () => {
    const [message] = decodeEventStream(encodeJsonEventFrame("metadata", '{"b":1, "a":2}'));
    expect(new TextDecoder().decode(message!.payload)).toBe('{"b":1, "a":2}');
  });

  it.skipIf(corpusDir("upstream") === null)("gives the very bytes of frames Bedrock sent (pydantic-ai's recorded Nova stream, in the upstream corpus)", () => {
    const [recorded] = cassetteBodies("pydantic__pydantic-ai/tests__models__cassettes__test_bedrock__test_bedrock_model_iter_stream.yaml") as Uint8Array[];
    const body = new Uint8Array(recorded!);
    let offset = 0;
    let checked = 0;
    for (const message of decodeEventStream(body)) {
      const length = new DataView(body.buffer, body.byteOffset + offset, 4).getUint32(0);
      const frame = body.subarray(offset, offset + length);
      offset += length;
      const name = message.headers[":event-type"] as string;
      expect(encodeJsonEventFrame(name, new TextDecoder().decode(message.payload)), `${name} at ${offset - length}`).toEqual(frame);
      checked++;
    }
    expect(checked).toBeGreaterThan(20);
    // The first frame, byte for byte: prelude (total 0x90, headers 0x52, prelude CRC), headers, payload, message CRC.
    expect(Array.from(encodeJsonEventFrame("messageStart", '{"p":"abcdefghijklmnopqrs","role":"assistant"}').subarray(0, 12))).toEqual([0x00, 0x00, 0x00, 0x90, 0x00, 0x00, 0x00, 0x52, 0x31, 0x41, 0xc8, 0xa1]);
  });
});

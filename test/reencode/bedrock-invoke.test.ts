import { describe, expect, it } from "vitest";
import { createByteDecoder } from "../../src/adapters/bytes.js";
import { decodeEventStream, encodeEventStreamMessage } from "../../src/framing/aws-eventstream.js";
import { encodeJsonEventFrame } from "../../src/framing/aws-eventstream-encode.js";
import { createBedrockInvokeReencoder } from "../../src/reencode/index.js";
import type { Reencoder } from "../../src/reencode/types.js";
import { concatBytes } from "../../src/testing/wire.js";
import type { DecodedTurn, ProviderEvent } from "../../src/types.js";
import { cassetteBodies } from "../corpus/support.js";
import { a } from "../helpers/anthropic-events.js";
import { corpusDir } from "../helpers/corpus.js";
import { testdataFiles } from "../helpers/testdata.js";
import { reencode as reencodeSse, reencodeWith, sseBody } from "./support.js";

/**
 * Claude on Bedrock (`invoke-with-response-stream`): Anthropic events in base64 `chunk` frames. The
 * recorded Bedrock body and every Anthropic stream of testdata wrapped the same way: the client
 * decodes the runnable calls toolwire decodes, the same ones the SSE re-encoder gives for the same
 * events; frames that need no fix come out byte for byte.
 */

const utf8 = new TextEncoder();

function chunkFrame(event: ProviderEvent): Uint8Array {
  let data = event.data;
  if (typeof data === "object" && data !== null && !Array.isArray(data) && event.event !== undefined && (data as Record<string, unknown>).type === undefined) data = { type: event.event, ...data };
  const json = utf8.encode(typeof data === "string" ? data : JSON.stringify(data));
  let binary = "";
  for (const byte of json) binary += String.fromCharCode(byte);
  return encodeJsonEventFrame("chunk", { bytes: btoa(binary), p: "abcdef" });
}

const chunks = (events: readonly ProviderEvent[]): Uint8Array => concatBytes(events.map(chunkFrame));

function run(body: Uint8Array, sizes: readonly number[] = [body.length || 1]): { output: Uint8Array; reencoder: Reencoder } {
  return reencodeWith(createBedrockInvokeReencoder(), body, sizes);
}

function decode(bytes: Uint8Array): DecodedTurn {
  const decoder = createByteDecoder("anthropic", { framing: "aws-eventstream" });
  decoder.push(bytes);
  return decoder.finish();
}

/** The frames of a body but its pings, each as it came. */
function withoutPings(body: Uint8Array): Uint8Array {
  const frames: Uint8Array[] = [];
  for (let at = 0; at < body.length; ) {
    const length = new DataView(body.buffer, body.byteOffset + at, 4).getUint32(0);
    const frame = body.subarray(at, at + length);
    at += length;
    const [message] = decodeEventStream(frame);
    const chunk = JSON.parse(new TextDecoder().decode(message!.payload)) as { bytes?: string };
    if (chunk.bytes !== undefined && atob(chunk.bytes).includes('"type":"ping"')) continue;
    frames.push(frame);
  }
  return concatBytes(frames);
}

const runnable = (turn: DecodedTurn) => turn.toolCalls.filter((call) => call.arguments !== null).map((call) => ({ id: call.id, name: call.name, arguments: call.arguments }));

const cases = [
  ...(corpusDir("upstream") === null ? [] : cassetteBodies("charmbracelet__fantasy/providertests__testdata__TestBedrockCommon__bedrock-anthropic-claude-sonnet-4-5__tool_streaming.yaml")).map((body, n) => ({ key: `upstream fantasy claude-sonnet-4-5 invoke stream [${n}]`, body: new Uint8Array(body as Uint8Array), events: null })),
  ...testdataFiles("anthropic").flatMap((file) => file.streams.map((stream) => ({ key: `testdata/anthropic/${file.name}#${stream.sequence ?? ""} in chunk frames`, body: chunks(stream.events), events: stream.events }))),
];

describe.each(cases.map((c) => [c.key, c] as const))("re-encoding %s", (_key, { body, events }) => {
  const original = decode(body);
  const { output, reencoder } = run(body);
  const again = decode(output);

  it("delivers the runnable calls toolwire decodes, each complete and unrepaired", () => {
    expect(runnable(again)).toEqual(runnable(original));
    for (const call of again.toolCalls) expect(call).toMatchObject({ complete: true, repairs: [] });
    expect(again.text).toBe(original.text);
  });

  it("writes only frames with valid checksums, the unchanged ones byte for byte", () => {
    expect(() => decodeEventStream(output)).not.toThrow();
    // Pings are forwarded at once, also while a call is held: they keep the connection alive.
    if (reencoder.repairs.length === 0) expect(withoutPings(output)).toEqual(withoutPings(body));
    expect(output.length === body.length || reencoder.repairs.length > 0).toBe(true);
  });

  it("makes the same decisions as the SSE re-encoder on the same events", () => {
    if (events === null) return;
    const sse = reencodeSse("anthropic", utf8.encode(sseBody("anthropic", events)));
    expect(reencoder.repairs.map((report) => [report.action, report.code])).toEqual(sse.reencoder.repairs.map((report) => [report.action, report.code]));
  });

  it("gives the same bytes however the body is chunked", () => {
    expect(run(body, [1, 7, 33]).output).toEqual(output);
  });
});

describe("Claude on Bedrock quirks", () => {
  it("Kimi-style start input plus deltas: one rewritten block in new chunk frames, the rest as it came", () => {
    const events = [a.messageStart(), a.toolStart(0, "toolu_1", "shell", { command: "ls" }), a.json(0, '{"command":'), a.json(0, '"ls"}'), a.stop(0), a.messageDelta("tool_use"), a.messageStop()];
    const body = chunks(events);
    const { output, reencoder } = run(body, [5]);
    expect(runnable(decode(output))).toEqual([{ id: "toolu_1", name: "shell", arguments: { command: "ls" } }]);
    expect(reencoder.repairs.some((report) => report.action === "rewritten")).toBe(true);
    const head = chunkFrame(events[0]!);
    const tail = concatBytes(events.slice(5).map(chunkFrame));
    expect(output.subarray(0, head.length)).toEqual(head);
    expect(output.subarray(output.length - tail.length)).toEqual(tail);
  });

  it("a call cut by max_tokens is withheld", () => {
    const events = [a.messageStart(), a.toolStart(0, "toolu_1", "shell", {}), a.json(0, '{"comm'), a.messageDelta("max_tokens"), a.messageStop()];
    const { output, reencoder } = run(chunks(events));
    expect(output).toEqual(chunks([events[0]!, ...events.slice(3)]));
    expect(reencoder.repairs).toEqual([expect.objectContaining({ action: "withheld", code: "truncated" })]);
  });

  it("an exception frame mid-call: the call is withheld, the frame passes as it came", () => {
    const exception = encodeEventStreamMessage({ ":message-type": "exception", ":exception-type": "throttlingException", ":content-type": "application/json" }, '{"message":"slow down"}');
    const body = concatBytes([chunks([a.messageStart(), a.toolStart(0, "toolu_1", "shell", {}), a.json(0, '{"command":')]), exception]);
    const { output, reencoder } = run(body, [9]);
    expect(output).toEqual(concatBytes([chunks([a.messageStart()]), exception]));
    expect(reencoder.repairs).toEqual([expect.objectContaining({ action: "withheld", code: "truncated" })]);
  });

  it("a bad CRC after the stops of a call waiting for its verdict and of a good call: the good call is delivered, the bad frame and what follows come last", () => {
    const head = chunks([a.messageStart(), a.toolStart(0, "toolu_bad", "shell", {}), a.json(0, "not json"), a.stop(0), a.toolStart(1, "toolu_ok", "read", {}), a.json(1, '{"path":"a"}'), a.stop(1)]);
    const bad = chunks([a.messageDelta("tool_use")]);
    bad[bad.length - 6]! ^= 0x01;
    const tail = chunks([a.messageStop()]);
    const body = concatBytes([head, bad, tail]);
    const runnable = (turn: DecodedTurn) => turn.toolCalls.filter((call) => call.arguments !== null).map((call) => [call.id, call.arguments]);
    expect(runnable(decode(body))).toEqual([["toolu_ok", { path: "a" }]]);
    for (const sizes of [[body.length], [13]]) {
      const { output } = run(body, sizes);
      expect(runnable(decode(output))).toEqual([["toolu_ok", { path: "a" }]]);
      const text = new TextDecoder("latin1").decode(output);
      expect(text.endsWith(new TextDecoder("latin1").decode(concatBytes([bad, tail])))).toBe(true);
    }
  });

  it("a frame with a bad CRC passes as it came with every byte after it, reported; the held call is withheld", () => {
    const bad = chunks([a.json(0, '"ls"}')]);
    bad[bad.length - 6]! ^= 0x01;
    const tail = chunks([a.stop(0), a.messageDelta("tool_use"), a.messageStop()]);
    const body = concatBytes([chunks([a.messageStart(), a.toolStart(0, "toolu_1", "shell", {}), a.json(0, '{"command":')]), bad, tail]);
    const { output, reencoder } = run(body, [13]);
    expect(output).toEqual(concatBytes([chunks([a.messageStart()]), bad, tail]));
    expect(reencoder.repairs.map((report) => [report.action, report.code])).toEqual([
      ["withheld", "truncated"],
      ["classified", "eventstream_message_crc"],
    ]);
  });
});

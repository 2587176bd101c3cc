import { describe, expect, it } from "vitest";
import { base64ToBytes, crc32, decodeEventStream, encodeEventStreamMessage } from "../../src/framing/aws-eventstream.js";
import { readBedrockEvent } from "../../src/providers/bedrock.js";
import { createReencoder } from "../../src/reencode/index.js";
import { concatBytes, encodeEventStreamBytes } from "../../src/testing/wire.js";
import type { DecodedTurn, ProviderEvent } from "../../src/types.js";
import { cassetteBodies, corpusText } from "../corpus/support.js";
import { regressionFiles } from "../fuzz/support.js";
import { corpusDir } from "../helpers/corpus.js";
import { testdataFiles } from "../helpers/testdata.js";
import { decodeBytes, reencode } from "./support.js";

/**
 * The Bedrock ConverseStream re-encoder, on every Bedrock stream of testdata (records written as
 * binary frames, the upstream cassettes' binary bodies as recorded) and on the quirks it fixes:
 * decoding its output with toolwire's own decoder gives the runnable calls decoding the original
 * gives, each well-formed; every output frame passes its CRCs; a stream that needed no fix comes
 * out byte for byte.
 */

const ev = (name: string, body: Record<string, unknown>): ProviderEvent => ({ event: name, data: body });
const start = (index: number, toolUseId: string | undefined, name: string, extra: Record<string, unknown> = {}): ProviderEvent =>
  ev("contentBlockStart", { contentBlockIndex: index, start: { toolUse: { ...(toolUseId !== undefined ? { toolUseId } : {}), name, ...extra } } });
const input = (index: number, text: string): ProviderEvent => ev("contentBlockDelta", { contentBlockIndex: index, delta: { toolUse: { input: text } } });
const text = (index: number, value: string): ProviderEvent => ev("contentBlockDelta", { contentBlockIndex: index, delta: { text: value } });
const stop = (index: number): ProviderEvent => ev("contentBlockStop", { contentBlockIndex: index });
const messageStart = ev("messageStart", { role: "assistant" });
const messageStop = (stopReason: string): ProviderEvent => ev("messageStop", { stopReason });
const metadata = ev("metadata", { usage: { inputTokens: 10, outputTokens: 5, totalTokens: 15 }, metrics: { latencyMs: 100 } });

/** The runnable calls of a turn, as a client would run them. */
const runnable = (turn: DecodedTurn) => turn.toolCalls.filter((call) => call.arguments !== null).map((call) => ({ id: call.id, name: call.name, arguments: call.arguments }));

const isText = (body: Record<string, unknown>): boolean => typeof body.delta === "object" && body.delta !== null && "text" in body.delta;

/** Every frame of `bytes`, checked (prelude and message CRC); throws on a bad one. */
function frames(bytes: Uint8Array) {
  return decodeEventStream(bytes).map((message) => ({ event: message.headers[":event-type"], type: message.headers[":message-type"], body: JSON.parse(new TextDecoder().decode(message.payload)) as Record<string, unknown> }));
}

/** Each frame's bytes, as a comparable string. */
function rawFrames(bytes: Uint8Array): string[] {
  const found: string[] = [];
  for (let at = 0; at + 4 <= bytes.length; ) {
    const length = new DataView(bytes.buffer, bytes.byteOffset + at, 4).getUint32(0);
    found.push(Array.from(bytes.subarray(at, at + length)).join(","));
    at += length;
  }
  return found;
}

interface Case {
  key: string;
  body: Uint8Array;
  /** A frame of another kind came while a client toolUse block was open: it passes ahead of the held block. */
  interleaved?: boolean;
}

/** Whether any event comes between a client toolUse block's start and its stop (and so overtakes the held block). */
function interleavesHeldCall(events: readonly ProviderEvent[]): boolean {
  const open = new Set<number>();
  for (const event of events) {
    const { name, body } = readBedrockEvent(event);
    if (name === null || typeof body !== "object" || body === null) continue;
    const index = (body as Record<string, unknown>).contentBlockIndex;
    const start = (body as { start?: { toolUse?: unknown } }).start;
    if (name === "contentBlockStart" && typeof index === "number" && start?.toolUse !== undefined) {
      if (open.size > 0) return true;
      open.add(index);
    } else if (open.size > 0 && !(typeof index === "number" && open.has(index))) return true;
    else if (name === "contentBlockStop" && typeof index === "number") open.delete(index);
  }
  return false;
}

const cases: Case[] = [
  ...testdataFiles("bedrock").flatMap((file) =>
    file.streams.map((stream) => ({ key: `testdata/bedrock/${file.name}#${stream.sequence ?? ""}`, body: encodeEventStreamBytes(stream.events), interleaved: interleavesHeldCall(stream.events) })),
  ),
  ...regressionFiles()
    // Open ones are known bugs: test/fuzz/regressions.test.ts checks that they still fail.
    .filter((file) => file.regression.provider === "bedrock" && file.regression.status !== "open")
    .map((file) => ({ key: `testdata/regressions/${file.name}`, body: encodeEventStreamBytes(file.regression.mutated), interleaved: interleavesHeldCall(file.regression.mutated) })),
  // The upstream corpus's raw binary bodies, where the corpus is present (test/helpers/corpus.ts).
  ...(corpusDir("upstream") === null
    ? []
    : [
        ...[
          "pydantic__pydantic-ai/tests__models__cassettes__test_bedrock__test_bedrock_model_iter_stream.yaml",
          "pydantic__pydantic-ai/tests__models__cassettes__test_bedrock__test_bedrock_model_code_execution_tool_stream.yaml",
        ].flatMap((local) => cassetteBodies(local).map((body, n) => ({ key: `upstream/${local}[${n}]`, body: new Uint8Array(body as Uint8Array) }))),
        { key: "upstream/vercel model-stream-error-exception", body: base64ToBytes(corpusText("vercel__ai/packages__amazon-bedrock__src____fixtures____model-stream-error-exception.eventstream.base64.txt")) },
      ]),
];

describe.each(cases.map((c) => [c.key, c] as const))("re-encoding %s", (_key, { body, interleaved }) => {
  const original = decodeBytes("bedrock", body);
  const { output, reencoder } = reencode("bedrock", body);
  const again = decodeBytes("bedrock", output);

  it("delivers exactly the runnable calls toolwire decodes, each one well-formed", () => {
    expect(runnable(again)).toEqual(runnable(original));
    for (const call of again.toolCalls) expect(call).toMatchObject({ complete: true, repairs: [], error: null });
  });

  it("keeps text, reasoning and its signature, server tool calls and the stop reason", () => {
    expect(again.text).toBe(original.text);
    expect(again.reasoning).toBe(original.reasoning);
    expect(again.blocks.filter((block) => block.type === "thinking")).toEqual(original.blocks.filter((block) => block.type === "thinking"));
    expect(again.serverToolCalls).toEqual(original.serverToolCalls);
    expect(again.status).toBe(original.status);
  });

  it("writes only frames with valid checksums", () => {
    expect(() => decodeEventStream(output)).not.toThrow();
  });

  it("forwards the stream byte for byte when nothing needed a fix", () => {
    if (reencoder.repairs.length > 0) return;
    if (!interleaved) expect(output).toEqual(body);
    // Frames that came inside a held toolUse block went ahead of it: the same frames, reordered.
    else expect(rawFrames(output).sort()).toEqual(rawFrames(body).sort());
  });

  it("reports the turn the decoder gives", () => {
    expect(reencoder.turn).toEqual(original);
  });

  it("gives the same bytes however the body is chunked", () => {
    expect(reencode("bedrock", body, [1, 3, 17]).output).toEqual(output);
    expect(reencode("bedrock", body, [5, 64, 2]).output).toEqual(output);
  });
});

describe("Bedrock quirks", () => {
  it("a call cut by max_tokens is withheld; the complete call before it goes out as sent", () => {
    const events = [messageStart, text(0, "Two calls."), stop(0), start(1, "tooluse_a", "read"), input(1, '{"path":'), input(1, '"a.txt"}'), stop(1), start(2, "tooluse_b", "read"), input(2, '{"pa'), messageStop("max_tokens"), metadata];
    const body = encodeEventStreamBytes(events);
    const { output, reencoder } = reencode("bedrock", body, [7]);
    const before = encodeEventStreamBytes(events.slice(0, 7));
    const after = encodeEventStreamBytes(events.slice(9));
    expect(output).toEqual(concatBytes([before, after]));
    expect(reencoder.repairs).toEqual([expect.objectContaining({ action: "withheld", code: "truncated", id: "tooluse_b", name: "read" })]);
    expect(reencoder.repairs[0]?.message).toContain("max_tokens");
    const again = decodeBytes("bedrock", output);
    expect(runnable(again)).toEqual([{ id: "tooluse_a", name: "read", arguments: { path: "a.txt" } }]);
    expect(again.finishReason).toBe("length");
  });

  it("a toolUse block started again at the same index: the first is withheld, the second delivered under the id toolwire minted", () => {
    const events = [messageStart, start(3, "tooluse_x", "glob"), start(3, "tooluse_x", "glob"), input(3, '{"pattern":"*"}'), stop(3), messageStop("tool_use"), metadata];
    const { output, reencoder } = reencode("bedrock", encodeEventStreamBytes(events));
    const again = decodeBytes("bedrock", output);
    expect(runnable(again)).toEqual(runnable(decodeBytes("bedrock", encodeEventStreamBytes(events))));
    expect(runnable(again)).toEqual([{ id: "tooluse_x_tw2", name: "glob", arguments: { pattern: "*" } }]);
    expect(reencoder.repairs).toEqual(expect.arrayContaining([expect.objectContaining({ action: "withheld", code: "truncated" }), expect.objectContaining({ action: "rewritten", code: "minted_id" })]));
  });

  it("any other block started at a held call's index cuts the call, as in the decoder", () => {
    for (const second of [ev("contentBlockStart", { contentBlockIndex: 3, start: {} }), ev("contentBlockStart", { contentBlockIndex: 3, start: { toolUse: { toolUseId: "srv_1", name: "web_search", type: "server_tool_use" } } })]) {
      const events = [messageStart, start(3, "tooluse_x", "rm"), second, input(3, '{"path":"/"}'), stop(3), messageStop("tool_use"), metadata];
      const original = decodeBytes("bedrock", encodeEventStreamBytes(events));
      expect(original.toolCalls.find((call) => call.id === "tooluse_x")?.error?.code).toBe("truncated");
      const { output, reencoder } = reencode("bedrock", encodeEventStreamBytes(events));
      expect(runnable(decodeBytes("bedrock", output))).toEqual(runnable(original));
      expect(runnable(decodeBytes("bedrock", output)).map((call) => call.id)).not.toContain("tooluse_x");
      expect(reencoder.repairs).toContainEqual(expect.objectContaining({ action: "withheld", code: "truncated" }));
    }
  });

  it("a second messageStart inside a held call changes nothing: the decoder goes on in the same turn, and so does the call", () => {
    const events = [messageStart, start(0, "tooluse_a", "read"), input(0, '{"path":'), messageStart, input(0, '"a"}'), stop(0), messageStop("tool_use"), metadata];
    const { output, reencoder } = reencode("bedrock", encodeEventStreamBytes(events));
    expect(reencoder.repairs).toEqual([]);
    expect(runnable(decodeBytes("bedrock", output))).toEqual([{ id: "tooluse_a", name: "read", arguments: { path: "a" } }]);
    expect(frames(output).map((frame) => frame.event)).toEqual(["messageStart", "messageStart", "contentBlockStart", "contentBlockDelta", "contentBlockDelta", "contentBlockStop", "messageStop", "metadata"]);
  });

  it("toolUse events without a contentBlockIndex, which the decoder ignores, are not forwarded", () => {
    const noIndex = (event: ProviderEvent): ProviderEvent => {
      const { contentBlockIndex: _index, ...body } = event.data as Record<string, unknown>;
      return { ...event, data: body };
    };
    const events = [messageStart, noIndex(start(0, "tooluse_x", "rm")), noIndex(input(0, '{"path":"/"')), stop(0), messageStop("tool_use"), metadata];
    const { output, reencoder } = reencode("bedrock", encodeEventStreamBytes(events));
    expect(frames(output).map((frame) => frame.event)).toEqual(["messageStart", "contentBlockStop", "messageStop", "metadata"]);
    expect(reencoder.repairs.filter((r) => r.code === "block_index_missing")).toHaveLength(2);
    expect(decodeBytes("bedrock", output).toolCalls).toEqual([]);
  });

  it("duplicate toolUseIds: the second call is rewritten with the id toolwire minted", () => {
    const events = [messageStart, start(0, "tooluse_same", "read"), input(0, '{"path":"a"}'), stop(0), start(1, "tooluse_same", "read"), input(1, '{"path":'), input(1, '"b"}'), stop(1), messageStop("tool_use"), metadata];
    const body = encodeEventStreamBytes(events);
    const original = decodeBytes("bedrock", body);
    const { output, reencoder } = reencode("bedrock", body);
    const second = original.toolCalls[1]!;
    expect(second.id).not.toBe("tooluse_same");
    expect(second.providerId).toBe("tooluse_same");
    expect(runnable(decodeBytes("bedrock", output))).toEqual(runnable(original));
    expect(reencoder.repairs).toContainEqual(expect.objectContaining({ action: "rewritten", code: "minted_id", id: second.id, providerId: "tooluse_same", callIndex: 1 }));
    // The first call's frames pass as they came; the second is one start, one delta, one stop.
    const out = frames(output);
    expect(out.map((frame) => frame.event)).toEqual(["messageStart", "contentBlockStart", "contentBlockDelta", "contentBlockStop", "contentBlockStart", "contentBlockDelta", "contentBlockStop", "messageStop", "metadata"]);
    expect(out[4]!.body).toEqual({ contentBlockIndex: 1, start: { toolUse: { toolUseId: second.id, name: "read" } } });
    expect(out[5]!.body).toEqual({ contentBlockIndex: 1, delta: { toolUse: { input: '{"path":"b"}' } } });
    expect(output.subarray(0, encodeEventStreamBytes(events.slice(0, 4)).length)).toEqual(encodeEventStreamBytes(events.slice(0, 4)));
  });

  it("input resent whole after its fragments: one delta with the decoded input, reported with the decoder's repair code", () => {
    const events = [messageStart, start(0, "tooluse_a", "shell"), input(0, '{"command":'), input(0, '"ls"}'), input(0, '{"command":"ls"}'), stop(0), messageStop("tool_use")];
    const body = encodeEventStreamBytes(events);
    const original = decodeBytes("bedrock", body);
    expect(original.toolCalls[0]?.repairs.length).toBeGreaterThan(0);
    const { output, reencoder } = reencode("bedrock", body, [3]);
    const again = decodeBytes("bedrock", output);
    expect(runnable(again)).toEqual([{ id: "tooluse_a", name: "shell", arguments: { command: "ls" } }]);
    expect(again.toolCalls[0]).toMatchObject({ repairs: [], source: "delta" });
    expect(reencoder.repairs.map((report) => [report.action, report.code])).toEqual(original.toolCalls[0]!.repairs.map((code) => ["rewritten", code]));
  });

  it("cumulative resends become one plain delta", () => {
    const events = [messageStart, start(0, "tooluse_a", "shell"), input(0, '{"command":"ls"}'), input(0, '{"command":"ls","path":"/tmp"}'), stop(0), messageStop("tool_use")];
    const body = encodeEventStreamBytes(events);
    const { output, reencoder } = reencode("bedrock", body);
    expect(runnable(decodeBytes("bedrock", output))).toEqual([{ id: "tooluse_a", name: "shell", arguments: { command: "ls", path: "/tmp" } }]);
    expect(reencoder.repairs).toContainEqual(expect.objectContaining({ action: "rewritten", code: "cumulative_resend" }));
  });

  it("invalid JSON input: the call is withheld, a later block moves down, stopReason tool_use becomes malformed_tool_use", () => {
    const events = [messageStart, start(0, "tooluse_a", "shell"), input(0, "this is not json"), stop(0), text(1, "Done."), stop(1), messageStop("tool_use"), metadata];
    const body = encodeEventStreamBytes(events);
    const original = decodeBytes("bedrock", body);
    expect(original.toolCalls[0]).toMatchObject({ arguments: null, error: { code: "invalid_json" } });
    const { output, reencoder } = reencode("bedrock", body);
    const out = frames(output);
    expect(out.map((frame) => frame.event)).toEqual(["messageStart", "contentBlockDelta", "contentBlockStop", "messageStop", "metadata"]);
    expect(out[1]!.body).toEqual({ contentBlockIndex: 0, delta: { text: "Done." } });
    expect(out[2]!.body).toEqual({ contentBlockIndex: 0 });
    expect(out[3]!.body).toEqual({ stopReason: "malformed_tool_use" });
    expect(reencoder.repairs.map((report) => [report.action, report.code])).toEqual([
      ["withheld", "invalid_json"],
      ["normalized", "stop_reason_without_calls"],
    ]);
    const again = decodeBytes("bedrock", output);
    expect(again.toolCalls).toEqual([]);
    expect(again.text).toBe("Done.");
  });

  it("input that is not an object is withheld; a sibling call stays and keeps stopReason tool_use", () => {
    const events = [messageStart, start(0, "tooluse_a", "shell"), input(0, "[1,2]"), stop(0), start(1, "tooluse_b", "read"), input(1, '{"path":"x"}'), stop(1), messageStop("tool_use")];
    const body = encodeEventStreamBytes(events);
    const { output, reencoder } = reencode("bedrock", body);
    const again = decodeBytes("bedrock", output);
    expect(runnable(again)).toEqual([{ id: "tooluse_b", name: "read", arguments: { path: "x" } }]);
    expect(again.toolCalls[0]?.providerIndex).toBe(0);
    expect(again.rawFinishReason).toBe("tool_use");
    expect(reencoder.repairs).toEqual([expect.objectContaining({ action: "withheld", id: "tooluse_a" })]);
  });

  it("different objects glued in one block become one block per call, later blocks after them", () => {
    const events = [messageStart, start(0, "tooluse_a", "read"), input(0, '{"path":"a"}{"path":"b"}'), stop(0), text(1, "Reading."), stop(1), messageStop("tool_use")];
    const body = encodeEventStreamBytes(events);
    const original = decodeBytes("bedrock", body);
    expect(original.toolCalls).toHaveLength(2);
    const { output, reencoder } = reencode("bedrock", body, [9]);
    const again = decodeBytes("bedrock", output);
    expect(runnable(again)).toEqual(runnable(original));
    expect(again.text).toBe("Reading.");
    const out = frames(output);
    expect(out.filter((frame) => frame.event === "contentBlockStart").map((frame) => frame.body.contentBlockIndex)).toEqual([0, 1]);
    expect(out.find((frame) => frame.event === "contentBlockDelta" && isText(frame.body))?.body.contentBlockIndex).toBe(2);
    expect(reencoder.repairs.filter((report) => report.action === "rewritten").map((report) => report.code)).toEqual(["split_concatenated_calls", "split_concatenated_calls", "minted_id"]);
  });

  it("a call repaired by syntax (decided at the end of the turn): the frames after it wait, then go out in order", () => {
    const events = [messageStart, start(0, "tooluse_a", "shell"), input(0, '{"command": True,}'), stop(0), text(1, "Later."), stop(1), messageStop("tool_use"), metadata];
    const body = encodeEventStreamBytes(events);
    const reencoder = createReencoder("bedrock");
    const pieces = events.map((event) => reencoder.push(encodeEventStreamBytes([event])));
    // The call's frames and everything after its stop wait for the decoder's decision at the end.
    expect(pieces.slice(1).every((piece) => piece.length === 0)).toBe(true);
    const output = concatBytes([...pieces.flat(), ...reencoder.end()]);
    const original = decodeBytes("bedrock", body);
    expect(original.toolCalls[0]?.repairs.length).toBeGreaterThan(0);
    const again = decodeBytes("bedrock", output);
    expect(runnable(again)).toEqual(runnable(original));
    expect(again.toolCalls[0]).toMatchObject({ repairs: [], complete: true });
    expect(frames(output).map((frame) => [frame.event, frame.body.contentBlockIndex])).toEqual([
      ["messageStart", undefined],
      ["contentBlockStart", 0],
      ["contentBlockDelta", 0],
      ["contentBlockStop", 0],
      ["contentBlockDelta", 1],
      ["contentBlockStop", 1],
      ["messageStop", undefined],
      ["metadata", undefined],
    ]);
    expect(output.subarray(output.length - encodeEventStreamBytes(events.slice(4)).length)).toEqual(encodeEventStreamBytes(events.slice(4)));
  });

  it("the same repairable call at max_tokens is cut, so withheld, and the stop reason stays max_tokens", () => {
    const events = [messageStart, start(0, "tooluse_a", "shell"), input(0, '{"command": True,}'), stop(0), messageStop("max_tokens")];
    const { output, reencoder } = reencode("bedrock", encodeEventStreamBytes(events));
    expect(output).toEqual(encodeEventStreamBytes([messageStart, messageStop("max_tokens")]));
    expect(reencoder.repairs).toEqual([expect.objectContaining({ action: "withheld", code: "truncated", id: "tooluse_a" })]);
  });

  it("a missing toolUseId gets the minted id on a rewritten start", () => {
    const events = [messageStart, start(0, undefined, "shell"), input(0, '{"command":"ls"}'), stop(0), messageStop("tool_use")];
    const body = encodeEventStreamBytes(events);
    const original = decodeBytes("bedrock", body);
    const { output } = reencode("bedrock", body);
    const again = decodeBytes("bedrock", output);
    expect(again.toolCalls.map((call) => call.id)).toEqual([original.toolCalls[0]!.id]);
    expect(again.diagnostics.map((d) => d.code)).not.toContain("call_id_minted");
  });

  it("an exception frame mid-call: the cut call is withheld, the exception passes as it came", () => {
    const exception = encodeEventStreamMessage({ ":message-type": "exception", ":exception-type": "modelStreamErrorException", ":content-type": "application/json" }, '{"message":"boom"}');
    const head = encodeEventStreamBytes([messageStart, text(0, "Hi"), stop(0), start(1, "tooluse_a", "shell"), input(1, '{"command"')]);
    const body = concatBytes([head, exception]);
    const { output, reencoder } = reencode("bedrock", body, [11]);
    expect(output).toEqual(concatBytes([encodeEventStreamBytes([messageStart, text(0, "Hi"), stop(0)]), exception]));
    expect(reencoder.repairs).toEqual([expect.objectContaining({ action: "withheld", code: "truncated", id: "tooluse_a" })]);
    expect(decodeBytes("bedrock", output)).toMatchObject({ status: "error", error: { type: "modelStreamErrorException" }, toolCalls: [] });
  });

  it("a frame with a bad CRC passes as it came with every byte after it, and is reported", () => {
    const good = encodeEventStreamBytes([messageStart, text(0, "Hi"), stop(0), start(1, "tooluse_a", "shell")]);
    const bad = encodeEventStreamBytes([input(1, '{"command":"ls"}')]);
    bad[bad.length - 10]! ^= 0x01;
    const tail = encodeEventStreamBytes([stop(1), messageStop("tool_use")]);
    const body = concatBytes([good, bad, tail]);
    const { output, reencoder } = reencode("bedrock", body, [13]);
    const kept = encodeEventStreamBytes([messageStart, text(0, "Hi"), stop(0)]);
    expect(output).toEqual(concatBytes([kept, bad, tail]));
    expect(reencoder.repairs.map((report) => [report.action, report.code])).toEqual([
      ["withheld", "truncated"],
      ["classified", "eventstream_message_crc"],
    ]);
    expect(reencoder.turn).toEqual(decodeBytes("bedrock", body));
    expect(reencoder.turn?.status).toBe("error");
  });

  it("a bad CRC after the stops of a call waiting for its verdict and of a good call: the good call is delivered (found by fuzzing)", () => {
    // The first call's input does not parse, so its verdict waits for the end of the turn, and the
    // frames after its stop wait with it; the second call's stop is among them.
    const head = encodeEventStreamBytes([messageStart, start(0, "tooluse_bad", "shell"), start(1, "tooluse_ok", "read"), input(0, "not json"), input(1, '{"path":"a"}'), stop(0), stop(1)]);
    const bad = encodeEventStreamBytes([messageStop("tool_use")]);
    bad[bad.length - 10]! ^= 0x01;
    const body = concatBytes([head, bad]);
    const original = decodeBytes("bedrock", body);
    expect(runnable(original)).toEqual([{ id: "tooluse_ok", name: "read", arguments: { path: "a" } }]);
    for (const sizes of [[body.length], [13]]) {
      const { output, reencoder } = reencode("bedrock", body, sizes);
      expect(runnable(decodeBytes("bedrock", output))).toEqual(runnable(original));
      expect(reencoder.repairs.map((report) => [report.action, report.code])).toEqual([
        ["classified", "eventstream_message_crc"],
        ["withheld", "invalid_json"],
      ]);
    }
  });

  it("a corrupt prelude: everything from it on passes as it came", () => {
    const good = encodeEventStreamBytes([messageStart, text(0, "Hi")]);
    const bad = encodeEventStreamBytes([stop(0), messageStop("end_turn")]);
    bad[2]! ^= 0x40;
    const body = concatBytes([good, bad]);
    const { output, reencoder } = reencode("bedrock", body, [1]);
    expect(output).toEqual(body);
    expect(reencoder.repairs).toEqual([expect.objectContaining({ action: "classified", code: "eventstream_prelude_crc" })]);
    expect(reencoder.turn).toEqual(decodeBytes("bedrock", body));
  });

  it("a body cut inside a frame: the whole frames pass, the trailing bytes follow as they came, and the open call goes as the decoder decides it", () => {
    const cutCall = encodeEventStreamBytes([messageStart, start(0, "tooluse_a", "shell"), input(0, '{"command":')]);
    const cut = encodeEventStreamBytes([stop(0)]).subarray(0, 9);
    const body = concatBytes([cutCall, cut]);
    const { output, reencoder } = reencode("bedrock", body, [4]);
    expect(output).toEqual(concatBytes([encodeEventStreamBytes([messageStart]), cut]));
    expect(reencoder.repairs).toEqual([expect.objectContaining({ action: "withheld", code: "truncated" })]);
    expect(reencoder.turn).toEqual(decodeBytes("bedrock", body));

    // Its input already a closed object, the decoder keeps the call (call_closed_at_stream_end): it goes out whole.
    const closedInput = concatBytes([encodeEventStreamBytes([messageStart, start(0, "tooluse_a", "shell"), input(0, '{"command":"ls"}')]), cut]);
    const kept = reencode("bedrock", closedInput, [4]);
    expect(decodeBytes("bedrock", kept.output).toolCalls.map((call) => [call.id, call.arguments, call.complete])).toEqual([["tooluse_a", { command: "ls" }, true]]);
    expect(kept.reencoder.repairs).toContainEqual(expect.objectContaining({ action: "rewritten", code: "call_closed_at_stream_end" }));
  });

  it("forwards every frame as soon as it is decided: text at once, a call at its stop", () => {
    const events = [messageStart, text(0, "Hi"), stop(0), start(1, "tooluse_a", "shell"), input(1, '{"command":"ls"}'), stop(1), messageStop("tool_use"), metadata];
    const pieces = events.map((event) => encodeEventStreamBytes([event]));
    const reencoder = createReencoder("bedrock");
    const sizes = pieces.map((piece) => reencoder.push(piece).reduce((sum, part) => sum + part.length, 0));
    expect(sizes[0]).toBe(pieces[0]!.length);
    expect(sizes[1]).toBe(pieces[1]!.length);
    expect(sizes[3]).toBe(0);
    expect(sizes[4]).toBe(0);
    expect(sizes[5]).toBe(pieces[3]!.length + pieces[4]!.length + pieces[5]!.length);
    expect(sizes[7]).toBe(pieces[7]!.length);
    expect(reencoder.end()).toEqual([]);
  });

  it("rewritten frames carry Bedrock's own headers, in its order", () => {
    const events = [messageStart, start(0, "tooluse_a", "shell", { type: "tool_use" }), input(0, '{"command":"ls"}'), input(0, '{"command":"ls"}'), stop(0), messageStop("tool_use")];
    const { output } = reencode("bedrock", encodeEventStreamBytes(events));
    const messages = decodeEventStream(output);
    expect(Object.entries(messages[1]!.headers)).toEqual([
      [":event-type", "contentBlockStart"],
      [":content-type", "application/json"],
      [":message-type", "event"],
    ]);
    expect(JSON.parse(new TextDecoder().decode(messages[1]!.payload))).toEqual({ contentBlockIndex: 0, start: { toolUse: { toolUseId: "tooluse_a", name: "shell", type: "tool_use" } } });
    // The message CRC covers the whole frame but its last four bytes.
    const frame = output.subarray(0, new DataView(output.buffer, output.byteOffset).getUint32(0));
    expect(new DataView(frame.buffer, frame.byteOffset).getUint32(frame.length - 4)).toBe(crc32(frame, 0, frame.length - 4));
  });
});

import { describe, expect, it } from "vitest";
import { createByteDecoder } from "../../src/adapters/bytes.js";
import { encodeEventStreamMessage } from "../../src/framing/aws-eventstream.js";
import { detectProvider } from "../../src/providers/detect.js";
import { createDecoder } from "../../src/providers/registry.js";
import type { CodecEvent, DecodedTurn, ProviderEvent } from "../../src/types.js";
import { b, concat, encodeFrames, unwrapped } from "../helpers/bedrock-events.js";

function decode(events: ProviderEvent[], previews = false): { turn: DecodedTurn; events: CodecEvent[] } {
  const decoder = createDecoder("bedrock", { previews });
  const out: CodecEvent[] = [];
  for (const event of events) out.push(...decoder.push(event));
  out.push(...decoder.end());
  return { turn: decoder.finish(), events: out };
}

function decodeBytes(bytes: Uint8Array, splits: number[] = []): DecodedTurn {
  const decoder = createByteDecoder("bedrock");
  let last = 0;
  for (const point of [...splits, bytes.length]) {
    decoder.push(bytes.subarray(last, point));
    last = point;
  }
  return decoder.finish();
}

const codes = (turn: DecodedTurn) => turn.diagnostics.map((d) => d.code);

const canonical = [
  b.messageStart(),
  b.text(0, "Checking"),
  b.text(0, " both."),
  b.stop(0),
  b.toolStart(1, "tooluse_A", "add"),
  b.input(1, '{"a": 2'),
  b.input(1, ', "b": 3}'),
  b.stop(1),
  b.toolStart(2, "tooluse_B", "multiply"),
  b.input(2, '{"a": 2, "b": 3}'),
  b.stop(2),
  b.messageStop("tool_use"),
  b.metadata(),
];

describe("bedrock decoder: the canonical ConverseStream", () => {
  it("decodes text without a start event and two calls from string fragments", () => {
    const { turn } = decode(canonical);
    expect(turn).toMatchObject({ status: "complete", finishReason: "tool_calls", rawFinishReason: "tool_use", text: "Checking both." });
    expect(turn.toolCalls).toEqual([
      expect.objectContaining({ index: 0, id: "tooluse_A", name: "add", arguments: { a: 2, b: 3 }, rawArguments: '{"a": 2, "b": 3}', source: "delta", complete: true, providerIndex: 1 }),
      expect.objectContaining({ index: 1, id: "tooluse_B", name: "multiply", arguments: { a: 2, b: 3 }, source: "delta", complete: true, providerIndex: 2 }),
    ]);
    expect(turn.usage).toMatchObject({ inputTokens: 471, outputTokens: 91, totalTokens: 562 });
    expect(turn.blocks.map((block) => block.type)).toEqual(["text", "tool_call", "tool_call"]);
    expect(turn.diagnostics).toEqual([]);
  });

  it("reads the SDK-wrapped form and the {event, data} form of the binary framing alike", () => {
    expect(decode(unwrapped(canonical)).turn).toEqual(decode(canonical).turn);
  });

  it("decodes the binary event stream, split anywhere, to the same turn", () => {
    const bytes = encodeFrames(canonical);
    const whole = decodeBytes(bytes);
    expect(whole).toEqual(decode(canonical).turn);
    expect(decodeBytes(bytes, [1, 13, 100, 101, bytes.length - 3])).toEqual(whole);
  });

  it("gives live previews from the input fragments", () => {
    const { events } = decode(canonical, true);
    const deltas = events.filter((e): e is Extract<CodecEvent, { type: "tool_call_delta" }> => e.type === "tool_call_delta" && e.index === 0);
    expect(deltas.map((d) => d.delta)).toEqual(['{"a": 2', ', "b": 3}']);
    expect(deltas.at(-1)?.preview).toEqual({ a: 2, b: 3 });
  });

  it("text between calls keeps block order; text blocks are keyed by index", () => {
    const { turn } = decode([
      b.text(0, "Multiple tools."),
      b.toolStart(1, "tool-1", "tool-a"),
      b.input(1, '{"a":"1"}'),
      b.stop(1),
      b.text(2, "Final JSON."),
      b.toolStart(3, "json-tool-id", "json"),
      b.input(3, '{"final":"result"}'),
      b.stop(3),
      b.messageStop("tool_use"),
    ]);
    expect(turn.text).toBe("Multiple tools.Final JSON.");
    expect(turn.blocks.map((block) => block.type)).toEqual(["text", "tool_call", "text", "tool_call"]);
    expect(turn.status).toBe("complete");
    expect(codes(turn)).toEqual(["event_before_message_start", "metadata_missing"]);
  });
});

describe("bedrock decoder: argument edge cases", () => {
  it("a tool with no input delta, or one empty delta, has no arguments", () => {
    const { turn } = decode([b.messageStart(), b.toolStart(0, "t1", "now"), b.stop(0), b.toolStart(1, "t2", "later"), b.input(1, ""), b.stop(1), b.messageStop("tool_use")]);
    expect(turn.toolCalls.map((c) => [c.arguments, c.source])).toEqual([
      [{}, "empty"],
      [{}, "empty"],
    ]);
  });

  it("max_tokens while a call is open truncates it; the closed sibling is kept", () => {
    const { turn } = decode([
      b.messageStart(),
      b.toolStart(0, "t1", "ok"),
      b.input(0, '{"x":1}'),
      b.stop(0),
      b.toolStart(1, "t2", "write"),
      b.input(1, '{"content": "lo'),
      b.messageStop("max_tokens"),
      b.metadata(),
    ]);
    expect(turn).toMatchObject({ status: "complete", finishReason: "length" });
    expect(turn.toolCalls[0]).toMatchObject({ complete: true, arguments: { x: 1 } });
    expect(turn.toolCalls[1]).toMatchObject({ complete: false, arguments: null, rawArguments: '{"content": "lo', error: { code: "truncated", cause: "max_tokens" } });
  });

  it("one invalid input does not affect its sibling", () => {
    const { turn } = decode([b.messageStart(), b.toolStart(0, "t1", "bad"), b.input(0, '{"x": [1, 2}'), b.stop(0), b.toolStart(1, "t2", "good"), b.input(1, '{"y":1}'), b.stop(1), b.messageStop("tool_use")]);
    expect(turn.toolCalls[0]).toMatchObject({ arguments: null, error: { code: "invalid_json" } });
    expect(turn.toolCalls[1]).toMatchObject({ arguments: { y: 1 }, error: null });
  });

  it("a stream that ends without messageStop is incomplete and open calls are truncated; a closed object is kept (issue 17)", () => {
    const { turn } = decode([b.messageStart(), b.toolStart(0, "t1", "x"), b.input(0, '{"a":[1')]);
    expect(turn.status).toBe("incomplete");
    expect(turn.toolCalls[0]).toMatchObject({ complete: false, error: { code: "truncated", cause: "stream_ended" } });
    expect(codes(turn)).toContain("stream_ended_without_message_stop");
    const closed = decode([b.messageStart(), b.toolStart(0, "t1", "x"), b.input(0, '{"a":1}')]).turn;
    expect(closed.status).toBe("incomplete");
    expect(closed.toolCalls[0]).toMatchObject({ complete: true, arguments: { a: 1 }, error: null });
    expect(codes(closed)).toContain("call_closed_at_stream_end");
  });

  it("a toolUse delta without a start is reported, not guessed into a call", () => {
    const { turn } = decode([b.messageStart(), b.input(0, '{"a":1}'), b.messageStop("end_turn")]);
    expect(turn.toolCalls).toEqual([]);
    expect(codes(turn)).toContain("delta_for_unknown_block");
  });
});

describe("bedrock decoder: reasoning, server tools, other blocks", () => {
  it("keeps reasoning text with its signature, and redacted reasoning", () => {
    const { turn } = decode([
      b.messageStart(),
      b.reasoning(0, { text: "Let me think" }),
      b.reasoning(0, { text: " carefully." }),
      b.reasoning(0, { signature: "sig-1" }),
      b.stop(0),
      b.reasoning(1, { redactedContent: "b3BhcXVl" }),
      b.stop(1),
      b.text(2, "Done."),
      b.stop(2),
      b.messageStop("end_turn"),
    ]);
    expect(turn.reasoning).toBe("Let me think carefully.");
    expect(turn.blocks).toEqual([
      { type: "thinking", thinking: "Let me think carefully.", signature: "sig-1", providerIndex: 0 },
      { type: "redacted_thinking", data: "b3BhcXVl", providerIndex: 1 },
      { type: "text", text: "Done.", providerIndex: 2 },
    ]);
    expect(turn.finishReason).toBe("stop");
  });

  it("server-side toolUse is a server call, its toolResult block is kept verbatim", () => {
    const { turn } = decode([
      b.messageStart(),
      b.toolStart(0, "tooluse_S", "nova_code_interpreter", { type: "server_tool_use" }),
      b.input(0, '{"snippet":"1234 * 5678"}'),
      b.stop(0),
      { data: { contentBlockStart: { contentBlockIndex: 1, start: { toolResult: { toolUseId: "tooluse_S", status: "success" } } } } },
      { data: { contentBlockDelta: { contentBlockIndex: 1, delta: { toolResult: [{ json: { stdOut: "7006652" } }] } } } },
      b.stop(1),
      b.toolStart(2, "tooluse_C", "final_result", { type: "tool_use" }),
      b.input(2, '{"result":7006652.0}'),
      b.stop(2),
      b.messageStop("tool_use"),
    ]);
    expect(turn.serverToolCalls).toEqual([expect.objectContaining({ id: "tooluse_S", kind: "server", arguments: { snippet: "1234 * 5678" }, providerFields: { type: "server_tool_use" } })]);
    expect(turn.toolCalls).toEqual([expect.objectContaining({ id: "tooluse_C", kind: "client", arguments: { result: 7006652 } })]);
    expect(turn.blocks.map((block) => (block.type === "opaque" ? block.blockType : block.type))).toEqual(["server_tool_call", "toolResult", "tool_call"]);
    expect(turn.blocks[1]).toMatchObject({ value: { start: { status: "success" }, deltas: [{ toolResult: [{ json: { stdOut: "7006652" } }] }] } });
  });

  it.each([
    ["end_turn", "stop"],
    ["stop_sequence", "stop"],
    ["guardrail_intervened", "content_filter"],
    ["content_filtered", "content_filter"],
    ["malformed_tool_use", "error"],
    ["model_context_window_exceeded", "length"],
    ["something_new", "other"],
  ])("maps stopReason %s to %s", (raw, mapped) => {
    expect(decode([b.messageStart(), b.text(0, "x"), b.messageStop(raw)]).turn).toMatchObject({ finishReason: mapped, rawFinishReason: raw, status: "complete" });
  });
});

describe("bedrock decoder: exceptions", () => {
  const before = [b.messageStart(), b.text(0, "Partial answer"), b.stop(0), b.toolStart(1, "t1", "done"), b.input(1, '{"a":1}'), b.stop(1), b.toolStart(2, "t2", "open"), b.input(2, '{"b":')];

  it.each([
    ["SDK-wrapped", { data: { throttlingException: { message: "Too many requests" } } }, "throttlingException"],
    ["binary exception frame", { event: "exception", data: { exceptionType: "modelStreamErrorException", message: "Model Stream Error", originalStatusCode: 500 } }, "modelStreamErrorException"],
    ["named event", { event: "validationException", data: { message: "Bad input" } }, "validationException"],
  ] as const)("a %s exception is status error, keeping what arrived", (_form, exception, type) => {
    const { turn } = decode([...before, exception as ProviderEvent]);
    expect(turn).toMatchObject({ status: "error", finishReason: "error", text: "Partial answer", error: { type } });
    expect(turn.toolCalls[0]).toMatchObject({ complete: true, arguments: { a: 1 } });
    expect(turn.toolCalls[1]).toMatchObject({ complete: false, error: { code: "truncated", cause: "stream_error" } });
    expect(codes(turn)).toContain("stream_error");
  });

  it("ignores what arrives after the exception: a call cannot be finished by frames past the stream's end", () => {
    const exception = { event: "exception", data: { exceptionType: "throttlingException", message: "slow down" } } as ProviderEvent;
    const { turn } = decode([b.messageStart(), b.toolStart(0, "t1", "lookup"), exception, b.input(0, '{"id": 7}'), b.stop(0), b.messageStop("tool_use")]);
    expect(turn).toMatchObject({ status: "error", error: { type: "throttlingException" } });
    expect(turn.toolCalls).toEqual([expect.objectContaining({ id: "t1", arguments: null, error: expect.objectContaining({ code: "truncated", cause: "stream_error" }) })]);
    // Reported once, with the count: the first was the call's input.
    expect(turn.diagnostics.filter((d) => d.code === "event_after_error")).toEqual([expect.objectContaining({ data: { count: 3, firstType: "contentBlockDelta" } })]);
  });

  it("an exception frame in the binary stream is decoded as such", () => {
    const bytes = encodeFrames([...before, { data: { internalServerException: { message: "Internal" } } }]);
    expect(decodeBytes(bytes)).toMatchObject({ status: "error", error: { type: "internalServerException", message: "Internal" } });
  });
});

describe("bedrock framing: checksums and truncation", () => {
  const bytes = encodeFrames(canonical);
  // Byte offsets at which each frame starts.
  const offsets: number[] = [];
  for (let at = 0; at < bytes.length; at += new DataView(bytes.buffer, bytes.byteOffset + at, 4).getUint32(0)) offsets.push(at);

  it("a flipped byte is a checksum error naming the frame's offset; the frames before it are kept", () => {
    const frame = 5; // inside the first toolUse input
    const corrupted = bytes.slice();
    corrupted[(offsets[frame] as number) + 40]! ^= 0x10;
    const turn = decodeBytes(corrupted);
    expect(turn.status).toBe("error");
    expect(turn.text).toBe("Checking both.");
    expect(turn.toolCalls[0]).toMatchObject({ id: "tooluse_A", complete: false, error: { code: "truncated", cause: "stream_error" } });
    const diagnostic = turn.diagnostics.find((d) => d.code === "eventstream_message_crc");
    expect(diagnostic).toMatchObject({ severity: "error", data: { code: "message_crc", offset: offsets[frame] } });
    expect(diagnostic?.message).toContain(`byte offset ${offsets[frame]}`);
    expect(turn.error?.message).toContain(`byte offset ${offsets[frame]}`);
  });

  it("a flipped prelude byte is a prelude checksum error", () => {
    const corrupted = bytes.slice();
    corrupted[(offsets[3] as number) + 2]! ^= 0x01;
    const turn = decodeBytes(corrupted, [7]);
    expect(turn.diagnostics.find((d) => d.code === "eventstream_prelude_crc")?.data).toEqual({ code: "prelude_crc", offset: offsets[3] });
    expect(turn.text).toBe("Checking both.");
    expect(turn.status).toBe("error");
  });

  it("a corrupt frame in the same chunk as good ones loses none of the good ones", () => {
    const corrupted = bytes.slice();
    corrupted[(offsets[9] as number) + 30]! ^= 0x01;
    const turn = decodeBytes(corrupted);
    expect(turn.toolCalls[0]).toMatchObject({ complete: true, arguments: { a: 2, b: 3 } });
    expect(turn.toolCalls[1]).toMatchObject({ id: "tooluse_B", complete: false });
  });

  it("a body cut mid-frame is incomplete, not corrupt", () => {
    const turn = decodeBytes(bytes.subarray(0, (offsets[6] as number) + 9));
    expect(turn.status).toBe("incomplete");
    expect(turn.diagnostics.find((d) => d.code === "eventstream_truncated")).toMatchObject({ severity: "warning", data: { offset: offsets[6] } });
    expect(turn.toolCalls[0]).toMatchObject({ complete: false, rawArguments: '{"a": 2', error: { cause: "stream_ended" } });
  });

  it("rejects text chunks: the binary body must not be decoded as text", () => {
    expect(() => createByteDecoder("bedrock").push("AAAA")).toThrow(expect.objectContaining({ code: "binary_required" }));
  });

  it("unwraps InvokeModelWithResponseStream chunk frames for the model's own decoder", () => {
    const chunk = (event: Record<string, unknown>) =>
      encodeEventStreamMessage({ ":event-type": "chunk", ":message-type": "event" }, JSON.stringify({ bytes: btoa(JSON.stringify(event)), p: "abc" }));
    const body = concat([
      chunk({ type: "message_start", message: { id: "msg_bdrk", model: "claude", content: [], usage: { input_tokens: 1, output_tokens: 1 } } }),
      chunk({ type: "content_block_start", index: 0, content_block: { type: "tool_use", id: "toolu_bdrk_1", name: "add", input: {} } }),
      chunk({ type: "content_block_delta", index: 0, delta: { type: "input_json_delta", partial_json: '{"a":1}' } }),
      chunk({ type: "content_block_stop", index: 0 }),
      chunk({ type: "message_delta", delta: { stop_reason: "tool_use" }, usage: { output_tokens: 5 } }),
      chunk({ type: "message_stop" }),
    ]);
    const decoder = createByteDecoder("anthropic", { framing: "aws-eventstream" });
    decoder.push(body);
    expect(decoder.finish()).toMatchObject({ status: "complete", finishReason: "tool_calls", toolCalls: [{ id: "toolu_bdrk_1", arguments: { a: 1 } }] });
    // Decoded as ConverseStream by mistake, the body says what it is instead of yielding nothing silently.
    const wrong = createByteDecoder("bedrock");
    wrong.push(body);
    const turn = wrong.finish();
    expect(turn.status).toBe("incomplete");
    expect(codes(turn).filter((c) => c === "invoke_model_stream")).toHaveLength(1);
  });
});

describe("bedrock detection", () => {
  it("recognizes exception records in both forms", () => {
    expect(detectProvider([{ event: "exception", data: { exceptionType: "throttlingException", message: "slow down" } }])).toBe("bedrock");
    expect(detectProvider([{ data: { validationException: { message: "bad" } } }])).toBe("bedrock");
    expect(detectProvider(canonical)).toBe("bedrock");
    expect(detectProvider(unwrapped(canonical))).toBe("bedrock");
  });
});

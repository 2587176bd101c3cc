import { describe, expect, it } from "vitest";
import { createDecoder } from "../../src/providers/registry.js";
import type { CodecEvent, DecodedTurn, ProviderEvent } from "../../src/types.js";
import { a, toolStream } from "../helpers/anthropic-events.js";

function decode(events: ProviderEvent[], previews = false): { turn: DecodedTurn; events: CodecEvent[] } {
  const decoder = createDecoder("anthropic", { previews });
  const out: CodecEvent[] = [];
  for (const event of events) out.push(...decoder.push(event));
  out.push(...decoder.end());
  return { turn: decoder.finish(), events: out };
}

const codes = (turn: DecodedTurn) => turn.diagnostics.map((d) => d.code);

describe("anthropic decoder: the canonical stream", () => {
  const events = [
    a.messageStart("msg_01", { input_tokens: 502, output_tokens: 1 }),
    a.textStart(0),
    a.ping(),
    a.text(0, "I'll add"),
    a.text(0, " and multiply."),
    a.stop(0),
    a.toolStart(1, "toolu_A", "add"),
    a.json(1, ""),
    a.json(1, '{"a": 2'),
    a.ping(),
    a.json(1, ', "b": 3}'),
    a.stop(1),
    a.toolStart(2, "toolu_B", "multiply"),
    a.json(2, '{"a": 2, "b": 3}'),
    a.stop(2),
    a.messageDelta("tool_use", { output_tokens: 97 }),
    a.messageStop(),
  ];

  it("decodes text and two calls with ids, names, arguments and provenance", () => {
    const { turn } = decode(events);
    expect(turn).toMatchObject({ status: "complete", finishReason: "tool_calls", rawFinishReason: "tool_use", text: "I'll add and multiply.", messageId: "msg_01", model: "claude-test" });
    expect(turn.toolCalls).toEqual([
      expect.objectContaining({ index: 0, id: "toolu_A", name: "add", arguments: { a: 2, b: 3 }, rawArguments: '{"a": 2, "b": 3}', source: "delta", complete: true, repairs: [], error: null, providerIndex: 1 }),
      expect.objectContaining({ index: 1, id: "toolu_B", name: "multiply", arguments: { a: 2, b: 3 }, source: "delta", complete: true, providerIndex: 2 }),
    ]);
    expect(turn.usage).toMatchObject({ inputTokens: 502, outputTokens: 97, totalTokens: 599 });
    expect(turn.diagnostics).toEqual([]);
  });

  it("emits start/delta/end events in order, each call ending at its content_block_stop", () => {
    const { events: out } = decode(events);
    const types = out.map((e) => e.type);
    expect(types.filter((t) => t === "tool_call_start")).toHaveLength(2);
    const firstEnd = types.indexOf("tool_call_end");
    const secondStart = types.lastIndexOf("tool_call_start");
    expect(firstEnd).toBeLessThan(secondStart);
    expect(types.at(-1)).toBe("finish");
    // The empty first fragment is not an event.
    expect(out.filter((e) => e.type === "tool_call_delta" && e.index === 0).map((e) => (e as { delta: string }).delta)).toEqual(['{"a": 2', ', "b": 3}']);
  });

  it("gives live previews that end equal to the final arguments", () => {
    const { events: out, turn } = decode(events, true);
    const deltas = out.filter((e): e is Extract<CodecEvent, { type: "tool_call_delta" }> => e.type === "tool_call_delta" && e.index === 0);
    expect(deltas[0]?.preview).toEqual({ a: 2, b: 3 }); // same object, updated in place
    expect(deltas.at(-1)?.preview).toEqual(turn.toolCalls[0]?.arguments);
  });
});

describe("anthropic decoder: keying and order", () => {
  it("a first block at index 1 and interleaved blocks are keyed by index", () => {
    const { turn } = decode([
      a.messageStart(),
      a.toolStart(1, "toolu_1", "one"),
      a.toolStart(2, "toolu_2", "two"),
      a.json(2, '{"b":'),
      a.json(1, '{"a":'),
      a.json(1, "1}"),
      a.json(2, "2}"),
      a.stop(2),
      a.stop(1),
      a.messageDelta("tool_use"),
      a.messageStop(),
    ]);
    expect(turn.toolCalls.map((c) => [c.id, c.arguments])).toEqual([
      ["toolu_1", { a: 1 }],
      ["toolu_2", { b: 2 }],
    ]);
  });

  it("tolerates a block before message_start, with a diagnostic", () => {
    const { turn } = decode([a.toolStart(0, "toolu_1", "x"), a.json(0, '{"k":1}'), a.stop(0), a.messageDelta("tool_use"), a.messageStop()]);
    expect(turn.toolCalls[0]?.arguments).toEqual({ k: 1 });
    expect(turn.status).toBe("complete");
    expect(codes(turn)).toContain("event_before_message_start");
  });

  it("a second message_start discards the first attempt and reports what was dropped", () => {
    const { turn } = decode([
      a.messageStart("msg_first"),
      a.toolStart(0, "toolu_first", "t"),
      a.json(0, '{"value":"Spark'),
      a.messageStart("msg_second"),
      a.toolStart(0, "toolu_second", "t"),
      a.json(0, '{"value":"Sparkle Day"}'),
      a.stop(0),
      a.messageDelta("tool_use"),
      a.messageStop(),
    ]);
    expect(turn.messageId).toBe("msg_second");
    expect(turn.toolCalls).toHaveLength(1);
    expect(turn.toolCalls[0]).toMatchObject({ id: "toolu_second", arguments: { value: "Sparkle Day" }, index: 0 });
    const restarted = turn.diagnostics.find((d) => d.code === "message_restarted");
    expect((restarted?.data as { droppedCalls: Array<{ id: string; error: { cause: string } }> }).droppedCalls[0]).toMatchObject({ id: "toolu_first", error: { cause: "message_restarted" } });
  });

  it("unknown events and delta types are diagnostics, never fatal", () => {
    const { turn } = decode([
      a.messageStart(),
      { event: "surprise", data: { type: "surprise", x: 1 } },
      a.toolStart(0, "toolu_1", "x"),
      { event: "content_block_delta", data: { type: "content_block_delta", index: 0, delta: { type: "future_delta", v: 1 } } },
      a.json(0, "{}"),
      a.stop(0),
      { data: "not json at all" },
      a.messageDelta("tool_use"),
      a.messageStop(),
    ]);
    expect(turn.status).toBe("complete");
    expect(turn.toolCalls[0]?.arguments).toEqual({});
    expect(codes(turn)).toEqual(expect.arrayContaining(["unknown_event", "unknown_delta_type", "non_json_data"]));
  });

  it("routes by the SSE event name when the payload has no type (kilroy records)", () => {
    const { turn } = decode([
      { event: "content_block_start", data: { index: 0, content_block: { type: "tool_use", id: "toolu_9", name: "glob" } } },
      { event: "content_block_delta", data: { index: 0, delta: { type: "input_json_delta", partial_json: '{"p":1}' } } },
      { event: "content_block_stop", data: { index: 0 } },
      { event: "message_delta", data: { stop_reason: "tool_use" } },
      { event: "message_stop", data: {} },
    ]);
    expect(turn.toolCalls[0]).toMatchObject({ id: "toolu_9", arguments: { p: 1 } });
    expect(turn.finishReason).toBe("tool_calls");
  });
});

describe("anthropic decoder: argument sources", () => {
  it("start input followed by a lone empty delta keeps the start input", () => {
    const { turn } = decode(toolStream(0, "toolu_1", "shell", [""], { command: "ls" }));
    expect(turn.toolCalls[0]).toMatchObject({ arguments: { command: "ls" }, source: "start", complete: true, error: null });
  });

  it("input {} with one empty delta is a no-argument call", () => {
    const { turn } = decode(toolStream(0, "toolu_1", "get_time", [""], {}));
    expect(turn.toolCalls[0]).toMatchObject({ arguments: {}, source: "empty", rawArguments: "", complete: true, error: null });
  });

  it("a start input as a JSON string is accepted as the start source", () => {
    const { turn } = decode(toolStream(0, "toolu_1", "shell", [], '{"command":"ls"}'));
    expect(turn.toolCalls[0]).toMatchObject({ arguments: { command: "ls" }, source: "start" });
  });

  it("relay concatenation of the start {} with the deltas is classified, not repaired", () => {
    const { turn } = decode(toolStream(0, "toolu_1", "weather", ["{}", '{"location":"Paris"}']));
    expect(turn.toolCalls[0]).toMatchObject({ arguments: { location: "Paris" }, repairs: ["cumulative_resend"] });
  });

  it("one invalid call does not affect its siblings", () => {
    const { turn } = decode([
      a.messageStart(),
      a.toolStart(0, "toolu_bad", "bad"),
      a.json(0, '{"x": [1, 2}'),
      a.stop(0),
      a.toolStart(1, "toolu_good", "good"),
      a.json(1, '{"y": 1}'),
      a.stop(1),
      a.messageDelta("tool_use"),
      a.messageStop(),
    ]);
    expect(turn.toolCalls[0]).toMatchObject({ id: "toolu_bad", arguments: null, error: { code: "invalid_json" } });
    expect(turn.toolCalls[1]).toMatchObject({ id: "toolu_good", arguments: { y: 1 }, error: null });
    expect(turn.status).toBe("complete");
  });
});

describe("anthropic decoder: truncation and errors", () => {
  it("max_tokens while a call is open truncates it", () => {
    const { turn } = decode([
      a.messageStart(),
      a.toolStart(1, "toolu_1", "make_file"),
      a.json(1, '{"filename": "taxes.txt", "lines": ["# GUIDE"'),
      a.messageDelta("max_tokens"),
      a.messageStop(),
    ]);
    expect(turn).toMatchObject({ status: "complete", finishReason: "length" });
    expect(turn.toolCalls[0]).toMatchObject({ complete: false, arguments: null, source: null, error: { code: "truncated", cause: "max_tokens" } });
    expect(turn.toolCalls[0]?.rawArguments).toBe('{"filename": "taxes.txt", "lines": ["# GUIDE"');
  });

  it("a stream that ends without content_block_stop or message_stop is incomplete", () => {
    const { turn } = decode([a.messageStart(), a.toolStart(0, "toolu_1", "x"), a.json(0, '{"a":1')]);
    expect(turn.status).toBe("incomplete");
    expect(turn.finishReason).toBeNull();
    // The object never closed: the call is cut off.
    expect(turn.toolCalls[0]).toMatchObject({ complete: false, arguments: null, error: { code: "truncated", cause: "stream_ended" } });
    expect(codes(turn)).toContain("stream_ended_without_message_stop");
  });

  it("a clean end without the end marker keeps a call whose arguments already form one closed object (issue 17)", () => {
    const { turn } = decode([a.messageStart(), a.toolStart(0, "toolu_1", "x"), a.json(0, '{"a":1}')]);
    expect(turn.status).toBe("incomplete");
    expect(turn.toolCalls[0]).toMatchObject({ complete: true, arguments: { a: 1 }, source: "delta", error: null });
    expect(turn.diagnostics.find((d) => d.code === "call_closed_at_stream_end")).toMatchObject({ callIndex: 0 });
  });

  it("a call closed before the stream died stays complete; only the open one is truncated", () => {
    const { turn } = decode([a.messageStart(), ...toolStream(0, "toolu_1", "x", ['{"a":1}']).slice(1, 4), a.toolStart(1, "toolu_2", "y"), a.json(1, '{"b"')]);
    expect(turn.toolCalls.map((c) => c.complete)).toEqual([true, false]);
    expect(turn.toolCalls[0]?.arguments).toEqual({ a: 1 });
  });

  it("a mid-stream error event ends the turn with status error and keeps what arrived", () => {
    const { turn } = decode([
      a.messageStart(),
      a.textStart(0, "Hello"),
      a.stop(0),
      a.toolStart(1, "toolu_1", "x"),
      a.json(1, '{"a":'),
      { event: "error", data: { type: "error", error: { type: "overloaded_error", message: "Overloaded" }, request_id: "req_1" } },
    ]);
    expect(turn).toMatchObject({ status: "error", finishReason: "error", text: "Hello", error: { type: "overloaded_error", message: "Overloaded" } });
    expect(turn.toolCalls[0]).toMatchObject({ complete: false, error: { code: "truncated", cause: "stream_error" } });
  });

  it("ignores what arrives after an error event: the stream ended there, as the SDKs read it", () => {
    const error = { event: "error", data: { type: "error", error: { type: "overloaded_error", message: "Overloaded" } } };
    const { turn } = decode([a.messageStart(), a.toolStart(0, "toolu_1", "x"), error, a.json(0, '{"a":1}'), a.stop(0), a.messageDelta("tool_use"), a.messageStop()]);
    expect(turn).toMatchObject({ status: "error", error: { type: "overloaded_error" } });
    expect(turn.toolCalls[0]).toMatchObject({ arguments: null, error: { code: "truncated", cause: "stream_error" } });
    expect(turn.diagnostics.filter((d) => d.code === "event_after_error")).toEqual([expect.objectContaining({ data: { count: 4, firstType: "content_block_delta" } })]);
  });

  it("finish is idempotent and later events do not change the turn", () => {
    const decoder = createDecoder("anthropic");
    for (const event of toolStream(0, "toolu_1", "x", ['{"a":1}'])) decoder.push(event);
    const first = decoder.finish();
    expect(decoder.push(a.json(0, "garbage"))).toEqual([]);
    expect(decoder.finish()).toBe(first);
    expect(first.toolCalls[0]?.arguments).toEqual({ a: 1 });
  });
});

describe("anthropic decoder: other blocks", () => {
  it("keeps thinking with its signature, redacted thinking and result blocks; server tools are not client calls", () => {
    const { turn } = decode([
      a.messageStart(),
      { event: "content_block_start", data: { type: "content_block_start", index: 0, content_block: { type: "thinking", thinking: "", signature: "" } } },
      { event: "content_block_delta", data: { type: "content_block_delta", index: 0, delta: { type: "thinking_delta", thinking: "Let me search." } } },
      { event: "content_block_delta", data: { type: "content_block_delta", index: 0, delta: { type: "signature_delta", signature: "sig123" } } },
      a.stop(0),
      { event: "content_block_start", data: { type: "content_block_start", index: 1, content_block: { type: "redacted_thinking", data: "opaque" } } },
      a.stop(1),
      a.toolStart(2, "srvtoolu_1", "web_search", {}, "server_tool_use"),
      a.json(2, '{"query":"weather"}'),
      a.stop(2),
      { event: "content_block_start", data: { type: "content_block_start", index: 3, content_block: { type: "web_search_tool_result", tool_use_id: "srvtoolu_1", content: [] } } },
      a.stop(3),
      a.textStart(4),
      a.text(4, "Sunny."),
      { event: "content_block_delta", data: { type: "content_block_delta", index: 4, delta: { type: "citations_delta", citation: { url: "u" } } } },
      a.stop(4),
      a.messageDelta("end_turn"),
      a.messageStop(),
    ]);
    expect(turn.reasoning).toBe("Let me search.");
    expect(turn.toolCalls).toEqual([]);
    expect(turn.serverToolCalls[0]).toMatchObject({ id: "srvtoolu_1", name: "web_search", arguments: { query: "weather" }, kind: "server" });
    expect(turn.blocks.map((b) => b.type)).toEqual(["thinking", "redacted_thinking", "server_tool_call", "opaque", "text"]);
    expect(turn.blocks[0]).toMatchObject({ signature: "sig123" });
    expect(turn.blocks[4]).toMatchObject({ text: "Sunny.", citations: [{ url: "u" }] });
    expect(turn.finishReason).toBe("stop");
    expect(turn.diagnostics).toEqual([]);
  });
});

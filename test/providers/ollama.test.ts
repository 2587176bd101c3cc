import { describe, expect, it } from "vitest";
import { createByteDecoder } from "../../src/adapters/bytes.js";
import { createDecoder } from "../../src/providers/registry.js";
import type { CodecEvent, DecodedTurn, ProviderEvent } from "../../src/types.js";

const line = (message: Record<string, unknown>, extra: Record<string, unknown> = {}): ProviderEvent => ({
  data: { model: "qwen3", created_at: "2025-06-23T11:09:03Z", message: { role: "assistant", content: "", ...message }, done: false, ...extra },
});
const doneLine = (reason = "stop"): ProviderEvent =>
  line({}, { done: true, done_reason: reason, total_duration: 5120000000, prompt_eval_count: 212, eval_count: 96, eval_duration: 4800000000 });
const call = (name: string, args: unknown, extra: Record<string, unknown> = {}, fnExtra: Record<string, unknown> = {}) => ({
  ...extra,
  function: { name, ...(args !== undefined ? { arguments: args } : {}), ...fnExtra },
});

function decode(events: ProviderEvent[]): { turn: DecodedTurn; events: CodecEvent[] } {
  const decoder = createDecoder("ollama");
  const out: CodecEvent[] = [];
  for (const event of events) out.push(...decoder.push(event));
  out.push(...decoder.end());
  return { turn: decoder.finish(), events: out };
}

const codes = (turn: DecodedTurn) => turn.diagnostics.map((d) => d.code);

describe("ollama decoder", () => {
  const stream = [
    line({ thinking: "User wants" }),
    line({ thinking: " both." }),
    line({ content: "Checking both." }),
    line({ tool_calls: [call("add", { a: 2, b: 3 }, { id: "call_k3x9a1qe" }, { index: 0 })] }),
    line({ tool_calls: [call("multiply", { a: 2, b: 3 }, { id: "call_p0z7m2tb" }, { index: 1 })] }),
    doneLine(),
  ];

  it("decodes thinking, text and whole calls; stop with calls means tool_calls", () => {
    const { turn } = decode(stream);
    expect(turn).toMatchObject({ status: "complete", finishReason: "tool_calls", rawFinishReason: "stop", text: "Checking both.", reasoning: "User wants both.", model: "qwen3" });
    expect(turn.toolCalls).toEqual([
      expect.objectContaining({ index: 0, id: "call_k3x9a1qe", name: "add", arguments: { a: 2, b: 3 }, rawArguments: '{"a":2,"b":3}', source: "final", complete: true, providerIndex: 0 }),
      expect.objectContaining({ index: 1, id: "call_p0z7m2tb", name: "multiply", arguments: { a: 2, b: 3 }, source: "final", complete: true, providerIndex: 1 }),
    ]);
    expect(turn.usage).toMatchObject({ inputTokens: 212, outputTokens: 96, totalTokens: 308, raw: { eval_duration: 4800000000 } });
    expect(turn.blocks.map((b) => b.type)).toEqual(["thinking", "text", "tool_call", "tool_call"]);
    expect(turn.diagnostics).toEqual([]);
  });

  it("each call ends as soon as its line arrives", () => {
    const { events } = decode(stream);
    const types = events.map((e) => e.type);
    expect(types.indexOf("tool_call_end")).toBeLessThan(types.lastIndexOf("tool_call_start"));
  });

  it("mints distinct deterministic ids for calls without ids, never merging same-name calls", () => {
    const events = [line({ tool_calls: [call("getTime", {}), call("getTime", {})] }), doneLine()];
    const { turn } = decode(events);
    expect(turn.toolCalls).toHaveLength(2);
    const ids = turn.toolCalls.map((c) => c.id);
    expect(ids[0]).toMatch(/^ollama_tw_/);
    expect(ids[0]).not.toBe(ids[1]);
    expect(decode(events).turn.toolCalls.map((c) => c.id)).toEqual(ids);
    expect(codes(turn).filter((c) => c === "call_id_minted")).toHaveLength(2);
  });

  it("arguments absent mean none; a JSON string is parsed; an unusable one makes only that call invalid", () => {
    const { turn } = decode([line({ tool_calls: [call("none", undefined), call("str", '{"city":"Paris"}'), call("bad", '{"city" "Paris"}'), call("arr", [1])] }), doneLine()]);
    expect(turn.toolCalls.map((c) => [c.name, c.arguments, c.source, c.error?.code ?? null])).toEqual([
      ["none", {}, "empty", null],
      ["str", { city: "Paris" }, "final", null],
      ["bad", null, null, "invalid_json"],
      ["arr", null, null, "not_object"],
    ]);
    // The repair would invent the colon: a suggestion, never arguments.
    expect(turn.toolCalls[2]?.error?.suggestion).toEqual({ city: "Paris" });
  });

  it("a repeated call id is ignored with a diagnostic", () => {
    const { turn } = decode([line({ tool_calls: [call("a", { x: 1 }, { id: "call_1" })] }), line({ tool_calls: [call("a", { x: 1 }, { id: "call_1" })] }), doneLine()]);
    expect(turn.toolCalls).toHaveLength(1);
    expect(codes(turn)).toContain("duplicate_tool_call");
  });

  it("two entries of one chunk are two calls even when their ids collide (fuzz finding); the second gets an id of its own", () => {
    const { turn } = decode([line({ tool_calls: [call("read", { path: "a" }, { id: "read" }, { index: 0 }), call("read", { path: "a" }, { id: "read" }, { index: 1 })] }), doneLine()]);
    expect(turn.toolCalls.map((c) => c.arguments)).toEqual([{ path: "a" }, { path: "a" }]);
    expect(turn.toolCalls[0]?.id).toBe("read");
    // One rule for every provider (issue 17): the turn mints `<sent>_tw<n>` and keeps the sent id.
    expect(turn.toolCalls[1]).toMatchObject({ id: "read_tw2", providerId: "read", repairs: ["minted_id"] });
    expect(turn.diagnostics.find((d) => d.code === "call_id_duplicate")).toMatchObject({ callIndex: 1, data: { id: "read", minted: turn.toolCalls[1]?.id } });
  });

  it("a later call with a taken id but other arguments is a new call, not a repeat", () => {
    const { turn } = decode([line({ tool_calls: [call("read", { path: "a" }, { id: "read" })] }), line({ tool_calls: [call("read", { path: "b" }, { id: "read" })] }), doneLine()]);
    expect(turn.toolCalls.map((c) => c.arguments)).toEqual([{ path: "a" }, { path: "b" }]);
    expect(new Set(turn.toolCalls.map((c) => c.id)).size).toBe(2);
    expect(codes(turn)).toEqual(["call_id_duplicate"]);
  });

  it("minted ids for colliding ids are deterministic", () => {
    const events = [line({ tool_calls: [call("f", {}, { id: "x" }), call("f", {}, { id: "x" })] }), doneLine()];
    expect(decode(events).turn.toolCalls.map((c) => c.id)).toEqual(decode(events).turn.toolCalls.map((c) => c.id));
  });

  it("done_reason length maps to length; an error line ends the turn with status error", () => {
    expect(decode([line({ content: "abc" }), doneLine("length")]).turn.finishReason).toBe("length");
    const { turn } = decode([line({ content: "Partial" }), line({ tool_calls: [call("a", { x: 1 })] }), { data: { error: "an error was encountered while running the model" } }]);
    expect(turn).toMatchObject({ status: "error", finishReason: "error", text: "Partial", error: { message: "an error was encountered while running the model" } });
    expect(turn.toolCalls[0]).toMatchObject({ complete: true, arguments: { x: 1 } });
  });

  it("a stream without its done line is incomplete; calls that arrived are whole", () => {
    const { turn } = decode(stream.slice(0, 4));
    expect(turn.status).toBe("incomplete");
    expect(turn.toolCalls[0]).toMatchObject({ complete: true, arguments: { a: 2, b: 3 } });
    expect(codes(turn)).toContain("stream_ended_without_done");
  });

  it("keeps <think> markup in the content as sent, and says so", () => {
    const { turn } = decode([line({ content: "<think>\nhmm\n</think>\n\nHi" }, { done: true, done_reason: "stop" })]);
    expect(turn.text).toBe("<think>\nhmm\n</think>\n\nHi");
    expect(codes(turn)).toEqual(["think_markup_in_content"]);
  });

  it("decodes the NDJSON body split anywhere", () => {
    const body = new TextEncoder().encode(stream.map((e) => JSON.stringify(e.data)).join("\n") + "\n");
    const decoder = createByteDecoder("ollama");
    for (let i = 0; i < body.length; i += 7) decoder.push(body.subarray(i, i + 7));
    expect(decoder.finish()).toEqual(decode(stream).turn);
  });
});

import { describe, expect, it } from "vitest";
import { createDecoder } from "../../src/providers/registry.js";
import type { CodecEvent, DecodedTurn, ProviderEvent, ToolCall } from "../../src/types.js";
import { r, responsesCall } from "../helpers/openai-events.js";

function decode(events: ProviderEvent[], previews = false): { turn: DecodedTurn; events: CodecEvent[] } {
  const decoder = createDecoder("openai-responses", { previews });
  const out: CodecEvent[] = [];
  for (const event of events) out.push(...decoder.push(event));
  out.push(...decoder.end());
  return { turn: decoder.finish(), events: out };
}

const codes = (turn: DecodedTurn): string[] => turn.diagnostics.map((d) => d.code);
const fcItem = (id: string, callId: string, name: string, args: string) => ({ id, type: "function_call", status: "completed", arguments: args, call_id: callId, name });

describe("openai-responses decoder: the canonical stream", () => {
  const events = [
    r.created(),
    r.event("response.output_item.added", { output_index: 0, item: { id: "rs_1", type: "reasoning", summary: [] } }),
    r.event("response.reasoning_summary_text.delta", { item_id: "rs_1", output_index: 0, summary_index: 0, delta: "Adding " }),
    r.event("response.reasoning_summary_text.delta", { item_id: "rs_1", output_index: 0, summary_index: 0, delta: "first." }),
    r.event("response.output_item.done", { output_index: 0, item: { id: "rs_1", type: "reasoning", summary: [{ type: "summary_text", text: "Adding first." }], encrypted_content: "gAAA" } }),
    r.event("response.output_item.added", { output_index: 1, item: { id: "msg_1", type: "message", status: "in_progress", role: "assistant", content: [] } }),
    r.event("response.content_part.added", { item_id: "msg_1", output_index: 1, content_index: 0, part: { type: "output_text", text: "" } }),
    r.event("response.output_text.delta", { item_id: "msg_1", output_index: 1, content_index: 0, delta: "Checking both." }),
    r.event("response.output_text.done", { item_id: "msg_1", output_index: 1, content_index: 0, text: "Checking both." }),
    r.event("response.output_item.done", { output_index: 1, item: { id: "msg_1", type: "message", content: [{ type: "output_text", text: "Checking both." }] } }),
    ...responsesCall(2, "fc_A", "call_A", "add", ['{"a":2,', '"b":3}']),
    ...responsesCall(3, "fc_B", "call_B", "multiply", ['{"a":2,"b":3}']),
    r.completed([], { input_tokens: 109, output_tokens: 223, total_tokens: 332, input_tokens_details: { cached_tokens: 3 }, output_tokens_details: { reasoning_tokens: 128 } }),
  ];

  it("decodes reasoning, text and two calls with call_id, name, item id and the final source", () => {
    const { turn } = decode(events);
    expect(turn).toMatchObject({ status: "complete", finishReason: "tool_calls", rawFinishReason: "completed", text: "Checking both.", messageId: "resp_test" });
    expect(turn.toolCalls).toEqual([
      expect.objectContaining({ index: 0, id: "call_A", name: "add", arguments: { a: 2, b: 3 }, source: "final", complete: true, providerIndex: 2, providerFields: { itemId: "fc_A" } }),
      expect.objectContaining({ index: 1, id: "call_B", name: "multiply", arguments: { a: 2, b: 3 }, source: "final", providerFields: { itemId: "fc_B" } }),
    ]);
    expect(turn.blocks[0]).toEqual({ type: "reasoning", text: "", id: "rs_1", providerIndex: 0, summary: ["Adding first."], encryptedContent: "gAAA" });
    expect(turn.usage).toMatchObject({ inputTokens: 109, outputTokens: 223, totalTokens: 332, cacheReadInputTokens: 3, reasoningTokens: 128 });
    expect(turn.diagnostics).toEqual([]);
  });

  it("ends each call at its first .done, with previews that end equal to the arguments", () => {
    const { events: out } = decode(events, true);
    const types = out.map((e) => e.type);
    expect(types.indexOf("tool_call_end")).toBeLessThan(types.lastIndexOf("tool_call_start"));
    const deltas = out.filter((e): e is Extract<CodecEvent, { type: "tool_call_delta" }> => e.type === "tool_call_delta" && e.index === 0);
    expect(deltas.at(-1)?.preview).toEqual({ a: 2, b: 3 });
  });
});

describe("openai-responses decoder: argument sources", () => {
  it("the .done snapshot wins and a disagreement with the deltas is reported", () => {
    const { turn } = decode([r.created(), r.callAdded(0, "fc_1", "call_1", "f"), r.argsDelta(0, "fc_1", '{"a":1}'), r.argsDone(0, "fc_1", '{"a":2}'), r.completed()]);
    expect(turn.toolCalls[0]).toMatchObject({ arguments: { a: 2 }, source: "final" });
    expect(codes(turn)).toContain("final_differs_from_delta");
  });

  it("arguments on output_item.added are the start source (deltas then continue or repeat them)", () => {
    const { turn } = decode([r.created(), r.callAdded(0, "fc_1", "call_1", "f", '{"a":1}'), r.event("response.output_item.done", { output_index: 0, item: fcItem("fc_1", "call_1", "f", "") }), r.completed()]);
    expect(turn.toolCalls[0]).toMatchObject({ arguments: { a: 1 }, source: "start" });
  });

  it("only .done events and no deltas (LM Studio)", () => {
    const { turn } = decode([r.created(), r.callAdded(0, "fc_1", "call_1", "weather"), r.argsDone(0, "fc_1", '{"location":"SF"}'), r.completed()]);
    expect(turn.toolCalls[0]).toMatchObject({ arguments: { location: "SF" }, source: "final", complete: true });
  });

  it("deltas keyed by output_index alone when item_id is missing", () => {
    const { turn } = decode([
      r.created(),
      r.callAdded(0, "fc_1", "call_1", "f"),
      r.event("response.function_call_arguments.delta", { output_index: 0, delta: '{"k":' }),
      r.event("response.function_call_arguments.delta", { output_index: 0, delta: "1}" }),
      r.event("response.output_item.done", { output_index: 0, item: fcItem("fc_1", "call_1", "f", '{"k":1}') }),
      r.completed(),
    ]);
    expect(turn.toolCalls[0]).toMatchObject({ arguments: { k: 1 } });
  });

  it("a call without any .done is finished from the terminal response, or from its deltas", () => {
    const withOutput = decode([r.created(), r.callAdded(0, "fc_1", "call_1", "f"), r.argsDelta(0, "fc_1", '{"a":1}'), r.completed([fcItem("fc_1", "call_1", "f", '{"a":1}')])]);
    expect(withOutput.turn.toolCalls[0]).toMatchObject({ arguments: { a: 1 }, source: "final", complete: true });
    const without = decode([r.created(), r.callAdded(0, "fc_1", "call_1", "f"), r.argsDelta(0, "fc_1", '{"a":1}'), r.completed([])]);
    expect(without.turn.toolCalls[0]).toMatchObject({ arguments: { a: 1 }, source: "delta", complete: true });
    expect(codes(without.turn)).toContain("call_without_done");
  });

  it("an item only present in the terminal response is decoded from it", () => {
    const { turn } = decode([r.created(), r.completed([fcItem("fc_9", "call_9", "late", '{"x":true}')])]);
    expect(turn.toolCalls[0]).toMatchObject({ id: "call_9", name: "late", arguments: { x: true } });
    expect(codes(turn)).toContain("item_done_without_added");
  });

  it("one invalid call does not affect its siblings", () => {
    const { turn } = decode([r.created(), ...responsesCall(0, "fc_1", "call_1", "bad", ['{"x": [1, 2}']), ...responsesCall(1, "fc_2", "call_2", "good", ['{"y": 1}']), r.completed()]);
    expect(turn.toolCalls[0]).toMatchObject({ arguments: null, error: { code: "invalid_json" } });
    expect(turn.toolCalls[1]).toMatchObject({ arguments: { y: 1 }, error: null });
  });

  it("a missing call_id is minted deterministically", () => {
    const added = r.event("response.output_item.added", { output_index: 0, item: { id: "fc_1", type: "function_call", arguments: "", name: "f" } });
    const events = [r.created(), added, r.argsDone(0, "fc_1", "{}"), r.completed()];
    const first = decode(events).turn.toolCalls[0];
    expect(first?.id).toMatch(/^call_tw_/);
    expect(decode(events).turn.toolCalls[0]?.id).toBe(first?.id);
  });
});

describe("openai-responses decoder: custom tools and the parallel wrapper", () => {
  const customAdded = r.event("response.output_item.added", { output_index: 0, item: { type: "custom_tool_call", id: "ct_1", call_id: "call_sql", name: "write_sql", input: "" } });

  it("custom tool input is free text, presented as {input: text} and marked", () => {
    const { turn, events } = decode(
      [
        r.created(),
        customAdded,
        r.event("response.custom_tool_call_input.delta", { item_id: "ct_1", output_index: 0, delta: 'SELECT "x"\n' }),
        r.event("response.custom_tool_call_input.delta", { item_id: "ct_1", output_index: 0, delta: "FROM t" }),
        r.event("response.custom_tool_call_input.done", { item_id: "ct_1", output_index: 0, input: 'SELECT "x"\nFROM t' }),
        r.completed(),
      ],
      true,
    );
    expect(turn.toolCalls[0]).toMatchObject({ id: "call_sql", name: "write_sql", arguments: { input: 'SELECT "x"\nFROM t' }, source: "final", error: null, providerFields: { itemId: "ct_1", customToolInput: true } });
    const deltas = events.filter((e): e is Extract<CodecEvent, { type: "tool_call_delta" }> => e.type === "tool_call_delta");
    expect(deltas.at(-1)?.preview).toEqual({ input: 'SELECT "x"\nFROM t' });
    expect(turn.diagnostics).toEqual([]);
  });

  it("a truncated custom tool call is truncated, not invalid", () => {
    const { turn } = decode([r.created(), customAdded, r.event("response.custom_tool_call_input.delta", { item_id: "ct_1", output_index: 0, delta: "SELECT" }), r.incomplete("max_output_tokens")]);
    expect(turn.toolCalls[0]).toMatchObject({ complete: false, error: { code: "truncated", cause: "max_tokens" } });
  });

  const wrapperArgs = JSON.stringify({
    tool_uses: [
      { recipient_name: "functions.weather", parameters: { location: "San Francisco" } },
      { recipient_name: "functions.cityAttractions", parameters: { city: "Rome" } },
    ],
  });

  it("expands the `parallel` wrapper into its calls, with a diagnostic and the original in providerFields", () => {
    const { turn, events } = decode([r.created(), ...responsesCall(0, "fc_p", "call_p", "parallel", [wrapperArgs.slice(0, 30), wrapperArgs.slice(30)]), r.completed()]);
    expect(turn.toolCalls.map((call: ToolCall) => [call.id, call.name, call.arguments, call.source])).toEqual([
      ["call_p_0", "weather", { location: "San Francisco" }, "final"],
      ["call_p_1", "cityAttractions", { city: "Rome" }, "final"],
    ]);
    expect(turn.toolCalls[0]?.providerFields).toEqual({ itemId: "fc_p", parallelWrapper: { callId: "call_p", name: "parallel", position: 0, recipientName: "functions.weather" } });
    expect(turn.finishReason).toBe("tool_calls");
    expect(codes(turn)).toEqual(["parallel_wrapper_expanded"]);
    expect(events.filter((e) => e.type === "tool_call_start")).toHaveLength(2);
  });

  it("a call named parallel without the wrapper shape stays one call", () => {
    const { turn } = decode([r.created(), ...responsesCall(0, "fc_p", "call_p", "parallel", ['{"jobs": 3}']), r.completed()]);
    expect(turn.toolCalls).toHaveLength(1);
    expect(turn.toolCalls[0]).toMatchObject({ id: "call_p", name: "parallel", arguments: { jobs: 3 } });
    expect(codes(turn)).toContain("parallel_wrapper_not_expanded");
  });

  it("a wrapper cut off by the end of the stream is one truncated call", () => {
    const { turn } = decode([r.created(), r.callAdded(0, "fc_p", "call_p", "parallel"), r.argsDelta(0, "fc_p", wrapperArgs.slice(0, 40))]);
    expect(turn.status).toBe("incomplete");
    expect(turn.toolCalls).toHaveLength(1);
    expect(turn.toolCalls[0]).toMatchObject({ id: "call_p", complete: false, error: { code: "truncated", cause: "stream_ended" } });
  });
});

describe("openai-responses decoder: terminal events and errors", () => {
  it("response.incomplete for max_output_tokens is length, with the open call truncated", () => {
    const { turn } = decode([r.created(), ...responsesCall(0, "fc_1", "call_1", "a", ['{"x":1}']), r.callAdded(1, "fc_2", "call_2", "b"), r.argsDelta(1, "fc_2", '{"lines": ["one'), r.incomplete("max_output_tokens")]);
    expect(turn).toMatchObject({ status: "complete", finishReason: "length", rawFinishReason: "max_output_tokens" });
    expect(turn.toolCalls[0]).toMatchObject({ complete: true, arguments: { x: 1 } });
    expect(turn.toolCalls[1]).toMatchObject({ complete: false, error: { code: "truncated", cause: "max_tokens" } });
  });

  it("response.incomplete for content_filter is content_filter", () => {
    expect(decode([r.created(), r.incomplete("content_filter")]).turn.finishReason).toBe("content_filter");
  });

  it("response.failed ends the turn with status error", () => {
    const { turn } = decode([
      r.created(),
      r.callAdded(0, "fc_1", "call_1", "f"),
      r.argsDelta(0, "fc_1", '{"a":'),
      r.event("response.failed", { response: { id: "resp_test", status: "failed", error: { code: "server_error", message: "boom" }, output: [] } }),
    ]);
    expect(turn).toMatchObject({ status: "error", finishReason: "error", error: { type: "server_error", message: "boom" } });
    expect(turn.toolCalls[0]).toMatchObject({ complete: false, error: { code: "truncated", cause: "stream_error" } });
  });

  it("the error event, flat (SDK type) or nested (public API)", () => {
    const flat = decode([r.created(), r.event("error", { code: "rate_limit_exceeded", message: "Slow down", param: null, sequence_number: 2 })]);
    expect(flat.turn).toMatchObject({ status: "error", error: { type: "rate_limit_exceeded", message: "Slow down" } });
    const nested = decode([r.created(), r.event("error", { error: { type: "insufficient_quota", code: "insufficient_quota", message: "Quota", param: null } })]);
    expect(nested.turn).toMatchObject({ status: "error", error: { type: "insufficient_quota", message: "Quota" } });
  });

  it("a stream without a terminal event is incomplete and its open calls truncated; a closed object is kept (issue 17)", () => {
    const { turn } = decode([r.created(), r.callAdded(0, "fc_1", "call_1", "f"), r.argsDelta(0, "fc_1", '{"a":1')]);
    expect(turn).toMatchObject({ status: "incomplete", finishReason: null });
    expect(turn.toolCalls[0]).toMatchObject({ complete: false, error: { code: "truncated", cause: "stream_ended" } });
    expect(codes(turn)).toContain("stream_ended_without_terminal_event");
    const closed = decode([r.created(), r.callAdded(0, "fc_1", "call_1", "f"), r.argsDelta(0, "fc_1", '{"a":1}')]).turn;
    expect(closed).toMatchObject({ status: "incomplete", finishReason: null });
    expect(closed.toolCalls[0]).toMatchObject({ complete: true, arguments: { a: 1 }, error: null });
    expect(codes(closed)).toContain("call_closed_at_stream_end");
  });

  it("unknown events, hosted tool items, unknown items and malformed payloads are diagnostics", () => {
    const { turn } = decode([
      r.created(),
      r.event("response.output_item.added", { output_index: 0, item: { id: "ws_1", type: "web_search_call", status: "in_progress" } }),
      r.event("response.web_search_call.searching", { item_id: "ws_1", output_index: 0 }),
      r.event("response.output_item.done", { output_index: 0, item: { id: "ws_1", type: "web_search_call", status: "completed", action: { query: "x" } } }),
      r.event("response.future_event", { x: 1 }),
      r.argsDelta(5, "fc_unknown", "{}"),
      { data: '{"type":"response.completed"' },
      r.completed(),
      r.event("response.output_text.delta", { item_id: "msg", delta: "late" }),
    ]);
    expect(turn.status).toBe("complete");
    expect(turn.blocks[0]).toMatchObject({ type: "opaque", blockType: "web_search_call", value: { status: "completed" } });
    expect(turn.toolCalls).toEqual([]);
    expect(codes(turn)).toEqual(["item_not_interpreted", "unknown_event", "delta_for_unknown_item", "non_json_data", "event_after_terminal"]);
  });

  it("reasoning text deltas (DeepSeek, LM Studio) are kept apart from text", () => {
    const { turn } = decode([
      r.created(),
      r.event("response.output_item.added", { output_index: 0, item: { id: "rs_1", type: "reasoning", content: [], summary: [] } }),
      r.event("response.reasoning_text.delta", { item_id: "rs_1", output_index: 0, content_index: 0, delta: "Think" }),
      r.event("response.reasoning_text.delta", { item_id: "rs_1", output_index: 0, content_index: 0, delta: "ing." }),
      r.event("response.reasoning_text.done", { item_id: "rs_1", output_index: 0, content_index: 0, text: "Thinking." }),
      r.event("response.output_item.done", { output_index: 0, item: { id: "rs_1", type: "reasoning", content: [{ type: "reasoning_text", text: "Thinking." }], summary: [] } }),
      r.completed(),
    ]);
    expect(turn).toMatchObject({ reasoning: "Thinking.", text: "", finishReason: "stop" });
    expect(turn.blocks).toEqual([{ type: "reasoning", text: "Thinking.", id: "rs_1", providerIndex: 0 }]);
  });

  it("text that only arrives in the done events is kept", () => {
    const { turn } = decode([
      r.created(),
      r.event("response.output_item.added", { output_index: 0, item: { id: "msg_1", type: "message", content: [] } }),
      r.event("response.output_item.done", { output_index: 0, item: { id: "msg_1", type: "message", content: [{ type: "output_text", text: "Whole." }] } }),
      r.completed(),
    ]);
    expect(turn.text).toBe("Whole.");
  });
});

import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parseRecords } from "../../src/framing/records.js";
import { createDecoder } from "../../src/providers/registry.js";
import type { CodecEvent, DecodedTurn, ProviderEvent, ToolCall } from "../../src/types.js";
import { REPO_ROOT } from "../import/corpus.js";
import { c, chatCall, chatStream } from "../helpers/openai-events.js";

function decode(events: ProviderEvent[], previews = false): { turn: DecodedTurn; events: CodecEvent[] } {
  const decoder = createDecoder("openai-chat", { previews });
  const out: CodecEvent[] = [];
  for (const event of events) out.push(...decoder.push(event));
  out.push(...decoder.end());
  return { turn: decoder.finish(), events: out };
}

const codes = (turn: DecodedTurn): string[] => turn.diagnostics.map((d) => d.code);
const summary = (calls: ToolCall[]) => calls.map((call) => [call.id, call.name, call.arguments]);

describe("openai-chat decoder: the canonical stream", () => {
  const events = chatStream([
    c.text("Checking"),
    c.text(" both."),
    ...chatCall(0, "call_A", "add", ['{"a": 2', ', "b": 3}']),
    ...chatCall(1, "call_B", "multiply", ['{"a": 2, "b": 3}']),
  ]);

  it("decodes text and two calls with ids, names, arguments, provenance and usage", () => {
    const { turn } = decode(events);
    expect(turn).toMatchObject({ status: "complete", finishReason: "tool_calls", rawFinishReason: "tool_calls", text: "Checking both.", messageId: "chatcmpl-test", model: "gpt-test" });
    expect(turn.toolCalls).toEqual([
      expect.objectContaining({ index: 0, id: "call_A", name: "add", arguments: { a: 2, b: 3 }, rawArguments: '{"a": 2, "b": 3}', source: "delta", complete: true, repairs: [], error: null, providerIndex: 0 }),
      expect.objectContaining({ index: 1, id: "call_B", name: "multiply", arguments: { a: 2, b: 3 }, source: "delta", complete: true, providerIndex: 1 }),
    ]);
    expect(turn.usage).toMatchObject({ inputTokens: 10, outputTokens: 5, totalTokens: 15 });
    expect(turn.blocks.map((b) => b.type)).toEqual(["text", "tool_call", "tool_call"]);
    expect(turn.diagnostics).toEqual([]);
  });

  it("emits start and delta events as chunks arrive and every call end at [DONE]", () => {
    const decoder = createDecoder("openai-chat");
    const beforeDone: CodecEvent[] = [];
    for (const event of events.slice(0, -1)) beforeDone.push(...decoder.push(event));
    expect(beforeDone.filter((e) => e.type === "tool_call_start")).toHaveLength(2);
    expect(beforeDone.filter((e) => e.type === "tool_call_end")).toHaveLength(0);
    const atDone = decoder.push(c.done());
    expect(atDone.filter((e) => e.type === "tool_call_end").map((e) => (e as { call: ToolCall }).call.id)).toEqual(["call_A", "call_B"]);
    // The empty first fragment is not an event.
    expect(beforeDone.filter((e) => e.type === "tool_call_delta" && e.index === 0).map((e) => (e as { delta: string }).delta)).toEqual(['{"a": 2', ', "b": 3}']);
  });

  it("gives live previews that end equal to the final arguments", () => {
    const { events: out, turn } = decode(events, true);
    const deltas = out.filter((e): e is Extract<CodecEvent, { type: "tool_call_delta" }> => e.type === "tool_call_delta" && e.index === 0);
    expect(deltas.at(-1)?.preview).toEqual(turn.toolCalls[0]?.arguments);
  });

  it("finish is idempotent and later events do not change the turn", () => {
    const decoder = createDecoder("openai-chat");
    for (const event of events) decoder.push(event);
    const first = decoder.finish();
    expect(decoder.push(c.args(0, "garbage"))).toEqual([]);
    expect(decoder.finish()).toBe(first);
  });
});

describe("openai-chat decoder: call identity (choice, index, id)", () => {
  it("an index that starts at 1 or skips numbers is fine", () => {
    const { turn } = decode(chatStream([...chatCall(1, "t1", "one", ['{"a":1}']), ...chatCall(4, "t4", "four", ['{"b":4}'])]));
    expect(summary(turn.toolCalls)).toEqual([
      ["t1", "one", { a: 1 }],
      ["t4", "four", { b: 4 }],
    ]);
    expect(turn.toolCalls.map((call) => call.providerIndex)).toEqual([1, 4]);
  });

  it("a new id at an index in use starts a new call and finalizes the previous one at once", () => {
    const { turn, events } = decode(
      chatStream([c.open(0, "call_1", "write_file", '{"path":"a"}'), c.open(0, "call_2", "write_file", '{"path":'), c.args(0, '"b"}')]),
    );
    expect(summary(turn.toolCalls)).toEqual([
      ["call_1", "write_file", { path: "a" }],
      ["call_2", "write_file", { path: "b" }],
    ]);
    const types = events.map((e) => (e.type === "tool_call_start" || e.type === "tool_call_end" ? `${e.type}:${e.type === "tool_call_end" ? e.call.index : e.index}` : null)).filter(Boolean);
    expect(types).toEqual(["tool_call_start:0", "tool_call_end:0", "tool_call_start:1", "tool_call_end:1"]);
    expect(codes(turn)).toContain("parallel_calls_share_index");
  });

  it("continuation fragments repeating the same id, type and name stay one call (names are not concatenated)", () => {
    const { turn } = decode(
      chatStream([
        c.tools(c.entry({ index: 0, id: "0", type: "function", name: "llm_version", args: "" })),
        c.tools(c.entry({ index: 0, id: "0", type: "function", name: "llm_version", args: '{"a":' })),
        c.tools(c.entry({ index: 0, id: "", type: "function", name: "llm_version", args: "1}" })),
      ]),
    );
    expect(summary(turn.toolCalls)).toEqual([["0", "llm_version", { a: 1 }]]);
    expect(turn.diagnostics).toEqual([]);
  });

  it("a different name on a continuation is reported and the first name kept", () => {
    const { turn } = decode(chatStream([c.open(0, "x", "first", '{"a":'), c.tools(c.entry({ index: 0, name: "second", args: "1}" }))]));
    expect(turn.toolCalls[0]).toMatchObject({ name: "first", arguments: { a: 1 } });
    expect(codes(turn)).toContain("call_name_changed");
  });

  it("without index, the id decides, then the previous call of the choice", () => {
    const { turn } = decode(
      chatStream([
        c.tools(c.entry({ id: "g1", type: "function", name: "read", args: '{"p":' })),
        c.tools(c.entry({ args: '"a"}' })),
        c.tools(c.entry({ id: "g2", type: "function", name: "read", args: '{"p":"b"}' })),
        c.tools(c.entry({ id: "g1", extra: { extra_content: { google: { thought_signature: "sig" } } } })),
      ]),
    );
    expect(summary(turn.toolCalls)).toEqual([
      ["g1", "read", { p: "a" }],
      ["g2", "read", { p: "b" }],
    ]);
    expect(turn.toolCalls[0]?.providerFields).toEqual({ extra_content: { google: { thought_signature: "sig" } }, thoughtSignature: "sig" });
    expect(codes(turn)).toContain("tool_call_index_missing");
  });

  it("without index or id, a different tool after a complete call is a new call", () => {
    const { turn } = decode(
      chatStream([c.tools(c.entry({ name: "a", args: '{"x":1}' })), c.tools(c.entry({ name: "b", args: '{"y":' })), c.tools(c.entry({ args: "2}" }))]),
    );
    expect(turn.toolCalls.map((call) => [call.name, call.arguments])).toEqual([
      ["a", { x: 1 }],
      ["b", { y: 2 }],
    ]);
  });

  it("a known id at another index stays with its call, with a diagnostic", () => {
    const { turn } = decode(chatStream([c.open(0, "a", "one", '{"k":'), c.open(1, "b", "two", "{}"), c.tools(c.entry({ index: 1, id: "a", args: "1}" }))]));
    expect(summary(turn.toolCalls)).toEqual([
      ["a", "one", { k: 1 }],
      ["b", "two", {}],
    ]);
    expect(codes(turn)).toContain("call_index_changed");
  });

  it("interleaved fragments of parallel calls are keyed by index", () => {
    const { turn } = decode(chatStream([c.open(0, "a", "one"), c.open(1, "b", "two"), c.args(1, '{"b":'), c.args(0, '{"a":'), c.args(0, "1}"), c.args(1, "2}")]));
    expect(summary(turn.toolCalls)).toEqual([
      ["a", "one", { a: 1 }],
      ["b", "two", { b: 2 }],
    ]);
  });

  it("several whole calls in one delta", () => {
    const { turn } = decode(
      chatStream([c.tools(c.entry({ id: "a", type: "function", name: "x", args: "{}", index: 0 }), c.entry({ id: "b", type: "function", name: "y", args: '{"q":1}', index: 1 }))]),
    );
    expect(summary(turn.toolCalls)).toEqual([
      ["a", "x", {}],
      ["b", "y", { q: 1 }],
    ]);
  });

  it("calls of several choices are kept apart, with a diagnostic", () => {
    const two = (index: number, entry: Record<string, unknown>): ProviderEvent => ({
      data: { id: "cmpl", object: "chat.completion.chunk", choices: [{ index, delta: { tool_calls: [entry] }, finish_reason: null }] },
    });
    const { turn } = decode([
      two(0, c.entry({ index: 0, id: "c0", name: "f", args: '{"n":0}' })),
      two(1, c.entry({ index: 0, id: "c1", name: "f", args: '{"n":1}' })),
      c.finish("tool_calls"),
      c.done(),
    ]);
    expect(summary(turn.toolCalls)).toEqual([
      ["c0", "f", { n: 0 }],
      ["c1", "f", { n: 1 }],
    ]);
    expect(turn.toolCalls[1]?.providerFields).toEqual({ choice: 1 });
    expect(codes(turn)).toContain("multiple_choices");
  });
});

describe("openai-chat decoder: ids", () => {
  const idless = (responseId: string) =>
    [
      c.chunk({ delta: { role: "assistant" } }, { id: responseId }),
      c.chunk({ delta: { tool_calls: [c.entry({ index: 0, type: "function", name: "get_weather" })] } }, { id: responseId }),
      c.chunk({ delta: { tool_calls: [c.entry({ index: 0, args: '{"city":"Oslo"}' })] } }, { id: responseId }),
      c.finish("tool_calls", { id: responseId }),
      c.done(),
    ] as ProviderEvent[];

  it("mints a deterministic id when none arrives, opening the call at its first argument text", () => {
    const first = decode(idless("resp-1"));
    const again = decode(idless("resp-1"));
    const call = first.turn.toolCalls[0];
    expect(call?.id).toMatch(/^call_tw_[0-9a-z]{11}$/);
    expect(again.turn.toolCalls[0]?.id).toBe(call?.id);
    expect(call).toMatchObject({ name: "get_weather", arguments: { city: "Oslo" } });
    expect(first.events.find((e) => e.type === "tool_call_start")).toMatchObject({ id: call?.id, name: "get_weather" });
    expect(codes(first.turn)).toContain("call_id_minted");
  });

  it("minted ids differ across responses and positions", () => {
    expect(decode(idless("resp-1")).turn.toolCalls[0]?.id).not.toBe(decode(idless("resp-2")).turn.toolCalls[0]?.id);
    const { turn } = decode(chatStream([c.tools(c.entry({ index: 0, name: "f", args: "{}" })), c.tools(c.entry({ index: 1, name: "f", args: "{}" }))]));
    expect(new Set(turn.toolCalls.map((call) => call.id)).size).toBe(2);
  });

  it("an empty id never replaces a known id; a late provider id replaces a minted one", () => {
    const { turn } = decode(chatStream([c.tools(c.entry({ index: 0, id: "", name: "f", args: '{"a":' })), c.tools(c.entry({ index: 0, id: "call_real", args: "1}" }))]));
    expect(turn.toolCalls[0]).toMatchObject({ id: "call_real", arguments: { a: 1 } });
    expect(codes(turn)).toEqual(expect.arrayContaining(["call_id_minted", "call_id_late"]));
  });

  it("a call that never gets an id nor arguments still appears, with a minted id and no arguments", () => {
    const { turn } = decode(chatStream([c.tools(c.entry({ index: 0, type: "function", name: "get_time" }))]));
    expect(turn.toolCalls[0]).toMatchObject({ name: "get_time", arguments: {}, source: "empty", complete: true });
    expect(turn.toolCalls[0]?.id).toMatch(/^call_tw_/);
  });
});

describe("openai-chat decoder: argument sources", () => {
  it("arguments sent as an object are serialized on arrival", () => {
    const { turn } = decode(chatStream([c.tools(c.entry({ index: 0, id: "a", name: "f", args: { city: "Berlin" } }))]));
    expect(turn.toolCalls[0]).toMatchObject({ arguments: { city: "Berlin" }, rawArguments: '{"city":"Berlin"}', source: "delta" });
    expect(codes(turn)).toContain("arguments_object");
  });

  it("null arguments are ignored and mean no arguments", () => {
    const { turn } = decode(chatStream([c.tools(c.entry({ index: 0, id: "a", name: "f", args: null }))]));
    expect(turn.toolCalls[0]).toMatchObject({ arguments: {}, source: "empty", complete: true, error: null });
    expect(codes(turn)).toContain("arguments_null");
  });

  it("a cumulative stream replaces instead of appending", () => {
    const full = '{"city": "Shenzhen", "days": 3}';
    const { turn, events } = decode(chatStream([c.open(0, "a", "f", full.slice(0, 9)), c.args(0, full.slice(0, 20)), c.args(0, full)]), true);
    expect(turn.toolCalls[0]).toMatchObject({ arguments: { city: "Shenzhen", days: 3 }, rawArguments: full, repairs: ["cumulative_resend"] });
    expect(codes(turn)).toContain("arguments_cumulative");
    // Only the new part of each resend is appended: the delta events concatenate to the real
    // text and the preview is the same object throughout, updated in place.
    const deltas = events.filter((e): e is Extract<CodecEvent, { type: "tool_call_delta" }> => e.type === "tool_call_delta");
    expect(deltas.map((e) => e.delta).join("")).toBe(full);
    expect(new Set(deltas.map((e) => e.preview)).size).toBe(1);
    expect(deltas.at(-1)?.preview).toEqual({ city: "Shenzhen", days: 3 });
  });

  it("a final flush of the complete arguments is counted once", () => {
    const { turn } = decode(chatStream([c.open(0, "a", "f", '{"q": "x'), c.args(0, '"}'), c.args(0, '{"q": "x"}')]));
    expect(turn.toolCalls[0]).toMatchObject({ arguments: { q: "x" }, repairs: ["collapsed_duplicate"] });
  });

  it("a fragment that repeats the text so far but is ordinary text is kept once the rest shows it (fuzz finding)", () => {
    // `{"{":0}` cut in two-character fragments: the second `{"` equals everything so far.
    const { turn, events } = decode(chatStream([c.open(0, "a", "f", '{"'), c.args(0, '{"'), c.args(0, ":0"), c.args(0, "}")]), true);
    expect(turn.toolCalls[0]).toMatchObject({ arguments: { "{": 0 }, rawArguments: '{"{":0}', source: "delta", repairs: [], error: null });
    expect(turn.diagnostics).toEqual([
      expect.objectContaining({ code: "arguments_repeated", callIndex: 0 }),
      expect.objectContaining({ code: "arguments_resend_reverted", callIndex: 0, severity: "warning" }),
    ]);
    // The live stream showed the resend reading; the end event carries the decision.
    const end = events.find((e): e is Extract<CodecEvent, { type: "tool_call_end" }> => e.type === "tool_call_end");
    expect(end?.call.arguments).toEqual({ "{": 0 });
  });

  it("the literal reading is dropped as soon as it cannot be JSON, so real resends cost no second parse", () => {
    const full = '{"city": "Shenzhen", "days": 3}';
    const { turn } = decode(chatStream([c.open(0, "a", "f", full.slice(0, 9)), c.args(0, full.slice(0, 20)), c.args(0, full), c.args(0, full)]));
    expect(turn.toolCalls[0]).toMatchObject({ arguments: { city: "Shenzhen", days: 3 }, rawArguments: full, repairs: ["cumulative_resend", "collapsed_duplicate"] });
    expect(codes(turn)).not.toContain("arguments_resend_reverted");
  });

  it("a truncated call never switches readings", () => {
    const { turn } = decode([c.role(), c.open(0, "a", "f", '{"'), c.args(0, '{"')]);
    expect(turn.toolCalls[0]).toMatchObject({ complete: false, error: { code: "truncated" } });
    expect(codes(turn)).not.toContain("arguments_resend_reverted");
  });

  it("`{}` then the real object (one complete object per chunk) is classified by finalize", () => {
    const { turn } = decode(chatStream([c.open(0, "a", "f", "{}"), c.args(0, '{"stock":"MSFT"}')]));
    expect(turn.toolCalls[0]).toMatchObject({ arguments: { stock: "MSFT" }, repairs: ["cumulative_resend"] });
  });

  it("a fragment that merely repeats leading whitespace is appended, not taken as a resend", () => {
    const { turn } = decode(chatStream([c.open(0, "a", "f", " "), c.args(0, ' {"a": 1}')]));
    expect(turn.toolCalls[0]).toMatchObject({ arguments: { a: 1 }, repairs: [] });
  });

  it("one invalid call does not affect its siblings", () => {
    const { turn } = decode(chatStream([...chatCall(0, "bad", "bad", ['{"x": [1, 2}']), ...chatCall(1, "good", "good", ['{"y": 1}'])]));
    expect(turn.toolCalls[0]).toMatchObject({ id: "bad", arguments: null, error: { code: "invalid_json" } });
    expect(turn.toolCalls[1]).toMatchObject({ id: "good", arguments: { y: 1 }, error: null });
    expect(turn.status).toBe("complete");
  });

  it("custom (free-text) tools are presented as {input: text}, never failed as invalid JSON", () => {
    const { turn, events } = decode(
      chatStream([
        c.tools({ index: 0, id: "call_c", type: "custom", custom: { name: "run_sql", input: "SELECT \"a\"" } }),
        c.tools({ index: 0, type: "custom", custom: { input: "\nFROM t" } }),
      ]),
      true,
    );
    expect(turn.toolCalls[0]).toMatchObject({ id: "call_c", name: "run_sql", arguments: { input: 'SELECT "a"\nFROM t' }, error: null, providerFields: { customToolInput: true } });
    const deltas = events.filter((e): e is Extract<CodecEvent, { type: "tool_call_delta" }> => e.type === "tool_call_delta");
    expect(deltas.at(-1)?.preview).toEqual({ input: 'SELECT "a"\nFROM t' });
  });

  it("the legacy delta.function_call is one call", () => {
    const { turn } = decode(
      chatStream([c.chunk({ delta: { function_call: { name: "lookup", arguments: "" } } }), c.chunk({ delta: { function_call: { arguments: '{"q":"x"}' } } })], "function_call"),
    );
    expect(turn.toolCalls[0]).toMatchObject({ name: "lookup", arguments: { q: "x" }, providerFields: { legacyFunctionCall: true } });
    expect(turn.finishReason).toBe("tool_calls");
  });
});

describe("openai-chat decoder: finish_reason and the end of the stream", () => {
  it("stop with calls becomes tool_calls, with a diagnostic", () => {
    const { turn } = decode(chatStream(chatCall(0, "a", "f", ["{}"]), "stop"));
    expect(turn).toMatchObject({ finishReason: "tool_calls", rawFinishReason: "stop" });
    expect(codes(turn)).toContain("finish_reason_stop_with_tool_calls");
  });

  it("stop without calls is stop; an unknown reason is other", () => {
    expect(decode(chatStream([c.text("hi")], "stop")).turn.finishReason).toBe("stop");
    const { turn } = decode(chatStream([c.text("hi")], "weird"));
    expect(turn.finishReason).toBe("other");
    expect(codes(turn)).toContain("finish_reason_unknown");
  });

  it("length truncates the open call; a call followed by another and complete stays complete", () => {
    const { turn } = decode(chatStream([...chatCall(0, "a", "f", ['{"x":1}']), ...chatCall(1, "b", "f", ['{"x":"cut'])], "length"));
    expect(turn).toMatchObject({ status: "complete", finishReason: "length" });
    expect(turn.toolCalls[0]).toMatchObject({ complete: true, arguments: { x: 1 } });
    expect(turn.toolCalls[1]).toMatchObject({ complete: false, arguments: null, error: { code: "truncated", cause: "max_tokens" } });
  });

  it("length with a single call truncates it even if its text parses", () => {
    const { turn } = decode(chatStream(chatCall(0, "a", "f", ['{"x":1}']), "length"));
    expect(turn.toolCalls[0]).toMatchObject({ complete: false, error: { code: "truncated", cause: "max_tokens" } });
  });

  it("a finish_reason on every chunk does not finalize calls early", () => {
    const fin = c.finish("tool_calls");
    const { turn, events } = decode([c.role(), fin, c.open(0, "a", "f"), fin, c.args(0, '{"a":'), fin, c.args(0, "1}"), fin, c.done()]);
    expect(turn.toolCalls[0]).toMatchObject({ arguments: { a: 1 }, complete: true });
    expect(events.filter((e) => e.type === "tool_call_end")).toHaveLength(1);
    expect(turn.diagnostics).toEqual([]);
  });

  it("with a finish_reason on every chunk, a stream cut after one of them is still incomplete", () => {
    const fin = c.finish("tool_calls");
    const { turn } = decode([c.role(), fin, c.open(0, "a", "f"), fin, c.args(0, '{"a":'), fin]);
    expect(turn.status).toBe("incomplete");
    expect(turn.toolCalls[0]).toMatchObject({ complete: false, error: { code: "truncated", cause: "stream_ended" } });
    expect(codes(turn)).toContain("finish_reason_not_final");
  });

  it("a wire key named __proto__ stays plain data in providerFields", () => {
    const entry = JSON.parse('{"index":0,"id":"a","function":{"name":"f","arguments":"{}"},"__proto__":{"polluted":true}}') as Record<string, unknown>;
    const { turn } = decode(chatStream([c.tools(entry)]));
    const fields = turn.toolCalls[0]?.providerFields as Record<string, unknown>;
    expect(Object.getOwnPropertyNames(fields)).toContain("__proto__");
    expect(({} as { polluted?: boolean }).polluted).toBeUndefined();
    expect(Object.getPrototypeOf(fields)).toBe(Object.prototype);
  });

  it("a finish_reason without [DONE] closes the turn (recorded chunk files drop [DONE])", () => {
    const { turn } = decode([c.role(), ...chatCall(0, "a", "f", ['{"a":1}']), c.finish("tool_calls"), c.usage()]);
    expect(turn).toMatchObject({ status: "complete", finishReason: "tool_calls" });
    expect(turn.toolCalls[0]).toMatchObject({ complete: true, arguments: { a: 1 } });
  });

  it("[DONE] without any finish_reason is complete, with the finish reason inferred and reported", () => {
    const { turn } = decode([c.role(), ...chatCall(0, "a", "f", ['{"a":1}']), c.usage(), c.done()]);
    expect(turn).toMatchObject({ status: "complete", finishReason: "tool_calls", rawFinishReason: null });
    expect(codes(turn)).toContain("finish_reason_missing");
  });

  it("no finish_reason and no [DONE] is an incomplete stream; an unclosed call is truncated, a closed object is kept (issue 17)", () => {
    const { turn } = decode([c.role(), ...chatCall(0, "a", "f", ['{"a":1'])]);
    expect(turn).toMatchObject({ status: "incomplete", finishReason: null });
    expect(turn.toolCalls[0]).toMatchObject({ complete: false, arguments: null, error: { code: "truncated", cause: "stream_ended" } });
    expect(codes(turn)).toContain("stream_ended_without_done");
    const closed = decode([c.role(), ...chatCall(0, "a", "f", ['{"a":1}'])]).turn;
    expect(closed).toMatchObject({ status: "incomplete", finishReason: null });
    expect(closed.toolCalls[0]).toMatchObject({ complete: true, arguments: { a: 1 }, error: null });
    expect(codes(closed)).toContain("call_closed_at_stream_end");
  });

  it("activity after the last finish_reason, then no [DONE], is incomplete", () => {
    const { turn } = decode([c.role(), c.open(0, "a", "f"), c.finish("tool_calls"), c.args(0, '{"a":')]);
    expect(turn.status).toBe("incomplete");
    expect(turn.toolCalls[0]?.complete).toBe(false);
  });

  it("usage at the top level, inside choices[0] (Moonshot) or in x_groq", () => {
    expect(decode(chatStream([c.text("x")], "stop")).turn.usage).toMatchObject({ inputTokens: 10, outputTokens: 5 });
    const inChoice = decode([c.role(), c.chunk({ delta: {}, finish_reason: "stop", usage: { prompt_tokens: 7, completion_tokens: 3, total_tokens: 10, cached_tokens: 2 } }), c.done()]);
    expect(inChoice.turn.usage).toMatchObject({ inputTokens: 7, outputTokens: 3, totalTokens: 10, cacheReadInputTokens: 2 });
    const groq = decode([c.role(), c.finish("stop", { x_groq: { id: "req", usage: { prompt_tokens: 4, completion_tokens: 1, total_tokens: 5 } } }), c.done()]);
    expect(groq.turn.usage).toMatchObject({ inputTokens: 4, outputTokens: 1 });
  });
});

describe("openai-chat decoder: errors, keep-alives and other content", () => {
  it("an error payload mid-stream ends the turn with status error and keeps what arrived", () => {
    const { turn } = decode([
      c.role(),
      c.text("Searching."),
      ...chatCall(0, "a", "search", ['{"q": "x']),
      { data: { error: { message: "The server had an error", type: "server_error", param: null, code: null } } },
      c.args(0, '"}'),
    ]);
    expect(turn).toMatchObject({ status: "error", finishReason: "error", text: "Searching.", error: { type: "server_error", message: "The server had an error" } });
    expect(turn.toolCalls[0]).toMatchObject({ complete: false, error: { code: "truncated", cause: "stream_error" } });
    expect(codes(turn)).toEqual(expect.arrayContaining(["stream_error", "event_after_error"]));
  });

  it("an SSE `event: error` (Groq) is an error too", () => {
    const { turn } = decode([c.role(), c.reasoning("thinking", "reasoning"), { event: "error", data: { error: { message: "Tool call validation failed", type: "invalid_request_error", code: "tool_use_failed", failed_generation: "{}" } } }]);
    expect(turn).toMatchObject({ status: "error", reasoning: "thinking", error: { type: "invalid_request_error" } });
  });

  it("keep-alives and non-JSON data are diagnostics, not crashes", () => {
    const { turn } = decode([c.role(), { data: "" }, { data: "ping" }, { data: [1, 2] }, { data: '{"cut": ' }, ...chatCall(0, "a", "f", ["{}"]), c.finish("tool_calls"), c.done(), c.text("late"), c.text("later"), ...chatCall(1, "b", "g", ["{}"])]);
    expect(turn.toolCalls).toHaveLength(1);
    expect(turn.toolCalls[0]).toMatchObject({ arguments: {}, complete: true });
    expect(codes(turn)).toEqual(["empty_data", "non_json_data", "non_json_data", "non_json_data", "event_after_done"]);
    // Every chunk after [DONE] is counted in the one diagnostic.
    expect(turn.diagnostics.at(-1)?.data).toEqual({ count: 2 + chatCall(1, "b", "g", ["{}"]).length, firstType: "chat.completion.chunk" });
  });

  it("reasoning_content and reasoning are kept apart from text; OpenRouter signatures are kept opaque", () => {
    const { turn } = decode(
      chatStream(
        [
          c.reasoning("Think", "reasoning_content"),
          c.reasoning("ing.", "reasoning"),
          c.chunk({ delta: { reasoning_details: [{ type: "reasoning.text", text: "", signature: "sig-1", index: 0 }] } }),
          c.text("Answer."),
        ],
        "stop",
      ),
    );
    expect(turn).toMatchObject({ reasoning: "Thinking.", text: "Answer." });
    expect(turn.blocks.map((b) => b.type)).toEqual(["reasoning", "opaque", "text"]);
    expect(turn.blocks[1]).toMatchObject({ blockType: "reasoning_details", value: [{ signature: "sig-1" }] });
  });

  it("content parts (Mistral) and refusals", () => {
    const { turn } = decode(
      chatStream(
        [
          c.chunk({ delta: { content: [{ type: "thinking", thinking: [{ type: "text", text: "hmm" }] }, { type: "text", text: "Hi" }] } }),
          c.chunk({ delta: { refusal: "I can't" } }),
          c.chunk({ delta: { refusal: " help." } }),
        ],
        "stop",
      ),
    );
    expect(turn).toMatchObject({ reasoning: "hmm", text: "Hi", finishReason: "stop" });
    expect(turn.blocks.find((b) => b.type === "opaque")).toMatchObject({ blockType: "refusal", value: "I can't help." });
    expect(codes(turn)).toContain("refusal");
  });

  it("a large single delta is handled at once (vLLM Kimi-K3 sends ~17.5 K characters)", () => {
    const content = "x".repeat(2_000_000);
    const started = performance.now();
    const { turn } = decode(chatStream([c.open(0, "big", "write_file", JSON.stringify({ content }))]), true);
    expect((turn.toolCalls[0]?.arguments as { content: string }).content.length).toBe(content.length);
    expect(performance.now() - started).toBeLessThan(5_000);
  });
});

/** What each hand-written quirk stream must show beyond its expected.json (diagnostics, provider fields). */
const QUIRKS: Record<string, (turn: DecodedTurn) => void> = {
  "ollama-parallel-calls-index-zero": (turn) => {
    expect(turn.toolCalls.map((call) => call.id)).toEqual(["call_k2m1x8a1", "call_p9q4z7b2"]);
    expect(codes(turn)).toContain("parallel_calls_share_index");
  },
  "gemini-openai-compat-missing-index": (turn) => {
    expect(turn.toolCalls.map((call) => call.providerFields?.thoughtSignature)).toEqual(["CiQBjz1rX7sig1", "CiQBjz1rX7sig2"]);
    expect(turn.rawFinishReason).toBe("stop");
    expect(codes(turn)).toEqual(expect.arrayContaining(["tool_call_index_missing", "finish_reason_stop_with_tool_calls"]));
  },
  "gemini-openai-compat-signature-only-delta": (turn) => {
    expect(turn.toolCalls).toHaveLength(1);
    expect(turn.toolCalls[0]?.providerFields?.thoughtSignature).toBe("CiQBjz1rX7sigOnly");
  },
  "gemini-openai-compat-whole-object-per-chunk": (turn) => expect(turn.toolCalls[0]?.rawArguments).toBe('{}{"stock":"MSFT"}'),
  "new-api-gemini-parallel-calls-index-zero": (turn) => expect(turn.toolCalls.map((call) => call.arguments)).toEqual([{ city: "Paris" }, { city: "Rome" }]),
  "litellm-bedrock-index-starts-at-1": (turn) => {
    expect(turn.toolCalls[0]?.providerIndex).toBe(1);
    expect(turn.text).toBe("Let me check the worklog.");
  },
  "llamacpp-name-repeated-every-chunk": (turn) => expect(turn.toolCalls[0]?.name).toBe("add_two_numbers"),
  "llamacpp-no-arguments-key": (turn) => expect(turn.toolCalls[0]).toMatchObject({ arguments: {}, source: "empty", rawArguments: "" }),
  "qwen-dashscope-empty-id-continuation": (turn) => expect(turn.diagnostics).toEqual([]),
  "lmstudio-empty-id": (turn) => {
    expect(turn.toolCalls[0]?.id).toMatch(/^call_tw_/);
    expect(codes(turn)).toEqual(["call_id_minted"]);
  },
  "siliconflow-deepseek-no-id": (turn) => {
    expect(turn.toolCalls[0]?.id).toMatch(/^call_tw_/);
    expect(codes(turn)).toEqual(["call_id_minted"]);
  },
  "litellm-ollama-chat-arguments-object": (turn) => {
    expect(turn.rawFinishReason).toBe("stop");
    expect(turn.messageId).toBe("chatcmpl-a1b2c3");
    expect(codes(turn)).toEqual(expect.arrayContaining(["response_id_changed", "arguments_object", "finish_reason_stop_with_tool_calls"]));
  },
  "vllm-hermes-arguments-null": (turn) => expect(codes(turn)).toEqual(["arguments_null"]),
  "vllm-xlam-final-flush-duplicate": (turn) => expect(codes(turn)).toEqual(["arguments_repeated"]),
  "vllm-xlam-final-flush-misaligned": (turn) => expect(codes(turn)).toEqual(["arguments_cumulative"]),
  "vllm-glm-final-flush-with-finish-reason": (turn) => expect(turn.toolCalls).toHaveLength(1),
  "vllm-named-tool-choice-missing-type": (turn) => expect(turn.toolCalls[0]?.name).toBe("extract_contact"),
  "sglang-parallel-calls-index-zero": (turn) => expect(turn.toolCalls.map((call) => call.id)).toEqual(["0", "1"]),
  "groq-several-calls-one-delta": (turn) => expect(turn.usage).toMatchObject({ inputTokens: 310, outputTokens: 44 }),
  "nebius-deepseek-no-finish-reason": (turn) => expect(codes(turn)).toEqual(["finish_reason_missing"]),
  "nebius-deepseek-connection-dropped": (turn) => expect(turn.toolCalls[0]?.rawArguments).toBe('{"name": "main"}'),
  "openrouter-deepseek-empty-first-arguments": (turn) => expect(turn.toolCalls[0]?.arguments).toEqual({ pattern: "TODO", path: "src" }),
  "openwebui-finish-reason-after-every-chunk": (turn) => expect(turn.diagnostics).toEqual([]),
  "opencodex-proxy-duplicated-argument-chunks": (turn) => expect(codes(turn)).toEqual(["arguments_repeated", "arguments_repeated"]),
  "venice-mistral-string-and-object-arguments": (turn) => expect(turn.toolCalls[1]?.rawArguments).toBe('{"city":"Nice","days":3}'),
  "moonshot-usage-in-choice": (turn) => expect(turn.usage).toMatchObject({ inputTokens: 88, outputTokens: 19, totalTokens: 107 }),
  "vllm-kimi-k3-single-large-delta": (turn) => expect(turn.toolCalls[0]?.rawArguments.length).toBeGreaterThan(17_000),
  "openai-length-mid-call": (turn) => expect(codes(turn)).toContain("call_closed_by_successor"),
  "openai-midstream-error": (turn) => expect(turn).toMatchObject({ text: "Searching now.", error: { type: "server_error" } }),
  "openrouter-keepalive-as-data": (turn) => expect(codes(turn)).toEqual(["non_json_data", "empty_data", "non_json_data", "non_json_data"]),
  "vllm-reasoning-field": (turn) => expect(turn).toMatchObject({ reasoning: "The user wants the time in Tokyo; call get_time.", text: "Checking." }),
  "qianfan-cumulative-arguments": (turn) => expect(turn.toolCalls[0]?.rawArguments).toBe('{"city": "Shenzhen", "days": 3}'),
  "gpt-add-and-multiply": (turn) => expect(turn.toolCalls.map((call) => [call.name, call.arguments, call.source])).toEqual([["add", { a: 2, b: 3 }, "delta"], ["multiply", { a: 2, b: 3 }, "delta"]]),
  "invalid-arguments-beside-valid": (turn) => {
    expect(turn.toolCalls[0]).toMatchObject({ name: "search_code", arguments: null, complete: true, error: { code: "invalid_json" } });
    expect(turn.toolCalls[1]).toMatchObject({ name: "read_file", arguments: { path: "README.md" }, error: null });
  },
  "numbers-beyond-a-double": (turn) => {
    expect(turn.toolCalls.map((call) => [call.arguments, call.error?.code ?? null])).toEqual([
      [null, "number_out_of_range"],
      [{ post_id: 42 }, null],
    ]);
    expect(turn.toolCalls[0]?.error?.message).toContain("1858000000000000001 at $.post_id");
  },
};

describe("openai-chat decoder: the hand-written quirk streams (testdata/openai-chat/handwritten__*)", () => {
  const dir = join(REPO_ROOT, "testdata", "openai-chat");
  it("every hand-written file is checked here", () => {
    const files = readdirSync(dir).filter((file) => file.startsWith("handwritten__") && file.endsWith(".ndjson"));
    expect(files.map((file) => file.slice("handwritten__".length, -".ndjson".length)).sort()).toEqual(Object.keys(QUIRKS).sort());
  });
  for (const [name, check] of Object.entries(QUIRKS)) {
    it(name, () => {
      const text = readFileSync(join(dir, `handwritten__${name}.ndjson`), "utf8");
      expect(text.startsWith("# hand-written")).toBe(true);
      const [stream] = parseRecords(text);
      const { turn } = decode(stream?.events ?? []);
      check(turn);
    });
  }
});

import { describe, expect, it } from "vitest";
import { createDecoder } from "../../src/providers/registry.js";
import type { CodecEvent, DecodedTurn, ProviderEvent, ProviderName } from "../../src/types.js";
import { a } from "../helpers/anthropic-events.js";
import { b } from "../helpers/bedrock-events.js";
import { g } from "../helpers/gemini-events.js";
import { c, chatStream, r } from "../helpers/openai-events.js";

/**
 * Issue 17: truncation is named by the stop, not by the block end. A call whose arguments do not
 * parse, in a turn that stopped at the output limit, is truncated (cause max_tokens) in every
 * provider, with a message that tells the model to send less per call. The tool_call_end of a
 * call that closed unparseable waits for the stop reason; a call that parses is ended at once.
 */

function decode(provider: ProviderName, events: ProviderEvent[]): { turn: DecodedTurn; events: CodecEvent[] } {
  const decoder = createDecoder(provider);
  const out: CodecEvent[] = [];
  for (const event of events) out.push(...decoder.push(event));
  out.push(...decoder.end());
  return { turn: decoder.finish(), events: out };
}

const cut = '{"path":"big.txt","content":"line 1\\nline 2';
const ollamaLine = (message: Record<string, unknown>, extra: Record<string, unknown> = {}): ProviderEvent => ({
  data: { model: "m", created_at: "2025-01-01T00:00:00Z", message: { role: "assistant", content: "", ...message }, done: false, ...extra },
});

const lengthStops: Array<[ProviderName, string, ProviderEvent[]]> = [
  ["anthropic", "max_tokens after content_block_stop", [a.messageStart(), a.toolStart(0, "toolu_1", "write"), a.json(0, cut), a.stop(0), a.messageDelta("max_tokens"), a.messageStop()]],
  ["bedrock", "max_tokens after contentBlockStop", [b.messageStart(), b.toolStart(0, "t1", "write"), b.input(0, cut), b.stop(0), b.messageStop("max_tokens")]],
  ["openai-chat", "finish_reason length", chatStream([c.open(0, "call_1", "write"), c.args(0, cut)], "length")],
  ["openai-responses", "incomplete max_output_tokens after arguments.done", [r.created(), r.callAdded(0, "fc_1", "call_1", "write"), r.argsDelta(0, "fc_1", cut), r.argsDone(0, "fc_1", cut), r.incomplete("max_output_tokens")]],
  ["gemini", "MAX_TOKENS while a streamed call is open", [g.chunk([g.open("write"), g.leaf("$.path", { stringValue: "big.txt" })]), g.chunk([g.leaf("$.content", { stringValue: "line 1" })], { finishReason: "MAX_TOKENS" })]],
  ["ollama", "done_reason length with an unparseable argument string", [ollamaLine({ tool_calls: [{ id: "c1", function: { name: "write", arguments: cut } }] }), ollamaLine({}, { done: true, done_reason: "length" })]],
];

describe("a call that does not parse in a turn stopped for length is truncated, cause max_tokens", () => {
  it.each(lengthStops)("%s (%s)", (provider, _how, events) => {
    const { turn, events: out } = decode(provider, events);
    expect(turn.finishReason).toBe("length");
    const call = turn.toolCalls[0];
    expect(call).toMatchObject({ name: "write", arguments: null, complete: false, error: { code: "truncated", cause: "max_tokens" } });
    expect(call?.error?.message).toContain("split the content over several smaller calls");
    expect(call?.error?.message).toContain("raise the output token limit");
    expect(call?.error?.message).not.toContain("complete JSON");
    // One tool_call_end per call, and it says what the turn says.
    const ends = out.filter((e): e is Extract<CodecEvent, { type: "tool_call_end" }> => e.type === "tool_call_end");
    expect(ends.map((e) => e.call)).toEqual(turn.toolCalls);
  });

  it("anthropic: the end of an unparseable call waits for the stop; a call that parses ends at its block stop", () => {
    const events = [a.messageStart(), a.toolStart(0, "toolu_1", "ok"), a.json(0, '{"a":1}'), a.stop(0), a.toolStart(1, "toolu_2", "write"), a.json(1, cut), a.stop(1), a.messageDelta("max_tokens"), a.messageStop()];
    const decoder = createDecoder("anthropic");
    const endsAfter: Array<[number, string]> = [];
    events.forEach((event, i) => {
      for (const e of decoder.push(event)) if (e.type === "tool_call_end") endsAfter.push([i, e.call.id]);
    });
    for (const e of decoder.end()) if (e.type === "tool_call_end") endsAfter.push([events.length, e.call.id]);
    expect(endsAfter).toEqual([
      [3, "toolu_1"],
      [events.length, "toolu_2"],
    ]);
    const turn = decoder.finish();
    expect(turn.toolCalls.map((call) => [call.complete, call.error?.code ?? null])).toEqual([
      [true, null],
      [false, "truncated"],
    ]);
    expect(turn.diagnostics.map((d) => d.code)).toContain("call_truncated_by_stop");
  });

  it("a missing closing brace is not repaired when the turn stopped for length: the cut may have fallen between members", () => {
    const stopped = decode("anthropic", [a.messageStart(), a.toolStart(0, "toolu_1", "f"), a.json(0, '{"a":1'), a.stop(0), a.messageDelta("max_tokens"), a.messageStop()]).turn;
    expect(stopped.toolCalls[0]).toMatchObject({ complete: false, error: { code: "truncated", cause: "max_tokens" } });
    const normal = decode("anthropic", [a.messageStart(), a.toolStart(0, "toolu_1", "f"), a.json(0, '{"a":1'), a.stop(0), a.messageDelta("tool_use"), a.messageStop()]).turn;
    expect(normal.toolCalls[0]).toMatchObject({ complete: true, arguments: { a: 1 }, repairs: ["missing_closing_brace"] });
  });

  it("without a length stop an unparseable call stays invalid_json (its end still comes, at the finish)", () => {
    const { turn, events } = decode("anthropic", [a.messageStart(), a.toolStart(0, "toolu_1", "f"), a.json(0, '{"a" 1}'), a.stop(0), a.messageDelta("tool_use"), a.messageStop()]);
    expect(turn.toolCalls[0]).toMatchObject({ complete: true, arguments: null, error: { code: "invalid_json" } });
    expect(events.filter((e) => e.type === "tool_call_end")).toHaveLength(1);
  });

  it("any length stop names the cause max_tokens, whatever the provider's word for it", () => {
    const { turn } = decode("anthropic", [a.messageStart(), a.toolStart(0, "toolu_1", "f"), a.json(0, '{"a":'), a.messageDelta("model_context_window_exceeded"), a.messageStop()]);
    expect(turn.finishReason).toBe("length");
    expect(turn.toolCalls[0]).toMatchObject({ complete: false, error: { code: "truncated", cause: "max_tokens" } });
  });

  it("a call that parses strictly stays complete in a length-stopped turn", () => {
    const { turn } = decode("anthropic", [a.messageStart(), a.toolStart(0, "toolu_1", "f"), a.json(0, '{"a":1}'), a.stop(0), a.messageDelta("max_tokens"), a.messageStop()]);
    expect(turn.toolCalls[0]).toMatchObject({ complete: true, arguments: { a: 1 }, error: null });
  });
});

describe("a clean end without a finish signal keeps a call whose arguments form one closed object", () => {
  const cases: Array<[ProviderName, (args: string) => ProviderEvent[]]> = [
    ["anthropic", (args) => [a.messageStart(), a.toolStart(0, "toolu_1", "f"), a.json(0, args)]],
    ["bedrock", (args) => [b.messageStart(), b.toolStart(0, "t1", "f"), b.input(0, args)]],
    ["openai-chat", (args) => [c.role(), c.open(0, "call_1", "f"), c.args(0, args)]],
    ["openai-responses", (args) => [r.created(), r.callAdded(0, "fc_1", "call_1", "f"), r.argsDelta(0, "fc_1", args)]],
  ];

  it.each(cases)("%s: closed object → complete with a diagnostic, turn incomplete; unclosed → truncated", (provider, stream) => {
    const closed = decode(provider, stream('{"a":{"b":[1,2]}}')).turn;
    expect(closed.status).toBe("incomplete");
    expect(closed.toolCalls[0]).toMatchObject({ complete: true, arguments: { a: { b: [1, 2] } }, error: null });
    expect(closed.diagnostics.map((d) => d.code)).toContain("call_closed_at_stream_end");
    const open = decode(provider, stream('{"a":{"b":[1,2]}')).turn;
    expect(open.status).toBe("incomplete");
    expect(open.toolCalls[0]).toMatchObject({ complete: false, arguments: null, error: { code: "truncated", cause: "stream_ended" } });
  });

  it("a transport error or an abort still truncates a closed object", () => {
    const decoder = createDecoder("anthropic");
    for (const event of [a.messageStart(), a.toolStart(0, "toolu_1", "f"), a.json(0, '{"a":1}')]) decoder.push(event);
    const events = decoder.abort({ code: "source_error", message: "socket closed" }, "stream_error");
    const end = events.find((e): e is Extract<CodecEvent, { type: "tool_call_end" }> => e.type === "tool_call_end");
    expect(end?.call).toMatchObject({ complete: false, error: { code: "truncated", cause: "stream_error" } });
  });
});

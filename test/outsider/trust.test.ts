/**
 * Cases written from outside the decoders, in the words of issue 17, without looking at how the
 * code handles them: each is what an agent author would try first to see whether toolwire's
 * "non-null arguments are what the model sent" promise holds.
 */
import { describe, expect, it } from "vitest";
import { createDecoder, type ProviderEvent } from "../../src/index.js";
import { validateArguments } from "../../src/schema/index.js";

const chunk = (toolCalls: unknown[], finishReason: string | null = null): ProviderEvent => ({
  data: { choices: [{ index: 0, delta: { tool_calls: toolCalls }, finish_reason: finishReason }] },
});
const anthropic = (event: string, data: Record<string, unknown>): ProviderEvent => ({ event, data: { type: event, ...data } });

function chat(events: ProviderEvent[]) {
  const decoder = createDecoder("openai-chat");
  for (const event of events) decoder.push(event);
  return decoder.finish();
}

describe("from outside: calls an agent may run are the calls the model sent", () => {
  it("one id at two indexes with two names: two runnable calls, the second with a minted id", () => {
    const turn = chat([
      chunk([{ index: 0, id: "call_x", function: { name: "a", arguments: '{"n":1}' } }]),
      chunk([{ index: 1, id: "call_x", function: { name: "b", arguments: '{"n":2}' } }]),
      chunk([], "tool_calls"),
    ]);
    expect(turn.toolCalls.map((call) => [call.name, call.arguments])).toEqual([["a", { n: 1 }], ["b", { n: 2 }]]);
    const [first, second] = turn.toolCalls;
    expect(first?.id).toBe("call_x");
    expect(second?.id).not.toBe("call_x");
    expect(second?.providerId).toBe("call_x");
    expect(second?.repairs).toContain("minted_id");
  });

  for (const placeholder of ["null", "None", "undefined", ""]) {
    it(`a continuation chunk with id ${JSON.stringify(placeholder)} continues the call`, () => {
      const turn = chat([
        chunk([{ index: 0, id: "call_1", function: { name: "a", arguments: '{"n":' } }]),
        chunk([{ index: 0, id: placeholder, function: { arguments: "1}" } }]),
        chunk([], "tool_calls"),
      ]);
      expect(turn.toolCalls.map((call) => [call.id, call.arguments])).toEqual([["call_1", { n: 1 }]]);
    });
  }

  it("a key and value the model never wrote are never runnable; the candidate is only a suggestion", () => {
    const turn = chat([chunk([{ index: 0, id: "call_1", function: { name: "sh", arguments: '{"cmd":"ls" "x" :: }}}' } }]), chunk([], "tool_calls")]);
    const call = turn.toolCalls[0];
    expect(call?.arguments).toBeNull();
    expect(call?.error?.code).toBe("invalid_json");
    expect(call?.error?.suggestion).toBeDefined();
  });

  it("Anthropic: a block closed before stop_reason max_tokens is truncated by the stop, with advice to send less", () => {
    const decoder = createDecoder("anthropic");
    for (const event of [
      anthropic("message_start", { message: { id: "m", model: "x", content: [], usage: {} } }),
      anthropic("content_block_start", { index: 0, content_block: { type: "tool_use", id: "toolu_1", name: "write", input: {} } }),
      anthropic("content_block_delta", { index: 0, delta: { type: "input_json_delta", partial_json: '{"path":"a","text":"abc' } }),
      anthropic("content_block_stop", { index: 0 }),
      anthropic("message_delta", { delta: { stop_reason: "max_tokens" }, usage: { output_tokens: 5 } }),
      anthropic("message_stop", {}),
    ]) decoder.push(event);
    const call = decoder.finish().toolCalls[0];
    expect(call?.complete).toBe(false);
    expect(call?.arguments).toBeNull();
    expect(call?.error).toMatchObject({ code: "truncated", cause: "max_tokens" });
    expect(call?.error?.message).toMatch(/split/);
  });

  it("a clean end without a finish signal keeps a call whose object is closed, and says so", () => {
    const turn = chat([chunk([{ index: 0, id: "call_1", function: { name: "a", arguments: '{"n":1}' } }])]);
    expect(turn.status).toBe("incomplete");
    expect(turn.toolCalls[0]).toMatchObject({ complete: true, arguments: { n: 1 } });
    expect(turn.diagnostics.length).toBeGreaterThan(0);
  });

  it("schema patterns from an MCP server cannot stall validation (results, not timing)", () => {
    const nested = { type: "object", properties: { s: { type: "string", pattern: "(a+)+$" } } };
    expect(validateArguments(nested, { s: `${"a".repeat(10_000)}!` }).valid).toBe(false);
    const words = { type: "object", properties: { s: { type: "string", pattern: "^(\\w+\\s?)*$" } } };
    expect(validateArguments(words, { s: `${"word ".repeat(2_000)}!` }).valid).toBe(false);
    expect(validateArguments(words, { s: "two words" }).valid).toBe(true);
  });
});

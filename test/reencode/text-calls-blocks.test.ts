import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { createReencoder, repairWholeResponse } from "../../src/reencode/index.js";
import type { TextCallSetting } from "../../src/text-calls/options.js";
import { anthropicTextBody, decodeBytes, reencodeWith, responsesTextBody, TEXT_CALL_TOOLS as TOOLS } from "./support.js";

/**
 * Text calls re-encoded for the block-structured protocols (Anthropic Messages, OpenAI Responses),
 * and whole Ollama bodies: a server without a tool parser leaves the model's calls in its text.
 */

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const HERMES = ["Let me check. <to", 'ol_call>\n{"name": "get_weather", ', '"arguments": {"city": "Paris"}}\n</tool', "_call> Done."];
const CALL = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>';

/** The model texts the chunking properties use: calls, reasoning, malformed markup, plain text. */
const TEXTS = fc.constantFrom(["Checking. ", CALL, " done"], ["<think>hm</think>", CALL], ["a < b, [1] ", '<tool_call>{"name": "x", "arguments": {"a": 1}', " oops"], [CALL, CALL], ["plain text only"]);

/**
 * The property that any chunking of the body, and any cut of the model text into deltas, gives the
 * same result: `check` gets the pieces as written, the text cut every `split` characters, and the
 * body's byte sizes.
 */
function forAnyChunking(check: (pieces: readonly string[], resplit: readonly string[], sizes: readonly number[]) => void): void {
  fc.assert(
    fc.property(TEXTS, fc.array(fc.integer({ min: 1, max: 40 }), { minLength: 1, maxLength: 6 }), fc.integer({ min: 1, max: 12 }), (pieces, sizes, split) => {
      const whole = pieces.join("");
      const resplit: string[] = [];
      for (let i = 0; i < whole.length; i += split) resplit.push(whole.slice(i, i + split));
      check(pieces, resplit, sizes);
    }),
    { numRuns: 60 },
  );
}

/** Bad arguments in a closed Hermes call, cut at any bytes: never a runnable call (`check` gets the body's output). */
function forAnyBadArguments(body: (text: string) => string, check: (body: string, sizes: readonly number[]) => void): void {
  const bad = fc.constantFrom('{"city" "a"}', '{"city": }', "[1, 2]", '"Paris"', "{'city': 'a'");
  fc.assert(
    fc.property(bad, fc.array(fc.integer({ min: 1, max: 30 }), { minLength: 1, maxLength: 4 }), (args, sizes) => check(body(`See <tool_call>{"name": "get_weather", "arguments": ${args}}</tool_call> ok`), sizes)),
    { numRuns: 40 },
  );
}

function runAnthropic(body: string, textCalls: TextCallSetting | undefined, sizes?: readonly number[]) {
  const { output, reencoder } = reencodeWith(createReencoder("anthropic", textCalls === undefined ? {} : { textCalls }), encoder.encode(body), sizes);
  return { text: decoder.decode(output), turn: decodeBytes("anthropic", output), reencoder };
}

/** The blocks a client builds from the stream, in order, without the decoder's bookkeeping. */
function blocksOf(turn: ReturnType<typeof decodeBytes>): unknown[] {
  return turn.blocks.map((block) => {
    if (block.type === "tool_call") {
      const call = turn.toolCalls.find((c) => c.index === block.callIndex);
      return { type: "tool_use", name: call?.name, input: call?.arguments, index: block.providerIndex };
    }
    return { ...block };
  });
}

describe("Anthropic Messages streams with textCalls", () => {
  it("splits a text block at a call: text, tool_use, text; stop_reason tool_use", () => {
    const { text, turn, reencoder } = runAnthropic(anthropicTextBody(HERMES), "auto", [9]);
    expect(blocksOf(turn)).toEqual([
      { type: "text", text: "Let me check. ", providerIndex: 0 },
      { type: "tool_use", name: "get_weather", input: { city: "Paris" }, index: 1 },
      { type: "text", text: " Done.", providerIndex: 2 },
    ]);
    expect(turn.toolCalls[0]).toMatchObject({ id: "tw_text_0", complete: true, error: null });
    expect(turn.finishReason).toBe("tool_calls");
    expect(turn.rawFinishReason).toBe("tool_use");
    expect(text).not.toContain("tool_call>");
    expect(reencoder.repairs.map((r) => `${r.action}:${r.code}`)).toEqual(["rewritten:text_call_extracted", "normalized:finish_reason_text_calls"]);
    expect(reencoder.turn?.toolCalls.map((call) => call.id)).toEqual(["tw_text_0"]);
  });

  it("types XML parameters by the tools", () => {
    const xml = ["<tool_call>\n<function=get_weather>\n<parameter=days>\n3\n</para", "meter>\n</function>\n</tool_call>"];
    expect(runAnthropic(anthropicTextBody(xml), { syntaxes: "auto", tools: TOOLS }).turn.toolCalls[0]?.arguments).toEqual({ days: 3 });
  });

  it("moves <think> reasoning to a thinking block (unsigned) before the text", () => {
    const { turn, text, reencoder } = runAnthropic(anthropicTextBody(["<think>I should", " look</think>It is sunny."]), "auto");
    expect(blocksOf(turn)).toEqual([
      { type: "thinking", thinking: "I should look", signature: null, providerIndex: 0 },
      { type: "text", text: "It is sunny.", providerIndex: 1 },
    ]);
    expect(text).toContain('"content_block":{"type":"thinking","thinking":"","signature":""}');
    expect(turn.finishReason).toBe("stop");
    expect(reencoder.repairs.map((r) => r.code)).toEqual(["text_reasoning_extracted"]);
  });

  it("withholds a closed call with bad arguments: reported invalid_json, the text kept, stop_reason unchanged", () => {
    const { turn, text, reencoder } = runAnthropic(anthropicTextBody(["Try: ", '<tool_call>\n{"name": "get_weather", "arguments": {"city" "a"}}\n</tool_call>', " end"]), "auto");
    expect(turn.toolCalls).toEqual([]);
    expect(turn.text).toBe("Try:  end");
    expect(turn.finishReason).toBe("stop");
    expect(text).toContain('"stop_reason":"end_turn"');
    expect(text).not.toContain('"tool_use"');
    expect(reencoder.repairs.map((r) => `${r.action}:${r.code}`)).toEqual(["withheld:invalid_json"]);
  });

  it("withholds a call cut by max_tokens; releases markup that never forms a call as text", () => {
    const cut = runAnthropic(anthropicTextBody(['<tool_call>\n{"name": "get_weather", "arguments": {"city": "Pa'], "max_tokens"), "auto");
    expect(cut.turn.toolCalls).toEqual([]);
    expect(cut.turn.finishReason).toBe("length");
    expect(cut.reencoder.repairs.map((r) => `${r.action}:${r.code}`)).toEqual(["withheld:truncated"]);
    const broken = ['Here: <tool_call>\n{"name": "get_weather", "arguments": {"city": ', '"Paris"}\n', "and that is all."];
    const malformed = runAnthropic(anthropicTextBody(broken), "auto", [5]);
    expect(malformed.turn.text).toBe(broken.join(""));
    expect(malformed.turn.toolCalls).toEqual([]);
    expect(malformed.turn.finishReason).toBe("stop");
    expect(malformed.reencoder.repairs).toEqual([]);
  });

  it("moves the blocks after an inserted one up: a server thinking block before, a wire tool_use after", () => {
    const base = anthropicTextBody(["Checking. ", CALL], "tool_use", ["hm"]);
    const wire = [
      `event: content_block_start\ndata: ${JSON.stringify({ type: "content_block_start", index: 2, content_block: { type: "tool_use", id: "toolu_w", name: "search", input: {} } })}\n\n`,
      `event: content_block_delta\ndata: ${JSON.stringify({ type: "content_block_delta", index: 2, delta: { type: "input_json_delta", partial_json: '{"q":"x"}' } })}\n\n`,
      `event: content_block_stop\ndata: ${JSON.stringify({ type: "content_block_stop", index: 2 })}\n\n`,
    ].join("");
    const at = base.indexOf("event: message_delta");
    const { turn, text } = runAnthropic(base.slice(0, at) + wire + base.slice(at), "auto", [11]);
    expect(blocksOf(turn)).toEqual([
      { type: "thinking", thinking: "hm", signature: null, providerIndex: 0 },
      { type: "text", text: "Checking. ", providerIndex: 1 },
      { type: "tool_use", name: "get_weather", input: { city: "Paris" }, index: 2 },
      { type: "tool_use", name: "search", input: { q: "x" }, index: 3 },
    ]);
    // The text call is decided at the end of the text (thinking "auto" holds it until then), after the wire call opened.
    expect(turn.toolCalls.map((call) => call.id)).toEqual([expect.stringMatching(/^tw_text_\d$/), "toolu_w"]);
    expect(text).toContain('"stop_reason":"tool_use"');
  });

  it("passes a stream whose text holds no marker start byte for byte, as without textCalls", () => {
    fc.assert(
      fc.property(fc.array(fc.stringMatching(/^[a-zA-Z0-9 .,!?\n'"éß]{0,12}$/), { maxLength: 6 }), fc.array(fc.integer({ min: 1, max: 40 }), { minLength: 1, maxLength: 4 }), (pieces, sizes) => {
        const body = anthropicTextBody(pieces, "end_turn", pieces.length > 2 ? ["th"] : []);
        const plain = runAnthropic(body, undefined, sizes).text;
        const withCalls = runAnthropic(body, "auto", sizes);
        expect(withCalls.text).toBe(plain);
        expect(withCalls.text).toBe(body);
        expect(withCalls.reencoder.repairs).toEqual([]);
      }),
      { numRuns: 60 },
    );
  });

  it("for any chunking of the body and of the text, the client reads the same blocks", () => {
    forAnyChunking((pieces, resplit, sizes) => {
      const expected = runAnthropic(anthropicTextBody(pieces), "auto").turn;
      const actual = runAnthropic(anthropicTextBody(resplit), "auto", sizes).turn;
      expect(blocksOf(actual)).toEqual(blocksOf(expected));
      expect(actual.finishReason).toBe(expected.finishReason);
      expect(actual.toolCalls.map((c) => c.id)).toEqual(expected.toolCalls.map((c) => c.id));
    });
  });

  it("a call with bad arguments is never a runnable tool_use, whatever the chunking", () => {
    forAnyBadArguments(
      (text) => anthropicTextBody([text]),
      (body, sizes) => {
        const { turn } = runAnthropic(body, "auto", sizes);
        expect(turn.toolCalls.filter((call) => call.arguments !== null)).toEqual([]);
        expect(turn.finishReason).toBe("stop");
      },
    );
  });
});

describe("Ollama /api/chat streams with textCalls", () => {
  it("reports a closed call with bad arguments as withheld (invalid_json), the text around it kept", () => {
    const line = (content: string, done = false) => `${JSON.stringify({ model: "qwen3", message: { role: "assistant", content }, done })}\n`;
    const body = line("ok ") + line('<tool_call>{"name": "get_weather", "arguments": {"city" "a"}}</tool_call>') + line(" end") + line("", true);
    const { output, reencoder } = reencodeWith(createReencoder("ollama", { textCalls: "auto" }), encoder.encode(body), [11]);
    const turn = decodeBytes("ollama", output);
    expect(turn.toolCalls).toEqual([]);
    expect(turn.text).toBe("ok  end");
    expect(reencoder.repairs.map((r) => `${r.action}:${r.code}`)).toEqual(["withheld:invalid_json"]);
  });
});

describe("non-streamed bodies with textCalls", () => {
  const message = (content: unknown[], stop = "end_turn") => ({ id: "msg_1", type: "message", role: "assistant", model: "qwen", content, stop_reason: stop, stop_sequence: null, usage: { input_tokens: 1, output_tokens: 2 } });

  it("Anthropic: a text block with a call becomes text, tool_use, text; stop_reason tool_use", () => {
    const repaired = repairWholeResponse("anthropic", message([{ type: "text", text: `<think>hm</think>Checking. ${CALL} Done.` }]), { textCalls: "auto" });
    expect(repaired.changed).toBe(true);
    expect(repaired.body).toMatchObject({
      content: [
        { type: "thinking", thinking: "hm", signature: "" },
        { type: "text", text: "Checking. " },
        { type: "tool_use", id: "tw_text_0", name: "get_weather", input: { city: "Paris" } },
        { type: "text", text: " Done." },
      ],
      stop_reason: "tool_use",
    });
    expect(repaired.repairs.map((r) => `${r.action}:${r.code}`)).toEqual(["rewritten:text_call_extracted", "normalized:text_reasoning_extracted", "normalized:finish_reason_text_calls"]);
    expect(repaired.turn?.toolCalls.map((call) => call.arguments)).toEqual([{ city: "Paris" }]);
  });

  it("Anthropic: a body without markup is the same object; an invalid call is withheld, the stop reason kept", () => {
    const plain = message([{ type: "text", text: "Hello, a < b." }]);
    expect(repairWholeResponse("anthropic", plain, { textCalls: "auto" }).body).toBe(plain);
    const invalid = repairWholeResponse("anthropic", message([{ type: "text", text: 'ok<tool_call>{"name": "get_weather", "arguments": {"city" "a"}}</tool_call>' }]), { textCalls: "auto" });
    expect(invalid.body).toMatchObject({ content: [{ type: "text", text: "ok" }], stop_reason: "end_turn" });
    expect(invalid.repairs.map((r) => `${r.action}:${r.code}`)).toEqual(["withheld:invalid_json"]);
  });

  it("Anthropic: the whole body gives the blocks the stream gives", () => {
    for (const pieces of [["Checking. ", CALL, " done"], ["<think>hm</think>", CALL], [CALL, "\n", CALL], ["a < b"]]) {
      const streamed = blocksOf(runAnthropic(anthropicTextBody(pieces), "auto").turn).map((block) => {
        const { providerIndex: _p, index: _i, signature: _s, ...rest } = block as Record<string, unknown>;
        return rest;
      });
      const whole = (repairWholeResponse("anthropic", message([{ type: "text", text: pieces.join("") }]), { textCalls: "auto" }).body as { content: Array<Record<string, unknown>> }).content.map((block) => {
        const { id: _id, signature: _s, ...rest } = block;
        return rest;
      });
      expect(whole).toEqual(streamed);
    }
  });

  it("Ollama stream: false: message.content's call becomes message.tool_calls; a plain body is the same object", () => {
    const line = (content: string) => ({ model: "qwen3", created_at: "2026-01-01T00:00:00Z", message: { role: "assistant", content }, done: true, done_reason: "stop", eval_count: 3 });
    const repaired = repairWholeResponse("ollama", line(`<think>hm</think>Checking. ${CALL}`), { textCalls: { syntaxes: "auto", tools: TOOLS } });
    expect(repaired.body).toEqual({ ...line("Checking. "), message: { role: "assistant", content: "Checking. ", thinking: "hm", tool_calls: [{ id: "tw_text_0", function: { index: 0, name: "get_weather", arguments: { city: "Paris" } } }] } });
    expect(repaired.repairs.map((r) => `${r.action}:${r.code}`)).toEqual(["rewritten:text_call_extracted", "normalized:text_reasoning_extracted"]);
    const plain = line("Hello, a < b.");
    expect(repairWholeResponse("ollama", plain, { textCalls: "auto" }).body).toBe(plain);
    const invalid = repairWholeResponse("ollama", line('<tool_call>{"name": "get_weather", "arguments": {"city" "a"}}</tool_call>'), { textCalls: "auto" });
    expect((invalid.body as { message: Record<string, unknown> }).message).toEqual({ role: "assistant", content: "" });
    expect(invalid.repairs.map((r) => `${r.action}:${r.code}`)).toEqual(["withheld:invalid_json"]);
  });
});

function runResponses(body: string, textCalls: TextCallSetting | undefined, sizes?: readonly number[]) {
  const { output, reencoder } = reencodeWith(createReencoder("openai-responses", textCalls === undefined ? {} : { textCalls }), encoder.encode(body), sizes);
  const text = decoder.decode(output);
  const events = text
    .split("\n\n")
    .filter((block) => block.includes("data: "))
    .map((block) => JSON.parse(block.slice(block.indexOf("data: ") + 6)) as Record<string, unknown>);
  return { text, events, turn: decodeBytes("openai-responses", output), reencoder };
}

/** The items a client reads: from the stream's output_item.done events, and from the terminal response's output. */
function itemsOf(events: ReadonlyArray<Record<string, unknown>>): { streamed: unknown[]; final: unknown[] } {
  const streamed: unknown[] = [];
  for (const event of events) if (event.type === "response.output_item.done") streamed[event.output_index as number] = event.item;
  const terminal = events.find((event) => event.type === "response.completed" || event.type === "response.incomplete");
  return { streamed, final: (terminal?.response as { output: unknown[] }).output };
}

describe("OpenAI Responses streams with textCalls", () => {
  it("splits a message item at a call: message, function_call, message; output_index, sequence_number and the final output agree", () => {
    const { events, turn, reencoder } = runResponses(responsesTextBody(HERMES), "auto", [9]);
    const { streamed, final } = itemsOf(events);
    expect(streamed).toEqual([
      { id: "msg_1", type: "message", status: "completed", role: "assistant", content: [{ type: "output_text", text: "Let me check. ", annotations: [] }] },
      { id: "fc_tw_text_0", type: "function_call", call_id: "tw_text_0", name: "get_weather", arguments: '{"city":"Paris"}', status: "completed" },
      { id: "msg_1_1", type: "message", status: "completed", role: "assistant", content: [{ type: "output_text", text: " Done.", annotations: [] }] },
    ]);
    expect(final).toEqual(streamed);
    expect(events.map((event) => event.sequence_number)).toEqual(events.map((_, n) => n));
    expect(turn.text).toBe("Let me check.  Done.");
    expect(turn.toolCalls.map((call) => [call.id, call.name, call.arguments])).toEqual([["tw_text_0", "get_weather", { city: "Paris" }]]);
    expect(turn.finishReason).toBe("tool_calls");
    expect(reencoder.repairs.map((r) => `${r.action}:${r.code}`)).toEqual(["rewritten:text_call_extracted"]);
  });

  it("moves <think> reasoning to a reasoning item before the message", () => {
    const { events, turn, reencoder } = runResponses(responsesTextBody(["<think>I should", " look</think>It is sunny."]), "auto");
    const { streamed, final } = itemsOf(events);
    expect(streamed.map((item) => (item as { type: string }).type)).toEqual(["reasoning", "message"]);
    expect(final).toEqual(streamed);
    expect(turn.reasoning).toBe("I should look");
    expect(turn.text).toBe("It is sunny.");
    expect(reencoder.repairs.map((r) => r.code)).toEqual(["text_reasoning_extracted"]);
  });

  it("withholds a closed call with bad arguments; releases malformed markup as text; a cut call is truncated", () => {
    const invalid = runResponses(responsesTextBody(["Try: ", '<tool_call>\n{"name": "get_weather", "arguments": {"city" "a"}}\n</tool_call>', " end"]), "auto");
    expect(invalid.turn.toolCalls).toEqual([]);
    expect(invalid.turn.text).toBe("Try:  end");
    expect(invalid.turn.finishReason).toBe("stop");
    expect(invalid.reencoder.repairs.map((r) => `${r.action}:${r.code}`)).toEqual(["withheld:invalid_json"]);
    const broken = ['Here: <tool_call>\n{"name": "get_weather", "arguments": {"city": ', '"Paris"}\n', "and that is all."];
    const malformed = runResponses(responsesTextBody(broken), "auto", [5]);
    expect(malformed.turn.text).toBe(broken.join(""));
    expect(malformed.turn.toolCalls).toEqual([]);
    expect(malformed.reencoder.repairs).toEqual([]);
    const cut = runResponses(responsesTextBody(['<tool_call>\n{"name": "get_weather", "arguments": {"city": "Pa'], "incomplete"), "auto");
    expect(cut.turn.toolCalls).toEqual([]);
    expect(cut.turn.finishReason).toBe("length");
    expect(cut.reencoder.repairs.map((r) => `${r.action}:${r.code}`)).toEqual(["withheld:truncated"]);
  });

  it("passes a stream whose text holds no marker start byte for byte, as without textCalls", () => {
    fc.assert(
      fc.property(fc.array(fc.stringMatching(/^[a-zA-Z0-9 .,!?\n'"éß]{1,12}$/), { maxLength: 6 }), fc.array(fc.integer({ min: 1, max: 40 }), { minLength: 1, maxLength: 4 }), (pieces, sizes) => {
        const body = responsesTextBody(pieces);
        const withCalls = runResponses(body, "auto", sizes);
        expect(withCalls.text).toBe(runResponses(body, undefined, sizes).text);
        expect(withCalls.text).toBe(body);
        expect(withCalls.reencoder.repairs).toEqual([]);
      }),
      { numRuns: 60 },
    );
  });

  it("for any chunking of the body and of the text, the client reads the same items", () => {
    forAnyChunking((pieces, resplit, sizes) => {
      const expected = runResponses(responsesTextBody(pieces), "auto");
      const actual = runResponses(responsesTextBody(resplit), "auto", sizes);
      expect(itemsOf(actual.events)).toEqual(itemsOf(expected.events));
      expect(itemsOf(actual.events).final).toEqual(itemsOf(actual.events).streamed);
      expect(actual.events.map((event) => event.sequence_number)).toEqual(actual.events.map((_, n) => n));
      expect(actual.turn.finishReason).toBe(expected.turn.finishReason);
    });
  });

  it("a call with bad arguments is never a runnable function_call, whatever the chunking", () => {
    forAnyBadArguments(
      (text) => responsesTextBody([text]),
      (body, sizes) => {
        const { turn, text } = runResponses(body, "auto", sizes);
        expect(turn.toolCalls).toEqual([]);
        expect(text).not.toContain('"function_call"');
      },
    );
  });

  it("whole bodies: the items the stream gives; a body without markup is the same object", () => {
    const responseOf = (text: string) => ({ id: "resp_1", object: "response", created_at: 1, model: "qwen", status: "completed", output: [{ id: "msg_1", type: "message", status: "completed", role: "assistant", content: [{ type: "output_text", text, annotations: [] }] }] });
    for (const pieces of [["Checking. ", CALL, " done"], ["<think>hm</think>", CALL], [CALL, "\n", CALL]]) {
      const streamed = itemsOf(runResponses(responsesTextBody(pieces), "auto").events).final;
      const repaired = repairWholeResponse("openai-responses", responseOf(pieces.join("")), { textCalls: "auto" });
      expect(repaired.changed).toBe(true);
      expect((repaired.body as { output: unknown[] }).output).toEqual(streamed);
      expect(repaired.turn?.toolCalls.length).toBeGreaterThan(0);
    }
    const plain = responseOf("Hello, a < b.");
    expect(repairWholeResponse("openai-responses", plain, { textCalls: "auto" }).body).toBe(plain);
    const invalid = repairWholeResponse("openai-responses", responseOf('ok<tool_call>{"name": "get_weather", "arguments": {"city" "a"}}</tool_call>'), { textCalls: "auto" });
    expect((invalid.body as { output: Array<{ type: string }> }).output.map((item) => item.type)).toEqual(["message"]);
    expect(invalid.repairs.map((r) => `${r.action}:${r.code}`)).toEqual(["withheld:invalid_json"]);
  });
});

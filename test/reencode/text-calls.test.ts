import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { createReencoder, repairWholeResponse } from "../../src/reencode/index.js";
import type { TextCallSetting } from "../../src/text-calls/options.js";
import { chatTextBody, decodeBytes, reencodeWith, TEXT_CALL_TOOLS as TOOLS } from "./support.js";

const encoder = new TextEncoder();
const decoder = new TextDecoder();


function run(body: string, textCalls: TextCallSetting, sizes?: readonly number[]) {
  const { output, reencoder } = reencodeWith(createReencoder("openai-chat", { textCalls }), encoder.encode(body), sizes);
  return { text: decoder.decode(output), turn: decodeBytes("openai-chat", output), reencoder };
}

describe("Chat re-encoding with textCalls", () => {
  it("sends a Hermes call split across its marker as one tool_calls entry, finish tool_calls", () => {
    const body = chatTextBody(["Let me check. <to", "ol_call>\n{\"name\": \"get_weather\", ", "\"arguments\": {\"city\": \"Paris\"}}\n</tool", "_call>"]);
    const { text, turn, reencoder } = run(body, "auto");
    expect(turn.text).toBe("Let me check. ");
    expect(turn.toolCalls).toHaveLength(1);
    expect(turn.toolCalls[0]).toMatchObject({ index: 0, name: "get_weather", arguments: { city: "Paris" }, source: "delta", complete: true, error: null });
    expect(turn.finishReason).toBe("tool_calls");
    expect(text).not.toContain("tool_call>");
    expect(text).toContain('"finish_reason":"tool_calls"');
    expect(reencoder.repairs.map((r) => `${r.action}:${r.code}`)).toEqual(["rewritten:text_call_extracted", "normalized:finish_reason_text_calls"]);
    // The usage chunk and [DONE] still come last, in order.
    expect(text.indexOf('"usage"')).toBeGreaterThan(text.indexOf('"tool_calls"'));
    expect(text.endsWith("data: [DONE]\n\n")).toBe(true);
  });

  it("types Qwen3-Coder XML parameters by the tools, strings without them", () => {
    const xml = ["<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n<parameter=days>\n3\n</para", "meter>\n<parameter=metric>\ntrue\n</parameter>\n</function>\n</tool_call>"];
    const typed = run(chatTextBody(xml), { syntaxes: "auto", tools: TOOLS });
    expect(typed.turn.toolCalls[0]?.arguments).toEqual({ city: "Paris", days: 3, metric: true });
    const untyped = run(chatTextBody(xml), "auto");
    expect(untyped.turn.toolCalls[0]?.arguments).toEqual({ city: "Paris", days: "3", metric: "true" });
  });

  it("releases markup that never forms a call as text, byte for byte, with no call and the finish unchanged", () => {
    const pieces = ["Here: <tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": ", "\"Paris\"}\n", "and that is all."];
    const { text, turn, reencoder } = run(chatTextBody(pieces), "auto");
    expect(turn.text).toBe(pieces.join(""));
    expect(turn.toolCalls).toEqual([]);
    expect(turn.finishReason).toBe("stop");
    expect(text).toContain('"finish_reason":"stop"');
    expect(reencoder.repairs).toEqual([]);
  });

  it("withholds a closed call with bad arguments (invalid_json), reported, finish unchanged", () => {
    const { turn, reencoder } = run(chatTextBody(["<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\" \"a\" \"b\"}}\n</tool_call>"]), "auto");
    expect(turn.toolCalls).toEqual([]);
    expect(turn.finishReason).toBe("stop");
    expect(reencoder.repairs.map((r) => `${r.action}:${r.code}`)).toEqual(["withheld:invalid_json"]);
  });

  it("withholds a call cut by the output limit (truncated), finish length", () => {
    const { turn, reencoder } = run(chatTextBody(["<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Pa"], "length"), "auto");
    expect(turn.toolCalls).toEqual([]);
    expect(turn.finishReason).toBe("length");
    expect(reencoder.repairs.map((r) => `${r.action}:${r.code}`)).toEqual(["withheld:truncated"]);
  });

  it("passes plain text byte for byte", () => {
    const body = chatTextBody(["Hello", ", a < b and [1] are ", "plain."]);
    expect(run(body, "auto").text).toBe(body);
  });

  it("changes only how text is chunked when a possible marker start is held", () => {
    const body = chatTextBody(["Hello <", "b>world</b>"]);
    const { text, turn } = run(body, "auto");
    expect(turn.text).toBe("Hello <b>world</b>");
    expect(text).not.toBe(body);
    expect(text).toContain('"content":"Hello "');
    expect(text).toContain('"content":"<b>world</b>"');
  });

  it("sends <think> reasoning written into the text as reasoning_content", () => {
    const { turn, reencoder } = run(chatTextBody(["<think>I should", " look it up</think>It is sunny."]), "auto");
    expect(turn.reasoning).toBe("I should look it up");
    expect(turn.text).toBe("It is sunny.");
    expect(reencoder.repairs.map((r) => r.code)).toEqual(["text_reasoning_extracted"]);
  });

  it("numbers several text calls 0, 1, … and keeps each call's text", () => {
    const call = (city: string) => `<tool_call>\n{"name": "get_weather", "arguments": {"city": "${city}"}}\n</tool_call>`;
    const { turn } = run(chatTextBody(["First ", call("Paris"), "\n", call("Rome")]), "auto");
    expect(turn.toolCalls.map((c) => [c.index, c.arguments])).toEqual([
      [0, { city: "Paris" }],
      [1, { city: "Rome" }],
    ]);
  });

  it("numbers wire calls after the text calls sent before them, and re-sends them whole", () => {
    const wire = (entry: Record<string, unknown>) => `data: ${JSON.stringify({ id: "c", choices: [{ index: 0, delta: { tool_calls: [entry] }, finish_reason: null }] })}\n\n`;
    const text = chatTextBody(['<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>']);
    const [head, tail] = [text.slice(0, text.indexOf('data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"qwen","choices":[{"index":0,"delta":{},"finish_reason":"stop"}')), text.slice(text.indexOf('data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"qwen","choices":[{"index":0,"delta":{},"finish_reason":"stop"}'))];
    const body = head + wire({ index: 0, id: "call_w", type: "function", function: { name: "search", arguments: '{"q":' } }) + wire({ index: 0, function: { arguments: '"x"}' } }) + tail;
    const { text: out, turn } = run(body, "auto");
    expect(turn.toolCalls.map((call) => [call.index, call.id, call.name, call.arguments])).toEqual([
      [0, "tw_text_0", "get_weather", { city: "Paris" }],
      [1, "call_w", "search", { q: "x" }],
    ]);
    expect(turn.finishReason).toBe("tool_calls");
    expect(out).toContain('"finish_reason":"tool_calls"');
  });

  it("an error event after a text call: the call sent stays sent, nothing is reported withheld twice", () => {
    const body = chatTextBody(['<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>']).split("data: [DONE]")[0] as string;
    const cut = body.slice(0, body.indexOf('data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"qwen","choices":[{"index":0,"delta":{},"finish_reason"'));
    const { reencoder } = run(`${cut}data: {"error":{"message":"overloaded"}}\n\n`, "auto");
    expect(reencoder.repairs.map((r) => `${r.action}:${r.code}`)).toEqual(["rewritten:text_call_extracted"]);
  });

  it("for any chunking of the body, the client decodes the same calls and text", () => {
    const call = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>';
    const texts = fc.constantFrom(
      ["Checking. ", call],
      ["<think>hm</think>", call, " done"],
      ["a < b, [1] ", "<tool_call>{\"name\": \"x\", \"arguments\": {\"a\": 1}", " oops"],
      ["<tool_call>\n<function=get_weather>\n<parameter=days>\n2\n</parameter>\n</function>\n</tool_call>"],
      ["plain text only"],
    );
    fc.assert(
      fc.property(texts, fc.array(fc.integer({ min: 1, max: 40 }), { minLength: 1, maxLength: 6 }), fc.integer({ min: 1, max: 12 }), (pieces, sizes, split) => {
        // The same model text, cut into content deltas at another place, and the body into other pieces.
        const whole = pieces.join("");
        const resplit: string[] = [];
        for (let i = 0; i < whole.length; i += split) resplit.push(whole.slice(i, i + split));
        const setting: TextCallSetting = { syntaxes: "auto", tools: [...TOOLS, { type: "function", function: { name: "x", parameters: {} } }] };
        const expected = run(chatTextBody(pieces), setting).turn;
        const actual = run(chatTextBody(resplit), setting, sizes).turn;
        expect(actual.text).toBe(expected.text);
        expect(actual.reasoning).toBe(expected.reasoning);
        expect(actual.finishReason).toBe(expected.finishReason);
        expect(actual.toolCalls.map((c) => [c.name, c.arguments])).toEqual(expected.toolCalls.map((c) => [c.name, c.arguments]));
      }),
      { numRuns: 60 },
    );
  });

  describe("non-streamed bodies", () => {
    const whole = (content: string, finish = "stop", extra: Record<string, unknown> = {}) => ({
      id: "chatcmpl-1",
      object: "chat.completion",
      created: 1,
      model: "qwen",
      choices: [{ index: 0, message: { role: "assistant", content, ...extra }, finish_reason: finish }],
      usage: { prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 },
    });
    const choiceOf = (body: unknown) => (body as { choices: Array<{ message: Record<string, unknown>; finish_reason: string }> }).choices[0];

    it("reads a call out of the message text, typed by the tools, finish tool_calls", () => {
      const repaired = repairWholeResponse("openai-chat", whole("Sure.<tool_call>\n<function=get_weather>\n<parameter=days>\n3\n</parameter>\n</function>\n</tool_call>"), { textCalls: { syntaxes: "auto", tools: TOOLS } });
      expect(repaired.changed).toBe(true);
      const choice = choiceOf(repaired.body);
      expect(choice?.message.content).toBe("Sure.");
      expect(choice?.message.tool_calls).toEqual([{ id: "tw_text_0", type: "function", function: { name: "get_weather", arguments: '{"days":3}' } }]);
      expect(choice?.finish_reason).toBe("tool_calls");
      expect(repaired.repairs.map((r) => `${r.action}:${r.code}`)).toEqual(["rewritten:text_call_extracted", "normalized:finish_reason_text_calls"]);
      expect(repaired.turn?.toolCalls.map((call) => call.arguments)).toEqual([{ days: 3 }]);
    });

    it("leaves a body without markup as the same object, and malformed markup as text", () => {
      const plain = whole("Hello, a < b.");
      expect(repairWholeResponse("openai-chat", plain, { textCalls: "auto" }).body).toBe(plain);
      const broken = whole('Here: <tool_call>{"name": "get_weather", "arguments": {');
      const repaired = repairWholeResponse("openai-chat", broken, { textCalls: "auto" });
      expect(repaired.body).toBe(broken);
      expect(repaired.repairs).toEqual([]);
    });

    it("withholds an invalid call and moves <think> reasoning to reasoning_content", () => {
      const repaired = repairWholeResponse("openai-chat", whole('<think>hm</think>ok<tool_call>{"name": "get_weather", "arguments": {"city" "a"}}</tool_call>'), { textCalls: "auto" });
      const choice = choiceOf(repaired.body);
      expect(choice?.message).toEqual({ role: "assistant", content: "ok", reasoning_content: "hm" });
      expect(choice?.finish_reason).toBe("stop");
      expect(repaired.repairs.map((r) => `${r.action}:${r.code}`)).toEqual(["withheld:invalid_json", "normalized:text_reasoning_extracted"]);
    });
  });

  describe("Ollama /api/chat", () => {
    const line = (message: Record<string, unknown>, done = false, extra: Record<string, unknown> = {}) => `${JSON.stringify({ model: "qwen3", created_at: "2026-01-01T00:00:00Z", message: { role: "assistant", ...message }, done, ...extra })}\n`;
    const ollamaBody = (pieces: readonly string[]) => pieces.map((content) => line({ content })).join("") + line({ content: "" }, true, { done_reason: "stop", eval_count: 9 });
    const runOllama = (body: string, textCalls: TextCallSetting, sizes?: readonly number[]) => {
      const { output, reencoder } = reencodeWith(createReencoder("ollama", { textCalls }), encoder.encode(body), sizes);
      return { text: decoder.decode(output), turn: decodeBytes("ollama", output), reencoder };
    };

    it("sends a call split across its marker as message.tool_calls, the done line last", () => {
      const { text, turn, reencoder } = runOllama(ollamaBody(["Checking. <tool", '_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>']), "auto", [5, 9]);
      expect(turn.text).toBe("Checking. ");
      expect(turn.toolCalls.map((call) => [call.id, call.name, call.arguments])).toEqual([["tw_text_0", "get_weather", { city: "Paris" }]]);
      expect(turn.status).toBe("complete");
      expect(text.trimEnd().split("\n").at(-1)).toContain('"done":true');
      expect(reencoder.repairs.map((r) => `${r.action}:${r.code}`)).toEqual(["rewritten:text_call_extracted"]);
    });

    it("types XML parameters by the tools; passes plain text byte for byte; releases malformed markup as text", () => {
      const xml = ["<tool_call>\n<function=get_weather>\n<parameter=days>\n3\n</para", "meter>\n</function>\n</tool_call>"];
      expect(runOllama(ollamaBody(xml), { syntaxes: "auto", tools: TOOLS }).turn.toolCalls[0]?.arguments).toEqual({ days: 3 });
      const plain = ollamaBody(["Hello, a < b", " and [1]."]);
      expect(runOllama(plain, "auto").text).toBe(plain);
      const broken = ['See <tool_call>{"name": "get_weather", ', '"arguments": {"city": "Paris"}', " and more"];
      const { turn, reencoder } = runOllama(ollamaBody(broken), "auto", [7]);
      expect(turn.text).toBe(broken.join(""));
      expect(turn.toolCalls).toEqual([]);
      expect(reencoder.repairs).toEqual([]);
    });

    it("for any chunking of the body, the client decodes the same calls and text", () => {
      const call = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>';
      fc.assert(
        fc.property(fc.constantFrom(["Checking. ", call], ["<think>hm</think>", call], ["a < b ", "<tool_call>{ oops"]), fc.array(fc.integer({ min: 1, max: 30 }), { minLength: 1, maxLength: 5 }), fc.integer({ min: 1, max: 9 }), (pieces, sizes, split) => {
          const whole = pieces.join("");
          const resplit: string[] = [];
          for (let i = 0; i < whole.length; i += split) resplit.push(whole.slice(i, i + split));
          const expected = runOllama(ollamaBody(pieces), "auto").turn;
          const actual = runOllama(ollamaBody(resplit), "auto", sizes).turn;
          expect(actual.text).toBe(expected.text);
          expect(actual.reasoning).toBe(expected.reasoning);
          expect(actual.toolCalls.map((c) => [c.name, c.arguments])).toEqual(expected.toolCalls.map((c) => [c.name, c.arguments]));
        }),
        { numRuns: 40 },
      );
    });
  });
});

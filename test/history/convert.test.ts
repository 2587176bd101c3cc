import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { checkHistory, convertHistory, fromNeutral, HISTORY_FORMATS, type RepairPolicy } from "../../src/history/index.js";
import { arbFaults, arbPlan, build, inject } from "./arbitraries.js";

/** Runs per format pair; `HISTORY_RUNS=2000 npx vitest run test/history` for a deep run. */
const RUNS = Math.ceil(Number(process.env.HISTORY_RUNS ?? 60) / 3);

const arbPolicy: fc.Arbitrary<RepairPolicy> = fc.record({
  danglingCalls: fc.constantFrom("insert_error_result" as const, "drop_call" as const),
  orphanResults: fc.constantFrom("to_text" as const, "drop" as const),
  invalidCalls: fc.constantFrom("placeholder" as const, "drop" as const),
  thinking: fc.constantFrom("auto" as const, "on" as const, "off" as const),
  ids: fc.constantFrom(undefined, "anthropic" as const, "openai" as const, "bedrock" as const, "kimi" as const, "mistral" as const, "none" as const),
});

describe("convertHistory", () => {
  const pairs = HISTORY_FORMATS.flatMap((from) => HISTORY_FORMATS.filter((to) => to !== from).map((to) => [from, to] as const));
  it.each(pairs)("%s → %s output passes the target's check, with or without faults", (from, to) => {
    fc.assert(
      fc.property(arbPlan, fc.array(arbFaults, { maxLength: 1 }), arbPolicy, (plan, faultSets, policy) => {
        let neutral = build(plan, from);
        for (const fault of faultSets.flat()) neutral = inject(neutral, fault);
        const converted = convertHistory(fromNeutral(neutral, from), from, to, policy);
        expect(checkHistory(converted.messages, to, policy)).toEqual([]);
        expect(converted.remaining).toEqual([]);
      }),
      { numRuns: RUNS },
    );
  });
});

describe("convertHistory examples", () => {
  const anthropicHistory = [
    { role: "user", content: "read a.txt" },
    {
      role: "assistant",
      content: [
        { type: "thinking", thinking: "Read it.", signature: "EqQB" },
        { type: "text", text: "Reading." },
        { type: "tool_use", id: "toolu_01A", name: "read_file", input: { path: "a.txt" } },
      ],
    },
    { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_01A", content: "no such file", is_error: true }] },
    { role: "assistant", content: "It does not exist." },
  ];

  it("Anthropic → OpenAI Chat: signed thinking left out, results as tool messages, the error said in text", () => {
    const converted = convertHistory(anthropicHistory, "anthropic", "openai-chat");
    expect(converted.messages).toEqual([
      { role: "user", content: "read a.txt" },
      { role: "assistant", content: "Reading.", tool_calls: [{ id: "toolu_01A", type: "function", function: { name: "read_file", arguments: '{"path":"a.txt"}' } }] },
      { role: "tool", tool_call_id: "toolu_01A", content: "Error: no such file" },
      { role: "assistant", content: "It does not exist." },
    ]);
    expect(converted.notes).toEqual(["reasoning that the target cannot verify was left out"]);
  });

  it("OpenAI Chat (Kimi ids, system prompt) → Anthropic: system lifted out, ids renamed with a map back", () => {
    const chat = [
      { role: "system", content: "Be terse." },
      { role: "user", content: "find it" },
      { role: "assistant", content: "", tool_calls: [{ id: "functions.glob:0", type: "function", function: { name: "glob", arguments: '{"p":"*.ts"}' } }] },
      { role: "tool", tool_call_id: "functions.glob:0", content: "a.ts" },
      { role: "user", content: "thanks" },
    ];
    const converted = convertHistory(chat, "openai-chat", "anthropic");
    expect(converted.system).toBe("Be terse.");
    expect(converted.messages).toEqual([
      { role: "user", content: "find it" },
      { role: "assistant", content: [{ type: "tool_use", id: "functions_glob_0", name: "glob", input: { p: "*.ts" } }] },
      {
        role: "user",
        content: [
          { type: "tool_result", tool_use_id: "functions_glob_0", content: "a.ts" },
          { type: "text", text: "thanks" },
        ],
      },
    ]);
    expect(converted.idMap.toOriginal).toEqual({ functions_glob_0: "functions.glob:0" });
  });

  it("Responses → Gemini: items regrouped into turns, response names filled from the calls", () => {
    const items = [
      { role: "user", content: "add" },
      { type: "reasoning", id: "rs_1", summary: [], encrypted_content: "gAAA" },
      { type: "function_call", id: "fc_1", call_id: "call_1", name: "add", arguments: '{"a":1}' },
      { type: "function_call_output", call_id: "call_1", output: "2" },
    ];
    const converted = convertHistory(items, "openai-responses", "gemini");
    expect(converted.messages).toEqual([
      { role: "user", parts: [{ text: "add" }] },
      { role: "model", parts: [{ functionCall: { name: "add", args: { a: 1 }, id: "call_1" } }] },
      { role: "user", parts: [{ functionResponse: { name: "add", response: { output: "2" }, id: "call_1" } }] },
    ]);
  });
});

describe("convertHistory: an integer a double cannot carry as written", () => {
  const messages = [
    { role: "user", content: "Open post 1858000000000000001." },
    { role: "assistant", content: null, tool_calls: [{ id: "call_1", type: "function", function: { name: "get_post", arguments: '{"post_id": 1858000000000000001}' } }] },
    { role: "tool", tool_call_id: "call_1", content: "not found" },
  ];

  it.each(["anthropic", "bedrock", "gemini"] as const)("to %s (arguments as objects): the change is in the notes", (to) => {
    const converted = convertHistory(messages, "openai-chat", to);
    expect(converted.notes).toEqual([
      "the arguments of a call (get_post) hold a number an object cannot carry as written: the integer 1858000000000000001 at $.post_id is beyond ±9007199254740991 (2^53 − 1) and would be read as 1858000000000000000",
    ]);
  });

  it("to openai-responses (arguments as text): the text goes over unchanged, no note", () => {
    const converted = convertHistory(messages, "openai-chat", "openai-responses");
    expect(converted.notes).toEqual([]);
    expect(JSON.stringify(converted.messages)).toContain('"arguments":"{\\"post_id\\": 1858000000000000001}"');
  });
});

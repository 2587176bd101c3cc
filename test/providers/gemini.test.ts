import { describe, expect, it } from "vitest";
import { createByteDecoder } from "../../src/adapters/bytes.js";
import { encodeJsonArray } from "../../src/framing/json-array.js";
import { encodeSse } from "../../src/framing/sse.js";
import { parseLeafPath, PartialArgsWriter } from "../../src/providers/gemini.js";
import { createDecoder } from "../../src/providers/registry.js";
import type { CodecEvent, DecodedTurn, ProviderEvent } from "../../src/types.js";
import { g, streamedCall } from "../helpers/gemini-events.js";

function decode(events: ProviderEvent[], previews = false): { turn: DecodedTurn; events: CodecEvent[] } {
  const decoder = createDecoder("gemini", { previews });
  const out: CodecEvent[] = [];
  for (const event of events) out.push(...decoder.push(event));
  out.push(...decoder.end());
  return { turn: decoder.finish(), events: out };
}

const codes = (turn: DecodedTurn) => turn.diagnostics.map((d) => d.code);

describe("gemini decoder: classic whole calls", () => {
  const events = [
    g.chunk([g.text("Let me compute")]),
    g.chunk([g.text(" both.")]),
    g.chunk(
      [g.call("add", { a: 2, b: 3 }, {}), g.call("add", { a: 4, b: 5 })].map((part, i) => (i === 0 ? { ...part, thoughtSignature: "SIG_A" } : part)),
      { finishReason: "STOP", usage: { promptTokenCount: 80, candidatesTokenCount: 24, totalTokenCount: 150, thoughtsTokenCount: 46, cachedContentTokenCount: 7 } },
    ),
  ];

  it("decodes text and parallel calls with the same name into distinct calls with minted ids", () => {
    const { turn } = decode(events);
    expect(turn).toMatchObject({ status: "complete", finishReason: "tool_calls", rawFinishReason: "STOP", text: "Let me compute both.", messageId: "resp_1", model: "gemini-test" });
    expect(turn.toolCalls).toHaveLength(2);
    const [first, second] = turn.toolCalls;
    expect(first).toMatchObject({ index: 0, name: "add", arguments: { a: 2, b: 3 }, source: "final", complete: true, repairs: [], error: null, providerFields: { thoughtSignature: "SIG_A" } });
    expect(second).toMatchObject({ index: 1, name: "add", arguments: { a: 4, b: 5 }, source: "final", complete: true });
    expect(second?.providerFields).toBeUndefined();
    expect(first?.id).toMatch(/^gemini_tw_[0-9a-z]{11}$/);
    expect(first?.id).not.toBe(second?.id);
    expect(codes(turn).filter((c) => c === "call_id_minted")).toHaveLength(2);
    expect(turn.usage).toMatchObject({ inputTokens: 80, outputTokens: 24, totalTokens: 150, reasoningTokens: 46, cacheReadInputTokens: 7 });
    expect(turn.blocks.map((b) => b.type)).toEqual(["text", "tool_call", "tool_call"]);
  });

  it("mints the same ids on every decode, and different ids for identical calls at different positions or in another response", () => {
    const again = decode(events).turn;
    expect(again.toolCalls.map((c) => c.id)).toEqual(decode(events).turn.toolCalls.map((c) => c.id));
    const same = decode([g.chunk([g.call("ping", {}), g.call("ping", {})], { finishReason: "STOP" })]).turn;
    expect(new Set(same.toolCalls.map((c) => c.id)).size).toBe(2);
    const otherResponse = { data: { ...(g.chunk([g.call("ping", {})], { finishReason: "STOP" }).data as object), responseId: "resp_2" } };
    expect(decode([otherResponse]).turn.toolCalls[0]?.id).not.toBe(same.toolCalls[0]?.id);
  });

  it("keeps provider ids (Gemini 3), one call per chunk, and the closing empty text chunk", () => {
    const { turn } = decode([
      g.chunk([{ ...g.call("add", { a: 2, b: 3 }, { id: "8hd01vsf" }), thoughtSignature: "SIG" }]),
      g.chunk([g.call("multiply", { b: 3, a: 2 }, { id: "k0srpqrc" })]),
      g.chunk([g.text("")], { finishReason: "STOP" }),
    ]);
    expect(turn.toolCalls.map((c) => [c.id, c.name, c.arguments])).toEqual([
      ["8hd01vsf", "add", { a: 2, b: 3 }],
      ["k0srpqrc", "multiply", { a: 2, b: 3 }],
    ]);
    expect(turn.finishReason).toBe("tool_calls");
    expect(codes(turn)).not.toContain("call_id_minted");
    expect(turn.blocks.map((b) => b.type)).toEqual(["tool_call", "tool_call"]);
  });

  it("args absent means no arguments (source empty); args {} is a final snapshot of none", () => {
    const { turn } = decode([g.chunk([g.call("read_theme"), g.call("get_country", {})], { finishReason: "STOP" })]);
    expect(turn.toolCalls[0]).toMatchObject({ arguments: {}, source: "empty", rawArguments: "", complete: true });
    expect(turn.toolCalls[1]).toMatchObject({ arguments: {}, source: "final", rawArguments: "{}", complete: true });
  });

  it("args that are not an object make that call invalid and leave its sibling alone", () => {
    const { turn } = decode([g.chunk([{ functionCall: { name: "bad", args: [1, 2] } }, g.call("good", { x: 1 })], { finishReason: "STOP" })]);
    expect(turn.toolCalls[0]).toMatchObject({ name: "bad", arguments: null, source: null, rawArguments: "[1,2]", error: { code: "not_object" } });
    expect(turn.toolCalls[1]).toMatchObject({ name: "good", arguments: { x: 1 }, error: null });
  });

  it("emits start and end for each whole call, with the final arguments on the end event", () => {
    const { events: out } = decode(events);
    expect(out.filter((e) => e.type === "tool_call_start")).toHaveLength(2);
    const ends = out.filter((e): e is Extract<CodecEvent, { type: "tool_call_end" }> => e.type === "tool_call_end");
    expect(ends.map((e) => e.call.arguments)).toEqual([{ a: 2, b: 3 }, { a: 4, b: 5 }]);
    expect(out.at(-1)?.type).toBe("finish");
  });
});

describe("gemini decoder: thinking, signatures and other parts", () => {
  it("thought parts are reasoning with their signature; a signature on a text part is kept in order", () => {
    const { turn } = decode([
      g.chunk([g.text("Thinking about it", { thought: true })]),
      g.chunk([g.text(" more.", { thought: true, thoughtSignature: "T_SIG" })]),
      g.chunk([g.text("The answer", { thoughtSignature: "X_SIG" })]),
      g.chunk([g.text(" is 5.")], { finishReason: "STOP" }),
    ]);
    expect(turn.reasoning).toBe("Thinking about it more.");
    expect(turn.text).toBe("The answer is 5.");
    expect(turn.finishReason).toBe("stop");
    expect(turn.blocks).toEqual([
      { type: "thinking", thinking: "Thinking about it more.", signature: "T_SIG" },
      { type: "text", text: "The answer" },
      { type: "opaque", blockType: "thought_signature", value: { thoughtSignature: "X_SIG", part: "text" } },
      { type: "text", text: " is 5." },
    ]);
  });

  it("keeps code execution parts verbatim and reports unknown part kinds", () => {
    const { turn } = decode([g.chunk([{ executableCode: { language: "PYTHON", code: "print(1)" } }, { futurePart: { x: 1 } }], { finishReason: "STOP" })]);
    expect(turn.blocks.map((b) => (b.type === "opaque" ? b.blockType : b.type))).toEqual(["executableCode", "futurePart"]);
    expect(codes(turn)).toEqual(["unknown_part_type"]);
  });
});

describe("gemini decoder: streamed function-call arguments (partialArgs)", () => {
  const nested = [
    ...streamedCall("cookRecipe", [
      ["$.recipe.ingredients[0].amount", { stringValue: "16 oz", willContinue: true }],
      ["$.recipe.ingredients[0].amount", { stringValue: "" }],
      ["$.recipe.ingredients[0].name", { stringValue: "Lasagna", willContinue: true }],
      ["$.recipe.ingredients[0].name", { stringValue: " noodles", willContinue: true }],
      ["$.recipe.ingredients[0].name", { stringValue: "" }],
      ["$.recipe.ingredients[1].amount", { stringValue: "1 lb" }],
      ["$.recipe.ingredients[1].fresh", { boolValue: true }],
      ["$.recipe.servings", { numberValue: 6 }],
      ["$.recipe.note", { nullValue: "NULL_VALUE" }],
      ["$.recipe.steps[0]", { stringValue: "Preheat to 375°F \"hot\"\n" }],
      ["$.recipe.steps[1]", { stringValue: "Bake." }],
      ["$['odd key'].x", { numberValue: -1.5 }],
    ]),
  ];
  const expected = {
    recipe: {
      ingredients: [
        { amount: "16 oz", name: "Lasagna noodles" },
        { amount: "1 lb", fresh: true },
      ],
      servings: 6,
      note: null,
      steps: ['Preheat to 375°F "hot"\n', "Bake."],
    },
    "odd key": { x: -1.5 },
  };

  it("builds the arguments object from JSON-path leaves, as a delta source", () => {
    const { turn } = decode([g.chunk(nested.slice(0, 1)), ...nested.slice(1).map((part) => g.chunk([part])), g.chunk([], { finishReason: "STOP" })]);
    expect(turn.toolCalls).toHaveLength(1);
    expect(turn.toolCalls[0]).toMatchObject({ name: "cookRecipe", arguments: expected, source: "delta", complete: true, repairs: [], error: null });
    expect(JSON.parse(turn.toolCalls[0]?.rawArguments ?? "")).toEqual(expected);
    expect(turn.finishReason).toBe("tool_calls");
    expect(turn.diagnostics.filter((d) => d.severity !== "info")).toEqual([]);
  });

  it("streams the leaves as deltas with a live preview that ends equal to the arguments", () => {
    const { turn, events: out } = decode(nested.map((part) => g.chunk([part])), true);
    const deltas = out.filter((e): e is Extract<CodecEvent, { type: "tool_call_delta" }> => e.type === "tool_call_delta");
    expect(deltas.length).toBeGreaterThan(8);
    expect(deltas.map((d) => d.delta).join("")).toBe(turn.toolCalls[0]?.rawArguments);
    expect(deltas.at(-1)?.preview).toEqual(expected);
    // Mid-stream the preview already holds the first ingredient.
    expect((deltas[3]?.preview as { recipe: { ingredients: unknown[] } }).recipe.ingredients[0]).toMatchObject({ amount: "16 oz" });
  });

  it("a part without willContinue ends the call even when no empty functionCall follows (missing terminal)", () => {
    const { turn } = decode([
      g.chunk([g.open("writeItems", { }), ]),
      g.chunk([g.leaf("$.operations[0].action", { stringValue: "add" })]),
      g.chunk([g.leaf("$.operations[0].price", { numberValue: 0.5 }, false)]),
      g.chunk([g.text("")], { finishReason: "STOP" }),
    ]);
    expect(turn.toolCalls[0]).toMatchObject({ arguments: { operations: [{ action: "add", price: 0.5 }] }, complete: true, source: "delta" });
    expect(turn.status).toBe("complete");
  });

  it("a call still expecting parts when the stream ends is truncated, never executable", () => {
    const { turn } = decode([g.chunk([g.open("getWeather")]), g.chunk([g.leaf("$.location", { stringValue: "Bos", willContinue: true })])]);
    expect(turn.status).toBe("incomplete");
    expect(turn.toolCalls[0]).toMatchObject({ complete: false, arguments: null, error: { code: "truncated", cause: "stream_ended" } });
    expect(turn.toolCalls[0]?.rawArguments).toBe('{"location":"Bos');
  });

  it("a call still expecting parts at finishReason STOP is truncated, with a diagnostic", () => {
    const { turn } = decode([g.chunk([g.open("getWeather"), g.leaf("$.location", { stringValue: "Boston" })], { finishReason: "STOP" })]);
    expect(turn.status).toBe("complete");
    expect(turn.toolCalls[0]).toMatchObject({ complete: false, error: { code: "truncated", cause: "stream_ended" } });
    expect(codes(turn)).toContain("call_open_at_finish");
  });

  it("MAX_TOKENS while a call is open truncates it with cause max_tokens", () => {
    const { turn } = decode([g.chunk([g.open("write"), g.leaf("$.text", { stringValue: "very long", willContinue: true })], { finishReason: "MAX_TOKENS" })]);
    expect(turn).toMatchObject({ status: "complete", finishReason: "length" });
    expect(turn.toolCalls[0]).toMatchObject({ complete: false, error: { code: "truncated", cause: "max_tokens" } });
  });

  it("a new call opening while one is open truncates the open one only", () => {
    const { turn } = decode([g.chunk([g.open("a"), g.leaf("$.x", { numberValue: 1 }), g.open("b"), g.leaf("$.y", { numberValue: 2 }), g.close()], { finishReason: "STOP" })]);
    expect(turn.toolCalls.map((c) => [c.name, c.complete, c.arguments])).toEqual([
      ["a", false, null],
      ["b", true, { y: 2 }],
    ]);
    expect(codes(turn)).toContain("call_superseded");
  });

  it("a call with no leaves at all is a no-argument call; bare willContinue parts are separators", () => {
    const { turn } = decode([g.chunk([g.open("noop"), { functionCall: { willContinue: true } }, g.close()], { finishReason: "STOP" })]);
    expect(turn.toolCalls[0]).toMatchObject({ arguments: {}, source: "empty", complete: true });
  });

  it("a leaf out of document order makes that call invalid with a diagnostic; its sibling is unaffected", () => {
    const { turn } = decode([
      g.chunk([
        ...streamedCall("bad", [
          ["$.a.x", { numberValue: 1 }],
          ["$.b", { numberValue: 2 }],
          ["$.a.y", { numberValue: 3 }],
        ]),
        ...streamedCall("good", [["$.k", { stringValue: "v" }]]),
      ], { finishReason: "STOP" }),
    ]);
    expect(turn.toolCalls[0]).toMatchObject({ name: "bad", arguments: null, complete: true, error: { code: "invalid_json" } });
    expect(turn.toolCalls[1]).toMatchObject({ name: "good", arguments: { k: "v" }, error: null });
    const problem = turn.diagnostics.find((d) => d.code === "partial_args_unusable");
    expect(problem).toMatchObject({ severity: "error", callIndex: 0 });
    expect(problem?.message).toContain("$.a.y");
  });

  it("partialArgs that is not an array makes the call invalid, reported even when the call is then cut", () => {
    const complete = decode([g.chunk([g.open("x"), { functionCall: { partialArgs: { jsonPath: "$.a" }, willContinue: true } }], { finishReason: "STOP" })]).turn;
    expect(complete.toolCalls[0]).toMatchObject({ arguments: null, complete: false });
    expect(complete.diagnostics.find((d) => d.code === "partial_args_unusable")).toMatchObject({ callIndex: 0, severity: "error" });
    const closed = decode([g.chunk([g.open("x"), { functionCall: { partialArgs: "nope" } }], { finishReason: "STOP" })]).turn;
    expect(closed.toolCalls[0]).toMatchObject({ arguments: null, complete: true, error: { code: "invalid_json" }, rawArguments: "{" });
  });

  it("keeps the thoughtSignature of the opening part on the streamed call", () => {
    const { turn } = decode([g.chunk([{ ...g.open("getWeather"), thoughtSignature: "SIG" }, g.leaf("$.location", { stringValue: "Boston" }), g.close()], { finishReason: "STOP" })]);
    expect(turn.toolCalls[0]?.providerFields).toEqual({ thoughtSignature: "SIG" });
  });
});

describe("gemini decoder: finish reasons, errors and usage", () => {
  it.each([
    ["STOP", "stop"],
    ["MAX_TOKENS", "length"],
    ["SAFETY", "content_filter"],
    ["RECITATION", "content_filter"],
    ["PROHIBITED_CONTENT", "content_filter"],
    ["MALFORMED_FUNCTION_CALL", "error"],
    ["UNEXPECTED_TOOL_CALL", "error"],
    ["OTHER", "other"],
    ["SOMETHING_NEW", "other"],
  ])("maps %s to %s", (raw, mapped) => {
    const { turn } = decode([g.chunk([g.text("x")], { finishReason: raw })]);
    expect(turn).toMatchObject({ status: "complete", finishReason: mapped, rawFinishReason: raw });
  });

  it("MALFORMED_FUNCTION_CALL is an error diagnostic that carries the finishMessage", () => {
    const { turn } = decode([g.chunk([], { finishReason: "MALFORMED_FUNCTION_CALL", finishMessage: "Malformed function call: print(x(" })]);
    expect(turn.toolCalls).toEqual([]);
    expect(turn.diagnostics.find((d) => d.code === "malformed_function_call")).toMatchObject({ severity: "error", data: { finishMessage: "Malformed function call: print(x(" } });
  });

  it("SAFETY reports the filter", () => {
    const { turn } = decode([g.chunk([g.text("partial")], { finishReason: "SAFETY" })]);
    expect(codes(turn)).toContain("content_filtered");
  });

  it("an error chunk mid-stream ends the turn with status error and keeps what arrived", () => {
    const { turn } = decode([
      g.chunk([g.text("Hello")]),
      g.chunk([g.call("add", { a: 1 }), g.open("write"), g.leaf("$.t", { stringValue: "par", willContinue: true })]),
      { data: { error: { code: 503, message: "The model is overloaded.", status: "UNAVAILABLE" } } },
    ]);
    expect(turn).toMatchObject({ status: "error", finishReason: "error", text: "Hello", error: { type: "UNAVAILABLE", message: "The model is overloaded." } });
    expect(turn.toolCalls[0]).toMatchObject({ name: "add", complete: true, arguments: { a: 1 } });
    expect(turn.toolCalls[1]).toMatchObject({ name: "write", complete: false, error: { code: "truncated", cause: "stream_error" } });
  });

  it("a blocked prompt is a content_filter finish with no candidates", () => {
    const { turn } = decode([{ data: { promptFeedback: { blockReason: "SAFETY" }, usageMetadata: { promptTokenCount: 5, totalTokenCount: 5 } } }]);
    expect(turn).toMatchObject({ status: "complete", finishReason: "content_filter", rawFinishReason: "SAFETY" });
    expect(codes(turn)).toContain("prompt_blocked");
  });

  it("a stream without finishReason is incomplete", () => {
    const { turn } = decode([g.chunk([g.text("Hel")])]);
    expect(turn.status).toBe("incomplete");
    expect(codes(turn)).toContain("stream_ended_without_finish_reason");
  });

  it("usage is cumulative: later fields overwrite, absent fields are kept", () => {
    const { turn } = decode([
      { data: { candidates: [{ content: { parts: [g.text("a")] } }], usageMetadata: { trafficType: "ON_DEMAND" } } },
      g.chunk([g.text("b")], { finishReason: "STOP", usage: { promptTokenCount: 73, candidatesTokenCount: 25, totalTokenCount: 181, thoughtsTokenCount: 83 } }),
    ]);
    expect(turn.usage).toMatchObject({ inputTokens: 73, outputTokens: 25, totalTokens: 181, reasoningTokens: 83, raw: { trafficType: "ON_DEMAND", promptTokenCount: 73 } });
  });

  it("only candidate 0 is decoded", () => {
    const { turn } = decode([{ data: { candidates: [{ index: 0, content: { parts: [g.text("one")] }, finishReason: "STOP" }, { index: 1, content: { parts: [g.text("two")] }, finishReason: "STOP" }] } }]);
    expect(turn.text).toBe("one");
    expect(codes(turn)).toContain("extra_candidates_ignored");
  });
});

describe("gemini framing: SSE and the JSON-array form give the same turn", () => {
  const events = [g.chunk([g.text("Hi ✓")]), g.chunk([g.call("add", { a: 2, b: 3 }), g.call("add", { a: 1, b: 1 })], { finishReason: "STOP" })];
  const payloads = events.map((e) => e.data);

  it("decodes both bodies identically, split into single bytes", () => {
    const bytes = (text: string) => new TextEncoder().encode(text);
    const viaSse = createByteDecoder("gemini");
    for (const byte of bytes(encodeSse(events).replace(/\n/g, "\r\n"))) viaSse.push(new Uint8Array([byte]));
    const viaArray = createByteDecoder("gemini", { framing: "json-array" });
    for (const byte of bytes(encodeJsonArray(payloads))) viaArray.push(new Uint8Array([byte]));
    const a = viaSse.finish();
    const b = viaArray.finish();
    expect(b.toolCalls).toEqual(a.toolCalls);
    expect(b.text).toBe("Hi ✓");
    expect(b.diagnostics).toEqual(a.diagnostics);
  });

  it("reports a JSON array cut inside an element and decodes the elements before it", () => {
    const body = encodeJsonArray(payloads);
    const decoder = createByteDecoder("gemini", { framing: "json-array" });
    decoder.push(body.slice(0, body.length - 20));
    const turn = decoder.finish();
    expect(turn.text).toBe("Hi ✓");
    expect(turn.status).toBe("incomplete");
    expect(codes(turn)).toContain("json_array_truncated");
  });

  it("a single error object as the body is one event", () => {
    const decoder = createByteDecoder("gemini", { framing: "json-array" });
    decoder.push(JSON.stringify({ error: { code: 429, message: "Resource exhausted", status: "RESOURCE_EXHAUSTED" } }));
    expect(decoder.finish()).toMatchObject({ status: "error", error: { type: "RESOURCE_EXHAUSTED" } });
  });
});

describe("partialArgs building blocks", () => {
  it("parses the JSON paths the API uses and rejects the rest", () => {
    expect(parseLeafPath("$.recipe.ingredients[3].name")).toEqual(["recipe", "ingredients", 3, "name"]);
    expect(parseLeafPath("$['a b'][\"c\\\"d\"][0]")).toEqual(["a b", 'c"d', 0]);
    expect(parseLeafPath("$")).toEqual([]);
    for (const bad of ["recipe.name", "$.a[*]", "$.a[-1]", "$.a[1:2]", "$..a", "$.a[01]", "$['a"]) expect(parseLeafPath(bad)).toBeNull();
  });

  it("refuses a skipped array index and a key inside an array", () => {
    for (const [first, second] of [
      ["$.a[0]", "$.a[2]"],
      ["$.a[0]", "$.a.b"],
      ["$.a", "$.a.b"],
    ] as const) {
      const writer = new PartialArgsWriter();
      writer.leaf({ jsonPath: first, numberValue: 1 });
      writer.leaf({ jsonPath: second, numberValue: 2 });
      expect(writer.broken).toBe(true);
      expect(writer.takeDiagnostics().map((d) => d.code)).toEqual(["partial_args_unusable"]);
    }
  });
});

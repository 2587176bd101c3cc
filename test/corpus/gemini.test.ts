import { describe, expect, it } from "vitest";
import { describeCorpus } from "../helpers/corpus.js";
import { createByteDecoder } from "../../src/adapters/bytes.js";
import { encodeJsonArray } from "../../src/framing/json-array.js";
import type { DecodedTurn } from "../../src/types.js";
import { callFacts, cassetteBodies, cassetteRequests, corpusText, replayFile, unnamed } from "./support.js";

/**
 * Every Gemini and Vertex recording of the corpus, decoded from testdata/ and compared with what
 * the recording shows (read by hand from the upstream file), plus the raw upstream bodies through
 * the byte path.
 */

const minted = expect.stringMatching(/^gemini_tw_[0-9a-z]{11}$/);
const ADD_MULTIPLY = [
  { id: minted, name: "add", arguments: { a: 2, b: 3 }, source: "final", complete: true },
  { id: minted, name: "multiply", arguments: { a: 2, b: 3 }, source: "final", complete: true },
];

function signatureOf(turn: DecodedTurn, index: number): unknown {
  return turn.toolCalls[index]?.providerFields?.thoughtSignature;
}

describeCorpus("upstream", "the upstream corpus: Gemini recordings", () => {
  describe("gemini corpus: classic whole calls", () => {
    it("fantasy gemini-2.5-flash: both calls (no ids) in the final chunk, signature on the first only", () => {
      const [calls, answer] = replayFile("gemini", "charmbracelet__fantasy__TestGoogleCommon__gemini-2.5-flash__multi_tool_streaming.ndjson");
      expect(calls).toMatchObject({ status: "complete", finishReason: "tool_calls", rawFinishReason: "STOP", text: "" });
      expect(callFacts(calls!)).toEqual(ADD_MULTIPLY);
      expect(calls!.toolCalls[0]?.id).not.toBe(calls!.toolCalls[1]?.id);
      expect(signatureOf(calls!, 0)).toMatch(/^CloBvj72/);
      expect(signatureOf(calls!, 1)).toBeUndefined();
      expect(calls!.usage).toMatchObject({ inputTokens: 121, outputTokens: 36, totalTokens: 195, reasoningTokens: 38 });
      expect(answer).toMatchObject({ status: "complete", finishReason: "stop", text: "The sum of 2 and 3 is 5. The product of 2 and 3 is 6.", toolCalls: [] });
    });

    it("fantasy gemini-3-pro-preview: calls with ids in consecutive chunks, then an empty text chunk with STOP", () => {
      const [calls, answer] = replayFile("gemini", "charmbracelet__fantasy__TestGoogleCommon__gemini-3-pro-preview__multi_tool_streaming.ndjson");
      expect(callFacts(calls!)).toEqual([
        { id: "8hd01vsf", name: "add", arguments: { a: 2, b: 3 }, source: "final", complete: true },
        { id: "k0srpqrc", name: "multiply", arguments: { a: 2, b: 3 }, source: "final", complete: true },
      ]);
      expect(signatureOf(calls!, 0)).toMatch(/^EsINCr8N/);
      expect(calls).toMatchObject({ status: "complete", finishReason: "tool_calls" });
      expect(answer).toMatchObject({ finishReason: "stop", text: "The sum of 2 and 3 is 5, and their product is 6." });
      // The closing chunk's signature rides on an empty text part: kept in order.
      expect(answer!.blocks.at(-1)).toMatchObject({ type: "opaque", blockType: "thought_signature" });
    });

    it("fantasy vertex-gemini-2-5-pro: one SSE event holding both calls", () => {
      const [calls, answer] = replayFile("gemini", "charmbracelet__fantasy__TestGoogleCommon__vertex-gemini-2-5-pro__multi_tool_streaming.ndjson");
      expect(callFacts(calls!)).toEqual(ADD_MULTIPLY);
      expect(calls).toMatchObject({ status: "complete", finishReason: "tool_calls" });
      expect(answer).toMatchObject({ finishReason: "stop", text: "The sum of 2 and 3 is 5, and the product of 2 and 3 is 6." });
    });

    it("pydantic thought signature: a no-argument call with args {} and its signature", () => {
      const [calls, answer] = replayFile("gemini", "pydantic__pydantic-ai__test_google__test_google_streaming_tool_call_thought_signature.ndjson");
      expect(callFacts(calls!)).toEqual([{ id: minted, name: "get_country", arguments: {}, source: "final", complete: true }]);
      expect(signatureOf(calls!, 0)).toMatch(/^EpwICpkI/);
      expect(calls).toMatchObject({ status: "complete", finishReason: "tool_calls" });
      expect(answer).toMatchObject({ finishReason: "stop", text: "The capital of Mexico is Mexico City." });
    });

    it("vercel gemini3: one call with a long signature, then an empty text chunk with STOP", () => {
      const [turn] = replayFile("gemini", "vercel__ai__google-tool-call-gemini3.ndjson");
      expect(callFacts(turn!)).toEqual([{ id: minted, name: "weather", arguments: { location: "San Francisco" }, source: "final", complete: true }]);
      expect(String(signatureOf(turn!, 0)).length).toBeGreaterThan(1000);
      expect(turn).toMatchObject({ status: "complete", finishReason: "tool_calls" });
      expect(turn!.usage).toMatchObject({ reasoningTokens: 804 });
    });
  });

  describe("gemini corpus: streamed arguments (Vertex partialArgs)", () => {
    it("vercel stream-tool-call-arguments: two sequential calls built from string leaves", () => {
      const [turn] = replayFile("gemini", "vercel__ai__google-stream-tool-call-arguments.ndjson");
      expect(callFacts(turn!)).toEqual([
        { id: minted, name: "getWeather", arguments: { location: "Boston" }, source: "delta", complete: true },
        { id: minted, name: "getWeather", arguments: { location: "San Francisco" }, source: "delta", complete: true },
      ]);
      expect(turn!.toolCalls[0]?.id).not.toBe(turn!.toolCalls[1]?.id);
      expect(signatureOf(turn!, 0)).toBeDefined();
      expect(turn).toMatchObject({ status: "complete", finishReason: "tool_calls" });
    });

    it("vercel stream-no-args-tool-call: a whole no-argument call, then three streamed calls", () => {
      const [turn] = replayFile("gemini", "vercel__ai__google-stream-no-args-tool-call.ndjson");
      expect(callFacts(turn!)).toEqual([
        { id: minted, name: "read_theme", arguments: {}, source: "empty", complete: true },
        { id: minted, name: "read_screen", arguments: { id: "A" }, source: "delta", complete: true },
        { id: minted, name: "read_screen", arguments: { id: "B" }, source: "delta", complete: true },
        { id: minted, name: "read_screen", arguments: { id: "C" }, source: "delta", complete: true },
      ]);
      expect(new Set(turn!.toolCalls.map((c) => c.id)).size).toBe(4);
      expect(turn!.reasoning).toMatch(/^\*\*Processing User Requests\*\*/);
      expect(turn).toMatchObject({ status: "complete", finishReason: "tool_calls" });
    });

    it("vercel missing-terminal-function-call: the last leaf part without willContinue ends the call, which is complete", () => {
      const [turn] = replayFile("gemini", "vercel__ai__google-stream-tool-call-array-arguments-missing-terminal-function-call.ndjson");
      expect(callFacts(turn!)).toEqual([
        {
          id: minted,
          name: "writeItems",
          arguments: {
            operations: [
              { action: "add", description: "Fresh red apple", itemid: "apple_001", price: 0.5 },
              { action: "add", description: "Ripe yellow banana", itemid: "banana_001", price: 0.3 },
            ],
          },
          source: "delta",
          complete: true,
        },
      ]);
      expect(turn).toMatchObject({ status: "complete", finishReason: "tool_calls" });
      expect(turn!.diagnostics.filter((d) => d.severity !== "info")).toEqual([]);
    });

    it("vercel vertex nested: paths into nested objects and arrays, with bare willContinue separators", () => {
      const [turn] = replayFile("gemini", "vercel__ai__google-vertex-stream-tool-call-arguments-nested.1.ndjson");
      expect(turn).toMatchObject({ status: "complete", finishReason: "tool_calls" });
      const [call] = turn!.toolCalls;
      expect(call).toMatchObject({ name: "cookRecipe", source: "delta", complete: true, error: null, repairs: [] });
      const recipe = (call?.arguments as { recipe: { name: string; ingredients: Array<{ amount: string; name: string }>; steps: string[] } }).recipe;
      expect(Object.keys(recipe)).toEqual(["ingredients", "name", "steps"]);
      expect(recipe.name).toBe("Lasagna");
      expect(recipe.ingredients).toHaveLength(10);
      expect(recipe.ingredients[0]).toEqual({ amount: "16 oz", name: "Lasagna noodles" });
      expect(recipe.ingredients[3]).toEqual({ amount: "3 cups", name: "Mozzarella cheese" });
      expect(recipe.ingredients[9]).toEqual({ amount: "1/2 tsp", name: "Pepper" });
      expect(recipe.steps).toHaveLength(10);
      expect(recipe.steps[0]).toBe("Preheat oven to 375°F (190°C).");
      // steps[1] and steps[4] arrive as two string fragments each.
      expect(recipe.steps[1]).toBe("Cook lasagna noodles according to package directions, drain and set aside.");
      expect(recipe.steps[4]).toBe("In a 9x13 baking dish, spread a thin layer of meat sauce.");
      expect(recipe.steps[9]).toBe("Let stand for 15 minutes before serving.");
    });
  });

  describe("gemini corpus: the raw upstream bodies through the byte path", () => {
    const cassettes: Array<[string, string]> = [
      ["charmbracelet__fantasy/providertests__testdata__TestGoogleCommon__gemini-2.5-flash__multi_tool_streaming.yaml", "charmbracelet__fantasy__TestGoogleCommon__gemini-2.5-flash__multi_tool_streaming.ndjson"],
      ["charmbracelet__fantasy/providertests__testdata__TestGoogleCommon__gemini-3-pro-preview__multi_tool_streaming.yaml", "charmbracelet__fantasy__TestGoogleCommon__gemini-3-pro-preview__multi_tool_streaming.ndjson"],
      ["charmbracelet__fantasy/providertests__testdata__TestGoogleCommon__vertex-gemini-2-5-pro__multi_tool_streaming.yaml", "charmbracelet__fantasy__TestGoogleCommon__vertex-gemini-2-5-pro__multi_tool_streaming.ndjson"],
      ["pydantic__pydantic-ai/tests__models__cassettes__test_google__test_google_streaming_tool_call_thought_signature.yaml", "pydantic__pydantic-ai__test_google__test_google_streaming_tool_call_thought_signature.ndjson"],
    ];

    it.each(cassettes)("%s: the SSE body (CRLF) decodes to the same turns as the records", (local, file) => {
      const bodies = cassetteBodies(local);
      const turns = replayFile("gemini", file);
      expect(bodies).toHaveLength(turns.length);
      bodies.forEach((body, i) => {
        const decoder = createByteDecoder("gemini");
        decoder.push(body);
        expect(unnamed(decoder.finish())).toEqual(unnamed(turns[i]!));
      });
    });

    const chunkFiles: Array<[string, string]> = [
      ["google-stream-no-args-tool-call", "vercel__ai__google-stream-no-args-tool-call.ndjson"],
      ["google-stream-tool-call-arguments", "vercel__ai__google-stream-tool-call-arguments.ndjson"],
      ["google-stream-tool-call-array-arguments-missing-terminal-function-call", "vercel__ai__google-stream-tool-call-array-arguments-missing-terminal-function-call.ndjson"],
      ["google-tool-call-gemini3", "vercel__ai__google-tool-call-gemini3.ndjson"],
      ["google-vertex-stream-tool-call-arguments-nested.1", "vercel__ai__google-vertex-stream-tool-call-arguments-nested.1.ndjson"],
    ];

    it.each(chunkFiles)("%s: re-framed as SSE and as a JSON array, the chunks decode to the same turn", (name, file) => {
      const lines = corpusText(`vercel__ai/packages__google__src____fixtures____${name}.chunks.txt`)
        .split("\n")
        .filter((line) => line.trim() !== "");
      const [turn] = replayFile("gemini", file);
      const sse = createByteDecoder("gemini");
      sse.push(lines.map((line) => `data: ${line}\r\n\r\n`).join(""));
      expect(sse.finish()).toEqual(turn);
      const array = createByteDecoder("gemini", { framing: "json-array" });
      array.push(encodeJsonArray(lines.map((line) => JSON.parse(line) as unknown)));
      expect(array.finish()).toEqual(turn);
    });
  });

  describe("gemini corpus: the follow-up request is an independent oracle", () => {
    // The request after a tool-calling response sends the model's turn back as its client decoded
    // it: every functionCall (name, args) with the thoughtSignature on the same part, verbatim.
    const cases: Array<[string, string]> = [
      ["charmbracelet__fantasy/providertests__testdata__TestGoogleCommon__gemini-2.5-flash__multi_tool_streaming.yaml", "charmbracelet__fantasy__TestGoogleCommon__gemini-2.5-flash__multi_tool_streaming.ndjson"],
      ["charmbracelet__fantasy/providertests__testdata__TestGoogleCommon__gemini-3-pro-preview__multi_tool_streaming.yaml", "charmbracelet__fantasy__TestGoogleCommon__gemini-3-pro-preview__multi_tool_streaming.ndjson"],
      ["charmbracelet__fantasy/providertests__testdata__TestGoogleCommon__vertex-gemini-2-5-pro__multi_tool_streaming.yaml", "charmbracelet__fantasy__TestGoogleCommon__vertex-gemini-2-5-pro__multi_tool_streaming.ndjson"],
      ["pydantic__pydantic-ai/tests__models__cassettes__test_google__test_google_streaming_tool_call_thought_signature.yaml", "pydantic__pydantic-ai__test_google__test_google_streaming_tool_call_thought_signature.ndjson"],
    ];

    // pydantic-ai sends the signature back base64url-encoded: the same bytes, another alphabet.
    const standardBase64 = (value: unknown): unknown => {
      if (typeof value !== "string") return value;
      const text = value.replace(/-/g, "+").replace(/_/g, "/");
      return text + "=".repeat((4 - (text.length % 4)) % 4);
    };

    it.each(cases)("%s", (local, file) => {
      const [, next] = cassetteRequests(local) as Array<{ contents: Array<{ role: string; parts: Array<Record<string, unknown>> }> }>;
      const model = next!.contents.filter((content) => content.role === "model").at(-1)!;
      const sentBack = model.parts
        .filter((part) => part.functionCall)
        .map((part) => {
          const call = part.functionCall as { name: string; args?: unknown };
          return { name: call.name, arguments: call.args ?? {}, thoughtSignature: standardBase64(part.thoughtSignature) };
        });
      const [turn] = replayFile("gemini", file);
      expect(sentBack.length).toBeGreaterThan(0);
      expect(turn!.toolCalls.map((call) => ({ name: call.name, arguments: call.arguments, thoughtSignature: call.providerFields?.thoughtSignature }))).toEqual(sentBack);
    });
  });
});

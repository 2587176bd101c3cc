import { describe, expect, it } from "vitest";
import { describeCorpus } from "../helpers/corpus.js";
import { callFacts, replayFile } from "./support.js";

/**
 * The corpus's only Ollama capture (vxcontrol/langchaingo TestToolCall.httprr): a non-streamed
 * /api/chat exchange, which has the shape of a final NDJSON line. No streamed Ollama recording
 * with tool calls exists in the corpus; the streamed shape is covered by the decoder tests.
 */
describeCorpus("upstream", "the upstream corpus: Ollama recordings", () => {
  describe("ollama corpus", () => {
    it("langchaingo TestToolCall: one call without id (minted), arguments as an object, <think> text in content", () => {
      const [calls, answer] = replayFile("ollama", "vxcontrol__langchaingo__ollama__TestToolCall.ndjson");
      expect(calls).toMatchObject({ status: "complete", finishReason: "tool_calls", rawFinishReason: "stop", model: "qwen3:8b" });
      expect(callFacts(calls!)).toEqual([{ id: expect.stringMatching(/^ollama_tw_[0-9a-z]{11}$/), name: "getTime", arguments: {}, source: "final", complete: true }]);
      expect(calls!.text).toMatch(/^<think>\nOkay, the user is asking for today's date\./);
      expect(calls!.usage).toMatchObject({ inputTokens: 132, outputTokens: 126, totalTokens: 258 });
      expect(calls!.diagnostics.map((d) => d.code)).toEqual(["think_markup_in_content", "call_id_minted"]);
      expect(answer).toMatchObject({ status: "complete", finishReason: "stop", toolCalls: [] });
      expect(answer!.text).toContain("2010-08-13");
    });
  });
});

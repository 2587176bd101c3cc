import { describe, expect, it } from "vitest";
import { describeCorpus } from "../helpers/corpus.js";
import { createByteDecoder } from "../../src/adapters/bytes.js";
import { base64ToBytes } from "../../src/framing/aws-eventstream.js";
import type { DecodedTurn } from "../../src/types.js";
import { callFacts, cassetteBodies, cassetteRequests, corpusText, replayFile, unnamed } from "./support.js";

/**
 * Every Bedrock recording of the corpus: ConverseStream (decoded by `bedrock`) and
 * InvokeModelWithResponseStream with Claude inside (decoded by `anthropic` after the chunk frames
 * are unwrapped). Records from testdata/ are compared with what the recording shows; the binary
 * upstream bodies go through the byte path, CRCs and all.
 */

function decodeBinary(body: Uint8Array, provider: "bedrock" | "anthropic" = "bedrock", step?: number): DecodedTurn {
  const decoder = createByteDecoder(provider, { framing: "aws-eventstream" });
  if (step === undefined) decoder.push(body);
  else for (let i = 0; i < body.length; i += step) decoder.push(body.subarray(i, i + step));
  return decoder.finish();
}

function frameOffsets(body: Uint8Array): number[] {
  const offsets: number[] = [];
  for (let at = 0; at < body.length; at += new DataView(body.buffer, body.byteOffset + at, 4).getUint32(0)) offsets.push(at);
  return offsets;
}

describeCorpus("upstream", "the upstream corpus: Bedrock recordings", () => {
  describe("bedrock corpus: ConverseStream records", () => {
    it("pydantic iter_stream: text without a start event, one toolUse, messageStop before metadata; then a text-only turn", () => {
      const [calls, answer] = replayFile("bedrock", "pydantic__pydantic-ai__test_bedrock__test_bedrock_model_iter_stream.ndjson");
      expect(calls).toMatchObject({ status: "complete", finishReason: "tool_calls", rawFinishReason: "tool_use" });
      expect(calls!.text).toMatch(/^<thinking> To find the temperature of the capital of France,[\s\S]*Paris\.<\/thinking>\n$/);
      expect(callFacts(calls!)).toEqual([{ id: "tooluse_lAG_zP8QRHmSYOwZzzaCqA", name: "get_temperature", arguments: { city: "Paris" }, source: "delta", complete: true }]);
      expect(calls!.usage).toMatchObject({ inputTokens: 471, outputTokens: 91, totalTokens: 562 });
      expect(answer).toMatchObject({ status: "complete", finishReason: "stop", text: "The current temperature in Paris, the capital of France, is 30°C.", toolCalls: [] });
    });

    it("pydantic code_execution: a server-side toolUse, its toolResult block, then a client toolUse", () => {
      const [turn] = replayFile("bedrock", "pydantic__pydantic-ai__test_bedrock__test_bedrock_model_code_execution_tool_stream.ndjson");
      expect(turn).toMatchObject({ status: "complete", finishReason: "tool_calls" });
      expect(turn!.serverToolCalls).toEqual([
        expect.objectContaining({ id: "tooluse_VQNZJRUFMoqZzszVsRd4og", name: "nova_code_interpreter", arguments: { snippet: "1234 * 5678" }, kind: "server", complete: true }),
      ]);
      expect(callFacts(turn!)).toEqual([{ id: "tooluse_ptgCcZ0uQu-UUMz0abqoWw", name: "final_result", arguments: { result: 7006652 }, source: "delta", complete: true }]);
      expect(turn!.blocks.map((b) => (b.type === "opaque" ? b.blockType : b.type))).toEqual(["server_tool_call", "toolResult", "tool_call"]);
      expect(turn!.usage).toMatchObject({ inputTokens: 1002, outputTokens: 59, totalTokens: 1061 });
    });

    it("vercel json-with-tools: text, two calls, more text, a third call; no messageStart or metadata", () => {
      const [turn] = replayFile("bedrock", "vercel__ai__amazon-bedrock-json-with-tools.1.ndjson");
      expect(turn).toMatchObject({ status: "complete", finishReason: "tool_calls", text: "Multiple tools.Final JSON." });
      expect(callFacts(turn!)).toEqual([
        { id: "tool-1", name: "tool-a", arguments: { a: "1" }, source: "delta", complete: true },
        { id: "tool-2", name: "tool-b", arguments: { b: "2" }, source: "delta", complete: true },
        { id: "json-tool-id", name: "json", arguments: { final: "result" }, source: "delta", complete: true },
      ]);
    });

    it("vercel kimi-k2 thinking: empty text blocks, reasoning, a toolUse with a Kimi-style id", () => {
      const [turn] = replayFile("bedrock", "vercel__ai__issue-11409-kimi-k2-thinking-glob-search.ndjson");
      expect(turn).toMatchObject({ status: "complete", finishReason: "tool_calls", text: "" });
      expect(turn!.reasoning).toMatch(/^ The user wants me to:\n1\. Call glob_search/);
      expect(callFacts(turn!)).toEqual([{ id: "functions.glob_search:0", name: "glob_search", arguments: { pattern: "**/*cursor*" }, source: "delta", complete: true }]);
      expect(turn!.usage).toMatchObject({ inputTokens: 217, outputTokens: 75, totalTokens: 292 });
    });

    it("vercel model-stream-error-exception: an exception frame is a turn with status error", () => {
      const [turn] = replayFile("bedrock", "vercel__ai__model-stream-error-exception.ndjson");
      expect(turn).toMatchObject({ status: "error", finishReason: "error", toolCalls: [], error: { type: "modelStreamErrorException", message: "Model Stream Error" } });
    });
  });

  describe("bedrock corpus: InvokeModelWithResponseStream (Claude) records", () => {
    it("fantasy bedrock-anthropic-claude-sonnet-4-5: one tool_use with a toolu_bdrk_ id", () => {
      const [calls, answer] = replayFile("anthropic", "charmbracelet__fantasy__TestBedrockCommon__bedrock-anthropic-claude-sonnet-4-5__tool_streaming.ndjson");
      expect(callFacts(calls!)).toEqual([{ id: "toolu_bdrk_018dfpvS9zVjdozFjuwZf5cx", name: "weather", arguments: { location: "Florence,Italy" }, source: "delta", complete: true }]);
      expect(calls).toMatchObject({ status: "complete", finishReason: "tool_calls" });
      expect(answer).toMatchObject({ status: "complete", finishReason: "stop", toolCalls: [] });
      expect(answer!.text).toMatch(/^The weather in Florence, Italy is currently \*\*40°C\*\*/);
    });
  });

  describe("bedrock corpus: the binary bodies", () => {
    const converse: Array<[string, string]> = [
      ["pydantic__pydantic-ai/tests__models__cassettes__test_bedrock__test_bedrock_model_iter_stream.yaml", "pydantic__pydantic-ai__test_bedrock__test_bedrock_model_iter_stream.ndjson"],
      ["pydantic__pydantic-ai/tests__models__cassettes__test_bedrock__test_bedrock_model_code_execution_tool_stream.yaml", "pydantic__pydantic-ai__test_bedrock__test_bedrock_model_code_execution_tool_stream.ndjson"],
    ];

    it.each(converse)("%s: the binary body decodes, whole or byte by byte, to the records' turns", (local, file) => {
      const bodies = cassetteBodies(local);
      const turns = replayFile("bedrock", file);
      expect(bodies).toHaveLength(turns.length);
      bodies.forEach((body, i) => {
        expect(body).toBeInstanceOf(Uint8Array);
        const whole = decodeBinary(body as Uint8Array);
        expect(unnamed(whole)).toEqual(unnamed(turns[i]!));
        expect(decodeBinary(body as Uint8Array, "bedrock", 1)).toEqual(whole);
      });
    });

    it("the InvokeModel body (chunk frames) decodes with the anthropic decoder to the records' turns", () => {
      const bodies = cassetteBodies("charmbracelet__fantasy/providertests__testdata__TestBedrockCommon__bedrock-anthropic-claude-sonnet-4-5__tool_streaming.yaml");
      const turns = replayFile("anthropic", "charmbracelet__fantasy__TestBedrockCommon__bedrock-anthropic-claude-sonnet-4-5__tool_streaming.ndjson");
      expect(bodies).toHaveLength(turns.length);
      bodies.forEach((body, i) => expect(unnamed(decodeBinary(body as Uint8Array, "anthropic"))).toEqual(unnamed(turns[i]!)));
    });

    const exceptionFixture = () => base64ToBytes(corpusText("vercel__ai/packages__amazon-bedrock__src____fixtures____model-stream-error-exception.eventstream.base64.txt"));

    it("the base64 exception fixture decodes to an error turn", () => {
      const turn = decodeBinary(exceptionFixture());
      expect(turn).toMatchObject({ status: "error", error: { type: "modelStreamErrorException", message: "Model Stream Error" } });
      expect(turn.diagnostics.map((d) => d.code)).toEqual(["stream_error"]);
    });

    it("every flipped byte of the exception fixture is a checksum error naming offset 0, never garbage", () => {
      const bytes = exceptionFixture();
      for (let i = 0; i < bytes.length; i++) {
        const corrupted = bytes.slice();
        corrupted[i]! ^= 0x01;
        const turn = decodeBinary(corrupted);
        expect(turn.status).toBe("error");
        const diagnostic = turn.diagnostics.find((d) => d.code.startsWith("eventstream_"));
        expect(diagnostic?.code).toBe(i < 12 ? "eventstream_prelude_crc" : "eventstream_message_crc");
        expect(diagnostic?.message).toContain("byte offset 0");
        expect(turn.error?.type).toBe(diagnostic?.code);
        expect(turn.error?.type).not.toBe("modelStreamErrorException");
      }
    });

    it("a flipped byte in a recorded multi-frame body names its frame's offset and keeps what arrived before", () => {
      const [body] = cassetteBodies(converse[0]![0]) as Uint8Array[];
      const offsets = frameOffsets(body!);
      // Frame 22 is the toolUse input delta; the text and the call's start came before it.
      const frame = offsets.findIndex((at) => new TextDecoder().decode(body!.subarray(at, at + 200)).includes('"toolUse":{"input"'));
      expect(frame).toBeGreaterThan(0);
      const corrupted = body!.slice();
      corrupted[(offsets[frame] as number) + 100]! ^= 0x20;
      const turn = decodeBinary(corrupted, "bedrock", 64);
      expect(turn.status).toBe("error");
      expect(turn.text).toMatch(/^<thinking> To find the temperature/);
      expect(turn.toolCalls).toEqual([expect.objectContaining({ id: "tooluse_lAG_zP8QRHmSYOwZzzaCqA", complete: false, arguments: null, error: expect.objectContaining({ code: "truncated", cause: "stream_error" }) })]);
      const diagnostic = turn.diagnostics.find((d) => d.code === "eventstream_message_crc");
      expect(diagnostic?.data).toEqual({ code: "message_crc", offset: offsets[frame] });
      expect(diagnostic?.message).toContain(`byte offset ${offsets[frame]}`);
    });
  });

  describe("bedrock corpus: the follow-up request is an independent oracle", () => {
    it("pydantic iter_stream: the next Converse request sends back the same text and toolUse", () => {
      const [, next] = cassetteRequests("pydantic__pydantic-ai/tests__models__cassettes__test_bedrock__test_bedrock_model_iter_stream.yaml") as Array<{
        messages: Array<{ role: string; content: Array<Record<string, unknown>> }>;
      }>;
      const assistant = next!.messages.filter((message) => message.role === "assistant").at(-1)!;
      const [turn] = replayFile("bedrock", "pydantic__pydantic-ai__test_bedrock__test_bedrock_model_iter_stream.ndjson");
      expect(assistant.content.filter((block) => typeof block.text === "string").map((block) => block.text).join("")).toBe(turn!.text);
      const sentBack = assistant.content.filter((block) => block.toolUse).map((block) => block.toolUse as { toolUseId: string; name: string; input: unknown });
      expect(turn!.toolCalls.map((call) => ({ toolUseId: call.id, name: call.name, input: call.arguments }))).toEqual(sentBack);
    });
  });
});

import { describe, expect, it } from "vitest";
import { importFile } from "../../src/import/index.js";
import { describeCorpus } from "../helpers/corpus.js";
import { corpusFile, utf8 } from "./corpus.js";

describeCorpus("upstream", "raw SSE text (corpus)", () => {
  it("imports the Anthropic SDK tool_use fixture with its event names", () => {
    const { name, bytes } = corpusFile("anthropics__anthropic-sdk-typescript/tests__lib__fixtures__tool_use_response.txt");
    const result = importFile(name, bytes);
    expect(result.format).toBe("sse");
    expect(result.streams).toHaveLength(1);
    const [stream] = result.streams;
    expect(stream?.sequence).toBeNull();
    expect(stream?.provider).toBeNull();
    expect(stream?.events).toHaveLength(15);
    expect(stream?.events[0]?.event).toBe("message_start");
    expect(stream?.events.at(-1)).toEqual({ event: "message_stop", data: { type: "message_stop" } });
    // The split input_json_delta fragments survive as separate events.
    const fragments = stream!.events
      .map((e) => e.data as { delta?: { partial_json?: string } })
      .filter((d) => d.delta?.partial_json !== undefined)
      .map((d) => d.delta!.partial_json);
    expect(fragments.join("")).toBe('{"location": "Paris"}');
  });

  it("imports the vercel/ai .sse fixture and keeps [DONE] as a string payload", () => {
    const { name, bytes } = corpusFile("vercel__ai/packages__openai-compatible__src__chat____fixtures____anthropic-fallback-tool-call.sse");
    const result = importFile(name, bytes, { provider: "openai-chat" });
    expect(result.format).toBe("sse");
    const [stream] = result.streams;
    expect(stream?.provider).toBe("openai-chat");
    expect(stream?.events).toHaveLength(9);
    expect((stream?.events[0]?.data as { object: string }).object).toBe("chat.completion.chunk");
    expect(stream?.events.at(-1)).toEqual({ data: "[DONE]" });
    expect(result.notes).toContain('1 non-JSON data payload kept as a string ("[DONE]")');
  });
});

describe("raw SSE text (synthetic)", () => {
  it("joins multi-line data, drops comments and says so", () => {
    const body = ": keep-alive\n\nevent: note\ndata: line one\ndata: line two\n\ndata: {\"a\":1}\r\n\r\n";
    const result = importFile("stream.txt", utf8(body));
    expect(result.format).toBe("sse");
    expect(result.streams[0]?.events).toEqual([{ event: "note", data: "line one\nline two" }, { data: { a: 1 } }]);
    expect(result.notes).toEqual([
      '1 SSE comment line dropped ("keep-alive")',
      "1 event with several data: lines (joined with \\n)",
      '1 non-JSON data payload kept as a string ("line one\\nline two")',
    ]);
  });
});

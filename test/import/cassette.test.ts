import { describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { encodeEventStreamMessage } from "../../src/framing/aws-eventstream.js";
import { ImportError, importFile, providerFromUrl } from "../../src/import/index.js";
import { describeCorpus } from "../helpers/corpus.js";
import { corpusFile, utf8 } from "./corpus.js";

const summary = (result: ReturnType<typeof importFile>) => result.streams.map((s) => [s.sequence, s.provider, s.events.length]);
const firstLast = (events: { event?: string; data: unknown }[]) => [
  events[0]?.event ?? Object.keys(events[0]?.data as object)[0],
  events.at(-1)?.event ?? (typeof events.at(-1)?.data === "string" ? events.at(-1)?.data : Object.keys(events.at(-1)?.data as object)[0]),
];

describeCorpus("upstream", "go-vcr v2 cassettes (corpus)", () => {
  it("imports charmbracelet/fantasy Anthropic multi_tool_streaming: one stream per interaction", () => {
    const { name, bytes } = corpusFile("charmbracelet__fantasy/providertests__testdata__TestAnthropicCommon__claude-sonnet-4__multi_tool_streaming.yaml");
    const result = importFile(name, bytes);
    expect(result.format).toBe("go-vcr-v2");
    expect(summary(result)).toEqual([
      ["interaction-0", "anthropic", 22],
      ["interaction-1", "anthropic", 12],
    ]);
    expect(firstLast(result.streams[0]!.events)).toEqual(["message_start", "message_stop"]);
    const tools = result.streams[0]!.events
      .map((e) => e.data as { content_block?: { type: string; name: string } })
      .filter((d) => d.content_block?.type === "tool_use")
      .map((d) => d.content_block!.name);
    expect(tools).toEqual(["add", "multiply"]);
  });

  it("frames Gemini's CRLF-separated bodies", () => {
    const { name, bytes } = corpusFile("charmbracelet__fantasy/providertests__testdata__TestGoogleCommon__gemini-3-pro-preview__multi_tool_streaming.yaml");
    const result = importFile(name, bytes);
    expect(summary(result)).toEqual([
      ["interaction-0", "gemini", 3],
      ["interaction-1", "gemini", 3],
    ]);
    expect(result.streams[0]!.events.every((e) => typeof e.data === "object" && "candidates" in (e.data as object))).toBe(true);
  });

  it("notes OpenRouter keep-alive comments", () => {
    const { name, bytes } = corpusFile("charmbracelet__fantasy/providertests__testdata__TestOpenRouterCommon__anthropic__multi_tool_streaming.yaml");
    const result = importFile(name, bytes);
    expect(summary(result)).toEqual([
      ["interaction-0", "openai-chat", 16],
      ["interaction-1", "openai-chat", 11],
    ]);
    expect(result.notes).toContain('interaction-0: 2 SSE comment lines dropped ("OPENROUTER PROCESSING")');
  });
});

describeCorpus("upstream", "VCR.py cassettes (corpus)", () => {
  it("imports pydantic-ai's temporal cassette (body.string SSE, three streamed interactions)", () => {
    const { name, bytes } = corpusFile("pydantic__pydantic-ai/tests__cassettes__test_temporal__test_complex_agent_run.yaml");
    const result = importFile(name, bytes);
    expect(result.format).toBe("vcr.py");
    expect(summary(result)).toEqual([
      ["interaction-0", "openai-chat", 8],
      ["interaction-1", "openai-chat", 10],
      ["interaction-2", "openai-chat", 57],
    ]);
    expect(result.streams[0]!.events.at(-1)).toEqual({ data: "[DONE]" });
  });

  it("decodes !!binary AWS event-stream bodies (ConverseStream)", () => {
    const { name, bytes } = corpusFile("pydantic__pydantic-ai/tests__models__cassettes__test_bedrock__test_bedrock_model_iter_stream.yaml");
    const result = importFile(name, bytes);
    expect(summary(result)).toEqual([
      ["interaction-0", "bedrock", 26],
      ["interaction-1", "bedrock", 9],
    ]);
    expect(firstLast(result.streams[0]!.events)).toEqual(["messageStart", "metadata"]);
    const start = result.streams[0]!.events.find((e) => e.event === "contentBlockStart");
    expect(start?.data).toMatchObject({ contentBlockIndex: 1, start: { toolUse: { name: "get_temperature" } } });
  });

  it("keeps Groq's mid-stream `event: error`", () => {
    const { name, bytes } = corpusFile("pydantic__pydantic-ai/tests__models__cassettes__test_groq__test_tool_use_failed_error_streaming.yaml");
    const result = importFile(name, bytes);
    expect(summary(result)).toEqual([
      ["interaction-0", "openai-chat", 95],
      ["interaction-1", "openai-chat", 26],
      ["interaction-2", "openai-chat", 51],
    ]);
    const last = result.streams[0]!.events.at(-1);
    expect(last?.event).toBe("error");
    expect(last?.data).toMatchObject({ error: { code: "tool_use_failed" } });
  });

  it("reports the folded first line of simonw/llm variant_c that the SSE spec ignores", () => {
    const { name, bytes } = corpusFile("simonw__llm/tests__cassettes__test_tools_streaming__test_tools_streaming_variant_c.yaml");
    const result = importFile(name, bytes);
    expect(summary(result)).toEqual([
      ["interaction-0", "openai-chat", 5],
      ["interaction-1", "openai-chat", 18],
    ]);
    expect(result.notes.some((n) => n.startsWith('interaction-0: SSE framing: Unknown field " data"') && n.endsWith("(line ignored, as the SSE spec requires)"))).toBe(true);
  });
});

describe("cassettes (synthetic)", () => {
  const sse = 'data: {"choices":[{"delta":{"content":"hi"}}]}\n\ndata: [DONE]\n\n';

  it("skips non-streamed JSON interactions and records why", () => {
    const yaml = stringify({
      version: 2,
      interactions: [
        {
          id: 0,
          request: { url: "https://api.openai.com/v1/chat/completions", method: "POST" },
          response: { body: '{"choices":[]}', headers: { "Content-Type": ["application/json"] }, status: "200 OK", code: 200 },
        },
        {
          id: 1,
          request: { url: "https://api.openai.com/v1/chat/completions", method: "POST" },
          response: { body: sse, headers: { "Content-Type": ["text/event-stream"] }, status: "200 OK", code: 200 },
        },
        {
          id: 2,
          request: { url: "https://api.openai.com/v1/chat/completions", method: "POST" },
          response: { body: '{"error":{"message":"slow down"}}', headers: { "Content-Type": ["application/json"] }, status: "429", code: 429 },
        },
      ],
    });
    const result = importFile("cassette.yaml", utf8(yaml));
    expect(result.format).toBe("go-vcr-v2");
    expect(summary(result)).toEqual([["interaction-1", "openai-chat", 2]]);
    expect(result.notes).toEqual([
      "interaction-0: skipped: HTTP 200 application/json response to POST https://api.openai.com/v1/chat/completions is not a stream",
      'interaction-1: 1 non-JSON data payload kept as a string ("[DONE]")',
      "interaction-2: skipped: HTTP 429 application/json response to POST https://api.openai.com/v1/chat/completions is not a stream",
    ]);
  });

  it("reads VCR.py body.string in both plain and !!binary form", () => {
    const frame = encodeEventStreamMessage({ ":event-type": "messageStop", ":message-type": "event" }, '{"stopReason":"end_turn"}');
    const base64 = btoa(String.fromCharCode(...frame));
    const yaml = [
      "interactions:",
      "- request:",
      "    method: POST",
      "    uri: https://bedrock-runtime.us-east-1.amazonaws.com/model/m/converse-stream",
      "  response:",
      "    body:",
      "      string: !!binary |",
      `        ${base64}`,
      "    headers:",
      "      content-type:",
      "      - application/vnd.amazon.eventstream",
      "    status:",
      "      code: 200",
      "      message: OK",
      "- request:",
      "    method: POST",
      "    uri: https://api.anthropic.com/v1/messages",
      "  response:",
      "    body:",
      "      string: 'event: message_stop",
      "",
      '        data: {"type":"message_stop"}',
      "",
      "        '",
      "    headers:",
      "      content-type:",
      "      - text/event-stream",
      "    status:",
      "      code: 200",
      "      message: OK",
      "version: 1",
      "",
    ].join("\n");
    const result = importFile("c.yaml", utf8(yaml));
    expect(result.format).toBe("vcr.py");
    expect(result.streams).toEqual([
      { sequence: "interaction-0", provider: "bedrock", events: [{ event: "messageStop", data: { stopReason: "end_turn" } }] },
      { sequence: "interaction-1", provider: "anthropic", events: [{ event: "message_stop", data: { type: "message_stop" } }] },
    ]);
  });

  it("refuses a gzip-compressed body in the synchronous importFile, pointing at importRecording", () => {
    const gzip = new Uint8Array([0x1f, 0x8b, 0x08, 0x00, 0, 0, 0, 0, 0, 0xff, 0x03, 0]);
    const base64 = btoa(String.fromCharCode(...gzip));
    const yaml = `interactions:\n- request: {uri: "https://api.openai.com/v1/responses", method: POST}\n  response:\n    body: {string: !!binary "${base64}"}\n    headers: {Content-Encoding: [gzip], Content-Type: [text/event-stream]}\n    status: {code: 200, message: OK}\nversion: 1\n`;
    try {
      importFile("gz.yaml", utf8(yaml));
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(ImportError);
      expect((error as ImportError).code).toBe("compressed");
      expect((error as ImportError).message).toMatch(/^gz\.yaml: interaction-0: the response body is gzip-compressed; importFile is synchronous .* use importRecording/);
    }
  });

  it("rejects YAML that is not a cassette, and broken YAML", () => {
    expect(() => importFile("config.yaml", utf8("name: x\nitems: [1, 2]\n"))).toThrow(/not an HTTP cassette/);
    expect(() => importFile("bad.yaml", utf8("interactions: [\n  - {a: 1\n"))).toThrow(/not valid YAML/);
  });
});

describe("providerFromUrl", () => {
  it("knows each provider's streaming endpoint", () => {
    expect(providerFromUrl("https://api.anthropic.com/v1/messages?beta=true")).toBe("anthropic");
    expect(providerFromUrl("https://us-east5-aiplatform.googleapis.com/v1/projects/p/locations/l/publishers/anthropic/models/claude:streamRawPredict")).toBe("anthropic");
    expect(providerFromUrl("https://openrouter.ai/api/v1/chat/completions")).toBe("openai-chat");
    expect(providerFromUrl("https://api.deepseek.com/responses")).toBe("openai-responses");
    expect(providerFromUrl("https://generativelanguage.googleapis.com/v1beta/models/g:streamGenerateContent?alt=sse")).toBe("gemini");
    expect(providerFromUrl("https://bedrock-runtime.us-east-1.amazonaws.com/model/us.amazon.nova-micro-v1%3A0/converse-stream")).toBe("bedrock");
    expect(providerFromUrl("https://bedrock-runtime.us-east-1.amazonaws.com/model/x/invoke-with-response-stream")).toBeNull();
    expect(providerFromUrl("http://localhost:11434/api/chat")).toBe("ollama");
    expect(providerFromUrl("https://example.com/other")).toBeNull();
    expect(providerFromUrl(null)).toBeNull();
  });
});

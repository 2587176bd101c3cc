import { describe, expect, it } from "vitest";
import { detectFormat, importFile } from "../../src/import/index.js";
import { replayEvents } from "../../src/replay.js";
import { b, encodeFrames } from "../helpers/bedrock-events.js";
import { importError } from "./corpus.js";

/**
 * Datadog APM test agent JSON cassettes (`{request, response: {status, headers, body}}`, one
 * exchange per file, binary bodies as "base64:" + base64): hand-written ones around a Bedrock
 * ConverseStream and an OpenAI chat stream, both calling `lookup` with {"q":"figs"}.
 */

const utf8 = (text: string): Uint8Array => new TextEncoder().encode(text);
const base64 = (bytes: Uint8Array): string => Buffer.from(bytes).toString("base64");

const CONVERSE_URL = "https://bedrock-runtime.us-east-1.amazonaws.com/model/vendor.some-model-v1%3A0/converse-stream";
const CHAT_URL = "https://api.example.test/v1/chat/completions";

const FRAMES = encodeFrames([b.messageStart(), b.toolStart(0, "tool_1", "lookup"), b.input(0, '{"q":'), b.input(0, '"figs"}'), b.stop(0), b.messageStop("tool_use")]);

function chunk(delta: unknown, finish: string | null = null): string {
  return `data: ${JSON.stringify({ id: "c1", object: "chat.completion.chunk", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
}

const SSE =
  chunk({ role: "assistant", tool_calls: [{ index: 0, id: "call_f", type: "function", function: { name: "lookup", arguments: '{"q":"figs"}' } }] }) + chunk({}, "tool_calls") + "data: [DONE]\n\n";

function cassette(url: string, response: Record<string, unknown>): Uint8Array {
  const doc = {
    request: { method: "POST", url, headers: { "Content-Type": "application/json" }, body: '{"messages":[]}' },
    response: { status: { code: 200, message: "OK" }, headers: {}, ...response },
  };
  return utf8(JSON.stringify(doc, null, 2));
}

function callsOf(bytes: Uint8Array, name = "cassette_post_0a1b2c3d.json") {
  return importFile(name, bytes).streams.map((stream) => replayEvents(stream).toolCalls.map((call) => [call.name, call.arguments, call.complete]));
}


describe("ddapm-test-agent JSON cassette", () => {
  it("reads a binary AWS event stream stored as \"base64:\" + base64; the provider comes from the URL", () => {
    const bytes = cassette(CONVERSE_URL, { headers: { "Content-Type": "application/vnd.amazon.eventstream" }, body: `base64:${base64(FRAMES)}` });
    expect(detectFormat("x.json", bytes)).toBe("ddapm-test-agent");
    const result = importFile("x.json", bytes);
    expect(result.format).toBe("ddapm-test-agent");
    expect(result.streams.map((stream) => [stream.sequence, stream.provider, stream.events.length])).toEqual([["interaction-0", "bedrock", 6]]);
    expect(callsOf(bytes)).toEqual([[["lookup", { q: "figs" }, true]]]);
  });

  it("reads a text body (SSE) as it is, with the status as an object or a number", () => {
    const withObject = cassette(CHAT_URL, { headers: { "Content-Type": "text/event-stream; charset=utf-8" }, body: SSE });
    const withNumber = cassette(CHAT_URL, { status: 200, headers: { "Content-Type": "text/event-stream" }, body: SSE });
    expect(callsOf(withObject)).toEqual([[["lookup", { q: "figs" }, true]]]);
    expect(callsOf(withNumber)).toEqual([[["lookup", { q: "figs" }, true]]]);
    expect(importFile("x.json", cassette(CHAT_URL, { status: { code: 429 }, headers: { "Content-Type": "text/event-stream" }, body: SSE })).notes).toContain(
      "interaction-0: recorded with HTTP status 429",
    );
  });

  it("drops the Content-Encoding of a binary body stored decoded (the agent keeps the header), saying so", () => {
    const bytes = cassette(CONVERSE_URL, { headers: { "Content-Type": "application/vnd.amazon.eventstream", "Content-Encoding": "gzip" }, body: `base64:${base64(FRAMES)}` });
    const result = importFile("x.json", bytes);
    expect(result.notes).toContain("interaction-0: content-encoding gzip declared, but the recorder stored the body decoded");
    expect(callsOf(bytes)).toEqual([[["lookup", { q: "figs" }, true]]]);
  });

  it("a response without a body is no stream: a note, nothing imported", () => {
    const result = importFile("x.json", cassette(CHAT_URL, { body: "" }));
    expect(result.streams).toEqual([]);
    expect(result.notes).toEqual(["interaction-0: skipped: the response has no body"]);
  });

  it("a JSON (non-stream) response is skipped with a note", () => {
    const result = importFile("x.json", cassette(CHAT_URL, { headers: { "Content-Type": "application/json" }, body: '{"id":"x","choices":[]}' }));
    expect(result.streams).toEqual([]);
    expect(result.notes).toEqual([`interaction-0: skipped: HTTP 200 application/json response to POST ${CHAT_URL} is not a stream`]);
  });

  describe("bad input: a typed error", () => {
    it("base64 that is not base64", () => {
      const error = importError("cassette.json", cassette(CONVERSE_URL, { headers: { "Content-Type": "application/vnd.amazon.eventstream" }, body: "base64:@@@" }));
      expect(error.code).toBe("malformed");
      expect(error.message).toBe('cassette.json: interaction-0: response.body after "base64:" is not valid base64');
    });

    it("a body that is not a string", () => {
      const error = importError("cassette.json", cassette(CHAT_URL, { body: { text: SSE } }));
      expect(error.code).toBe("malformed");
      expect(error.message).toMatch(/^cassette\.json: interaction-0: response\.body is object; the test agent stores a string/);
    });

    it("corrupt event-stream frames inside the base64 body", () => {
      const corrupt = FRAMES.slice();
      corrupt[20] = (corrupt[20] as number) ^ 0xff;
      const error = importError("cassette.json", cassette(CONVERSE_URL, { headers: { "Content-Type": "application/vnd.amazon.eventstream" }, body: `base64:${base64(corrupt)}` }));
      expect(error.code).toBe("malformed");
    });
  });
});

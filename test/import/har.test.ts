import { gzipSync } from "node:zlib";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { detectFormat, importFile, importRecording } from "../../src/import/index.js";
import { replayEvents } from "../../src/replay.js";
import { importError } from "./corpus.js";

/**
 * HAR 1.2 recordings (Polly.js, Playwright, browsers): hand-written entries around a small
 * OpenAI chat stream that calls `lookup` with {"q":"pears"}.
 */

const utf8 = (text: string): Uint8Array => new TextEncoder().encode(text);
const base64 = (bytes: Uint8Array | string): string => Buffer.from(typeof bytes === "string" ? utf8(bytes) : bytes).toString("base64");

const CHAT_URL = "https://api.example.test/v1/chat/completions";

function chunk(delta: unknown, finish: string | null = null): string {
  return `data: ${JSON.stringify({ id: "c1", object: "chat.completion.chunk", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
}

const SSE =
  chunk({ role: "assistant", content: null, tool_calls: [{ index: 0, id: "call_a", type: "function", function: { name: "lookup", arguments: "" } }] }) +
  chunk({ tool_calls: [{ index: 0, function: { arguments: '{"q":' } }] }) +
  chunk({ tool_calls: [{ index: 0, function: { arguments: '"pears"}' } }] }) +
  chunk({}, "tool_calls") +
  "data: [DONE]\n\n";

interface EntryOptions {
  url?: string;
  headers?: Array<{ name: string; value: string }>;
  content?: Record<string, unknown> | null;
  status?: number;
}

function entry({ url = CHAT_URL, headers = [{ name: "content-type", value: "text/event-stream; charset=utf-8" }], content = { mimeType: "text/event-stream", text: SSE }, status = 200 }: EntryOptions = {}): unknown {
  return {
    startedDateTime: "2026-01-01T00:00:00.000Z",
    request: { method: "POST", url, httpVersion: "HTTP/1.1", headers: [], queryString: [], cookies: [], headersSize: -1, bodySize: 0 },
    response: { status, statusText: "OK", httpVersion: "HTTP/1.1", headers, cookies: [], ...(content === null ? {} : { content }), redirectURL: "", headersSize: -1, bodySize: -1 },
    cache: {},
    timings: { send: 0, wait: 1, receive: 0 },
  };
}

function har(entries: unknown[], indent?: number): Uint8Array {
  return utf8(JSON.stringify({ log: { version: "1.2", creator: { name: "hand-written", version: "1" }, entries } }, null, indent));
}

function calls(bytes: Uint8Array, name = "session.har") {
  return importFile(name, bytes).streams.map((stream) => replayEvents(stream).toolCalls.map((call) => [call.name, call.arguments, call.complete]));
}

describe("HAR 1.2", () => {
  it("reads each entry's content.text as the response body, one stream per entry, provider from the URL", () => {
    const result = importFile("session.har", har([entry(), entry()], 2));
    expect(result.format).toBe("har");
    expect(result.streams.map((stream) => [stream.sequence, stream.provider, stream.events.length])).toEqual([
      ["interaction-0", "openai-chat", 5],
      ["interaction-1", "openai-chat", 5],
    ]);
    expect(calls(har([entry(), entry()], 2))).toEqual([[["lookup", { q: "pears" }, true]], [["lookup", { q: "pears" }, true]]]);
  });

  it("is detected by shape, whatever the name, minified or pretty-printed", () => {
    expect(detectFormat("capture.json", har([entry()]))).toBe("har");
    expect(detectFormat("capture.txt", har([entry()], 2))).toBe("har");
    expect(detectFormat("recording.har", har([], 2))).toBe("har");
    expect(importFile("recording.har", har([])).streams).toEqual([]);
  });

  it("decodes a body stored as base64 (content.encoding), decoding like the text one", () => {
    const encoded = entry({ content: { mimeType: "text/event-stream", text: base64(SSE), encoding: "base64" } });
    expect(calls(har([encoded]))).toEqual([[["lookup", { q: "pears" }, true]]]);
  });

  it("takes the media type from content.mimeType when the headers do not say", () => {
    const result = importFile("a.har", har([entry({ headers: [] })]));
    expect(result.streams).toHaveLength(1);
    expect(result.streams[0]?.events).toHaveLength(5);
  });

  it("drops a Content-Encoding the recorder left on a body it stored decoded, and says so", () => {
    const headers = [
      { name: "Content-Type", value: "text/event-stream" },
      { name: "Content-Encoding", value: "gzip" },
    ];
    const result = importFile("a.har", har([entry({ headers })]));
    expect(result.notes).toContain("interaction-0: content-encoding gzip declared, but the recorder stored the body decoded");
    expect(calls(har([entry({ headers })]))).toEqual([[["lookup", { q: "pears" }, true]]]);
  });

  it("inflates a base64 body that is still gzip-compressed (importRecording), and refuses it synchronously with a typed error", async () => {
    const headers = [
      { name: "content-type", value: "text/event-stream" },
      { name: "content-encoding", value: "gzip" },
    ];
    const bytes = har([entry({ headers, content: { mimeType: "text/event-stream", text: base64(gzipSync(utf8(SSE))), encoding: "base64" } })]);
    expect(importError("a.har", bytes).code).toBe("compressed");
    const result = await importRecording("a.har", bytes);
    expect(result.notes).toContain("interaction-0: gzip body decompressed");
    expect(result.streams.map((stream) => replayEvents(stream).toolCalls.map((call) => call.arguments))).toEqual([[{ q: "pears" }]]);
  });

  it("skips entries that hold no stream, saying why, and keeps the others", () => {
    const json = entry({ headers: [{ name: "content-type", value: "application/json" }], content: { mimeType: "application/json", text: "{}" } });
    const noText = entry({ content: { mimeType: "text/event-stream", size: 10 } });
    const outside = entry({ content: { mimeType: "text/event-stream", _file: "body-1.txt" } });
    const noContent = entry({ content: null });
    const result = importFile("a.har", har([json, entry(), noText, outside, noContent]));
    expect(result.streams.map((stream) => stream.sequence)).toEqual(["interaction-1"]);
    expect(result.notes).toEqual([
      `interaction-0: skipped: HTTP 200 application/json response to POST ${CHAT_URL} is not a stream`,
      'interaction-1: 1 non-JSON data payload kept as a string ("[DONE]")',
      "interaction-2: skipped: the response has no content.text",
      'interaction-3: skipped: the response has no content.text (stored outside the HAR in "body-1.txt", not read)',
      "interaction-4: skipped: the response has no 'content' object",
    ]);
  });

  it("keeps a stream recorded with an error status, with a note", () => {
    const result = importFile("a.har", har([entry({ status: 500 })]));
    expect(result.streams).toHaveLength(1);
    expect(result.notes).toContain("interaction-0: recorded with HTTP status 500");
  });

  describe("bad input: a typed error naming the entry", () => {
    it("an encoding HAR does not name", () => {
      const error = importError("a.har", har([entry({ content: { mimeType: "text/event-stream", text: "6461", encoding: "hex" } })]));
      expect(error.code).toBe("malformed");
      expect(error.message).toBe('a.har: interaction-0: content.encoding "hex" is not base64, the only encoding HAR 1.2 names');
    });

    it("content.text that is not base64 although content.encoding says it is", () => {
      const error = importError("a.har", har([entry({ content: { text: "not base64!", encoding: "base64" } })]));
      expect(error.code).toBe("malformed");
      expect(error.message).toBe("a.har: interaction-0: content.text with content.encoding base64 is not valid base64");
    });

    it("an entry without a response object", () => {
      const error = importError("a.har", har([entry(), { request: { method: "GET", url: CHAT_URL } }]));
      expect(error.code).toBe("malformed");
      expect(error.message).toBe("a.har: log.entries[1] has no 'response' object (expected a HAR 1.2 entry)");
    });
  });
});

describe("HAR and test-agent wrappings change nothing (property)", () => {
  const payload = fc.dictionary(fc.string({ maxLength: 5 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 3 });

  it("an SSE body imports to the same events bare, in a HAR entry (text or base64) and in a test-agent cassette", () => {
    fc.assert(
      fc.property(fc.array(payload, { minLength: 1, maxLength: 8 }), fc.boolean(), (payloads, asBase64) => {
        const sse = payloads.map((p) => `data: ${JSON.stringify(p)}\n\n`).join("");
        const bare = importFile("body.sse", utf8(sse)).streams[0]?.events;
        const content = asBase64 ? { mimeType: "text/event-stream", text: base64(sse), encoding: "base64" } : { mimeType: "text/event-stream", text: sse };
        expect(importFile("a.har", har([entry({ content })])).streams[0]?.events).toEqual(bare);
        const agent = { request: { method: "POST", url: CHAT_URL }, response: { status: { code: 200 }, headers: { "Content-Type": "text/event-stream" }, body: asBase64 ? `base64:${base64(sse)}` : sse } };
        expect(importFile("c.json", utf8(JSON.stringify(agent))).streams[0]?.events).toEqual(bare);
      }),
    );
  });
});

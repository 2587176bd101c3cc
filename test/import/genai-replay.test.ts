import { describe, expect, it } from "vitest";
import { detectFormat, ImportError, importFile } from "../../src/import/index.js";
import { replayEvents } from "../../src/replay.js";

/**
 * Google GenAI SDK replay files (js-genai: recordID / bodySegments / statusCode; python-genai:
 * replay_id / body_segments / status_code), each stream chunk stored as a parsed object. The
 * chunks here are hand-written: a Gemini functionCall `lookup` with {"q":"plums"}.
 */

const utf8 = (text: string): Uint8Array => new TextEncoder().encode(text);

const STREAM_URL = "/v1beta/models/some-model:streamGenerateContent?alt=sse";

const CHUNKS = [
  { candidates: [{ content: { role: "model", parts: [{ text: "Looking." }] }, index: 0 }] },
  { candidates: [{ content: { role: "model", parts: [{ functionCall: { name: "lookup", args: { q: "plums" } } }] }, finishReason: "STOP", index: 0 }] },
];

function jsInteraction(url: string, segments: unknown[], statusCode = 200, type = "text/event-stream"): unknown {
  return {
    request: { method: "POST", url, headers: { "Content-Type": "application/json" }, bodySegments: [{ contents: [] }] },
    response: { statusCode, headers: { "Content-Type": type }, bodySegments: segments },
  };
}

function jsReplay(interactions: unknown[]): Uint8Array {
  return utf8(JSON.stringify({ recordID: "Some_Test", interactions }, null, 2));
}

function callsOf(bytes: Uint8Array) {
  return importFile("replay.json", bytes).streams.map((stream) => replayEvents(stream).toolCalls.map((call) => [call.name, call.arguments, call.complete]));
}

function importError(bytes: Uint8Array): ImportError {
  try {
    importFile("replay.json", bytes);
  } catch (error) {
    if (error instanceof ImportError) return error;
    throw error;
  }
  throw new Error("expected an ImportError");
}

describe("Google GenAI SDK replay files", () => {
  it("js-genai: one stream per streamed interaction, one record per stored chunk, decoded as Gemini", () => {
    const bytes = jsReplay([jsInteraction(STREAM_URL, CHUNKS), jsInteraction(STREAM_URL, [CHUNKS[1]])]);
    expect(detectFormat("anything.json", bytes)).toBe("genai-replay");
    const result = importFile("replay.json", bytes);
    expect(result.format).toBe("genai-replay");
    expect(result.streams).toEqual([
      { sequence: "interaction-0", provider: "gemini", events: CHUNKS.map((data) => ({ data })) },
      { sequence: "interaction-1", provider: "gemini", events: [{ data: CHUNKS[1] }] },
    ]);
    expect(result.notes).toEqual(["3 stream chunk(s) stored parsed by the GenAI SDK (no SSE framing recorded): one record each"]);
    expect(callsOf(bytes)).toEqual([[["lookup", { q: "plums" }, true]], [["lookup", { q: "plums" }, true]]]);
  });

  it("python-genai spelling (replay_id, body_segments, status_code), with a redacted URL prefix", () => {
    const doc = {
      replay_id: "tests/some/replay",
      interactions: [
        {
          request: { method: "post", url: "{MLDEV_URL_PREFIX}/models/some-model:streamGenerateContent?alt=sse", headers: {}, body_segments: [{}] },
          response: { status_code: 200, headers: { "Content-Type": "text/event-stream" }, body_segments: CHUNKS, sdk_response_segments: [] },
        },
      ],
    };
    expect(callsOf(utf8(JSON.stringify(doc, null, 2)))).toEqual([[["lookup", { q: "plums" }, true]]]);
  });

  it("a Vertex URL decodes as Gemini too", () => {
    const url = "/v1beta1/projects/REDACTED/locations/REDACTED/publishers/google/models/some-model:streamGenerateContent?alt=sse";
    expect(importFile("replay.json", jsReplay([jsInteraction(url, CHUNKS)])).streams[0]?.provider).toBe("gemini");
  });

  it("skips interactions that are not streams (generateContent, other endpoints, byte segments), saying why", () => {
    const single = jsInteraction("/v1beta/models/some-model:generateContent", [CHUNKS[1]], 200, "application/json; charset=UTF-8");
    const bytesOnly = { request: { method: "GET", url: "/download/file" }, response: { headers: {}, byte_segments: ["AAAA"] } };
    const result = importFile("replay.json", jsReplay([single, jsInteraction(STREAM_URL, CHUNKS), bytesOnly]));
    expect(result.streams.map((stream) => stream.sequence)).toEqual(["interaction-1"]);
    expect(result.notes).toEqual([
      "interaction-0: skipped: HTTP 200 application/json response to POST /v1beta/models/some-model:generateContent is not a stream",
      "interaction-2: skipped: a binary response (byte segments), not a stream",
      "2 stream chunk(s) stored parsed by the GenAI SDK (no SSE framing recorded): one record each",
    ]);
  });

  it("keeps a streamed request answered with an error status, with a note; it decodes as an error turn", () => {
    const error = { error: { code: 429, message: "Resource exhausted", status: "RESOURCE_EXHAUSTED" } };
    const result = importFile("replay.json", jsReplay([jsInteraction(STREAM_URL, [error], 429, "application/json")]));
    expect(result.notes[0]).toBe("interaction-0: recorded with HTTP status 429");
    const turn = replayEvents(result.streams[0]!);
    expect(turn.status).toBe("error");
    expect(turn.toolCalls).toEqual([]);
  });

  it("an empty replay imports to no stream", () => {
    const result = importFile("replay.json", jsReplay([]));
    expect(result.format).toBe("genai-replay");
    expect(result.streams).toEqual([]);
  });

  describe("bad input: a typed error naming the interaction", () => {
    it("an interaction without a response", () => {
      const error = importError(jsReplay([jsInteraction(STREAM_URL, CHUNKS), { request: { url: STREAM_URL } }]));
      expect(error.code).toBe("malformed");
      expect(error.message).toBe("replay.json: interactions[1] has no 'response' object (expected a GenAI SDK replay interaction)");
    });

    it("a response without body segments", () => {
      const error = importError(jsReplay([{ request: { url: STREAM_URL }, response: { statusCode: 200, headers: {} } }]));
      expect(error.code).toBe("malformed");
      expect(error.message).toBe("replay.json: interaction-0: the response has no bodySegments list");
    });
  });
});

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { collectTurn } from "../../src/adapters/web.js";
import type { ReplayServer } from "../../src/node/replay-server.js";
import { fileTurn, plain, postJson, startTestdataServer, streamsOf } from "./support.js";

/**
 * Plain fetch against the replay server for the providers without an SDK adapter: Gemini in both
 * of its wire forms, Bedrock's binary event stream, Ollama's NDJSON, and Claude's events wrapped
 * as Bedrock InvokeModel chunks. Each decodes to the recorded file's turn.
 */

let server: ReplayServer;
beforeAll(async () => {
  server = await startTestdataServer();
});
afterAll(async () => {
  await server?.close();
});

describe.each(streamsOf("gemini").map((stream) => [stream.key, stream] as const))("gemini %s", (_key, stream) => {
  it("streamGenerateContent?alt=sse gives the file's turn", async () => {
    const response = await postJson(server, "/v1beta/models/gemini-test:streamGenerateContent?alt=sse", stream, {});
    expect(response.headers.get("content-type")).toContain("text/event-stream");
    expect(plain(await collectTurn("gemini", response, { sequence: stream.sequence }))).toEqual(fileTurn(stream));
  });

  it("streamGenerateContent without alt=sse (one JSON array) gives the file's turn", async () => {
    const response = await postJson(server, "/v1beta/models/gemini-test:streamGenerateContent", stream, {});
    expect(response.headers.get("content-type")).toContain("application/json");
    expect(plain(await collectTurn("gemini", response, { sequence: stream.sequence }))).toEqual(fileTurn(stream));
  });
});

describe.each(streamsOf("bedrock").map((stream) => [stream.key, stream] as const))("bedrock %s", (_key, stream) => {
  it("converse-stream (binary event stream) gives the file's turn", async () => {
    const response = await postJson(server, "/model/anthropic.claude-test/converse-stream", stream, {});
    expect(response.headers.get("content-type")).toBe("application/vnd.amazon.eventstream");
    expect(plain(await collectTurn("bedrock", response, { sequence: stream.sequence }))).toEqual(fileTurn(stream));
  });
});

describe.each(streamsOf("ollama").map((stream) => [stream.key, stream] as const))("ollama %s", (_key, stream) => {
  it("/api/chat (NDJSON) gives the file's turn", async () => {
    const response = await postJson(server, "/api/chat", stream, { model: "qwen3", messages: [] });
    expect(response.headers.get("content-type")).toBe("application/x-ndjson");
    expect(plain(await collectTurn("ollama", response, { sequence: stream.sequence }))).toEqual(fileTurn(stream));
  });
});

describe.each(streamsOf("anthropic").map((stream) => [stream.key, stream] as const))("anthropic on Bedrock %s", (_key, stream) => {
  it("invoke-with-response-stream (Messages events in base64 chunk frames) gives the file's turn", async () => {
    const response = await postJson(server, "/model/anthropic.claude-test/invoke-with-response-stream", stream, {});
    expect(plain(await collectTurn("anthropic", response, { sequence: stream.sequence, framing: "aws-eventstream" }))).toEqual(fileTurn(stream));
  });
});

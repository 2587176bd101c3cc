import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadReplayStreams, startReplayServer, type ReplayServer } from "../../src/node/replay-server.js";
import { TESTDATA } from "../helpers/testdata.js";
import { head, rawRequest } from "./http-support.js";

/**
 * `toolwire serve` as an HTTP server, over raw sockets: a 405 names the methods allowed, HEAD is
 * answered where GET is, a body over the limit is a 413 (not a 500), and a second Host is a 400.
 */

let server: ReplayServer;

beforeAll(async () => {
  server = await startReplayServer({ streams: await loadReplayStreams([join(TESTDATA, "openai-chat", "handwritten__gemini-openai-compat-missing-index.ndjson")]) });
});
afterAll(async () => {
  await server?.close();
});

describe("toolwire serve over HTTP", () => {
  it("a GET on a stream route is 405 with Allow: POST (RFC 9110 §15.5.6)", async () => {
    const response = await rawRequest(server.port, [head("GET /v1/chat/completions HTTP/1.1")]);
    expect(response.status).toBe(405);
    expect(response.headers.allow).toBe("POST");
  });

  it("a POST on /streams is 405 with Allow: GET, HEAD", async () => {
    const response = await rawRequest(server.port, [head("POST /streams HTTP/1.1", { "content-length": 0 })]);
    expect(response.status).toBe(405);
    expect(response.headers.allow).toBe("GET, HEAD");
  });

  it("HEAD /streams is answered as GET, without the body", async () => {
    const get = await rawRequest(server.port, [head("GET /streams HTTP/1.1")]);
    const response = await rawRequest(server.port, [head("HEAD /streams HTTP/1.1")]);
    expect(response.status).toBe(200);
    expect(response.headers["content-length"]).toBe(String(get.body.length));
    expect(response.raw.length).toBe(response.raw.indexOf("\r\n\r\n") + 4);
  });

  it("a request body over 16 MiB is 413 request_too_large, and the connection closes", async () => {
    const size = 16 * 1024 * 1024 + 1;
    const response = await rawRequest(server.port, [head("POST /v1/chat/completions HTTP/1.1", { "content-type": "application/json", "content-length": size }), Buffer.alloc(size, 32)]);
    expect(response.status).toBe(413);
    expect(response.headers.connection).toBe("close");
    expect((JSON.parse(response.body.toString()) as { error: { type: string } }).error.type).toBe("request_too_large");
  });

  it("a second Host header is 400 (RFC 9112 §3.2)", async () => {
    const response = await rawRequest(server.port, ["GET /streams HTTP/1.1\r\nHost: 127.0.0.1\r\nHost: evil.example\r\nConnection: close\r\n\r\n"]);
    expect(response.status).toBe(400);
  });
});

import { connect } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startProxy, type ProxyServer } from "../../src/node/proxy.js";
import { head, parseResponse, recordingUpstream, type RawResponse, type RecordingUpstream } from "./http-support.js";

/**
 * A client that sends its whole request before it reads the answer (Python's http.client and
 * urllib, curl without `Expect`) must get the 413 for a body over the limit, not a reset while
 * it is still writing: the proxy reads and discards the rest of the body after answering (as
 * nginx's lingering close), for a bounded time, instead of closing a socket with unread bytes
 * in it (which sends a reset that fails the client's write and discards the answer).
 */

let upstream: RecordingUpstream;
let proxy: ProxyServer;
beforeAll(async () => {
  upstream = await recordingUpstream();
  proxy = await startProxy({ upstream: upstream.url, maxBodyBytes: 4096 });
});
afterAll(async () => {
  await proxy?.close();
  await upstream?.close();
});

/** Writes `head` and `body` in 64 KiB pieces, each after the last was taken, and only then reads the answer. */
function writeAllThenRead(port: number, requestHead: string, body: Buffer): Promise<{ writeError: string | null; response: RawResponse }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1");
    const chunks: Buffer[] = [];
    let writeError: string | null = null;
    socket.on("data", (chunk: Buffer) => chunks.push(chunk));
    socket.on("error", (error: NodeJS.ErrnoException) => (writeError ??= error.code ?? error.message));
    const settle = (): void => {
      try {
        resolve({ writeError, response: parseResponse(Buffer.concat(chunks)) });
      } catch (error) {
        reject(new Error(`${writeError ?? "no write error"}; ${(error as Error).message}`));
      }
    };
    socket.on("close", settle);
    socket.on("connect", () => {
      void (async () => {
        const write = (piece: string | Buffer): Promise<void> => new Promise((done) => socket.write(piece, () => done()));
        await write(requestHead);
        for (let at = 0; at < body.length && !socket.destroyed; at += 65_536) await write(body.subarray(at, at + 65_536));
        // Everything is sent: now read the answer (the proxy may keep the connection; give it a moment).
        setTimeout(() => socket.end(), 300);
      })();
    });
  });
}

describe("a body over the limit, from a client that writes it all before reading", () => {
  const content = Buffer.from(JSON.stringify({ model: "m", max_tokens: 5, messages: [{ role: "user", content: "x".repeat(8 * 1024 * 1024) }] }));

  it("with a Content-Length over the limit: the 413 arrives and no write fails", async () => {
    const before = upstream.seen.length;
    const { writeError, response } = await writeAllThenRead(proxy.port, head("POST /v1/messages HTTP/1.1", { "content-type": "application/json", "content-length": content.length, connection: "keep-alive" }), content);
    expect(writeError).toBeNull();
    expect(response.status).toBe(413);
    expect((JSON.parse(response.body.toString()) as { error: { type: string } }).error.type).toBe("request_too_large");
    expect(upstream.seen.length).toBe(before);
  });

  it("with `Connection: close` (urllib sends it): the 413 arrives and no write fails", async () => {
    const { writeError, response } = await writeAllThenRead(proxy.port, head("POST /v1/messages HTTP/1.1", { "content-type": "application/json", "content-length": content.length }), content);
    expect(writeError).toBeNull();
    expect(response.status).toBe(413);
  });

  it("from an HTTP/1.0 client: the 413 arrives and no write fails", async () => {
    const { writeError, response } = await writeAllThenRead(proxy.port, head("POST /v1/messages HTTP/1.0", { "content-type": "application/json", "content-length": content.length, connection: "" }), content);
    expect(writeError).toBeNull();
    expect(response.status).toBe(413);
  });

  it("chunked (found over the limit while reading): the 413 arrives and no write fails", async () => {
    const chunked = Buffer.concat([Buffer.from(`${content.length.toString(16)}\r\n`), content, Buffer.from("\r\n0\r\n\r\n")]);
    const { writeError, response } = await writeAllThenRead(proxy.port, head("POST /v1/chat/completions HTTP/1.1", { "content-type": "application/json", "transfer-encoding": "chunked", connection: "keep-alive" }), chunked);
    expect(writeError).toBeNull();
    expect(response.status).toBe(413);
    expect((JSON.parse(response.body.toString()) as { error: { code: string } }).error.code).toBe("request_too_large");
  });
});

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

describe("a refusal before the body is read (no route, a Host not answered, a bad target), from a client that writes it all first", () => {
  const content = Buffer.from(JSON.stringify({ model: "m", messages: [{ role: "user", content: "x".repeat(8 * 1024 * 1024) }] }));
  let routed: ProxyServer;
  beforeAll(async () => {
    routed = await startProxy({ routes: [{ prefix: "/anthropic", upstream: upstream.url }], maxBodyBytes: 4096 });
  });
  afterAll(async () => {
    await routed?.close();
  });

  it("404 for a path no route takes: the answer arrives and no write fails", async () => {
    const { writeError, response } = await writeAllThenRead(routed.port, head("POST /nowhere/v1/messages HTTP/1.1", { "content-type": "application/json", "content-length": content.length }), content);
    expect(writeError).toBeNull();
    expect(response.status).toBe(404);
  });

  it("403 for a Host the proxy does not answer: the answer arrives and no write fails", async () => {
    const { writeError, response } = await writeAllThenRead(
      routed.port,
      head("POST /anthropic/v1/messages HTTP/1.1", { host: "evil.example", "content-type": "application/json", "content-length": content.length }),
      content,
    );
    expect(writeError).toBeNull();
    expect(response.status).toBe(403);
  });

  it("chunked, to a path no route takes: the answer arrives and no write fails", async () => {
    const chunked = Buffer.concat([Buffer.from(`${content.length.toString(16)}\r\n`), content, Buffer.from("\r\n0\r\n\r\n")]);
    const { writeError, response } = await writeAllThenRead(routed.port, head("POST /nowhere HTTP/1.1", { "content-type": "application/json", "transfer-encoding": "chunked" }), chunked);
    expect(writeError).toBeNull();
    expect(response.status).toBe(404);
  });

  it("a refused request's connection serves the next request once the body is read (keep-alive)", async () => {
    const small = Buffer.from('{"model":"m"}');
    const socket = connect(routed.port, "127.0.0.1");
    const received: Buffer[] = [];
    socket.on("data", (chunk: Buffer) => received.push(chunk));
    await new Promise<void>((done) => socket.on("connect", () => done()));
    socket.write(head("POST /nowhere HTTP/1.1", { "content-type": "application/json", "content-length": small.length, connection: "keep-alive" }) + small.toString());
    socket.write(head("POST /nowhere/again HTTP/1.1", { "content-type": "application/json", "content-length": small.length, connection: "keep-alive" }) + small.toString());
    await new Promise((done) => setTimeout(done, 500));
    socket.end();
    const text = Buffer.concat(received).toString("latin1");
    expect(text.match(/HTTP\/1\.1 404/g)?.length).toBe(2);
  });
});

describe("the time a refused body is read and discarded is bounded", () => {
  let lingering: ProxyServer;
  beforeAll(async () => {
    lingering = await startProxy({ upstream: upstream.url, maxBodyBytes: 4096, lingerMs: 300 });
  });
  afterAll(async () => {
    await lingering?.close();
  });

  it("a client that declares a large body and then stops sending has its connection closed after lingerMs, with the 413 sent first", async () => {
    const socket = connect(lingering.port, "127.0.0.1");
    const received: Buffer[] = [];
    socket.on("data", (chunk: Buffer) => received.push(chunk));
    socket.on("error", () => {});
    const started = Date.now();
    await new Promise<void>((done) => socket.on("connect", () => done()));
    socket.write(head("POST /v1/messages HTTP/1.1", { "content-type": "application/json", "content-length": 10_000_000 }) + "{".repeat(100));
    await new Promise<void>((done) => socket.on("close", () => done()));
    const elapsed = Date.now() - started;
    expect(elapsed).toBeGreaterThanOrEqual(250);
    expect(elapsed).toBeLessThan(5_000);
    expect(parseResponse(Buffer.concat(received)).status).toBe(413);
  });
});

import { gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startProxy, type ProxyServer } from "../../src/node/proxy.js";
import { head, rawRequest, recordingUpstream, type RecordingUpstream } from "./http-support.js";

/**
 * `toolwire proxy` against the edges an outside check found (raw sockets, a recording upstream):
 * pipelined requests reach the upstream in order, transfer codings other than chunked are refused,
 * encoded slashes cannot hide a dot segment, HEAD keeps its Content-Length, and an upstream's
 * unasked-for 101 is a 502.
 */

const CHAT = '{"model":"m","messages":[]}';

let upstream: RecordingUpstream;
let proxy: ProxyServer;

beforeAll(async () => {
  upstream = await recordingUpstream((seen, res) => {
    switch (seen.headers["x-scenario"]) {
      case "head":
        res.writeHead(200, { "content-type": "application/octet-stream", "content-length": 12345 });
        res.end();
        return;
      case "switch": {
        // A 101 to a request that asked for no upgrade (a broken upstream).
        const socket = res.socket;
        socket?.write("HTTP/1.1 101 Switching Protocols\r\nUpgrade: foo\r\nConnection: Upgrade\r\n\r\n");
        setTimeout(() => socket?.destroy(), 5000);
        return;
      }
      case "late":
        // The POST's answer comes late: a GET pipelined behind it must still reach the upstream after it.
        setTimeout(() => {
          res.writeHead(200, { "content-type": "application/json" });
          res.end('{"ok":true}');
        }, 100);
        return;
      default:
        res.writeHead(200, { "content-type": "application/json" });
        res.end('{"ok":true}');
    }
  });
  proxy = await startProxy({ upstream: upstream.url });
});
afterAll(async () => {
  await proxy?.close();
  await upstream?.close();
});

/** The status codes of every response in a raw exchange, in order. */
function statuses(raw: Buffer): number[] {
  return [...raw.toString("latin1").matchAll(/HTTP\/1\.[01] (\d{3}) /g)].map((match) => Number(match[1]));
}

describe("pipelined requests", () => {
  it("a GET pipelined behind a POST reaches the upstream after it (RFC 9112 §9.3.2), and the answers come in order", async () => {
    const before = upstream.seen.length;
    const response = await rawRequest(proxy.port, [
      head("POST /v1/chat/completions HTTP/1.1", { "content-type": "application/json", "content-length": CHAT.length, "x-scenario": "late", connection: "keep-alive" }) + CHAT + head("GET /v1/models?after HTTP/1.1"),
    ]);
    expect(statuses(response.raw)).toEqual([200, 200]);
    expect(upstream.seen.slice(before).map((seen) => `${seen.method} ${seen.url}`)).toEqual(["POST /v1/chat/completions", "GET /v1/models?after"]);
  });

  it("a request pipelined behind one the proxy refused (and closed the connection on) is not forwarded", async () => {
    const before = upstream.seen.length;
    const response = await rawRequest(proxy.port, [head("GET /v1/models?first HTTP/1.1", { host: "evil.example", connection: "keep-alive" }) + head("GET /v1/models?second HTTP/1.1")]);
    expect(statuses(response.raw)).toEqual([403]);
    expect(upstream.seen.length).toBe(before);
  });
});

describe("request framing", () => {
  it("a transfer coding before chunked (`gzip, chunked`) is refused with 501, not forwarded with the coding dropped", async () => {
    const before = upstream.seen.length;
    const body = gzipSync("hello");
    const response = await rawRequest(proxy.port, [head("POST /v1/files HTTP/1.1", { "transfer-encoding": "gzip, chunked" }), Buffer.concat([Buffer.from(`${body.length.toString(16)}\r\n`), body, Buffer.from("\r\n0\r\n\r\n")])]);
    expect(response.status).toBe(501);
    expect(upstream.seen.length).toBe(before);
  });

  describe("an encoded slash cannot hide a dot segment", () => {
    let based: ProxyServer;
    beforeAll(async () => {
      based = await startProxy({ upstream: `${upstream.url}/base` });
    });
    afterAll(async () => {
      await based?.close();
    });

    it.each(["/v1/..%2fsecret", "/v1/..%2F..%2Fsecret", "/v1/%2e%2e%5csecret", "/v1/x%2f..%2f..%2fsecret"])("%s is refused with 400", async (path) => {
      const before = upstream.seen.length;
      const response = await rawRequest(based.port, [head(`GET ${path} HTTP/1.1`)]);
      expect(response.status).toBe(400);
      expect(upstream.seen.length).toBe(before);
    });

    it("an encoded slash elsewhere passes as it came", async () => {
      const response = await rawRequest(based.port, [head("GET /v1/files/a%2Fb HTTP/1.1")]);
      expect(response.status).toBe(200);
      expect(upstream.seen.at(-1)?.url).toBe("/base/v1/files/a%2Fb");
    });
  });
});

describe("responses", () => {
  it("a HEAD keeps the upstream's Content-Length and has no body", async () => {
    const response = await rawRequest(proxy.port, [head("HEAD /v1/files/x/content HTTP/1.1", { "x-scenario": "head" })]);
    expect(response.status).toBe(200);
    expect(response.headers["content-length"]).toBe("12345");
    expect(response.headers["transfer-encoding"]).toBeUndefined();
    expect(response.body.length).toBe(0);
  });

  it("an upstream that answers 101 to a plain request is a 502 at once, not a request left waiting", async () => {
    const started = Date.now();
    const response = await rawRequest(proxy.port, [head("GET /v1/models HTTP/1.1", { "x-scenario": "switch" })], { timeoutMs: 3000 });
    expect(response.status).toBe(502);
    expect(Date.now() - started).toBeLessThan(2000);
    expect(proxy.metrics()).toMatch(/toolwire_proxy_requests_in_flight 0\n/);
  });
});

describe("connections", () => {
  it("an idle keep-alive connection is still open after Node's default 5 s (the proxy keeps it 75 s)", async () => {
    const socket = (await import("node:net")).connect(proxy.port, "127.0.0.1");
    try {
      await new Promise<void>((resolve) => socket.on("connect", resolve));
      const answers: Buffer[] = [];
      socket.on("data", (chunk: Buffer) => answers.push(chunk));
      let closed = false;
      socket.on("close", () => (closed = true));
      socket.write(head("GET /healthz HTTP/1.1", { connection: "keep-alive" }));
      await new Promise((resolve) => setTimeout(resolve, 5600));
      expect(Buffer.concat(answers).toString("latin1")).toMatch(/^HTTP\/1\.1 200/);
      expect(closed).toBe(false);
      socket.write(head("GET /healthz HTTP/1.1", { connection: "close" }));
      await new Promise<void>((resolve) => socket.on("close", () => resolve()));
      expect(Buffer.concat(answers).toString("latin1").match(/HTTP\/1\.1 200/g)).toHaveLength(2);
    } finally {
      socket.destroy();
    }
  }, 15_000);
});

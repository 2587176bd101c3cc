import { randomBytes } from "node:crypto";
import { brotliCompressSync, deflateSync, gzipSync } from "node:zlib";
import { createServer, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { main } from "../../src/cli/main.js";
import { createProxyHandler, startProxy, type ProxyServer } from "../../src/node/proxy.js";
import { head, rawRequest, recordingUpstream, type RecordingUpstream } from "./http-support.js";

/**
 * `toolwire proxy` as an HTTP component, tried the way one tries nginx or Envoy: raw sockets on
 * 127.0.0.1, a recording upstream. Bodies pass byte for byte, `Expect` is answered and never
 * forwarded, HTTP/1.0 clients get a response without trailers, request targets other than a path
 * are refused, and so are duplicate Host headers, paths that leave the upstream's base path, and
 * Host names that are not allowed; headers named in `Connection` are not forwarded.
 */

const SSE_CALL = [
  `data: {"id":"c","choices":[{"index":0,"delta":{"role":"assistant","tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"f","arguments":"{\\"a\\":1}"}}]}}]}`,
  `data: {"id":"c","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`,
  `data: [DONE]`,
  ``,
].join("\n\n");

const ORPHAN = {
  model: "m",
  max_tokens: 10,
  messages: [
    { role: "user", content: "list the files" },
    { role: "assistant", content: [{ type: "tool_use", id: "toolu_orphan_1", name: "shell", input: { command: "ls" } }] },
    { role: "user", content: "and now?" },
  ],
};
const CLEAN = { model: "m", max_tokens: 10, messages: [{ role: "user", content: "hi" }] };

let upstream: RecordingUpstream;
let proxy: ProxyServer;
const logs: string[] = [];

beforeAll(async () => {
  upstream = await recordingUpstream((seen, res) => {
    if (seen.url.includes("/chat/completions")) {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.end(SSE_CALL);
      return;
    }
    res.writeHead(200, { "content-type": "application/json" });
    res.end('{"ok":true}');
  });
  proxy = await startProxy({ upstream: upstream.url, log: (line) => logs.push(line) });
});
afterAll(async () => {
  await proxy?.close();
  await upstream?.close();
});

function last(): RecordingUpstream["seen"][number] {
  const seen = upstream.seen.at(-1);
  if (!seen) throw new Error("nothing reached the upstream");
  return seen;
}

describe("request bodies pass byte for byte", () => {
  it.each(["/v1/files", "/v1/audio/transcriptions", "/v1/messages"])("1,024 random bytes (not UTF-8) to %s arrive as they were sent", async (path) => {
    const bytes = Buffer.concat([Buffer.from([0xff, 0xfe, 0xc3]), randomBytes(1021)]);
    const before = upstream.seen.length;
    const response = await rawRequest(proxy.port, [head(`POST ${path} HTTP/1.1`, { "content-type": "application/octet-stream", "content-length": bytes.length }), bytes]);
    expect(response.status).toBe(200);
    expect(upstream.seen.length).toBe(before + 1);
    expect(last().body.equals(bytes)).toBe(true);
    expect(last().headers["content-length"]).toBe("1024");
  });

  it("a chunked upload arrives with its bytes", async () => {
    const bytes = randomBytes(3000);
    const chunked = Buffer.concat([Buffer.from("400\r\n"), bytes.subarray(0, 1024), Buffer.from("\r\n"), Buffer.from(`${(3000 - 1024).toString(16)}\r\n`), bytes.subarray(1024), Buffer.from("\r\n0\r\n\r\n")]);
    const response = await rawRequest(proxy.port, [head("POST /v1/files HTTP/1.1", { "transfer-encoding": "chunked" }), chunked]);
    expect(response.status).toBe(200);
    expect(last().body.equals(bytes)).toBe(true);
  });

  for (const [encoding, compress] of [
    ["gzip", gzipSync],
    ["deflate", deflateSync],
    ["br", brotliCompressSync],
  ] as const) {
    it(`a ${encoding} JSON body that needs no repair passes compressed, as it came`, async () => {
      const bytes = compress(Buffer.from(JSON.stringify(CLEAN)));
      const response = await rawRequest(proxy.port, [head("POST /v1/messages HTTP/1.1", { "content-type": "application/json", "content-encoding": encoding, "content-length": bytes.length }), bytes]);
      expect(response.status).toBe(200);
      expect(last().body.equals(bytes)).toBe(true);
      expect(last().headers["content-encoding"]).toBe(encoding);
    });

    it(`a ${encoding} JSON body that is repaired is decompressed, repaired and sent without the encoding`, async () => {
      const bytes = compress(Buffer.from(JSON.stringify(ORPHAN)));
      const response = await rawRequest(proxy.port, [head("POST /v1/messages HTTP/1.1", { "content-type": "application/json", "content-encoding": encoding, "content-length": bytes.length }), bytes]);
      expect(response.status).toBe(200);
      expect(response.headers["x-toolwire-repairs"]).toContain("result_inserted");
      expect(last().headers["content-encoding"]).toBeUndefined();
      const sent = JSON.parse(last().body.toString("utf8")) as typeof ORPHAN;
      expect(JSON.stringify(sent.messages)).toContain("tool_result");
      expect(last().headers["content-length"]).toBe(String(last().body.length));
    });
  }

  it("a compressed body that does not decompress passes as it came", async () => {
    const bytes = Buffer.from("not gzip at all");
    const response = await rawRequest(proxy.port, [head("POST /v1/messages HTTP/1.1", { "content-type": "application/json", "content-encoding": "gzip", "content-length": bytes.length }), bytes]);
    expect(response.status).toBe(200);
    expect(last().body.equals(bytes)).toBe(true);
    expect(last().headers["content-encoding"]).toBe("gzip");
  });
});

describe("Expect and HTTP/1.0", () => {
  it("Expect: 100-continue is answered with 100 and not forwarded (as curl sends it for uploads over 1 MB)", async () => {
    const bytes = randomBytes(2048);
    const response = await rawRequest(proxy.port, [head("POST /v1/files HTTP/1.1", { expect: "100-continue", "content-length": bytes.length }), bytes], { waitFor: /100 Continue/ });
    expect(response.interim).toEqual([100]);
    expect(response.status).toBe(200);
    expect(last().headers.expect).toBeUndefined();
    expect(last().body.equals(bytes)).toBe(true);
  });

  it("Expect: 100-continue on a route the proxy repairs", async () => {
    const text = JSON.stringify(CLEAN);
    const response = await rawRequest(proxy.port, [head("POST /v1/messages HTTP/1.1", { expect: "100-continue", "content-type": "application/json", "content-length": Buffer.byteLength(text) }), text], { waitFor: /100 Continue/ });
    expect(response.status).toBe(200);
    expect(last().headers.expect).toBeUndefined();
  });

  it("an HTTP/1.0 client gets the JSON response, without a trailer", async () => {
    const text = JSON.stringify(CLEAN);
    const response = await rawRequest(proxy.port, [`POST /v1/messages HTTP/1.0\r\nHost: 127.0.0.1\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(text)}\r\n\r\n${text}`]);
    expect(response.status).toBe(200);
    expect(response.headers.trailer).toBeUndefined();
    expect(response.body.toString()).toBe('{"ok":true}');
  });

  it("an HTTP/1.0 client gets a re-encoded stream whole, delimited by the connection's end", async () => {
    const text = JSON.stringify({ model: "m", stream: true, messages: [] });
    const response = await rawRequest(proxy.port, [`POST /v1/chat/completions HTTP/1.0\r\nHost: 127.0.0.1\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(text)}\r\n\r\n${text}`]);
    expect(response.status).toBe(200);
    expect(response.headers.trailer).toBeUndefined();
    expect(response.headers["transfer-encoding"]).toBeUndefined();
    expect(response.body.toString()).toContain("[DONE]");
  });

  it("an HTTP/1.1 client still gets the repairs trailer on a stream", async () => {
    const text = JSON.stringify({ model: "m", stream: true, messages: [] });
    const response = await rawRequest(proxy.port, [head("POST /v1/chat/completions HTTP/1.1", { "content-type": "application/json", "content-length": Buffer.byteLength(text) }), text]);
    expect(response.status).toBe(200);
    expect(response.headers.trailer).toBe("x-toolwire-repairs");
    expect(response.body.toString()).toContain("[DONE]");
  });
});

describe("request targets", () => {
  it.each([
    ["absolute-form naming another host", "POST http://other.example/v1/chat/completions HTTP/1.1"],
    ["absolute-form whose scheme completes the upstream's host", "POST pany://x/v1/chat/completions HTTP/1.1"],
    ["asterisk-form", "OPTIONS * HTTP/1.1"],
  ])("%s is refused with 400, and nothing reaches the upstream", async (_name, line) => {
    const before = upstream.seen.length;
    const response = await rawRequest(proxy.port, [head(line, { "content-length": 0 })]);
    expect(response.status).toBe(400);
    expect(upstream.seen.length).toBe(before);
  });

  it("authority-form (CONNECT) is refused with 400", async () => {
    const before = upstream.seen.length;
    const response = await rawRequest(proxy.port, [head("CONNECT other.example:443 HTTP/1.1", { host: "other.example:443" })]);
    expect(response.status).toBe(400);
    expect(upstream.seen.length).toBe(before);
  });

  describe("paths under an upstream with a base path", () => {
    let based: ProxyServer;
    beforeAll(async () => {
      based = await startProxy({ upstream: `${upstream.url}/base/` });
    });
    afterAll(async () => {
      await based?.close();
    });

    it("a path is forwarded under the base path", async () => {
      const response = await rawRequest(based.port, [head("GET /v1/models?x=1 HTTP/1.1")]);
      expect(response.status).toBe(200);
      expect(last().url).toBe("/base/v1/models?x=1");
    });

    it("`//host/...` stays a path on the upstream", async () => {
      const response = await rawRequest(based.port, [head("GET //other.example/v1/models HTTP/1.1")]);
      expect(response.status).toBe(200);
      expect(last().headers.host).toBe(`127.0.0.1:${upstream.port}`);
      expect(last().url).toBe("/base//other.example/v1/models");
    });

    it.each(["/../secret", "/v1/../../secret", "/%2e%2e/secret", "/%2E%2e/%2e%2E/secret", "/..\\secret"])("%s, which resolves outside the base path, is refused with 400", async (path) => {
      const before = upstream.seen.length;
      const response = await rawRequest(based.port, [head(`GET ${path} HTTP/1.1`)]);
      expect(response.status).toBe(400);
      expect(upstream.seen.length).toBe(before);
    });
  });
});

describe("headers", () => {
  it("a duplicate Host is refused with 400", async () => {
    const before = upstream.seen.length;
    const response = await rawRequest(proxy.port, [head("GET /v1/models HTTP/1.1", {}, ["Host: other.example"])]);
    expect(response.status).toBe(400);
    expect(upstream.seen.length).toBe(before);
  });

  it("headers named in Connection are hop-by-hop: not forwarded", async () => {
    const response = await rawRequest(proxy.port, [head("GET /v1/models HTTP/1.1", { connection: "close, x-hop-secret, X-Other", "x-hop-secret": "1", "x-other": "2", "x-kept": "3" })]);
    expect(response.status).toBe(200);
    expect(last().headers["x-hop-secret"]).toBeUndefined();
    expect(last().headers["x-other"]).toBeUndefined();
    expect(last().headers["x-kept"]).toBe("3");
  });

  it("response headers named in the upstream's Connection are not forwarded", async () => {
    const hop = await recordingUpstream((_seen, res) => {
      res.writeHead(200, { "content-type": "application/json", connection: "keep-alive, x-upstream-hop", "x-upstream-hop": "1", "x-upstream-kept": "2" });
      res.end("{}");
    });
    const front = await startProxy({ upstream: hop.url });
    try {
      const response = await rawRequest(front.port, [head("GET /v1/models HTTP/1.1")]);
      expect(response.status).toBe(200);
      expect(response.headers["x-upstream-hop"]).toBeUndefined();
      expect(response.headers["x-upstream-kept"]).toBe("2");
    } finally {
      await front.close();
      await hop.close();
    }
  });
});

describe("Host names off loopback", () => {
  /** The handler as it runs when bound to 0.0.0.0 (the test server itself listens on 127.0.0.1 only). */
  async function boundAs(options: { allowHosts?: string[] }): Promise<{ port: number; close(): Promise<void> }> {
    const server: Server = createServer(createProxyHandler({ upstream: upstream.url, host: "0.0.0.0", ...options }));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    return {
      port: (server.address() as AddressInfo).port,
      close: () => new Promise<void>((resolve) => server.close(() => resolve())),
    };
  }

  it("bound to 0.0.0.0, a Host that is not allowed is refused (403), an allowed one and loopback names pass", async () => {
    const front = await boundAs({ allowHosts: ["proxy.internal"] });
    try {
      const before = upstream.seen.length;
      expect((await rawRequest(front.port, [head("GET /v1/models HTTP/1.1", { host: "evil.example" })])).status).toBe(403);
      expect(upstream.seen.length).toBe(before);
      expect((await rawRequest(front.port, [head("GET /v1/models HTTP/1.1", { host: "proxy.internal:8080" })])).status).toBe(200);
      expect((await rawRequest(front.port, [head("GET /v1/models HTTP/1.1", { host: "PROXY.internal" })])).status).toBe(200);
      expect((await rawRequest(front.port, [head("GET /v1/models HTTP/1.1", { host: "localhost" })])).status).toBe(200);
    } finally {
      await front.close();
    }
  });

  it("bound to 0.0.0.0 with no allow-list, only loopback names pass", async () => {
    const front = await boundAs({});
    try {
      expect((await rawRequest(front.port, [head("GET /v1/models HTTP/1.1", { host: "evil.example" })])).status).toBe(403);
      expect((await rawRequest(front.port, [head("GET /v1/models HTTP/1.1", { host: "127.0.0.1:1" })])).status).toBe(200);
    } finally {
      await front.close();
    }
  });

  async function cli(args: string[]): Promise<{ code: number; out: string; err: string }> {
    let out = "";
    let err = "";
    const code = await main(args, { out: (text) => void (out += text), err: (text) => void (err += text), cwd: process.cwd() });
    return { code, out, err };
  }

  it.each([
    [["--host", "0.0.0.0"], /--expose/],
    [["--host", "0.0.0.0", "--expose"], /--allow-host/],
    [["--host", "127.0.0.1", "--allow-host", "bad/name"], /--allow-host/],
    [["--max-body-size", "12q"], /--max-body-size/],
    [["--log-format", "xml"], /--log-format/],
    [["--shutdown-timeout", "-1"], /--shutdown-timeout/],
  ])("toolwire proxy %j is a usage error (nothing is bound)", async (args, message) => {
    const { code, err } = await cli(["proxy", "--upstream", upstream.url, ...args]);
    expect(code).toBe(2);
    expect(err).toMatch(message);
  });
});

describe("request body limits", () => {
  let small: ProxyServer;
  beforeAll(async () => {
    small = await startProxy({ upstream: upstream.url, maxBodyBytes: 4096 });
  });
  afterAll(async () => {
    await small?.close();
  });

  const big = JSON.stringify({ ...CLEAN, messages: [{ role: "user", content: "x".repeat(10_000) }] });

  it("a body the proxy reads that is larger than the limit gets 413 in Anthropic's error shape, and nothing reaches the upstream", async () => {
    const before = upstream.seen.length;
    const response = await rawRequest(small.port, [head("POST /v1/messages HTTP/1.1", { "content-type": "application/json", "content-length": Buffer.byteLength(big) }), big]);
    expect(response.status).toBe(413);
    const body = JSON.parse(response.body.toString()) as { type: string; error: { type: string; message: string } };
    expect(body.type).toBe("error");
    expect(body.error.type).toBe("request_too_large");
    expect(body.error.message).toContain("4096");
    expect(upstream.seen.length).toBe(before);
  });

  it("in OpenAI's shape on Chat Completions, for a chunked body (no length to check first)", async () => {
    const chunked = `${Buffer.byteLength(big).toString(16)}\r\n${big}\r\n0\r\n\r\n`;
    const response = await rawRequest(small.port, [head("POST /v1/chat/completions HTTP/1.1", { "content-type": "application/json", "transfer-encoding": "chunked" }), chunked]);
    expect(response.status).toBe(413);
    const body = JSON.parse(response.body.toString()) as { error: { type: string; code: string } };
    expect(body.error).toMatchObject({ type: "invalid_request_error", code: "request_too_large" });
  });

  it("Expect: 100-continue with a declared length over the limit gets 413 without the 100", async () => {
    const response = await rawRequest(small.port, [head("POST /v1/messages HTTP/1.1", { "content-type": "application/json", expect: "100-continue", "content-length": 1_000_000 })]);
    expect(response.interim).toEqual([]);
    expect(response.status).toBe(413);
  });

  it("a gzip body that decompresses past the limit gets 413", async () => {
    const bomb = gzipSync(Buffer.from(JSON.stringify({ ...CLEAN, pad: "\u0020".repeat(1_000_000) })));
    expect(bomb.length).toBeLessThan(4096);
    const response = await rawRequest(small.port, [head("POST /v1/messages HTTP/1.1", { "content-type": "application/json", "content-encoding": "gzip", "content-length": bomb.length }), bomb]);
    expect(response.status).toBe(413);
  });

  it("a body the proxy does not read is not limited: it streams to the upstream as it arrives", async () => {
    let gotFirst: () => void = () => {};
    const first = new Promise<void>((resolve) => (gotFirst = resolve));
    let received = 0;
    const sink = await (async () => {
      const server: Server = createServer((req, res) => {
        req.on("data", (chunk: Buffer) => {
          received += chunk.length;
          gotFirst();
        });
        req.on("end", () => {
          res.writeHead(200, { "content-type": "application/json" });
          res.end(JSON.stringify({ received }));
        });
      });
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
      return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
    })();
    const front = await startProxy({ upstream: sink.url, maxBodyBytes: 4096 });
    try {
      const total = 8 * 1024 * 1024;
      const part = randomBytes(64 * 1024);
      const socket = (await import("node:net")).connect(front.port, "127.0.0.1");
      await new Promise<void>((resolve) => socket.on("connect", resolve));
      const answer = new Promise<string>((resolve) => {
        let text = "";
        socket.on("data", (chunk: Buffer) => (text += chunk.toString("latin1")));
        socket.on("close", () => resolve(text));
      });
      socket.write(head("POST /v1/files HTTP/1.1", { "content-type": "application/octet-stream", "content-length": total }));
      socket.write(part);
      // The upstream has the first bytes while the client still holds the rest: nothing was buffered whole.
      await first;
      expect(received).toBeLessThan(total);
      for (let sent = part.length; sent < total; sent += part.length) if (!socket.write(part)) await new Promise((resolve) => socket.once("drain", resolve));
      const text = await answer;
      expect(text).toMatch(/^HTTP\/1\.1 200/);
      expect(text).toContain(`{"received":${total}}`);
    } finally {
      await front.close();
      sink.server.closeAllConnections();
      await new Promise((resolve) => sink.server.close(resolve));
    }
  });
});

describe("the upstream hop", () => {
  it("a redirect goes back to the client as it came (not followed)", async () => {
    const redirecting = await recordingUpstream((_seen, res) => {
      res.writeHead(307, { location: "http://other.example/v1/messages" });
      res.end();
    });
    const front = await startProxy({ upstream: redirecting.url });
    try {
      const response = await rawRequest(front.port, [head("POST /v1/messages HTTP/1.1", { "content-type": "application/json", "content-length": 2 }), "{}"]);
      expect(response.status).toBe(307);
      expect(response.headers.location).toBe("http://other.example/v1/messages");
      expect(redirecting.seen).toHaveLength(1);
    } finally {
      await front.close();
      await redirecting.close();
    }
  });

  /** Writes `piece` to `res` as fast as the proxy takes it, up to 256 MB or until `flow.stop`, counting what was written. */
  function flood(res: ServerResponse, piece: Buffer, flow: { written: number; stop: boolean }): void {
    const next = (): void => {
      while (!flow.stop && flow.written < 256 * 1024 * 1024) {
        flow.written += piece.length;
        if (!res.write(piece)) {
          res.once("drain", next);
          return;
        }
      }
      res.end();
    };
    next();
  }

  it("a client that does not read holds the upstream back: the proxy does not buffer the body ahead of it", async () => {
    const flow = { written: 0, stop: false };
    const piece = Buffer.alloc(64 * 1024, 120);
    const fast = await (async () => {
      const server: Server = createServer((req, res) => {
        req.resume();
        res.writeHead(200, { "content-type": "application/octet-stream" });
        flood(res, piece, flow);
      });
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
      return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
    })();
    const front = await startProxy({ upstream: fast.url });
    const socket = (await import("node:net")).connect(front.port, "127.0.0.1");
    try {
      await new Promise<void>((resolve) => socket.on("connect", resolve));
      socket.pause();
      socket.write(head("GET /v1/files/big/content HTTP/1.1"));
      await new Promise((resolve) => setTimeout(resolve, 800));
      // Kernel socket buffers on both hops and a chunk or two in the proxy: far less than the 256 MB on offer.
      expect(flow.written).toBeLessThan(48 * 1024 * 1024);
    } finally {
      flow.stop = true;
      socket.destroy();
      await front.close();
      fast.server.closeAllConnections();
      await new Promise((resolve) => fast.server.close(resolve));
    }
  });

  /** An Anthropic text stream without end, as fast as the proxy takes it: the body the proxy re-encodes. */
  const TEXT_DELTA = `event: content_block_delta\ndata: ${JSON.stringify({ type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "lorem ipsum dolor sit amet ".repeat(4) } })}\n\n`;
  const MESSAGE_HEAD =
    'event: message_start\ndata: {"type":"message_start","message":{"id":"m","type":"message","role":"assistant","model":"x","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":1,"output_tokens":1}}}\n\n' +
    'event: content_block_start\ndata: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}\n\n';

  it("a re-encoded stream: a client that does not read holds the upstream back (the upstream socket feeds the re-encoder directly)", async () => {
    const flow = { written: 0, stop: false };
    const piece = Buffer.from(TEXT_DELTA.repeat(Math.floor((64 * 1024) / TEXT_DELTA.length)));
    const fast = await recordingUpstream((_seen, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write(MESSAGE_HEAD);
      flood(res, piece, flow);
    });
    const front = await startProxy({ upstream: fast.url });
    const socket = (await import("node:net")).connect(front.port, "127.0.0.1");
    try {
      await new Promise<void>((resolve) => socket.on("connect", resolve));
      socket.pause();
      socket.write(`${head("POST /v1/messages HTTP/1.1", { "content-type": "application/json", "content-length": 15 })}{"stream":true}`);
      await new Promise((resolve) => setTimeout(resolve, 800));
      expect(flow.written).toBeGreaterThan(0);
      expect(flow.written).toBeLessThan(48 * 1024 * 1024);
      const before = flow.written;
      // Reading again lets the upstream go on.
      socket.resume();
      socket.on("data", () => {});
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(flow.written).toBeGreaterThan(before);
    } finally {
      flow.stop = true;
      socket.destroy();
      await front.close();
      await fast.close();
    }
  });

  it("a re-encoded stream the upstream cuts mid-way cuts the client's response, counted as response_cut", async () => {
    const cutting = await recordingUpstream((_seen, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write(MESSAGE_HEAD + TEXT_DELTA);
      setTimeout(() => res.socket?.destroy(), 50);
    });
    const front = await startProxy({ upstream: cutting.url });
    try {
      const response = await rawRequest(front.port, [head("POST /v1/messages HTTP/1.1", { "content-type": "application/json", "content-length": 15 }), '{"stream":true}']);
      expect(response.status).toBe(200);
      const raw = response.raw.toString("latin1");
      expect(raw).toContain("lorem ipsum");
      expect(raw.endsWith("0\r\n\r\n")).toBe(false);
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(front.metrics()).toMatch(/toolwire_proxy_upstream_errors_total\{route="default",kind="response_cut"\} 1/);
    } finally {
      await front.close();
      await cutting.close();
    }
  });

  describe("an upstream that compresses its answer although the proxy asks for identity", () => {
    const TURN = `${MESSAGE_HEAD}${TEXT_DELTA}event: content_block_stop\ndata: {"type":"content_block_stop","index":0}\n\nevent: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":1}}\n\nevent: message_stop\ndata: {"type":"message_stop"}\n\n`;
    const CODINGS: Array<[string, (bytes: Buffer) => Buffer]> = [
      ["gzip", (bytes) => gzipSync(bytes)],
      ["deflate", (bytes) => deflateSync(bytes)],
      ["br", (bytes) => brotliCompressSync(bytes)],
    ];

    for (const [coding, compress] of CODINGS) {
      it(`${coding}: a stream is decoded before it is re-encoded, and the client reads it as sent`, async () => {
        const upstream = await recordingUpstream((_seen, res) => {
          res.writeHead(200, { "content-type": "text/event-stream", "content-encoding": coding });
          res.end(compress(Buffer.from(TURN)));
        });
        const front = await startProxy({ upstream: upstream.url });
        try {
          const response = await fetch(`${front.url}/v1/messages`, { method: "POST", headers: { "content-type": "application/json", "accept-encoding": "gzip, br" }, body: '{"stream":true}' });
          expect(response.headers.get("content-encoding")).toBeNull();
          expect(await response.text()).toBe(TURN);
          expect(upstream.seen[0]?.headers["accept-encoding"]).toBe("identity");
        } finally {
          await front.close();
          await upstream.close();
        }
      });
    }

    it("a whole JSON answer and a body passed through are decoded too (the client gets no Content-Encoding it would have to undo)", async () => {
      const message = { id: "m", type: "message", role: "assistant", model: "x", content: [{ type: "text", text: "hello" }], stop_reason: "end_turn", stop_sequence: null, usage: { input_tokens: 1, output_tokens: 1 } };
      const file = Buffer.from(Array.from({ length: 4096 }, (_, i) => i % 251));
      const upstream = await recordingUpstream((seen, res) => {
        const json = seen.url.startsWith("/v1/messages");
        res.writeHead(200, { "content-type": json ? "application/json" : "application/octet-stream", "content-encoding": "gzip" });
        res.end(gzipSync(json ? Buffer.from(JSON.stringify(message)) : file));
      });
      const front = await startProxy({ upstream: upstream.url });
      try {
        const whole = await fetch(`${front.url}/v1/messages`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
        expect(whole.headers.get("content-encoding")).toBeNull();
        expect(await whole.json()).toEqual(message);
        const raw = await rawRequest(front.port, [head("GET /v1/files/f/content HTTP/1.1")]);
        expect(raw.headers["content-encoding"]).toBeUndefined();
        expect(Buffer.compare(raw.body, file)).toBe(0);
      } finally {
        await front.close();
        await upstream.close();
      }
    });

    it("a body that does not inflate cuts the client's response rather than passing on garbage", async () => {
      const upstream = await recordingUpstream((_seen, res) => {
        res.writeHead(200, { "content-type": "text/event-stream", "content-encoding": "gzip" });
        res.end(Buffer.concat([gzipSync(Buffer.from(MESSAGE_HEAD)).subarray(0, 20), Buffer.from("not gzip at all")]));
      });
      const front = await startProxy({ upstream: upstream.url });
      try {
        const response = await rawRequest(front.port, [head("POST /v1/messages HTTP/1.1", { "content-type": "application/json", "content-length": 15 }), '{"stream":true}']);
        expect(response.raw.toString("latin1").endsWith("0\r\n\r\n")).toBe(false);
        expect(response.raw.toString("latin1")).not.toContain("not gzip");
      } finally {
        await front.close();
        await upstream.close();
      }
    });
  });

  it("an upstream that cuts its body mid-way cuts the client's response, counted as response_cut", async () => {
    const cutting = await recordingUpstream((_seen, res) => {
      res.writeHead(200, { "content-type": "application/octet-stream" });
      res.write(Buffer.alloc(1000, 97));
      setTimeout(() => res.socket?.destroy(), 50);
    });
    const front = await startProxy({ upstream: cutting.url });
    try {
      const response = await rawRequest(front.port, [head("GET /v1/files/x/content HTTP/1.1")]);
      expect(response.status).toBe(200);
      // Chunked, and never terminated by the zero-length chunk.
      expect(response.raw.toString("latin1").endsWith("0\r\n\r\n")).toBe(false);
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(front.metrics()).toMatch(/toolwire_proxy_upstream_errors_total\{route="default",kind="response_cut"\} 1/);
    } finally {
      await front.close();
      await cutting.close();
    }
  });
});

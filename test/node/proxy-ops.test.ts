import { spawn, type ChildProcess } from "node:child_process";
import { createServer, type Server } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startProxy, type ProxyLogRecord, type ProxyServer } from "../../src/node/proxy.js";
import type { RepairReport } from "../../src/reencode/types.js";
import { buildBin, REPO } from "../cli/support.js";
import { listening, printedUrl } from "../../bench/loopback.js";
import { head, rawRequest, recordingUpstream, type RecordingUpstream } from "./http-support.js";

/**
 * What an operator runs the proxy with: `/healthz`, `/metrics` (Prometheus text), a request id on
 * every request (the client's `x-request-id` or a fresh one) in the log line, the repair reports
 * and the response, JSON logs, and a graceful stop on SIGTERM that lets open streams finish.
 */

const chunk = (delta: unknown, finish: string | null = null): string => `data: ${JSON.stringify({ id: "c", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
const call = (id: string, name: string, args: string): unknown => ({ tool_calls: [{ index: 0, id, type: "function", function: { name, arguments: args } }] });
/** A Chat stream whose one call is cut by the length limit: withheld. */
const CUT = `${chunk({ role: "assistant", content: "" })}${chunk(call("call_1", "write", '{"path": "a.md", "text": "ab'))}${chunk({}, "length")}data: [DONE]\n\n`;
/** A Chat stream whose call arguments came twice (cumulative): repaired. */
const RESENT = `${chunk({ role: "assistant", ...(call("call_1", "f", '{"a"') as object) })}${chunk({ tool_calls: [{ index: 0, function: { arguments: '{"a":1}' } }] })}${chunk({}, "tool_calls")}data: [DONE]\n\n`;

let upstream: RecordingUpstream;
let proxy: ProxyServer;
const lines: string[] = [];
const repairs: Array<{ report: RepairReport; requestId: string }> = [];

beforeAll(async () => {
  upstream = await recordingUpstream((seen, res) => {
    res.writeHead(200, { "content-type": "text/event-stream" });
    res.end(seen.body.toString().includes('"cut"') ? CUT : RESENT);
  });
  proxy = await startProxy({ upstream: upstream.url, logFormat: "json", log: (line) => lines.push(line), onRepair: (report, request) => repairs.push({ report, requestId: request.requestId }) });
});
afterAll(async () => {
  await proxy?.close();
  await upstream?.close();
});

async function chat(body: Record<string, unknown>, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${proxy.url}/v1/chat/completions`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify({ model: "m", stream: true, messages: [], ...body }) });
}

describe("/healthz and /metrics", () => {
  it("/healthz answers 200 with any Host (a probe by pod IP)", async () => {
    const response = await rawRequest(proxy.port, [head("GET /healthz HTTP/1.1", { host: "10.1.2.3:8080" })]);
    expect(response.status).toBe(200);
    expect(JSON.parse(response.body.toString())).toEqual({ status: "ok" });
  });

  it("/metrics counts requests by route, protocol and status, repairs by code, withheld calls, and has the histograms and gauges", async () => {
    await (await chat({ user: "resent" })).text();
    await (await chat({ user: "cut" })).text();
    const text = await (await fetch(`${proxy.url}/metrics`)).text();
    expect(text).toMatch(/^# HELP toolwire_proxy_requests_total /m);
    expect(text).toMatch(/^toolwire_proxy_requests_total\{route="default",provider="openai-chat",status="200"\} [2-9]\d*$/m);
    expect(text).toMatch(/^toolwire_proxy_repairs_total\{route="default",provider="openai-chat",code="cumulative_resend",action="rewritten"\} [1-9]/m);
    expect(text).toMatch(/^toolwire_proxy_withheld_calls_total\{route="default",provider="openai-chat",code="[a-z_]+"\} [1-9]/m);
    expect(text).toMatch(/^toolwire_proxy_time_to_first_byte_seconds_bucket\{route="default",le="\+Inf"\} [2-9]\d*$/m);
    expect(text).toMatch(/^toolwire_proxy_request_duration_seconds_count\{route="default"\} [2-9]\d*$/m);
    expect(text).toMatch(/^toolwire_proxy_streams_open\{route="default"\} 0$/m);
    expect(text).toMatch(/^toolwire_proxy_requests_in_flight 0$/m);
    expect(text).toMatch(/^# TYPE toolwire_proxy_streams_open gauge$/m);
    expect(text).toMatch(/^process_cpu_seconds_total \d+(\.\d+)?$/m);
    expect(text).toMatch(/^process_resident_memory_bytes \d+$/m);
  });

  it("an upstream that cannot be reached is a 502 and an upstream error in the metrics", async () => {
    const dead = await recordingUpstream();
    const deadUrl = dead.url;
    await dead.close();
    const front = await startProxy({ upstream: deadUrl });
    try {
      const response = await fetch(`${front.url}/v1/messages`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
      expect(response.status).toBe(502);
      expect(((await response.json()) as { type: string }).type).toBe("error");
      expect(front.metrics()).toMatch(/^toolwire_proxy_upstream_errors_total\{route="default",kind="request_failed"\} 1$/m);
      expect(front.metrics()).toMatch(/^toolwire_proxy_requests_total\{route="default",provider="anthropic",status="502"\} 1$/m);
    } finally {
      await front.close();
    }
  });

  it("refusals are counted by reason", async () => {
    await rawRequest(proxy.port, [head("GET /v1/models HTTP/1.1", { host: "evil.example" })]);
    expect(proxy.metrics()).toMatch(/^toolwire_proxy_refused_total\{reason="host"\} [1-9]/m);
  });
});

describe("request ids", () => {
  it("the client's x-request-id goes upstream, comes back, and is in the log record and the repair reports", async () => {
    const response = await chat({ user: "resent" }, { "x-request-id": "req-abc-123" });
    await response.text();
    expect(response.headers.get("x-request-id")).toBe("req-abc-123");
    expect(upstream.seen.at(-1)?.headers["x-request-id"]).toBe("req-abc-123");
    const record = JSON.parse(lines.at(-1) as string) as ProxyLogRecord;
    expect(record).toMatchObject({ request_id: "req-abc-123", method: "POST", path: "/v1/chat/completions", route: "default", provider: "openai-chat", status: 200, outcome: "ok" });
    expect(record.repairs).toContain("cumulative_resend");
    expect(typeof record.duration_ms).toBe("number");
    expect(typeof record.ttfb_ms).toBe("number");
    expect(repairs.filter((entry) => entry.requestId === "req-abc-123").map((entry) => entry.report.code)).toContain("cumulative_resend");
  });

  it("one is minted when the client sends none (or one that is not visible ASCII of at most 128 characters)", async () => {
    for (const given of [undefined, "x".repeat(129), "has space"]) {
      const response = await chat({ user: "resent" }, given === undefined ? {} : { "x-request-id": given });
      await response.text();
      const id = response.headers.get("x-request-id") as string;
      expect(id).toMatch(/^[0-9a-f-]{36}$/);
      expect(upstream.seen.at(-1)?.headers["x-request-id"]).toBe(id);
    }
  });

  it("the proxy's own refusals carry one too, and the JSON log counts withheld calls", async () => {
    const refused = await rawRequest(proxy.port, [head("GET /v1/models HTTP/1.1", { host: "evil.example", "x-request-id": "refused-1" })]);
    expect(refused.headers["x-request-id"]).toBe("refused-1");
    expect(JSON.parse(lines.at(-1) as string)).toMatchObject({ request_id: "refused-1", status: 403, outcome: "refused" });
    await (await chat({ user: "cut" }, { "x-request-id": "cut-1" })).text();
    const record = JSON.parse(lines.at(-1) as string) as ProxyLogRecord;
    expect(record.request_id).toBe("cut-1");
    expect(record.withheld).toBe(1);
  });

  it("the text log line ends with the id", async () => {
    const text: string[] = [];
    const front = await startProxy({ upstream: upstream.url, log: (line) => text.push(line) });
    try {
      await (await fetch(`${front.url}/v1/chat/completions`, { method: "POST", headers: { "content-type": "application/json", "x-request-id": "line-1" }, body: "{}" })).text();
      expect(text.at(-1)).toMatch(/^POST \/v1\/chat\/completions 200 \d+ms repairs=\S+ id=line-1$/);
    } finally {
      await front.close();
    }
  });
});

describe("graceful shutdown", () => {
  it("shutdown() lets an open stream finish, refuses new connections, and closes", async () => {
    const slow = await slowUpstream(12, 50);
    const front = await startProxy({ upstream: slow.url });
    try {
      const response = await fetch(`${front.url}/v1/chat/completions`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
      const reader = (response.body as ReadableStream<Uint8Array>).getReader();
      await reader.read();
      const stopped = front.shutdown(10_000);
      await new Promise((resolve) => setTimeout(resolve, 50));
      await expect(fetch(`${front.url}/healthz`)).rejects.toThrow();
      let text = "";
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        text += new TextDecoder().decode(value);
      }
      expect(text).toContain("[DONE]");
      expect(await stopped).toEqual({ cut: 0 });
    } finally {
      await slow.close();
    }
  });

  it("a stream still open at the deadline is cut", async () => {
    const slow = await slowUpstream(100, 50);
    const front = await startProxy({ upstream: slow.url });
    try {
      const response = await fetch(`${front.url}/v1/chat/completions`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
      const reader = (response.body as ReadableStream<Uint8Array>).getReader();
      await reader.read();
      expect(await front.shutdown(200)).toEqual({ cut: 1 });
      await expect((async () => {
        for (;;) if ((await reader.read()).done) return;
      })()).rejects.toThrow();
    } finally {
      await slow.close();
    }
  });

  describe("the CLI on SIGTERM", () => {
    let built: Awaited<ReturnType<typeof buildBin>>;
    beforeAll(async () => {
      built = await buildBin();
    }, 60_000);
    afterAll(() => built?.remove());

    async function startCli(upstreamUrl: string, extra: string[] = []): Promise<{ child: ChildProcess; url: string; stderr: () => string; exited: Promise<number | null> }> {
      const child = spawn(process.execPath, [built.bin, "proxy", "--upstream", upstreamUrl, ...extra], { cwd: REPO, stdio: ["ignore", "pipe", "pipe"] });
      let stderr = "";
      child.stderr?.on("data", (data: Buffer) => (stderr += data.toString()));
      const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
      const url = await printedUrl(child, () => `the proxy exited: ${stderr}`);
      return { child, url, stderr: () => stderr, exited };
    }

    it("an open stream completes, then the process exits 0", async () => {
      const slow = await slowUpstream(15, 60);
      const cli = await startCli(slow.url, ["--log-format", "json"]);
      try {
        const response = await fetch(`${cli.url}/v1/chat/completions`, { method: "POST", headers: { "content-type": "application/json", "x-request-id": "sigterm-1" }, body: "{}" });
        const reader = (response.body as ReadableStream<Uint8Array>).getReader();
        await reader.read();
        cli.child.kill("SIGTERM");
        let text = "";
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          text += new TextDecoder().decode(value);
        }
        expect(text).toContain("[DONE]");
        expect(await cli.exited).toBe(0);
        expect(cli.stderr()).toContain("draining");
        expect(cli.stderr()).toContain('"request_id":"sigterm-1"');
        expect(cli.stderr()).toMatch(/stopped\n$/);
      } finally {
        cli.child.kill("SIGKILL");
        await slow.close();
      }
    });

    it("with --shutdown-timeout 0.3, a longer stream is cut and the process still exits 0", async () => {
      const slow = await slowUpstream(200, 50);
      const cli = await startCli(slow.url, ["--shutdown-timeout", "0.3"]);
      try {
        const response = await fetch(`${cli.url}/v1/chat/completions`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
        const reader = (response.body as ReadableStream<Uint8Array>).getReader();
        await reader.read();
        cli.child.kill("SIGTERM");
        expect(await cli.exited).toBe(0);
        expect(cli.stderr()).toMatch(/stopped \(1 request cut at the deadline\)/);
      } finally {
        cli.child.kill("SIGKILL");
        await slow.close();
      }
    });
  });
});

/** A Chat stream of `count` text chunks, one every `everyMs`, then a finish and [DONE]. */
async function slowUpstream(count: number, everyMs: number): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      let sent = 0;
      const timer = setInterval(() => {
        if (sent++ < count) res.write(chunk({ content: "x" }));
        else {
          clearInterval(timer);
          res.end(`${chunk({}, "stop")}data: [DONE]\n\n`);
        }
      }, everyMs);
      res.on("close", () => clearInterval(timer));
    });
  });
  return listening(server);
}

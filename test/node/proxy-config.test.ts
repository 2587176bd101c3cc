import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startProxyCommand } from "../../src/cli/commands/proxy.js";
import { main } from "../../src/cli/main.js";
import { isToolwireError } from "../../src/errors.js";
import { parseProxyConfig } from "../../src/node/proxy-config.js";
import { startProxy, type ProxyServer } from "../../src/node/proxy.js";
import { head, rawRequest, recordingUpstream, type RecordingUpstream } from "./http-support.js";

/**
 * Several upstreams from one process (`--config`): routes by path prefix, each with its own
 * upstream, protocol, schema target and repairs, the prefix removed before the path is joined to
 * the upstream, labelled by route in the logs and metrics.
 */

let anthropic: RecordingUpstream;
let openai: RecordingUpstream;
let vllm: RecordingUpstream;
let fallback: RecordingUpstream;
const dir = mkdtempSync(join(tmpdir(), "toolwire-proxy-config-"));

function context(): { ctx: { out(text: string): void; err(text: string): void; cwd: string }; out: () => string; err: () => string } {
  let out = "";
  let err = "";
  return { ctx: { out: (text) => void (out += text), err: (text) => void (err += text), cwd: dir }, out: () => out, err: () => err };
}

beforeAll(async () => {
  [anthropic, openai, vllm, fallback] = await Promise.all([recordingUpstream(), recordingUpstream(), recordingUpstream(), recordingUpstream()]);
});
afterAll(async () => {
  await Promise.all([anthropic, openai, vllm, fallback].map((upstream) => upstream?.close()));
});

const ORPHAN = {
  model: "m",
  max_tokens: 10,
  messages: [
    { role: "user", content: "list" },
    { role: "assistant", content: [{ type: "tool_use", id: "toolu_1", name: "shell", input: {} }] },
    { role: "user", content: "and now?" },
  ],
};

describe("--config: routes by path prefix", () => {
  let proxy: ProxyServer;
  const logs = context();

  beforeAll(async () => {
    writeFileSync(
      join(dir, "toolwire.json"),
      JSON.stringify({
        routes: [
          { prefix: "/anthropic", upstream: anthropic.url },
          { prefix: "/openai", upstream: `${openai.url}/v1`, name: "openai" },
          { prefix: "/vllm/", upstream: vllm.url, provider: "openai-chat", repairs: { history: false } },
        ],
      }),
    );
    proxy = await startProxyCommand(["--config", "toolwire.json", "--upstream", fallback.url, "--log-format", "json"], logs.ctx);
  });
  afterAll(async () => {
    await proxy?.close();
  });

  it("prints its routes at start", () => {
    expect(logs.out()).toMatch(/routes: \/anthropic -> http:\/\/127\.0\.0\.1:\d+, \/openai -> .*\/v1, \/vllm\/ -> .*, \/ \(other paths\) -> /);
  });

  it("each prefix goes to its upstream, the prefix removed, under the upstream's base path", async () => {
    expect((await rawRequest(proxy.port, [head("GET /anthropic/v1/models HTTP/1.1")])).status).toBe(200);
    expect(anthropic.seen.at(-1)?.url).toBe("/v1/models");
    expect((await rawRequest(proxy.port, [head("GET /openai/models?limit=2 HTTP/1.1")])).status).toBe(200);
    expect(openai.seen.at(-1)?.url).toBe("/v1/models?limit=2");
    expect((await rawRequest(proxy.port, [head("GET /vllm/v1/models HTTP/1.1")])).status).toBe(200);
    expect(vllm.seen.at(-1)?.url).toBe("/v1/models");
    expect((await rawRequest(proxy.port, [head("GET /openai2/x HTTP/1.1")])).status).toBe(200);
    expect(fallback.seen.at(-1)?.url).toBe("/openai2/x");
  });

  it("each route's repairs are its own: Anthropic's history repaired, vLLM's (history off) not", async () => {
    const body = JSON.stringify(ORPHAN);
    const a = await fetch(`${proxy.url}/anthropic/v1/messages`, { method: "POST", headers: { "content-type": "application/json" }, body });
    expect(a.headers.get("x-toolwire-repairs")).toContain("result_inserted");
    expect(anthropic.seen.at(-1)?.body.toString()).toContain("tool_result");
    const v = await fetch(`${proxy.url}/vllm/v1/messages`, { method: "POST", headers: { "content-type": "application/json" }, body });
    expect(v.headers.get("x-toolwire-repairs") ?? "").not.toContain("result_inserted");
    expect(vllm.seen.at(-1)?.body.toString()).toBe(body);
  });

  it("a dot segment cannot move a request from one route to another", async () => {
    const before = anthropic.seen.length + openai.seen.length;
    expect((await rawRequest(proxy.port, [head("GET /openai/../anthropic/v1/models HTTP/1.1")])).status).toBe(200);
    // Resolved first (`/anthropic/v1/models`), then routed: never `/openai`'s upstream with `/../anthropic`.
    expect(anthropic.seen.at(-1)?.url).toBe("/v1/models");
    expect(anthropic.seen.length + openai.seen.length).toBe(before + 1);
  });

  it("logs and metrics name the route", async () => {
    await (await fetch(`${proxy.url}/openai/models`)).text();
    const record = JSON.parse(logs.err().trim().split("\n").at(-1) as string) as { route: string; path: string };
    expect(record).toMatchObject({ route: "openai", path: "/openai/models" });
    expect(proxy.metrics()).toMatch(/^toolwire_proxy_requests_total\{route="openai",provider="none",status="200"\} [1-9]/m);
    expect(proxy.metrics()).toMatch(/^toolwire_proxy_requests_total\{route="\/anthropic",provider="anthropic",status="200"\} [1-9]/m);
  });
});

describe("routes without a fallback upstream", () => {
  it("a path no route takes gets 404", async () => {
    const proxy = await startProxy({ routes: [{ prefix: "/anthropic", upstream: anthropic.url }] });
    try {
      const response = await rawRequest(proxy.port, [head("GET /other/v1/models HTTP/1.1")]);
      expect(response.status).toBe(404);
      expect(proxy.metrics()).toMatch(/toolwire_proxy_refused_total\{reason="no_route"\} 1/);
    } finally {
      await proxy.close();
    }
  });

  it("stripPrefix: false keeps the prefix", async () => {
    const proxy = await startProxy({ routes: [{ prefix: "/v1", upstream: anthropic.url, stripPrefix: false }] });
    try {
      await rawRequest(proxy.port, [head("GET /v1/models HTTP/1.1")]);
      expect(anthropic.seen.at(-1)?.url).toBe("/v1/models");
    } finally {
      await proxy.close();
    }
  });
});

describe("config faults", () => {
  it.each([
    [[], /must be an object/],
    [{ routes: [] }, /routes: must be a non-empty array/],
    [{ routes: [{ prefix: "/a", upstream: "http://x" }], extra: 1 }, /extra: unknown key/],
    [{ routes: [{ prefix: "a", upstream: "http://x" }] }, /routes\[0\]\.prefix/],
    [{ routes: [{ prefix: "/a/../b", upstream: "http://x" }] }, /routes\[0\]\.prefix/],
    [{ routes: [{ prefix: "/a" }] }, /routes\[0\]\.upstream: is required/],
    [{ routes: [{ prefix: "/a", upstream: "ftp://x" }] }, /routes\[0\]\.upstream: must be an http\(s\) URL/],
    [{ routes: [{ prefix: "/a", upstream: "http://x", provider: "cohere" }] }, /routes\[0\]\.provider/],
    [{ routes: [{ prefix: "/a", upstream: "http://x", target: "nope" }] }, /routes\[0\]\.target/],
    [{ routes: [{ prefix: "/a", upstream: "http://x", repairs: { schema: false } }] }, /routes\[0\]\.repairs\.schema: unknown repair/],
    [{ routes: [{ prefix: "/a", upstream: "http://x", repaires: {} }] }, /routes\[0\]\.repaires: unknown key/],
    [{ routes: [{ prefix: "/a", upstream: "http://x" }, { prefix: "/a/", upstream: "http://y" }] }, /routes\[1\]\.prefix: '\/a\/' is the prefix of an earlier route/],
  ])("%j is refused with invalid_proxy_config", (config, message) => {
    let error: unknown;
    try {
      parseProxyConfig(config);
    } catch (caught) {
      error = caught;
    }
    expect(isToolwireError(error) && error.code).toBe("invalid_proxy_config");
    expect((error as Error).message).toMatch(message);
  });

  it("the CLI: an unreadable or invalid file is an input error (exit 3), one line", async () => {
    writeFileSync(join(dir, "bad.json"), "{not json");
    for (const [file, message] of [
      ["missing.json", /cannot read .*missing\.json.*no such file/],
      ["bad.json", /is not JSON/],
    ] as const) {
      const run = context();
      const code = await main(["proxy", "--config", file], run.ctx);
      expect(code).toBe(3);
      expect(run.err()).toMatch(message);
    }
  });
});

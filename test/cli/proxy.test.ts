import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createByteDecoder } from "../../src/adapters/bytes.js";
import { startProxyCommand } from "../../src/cli/commands/proxy.js";
import type { CliContext } from "../../src/cli/context.js";
import { main } from "../../src/cli/main.js";
import { startReplayServer, type ReplayServer } from "../../src/node/replay-server.js";
import { streamsOf } from "../integration/support.js";
import { decodeBytes } from "../reencode/support.js";

/** `toolwire proxy`: usage errors, and every route of the six protocols forwarded (streams the proxy does not re-encode arrive byte for byte). */

function context(): { ctx: CliContext; out: () => string; err: () => string } {
  let out = "";
  let err = "";
  return { ctx: { out: (text) => void (out += text), err: (text) => void (err += text), cwd: process.cwd() }, out: () => out, err: () => err };
}

async function run(args: string[]): Promise<{ code: number; out: string; err: string }> {
  const { ctx, out, err } = context();
  const code = await main(args, ctx);
  return { code, out: out(), err: err() };
}

describe("toolwire proxy: arguments", () => {
  it("--help prints the usage with the Python and Go one-liners", async () => {
    const { code, out } = await run(["proxy", "--help"]);
    expect(code).toBe(0);
    expect(out).toContain("base_url");
    expect(out).toContain("option.WithBaseURL");
  });

  it.each([
    [["proxy"], /--upstream is required/],
    [["proxy", "--upstream", "ftp://x"], /http\(s\) URL/],
    [["proxy", "--upstream", "http://x", "--port", "99999"], /--port/],
    [["proxy", "--upstream", "http://x", "--provider", "nope"], /unknown provider/],
    [["proxy", "--upstream", "http://x", "--target", "nope"], /unknown target/],
  ])("%j is a usage error", async (args, message) => {
    const { code, err } = await run(args);
    expect(code).toBe(2);
    expect(err).toMatch(message);
  });
});

describe("toolwire proxy: the six protocols' routes", () => {
  let replay: ReplayServer;
  let proxyUrl: string;
  let close: () => Promise<void>;
  const logs = context();

  beforeAll(async () => {
    replay = await startReplayServer({ streams: [...streamsOf("gemini"), ...streamsOf("bedrock"), ...streamsOf("ollama"), ...streamsOf("anthropic").slice(0, 2)] });
    const proxy = await startProxyCommand(["--upstream", replay.url], logs.ctx);
    proxyUrl = proxy.url;
    close = () => proxy.close();
  });
  afterAll(async () => {
    await close?.();
    await replay?.close();
  });

  it.each([
    ["gemini", "/v1beta/models/gemini-test:streamGenerateContent?alt=sse", {}],
    ["bedrock", "/model/nova/converse-stream", {}],
    ["ollama", "/api/chat", { stream: true }],
    ["anthropic on bedrock", "/model/claude/invoke-with-response-stream", {}],
  ] as const)("%s: the body arrives as the upstream sent it (Ollama, Claude on Bedrock, Gemini: with toolwire's calls)", async (_name, path, body) => {
    const key = (path.includes("invoke") ? streamsOf("anthropic")[0] : path.includes("converse") ? streamsOf("bedrock")[0] : path.includes("api/chat") ? streamsOf("ollama")[0] : streamsOf("gemini")[0])?.key as string;
    const request = { method: "POST", headers: { "content-type": "application/json", "x-toolwire-stream": key }, body: JSON.stringify({ ...body, messages: [], contents: [] }) };
    const direct = new Uint8Array(await (await fetch(`${replay.url}${path}`, request)).arrayBuffer());
    const proxied = await fetch(`${proxyUrl}${path}`, request);
    expect(proxied.status).toBe(200);
    const bytes = new Uint8Array(await proxied.arrayBuffer());
    if (path === "/api/chat" || path.includes("invoke") || path.includes(":streamGenerateContent")) {
      // Ollama and Gemini are re-encoded: calls without ids get toolwire's, so compare what a client decodes.
      // So is Claude on Bedrock (pings move ahead of a held call).
      const decode = (raw: Uint8Array) => {
        if (path === "/api/chat") return decodeBytes("ollama", raw);
        if (path.includes(":streamGenerateContent")) return decodeBytes("gemini", raw);
        const decoder = createByteDecoder("anthropic", { framing: "aws-eventstream" });
        decoder.push(raw);
        return decoder.finish();
      };
      const calls = (raw: Uint8Array) => decode(raw).toolCalls.filter((call) => call.arguments !== null).map((call) => ({ id: call.id, name: call.name, arguments: call.arguments, repairs: call.repairs }));
      expect(calls(bytes).map(({ repairs: _repairs, ...call }) => call)).toEqual(calls(direct).map(({ repairs: _repairs, ...call }) => call));
      expect(calls(bytes).every((call) => call.repairs.length === 0)).toBe(true);
      return;
    }
    expect(bytes).toEqual(direct);
  });

  it("prints where it listens and one log line per request", () => {
    expect(logs.out()).toContain(`toolwire proxy: ${proxyUrl} -> ${replay.url}`);
    expect(logs.err().trim().split("\n").length).toBeGreaterThanOrEqual(4);
    expect(logs.err()).toMatch(/toolwire proxy: POST \/api\/chat 200 \d+ms/);
  });
});

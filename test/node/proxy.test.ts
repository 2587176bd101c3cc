import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { createServer, request, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkHistory } from "../../src/history/index.js";
import { startProxy, type ProxyServer } from "../../src/node/proxy.js";
import { startReplayServer, type ReplayServer, type ReplayStream } from "../../src/node/replay-server.js";
import { fileTurn, streamsOf } from "../integration/support.js";

/**
 * `toolwire proxy` in front of `toolwire serve` and of tiny test upstreams: the real SDKs pointed
 * at it by base URL get toolwire's calls; headers pass untouched and are never logged; a client
 * that goes away cancels the upstream request; an orphan tool_use is repaired before Anthropic
 * (a server rejecting it the way Anthropic does) sees it, or after its 400 when the proactive
 * repair is off.
 */

const ORPHAN_ERROR = (index: number, ids: string[]): string =>
  `messages.${index}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${ids.join(", ")}. Each \`tool_use\` block must have a corresponding \`tool_result\` block in the next message.`;

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

async function body(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

const kimi = streamsOf("anthropic").find((stream) => stream.key.endsWith("#kimi_start_input_continued_by_delta")) as ReplayStream;
const chatQuirks = streamsOf("openai-chat").filter((stream) => /index-zero|qianfan|opencodex|llamacpp-no-arguments|nebius-deepseek-no-finish/.test(stream.key));

let replay: ReplayServer;
/** Rejects a Messages request whose history has a tool_use without its result, with Anthropic's text; else forwards to the replay server. */
let strict: Server;
let strictUrl: string;
const strictSeen: Array<{ status: number }> = [];
let proxy: ProxyServer;
let proxyNoHistory: ProxyServer;
const logs: string[] = [];

beforeAll(async () => {
  replay = await startReplayServer({ streams: [...streamsOf("anthropic"), ...streamsOf("openai-chat"), ...streamsOf("gemini")] });
  strict = createServer((req, res) => {
    void (async () => {
      const text = await body(req);
      const parsed = JSON.parse(text) as { messages: unknown[] };
      const missing = checkHistory(parsed.messages, "anthropic").find((fault) => fault.code === "missing_result");
      if (missing) {
        strictSeen.push({ status: 400 });
        res.writeHead(400, { "content-type": "application/json" });
        res.end(JSON.stringify({ type: "error", error: { type: "invalid_request_error", message: ORPHAN_ERROR(missing.index, missing.ids) } }));
        return;
      }
      strictSeen.push({ status: 200 });
      const upstream = await fetch(`${replay.url}${req.url ?? ""}`, { method: "POST", headers: { "content-type": "application/json", "x-toolwire-stream": String(req.headers["x-toolwire-stream"] ?? "") }, body: text });
      res.writeHead(upstream.status, { "content-type": upstream.headers.get("content-type") ?? "text/event-stream" });
      res.end(Buffer.from(await upstream.arrayBuffer()));
    })();
  });
  strictUrl = await listen(strict);
  proxy = await startProxy({ upstream: replay.url, log: (line) => logs.push(line) });
  proxyNoHistory = await startProxy({ upstream: strictUrl, repairs: { history: false }, log: (line) => logs.push(line) });
});
afterAll(async () => {
  await proxy?.close();
  await proxyNoHistory?.close();
  await replay?.close();
  strict?.closeAllConnections();
  await new Promise((resolve) => strict?.close(resolve));
});

const pick = (stream: ReplayStream) => ({ headers: { "x-toolwire-stream": stream.key } });

describe("the SDKs pointed at the proxy by base URL", () => {
  it("Anthropic: Kimi's start input plus a continuation delta arrives as the call toolwire decodes", async () => {
    const client = new Anthropic({ apiKey: "sk-ant-secret-key-1", baseURL: proxy.url, maxRetries: 0, logLevel: "off" });
    const message = await client.messages.stream({ model: "kimi-k2", max_tokens: 100, messages: [{ role: "user", content: "hi" }] }, pick(kimi)).finalMessage();
    const expected = fileTurn(kimi).toolCalls.map((call) => ({ id: call.id, name: call.name, input: call.arguments }));
    expect(message.content.filter((block) => block.type === "tool_use").map((block) => ({ id: block.id, name: block.name, input: block.input }))).toEqual(expected);
  });

  it.each(chatQuirks.map((stream) => [stream.key, stream] as const))("OpenAI Chat: %s", async (_key, stream) => {
    const client = new OpenAI({ apiKey: "sk-secret-key-2", baseURL: `${proxy.url}/v1`, maxRetries: 0, logLevel: "off" });
    const completion = await client.chat.completions.stream({ model: "m", messages: [{ role: "user", content: "hi" }] }, pick(stream)).finalChatCompletion();
    const calls = (completion.choices[0]?.message.tool_calls ?? []).map((call) => (call.type === "function" ? { id: call.id, name: call.function.name, arguments: JSON.parse(call.function.arguments) as unknown } : null));
    expect(calls).toEqual(fileTurn(stream).toolCalls.filter((call) => call.arguments !== null).map((call) => ({ id: call.id, name: call.name, arguments: call.arguments })));
  });

  it("many concurrent streams", async () => {
    const client = new OpenAI({ apiKey: "sk-secret-key-2", baseURL: `${proxy.url}/v1`, maxRetries: 0, logLevel: "off" });
    const results = await Promise.all(
      Array.from({ length: 60 }, async (_, i) => {
        const stream = chatQuirks[i % chatQuirks.length] as ReplayStream;
        const completion = await client.chat.completions.stream({ model: "m", messages: [{ role: "user", content: "hi" }] }, pick(stream)).finalChatCompletion();
        return (completion.choices[0]?.message.tool_calls?.length ?? 0) === fileTurn(stream).toolCalls.filter((call) => call.arguments !== null).length;
      }),
    );
    expect(results.every(Boolean)).toBe(true);
  });
});

describe("Gemini through the proxy", () => {
  const duplicates = streamsOf("gemini").find((stream) => stream.key.endsWith("#duplicate-ids")) as ReplayStream;
  for (const [form, query] of [
    ["SSE", "?alt=sse"],
    ["the JSON array", ""],
  ] as const) {
    it(`${form}: duplicate ids arrive unique, and the log line names the repair`, async () => {
      const response = await fetch(`${proxy.url}/v1beta/models/gemini-test:streamGenerateContent${query}`, { method: "POST", headers: { "x-goog-api-key": "gemini-secret-key", ...pick(duplicates).headers }, body: JSON.stringify({ contents: [] }) });
      const text = await response.text();
      expect(text.match(/"id":"call-1(_tw2)?"/g)).toEqual(['"id":"call-1"', '"id":"call-1_tw2"']);
      if (query === "") expect(() => JSON.parse(text) as unknown).not.toThrow();
      expect(logs.at(-1)).toMatch(/streamGenerateContent.* 200 \d+ms repairs=.*minted_id/);
      expect(logs.join("\n")).not.toMatch(/secret/);
    });
  }
});

describe("headers, logs and the repair summary", () => {
  it("passes authentication headers untouched, never logs them, and reports the repairs in a header and trailer", async () => {
    const seen: Record<string, string | string[] | undefined>[] = [];
    const echo = createServer((req, res) => {
      seen.push(req.headers);
      void body(req).then(() => {
        res.writeHead(200, { "content-type": "text/event-stream" });
        res.end(`data: {"id":"c","choices":[{"index":0,"delta":{"role":"assistant","tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"f","arguments":"{\\"a\\""}}]}}]}\n\ndata: {"id":"c","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\\"a\\":1}"}}]}}]}\n\ndata: {"id":"c","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}\n\ndata: [DONE]\n\n`);
      });
    });
    const echoUrl = await listen(echo);
    const lines: string[] = [];
    const front = await startProxy({ upstream: echoUrl, log: (line) => lines.push(line) });
    try {
      const result = await new Promise<{ headers: Record<string, unknown>; trailers: Record<string, unknown>; text: string }>((resolve, reject) => {
        const req = request(`${front.url}/v1/chat/completions`, { method: "POST", headers: { authorization: "Bearer sk-very-secret", "x-api-key": "sk-ant-very-secret", "content-type": "application/json" } }, (res) => {
          let text = "";
          res.setEncoding("utf8");
          res.on("data", (chunk: string) => (text += chunk));
          res.on("end", () => resolve({ headers: res.headers, trailers: res.trailers, text }));
        });
        req.on("error", reject);
        req.end(JSON.stringify({ model: "m", stream: true, messages: [{ role: "user", content: "hi" }] }));
      });
      expect(seen[0]?.authorization).toBe("Bearer sk-very-secret");
      expect(seen[0]?.["x-api-key"]).toBe("sk-ant-very-secret");
      expect(result.trailers["x-toolwire-repairs"]).toContain("cumulative_resend");
      expect(result.text).toContain('"arguments":"{\\"a\\":1}"');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(/^POST \/v1\/chat\/completions 200 \d+ms repairs=cumulative_resend/);
      expect(lines.join("\n")).not.toMatch(/secret/);
      expect(logs.join("\n")).not.toMatch(/secret/);
    } finally {
      await front.close();
      echo.closeAllConnections();
      await new Promise((resolve) => echo.close(resolve));
    }
  });

  it("a client that disconnects cancels the upstream request", async () => {
    let upstreamClosed: () => void = () => {};
    const closed = new Promise<void>((resolve) => (upstreamClosed = resolve));
    const slow = createServer((req, res) => {
      void body(req).then(() => {
        res.writeHead(200, { "content-type": "text/event-stream" });
        res.write(`data: {"id":"c","choices":[{"index":0,"delta":{"role":"assistant","content":"a"}}]}\n\n`);
        const timer = setInterval(() => res.write(`data: {"id":"c","choices":[{"index":0,"delta":{"content":"a"}}]}\n\n`), 20);
        res.on("close", () => {
          clearInterval(timer);
          upstreamClosed();
        });
      });
    });
    const slowUrl = await listen(slow);
    const front = await startProxy({ upstream: slowUrl });
    try {
      const controller = new AbortController();
      const response = await fetch(`${front.url}/v1/chat/completions`, { method: "POST", body: JSON.stringify({ stream: true, messages: [] }), headers: { "content-type": "application/json" }, signal: controller.signal });
      const reader = (response.body as ReadableStream<Uint8Array>).getReader();
      await reader.read();
      controller.abort();
      await closed;
    } finally {
      await front.close();
      slow.closeAllConnections();
      await new Promise((resolve) => slow.close(resolve));
    }
  });
});

describe("an orphan tool_use, against a server that rejects it the way Anthropic does", () => {
  const history = [
    { role: "user" as const, content: "list the files" },
    { role: "assistant" as const, content: [{ type: "tool_use" as const, id: "toolu_orphan_1", name: "shell", input: { command: "ls" } }] },
    { role: "user" as const, content: "and now?" },
  ];
  const stream = streamsOf("anthropic").find((candidate) => candidate.key.includes("handwritten__claude-add-and-multiply")) as ReplayStream;

  it("the server really rejects it", async () => {
    const response = await fetch(`${strictUrl}/v1/messages`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model: "m", max_tokens: 10, stream: true, messages: history }) });
    expect(response.status).toBe(400);
    expect(await response.text()).toContain("`tool_use` ids were found without `tool_result` blocks immediately after: toolu_orphan_1");
  });

  it("through the proxy with the history repair off: the 400 is recovered once, and the turn accepted", async () => {
    strictSeen.length = 0;
    const client = new Anthropic({ apiKey: "sk-ant-secret-key-3", baseURL: proxyNoHistory.url, maxRetries: 0, logLevel: "off" });
    const message = await client.messages.stream({ model: "m", max_tokens: 100, messages: history }, pick(stream)).finalMessage();
    expect(message.content.some((block) => block.type === "tool_use")).toBe(true);
    expect(strictSeen.map((seen) => seen.status)).toEqual([400, 200]);
    expect(logs.at(-1)).toMatch(/repairs=.*result_inserted.*tool_result_missing/);
  });

  it("through the proxy with the history repair on: repaired before it is sent", async () => {
    const client = new Anthropic({ apiKey: "sk-ant-secret-key-4", baseURL: proxy.url, maxRetries: 0, logLevel: "off" });
    const response = await client.messages.create({ model: "m", max_tokens: 100, messages: history, stream: true }, pick(stream)).asResponse();
    expect(response.status).toBe(200);
    expect(response.headers.get("x-toolwire-repairs")).toContain("result_inserted");
    await response.text();
  });
});

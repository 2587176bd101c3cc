import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startProxy, type ProxyServer } from "../../src/node/proxy.js";
import { chatCompletion } from "../reencode/whole-support.js";

/**
 * `toolwire proxy` in front of an upstream that answers non-streamed JSON (`stream` off): the real
 * SDKs, pointed at the proxy by base URL, get toolwire's calls in their own parsed message, and the
 * `x-toolwire-repairs` response header names every repair (a whole body is repaired before the
 * headers go out).
 */

const BODIES: Record<string, unknown> = {
  "/v1/chat/completions": chatCompletion(
    "chatcmpl-1",
    [
      ["call_0", "search", '{"q": "rust"}{"q": "zig"}'],
      ["call_0", "open", "{'url': 'https://example.com', 'new_tab': True}"],
      ["call_2", "write", '{"path": "a.md", "text": '],
    ],
    "Qwen/Qwen3-32B",
  ),
  "/v1/messages": {
    id: "msg_1",
    type: "message",
    role: "assistant",
    model: "kimi-k2",
    content: [
      { type: "text", text: "Reading both." },
      { type: "tool_use", id: "toolu_1", name: "read", input: { path: "a.ts" } },
      { type: "tool_use", id: "toolu_1", name: "read", input: '{"path": "b.ts"}' },
    ],
    stop_reason: "tool_use",
    stop_sequence: null,
    usage: { input_tokens: 10, output_tokens: 10 },
  },
};

async function drain(req: IncomingMessage): Promise<void> {
  for await (const _chunk of req) {
    // the request body is not needed
  }
}

let upstream: Server;
let proxy: ProxyServer;
const logs: string[] = [];

beforeAll(async () => {
  upstream = createServer((req, res) => {
    void drain(req).then(() => {
      const body = BODIES[(req.url ?? "").split("?")[0] ?? ""];
      res.writeHead(body ? 200 : 404, { "content-type": "application/json" });
      res.end(JSON.stringify(body ?? { error: { message: "not found" } }));
    });
  });
  await new Promise<void>((resolve) => upstream.listen(0, "127.0.0.1", resolve));
  proxy = await startProxy({ upstream: `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`, log: (line) => logs.push(line) });
});

afterAll(async () => {
  await proxy?.close();
  upstream?.closeAllConnections();
  await new Promise((resolve) => upstream?.close(resolve));
});

describe("non-streamed responses through the proxy", () => {
  it("OpenAI SDK, chat.completions.create without stream: glued calls split, Python literals repaired, a duplicate id made unique, the cut call withheld", async () => {
    const client = new OpenAI({ apiKey: "sk-secret-key", baseURL: `${proxy.url}/v1`, maxRetries: 0, logLevel: "off" });
    const completion = await client.chat.completions.create({ model: "m", messages: [{ role: "user", content: "go" }] });
    const calls = (completion.choices[0]?.message.tool_calls ?? []).map((call) => (call.type === "function" ? { id: call.id, name: call.function.name, arguments: JSON.parse(call.function.arguments) as unknown } : null));
    expect(calls).toEqual([
      { id: "call_0", name: "search", arguments: { q: "rust" } },
      // Ids are minted in the order the decoder settles calls: the second entry opened before the split.
      { id: "call_0_tw3", name: "search", arguments: { q: "zig" } },
      { id: "call_0_tw2", name: "open", arguments: { url: "https://example.com", new_tab: true } },
    ]);
    expect(completion.choices[0]?.finish_reason).toBe("tool_calls");
    expect(logs.at(-1)).toMatch(/^POST \/v1\/chat\/completions 200 \d+ms repairs=.*split_concatenated_calls.*withheld:invalid_json/);
    expect(logs.join("\n")).not.toMatch(/secret/);
  });

  it("Anthropic SDK, messages.create without stream: the duplicate id made unique, the string input an object", async () => {
    const client = new Anthropic({ apiKey: "sk-ant-secret", baseURL: proxy.url, maxRetries: 0, logLevel: "off" });
    const message = await client.messages.create({ model: "kimi-k2", max_tokens: 100, messages: [{ role: "user", content: "go" }] });
    expect(message.content.filter((block) => block.type === "tool_use").map((block) => ({ id: block.id, input: block.input }))).toEqual([
      { id: "toolu_1", input: { path: "a.ts" } },
      { id: "toolu_1_tw2", input: { path: "b.ts" } },
    ]);
    expect(message.stop_reason).toBe("tool_use");
  });

  it("the x-toolwire-repairs header names the response's repairs (known before the headers for a whole body)", async () => {
    const response = await fetch(`${proxy.url}/v1/messages`, { method: "POST", headers: { "content-type": "application/json", "x-api-key": "sk-ant-secret" }, body: JSON.stringify({ model: "m", max_tokens: 5, messages: [] }) });
    expect(response.headers.get("x-toolwire-repairs")).toBe(`minted_id,input_not_object,request_id=${response.headers.get("x-request-id")}`);
    expect(response.headers.get("content-length")).toBeNull();
    const body = (await response.json()) as { content: Array<{ id?: string }> };
    expect(body.content.map((block) => block.id ?? null)).toEqual([null, "toolu_1", "toolu_1_tw2"]);
  });
});

import OpenAI from "openai";
import fc from "fast-check";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startProxy, type ProxyServer } from "../../src/node/proxy.js";
import { readRequestBody, writeInPieces } from "./http-support.js";
import type { RepairReport } from "../../src/reencode/types.js";
import { chatTextBody, decodeBytes, TEXT_CALL_TOOLS } from "../reencode/support.js";

/**
 * `toolwire proxy --text-calls` in front of a server started without a tool-call parser: a
 * scripted upstream streams Chat chunks whose text holds the model's calls, cut into the byte
 * pieces each test asks for; the client (the real `openai` SDK, or raw fetch) gets real
 * `tool_calls`, typed by the proxy's tools or by the request's own.
 */

const HERMES = ["Let me check. <to", 'ol_call>\n{"name": "get_weather", ', '"arguments": {"city": "Paris"}}\n</tool', "_call>"];
const QWEN_XML = ["<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n<parameter=days>\n3\n</para", "meter>\n<parameter=metric>\ntrue\n</parameter>\n</function>\n</tool_call>"];
const MALFORMED = ['Here: <tool_call>\n{"name": "get_weather", "arguments": {"city": ', '"Paris"}\n', "and that is all."];

/** What the scripted upstream sends next: the body, and the byte sizes it is cut into (cycled). */
let script: { body: string; sizes: readonly number[] } = { body: "", sizes: [1] };
const seenBodies: string[] = [];

let upstream: Server;
let upstreamUrl: string;
let proxy: ProxyServer;
let typedProxy: ProxyServer;
let routedProxy: ProxyServer;
let plainProxy: ProxyServer;
const reports: RepairReport[] = [];

beforeAll(async () => {
  upstream = createServer((req, res) => {
    void (async () => {
      const sent = await readRequestBody(req);
      seenBodies.push(sent);
      if ((JSON.parse(sent) as { stream?: boolean }).stream !== true) {
        // Not streamed: the whole chat.completion a parser-less server answers, the model's text as its content.
        const content = script.body
          .split("\n\n")
          .filter((block) => block.startsWith("data: {"))
          .map((block) => (JSON.parse(block.slice(6)) as { choices: Array<{ delta?: { content?: string } }> }).choices[0]?.delta?.content ?? "")
          .join("");
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify({ id: "chatcmpl-1", object: "chat.completion", created: 1, model: "qwen", choices: [{ index: 0, message: { role: "assistant", content }, finish_reason: "stop" }] }));
        return;
      }
      res.writeHead(200, { "content-type": "text/event-stream" });
      await writeInPieces(res, script.body, script.sizes);
    })();
  });
  await new Promise<void>((resolve) => upstream.listen(0, "127.0.0.1", resolve));
  upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
  proxy = await startProxy({ upstream: upstreamUrl, textCalls: "auto", onRepair: (report) => reports.push(report) });
  typedProxy = await startProxy({ upstream: upstreamUrl, textCalls: { syntaxes: "auto", tools: TEXT_CALL_TOOLS } });
  routedProxy = await startProxy({ routes: [{ prefix: "/vllm", upstream: upstreamUrl, textCalls: ["hermes", "qwen3-coder"] }, { prefix: "/raw", upstream: upstreamUrl }] });
  plainProxy = await startProxy({ upstream: upstreamUrl });
});

afterAll(async () => {
  await Promise.all([proxy, typedProxy, routedProxy, plainProxy].map((server) => server?.close()));
  await new Promise<void>((resolve) => (upstream ? upstream.close(() => resolve()) : resolve()));
});

function client(base: string): OpenAI {
  return new OpenAI({ apiKey: "sk-test", baseURL: `${base}/v1`, maxRetries: 0 });
}

/** Posts a streamed Chat request through `base` and returns the body bytes the client gets. */
async function post(base: string, path = "/v1/chat/completions", extra: Record<string, unknown> = {}): Promise<string> {
  const response = await fetch(`${base}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model: "qwen", stream: true, messages: [{ role: "user", content: "weather?" }], ...extra }) });
  expect(response.status).toBe(200);
  return response.text();
}

function decoded(text: string) {
  return decodeBytes("openai-chat", new TextEncoder().encode(text));
}

describe("toolwire proxy --text-calls (a server without a tool parser)", () => {
  it("the openai SDK gets a Hermes call cut inside its markers as a real tool call", async () => {
    script = { body: chatTextBody(HERMES), sizes: [7, 1, 13, 3] };
    reports.length = 0;
    const stream = client(proxy.url).chat.completions.stream({ model: "qwen", messages: [{ role: "user", content: "weather in Paris?" }] });
    const completion = await stream.finalChatCompletion();
    const choice = completion.choices[0];
    expect(choice?.finish_reason).toBe("tool_calls");
    expect(choice?.message.content).toBe("Let me check. ");
    expect(choice?.message.tool_calls).toHaveLength(1);
    const call = choice?.message.tool_calls?.[0];
    expect(call?.type).toBe("function");
    expect(call?.type === "function" ? [call.id, call.function.name, JSON.parse(call.function.arguments)] : null).toEqual(["tw_text_0", "get_weather", { city: "Paris" }]);
    expect(reports.map((report) => `${report.action}:${report.code}`)).toEqual(["rewritten:text_call_extracted", "normalized:finish_reason_text_calls"]);
  });

  it("a non-streamed request gets the call in message.tool_calls (the openai SDK's create)", async () => {
    script = { body: chatTextBody(HERMES), sizes: [1] };
    const completion = await client(proxy.url).chat.completions.create({ model: "qwen", messages: [{ role: "user", content: "weather in Paris?" }] });
    const choice = completion.choices[0];
    expect(choice?.message.content).toBe("Let me check. ");
    const call = choice?.message.tool_calls?.[0];
    expect(call?.type === "function" ? [call.id, call.function.name, JSON.parse(call.function.arguments)] : null).toEqual(["tw_text_0", "get_weather", { city: "Paris" }]);
    expect(choice?.finish_reason).toBe("tool_calls");
  });

  it("types Qwen3-Coder XML parameters by the proxy's tools, and by the request's own tools first", async () => {
    script = { body: chatTextBody(QWEN_XML), sizes: [5, 11] };
    expect(decoded(await post(typedProxy.url)).toolCalls[0]?.arguments).toEqual({ city: "Paris", days: 3, metric: true });
    // Without tools anywhere, every XML value is a string.
    expect(decoded(await post(proxy.url)).toolCalls[0]?.arguments).toEqual({ city: "Paris", days: "3", metric: "true" });
    // The request's tools (Chat shape) take the place of the proxy's: here `days` is a string, `metric` a boolean.
    const requestTools = [{ type: "function", function: { name: "get_weather", parameters: { type: "object", properties: { days: { type: "string" }, metric: { type: "boolean" } } } } }];
    expect(decoded(await post(typedProxy.url, undefined, { tools: requestTools })).toolCalls[0]?.arguments).toEqual({ city: "Paris", days: "3", metric: true });
    // The request reaches the upstream with its tools.
    expect(JSON.parse(seenBodies.at(-1) as string).tools).toHaveLength(1);
  });

  it("a call to a tool the request does not offer stays text", async () => {
    script = { body: chatTextBody(HERMES), sizes: [64] };
    const requestTools = [{ type: "function", function: { name: "search", parameters: { type: "object", properties: {} } } }];
    const turn = decoded(await post(proxy.url, undefined, { tools: requestTools }));
    expect(turn.toolCalls).toEqual([]);
    expect(turn.text).toBe(HERMES.join(""));
    expect(turn.finishReason).toBe("stop");
  });

  it("releases malformed markup as text, byte for byte, with no call and the finish reason unchanged", async () => {
    script = { body: chatTextBody(MALFORMED), sizes: [3, 17] };
    const completion = await client(proxy.url).chat.completions.stream({ model: "qwen", messages: [{ role: "user", content: "hi" }] }).finalChatCompletion();
    expect(completion.choices[0]?.message.content).toBe(MALFORMED.join(""));
    expect(completion.choices[0]?.message.tool_calls ?? []).toEqual([]);
    expect(completion.choices[0]?.finish_reason).toBe("stop");
  });

  it("passes a stream without calls or markup byte for byte", async () => {
    const body = chatTextBody(["Hello", ", a < b and [1] ", "are plain."]);
    script = { body, sizes: [9, 2] };
    expect(await post(proxy.url)).toBe(body);
  });

  it("re-chunks only: text held while a marker may start is sent with the next delta", async () => {
    const body = chatTextBody(["Hello <", "b>world</b>"]);
    script = { body, sizes: [1000] };
    const text = await post(proxy.url);
    expect(text).not.toBe(body);
    expect(decoded(text).text).toBe("Hello <b>world</b>");
  });

  it("reads text calls on the routes whose textCalls say so, and on no other", async () => {
    script = { body: chatTextBody(HERMES), sizes: [10] };
    expect(decoded(await post(routedProxy.url, "/vllm/v1/chat/completions")).toolCalls.map((call) => call.name)).toEqual(["get_weather"]);
    expect(await post(routedProxy.url, "/raw/v1/chat/completions")).toBe(chatTextBody(HERMES));
    expect(await post(plainProxy.url)).toBe(chatTextBody(HERMES));
  });

  it("Ollama /api/chat: the call goes out in message.tool_calls of an NDJSON line", async () => {
    const line = (content: string, done = false) => `${JSON.stringify({ model: "qwen3", created_at: "2026-01-01T00:00:00Z", message: { role: "assistant", content }, done, ...(done ? { done_reason: "stop" } : {}) })}\n`;
    const ollama = createServer((req, res) => {
      req.resume();
      req.on("end", () => {
        res.writeHead(200, { "content-type": "application/x-ndjson" });
        res.end(HERMES.map((piece) => line(piece)).join("") + line("", true));
      });
    });
    await new Promise<void>((resolve) => ollama.listen(0, "127.0.0.1", resolve));
    const ollamaProxy = await startProxy({ upstream: `http://127.0.0.1:${(ollama.address() as AddressInfo).port}`, textCalls: "auto" });
    try {
      const response = await fetch(`${ollamaProxy.url}/api/chat`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model: "qwen3", messages: [{ role: "user", content: "weather?" }] }) });
      const lines = (await response.text()).trim().split("\n").map((text) => JSON.parse(text) as { message: { content: string; tool_calls?: Array<{ function: { name: string; arguments: unknown } }> }; done: boolean });
      expect(lines.map((entry) => entry.message.content).join("")).toBe("Let me check. ");
      expect(lines.flatMap((entry) => entry.message.tool_calls ?? []).map((call) => [call.function.name, call.function.arguments])).toEqual([["get_weather", { city: "Paris" }]]);
      expect(lines.at(-1)?.done).toBe(true);
    } finally {
      await ollamaProxy.close();
      await new Promise<void>((resolve) => ollama.close(() => resolve()));
    }
  });

  it("for any chunking of the upstream body, the client decodes the same calls and text", async () => {
    const bodies = [chatTextBody(HERMES), chatTextBody(QWEN_XML), chatTextBody(MALFORMED), chatTextBody(["<think>hmm</think>", ...HERMES])];
    const expected: Array<ReturnType<typeof decoded>> = [];
    for (const body of bodies) {
      script = { body, sizes: [body.length] };
      expected.push(decoded(await post(typedProxy.url)));
    }
    expect(expected.map((turn) => turn.toolCalls.length)).toEqual([1, 1, 0, 1]);
    expect(expected[3]?.reasoning).toBe("hmm");
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: bodies.length - 1 }), fc.array(fc.integer({ min: 1, max: 48 }), { minLength: 1, maxLength: 5 }), async (which, sizes) => {
        script = { body: bodies[which] as string, sizes };
        const turn = decoded(await post(typedProxy.url));
        const want = expected[which];
        expect(turn.text).toBe(want?.text);
        expect(turn.reasoning).toBe(want?.reasoning);
        expect(turn.finishReason).toBe(want?.finishReason);
        expect(turn.toolCalls.map((call) => [call.id, call.name, call.arguments])).toEqual(want?.toolCalls.map((call) => [call.id, call.name, call.arguments]));
      }),
      { numRuns: 25 },
    );
  });
});

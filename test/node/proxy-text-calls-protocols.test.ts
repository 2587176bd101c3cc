import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import fc from "fast-check";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startProxy, type ProxyServer } from "../../src/node/proxy.js";
import { readRequestBody, writeInPieces } from "./http-support.js";
import type { RepairReport } from "../../src/reencode/types.js";
import { anthropicTextBody, decodeBytes, responsesTextBody } from "../reencode/support.js";

/**
 * `toolwire proxy --text-calls` in front of a server without a tool parser, on the protocols other
 * than Chat Completions it speaks: Anthropic Messages (`/v1/messages`) and OpenAI Responses
 * (`/v1/responses`), streamed and whole, and Ollama `/api/chat` with `stream: false`. A scripted
 * upstream sends the model's text, cut into the byte pieces each test asks for; the client is the
 * real `@anthropic-ai/sdk` or `openai`, or raw fetch.
 */

const HERMES = ["Let me check. <to", 'ol_call>\n{"name": "get_weather", ', '"arguments": {"city": "Paris"}}\n</tool', "_call>"];
const MALFORMED = ['Here: <tool_call>\n{"name": "get_weather", "arguments": {"city": ', '"Paris"}\n', "and that is all."];

let script: { pieces: readonly string[]; sizes: readonly number[]; thinking?: readonly string[] } = { pieces: [], sizes: [1] };

let upstream: Server;
let proxy: ProxyServer;
const reports: RepairReport[] = [];

beforeAll(async () => {
  upstream = createServer((req, res) => {
    void (async () => {
      const sent = JSON.parse(await readRequestBody(req)) as { stream?: boolean };
      const text = script.pieces.join("");
      if (req.url?.startsWith("/api/chat")) {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify({ model: "qwen3", created_at: "2026-01-01T00:00:00Z", message: { role: "assistant", content: text }, done: true, done_reason: "stop" }));
        return;
      }
      if (req.url?.startsWith("/v1/responses") && sent.stream !== true) {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify({ id: "resp_1", object: "response", created_at: 1, model: "qwen", status: "completed", output: [{ id: "msg_1", type: "message", status: "completed", role: "assistant", content: [{ type: "output_text", text, annotations: [] }] }] }));
        return;
      }
      if (sent.stream !== true) {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify({ id: "msg_1", type: "message", role: "assistant", model: "qwen", content: [{ type: "text", text }], stop_reason: "end_turn", stop_sequence: null, usage: { input_tokens: 5, output_tokens: 7 } }));
        return;
      }
      res.writeHead(200, { "content-type": "text/event-stream" });
      await writeInPieces(res, req.url?.startsWith("/v1/responses") ? responsesTextBody(script.pieces) : anthropicTextBody(script.pieces, "end_turn", script.thinking ?? []), script.sizes);
    })();
  });
  await new Promise<void>((resolve) => upstream.listen(0, "127.0.0.1", resolve));
  proxy = await startProxy({ upstream: `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`, textCalls: "auto", onRepair: (report) => reports.push(report) });
});

afterAll(async () => {
  await proxy?.close();
  await new Promise<void>((resolve) => (upstream ? upstream.close(() => resolve()) : resolve()));
});

function anthropic(): Anthropic {
  return new Anthropic({ apiKey: "sk-ant-test", baseURL: proxy.url, maxRetries: 0 });
}

const REQUEST = { model: "qwen", max_tokens: 256, messages: [{ role: "user" as const, content: "weather in Paris?" }] };

describe("toolwire proxy --text-calls: Anthropic Messages", () => {
  it("the Anthropic SDK's stream helper gets text, a tool_use block and stop_reason tool_use", async () => {
    script = { pieces: [...HERMES, " Done."], sizes: [7, 1, 13, 3], thinking: ["hm"] };
    reports.length = 0;
    const message = await anthropic().messages.stream(REQUEST).finalMessage();
    expect(message.content.map((block) => block.type)).toEqual(["thinking", "text", "tool_use", "text"]);
    expect(message.content[1]).toMatchObject({ type: "text", text: "Let me check. " });
    expect(message.content[2]).toMatchObject({ type: "tool_use", id: "tw_text_0", name: "get_weather", input: { city: "Paris" } });
    expect(message.content[3]).toMatchObject({ type: "text", text: " Done." });
    expect(message.stop_reason).toBe("tool_use");
    expect(reports.map((report) => `${report.action}:${report.code}`)).toEqual(["rewritten:text_call_extracted", "normalized:finish_reason_text_calls"]);
  });

  it("moves <think> in the text to a thinking block the SDK reads", async () => {
    script = { pieces: ["<think>I should", " look</think>", ...HERMES], sizes: [5] };
    const message = await anthropic().messages.stream(REQUEST).finalMessage();
    expect(message.content.map((block) => block.type)).toEqual(["thinking", "text", "tool_use"]);
    expect(message.content[0]).toMatchObject({ type: "thinking", thinking: "I should look" });
  });

  it("a non-streamed request gets the tool_use block (the SDK's create)", async () => {
    script = { pieces: HERMES, sizes: [1] };
    const message = await anthropic().messages.create(REQUEST);
    expect(message.content).toEqual([
      { type: "text", text: "Let me check. " },
      { type: "tool_use", id: "tw_text_0", name: "get_weather", input: { city: "Paris" } },
    ]);
    expect(message.stop_reason).toBe("tool_use");
  });

  it("releases malformed markup as text with stop_reason end_turn; a stream without markup passes byte for byte", async () => {
    script = { pieces: MALFORMED, sizes: [3, 17] };
    const message = await anthropic().messages.stream(REQUEST).finalMessage();
    expect(message.content.map((block) => (block.type === "text" ? block.text : block.type))).toEqual([MALFORMED.join("")]);
    expect(message.stop_reason).toBe("end_turn");
    script = { pieces: ["Hello", ", it is ", "sunny."], sizes: [9, 2] };
    const response = await fetch(`${proxy.url}/v1/messages`, { method: "POST", headers: { "content-type": "application/json", "x-api-key": "k", "anthropic-version": "2023-06-01" }, body: JSON.stringify({ ...REQUEST, stream: true }) });
    expect(await response.text()).toBe(anthropicTextBody(script.pieces));
  });

  it("for any chunking of the upstream body, the SDK builds the same message", async () => {
    const cases = [[...HERMES, " Done."], MALFORMED, ["<think>hmm</think>", ...HERMES]];
    const expected: unknown[] = [];
    for (const pieces of cases) {
      script = { pieces, sizes: [100000] };
      expected.push(await anthropic().messages.stream(REQUEST).finalMessage());
    }
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: cases.length - 1 }), fc.array(fc.integer({ min: 1, max: 48 }), { minLength: 1, maxLength: 5 }), async (which, sizes) => {
        script = { pieces: cases[which] as string[], sizes };
        expect(await anthropic().messages.stream(REQUEST).finalMessage()).toEqual(expected[which]);
      }),
      { numRuns: 20 },
    );
  });
});

describe("toolwire proxy --text-calls: Ollama /api/chat with stream: false", () => {
  it("the call in message.content becomes message.tool_calls", async () => {
    script = { pieces: HERMES, sizes: [1] };
    const response = await fetch(`${proxy.url}/api/chat`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model: "qwen3", stream: false, messages: [{ role: "user", content: "weather?" }] }) });
    const body = (await response.json()) as { message: Record<string, unknown>; done: boolean };
    expect(body.message).toEqual({ role: "assistant", content: "Let me check. ", tool_calls: [{ id: "tw_text_0", function: { index: 0, name: "get_weather", arguments: { city: "Paris" } } }] });
    expect(body.done).toBe(true);
    expect(decodeBytes("ollama", new TextEncoder().encode(JSON.stringify(body))).toolCalls.map((call) => call.arguments)).toEqual([{ city: "Paris" }]);
  });
});

describe("toolwire proxy --text-calls: OpenAI Responses", () => {
  const openai = (): OpenAI => new OpenAI({ apiKey: "sk-test", baseURL: `${proxy.url}/v1`, maxRetries: 0 });
  const summary = (response: OpenAI.Responses.Response) => response.output.map((item) => (item.type === "message" ? ["message", item.content.map((part) => (part.type === "output_text" ? part.text : "")).join("")] : item.type === "function_call" ? ["function_call", item.call_id, item.name, JSON.parse(item.arguments)] : [item.type]));

  it("the openai SDK's stream helper gets message, function_call and message items", async () => {
    script = { pieces: ["<think>hm</think>", ...HERMES, " Done."], sizes: [7, 1, 13, 3] };
    const response = await openai().responses.stream({ model: "qwen", input: "weather in Paris?" }).finalResponse();
    expect(summary(response)).toEqual([["reasoning"], ["message", "Let me check. "], ["function_call", "tw_text_0", "get_weather", { city: "Paris" }], ["message", " Done."]]);
  });

  it("a non-streamed request gets the function_call item (the SDK's create)", async () => {
    script = { pieces: HERMES, sizes: [1] };
    const response = await openai().responses.create({ model: "qwen", input: "weather in Paris?" });
    expect(summary(response)).toEqual([["message", "Let me check. "], ["function_call", "tw_text_0", "get_weather", { city: "Paris" }]]);
  });

  it("for any chunking of the upstream body, the SDK builds the same response", async () => {
    const cases = [[...HERMES, " Done."], MALFORMED, ["<think>hmm</think>", ...HERMES]];
    const expected: unknown[] = [];
    for (const pieces of cases) {
      script = { pieces, sizes: [100000] };
      expected.push(await openai().responses.stream({ model: "qwen", input: "hi" }).finalResponse());
    }
    expect(summary(expected[1] as OpenAI.Responses.Response)).toEqual([["message", MALFORMED.join("")]]);
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: cases.length - 1 }), fc.array(fc.integer({ min: 1, max: 48 }), { minLength: 1, maxLength: 5 }), async (which, sizes) => {
        script = { pieces: cases[which] as string[], sizes };
        expect(await openai().responses.stream({ model: "qwen", input: "hi" }).finalResponse()).toEqual(expected[which]);
      }),
      { numRuns: 20 },
    );
  });
});

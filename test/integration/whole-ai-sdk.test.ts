import { createAnthropic } from "@ai-sdk/anthropic";
import { createGoogleGenerativeAI } from "@ai-sdk/google";
import { createOpenAI } from "@ai-sdk/openai";
import { generateText, jsonSchema, tool, type LanguageModel, type Tool } from "ai";
import { describe, expect, it } from "vitest";
import { createRepairingFetch } from "../../src/fetch/index.js";
import { repairWholeResponse } from "../../src/reencode/whole.js";
import type { ProviderName } from "../../src/types.js";
import { chatCompletion, runnable } from "../reencode/whole-support.js";

/**
 * The AI SDK's `generateText` (non-streamed requests) with the repairing fetch as its provider's
 * `fetch`, over a base fetch answering quirky whole bodies: the SDK's own response parsing accepts
 * the repaired JSON, and `result.toolCalls` holds the calls toolwire decodes as runnable.
 */

function answering(body: unknown): (input: RequestInfo | URL, init?: RequestInit) => Promise<Response> {
  return async () => new Response(JSON.stringify(body), { status: 200, headers: { "content-type": "application/json" } });
}

const tools: Record<string, Tool> = Object.fromEntries(["search", "open", "read", "add", "multiply"].map((name) => [name, tool({ inputSchema: jsonSchema({ type: "object" }) })]));

async function toolCalls(model: LanguageModel): Promise<Array<{ id: string; name: string; arguments: unknown }>> {
  const result = await generateText({ model, prompt: "go", tools, maxRetries: 0 });
  return result.toolCalls.map((call) => ({ id: call.toolCallId, name: call.toolName, arguments: call.input }));
}

const CHAT = chatCompletion("chatcmpl-ai", [
  ["call_0", "search", "{'q': 'zig', 'exact': True}"],
  ["call_0", "open", '{"url": "a"}{"url": "b"}'],
  ["call_2", "read", '{"path": '],
]);

const RESPONSES = {
  id: "resp_ai",
  object: "response",
  created_at: 1760000000,
  status: "completed",
  model: "gpt-4.1",
  output: [
    { id: "fc_1", type: "function_call", status: "completed", call_id: "call_1", name: "search", arguments: '{"q":"a"}{"q":"b"}' },
    { id: "fc_2", type: "function_call", status: "completed", call_id: "call_1", name: "read", arguments: '{"path":"x"}' },
  ],
  usage: { input_tokens: 5, output_tokens: 5, total_tokens: 10, input_tokens_details: { cached_tokens: 0 }, output_tokens_details: { reasoning_tokens: 0 } },
};

const ANTHROPIC = {
  id: "msg_ai",
  type: "message",
  role: "assistant",
  model: "kimi-k2",
  content: [
    { type: "text", text: "Reading." },
    { type: "tool_use", id: "toolu_1", name: "read", input: { path: "a" } },
    { type: "tool_use", id: "toolu_1", name: "read", input: '{"path": "b"}' },
    { type: "tool_use", id: "toolu_3", name: "search", input: "{q: " },
  ],
  stop_reason: "tool_use",
  stop_sequence: null,
  usage: { input_tokens: 5, output_tokens: 5 },
};

const GEMINI = {
  candidates: [{ content: { role: "model", parts: [{ functionCall: { name: "add", args: { a: 2, b: 3 } }, thoughtSignature: "c2ln" }, { functionCall: { name: "multiply", args: '{"a": 2, "b": 3}' } }, { functionCall: { name: "search", args: "[1]" } }] }, finishReason: "STOP", index: 0 }],
  usageMetadata: { promptTokenCount: 5, candidatesTokenCount: 5, totalTokenCount: 10 },
  modelVersion: "gemini-2.5-flash",
  responseId: "r-ai",
};

function expected(provider: ProviderName, body: unknown, withIds = true): unknown {
  return runnable(repairWholeResponse(provider, body).turn, withIds);
}

describe("the AI SDK's generateText through the repairing fetch (non-streamed)", () => {
  it("@ai-sdk/openai chat", async () => {
    const provider = createOpenAI({ apiKey: "sk-test", baseURL: "https://api.openai.com/v1", fetch: createRepairingFetch({ fetch: answering(CHAT) }) });
    const calls = await toolCalls(provider.chat("gpt-test"));
    expect(calls).toEqual(expected("openai-chat", CHAT));
    expect(calls).toHaveLength(3);
  });

  it("@ai-sdk/openai responses", async () => {
    const provider = createOpenAI({ apiKey: "sk-test", baseURL: "https://api.openai.com/v1", fetch: createRepairingFetch({ fetch: answering(RESPONSES) }) });
    const calls = await toolCalls(provider.responses("gpt-test"));
    expect(calls).toEqual(expected("openai-responses", RESPONSES));
    expect(new Set(calls.map((call) => call.id)).size).toBe(3);
  });

  it("@ai-sdk/anthropic", async () => {
    const provider = createAnthropic({ apiKey: "sk-ant-test", baseURL: "https://api.anthropic.com/v1", fetch: createRepairingFetch({ fetch: answering(ANTHROPIC) }) });
    const calls = await toolCalls(provider("claude-test"));
    expect(calls).toEqual(expected("anthropic", ANTHROPIC));
    expect(calls.map((call) => call.id)).toEqual(["toolu_1", "toolu_1_tw2"]);
  });

  it("@ai-sdk/google (it names calls by its own ids: compared without them)", async () => {
    const provider = createGoogleGenerativeAI({ apiKey: "gemini-test", baseURL: "https://generativelanguage.googleapis.com/v1beta", fetch: createRepairingFetch({ fetch: answering(GEMINI) }) });
    const calls = await toolCalls(provider("gemini-2.5-flash"));
    expect(calls.map(({ name, arguments: args }) => ({ name, arguments: args }))).toEqual(expected("gemini", GEMINI, false));
  });
});

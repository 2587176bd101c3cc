import { createAnthropic } from "@ai-sdk/anthropic";
import { createGoogleGenerativeAI } from "@ai-sdk/google";
import { createOpenAI } from "@ai-sdk/openai";
import { jsonSchema, streamText, tool, type LanguageModel, type Tool } from "ai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createRepairingFetch } from "../../src/fetch/index.js";
import type { ReplayServer, ReplayStream } from "../../src/node/replay-server.js";
import { fileTurn, startTestdataServer, streamsOf } from "./support.js";

/**
 * The AI SDK (`ai` with `@ai-sdk/openai`, `@ai-sdk/anthropic` and `@ai-sdk/google`) with the repairing fetch as its
 * provider's `fetch`: `streamText(…).toolCalls` holds the calls toolwire decodes as runnable, on the
 * quirk streams where the AI SDK alone would merge, drop or mangle them.
 */

let server: ReplayServer;
beforeAll(async () => {
  server = await startTestdataServer();
});
afterAll(async () => {
  await server?.close();
});

const repairingFetch = createRepairingFetch();

function toolsFor(stream: ReplayStream): Record<string, Tool> {
  const names = new Set(fileTurn(stream).toolCalls.map((call) => call.name));
  return Object.fromEntries([...names].map((name) => [name, tool({ inputSchema: jsonSchema({ type: "object" }) })]));
}

async function calls(model: LanguageModel, stream: ReplayStream): Promise<unknown> {
  const result = streamText({ model, prompt: "hi", tools: toolsFor(stream), headers: { "x-toolwire-stream": stream.key }, maxRetries: 0, onError: () => {} });
  await result.consumeStream();
  return (await result.toolCalls).map((call) => ({ id: call.toolCallId, name: call.toolName, arguments: call.input }));
}

function expected(stream: ReplayStream): unknown {
  return fileTurn(stream).toolCalls.filter((call) => call.arguments !== null).map((call) => ({ id: call.id, name: call.name, arguments: call.arguments }));
}

const chat = streamsOf("openai-chat").filter((stream) => /index-zero|qianfan|opencodex|xlam-final-flush|venice|length-mid-call|gpt-4o|gpt-add-and-multiply/.test(stream.key));
const anthropic = streamsOf("anthropic").filter((stream) => /kimi_tool_call_sequences|incomplete_partial_json|claude-sonnet-4__multi_tool|kimi-start-input|claude-max-tokens|claude-add-and-multiply/.test(stream.key));

describe("@ai-sdk/openai (chat) through the repairing fetch", () => {
  it.each(chat.map((stream) => [stream.key, stream] as const))("%s", async (_key, stream) => {
    const provider = createOpenAI({ apiKey: "sk-toolwire-test", baseURL: `${server.url}/v1`, fetch: repairingFetch });
    expect(await calls(provider.chat("gpt-test"), stream)).toEqual(expected(stream));
  });
});

describe("@ai-sdk/anthropic through the repairing fetch", () => {
  it.each(anthropic.map((stream) => [stream.key, stream] as const))("%s", async (_key, stream) => {
    const provider = createAnthropic({ apiKey: "sk-ant-toolwire-test", baseURL: `${server.url}/v1`, fetch: repairingFetch });
    expect(await calls(provider("claude-test"), stream)).toEqual(expected(stream));
  });
});

describe("@ai-sdk/google through the repairing fetch", () => {
  // Every Gemini stream of testdata: the SDK's calls carry toolwire's ids (minted where Gemini sent
  // none), its arguments, and none of the calls toolwire withholds.
  it.each(streamsOf("gemini").map((stream) => [stream.key, stream] as const))("%s", async (_key, stream) => {
    const provider = createGoogleGenerativeAI({ apiKey: "toolwire-test-key", baseURL: `${server.url}/v1beta`, fetch: repairingFetch });
    expect(await calls(provider("gemini-test"), stream)).toEqual(expected(stream));
  });
});

import { copyFileSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createAnthropic } from "@ai-sdk/anthropic";
import { createGoogleGenerativeAI } from "@ai-sdk/google";
import { createOpenAI } from "@ai-sdk/openai";
import { generateText, jsonSchema, simulateReadableStream, streamText, tool, wrapLanguageModel } from "ai";
import * as aiTest from "ai/test";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { aiSdkProviderOf, toolwireMiddleware, type ToolwireLanguageModelMiddleware } from "../../src/adapters/ai-sdk.js";
import { startServe } from "../../src/cli/commands/serve.js";
import { serializeRecords } from "../../src/framing/records.js";
import type { ReplayServer } from "../../src/node/replay-server.js";
import { a } from "../helpers/anthropic-events.js";
import { TESTDATA } from "../helpers/testdata.js";

/**
 * Issue 29: the AI SDK middleware, with the real `ai` package and its providers against
 * `toolwire serve` (hand-written streams only). Without it, a call the model cut or garbled
 * vanishes from `fullStream`; with it, the AI SDK's own tool-error / experimental_repairToolCall
 * path receives it with toolwire's message, and repaired calls arrive repaired.
 */

let server: ReplayServer;
beforeAll(async () => {
  const dir = mkdtempSync(join(tmpdir(), "toolwire-ai-sdk-mw-"));
  copyFileSync(join(TESTDATA, "openai-chat/handwritten__openai-length-mid-call.ndjson"), join(dir, "cut.ndjson"));
  copyFileSync(join(TESTDATA, "openai-chat/handwritten__groq-several-calls-one-delta.ndjson"), join(dir, "groq.ndjson"));
  copyFileSync(join(TESTDATA, "gemini/handwritten__streamed_args_edge_cases.ndjson"), join(dir, "gemini.ndjson"));
  writeFileSync(
    join(dir, "claude.ndjson"),
    serializeRecords([
      {
        sequence: "glued",
        provider: "anthropic",
        events: [a.messageStart("msg_g"), a.toolStart(0, "toolu_3", "read_file"), a.json(0, '{"path":"c.txt"}{"path":"d.txt"}'), a.stop(0), a.messageDelta("tool_use"), a.messageStop()],
      },
      {
        sequence: "cut",
        provider: "anthropic",
        events: [a.messageStart("msg_c"), a.toolStart(0, "toolu_4", "read_file"), a.json(0, '{"path":"ok.txt"}'), a.stop(0), a.toolStart(1, "toolu_5", "write_file"), a.json(1, '{"path":"b.txt","text":"a very lo'), a.messageDelta("max_tokens"), a.messageStop()],
      },
    ]),
  );
  server = await startServe(["."], { out: () => {}, err: () => {}, cwd: dir });
});
afterAll(async () => {
  await server?.close();
});

const anyArgs = jsonSchema<Record<string, unknown>>({ type: "object", additionalProperties: true });
const TOOLS = {
  read_file: tool({ inputSchema: anyArgs, execute: async (input) => `read ${JSON.stringify(input)}` }),
  write_file: tool({ inputSchema: anyArgs, execute: async () => "written" }),
  get_weather: tool({ inputSchema: anyArgs, execute: async () => "sunny" }),
  get_time: tool({ inputSchema: anyArgs, execute: async () => "noon" }),
  make_file: tool({ inputSchema: anyArgs, execute: async () => "made" }),
  list_dir: tool({ inputSchema: anyArgs, execute: async () => "a.txt" }),
};

type Model = ReturnType<ReturnType<typeof createOpenAI>["chat"]> | ReturnType<ReturnType<typeof createAnthropic>> | ReturnType<ReturnType<typeof createGoogleGenerativeAI>>;

function gemini(stream: string): Model {
  return createGoogleGenerativeAI({ apiKey: "test", baseURL: `${server.url}/v1beta`, headers: { "x-toolwire-stream": stream } })("gemini-test");
}

function chat(stream: string): Model {
  return createOpenAI({ apiKey: "sk-test", baseURL: `${server.url}/v1`, headers: { "x-toolwire-stream": stream } }).chat("gpt-test");
}

function claude(stream: string): Model {
  return createAnthropic({ apiKey: "sk-ant-test", baseURL: `${server.url}/v1`, headers: { "x-toolwire-stream": stream } })("claude-test");
}

interface Extra {
  includeRawChunks?: boolean;
  experimental_repairToolCall?: (options: { toolCall: { toolName: string; providerMetadata?: unknown }; error: Error }) => Promise<null>;
}

async function parts(model: Parameters<typeof streamText>[0]["model"], extra: Extra = {}) {
  const result = streamText({ model, prompt: "hi", tools: TOOLS, ...extra });
  const seen: Array<{ type: string; [key: string]: unknown }> = [];
  for await (const part of result.fullStream) seen.push(part as { type: string });
  return seen;
}

describe("toolwireMiddleware with the real AI SDK", () => {
  it("knows the protocols from the AI SDK's provider names", () => {
    expect(aiSdkProviderOf("openai.chat")).toBe("openai-chat");
    expect(aiSdkProviderOf("openai.responses")).toBe("openai-responses");
    expect(aiSdkProviderOf("anthropic.messages")).toBe("anthropic");
    expect(aiSdkProviderOf("vertex.anthropic.messages")).toBe("anthropic");
    expect(aiSdkProviderOf("google.generative-ai")).toBe("gemini");
    expect(aiSdkProviderOf("amazon-bedrock")).toBe("bedrock");
    expect(aiSdkProviderOf("groq.chat")).toBe("openai-chat");
    expect(aiSdkProviderOf("someone.else")).toBeNull();
  });

  it("declares the middleware specification AI SDK 6 and 7 both take (v3), or v4 when asked; the same behaviour", () => {
    expect(toolwireMiddleware().specificationVersion).toBe("v3");
    expect(toolwireMiddleware({ specificationVersion: "v4" }).specificationVersion).toBe("v4");
    expect(Object.keys(toolwireMiddleware({ specificationVersion: "v4" })).sort()).toEqual(Object.keys(toolwireMiddleware()).sort());
  });

  it("a call cut by the length limit: gone from fullStream without toolwire; a tool-error with toolwire's message with it", async () => {
    const without = await parts(chat("cut"));
    const plainCalls = without.filter((part) => part.type === "tool-call" || part.type === "tool-error");
    const withMiddleware = await parts(wrapLanguageModel({ model: chat("cut"), middleware: toolwireMiddleware() }));
    const errors = withMiddleware.filter((part) => part.type === "tool-error");
    expect(errors).toHaveLength(1);
    expect(String(errors[0]?.error)).toContain("toolwire: truncated");
    // Strictly more reaches the application than without the middleware.
    expect(withMiddleware.filter((part) => part.type === "tool-call" || part.type === "tool-error").length).toBeGreaterThan(plainCalls.filter((part) => part.type === "tool-error").length);
    const call = withMiddleware.find((part) => part.type === "tool-call" && part.invalid === true) as { providerMetadata?: { toolwire?: { error?: string; message?: string } } } | undefined;
    expect(call?.providerMetadata?.toolwire?.error).toBe("truncated");
    expect(call?.providerMetadata?.toolwire?.message).toMatch(/not executed|cut|limit/i);
  });

  it("experimental_repairToolCall receives the call toolwire withheld, with toolwire's reason", async () => {
    const seen: Array<{ toolName: string; error: string; toolwire: unknown }> = [];
    await parts(wrapLanguageModel({ model: claude("cut"), middleware: toolwireMiddleware() }), {
      experimental_repairToolCall: async ({ toolCall, error }) => {
        seen.push({ toolName: toolCall.toolName, error: error.message, toolwire: (toolCall.providerMetadata as { toolwire?: unknown } | undefined)?.toolwire });
        return null;
      },
    });
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatchObject({ toolName: "write_file", toolwire: { error: "truncated", rawArguments: '{"path":"b.txt","text":"a very lo' } });
    expect(seen[0]?.error).toContain("toolwire: truncated");
  });

  it("glued arguments reach the tools as the calls toolwire split them into; valid calls are unchanged", async () => {
    const glued = await parts(wrapLanguageModel({ model: claude("glued"), middleware: toolwireMiddleware() }));
    const results = glued.filter((part) => part.type === "tool-result").map((part) => part.output);
    expect(results).toEqual(['read {"path":"c.txt"}', 'read {"path":"d.txt"}']);

    const plain = (await parts(chat("groq"))).filter((part) => part.type === "tool-call").map((part) => [part.toolName, part.input]);
    const wrapped = (await parts(wrapLanguageModel({ model: chat("groq"), middleware: toolwireMiddleware() }))).filter((part) => part.type === "tool-call").map((part) => [part.toolName, part.input]);
    expect(plain.length).toBeGreaterThan(1);
    expect(wrapped).toEqual(plain);
  });

  it("Gemini (@ai-sdk/google): the call cut by MAX_TOKENS is a tool-error, the whole one before it a valid call", async () => {
    const seen = await parts(wrapLanguageModel({ model: gemini("max-tokens"), middleware: toolwireMiddleware() }));
    // (The AI SDK runs no tool of a step that stopped at the length limit.)
    expect(seen.filter((part) => part.type === "tool-call" && part.invalid !== true).map((part) => [part.toolName, part.input])).toEqual([["list_dir", { path: "." }]]);
    const errors = seen.filter((part) => part.type === "tool-error");
    expect(errors.map((part) => part.toolName)).toEqual(["write_file"]);
    expect(String(errors[0]?.error)).toContain("toolwire: truncated");
  });

  it("the middleware declared v4 repairs the same (AI SDK 7 takes either; AI SDK 6 runs it the same)", async () => {
    const v3 = await parts(wrapLanguageModel({ model: claude("glued"), middleware: toolwireMiddleware() }));
    const v4 = await parts(wrapLanguageModel({ model: claude("glued"), middleware: toolwireMiddleware({ specificationVersion: "v4" }) as unknown as ToolwireLanguageModelMiddleware<"v3"> }));
    const results = (seen: typeof v3) => seen.filter((part) => part.type === "tool-result").map((part) => part.output);
    expect(results(v4)).toEqual(['read {"path":"c.txt"}', 'read {"path":"d.txt"}']);
    expect(results(v4)).toEqual(results(v3));
  });

  it("raw chunks are passed on only when the caller asked for them", async () => {
    const quiet = await parts(wrapLanguageModel({ model: chat("groq"), middleware: toolwireMiddleware() }));
    expect(quiet.some((part) => part.type === "raw")).toBe(false);
    const loud = await parts(wrapLanguageModel({ model: chat("groq"), middleware: toolwireMiddleware() }), { includeRawChunks: true });
    expect(loud.some((part) => part.type === "raw")).toBe(true);
  });

  it("generateText (non-streamed): a whole response's cut call becomes a tool-error too", async () => {
    const result = await generateText({ model: wrapLanguageModel({ model: chat("cut"), middleware: toolwireMiddleware() }), prompt: "hi", tools: TOOLS });
    const content = result.steps[0]?.content ?? [];
    const calls = content.filter((part) => part.type === "tool-call");
    expect(calls.filter((part) => !part.invalid).map((part) => part.input)).toEqual([{ filename: "a.txt", lines: ["one"] }]);
    const errors = content.filter((part) => part.type === "tool-error");
    expect(errors).toHaveLength(1);
    expect(String(errors[0]?.error)).toContain("toolwire: truncated");
  });

  const { MockLanguageModelV3 } = aiTest;
  /** The newest mock model of the installed AI SDK: LanguageModelV4 in AI SDK 7 (scripts/interop-node22.sh), V3 in AI SDK 6. */
  const MockLanguageModelLatest = ((aiTest as Record<string, unknown>).MockLanguageModelV4 ?? MockLanguageModelV3) as typeof MockLanguageModelV3;

  /** A model that streams these parts, the raw chunks only when asked for them (as the AI SDK's providers do). */
  function mockStream(Model: typeof MockLanguageModelV3, raw: unknown[], parts: Array<Record<string, unknown>>, sendsRaw = true) {
    return new Model({
      provider: "openai.chat",
      modelId: "mock",
      doStream: async (options: { includeRawChunks?: boolean }) => ({
        stream: simulateReadableStream({
          chunks: [...(sendsRaw && options.includeRawChunks ? raw.map((rawValue) => ({ type: "raw", rawValue })) : []), ...parts] as never[],
        }),
      }),
    } as never);
  }

  const CHUNKS = [
    { id: "c", choices: [{ index: 0, delta: { tool_calls: [{ index: 0, id: "call_1", type: "function", function: { name: "read_file", arguments: '{"path": "a.txt"' } }] } }] },
    { id: "c", choices: [{ index: 0, delta: {}, finish_reason: "tool_calls" }] },
  ];
  const FINISH = { type: "finish", finishReason: { unified: "tool-calls", raw: "tool_calls" }, usage: { inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 1, text: 1, reasoning: 0 } } };

  it("a model that sends no raw chunks passes its own calls through unchanged", async () => {
    const model = mockStream(MockLanguageModelLatest, CHUNKS, [{ type: "tool-call", toolCallId: "call_1", toolName: "read_file", input: '{"path":"own.txt"}' }, FINISH], false);
    const seen = await parts(wrapLanguageModel({ model, middleware: toolwireMiddleware() }));
    expect(seen.filter((part) => part.type === "tool-call").map((part) => part.input)).toEqual([{ path: "own.txt" }]);
  });

  it("works with a LanguageModelV3 (AI SDK 6 providers) too: the missing brace is repaired and reported", async () => {
    const model = mockStream(MockLanguageModelV3, CHUNKS, [FINISH]);
    const seen = await parts(wrapLanguageModel({ model, middleware: toolwireMiddleware() }));
    const call = seen.find((part) => part.type === "tool-call") as { input?: unknown; providerMetadata?: { toolwire?: { repairs?: string[] } } } | undefined;
    expect(call?.input).toEqual({ path: "a.txt" });
    expect(call?.providerMetadata?.toolwire?.repairs).toEqual(["missing_closing_brace"]);
    expect(seen.filter((part) => part.type === "tool-result").map((part) => part.output)).toEqual(['read {"path":"a.txt"}']);
  });
});

import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Anthropic from "@anthropic-ai/sdk";
import { createOpenAI } from "@ai-sdk/openai";
import { generateText, streamText } from "ai";
import OpenAI from "openai";
import { afterEach, describe, expect, it } from "vitest";
import { startServe } from "../../src/cli/commands/serve.js";
import { createRepairingFetch } from "../../src/fetch/index.js";
import { parseRecords, serializeRecords } from "../../src/framing/records.js";
import type { ReplayServer } from "../../src/node/replay-server.js";
import { repairWholeResponse } from "../../src/reencode/whole.js";
import { replayEvents } from "../../src/replay.js";
import type { DecodedTurn, ProviderName } from "../../src/types.js";
import { a } from "../helpers/anthropic-events.js";
import { TESTDATA } from "../helpers/testdata.js";

/**
 * Issue 29, "try everything offline": `toolwire serve` answers a non-streamed request with a whole
 * response (recorded, else assembled from the recorded stream in the provider's own shape), and a
 * client picks its stream by header, query or base path from each SDK. Hand-written streams only.
 */

const servers: ReplayServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

/** Hand-written streams, one per provider where testdata has one, and an Anthropic one made here. */
const STREAMS: Record<string, { provider: ProviderName; file: string }> = {
  groq: { provider: "openai-chat", file: "openai-chat/handwritten__groq-several-calls-one-delta.ndjson" },
  cut: { provider: "openai-chat", file: "openai-chat/handwritten__openai-length-mid-call.ndjson" },
  gemini: { provider: "gemini", file: "gemini/handwritten__streamed_args_edge_cases.ndjson" },
  bedrock: { provider: "bedrock", file: "bedrock/handwritten__reasoning_and_max_tokens.ndjson" },
  ollama: { provider: "ollama", file: "ollama/handwritten__streamed_parallel_calls.ndjson" },
};

const ANTHROPIC = serializeRecords([
  {
    sequence: "two-calls",
    provider: "anthropic",
    events: [a.messageStart("msg_w"), a.textStart(0), a.text(0, "Reading both."), a.stop(0), a.toolStart(1, "toolu_1", "read"), a.json(1, '{"path":'), a.json(1, '"a.txt"}'), a.stop(1), a.toolStart(2, "toolu_2", "read"), a.json(2, '{"path":"b.txt"}'), a.stop(2), a.messageDelta("tool_use"), a.messageStop()],
  },
  {
    sequence: "glued",
    provider: "anthropic",
    events: [a.messageStart("msg_g"), a.toolStart(0, "toolu_3", "read"), a.json(0, '{"path":"c.txt"}{"path":"d.txt"}'), a.stop(0), a.messageDelta("tool_use"), a.messageStop()],
  },
]);

function folder(): string {
  const dir = mkdtempSync(join(tmpdir(), "toolwire-serve-whole-"));
  for (const [name, { file }] of Object.entries(STREAMS)) copyFileSync(join(TESTDATA, file), join(dir, `${name}.ndjson`));
  writeFileSync(join(dir, "anthropic.ndjson"), ANTHROPIC);
  return dir;
}

async function serve(paths: string[], cwd: string): Promise<ReplayServer> {
  const server = await startServe(paths, { out: () => {}, err: () => {}, cwd });
  servers.push(server);
  return server;
}

function streamTurns(dir: string, name: string, provider: ProviderName): DecodedTurn[] {
  return parseRecords(readFileSync(join(dir, `${name}.ndjson`), "utf8")).map((stream) => replayEvents(stream, { provider }));
}

/** The runnable calls of a turn, by name and arguments. */
function runnable(turn: DecodedTurn | null): Array<{ name: string; arguments: unknown }> {
  return (turn?.toolCalls ?? []).filter((call) => call.arguments !== null).map((call) => ({ name: call.name, arguments: call.arguments }));
}

const WHOLE_REQUESTS: Record<ProviderName, { path: string; body: unknown }> = {
  anthropic: { path: "/v1/messages", body: { model: "m", max_tokens: 10, messages: [] } },
  "openai-chat": { path: "/v1/chat/completions", body: { model: "m", messages: [] } },
  "openai-responses": { path: "/v1/responses", body: { model: "m", input: "hi" } },
  gemini: { path: "/v1beta/models/gemini-test:generateContent", body: { contents: [] } },
  bedrock: { path: "/model/test/converse", body: { messages: [] } },
  ollama: { path: "/api/chat", body: { model: "m", messages: [], stream: false } },
};

describe("toolwire serve: non-streamed requests get whole responses", () => {
  it.each([
    ["anthropic", "anthropic"],
    ["groq", "openai-chat"],
    ["cut", "openai-chat"],
    ["gemini", "gemini"],
    ["bedrock", "bedrock"],
    ["ollama", "ollama"],
  ] as Array<[string, ProviderName]>)("%s (%s): the whole body holds what the stream held, in the provider's non-streamed shape", async (name, provider) => {
    const dir = folder();
    const server = await serve([`${name}.ndjson`], dir);
    const turns = streamTurns(dir, name, provider);
    for (const streamed of turns) {
      const request = WHOLE_REQUESTS[provider];
      const response = await fetch(`${server.url}${request.path}`, {
        method: "POST",
        headers: { "content-type": "application/json", ...(streamed.sequence ? { "x-toolwire-stream": `${name}#${streamed.sequence}` } : {}) },
        body: JSON.stringify(request.body),
      });
      expect(response.status).toBe(200);
      expect(response.headers.get("content-type")).toContain("application/json");
      const body = (await response.json()) as unknown;
      // The whole body decodes, with toolwire's own whole-response decoder, to the calls the stream
      // gave; under a length stop a whole body cannot tell its last call was closed, so it is
      // withheld there (a prefix of the stream's calls stays).
      const repaired = repairWholeResponse(provider, body);
      expect(repaired.turn, JSON.stringify(body)).not.toBeNull();
      const whole = runnable(repaired.turn);
      if (streamed.finishReason === "length") expect(runnable(streamed).slice(0, whole.length)).toEqual(whole);
      else expect(whole).toEqual(runnable(streamed));
      expect(repaired.turn?.text).toBe(streamed.text);
    }
  });

  it("the calls are as the provider sent them: a glued or cut call reaches the whole body unrepaired, for the fetch to repair", async () => {
    const dir = folder();
    const server = await serve(["anthropic.ndjson", "cut.ndjson"], dir);
    const glued = await fetch(`${server.url}/v1/messages`, { method: "POST", headers: { "x-toolwire-stream": "glued" }, body: JSON.stringify(WHOLE_REQUESTS.anthropic.body) });
    const gluedBody = (await glued.json()) as { content: Array<{ type: string; input?: unknown }> };
    // Two objects glued together cannot be one `input` object: the calls toolwire split them into stand in.
    expect(gluedBody.content.filter((block) => block.type === "tool_use").map((block) => block.input)).toEqual([{ path: "c.txt" }, { path: "d.txt" }]);
    const cut = await fetch(`${server.url}/v1/chat/completions`, { method: "POST", body: JSON.stringify(WHOLE_REQUESTS["openai-chat"].body) });
    const cutBody = (await cut.json()) as { choices: Array<{ finish_reason: string; message: { tool_calls: Array<{ function: { arguments: string } }> } }> };
    expect(cutBody.choices[0]?.finish_reason).toBe("length");
    const raw = cutBody.choices[0]?.message.tool_calls.at(-1)?.function.arguments ?? "";
    expect(() => JSON.parse(raw)).toThrow();

    // Through the repairing fetch, the cut call is withheld and reported, as on the streamed path.
    const reports: string[] = [];
    const repairing = createRepairingFetch({ onRepair: (report) => void reports.push(report.code) });
    const through = await repairing(`${server.url}/v1/chat/completions`, { method: "POST", headers: { "content-type": "application/json", "x-toolwire-stream": "cut" }, body: JSON.stringify(WHOLE_REQUESTS["openai-chat"].body) });
    const repaired = (await through.json()) as { choices: Array<{ message: { tool_calls?: Array<{ function: { arguments: string } }> } }> };
    for (const call of repaired.choices[0]?.message.tool_calls ?? []) expect(() => JSON.parse(call.function.arguments)).not.toThrow();
    expect(reports.length).toBeGreaterThan(0);
  });

  it("the SDKs' non-streamed calls work offline: Anthropic messages.create, OpenAI chat.completions.create", async () => {
    const dir = folder();
    const server = await serve(["."], dir);
    const anthropic = new Anthropic({ apiKey: "sk-ant-test", baseURL: server.url, maxRetries: 0, logLevel: "off", defaultHeaders: { "x-toolwire-stream": "two-calls" } });
    const message = await anthropic.messages.create({ model: "claude-test", max_tokens: 100, messages: [{ role: "user", content: "hi" }] });
    expect(message.stop_reason).toBe("tool_use");
    expect(message.content.filter((block) => block.type === "tool_use").map((block) => (block.type === "tool_use" ? block.input : null))).toEqual([{ path: "a.txt" }, { path: "b.txt" }]);

    const openai = new OpenAI({ apiKey: "sk-test", baseURL: `${server.url}/stream/groq/v1`, maxRetries: 0, logLevel: "off" });
    const completion = await openai.chat.completions.create({ model: "gpt-test", messages: [{ role: "user", content: "hi" }] });
    expect(completion.choices[0]?.finish_reason).toBe("tool_calls");
    expect(completion.choices[0]?.message.tool_calls?.length).toBeGreaterThan(1);
  });

  it("a recorded whole response is served as recorded, to non-streamed requests only; a folder of them is served", async () => {
    const dir = mkdtempSync(join(tmpdir(), "toolwire-serve-whole-"));
    mkdirSync(join(dir, "whole"));
    const body = JSON.stringify({ id: "chatcmpl-rec", object: "chat.completion", created: 1, model: "m", choices: [{ index: 0, message: { role: "assistant", content: "recorded" }, finish_reason: "stop" }] });
    writeFileSync(join(dir, "whole", "exchange.jsonl"), `# hand-written\n${JSON.stringify({ sequence: "one", provider: "openai-chat", status: 200, contentType: "application/json", body })}\n`);
    const server = await serve(["whole"], dir);
    const listing = (await (await fetch(`${server.url}/streams`)).json()) as { streams: Array<{ key: string; whole?: boolean }> };
    expect(listing.streams).toEqual([expect.objectContaining({ key: "exchange#one", whole: true })]);
    const whole = await fetch(`${server.url}/v1/chat/completions`, { method: "POST", body: JSON.stringify({ model: "m", messages: [] }) });
    expect(whole.status).toBe(200);
    expect(await whole.text()).toBe(body);
    const streamed = await fetch(`${server.url}/v1/chat/completions`, { method: "POST", body: JSON.stringify({ model: "m", messages: [], stream: true }) });
    expect(streamed.status).toBe(404);
    expect(await streamed.text()).toContain("no openai-chat streams are loaded");
  });
});

describe("toolwire serve: a client picks its stream", () => {
  it("by header, query or base path; without one, the route's streams in turn", async () => {
    const dir = folder();
    const server = await serve(["."], dir);
    const keyOf = async (path: string, init: RequestInit = {}) => {
      const response = await fetch(`${server.url}${path}`, { method: "POST", body: JSON.stringify({ model: "m", messages: [], stream: true }), ...init });
      await response.text();
      return decodeURIComponent(response.headers.get("x-toolwire-stream") ?? "");
    };
    const GROQ = "groq#groq-several-calls-one-delta";
    const CUT = "cut#openai-length-mid-call";
    expect(await keyOf("/v1/chat/completions", { headers: { "x-toolwire-stream": "groq" } })).toBe(GROQ);
    expect(await keyOf("/v1/chat/completions?stream=cut")).toBe(CUT);
    expect(await keyOf("/stream/groq/v1/chat/completions")).toBe(GROQ);
    expect(await keyOf(`/stream/${encodeURIComponent("anthropic#glued")}/v1/messages`)).toBe("anthropic#glued");
    // Rotation: two requests without a name get two different streams.
    const first = await keyOf("/v1/chat/completions");
    const second = await keyOf("/v1/chat/completions");
    expect(new Set([first, second])).toEqual(new Set([CUT, GROQ]));
  });

  it("from each SDK, a second request gets the same stream when it names one", async () => {
    const dir = folder();
    const server = await serve(["."], dir);
    // Anthropic SDK: defaultHeaders.
    const anthropic = new Anthropic({ apiKey: "sk-ant-test", baseURL: server.url, maxRetries: 0, logLevel: "off", defaultHeaders: { "x-toolwire-stream": "two-calls" } });
    for (let i = 0; i < 2; i++) {
      const { response } = await anthropic.messages.create({ model: "c", max_tokens: 10, messages: [{ role: "user", content: "hi" }], stream: true }).withResponse();
      expect(decodeURIComponent(response.headers.get("x-toolwire-stream") ?? "")).toBe("anthropic#two-calls");
    }
    // OpenAI SDK: the stream in the base path.
    const openai = new OpenAI({ apiKey: "sk-test", baseURL: `${server.url}/stream/cut/v1`, maxRetries: 0, logLevel: "off" });
    for (let i = 0; i < 2; i++) {
      const { response, data } = await openai.chat.completions.create({ model: "g", messages: [{ role: "user", content: "hi" }], stream: true }).withResponse();
      for await (const _chunk of data) void _chunk;
      expect(decodeURIComponent(response.headers.get("x-toolwire-stream") ?? "")).toBe("cut#openai-length-mid-call");
    }
    // AI SDK: the provider's headers option (or baseURL, as for the OpenAI SDK).
    const provider = createOpenAI({ apiKey: "sk-test", baseURL: `${server.url}/v1`, headers: { "x-toolwire-stream": "groq" } });
    for (let i = 0; i < 2; i++) {
      const result = streamText({ model: provider.chat("g"), prompt: "hi" });
      const calls = await result.toolCalls;
      expect(calls.map((call) => call.toolName).length).toBeGreaterThan(1);
    }
    const whole = await generateText({ model: provider.chat("g"), prompt: "hi" });
    expect(whole.toolCalls.length).toBeGreaterThan(1);
  });
});

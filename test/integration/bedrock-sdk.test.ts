import { createAmazonBedrock } from "@ai-sdk/amazon-bedrock";
import { jsonSchema, streamText, tool, type Tool } from "ai";
import { createClaudeOnBedrock } from "../helpers/ai-sdk-versions.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createRepairingFetch } from "../../src/fetch/index.js";
import { type RepairReport } from "../../src/reencode/types.js";
import { startReplayServer, type ReplayServer, type ReplayStream } from "../../src/node/replay-server.js";
import { replayEvents } from "../../src/replay.js";
import type { ProviderEvent } from "../../src/types.js";
import { streamsOf } from "./support.js";

/**
 * The AI SDK's Bedrock provider (`@ai-sdk/amazon-bedrock`, which signs with SigV4 and parses the
 * binary ConverseStream itself) with the repairing fetch as its `fetch`, against the replay
 * server playing every recorded Bedrock stream and ConverseStream quirks: `streamText(…).toolCalls`
 * holds exactly the calls toolwire decodes as runnable. Without toolwire the SDK merges resent
 * input, runs a cut call or drops a call it cannot parse in silence; the quirks show it.
 * The credentials are fake and the server is loopback: nothing leaves the machine.
 */

const ev = (name: string, body: Record<string, unknown>): ProviderEvent => ({ event: name, data: body });
const start = (index: number, toolUseId: string, name: string): ProviderEvent => ev("contentBlockStart", { contentBlockIndex: index, start: { toolUse: { toolUseId, name } } });
const input = (index: number, text: string): ProviderEvent => ev("contentBlockDelta", { contentBlockIndex: index, delta: { toolUse: { input: text } } });
const stop = (index: number): ProviderEvent => ev("contentBlockStop", { contentBlockIndex: index });
const text = (index: number, value: string): ProviderEvent => ev("contentBlockDelta", { contentBlockIndex: index, delta: { text: value } });
const head = ev("messageStart", { role: "assistant" });
const tail = (stopReason: string): ProviderEvent[] => [ev("messageStop", { stopReason }), ev("metadata", { usage: { inputTokens: 10, outputTokens: 5, totalTokens: 15 }, metrics: { latencyMs: 1 } })];

const quirks: Array<[string, ProviderEvent[]]> = [
  ["duplicate toolUseIds", [head, start(0, "tooluse_x", "read"), input(0, '{"path":"a"}'), stop(0), start(1, "tooluse_x", "read"), input(1, '{"path":"b"}'), stop(1), ...tail("tool_use")]],
  ["input resent whole after its fragments", [head, start(0, "tooluse_a", "shell"), input(0, '{"command":'), input(0, '"ls"}'), input(0, '{"command":"ls"}'), stop(0), ...tail("tool_use")]],
  ["cumulative input", [head, start(0, "tooluse_a", "shell"), input(0, '{"command":"ls"}'), input(0, '{"command":"ls","cwd":"/tmp"}'), stop(0), ...tail("tool_use")]],
  ["a call cut at max_tokens after a complete one", [head, text(0, "Two."), stop(0), start(1, "tooluse_a", "read"), input(1, '{"path":"a"}'), stop(1), start(2, "tooluse_b", "read"), input(2, '{"path":"b'), ...tail("max_tokens")]],
  ["a closed call cut at max_tokens", [head, start(0, "tooluse_a", "read"), input(0, '{"path":"a'), stop(0), ...tail("max_tokens")]],
  ["invalid JSON input, then text", [head, start(0, "tooluse_a", "shell"), input(0, "not json at all"), stop(0), text(1, "Done."), stop(1), ...tail("tool_use")]],
  ["two objects glued in one block", [head, start(0, "tooluse_a", "read"), input(0, '{"path":"a"}{"path":"b"}'), stop(0), ...tail("tool_use")]],
  ["a syntax repair (Python literal, trailing comma)", [head, start(0, "tooluse_a", "shell"), input(0, '{"command":"ls","all":True,}'), stop(0), ...tail("tool_use")]],
];

const quirkStreams: ReplayStream[] = quirks.map(([name, events]) => ({ key: `quirk/${name}`, file: "bedrock-sdk.test.ts", sequence: name, provider: "bedrock", events }));
const recorded = streamsOf("bedrock");
// Claude on Bedrock (invoke-with-response-stream): the Anthropic quirk streams ai-sdk.test.ts plays, and the recorded Bedrock one.
const claude = streamsOf("anthropic").filter((stream) => /kimi_tool_call_sequences|incomplete_partial_json|claude-sonnet-4__multi_tool|bedrock-anthropic|kimi-start-input|claude-max-tokens|claude-add-and-multiply/.test(stream.key));

let server: ReplayServer;
beforeAll(async () => {
  server = await startReplayServer({ streams: [...recorded, ...quirkStreams, ...claude] });
});
afterAll(async () => {
  await server?.close();
});

function expected(stream: ReplayStream): unknown {
  return replayEvents(stream, { provider: stream.provider })
    .toolCalls.filter((call) => call.arguments !== null)
    .map((call) => ({ id: call.id, name: call.name, arguments: call.arguments }));
}

function toolsFor(stream: ReplayStream): Record<string, Tool> {
  const names = new Set(["read", "shell", ...replayEvents(stream, { provider: stream.provider }).toolCalls.map((call) => call.name)]);
  return Object.fromEntries([...names].map((name) => [name, tool({ inputSchema: jsonSchema({ type: "object" }) })]));
}

async function sdkCalls(stream: ReplayStream, fetch?: typeof globalThis.fetch): Promise<unknown> {
  const bedrock = createAmazonBedrock({ region: "us-east-1", accessKeyId: "AKIDTOOLWIRETEST", secretAccessKey: "toolwire-test-secret", baseURL: server.url, ...(fetch ? { fetch } : {}) });
  const result = streamText({ model: bedrock("amazon.nova-test"), prompt: "hi", tools: toolsFor(stream), headers: { "x-toolwire-stream": stream.key }, maxRetries: 0, onError: () => {} });
  await result.consumeStream();
  // Nova's code interpreter (toolUse type server_tool_use) runs at the provider: toolwire keeps it
  // among serverToolCalls, the AI SDK lists it with the client's calls. Compare the client's.
  const providerRun = new Set(replayEvents(stream, { provider: "bedrock" }).serverToolCalls.map((call) => call.id));
  return (await result.toolCalls).filter((call) => !providerRun.has(call.toolCallId)).map((call) => ({ id: call.toolCallId, name: call.toolName, arguments: call.input }));
}

describe("@ai-sdk/amazon-bedrock through the repairing fetch", () => {
  it.each([...recorded, ...quirkStreams].map((stream) => [stream.key, stream] as const))("%s: the SDK's calls are toolwire's", async (_key, stream) => {
    const reports: RepairReport[] = [];
    const repairing = createRepairingFetch({ onRepair: (report) => reports.push(report) });
    expect(await sdkCalls(stream, repairing)).toEqual(expected(stream));
    if (stream.key.startsWith("quirk/")) expect(reports.filter((report) => report.stage === "response").length).toBeGreaterThan(0);
  });

  it("without toolwire the SDK's calls differ on every quirk but an unclosed block (which the SDK never emits)", async () => {
    const differ: string[] = [];
    for (const stream of quirkStreams) if (JSON.stringify(await sdkCalls(stream)) !== JSON.stringify(expected(stream))) differ.push(stream.sequence as string);
    expect(differ).toEqual(quirks.map(([name]) => name).filter((name) => name !== "a call cut at max_tokens after a complete one"));
  });
});


describe("@ai-sdk/amazon-bedrock/anthropic (Claude, invoke-with-response-stream) through the repairing fetch", () => {
  it.each(claude.map((stream) => [stream.key, stream] as const))("%s: the SDK's calls are toolwire's", async (_key, stream) => {
    const bedrock = createClaudeOnBedrock({ region: "us-east-1", accessKeyId: "AKIDTOOLWIRETEST", secretAccessKey: "toolwire-test-secret", baseURL: server.url, fetch: createRepairingFetch() });
    const result = streamText({ model: bedrock("anthropic.claude-test"), prompt: "hi", tools: toolsFor(stream), headers: { "x-toolwire-stream": stream.key }, maxRetries: 0, onError: () => {} });
    await result.consumeStream();
    const calls = (await result.toolCalls).map((call) => ({ id: call.toolCallId, name: call.toolName, arguments: call.input }));
    expect(calls).toEqual(expected(stream));
  });
});

import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createByteDecoder } from "../../src/adapters/bytes.js";
import { createRepairingFetch } from "../../src/fetch/index.js";
import { type RepairReport } from "../../src/reencode/types.js";
import type { ReplayServer, ReplayStream } from "../../src/node/replay-server.js";
import type { DecodedTurn, ProviderName } from "../../src/types.js";
import { corpusDir } from "../helpers/corpus.js";
import { ACCUMULATION_DIFFERENCES, THROUGH_FETCH } from "./sdk-differences.js";
import { ANTHROPIC_REQUEST, CHAT_REQUEST, fileTurn, pick, plain, RESPONSES_REQUEST, startTestdataServer, streamsOf } from "./support.js";

/**
 * The real SDKs with toolwire's repairing fetch in front of them (`fetch` client option), against
 * the replay server playing every recorded Anthropic, Chat Completions and Responses stream: the
 * SDK's own accumulation (`finalMessage()`, `finalChatCompletion()`, `finalResponse()`) holds exactly the calls toolwire
 * decodes as runnable, with toolwire's ids and arguments. The few streams where it cannot are in
 * THROUGH_FETCH (sdk-differences.ts), each with the reason.
 */

type Calls = Array<{ id: string; name: string; arguments: unknown }> | { threw: string };

/**
 * openai 7 declares Node >= 22, so it is no dev dependency of a package that claims Node 20:
 * scripts/interop-node22.sh installs it as `openai-v7` and runs this file under Node 22 (and the
 * openai 6 tests with it). Without it, one skipped test says so. The specifier is a variable so that
 * the type check needs no openai 7; the two majors share the API used here (typed as openai 6's).
 */
const OPENAI_V7 = "openai-v7";
const OpenAIv7 = await import(/* @vite-ignore */ OPENAI_V7).then(
  (module: { default: typeof OpenAI }) => module.default,
  () => null,
);

let server: ReplayServer;
const reports: RepairReport[] = [];
const repairingFetch = createRepairingFetch({ onRepair: (report) => reports.push(report) });

beforeAll(async () => {
  server = await startTestdataServer();
});
afterAll(async () => {
  await server?.close();
});

function expected(turn: DecodedTurn): Calls {
  return turn.toolCalls.filter((call) => call.arguments !== null).map((call) => ({ id: call.id, name: call.name, arguments: call.arguments }));
}

function threw(error: unknown): { threw: string } {
  return { threw: error instanceof Error ? error.message : String(error) };
}

async function anthropicCalls(stream: ReplayStream): Promise<Calls> {
  const client = new Anthropic({ apiKey: "sk-ant-toolwire-test", baseURL: server.url, maxRetries: 0, timeout: 10_000, logLevel: "off", fetch: repairingFetch });
  try {
    const message = await client.messages.stream(ANTHROPIC_REQUEST, pick(stream)).finalMessage();
    return message.content.flatMap((block) => (block.type === "tool_use" ? [{ id: block.id, name: block.name, arguments: block.input }] : []));
  } catch (error) {
    return threw(error);
  }
}

async function chatCalls(Client: typeof OpenAI, stream: ReplayStream): Promise<Calls> {
  const client = new Client({ apiKey: "sk-toolwire-test", baseURL: `${server.url}/v1`, maxRetries: 0, timeout: 10_000, logLevel: "off", fetch: repairingFetch });
  try {
    const completion = await client.chat.completions.stream(CHAT_REQUEST, pick(stream)).finalChatCompletion();
    return (completion.choices[0]?.message.tool_calls ?? []).map((call) => {
      if (call.type !== "function") {
        const custom = (call as unknown as { custom: { name: string; input: string } }).custom;
        return { id: call.id, name: custom.name, arguments: { input: custom.input } };
      }
      let args: unknown;
      try {
        args = JSON.parse(call.function.arguments);
      } catch {
        args = call.function.arguments;
      }
      return { id: call.id, name: call.function.name, arguments: args };
    });
  } catch (error) {
    return threw(error);
  }
}

async function responsesCalls(Client: typeof OpenAI, stream: ReplayStream): Promise<Calls> {
  const client = new Client({ apiKey: "sk-toolwire-test", baseURL: `${server.url}/v1`, maxRetries: 0, timeout: 10_000, logLevel: "off", fetch: repairingFetch });
  try {
    const response = await client.responses.stream(RESPONSES_REQUEST, pick(stream)).finalResponse();
    return response.output.flatMap((item) => {
      if (item.type === "function_call") {
        let args: unknown;
        try {
          args = JSON.parse(item.arguments);
        } catch {
          args = item.arguments;
        }
        return [{ id: item.call_id, name: item.name, arguments: args }];
      }
      return item.type === "custom_tool_call" ? [{ id: item.call_id, name: item.name, arguments: { input: item.input } }] : [];
    });
  } catch (error) {
    return threw(error);
  }
}

function check(key: string, sdk: Calls, turn: DecodedTurn, client: string): void {
  const known = THROUGH_FETCH[key];
  if (known && (known.clients === undefined || known.clients.includes(client))) {
    expect(sdk, known.why).toEqual(known.sdk);
    return;
  }
  expect(sdk, `${client}: the SDK's calls through the repairing fetch`).toEqual(expected(turn));
}

describe.each(streamsOf("anthropic").map((stream) => [stream.key, stream] as const))("%s", (key, stream) => {
  it("@anthropic-ai/sdk finalMessage() through the repairing fetch holds toolwire's runnable calls", async () => {
    check(key, await anthropicCalls(stream), fileTurn(stream), "anthropic");
  });
});

describe.each(streamsOf("openai-chat").map((stream) => [stream.key, stream] as const))("%s", (key, stream) => {
  it("openai 6 finalChatCompletion() through the repairing fetch holds toolwire's runnable calls", async () => {
    check(key, await chatCalls(OpenAI, stream), fileTurn(stream), "openai6");
  });
  if (OpenAIv7) it("openai 7 finalChatCompletion() through the repairing fetch holds toolwire's runnable calls", async () => {
    check(key, await chatCalls(OpenAIv7 as typeof OpenAI, stream), fileTurn(stream), "openai7");
  });
});

describe.each(streamsOf("openai-responses").map((stream) => [stream.key, stream] as const))("%s", (key, stream) => {
  it("openai 6 finalResponse() through the repairing fetch holds toolwire's runnable calls", async () => {
    check(key, await responsesCalls(OpenAI, stream), fileTurn(stream), "openai6");
  });
  if (OpenAIv7) it("openai 7 finalResponse() through the repairing fetch holds toolwire's runnable calls", async () => {
    check(key, await responsesCalls(OpenAIv7 as typeof OpenAI, stream), fileTurn(stream), "openai7");
  });
});

if (!OpenAIv7) {
  describe("openai 7", () => {
    it.skip("needs Node >= 22, so it is no dev dependency: scripts/interop-node22.sh runs this file with it", () => {});
  });
}

describe.each(streamsOf("gemini").map((stream) => [stream.key, stream] as const))("%s", (_key, stream) => {
  // No official client reads the JSON-array form (the SDKs ask for alt=sse), so the bytes are read
  // the way a client would: the re-encoded body, decoded alone, holds toolwire's runnable calls.
  for (const [form, query] of [
    ["SSE (alt=sse)", "?alt=sse"],
    ["the streamed JSON array", ""],
  ] as const) {
    it(`Gemini ${form} from toolwire serve through the repairing fetch holds toolwire's runnable calls`, async () => {
      const response = await repairingFetch(`${server.url}/v1beta/models/gemini-test:streamGenerateContent${query}`, { method: "POST", headers: pick(stream).headers, body: JSON.stringify({ contents: [] }) });
      const decoder = createByteDecoder("gemini", query === "" ? { framing: "json-array" } : {});
      decoder.push(new Uint8Array(await response.arrayBuffer()));
      expect(expected(plain(decoder.finish()))).toEqual(expected(fileTurn(stream)));
    });
  }
});

describe("the SDK accumulation differences", () => {
  it("every one is fixed through the fetch or explained in THROUGH_FETCH", () => {
    const chatOrAnthropic = Object.keys(ACCUMULATION_DIFFERENCES).filter((key) => key.startsWith("anthropic/") || key.startsWith("openai-chat/"));
    expect(chatOrAnthropic.length).toBeGreaterThan(25);
    // Upstream corpus streams are there only where the corpus is (test/helpers/corpus.ts).
    const present = (key: string): boolean => corpusDir("upstream") !== null || key.includes("/handwritten__");
    for (const key of Object.keys(THROUGH_FETCH).filter(present)) expect(streamsOf(key.split("/")[0] as ProviderName).some((stream) => stream.key === key), key).toBe(true);
  });

  it("repairs are reported with toolwire's codes", () => {
    const codes = new Set(reports.map((report) => report.code));
    for (const code of ["cumulative_resend", "collapsed_duplicate", "truncated", "event_before_message_start", "finish_reason_missing", "non_json_data", "call_id_minted", "minted_id", "not_object", "finish_reason_without_calls"]) expect(codes, code).toContain(code);
  });
});

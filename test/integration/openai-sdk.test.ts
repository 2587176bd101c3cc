import type OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { corpusDir } from "../helpers/corpus.js";
import { collectTurn } from "../../src/adapters/web.js";
import type { ReplayServer } from "../../src/node/replay-server.js";
import { agrees, chatCalls, responsesCalls } from "./accumulate.js";
import { ACCUMULATION_DIFFERENCES, checkRawDifference, RAW_DIFFERENCES } from "./sdk-differences.js";
import { CHAT_REQUEST, fileTurn, openaiClient, pick, plain, postJson, RESPONSES_REQUEST, startTestdataServer, streamsOf } from "./support.js";

/**
 * The real `openai` client over real HTTP against the replay server, for every recorded Chat
 * Completions and Responses stream: raw events from `create({stream: true})`, the raw body from
 * `.asResponse()`, and plain fetch decode to the recorded file's turn, except where the SDK
 * withholds part of the stream (RAW_DIFFERENCES); the SDK's own accumulation is compared too.
 */

let server: ReplayServer;
let client: OpenAI;

beforeAll(async () => {
  server = await startTestdataServer();
  client = openaiClient(server);
});
afterAll(async () => {
  await server?.close();
});

function expectAccumulation(key: string, sdk: Awaited<ReturnType<typeof chatCalls>>, turn: ReturnType<typeof fileTurn>): void {
  const difference = ACCUMULATION_DIFFERENCES[key];
  if (difference) {
    expect(sdk).toEqual(difference.sdk);
    expect(agrees(sdk, turn), "the documented difference no longer occurs: remove it").toBe(false);
  } else {
    expect(agrees(sdk, turn), `SDK calls ${JSON.stringify(sdk)} differ from toolwire's: document the case`).toBe(true);
  }
}

describe.each(streamsOf("openai-chat").map((stream) => [stream.key, stream] as const))("%s", (_key, stream) => {
  const options = { sequence: stream.sequence };

  it("chat.completions.create({stream: true}): raw chunks give the file's turn, or the documented difference", async () => {
    const chunks = await client.chat.completions.create({ ...CHAT_REQUEST, stream: true }, pick(stream));
    const turn = plain(await collectTurn("openai-chat", chunks, options));
    const difference = RAW_DIFFERENCES["chat.completions.create"][stream.key];
    if (difference) checkRawDifference(difference, turn, fileTurn(stream));
    else expect(turn).toEqual(fileTurn(stream));
  });

  it(".asResponse() and fetch: the raw body gives the file's turn", async () => {
    const raw = await client.chat.completions.create({ ...CHAT_REQUEST, stream: true }, pick(stream)).asResponse();
    expect(plain(await collectTurn("openai-chat", raw, options))).toEqual(fileTurn(stream));
    const fetched = await postJson(server, "/v1/chat/completions", stream, { ...CHAT_REQUEST, stream: true });
    expect(plain(await collectTurn("openai-chat", fetched, options))).toEqual(fileTurn(stream));
  });

  it("finalChatCompletion(): the SDK's own calls agree with toolwire's, or the difference is documented", async () => {
    expectAccumulation(stream.key, await chatCalls(client, stream), fileTurn(stream));
  });
});

describe.each(streamsOf("openai-responses").map((stream) => [stream.key, stream] as const))("%s", (_key, stream) => {
  const options = { sequence: stream.sequence };

  it("responses.create({stream: true}): raw events give the file's turn, or the documented difference", async () => {
    const events = await client.responses.create({ ...RESPONSES_REQUEST, stream: true }, pick(stream));
    const turn = plain(await collectTurn("openai-responses", events, options));
    const difference = RAW_DIFFERENCES["responses.create"][stream.key];
    if (difference) checkRawDifference(difference, turn, fileTurn(stream));
    else expect(turn).toEqual(fileTurn(stream));
  });

  it(".asResponse() and fetch: the raw body gives the file's turn", async () => {
    const raw = await client.responses.create({ ...RESPONSES_REQUEST, stream: true }, pick(stream)).asResponse();
    expect(plain(await collectTurn("openai-responses", raw, options))).toEqual(fileTurn(stream));
    const fetched = await postJson(server, "/v1/responses", stream, { ...RESPONSES_REQUEST, stream: true });
    expect(plain(await collectTurn("openai-responses", fetched, options))).toEqual(fileTurn(stream));
  });

  it("finalResponse(): the SDK's own calls agree with toolwire's, or the difference is documented", async () => {
    expectAccumulation(stream.key, await responsesCalls(client, stream), fileTurn(stream));
  });
});

describe("documentation tables", () => {
  it("name only streams that exist", async () => {
    const { TESTDATA_STREAMS } = await import("./support.js");
    const keys = new Set(TESTDATA_STREAMS.map((stream) => stream.key));
    const documented = [...Object.values(RAW_DIFFERENCES).flatMap((table) => Object.keys(table)), ...Object.keys(ACCUMULATION_DIFFERENCES)];
    // Keys of upstream corpus streams exist only where the corpus is present (test/helpers/corpus.ts).
    const corpusPresent = corpusDir("upstream") !== null;
    expect(documented.filter((key) => !keys.has(key) && (corpusPresent || key.includes("/handwritten__")))).toEqual([]);
  });
});

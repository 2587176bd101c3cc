import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { record } from "../../src/adapters/record.js";
import { collectTurn } from "../../src/adapters/web.js";
import { createReplayHandler, loadReplayStreams, startReplayServer, type ReplayStream } from "../../src/node/replay-server.js";
import { fileSink } from "../../src/node/record-file.js";
import { ANTHROPIC_REQUEST, CHAT_REQUEST, fileTurn, pick, plain, RESPONSES_REQUEST, streamsOf, TESTDATA_STREAMS } from "./support.js";

/**
 * `record` on live streams from the real clients over HTTP: the file replays to the live turn
 * (and serves back to the SDK as the same stream), and the credentials the requests carried
 * (`x-api-key`, `authorization`, Gemini's `?key=`) leave no trace in it.
 */

const ANTHROPIC_KEY = "sk-ant-api03-SECRET-anthropic-0123456789";
const OPENAI_KEY = "sk-proj-SECRET-openai-0123456789";
const BEARER = "Bearer SECRET-bearer-0123456789";
const URL_KEY = "AIzaSECRET-gemini-0123456789";
const SECRETS = [ANTHROPIC_KEY, OPENAI_KEY, BEARER, URL_KEY, "SECRET"];

const dir = mkdtempSync(join(tmpdir(), "toolwire-record-"));
let server: Server;
let url: string;
/** Every request's headers and URL as the server saw them: proof the credentials were sent. */
const seen: Array<{ url: string; headers: IncomingHttpHeaders }> = [];

beforeAll(async () => {
  const handler = createReplayHandler(TESTDATA_STREAMS);
  server = createServer((req, res) => {
    seen.push({ url: req.url ?? "", headers: req.headers });
    if (!handler(req, res)) res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server?.closeAllConnections();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  rmSync(dir, { recursive: true, force: true });
});

function expectNoSecrets(path: string): void {
  const text = readFileSync(path, "utf8");
  for (const secret of SECRETS) expect(text).not.toContain(secret);
  expect(text.toLowerCase()).not.toMatch(/x-api-key|authorization|bearer|x-goog-api-key/);
}

async function replayed(path: string): Promise<ReplayStream> {
  const [stream, ...rest] = await loadReplayStreams([path]);
  expect(rest).toEqual([]);
  return stream as ReplayStream;
}

const byKey = (key: string) => TESTDATA_STREAMS.find((stream) => stream.key === key) as ReplayStream;

describe("record over HTTP", () => {
  it("fetch with an API key and a bearer token: the file replays to the live turn and holds neither", async () => {
    const stream = byKey("anthropic/handwritten__claude-add-and-multiply");
    const path = join(dir, "fetch.ndjson");
    const response = await fetch(`${url}/v1/messages`, {
      method: "POST",
      headers: { "x-api-key": ANTHROPIC_KEY, authorization: BEARER, "content-type": "application/json", ...pick(stream).headers },
      body: JSON.stringify({ ...ANTHROPIC_REQUEST, stream: true }),
    });
    const turn = await collectTurn("anthropic", record(response, await fileSink(path), { sequence: stream.sequence }));
    expect(seen.at(-1)?.headers["x-api-key"]).toBe(ANTHROPIC_KEY);
    expect(seen.at(-1)?.headers.authorization).toBe(BEARER);
    expectNoSecrets(path);
    const recorded = await replayed(path);
    expect(recorded.times?.every((t) => typeof t === "number")).toBe(true);
    expect(plain(turn)).toEqual(fileTurn(stream));
    expect(fileTurn({ ...recorded, sequence: stream.sequence })).toEqual(fileTurn(stream));
  });

  it("the Anthropic SDK's raw events: recorded, served back, and read by the SDK again", async () => {
    const stream = byKey("anthropic/handwritten__claude-thinking-text-calls");
    const client = new Anthropic({ apiKey: ANTHROPIC_KEY, baseURL: url, maxRetries: 0, logLevel: "off" });
    const path = join(dir, "anthropic-sdk.ndjson");
    const live = await collectTurn("anthropic", record(await client.messages.create({ ...ANTHROPIC_REQUEST, stream: true }, pick(stream)), await fileSink(path)));
    // This SDK version sends the key as `authorization: Bearer …`; older ones used `x-api-key`.
    expect(Object.values(seen.at(-1)?.headers ?? {}).join(" ")).toContain(ANTHROPIC_KEY);
    expectNoSecrets(path);
    expect(plain(live)).toEqual(fileTurn(stream));
    // The recording is itself a stream the replay server can serve to the SDK.
    const again = await startReplayServer({ streams: [await replayed(path)] });
    try {
      const client2 = new Anthropic({ apiKey: "x", baseURL: again.url, maxRetries: 0, logLevel: "off" });
      expect(plain(await collectTurn("anthropic", await client2.messages.create({ ...ANTHROPIC_REQUEST, stream: true })))).toEqual(fileTurn(stream));
    } finally {
      await again.close();
    }
  });

  it("the OpenAI SDK's chunks and Responses events hold no key", async () => {
    const client = new OpenAI({ apiKey: OPENAI_KEY, baseURL: `${url}/v1`, maxRetries: 0, logLevel: "off" });
    const chat = streamsOf("openai-chat").find((s) => s.key.includes("handwritten__gpt-add-and-multiply")) as ReplayStream;
    const chatPath = join(dir, "chat.ndjson");
    const chatTurn = await collectTurn("openai-chat", record(await client.chat.completions.create({ ...CHAT_REQUEST, stream: true }, pick(chat)), await fileSink(chatPath)));
    expect(seen.at(-1)?.headers.authorization).toBe(`Bearer ${OPENAI_KEY}`);
    expectNoSecrets(chatPath);
    expect(plain(chatTurn)).toEqual({ ...fileTurn(chat), sequence: null });

    const responses = streamsOf("openai-responses")[0] as ReplayStream;
    const responsesPath = join(dir, "responses.ndjson");
    await collectTurn("openai-responses", record(await client.responses.create({ ...RESPONSES_REQUEST, stream: true }, pick(responses)), await fileSink(responsesPath)));
    expectNoSecrets(responsesPath);
  });

  it("a key in the URL (Gemini's ?key=) stays out too", async () => {
    const stream = streamsOf("gemini")[0] as ReplayStream;
    const path = join(dir, "gemini.ndjson");
    const response = await fetch(`${url}/v1beta/models/gemini-test:streamGenerateContent?alt=sse&key=${URL_KEY}`, { method: "POST", headers: { "x-goog-api-key": URL_KEY, ...pick(stream).headers }, body: "{}" });
    await collectTurn("gemini", record(response, await fileSink(path)));
    expect(seen.at(-1)?.url).toContain(URL_KEY);
    expectNoSecrets(path);
  });

  it("appends several turns to one file as sequences", async () => {
    const path = join(dir, "appended.ndjson");
    const streams = streamsOf("ollama");
    for (const [i, stream] of streams.entries()) {
      const response = await fetch(`${url}/api/chat`, { method: "POST", headers: pick(stream).headers, body: JSON.stringify({ model: "m" }) });
      await collectTurn("ollama", record(response, await fileSink(path, { append: i > 0 }), { sequence: `turn-${i}` }));
    }
    const loaded = await loadReplayStreams([path]);
    expect(loaded.map((stream) => stream.sequence)).toEqual(streams.map((_, i) => `turn-${i}`));
    loaded.forEach((stream, i) => expect(fileTurn({ ...stream, sequence: streams[i]?.sequence ?? null })).toEqual(fileTurn(streams[i] as ReplayStream)));
  });
});

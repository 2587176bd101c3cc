import type Anthropic from "@anthropic-ai/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { collectTurn, decodeStream } from "../../src/adapters/web.js";
import { startReplayServer, type ReplayServer, type ReplayStream } from "../../src/node/replay-server.js";
import { agrees, anthropicCalls } from "./accumulate.js";
import { ACCUMULATION_DIFFERENCES, checkRawDifference, RAW_DIFFERENCES } from "./sdk-differences.js";
import { ANTHROPIC_REQUEST, anthropicClient, fileTurn, pick, plain, postJson, startTestdataServer, streamsOf } from "./support.js";

/**
 * The real `@anthropic-ai/sdk` client over real HTTP against the replay server, for every
 * recorded Anthropic stream: its raw events (`messages.create({stream: true})`,
 * `messages.stream()`), its raw body (`.asResponse()`), and plain fetch all decode to the
 * recorded file's turn, except where the SDK withholds part of the stream (RAW_DIFFERENCES).
 */

const streams = streamsOf("anthropic");
let server: ReplayServer;
let client: Anthropic;

beforeAll(async () => {
  server = await startTestdataServer();
  client = anthropicClient(server);
});
afterAll(async () => {
  await server?.close();
});

describe.each(streams.map((stream) => [stream.key, stream] as const))("%s", (_key, stream) => {
  const options = { sequence: stream.sequence };

  it("messages.create({stream: true}): raw events give the file's turn", async () => {
    const events = await client.messages.create({ ...ANTHROPIC_REQUEST, stream: true }, pick(stream));
    expect(plain(await collectTurn("anthropic", events, options))).toEqual(fileTurn(stream));
  });

  it("messages.stream(): raw events give the file's turn, or the documented difference", async () => {
    const messageStream = client.messages.stream(ANTHROPIC_REQUEST, pick(stream));
    // Iterating registers the stream's own error listeners; this keeps a rejected finalMessage() quiet.
    messageStream.on("error", () => {});
    const turn = plain(await collectTurn("anthropic", messageStream, options));
    const difference = RAW_DIFFERENCES["messages.stream"][stream.key];
    if (difference) checkRawDifference(difference, turn, fileTurn(stream));
    else expect(turn).toEqual(fileTurn(stream));
  });

  // Streams where the SDK itself raises mid-stream (RAW_DIFFERENCES) end differently when read late.
  const documented = RAW_DIFFERENCES["messages.stream"][stream.key] !== undefined;
  if (!documented) it("messages.stream() read late (after the SDK processed every event): still the file's turn", async () => {
    // MessageStream writes its snapshot into message_start's own message object; a consumer that
    // reads late must not decode that snapshot (found when the default watchdog delayed reads).
    const messageStream = client.messages.stream(ANTHROPIC_REQUEST, pick(stream));
    messageStream.on("error", () => {});
    const iterator = decodeStream("anthropic", messageStream, options)[Symbol.asyncIterator]();
    const first = iterator.next();
    await messageStream.done().catch(() => {});
    const events = [await first];
    for (let next = await iterator.next(); !next.done; next = await iterator.next()) events.push(next);
    const finish = events.map((result) => result.value).find((event) => event?.type === "finish");
    expect(finish?.type).toBe("finish");
    if (finish?.type === "finish") expect(plain(finish.turn)).toEqual(fileTurn(stream));
  });

  it(".asResponse() and fetch: the raw body gives the file's turn", async () => {
    const raw = await client.messages.create({ ...ANTHROPIC_REQUEST, stream: true }, pick(stream)).asResponse();
    expect(raw.headers.get("content-type")).toContain("text/event-stream");
    expect(plain(await collectTurn("anthropic", raw, options))).toEqual(fileTurn(stream));
    const fetched = await postJson(server, "/v1/messages", stream, { ...ANTHROPIC_REQUEST, stream: true });
    expect(plain(await collectTurn("anthropic", fetched, options))).toEqual(fileTurn(stream));
  });

  it("finalMessage(): the SDK's own calls agree with toolwire's, or the difference is documented", async () => {
    const sdk = await anthropicCalls(client, stream);
    const difference = ACCUMULATION_DIFFERENCES[stream.key];
    if (difference) {
      expect(sdk).toEqual(difference.sdk);
      expect(agrees(sdk, fileTurn(stream)), "the documented difference no longer occurs: remove it").toBe(false);
    } else {
      expect(agrees(sdk, fileTurn(stream)), `SDK calls ${JSON.stringify(sdk)} differ from toolwire's: document the case`).toBe(true);
    }
  });
});

describe("Kimi's quirks in a well-formed Messages stream", () => {
  // The project's own Kimi sequences (testdata/anthropic/handwritten__kimi-start-input-quirks): well-formed
  // Messages streams, so they show where the SDK's own accumulation and toolwire differ on the quirks themselves.
  const kimi: ReplayStream[] = streams.filter((stream) => stream.key.includes("handwritten__kimi-start-input-quirks"));
  let kimiServer: ReplayServer;
  let kimiClient: Anthropic;
  beforeAll(async () => {
    kimiServer = await startReplayServer({ streams: kimi });
    kimiClient = anthropicClient(kimiServer);
  });
  afterAll(async () => {
    await kimiServer?.close();
  });

  it("covers the six sequences", () => {
    expect(kimi).toHaveLength(6);
  });

  for (const stream of kimi) {
    it(`${stream.sequence}: toolwire's turn is the same from messages.stream() as from the file`, async () => {
      const messageStream = kimiClient.messages.stream(ANTHROPIC_REQUEST, pick(stream));
      messageStream.on("error", () => {});
      const turn = plain(await collectTurn("anthropic", messageStream, { sequence: stream.sequence }));
      if (stream.sequence === "kimi_start_input_continued_by_delta") {
        // MessageStream parses the delta alone at content_block_stop and raises before yielding it.
        checkRawDifference({ kind: "throws_early", why: "see the test below", error: /not valid JSON/ }, turn, fileTurn(stream));
      } else {
        expect(turn).toEqual(fileTurn(stream));
      }
    });
  }

  it("the full input in content_block_start, streamed again as a delta: both count once, and the SDK agrees", async () => {
    const stream = kimi.find((s) => s.sequence === "kimi_start_input_repeated_in_delta") as ReplayStream;
    const turn = fileTurn(stream);
    expect(turn.toolCalls[0]).toMatchObject({ arguments: { command: "ls -la src/providers" }, source: "delta", repairs: [] });
    // The SDK drops the start input as soon as a delta arrives, so the duplicate never shows.
    expect(await anthropicCalls(kimiClient, stream)).toEqual([{ name: "shell", arguments: { command: "ls -la src/providers" } }]);
  });

  it("a delta that continues the start input: toolwire merges them, the SDK fails on the fragment", async () => {
    const stream = kimi.find((s) => s.sequence === "kimi_start_input_continued_by_delta") as ReplayStream;
    const turn = fileTurn(stream);
    expect(turn.toolCalls[0]).toMatchObject({ arguments: { pattern: "*.md", path: "docs/reference" }, source: "merged", repairs: ["start_continuation"] });
    // The SDK parses the delta alone (`,"path":…}`), which is not JSON: finalMessage() rejects.
    expect(await anthropicCalls(kimiClient, stream)).toEqual({ threw: expect.stringMatching(/not valid JSON/) });
  });

  it("the other sequences agree", async () => {
    for (const sequence of ["kimi_delta_only", "kimi_start_input_only", "kimi_null_start_then_delta", "kimi_empty_start_then_delta"]) {
      const stream = kimi.find((s) => s.sequence === sequence) as ReplayStream;
      expect(agrees(await anthropicCalls(kimiClient, stream), fileTurn(stream)), sequence).toBe(true);
    }
  });
});

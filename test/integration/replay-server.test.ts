import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { startServe, usage } from "../../src/cli/commands/serve.js";
import { main } from "../../src/cli/main.js";
import { collectTurn, decodeStream } from "../../src/adapters/web.js";
import { serializeRecords } from "../../src/framing/records.js";
import { loadReplayStreams, startReplayServer, type ReplayServer, type ReplayStream } from "../../src/node/replay-server.js";
import type { CodecEvent, ProviderEvent } from "../../src/types.js";
import { a } from "../helpers/anthropic-events.js";
import { TESTDATA } from "../helpers/testdata.js";
import { ANTHROPIC_REQUEST, anthropicClient, fileTurn, plain, postJson, startTestdataServer, streamsOf } from "./support.js";

const servers: ReplayServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

async function serve(streams: ReplayStream[], pace?: number): Promise<ReplayServer> {
  const server = await startReplayServer({ streams, ...(pace !== undefined ? { pace } : {}) });
  servers.push(server);
  return server;
}

/** One timed Anthropic stream: a call that closes at once, then a long pause, then the rest. */
function timedStream(pauseMs: number): ReplayStream {
  const events: ProviderEvent[] = [
    a.messageStart(),
    a.toolStart(0, "toolu_1", "read"),
    a.json(0, '{"path":"a.txt"}'),
    a.stop(0),
    a.toolStart(1, "toolu_2", "write"),
    a.json(1, '{"path":"b.txt"}'),
    a.stop(1),
    a.messageDelta("tool_use"),
    a.messageStop(),
  ];
  return { key: "timed", file: "timed.ndjson", sequence: null, provider: "anthropic", events, times: [0, 1, 2, 3, pauseMs, pauseMs + 1, pauseMs + 2, pauseMs + 3, pauseMs + 4] };
}

describe("replay server", () => {
  let shared: ReplayServer;
  beforeAll(async () => {
    shared = await startTestdataServer();
  });
  afterAll(async () => {
    await shared?.close();
  });

  it("listens on 127.0.0.1 only", () => {
    expect(shared.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  });

  it("lists its streams with their keys and providers", async () => {
    const listing = (await (await fetch(`${shared.url}/streams`)).json()) as { streams: Array<{ key: string; provider: string }> };
    expect(listing.streams).toHaveLength(shared.streams.length);
    expect(listing.streams.map((stream) => stream.key)).toContain("anthropic/handwritten__claude-add-and-multiply");
  });

  it("serves the stream named by the header, the query, or a unique suffix", async () => {
    const stream = streamsOf("anthropic").find((s) => s.key === "anthropic/handwritten__claude-add-and-multiply") as ReplayStream;
    const byQuery = await fetch(`${shared.url}/v1/messages?stream=${encodeURIComponent(stream.key)}`, { method: "POST", body: JSON.stringify({ stream: true }) });
    const bySuffix = await fetch(`${shared.url}/v1/messages`, { method: "POST", headers: { "x-toolwire-stream": "handwritten__claude-add-and-multiply" }, body: JSON.stringify({ stream: true }) });
    for (const response of [byQuery, bySuffix]) {
      expect(decodeURIComponent(response.headers.get("x-toolwire-stream") ?? "")).toBe(stream.key);
      expect(response.headers.get("request-id")).toMatch(/^req_/);
      expect(plain(await collectTurn("anthropic", response))).toEqual(fileTurn(stream));
    }
  });

  it("names a sequence by its suffix after '#'", async () => {
    const response = await fetch(`${shared.url}/v1/messages`, { method: "POST", headers: { "x-toolwire-stream": "kimi_delta_only" }, body: JSON.stringify({ stream: true }) });
    expect(decodeURIComponent(response.headers.get("x-toolwire-stream") ?? "")).toBe("anthropic/handwritten__kimi-start-input-quirks#kimi_delta_only");
    await response.body?.cancel();
  });

  it("serves a route's streams in turn without a name, starting over after the last", async () => {
    const ollama = streamsOf("ollama");
    const server = await serve(ollama);
    const served: string[] = [];
    for (let i = 0; i < ollama.length + 1; i++) {
      const response = await fetch(`${server.url}/api/chat`, { method: "POST", body: JSON.stringify({ model: "m" }) });
      served.push(decodeURIComponent(response.headers.get("x-toolwire-stream") ?? ""));
      await response.text();
    }
    expect(served).toEqual([...ollama.map((stream) => stream.key), ollama[0]?.key]);
  });

  it("answers errors in the shape the SDKs read", async () => {
    const client = anthropicClient(shared);
    await expect(client.messages.create({ ...ANTHROPIC_REQUEST, stream: true }, { headers: { "x-toolwire-stream": "no-such-stream" } })).rejects.toMatchObject({
      status: 404,
      message: expect.stringContaining("no anthropic stream matches 'no-such-stream'"),
    });
    const wrongProvider = await fetch(`${shared.url}/v1/messages`, { method: "POST", headers: { "x-toolwire-stream": streamsOf("ollama")[0]?.key ?? "" }, body: JSON.stringify({ stream: true }) });
    expect(wrongProvider.status).toBe(404);
    expect(await wrongProvider.text()).toContain("is a ollama stream; this route serves anthropic");
  });

  it("a request without stream: true gets a whole response (issue 29: was a 400); a body that is not JSON is refused", async () => {
    const response = await fetch(`${shared.url}/v1/chat/completions`, { method: "POST", body: JSON.stringify({ model: "m", messages: [] }) });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toContain("application/json");
    expect(await response.json()).toMatchObject({ object: "chat.completion", choices: [{ index: 0 }] });
    const garbage = await fetch(`${shared.url}/v1/chat/completions`, { method: "POST", body: "{not json" });
    expect(garbage.status).toBe(400);
    expect(await garbage.text()).toContain("not JSON");
  });

  it("refuses unknown routes, GET on a stream route, and Host names that are not loopback", async () => {
    expect((await fetch(`${shared.url}/v1/embeddings`, { method: "POST", body: "{}" })).status).toBe(404);
    expect((await fetch(`${shared.url}/v1/messages`)).status).toBe(405);
    const status = await new Promise<number>((resolve, reject) => {
      const req = request(`${shared.url}/streams`, { headers: { host: "attacker.example:80" } }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on("error", reject);
      req.end();
    });
    expect(status).toBe(403);
  });

  it("rejects a bad pace factor", async () => {
    const stream = streamsOf("anthropic")[0] as ReplayStream;
    const response = await postJson(shared, "/v1/messages", stream, { stream: true }, { "x-toolwire-pace": "fast" });
    expect(response.status).toBe(400);
  });
});

describe("pacing, early finalization and the watchdog over HTTP", () => {
  it("paces by t when asked, and a call is final before the stream ends", async () => {
    const server = await serve([timedStream(400)]);
    const started = performance.now();
    const response = await fetch(`${server.url}/v1/messages?pace=1`, { method: "POST", body: JSON.stringify({ stream: true }) });
    const ends: Array<{ id: string; at: number }> = [];
    let finishedAt = 0;
    for await (const event of decodeStream("anthropic", response)) {
      if (event.type === "tool_call_end") ends.push({ id: event.call.id, at: performance.now() - started });
      if (event.type === "finish") finishedAt = performance.now() - started;
    }
    expect(ends.map((end) => end.id)).toEqual(["toolu_1", "toolu_2"]);
    // The first call is handed out before the pause; the stream itself ends after it.
    expect(ends[0]?.at).toBeLessThan(300);
    expect(finishedAt).toBeGreaterThanOrEqual(380);
  });

  it("does not pace unless asked", async () => {
    const server = await serve([timedStream(5_000)]);
    const started = performance.now();
    const turn = await collectTurn("anthropic", await fetch(`${server.url}/v1/messages`, { method: "POST", body: JSON.stringify({ stream: true }) }));
    expect(turn.status).toBe("complete");
    expect(performance.now() - started).toBeLessThan(2_000);
  });

  it("scales the pace, and the server-wide default applies", async () => {
    const server = await serve([timedStream(1_000)], 0.1);
    const started = performance.now();
    const turn = await collectTurn("anthropic", await fetch(`${server.url}/v1/messages`, { method: "POST", body: JSON.stringify({ stream: true }) }));
    const took = performance.now() - started;
    expect(turn.status).toBe("complete");
    expect(took).toBeGreaterThanOrEqual(90);
    expect(took).toBeLessThan(900);
  });

  it("an idle timeout on the real SDK's stream ends the turn, aborts the request, and the server lets go", async () => {
    const server = await serve([timedStream(60_000)], 1);
    const client = anthropicClient(server);
    const stream = await client.messages.create({ ...ANTHROPIC_REQUEST, stream: true });
    const events: CodecEvent[] = [];
    for await (const event of decodeStream("anthropic", stream, { idleTimeoutMs: 150 })) events.push(event);
    const turn = (events.at(-1) as Extract<CodecEvent, { type: "finish" }>).turn;
    expect(turn.status).toBe("incomplete");
    expect(turn.toolCalls[0]).toMatchObject({ id: "toolu_1", complete: true, arguments: { path: "a.txt" } });
    expect(turn.diagnostics.some((d) => d.code === "idle_timeout")).toBe(true);
    expect(stream.controller.signal.aborted).toBe(true);
    // The paced response is still "waiting" 60 s: close() must not wait for it.
    const closing = performance.now();
    await server.close();
    servers.splice(servers.indexOf(server), 1);
    expect(performance.now() - closing).toBeLessThan(2_000);
  });

  it("an AbortSignal on a fetch Response does the same", async () => {
    const server = await serve([timedStream(60_000)], 1);
    const response = await fetch(`${server.url}/v1/messages`, { method: "POST", body: JSON.stringify({ stream: true }) });
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error("stop button")), 100);
    const turn = await collectTurn("anthropic", response, { signal: controller.signal, deadlineMs: 10_000 });
    expect(turn.status).toBe("incomplete");
    expect(turn.diagnostics.find((d) => d.code === "aborted")?.message).toContain("stop button");
  });
});

describe("loading recorded files", () => {
  const dir = mkdtempSync(join(tmpdir(), "toolwire-serve-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("keys streams by file path and sequence, and detects a missing provider", async () => {
    const events = [a.messageStart(), a.messageDelta("end_turn"), a.messageStop()];
    writeFileSync(join(dir, "two.ndjson"), serializeRecords([{ sequence: "one", provider: null, events }, { sequence: "two", provider: null, events }]));
    const streams = await loadReplayStreams([dir]);
    expect(streams.map((stream) => [stream.key, stream.provider])).toEqual([
      ["two#one", "anthropic"],
      ["two#two", "anthropic"],
    ]);
    expect((await loadReplayStreams([join(dir, "two.ndjson")])).map((stream) => stream.key)).toEqual(["two#one", "two#two"]);
  });

  it("names the file and line of a broken record", async () => {
    writeFileSync(join(dir, "broken.ndjson"), '{"data": {"type": "message_start"}}\nnot json\n');
    await expect(loadReplayStreams([join(dir, "broken.ndjson")])).rejects.toThrow(/broken\.ndjson.*line 2/);
  });
});

describe("toolwire serve", () => {
  it("starts on a free port, prints where, and serves", async () => {
    const out: string[] = [];
    const server = await startServe([TESTDATA, "--pace", "0"], { out: (text) => out.push(text), err: () => {}, cwd: process.cwd() });
    servers.push(server);
    expect(out.join("")).toContain(`on ${server.url}`);
    // serve reads testdata/: a stream of the project's own (the corpus's are not there).
    const stream = streamsOf("openai-responses").find((candidate) => candidate.key.includes("/handwritten__")) as ReplayStream;
    const turn = await collectTurn("openai-responses", await postJson(server, "/v1/responses", stream));
    expect(plain({ ...turn, sequence: stream.sequence })).toEqual(fileTurn(stream));
  });

  it("is listed by toolwire --help and prints its usage", async () => {
    const out: string[] = [];
    const ctx = { out: (text: string) => out.push(text), err: () => {}, cwd: process.cwd() };
    expect(await main(["--help"], ctx)).toBe(0);
    expect(out.join("")).toMatch(/serve\s+serve recorded streams/);
    out.length = 0;
    expect(await main(["serve", "--help"], ctx)).toBe(0);
    expect(out.join("")).toBe(usage + "\n");
  });

  it("reports usage and input errors with their exit codes", async () => {
    const err: string[] = [];
    const ctx = { out: () => {}, err: (text: string) => err.push(text), cwd: process.cwd() };
    expect(await main(["serve"], ctx)).toBe(2);
    expect(await main(["serve", TESTDATA, "--port", "http"], ctx)).toBe(2);
    expect(await main(["serve", TESTDATA, "--provider", "nope"], ctx)).toBe(2);
    expect(await main(["serve", join(TESTDATA, "no-such-dir")], ctx)).toBe(3);
    expect(err.join("")).toContain("no such file");
  });
});

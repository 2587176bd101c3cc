import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import type * as Esbuild from "esbuild";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { collectTurn } from "../../src/adapters/web.js";
import { parseRecords, serializeRecords } from "../../src/framing/records.js";
import { createReplayHandler, type ReplayStream } from "../../src/node/replay-server.js";
import { replayEvents } from "../../src/replay.js";
import type { ProviderEvent, ProviderName } from "../../src/types.js";
import { a } from "../helpers/anthropic-events.js";
import { TESTDATA_STREAMS } from "../integration/support.js";
import { findChromium, HOW_TO_RUN, launchChromium, type RunningBrowser } from "./chromium.js";
import type { BrowserJob, BrowserResult } from "./entry.js";

/**
 * The core in a real browser: test/browser/entry.ts is bundled for the browser platform (esbuild,
 * no Node built-ins allowed), served on loopback beside the replay routes, and run in headless
 * Chromium. It must decode every recorded stream exactly as Node does.
 *
 * Without Chromium the suite is skipped with one line saying how to run it. TOOLWIRE_REQUIRE_BROWSER=1
 * (set by .ci/run, which installs Debian's `chromium`) makes a missing browser a failure, so CI
 * always runs it. The generic CI variable does not: many environments set it without a browser.
 */

const chromium = findChromium();
const required = process.env.TOOLWIRE_REQUIRE_BROWSER === "1";
const TIMEOUT_MS = 90_000;

const ROUTES: Record<ProviderName, string[]> = {
  anthropic: ["/v1/messages"],
  "openai-chat": ["/v1/chat/completions"],
  "openai-responses": ["/v1/responses"],
  gemini: ["/v1beta/models/gemini-test:streamGenerateContent?alt=sse", "/v1beta/models/gemini-test:streamGenerateContent"],
  bedrock: ["/model/test/converse-stream"],
  ollama: ["/api/chat"],
};

function jobsFor(streams: readonly ReplayStream[]): BrowserJob[] {
  const jobs: BrowserJob[] = streams.flatMap((stream) => ROUTES[stream.provider].map((path) => ({ key: stream.key, provider: stream.provider, path, sequence: stream.sequence })));
  // Claude through Bedrock's InvokeModel wrapping, once, for the base64 chunk path (atob).
  const claude = streams.find((stream) => stream.provider === "anthropic");
  if (claude) jobs.push({ key: claude.key, provider: "anthropic", path: "/model/claude/invoke-with-response-stream", sequence: claude.sequence, framing: "aws-eventstream" });
  return jobs;
}

const stalls: ReplayStream = {
  key: "stalls",
  file: "stalls.ndjson",
  sequence: null,
  provider: "anthropic",
  events: [a.messageStart(), a.toolStart(0, "toolu_1", "read"), a.json(0, '{"path":"a'), a.json(0, '.txt"}'), a.stop(0)] as ProviderEvent[],
  times: [0, 0, 0, 60_000, 60_000],
};

async function bundle(): Promise<string> {
  let esbuild: typeof Esbuild;
  try {
    esbuild = await import("esbuild");
  } catch (error) {
    throw new Error(`esbuild is needed to bundle the core for the browser test (it comes with vitest/vite): ${(error as Error).message}`);
  }
  const built = await esbuild.build({
    entryPoints: [fileURLToPath(new URL("./entry.ts", import.meta.url))],
    bundle: true,
    format: "esm",
    platform: "browser",
    target: "es2022",
    write: false,
    logLevel: "silent",
  });
  return built.outputFiles[0]?.text ?? "";
}

async function body(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

/** The suite is declared only where a browser was found: elsewhere one line says why not (below). */
const describeWithBrowser = chromium !== null ? describe : (((_name: string, _body: () => void) => undefined) as unknown as typeof describe);

describeWithBrowser("the core in headless Chromium", () => {
  const streams = [...TESTDATA_STREAMS, stalls];
  const jobs = jobsFor(TESTDATA_STREAMS);
  let server: Server | undefined;
  let browser: RunningBrowser | undefined;
  let outcome: { result?: BrowserResult; error?: string };

  beforeAll(async () => {
    if (!chromium) throw new Error("unreachable: the suite is declared only with a browser");
    const script = await bundle();
    const replay = createReplayHandler(streams);
    let deliver!: (value: { result?: BrowserResult; error?: string }) => void;
    const delivered = new Promise<{ result?: BrowserResult; error?: string }>((resolve) => (deliver = resolve));
    server = createServer((req, res) => {
      const url = new URL(req.url ?? "/", "http://127.0.0.1");
      if (req.method === "GET" && url.pathname === "/") {
        res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end('<!doctype html><meta charset="utf-8"><title>toolwire</title><script type="module" src="/bundle.js"></script>');
      } else if (url.pathname === "/bundle.js") {
        res.writeHead(200, { "content-type": "text/javascript; charset=utf-8" }).end(script);
      } else if (url.pathname === "/favicon.ico") {
        res.writeHead(204).end();
      } else if (url.pathname === "/jobs") {
        res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(jobs));
      } else if (url.pathname === "/records") {
        const stream = streams.find((s) => s.key === url.searchParams.get("key"));
        res.writeHead(stream ? 200 : 404, { "content-type": "application/x-ndjson" }).end(stream ? serializeRecords([stream]) : "");
      } else if (req.method === "POST" && url.pathname === "/result") {
        void body(req).then((text) => {
          res.writeHead(204).end();
          deliver(JSON.parse(text) as { result?: BrowserResult; error?: string });
        });
      } else if (!replay(req, res)) {
        res.writeHead(404).end();
      }
    });
    await new Promise<void>((resolve) => server?.listen(0, "127.0.0.1", resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
    browser = launchChromium(chromium, url);
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<{ error: string }>((resolve) => {
      timer = setTimeout(() => resolve({ error: `no result from the page within ${TIMEOUT_MS} ms` }), TIMEOUT_MS);
    });
    const exit = browser.exited.then((code) => ({ error: `Chromium exited (code ${code}) before the page reported` }));
    outcome = await Promise.race([delivered, timeout, exit]);
    clearTimeout(timer);
    if (outcome.error) outcome.error += `\n--- Chromium output ---\n${browser.output()}`;
  }, TIMEOUT_MS + 30_000);

  afterAll(async () => {
    await browser?.close();
    server?.closeAllConnections();
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  });

  it("runs the bundle in Chromium without errors", () => {
    expect(outcome.error).toBeUndefined();
    expect(outcome.result?.userAgent).toMatch(/HeadlessChrome|Chrome/);
  });

  it("decodes every recorded stream over fetch exactly as Node does", async () => {
    const fetched = outcome.result?.fetched ?? {};
    expect(Object.keys(fetched)).toHaveLength(jobs.length);
    const origin = `http://127.0.0.1:${(server?.address() as AddressInfo).port}`;
    for (const job of jobs) {
      const response = await fetch(`${origin}${job.path}`, { method: "POST", headers: { "x-toolwire-stream": job.key }, body: JSON.stringify({ stream: true }) });
      const inNode = await collectTurn(job.provider, response, { sequence: job.sequence, ...(job.framing ? { framing: job.framing } : {}) });
      expect(fetched[`${job.path} ${job.key}`], `${job.path} ${job.key}`).toEqual(JSON.parse(JSON.stringify(inNode)));
    }
  });

  it("replays every stream's records through the push core exactly as Node does", () => {
    const replayed = outcome.result?.replayed ?? {};
    for (const stream of TESTDATA_STREAMS) {
      expect(replayed[stream.key], stream.key).toEqual(JSON.parse(JSON.stringify(replayEvents(stream, { provider: stream.provider }))));
    }
  });

  it("records a stream in the browser into the same records", () => {
    const recorded = outcome.result?.recorded;
    expect(recorded).not.toBeNull();
    const original = streams.find((stream) => stream.key === recorded?.key) as ReplayStream;
    const [stream] = parseRecords(recorded?.text ?? "");
    expect(stream?.events).toEqual(JSON.parse(JSON.stringify(original.events)));
    expect(stream?.times?.every((t) => typeof t === "number")).toBe(true);
  });

  it("times out a stalled stream with the browser's own timers", () => {
    const turn = outcome.result?.timedOut;
    expect(turn?.status).toBe("incomplete");
    expect(turn?.toolCalls[0]).toMatchObject({ complete: false, error: { code: "truncated", cause: "aborted" } });
    expect(turn?.diagnostics.some((d) => d.code === "idle_timeout")).toBe(true);
  });
});

if (chromium === null && required) {
  describe("the core in headless Chromium", () => {
    it("has a browser: TOOLWIRE_REQUIRE_BROWSER=1 (CI) makes a missing Chromium a failure", () => {
      throw new Error(`no Chromium found (looked for TOOLWIRE_CHROMIUM, then chromium, chromium-browser, google-chrome on PATH): ${HOW_TO_RUN}`);
    });
  });
} else if (chromium === null) {
  // Say so in the run's output rather than pass silently: one line, and one skipped test named after it.
  const line = `browser suite skipped: no Chromium found (${HOW_TO_RUN})`;
  console.warn(line);
  describe("the core in headless Chromium", () => {
    it.skip(line, () => {});
  });
}

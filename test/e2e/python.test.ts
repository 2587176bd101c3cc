import { execFile } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startProxy, type ProxyServer } from "../../src/node/proxy.js";
import { startReplayServer, type ReplayServer, type ReplayStream } from "../../src/node/replay-server.js";
import { THROUGH_FETCH } from "../integration/sdk-differences.js";
import { fileTurn, streamsOf } from "../integration/support.js";
import { findPython } from "./python.js";

/**
 * Clients that are not JavaScript, through `toolwire proxy` in front of `toolwire serve`: a plain
 * Python client (standard library only, naive accumulation) always, when python3 exists; the
 * official Python `anthropic`, `openai` and `google-genai` SDKs when a virtualenv can install them (no network,
 * no package index: skipped with the reason). The same assertion as for the JS SDKs: the client
 * ends up with exactly the calls toolwire decodes as runnable.
 */

const run = promisify(execFile);
const HERE = new URL(".", import.meta.url).pathname;
const PIP_ENV = { ...process.env, PIP_RETRIES: "0", PIP_DEFAULT_TIMEOUT: "5", PIP_DISABLE_PIP_VERSION_CHECK: "1" };

const PYTHON = await findPython();
if (!PYTHON) console.log("python3 not found: the Python end-to-end tests are skipped");

const streams = {
  anthropic: streamsOf("anthropic").filter((stream) => !(stream.key in THROUGH_FETCH) && /kimi|incomplete_partial_json|multi_tool_streaming|tool-no-args|thinking|claude-max-tokens|add-and-multiply/.test(stream.key)),
  // Whole functionCall parts only: google-genai does not assemble streamed partialArgs itself.
  gemini: streamsOf("gemini").filter((stream) => !/stream-tool-call|no-args-tool-call|streamed_args|vertex-streamed-arguments/.test(stream.key)),
  "openai-chat": streamsOf("openai-chat").filter((stream) => !(stream.key in THROUGH_FETCH) && /index-zero|qianfan|opencodex|xlam|venice|missing-index|index-starts-at-1|length-mid-call|no-finish-reason|arguments-null|gpt-4o|gpt-add-and-multiply/.test(stream.key)),
};

function expected(stream: ReplayStream): unknown[] {
  return fileTurn(stream).toolCalls.filter((call) => call.arguments !== null).map((call) => ({ id: call.id, name: call.name, arguments: call.arguments }));
}

let replay: ReplayServer;
let proxy: ProxyServer;

beforeAll(async () => {
  if (!PYTHON) return;
  replay = await startReplayServer({ streams: [...streams.anthropic, ...streams["openai-chat"], ...streams.gemini] });
  proxy = await startProxy({ upstream: replay.url });
});
afterAll(async () => {
  await proxy?.close();
  await replay?.close();
});

async function results(interpreter: string, script: string, protocol: keyof typeof streams): Promise<Map<string, unknown>> {
  const { stdout } = await run(interpreter, [join(HERE, script), proxy.url, protocol, ...streams[protocol].map((stream) => stream.key)], { timeout: 120_000 });
  const out = new Map<string, unknown>();
  for (const line of stdout.trim().split("\n")) {
    const parsed = JSON.parse(line) as { key: string; calls?: unknown; error?: string };
    out.set(parsed.key, parsed.error !== undefined ? { error: parsed.error } : parsed.calls);
  }
  return out;
}

describe.skipIf(!PYTHON)("a plain Python client (urllib, SSE parsed by hand) through toolwire proxy", () => {
  it.each(["anthropic", "openai-chat"] as const)("%s: gets toolwire's calls on every quirk stream", async (protocol) => {
    expect(streams[protocol].length).toBeGreaterThan(5);
    const got = await results(PYTHON as string, "stdlib_client.py", protocol);
    for (const stream of streams[protocol]) expect(got.get(stream.key), stream.key).toEqual(expected(stream));
  });
});

describe.skipIf(!PYTHON)("the official Python SDKs through toolwire proxy", () => {
  let venv: string | null = null;
  let skipReason: string | null = null;

  beforeAll(async () => {
    const dir = await mkdtemp(join(tmpdir(), "toolwire-py-"));
    try {
      await run(PYTHON as string, ["-m", "pip", "download", "--no-deps", "-q", "-d", join(dir, "probe"), "openai"], { env: PIP_ENV, timeout: 60_000 });
    } catch (error) {
      skipReason = `no Python package index reachable (pip download openai failed: ${String((error as Error).message).split("\n")[0]}); the plain-Python client above covers the proxy`;
      console.log(`the official Python SDK test is skipped: ${skipReason}`);
      return;
    }
    await run(PYTHON as string, ["-m", "venv", join(dir, "venv")], { timeout: 60_000 });
    venv = join(dir, "venv", "bin", "python");
    try {
      await run(venv, ["-m", "pip", "install", "-q", "openai", "anthropic", "google-genai"], { env: PIP_ENV, timeout: 240_000 });
    } catch (error) {
      skipReason = `pip install openai anthropic google-genai failed: ${String((error as Error).message).split("\n")[0]}`;
      console.log(`the official Python SDK test is skipped: ${skipReason}`);
      venv = null;
    }
  }, 300_000);

  afterAll(async () => {
    if (venv) await rm(join(venv, "..", "..", ".."), { recursive: true, force: true });
  });

  it.each(["anthropic", "openai-chat", "gemini"] as const)("%s: the SDK's final message holds toolwire's calls", async (protocol) => {
    if (!venv) {
      console.log(`skipped: ${skipReason ?? "no virtualenv"}`);
      return;
    }
    const got = await results(venv, "sdk_client.py", protocol);
    for (const stream of streams[protocol]) {
      if (stream.key.includes("length-mid-call")) {
        // The Python SDK's stream helper refuses any completion that finished for length (it
        // raises rather than return it). The stream it got says `length`, as the provider's did,
        // with the cut call withheld: the SDK's policy, not a wrong stream.
        expect(got.get(stream.key)).toEqual({ error: expect.stringMatching(/^LengthFinishReasonError/) });
        continue;
      }
      expect(got.get(stream.key), stream.key).toEqual(expected(stream));
    }
  }, 120_000);
});

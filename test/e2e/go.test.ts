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

/**
 * A Go client through `toolwire proxy` in front of `toolwire serve`: test/e2e/go/client.go is
 * what a hand-written Go agent has (net/http, SSE read by hand, naive accumulation,
 * json.Unmarshal of each call's arguments, standard library only, so no module proxy is needed).
 * It is built once with the `go` on PATH and run on the quirk streams the Python client gets
 * (test/e2e/python.test.ts): through the proxy it must end up with exactly the calls toolwire
 * decodes as runnable; straight from `serve` it must not, on the streams a naive accumulator
 * gets wrong (so this test can fail).
 *
 * Without `go` the suite is skipped with one line saying so. TOOLWIRE_REQUIRE_GO=1 (set by
 * .ci/run, which installs Debian's `golang-go`) makes a missing `go` a failure.
 */

const run = promisify(execFile);
const HERE = new URL(".", import.meta.url).pathname;
const required = process.env.TOOLWIRE_REQUIRE_GO === "1";

async function goVersion(): Promise<string | null> {
  try {
    const { stdout } = await run("go", ["version"], { timeout: 30_000 });
    return stdout.trim();
  } catch {
    return null;
  }
}

const GO = await goVersion();
const HOW_TO_RUN = "install Go (apt-get install golang-go, or go.dev/dl) to run it";

const streams = {
  anthropic: streamsOf("anthropic").filter((stream) => !(stream.key in THROUGH_FETCH) && /kimi|incomplete_partial_json|multi_tool_streaming|tool-no-args|thinking/.test(stream.key)),
  "openai-chat": streamsOf("openai-chat").filter((stream) => !(stream.key in THROUGH_FETCH) && /index-zero|qianfan|opencodex|xlam|venice|missing-index|index-starts-at-1|length-mid-call|no-finish-reason|arguments-null|gpt-4o/.test(stream.key)),
};

const INVALID = /^invalid tool arguments JSON: /;

/**
 * What the Go client gets straight from `serve`, where it differs from toolwire's calls: every one
 * is a turn the agent cannot run (through the proxy each of them holds toolwire's calls).
 */
const DIRECT: Record<keyof typeof streams, Record<string, { why: string; error: RegExp }>> = {
  anthropic: {
    "anthropic/anthropics__anthropic-sdk-typescript__incomplete_partial_json_response": { why: "the stream ends inside the call: its arguments are cut (toolwire withholds the call)", error: INVALID },
    "anthropic/danshapiro__kilroy__kimi_tool_call_sequences#start_input_plus_delta_continuation_invalid_json": { why: "Kimi's deltas continue the start input: the deltas alone are not JSON", error: INVALID },
    "anthropic/handwritten__kimi-start-input-quirks#kimi_start_input_continued_by_delta": { why: "Kimi's deltas continue the start input: the deltas alone are not JSON", error: INVALID },
  },
  "openai-chat": {
    "openai-chat/handwritten__gemini-openai-compat-missing-index#gemini-openai-compat-missing-index": { why: "no `index`: both calls land in slot 0 and their arguments run together", error: INVALID },
    "openai-chat/handwritten__new-api-gemini-parallel-calls-index-zero#new-api-gemini-parallel-calls-index-zero": { why: "parallel calls all at index 0", error: INVALID },
    "openai-chat/handwritten__ollama-parallel-calls-index-zero#ollama-parallel-calls-index-zero": { why: "parallel calls all at index 0", error: INVALID },
    "openai-chat/handwritten__sglang-parallel-calls-index-zero#sglang-parallel-calls-index-zero": { why: "parallel calls all at index 0", error: INVALID },
    "openai-chat/handwritten__opencodex-proxy-duplicated-argument-chunks#opencodex-proxy-duplicated-argument-chunks": { why: "argument chunks sent twice", error: INVALID },
    "openai-chat/handwritten__qianfan-cumulative-arguments#qianfan-cumulative-arguments": { why: "cumulative resends concatenated", error: INVALID },
    "openai-chat/handwritten__vllm-xlam-final-flush-duplicate#vllm-xlam-final-flush-duplicate": { why: "vLLM's final flush resends the whole arguments", error: INVALID },
    "openai-chat/handwritten__vllm-xlam-final-flush-misaligned#vllm-xlam-final-flush-misaligned": { why: "vLLM's final flush resends a misaligned part", error: INVALID },
    "openai-chat/handwritten__vllm-hermes-arguments-null#vllm-hermes-arguments-null": { why: "`arguments: null` and nothing else: an empty string is not JSON", error: INVALID },
    "openai-chat/handwritten__openai-length-mid-call#openai-length-mid-call": { why: "cut by max_tokens inside the second call: the whole turn fails (toolwire withholds only the cut call)", error: INVALID },
    "openai-chat/handwritten__venice-mistral-string-and-object-arguments#venice-mistral-string-and-object-arguments": { why: "`arguments` sent as an object: the chunk does not fit the Go struct", error: /^json: cannot unmarshal object into Go struct field/ },
    "openai-chat/handwritten__nebius-deepseek-no-finish-reason#nebius-deepseek-no-finish-reason": { why: "no finish_reason at all (toolwire adds one)", error: /^missing finish_reason$/ },
  },
};

function expected(stream: ReplayStream): unknown[] {
  return fileTurn(stream).toolCalls.filter((call) => call.arguments !== null).map((call) => ({ id: call.id, name: call.name, arguments: call.arguments }));
}

describe.skipIf(GO === null)("a plain Go client (net/http, SSE parsed by hand) through toolwire proxy", () => {
  let replay: ReplayServer;
  let proxy: ProxyServer;
  let dir: string;
  let client: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "toolwire-go-"));
    client = join(dir, "client");
    // Caches in the temp dir (nothing written to the user's), this Go only (no toolchain
    // download), no module proxy: the client uses the standard library alone.
    const env = { ...process.env, GOCACHE: join(dir, "cache"), GOPATH: join(dir, "gopath"), GOTOOLCHAIN: "local", GOPROXY: "off", GOFLAGS: "", GOENV: "off", CGO_ENABLED: "0" };
    await run("go", ["build", "-o", client, "client.go"], { cwd: join(HERE, "go"), env, timeout: 300_000 });
    replay = await startReplayServer({ streams: [...streams.anthropic, ...streams["openai-chat"]] });
    proxy = await startProxy({ upstream: replay.url });
  }, 320_000);

  afterAll(async () => {
    await proxy?.close();
    await replay?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  async function results(base: string, protocol: keyof typeof streams): Promise<Map<string, unknown>> {
    const { stdout } = await run(client, [base, protocol, ...streams[protocol].map((stream) => stream.key)], { timeout: 120_000 });
    const out = new Map<string, unknown>();
    for (const line of stdout.trim().split("\n")) {
      const parsed = JSON.parse(line) as { key: string; calls?: unknown; error?: string };
      out.set(parsed.key, parsed.error !== undefined ? { error: parsed.error } : parsed.calls);
    }
    return out;
  }

  it.each(["anthropic", "openai-chat"] as const)("%s: gets toolwire's calls on every quirk stream", async (protocol) => {
    expect(streams[protocol].length).toBeGreaterThan(5);
    const got = await results(proxy.url, protocol);
    for (const stream of streams[protocol]) expect(got.get(stream.key), stream.key).toEqual(expected(stream));
  }, 120_000);

  it.each(["anthropic", "openai-chat"] as const)("%s: straight from serve, without the proxy, the same client gets other calls", async (protocol) => {
    const got = await results(replay.url, protocol);
    const differing = streams[protocol].filter((stream) => JSON.stringify(got.get(stream.key)) !== JSON.stringify(expected(stream))).map((stream) => stream.key);
    // Upstream corpus streams are served only where the corpus is present.
    const documented = Object.keys(DIRECT[protocol]).filter((key) => streams[protocol].some((stream) => stream.key === key));
    expect(differing.sort()).toEqual(documented.sort());
    for (const key of documented) expect(got.get(key), key).toEqual({ error: expect.stringMatching(DIRECT[protocol][key]!.error) });
  }, 120_000);
});

if (GO === null) {
  if (required) {
    describe("a plain Go client through toolwire proxy", () => {
      it("has go: TOOLWIRE_REQUIRE_GO=1 (CI) makes a missing `go` a failure", () => {
        throw new Error(`no \`go\` on PATH: ${HOW_TO_RUN}`);
      });
    });
  } else {
    console.log(`go not found: the Go end-to-end test is skipped (${HOW_TO_RUN})`);
  }
}

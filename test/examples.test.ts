import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { main as anthropicExample } from "../examples/anthropic-sdk.js";
import { main as fetchExample } from "../examples/fetch.js";
import { main as openaiExample } from "../examples/openai-sdk.js";
import { main as guardsExample, type ToolOutcome } from "../examples/guards.js";
import { main as recordExample } from "../examples/record.js";
import { startServe } from "../src/cli/commands/serve.js";
import { collectTurn } from "../src/adapters/web.js";
import { loadReplayStreams, startReplayServer, type ReplayServer, type ReplayStream } from "../src/node/replay-server.js";
import type { DecodedTurn, ProviderEvent } from "../src/types.js";
import { createDecoder } from "../src/providers/registry.js";
import { a } from "./helpers/anthropic-events.js";
import { EXAMPLES, readmeBlocks, readmeSection, readmeSnippet } from "./helpers/readme-examples.js";
import { fileTurn, plain, TESTDATA_STREAMS } from "./integration/support.js";

/**
 * The README's examples (examples/*.ts) run against the replay server, with the real SDKs and
 * fetch, so that they cannot rot; and the README must show exactly their code.
 */

const ROOT = new URL("../", import.meta.url);
const byKey = (key: string) => TESTDATA_STREAMS.find((stream) => stream.key === key) as ReplayStream;
const CLAUDE = byKey("anthropic/handwritten__claude-add-and-multiply");
const CLAUDE_CUT = byKey("anthropic/handwritten__claude-max-tokens-mid-call#claude_max_tokens_only_call");
const GPT_CHAT = byKey("openai-chat/handwritten__gpt-add-and-multiply");
const GPT_RESPONSES = byKey("openai-responses/handwritten__gpt-add-and-multiply");

const ENV = ["ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "OPENAI_BASE_URL", "OPENAI_API_KEY"] as const;
const saved = Object.fromEntries(ENV.map((name) => [name, process.env[name]]));
const servers: ReplayServer[] = [];

async function serveOnly(streams: ReplayStream[], pace?: number): Promise<ReplayServer> {
  const server = await startReplayServer({ streams, ...(pace !== undefined ? { pace } : {}) });
  servers.push(server);
  process.env.ANTHROPIC_BASE_URL = server.url;
  process.env.OPENAI_BASE_URL = `${server.url}/v1`;
  return server;
}

const calls: Array<{ name: string; args: Record<string, unknown>; at: number }> = [];
async function runTool(name: string, args: Record<string, unknown>): Promise<string> {
  calls.push({ name, args, at: performance.now() });
  const { a: x, b: y } = args as { a: number; b: number };
  return String(name === "add" ? x + y : name === "multiply" ? x * y : NaN);
}

beforeAll(() => {
  process.env.ANTHROPIC_API_KEY = "sk-ant-example";
  delete process.env.ANTHROPIC_AUTH_TOKEN;
  process.env.OPENAI_API_KEY = "sk-example";
});
afterEach(async () => {
  calls.length = 0;
  await Promise.all(servers.splice(0).map((server) => server.close()));
});
afterAll(() => {
  for (const name of ENV) {
    if (saved[name] === undefined) delete process.env[name];
    else process.env[name] = saved[name];
  }
});

const unnamed = (stream: ReplayStream) => ({ ...fileTurn(stream), sequence: null });

describe("README examples", () => {
  it("Anthropic SDK: decodes the calls and answers each one", async () => {
    await serveOnly([CLAUDE]);
    const { turn, results } = await anthropicExample(runTool);
    expect(plain(turn)).toEqual(unnamed(CLAUDE));
    expect(results.map((result) => result.content)).toEqual(["5", "6"]);
    expect(calls.map((call) => call.name)).toEqual(["add", "multiply"]);
  });

  it("Anthropic SDK: a call cut by max_tokens is answered with its error, not run", async () => {
    await serveOnly([CLAUDE_CUT]);
    const { results } = await anthropicExample(runTool);
    expect(results).toEqual([expect.objectContaining({ is_error: true, content: expect.stringContaining("max_tokens") })]);
    expect(calls).toEqual([]);
  });

  it("OpenAI SDK: Chat Completions, its raw body, and the Responses API", async () => {
    await serveOnly([GPT_CHAT, GPT_RESPONSES]);
    const { turn, messages, sameTurn, responsesTurn } = await openaiExample(runTool);
    expect(plain(turn)).toEqual(unnamed(GPT_CHAT));
    expect(plain(sameTurn)).toEqual(unnamed(GPT_CHAT));
    expect(messages.map((message) => message.content)).toEqual(["5", "6"]);
    expect(plain(responsesTurn)).toEqual(unnamed(GPT_RESPONSES));
  });

  it("fetch: starts each call as soon as it is final, before the stream ends", async () => {
    const events: ProviderEvent[] = [
      a.messageStart(),
      a.toolStart(0, "toolu_1", "add"),
      a.json(0, '{"a":2,"b":3}'),
      a.stop(0),
      a.toolStart(1, "toolu_2", "multiply"),
      a.json(1, '{"a":2,"b":3}'),
      a.stop(1),
      a.messageDelta("tool_use"),
      a.messageStop(),
    ];
    const timed: ReplayStream = { key: "timed", file: "timed.ndjson", sequence: null, provider: "anthropic", events, times: [0, 0, 0, 0, 300, 300, 300, 300, 300] };
    await serveOnly([timed], 1);
    const started = performance.now();
    const { turn, results } = await fetchExample(runTool, new AbortController().signal);
    const ended = performance.now();
    expect(turn.status).toBe("complete");
    expect(results).toEqual([
      { id: "toolu_1", result: "5" },
      { id: "toolu_2", result: "6" },
    ]);
    expect(calls[0]?.at).toBeLessThan(started + 250);
    expect(ended - started).toBeGreaterThanOrEqual(280);
  });

  it("fetch: the stop signal ends the turn, with the open call truncated", async () => {
    const events: ProviderEvent[] = [a.messageStart(), a.toolStart(0, "toolu_1", "add"), a.json(0, '{"a":2,'), a.json(0, '"b":3}')];
    await serveOnly([{ key: "stalls", file: "stalls.ndjson", sequence: null, provider: "anthropic", events, times: [0, 0, 0, 60_000] }], 1);
    const stop = new AbortController();
    setTimeout(() => stop.abort(new Error("Stop button")), 100);
    const { turn, results } = await fetchExample(runTool, stop.signal);
    expect(turn.status).toBe("incomplete");
    expect(turn.toolCalls[0]).toMatchObject({ complete: false, error: { code: "truncated", cause: "aborted" } });
    expect(results).toEqual([]);
  });

  it("record: writes a file that replays to the same turn and serves back to the SDK", async () => {
    await serveOnly([CLAUDE]);
    const dir = mkdtempSync(join(tmpdir(), "toolwire-example-"));
    const cwd = process.cwd();
    try {
      // The example writes to a relative path, as a user's script would.
      process.chdir(dir);
      const turn = await recordExample();
      process.chdir(cwd);
      const path = join(dir, "recordings", "add-and-multiply.ndjson");
      expect(existsSync(path)).toBe(true);
      expect(readFileSync(path, "utf8")).not.toContain("sk-ant-example");
      expect(plain(turn)).toEqual({ ...fileTurn(CLAUDE), sequence: "add-and-multiply" });
      const [stream] = await loadReplayStreams([path]);
      expect(fileTurn(stream as ReplayStream)).toEqual(plain(turn));
      // `toolwire serve recordings/`, and the example's own client pointed at it.
      const served = await startServe([join(dir, "recordings")], { out: () => {}, err: () => {}, cwd: dir });
      servers.push(served);
      const response = await fetch(`${served.url}/v1/messages`, { method: "POST", body: JSON.stringify({ stream: true }) });
      expect(plain(await collectTurn("anthropic", response, { sequence: "add-and-multiply" }))).toEqual(plain(turn));
    } finally {
      process.chdir(cwd);
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("README example: guards", () => {
  const schemas = {
    read_file: { type: "object", properties: { path: { type: "string" }, lines: { type: "integer" } }, required: ["path"] },
    write_file: { type: "object", properties: { path: { type: "string" }, text: { type: "string" } }, required: ["path", "text"] },
  } as const;

  /** A Chat Completions turn with these calls (arguments as the model wrote them). */
  function turnOf(calls: Array<[string, string]>): DecodedTurn {
    const decoder = createDecoder("openai-chat");
    calls.forEach(([name, args], index) => {
      decoder.push({ data: { id: "c", choices: [{ index: 0, delta: { tool_calls: [{ index, id: `call_${index}`, type: "function", function: { name, arguments: args } }] } }] } });
    });
    decoder.push({ data: { id: "c", choices: [{ index: 0, delta: {}, finish_reason: "tool_calls" }] } });
    return decoder.finish();
  }

  it("coerces, escalates repeated mistakes with an example, and reports what did not change", async () => {
    const ran: Array<[string, Record<string, unknown>]> = [];
    const runTool = async (name: string, args: Record<string, unknown>): Promise<ToolOutcome> => {
      ran.push([name, args]);
      if (name === "write_file") return { output: "permission denied", ok: false, target: String(args.path), error: "permission denied" };
      return { output: "file text", ok: true };
    };
    const bad = '{"lines": "forty"}';
    const turn = turnOf([
      ["read_file", '{"path": "a.ts", "lines": "40"}'],
      ["read_file", bad],
      ["read_file", bad],
      ["read_file", bad],
      ["write_file", '{"path": "src/b.ts", "text": "x"}'],
      // Not losslessly repairable (a missing closing brace would be): never run.
      ["read_file", '{"path": "a.ts" "lines": :4}'],
    ]);
    const { results, footer, stop } = await guardsExample(turn, schemas, runTool);
    expect(ran).toEqual([
      ["read_file", { path: "a.ts", lines: 40 }],
      ["write_file", { path: "src/b.ts", text: "x" }],
    ]);
    expect(results[1]?.content).toContain("missing required field: path");
    expect(results[2]?.content).not.toContain("A valid call");
    expect(results[3]?.content).toContain('A valid call: {"path":');
    expect(results[5]?.content).toContain("The arguments for `read_file` are not"); // invalid JSON: never run
    expect(stop).toBe(false);
    expect(footer).toBe("Files NOT modified this turn (a call failed and no later call on the same target succeeded):\n- src/b.ts (write_file: permission denied)");
  });

  it("does not run the same call a third time in a row", async () => {
    let runs = 0;
    const same: [string, string] = ["read_file", '{"path": "a.ts"}'];
    const { results } = await guardsExample(turnOf([same, same, same]), schemas, async () => ({ output: `run ${++runs}`, ok: true }));
    expect(runs).toBe(2);
    expect(results.map((result) => result.content).slice(0, 2)).toEqual(["run 1", "run 2"]);
    expect(results[2]?.content).not.toBe("run 3");
  });

  it("a tool error reaches the breaker: it counts as a failure, escalates at 3 and trips at 5 (issue 29)", async () => {
    const calls = Array.from({ length: 5 }, (_, i) => ["write_file", JSON.stringify({ path: `src/${i}.ts`, text: "x" })] as [string, string]);
    const failing = async (_name: string, args: Record<string, unknown>): Promise<ToolOutcome> => ({ output: "permission denied", ok: false, target: String(args.path), error: "permission denied" });
    const { results, stop, guard } = await guardsExample(turnOf(calls), schemas, failing);
    expect(guard.failures("write_file")).toBe(5);
    expect(results[0]?.content).toBe("permission denied");
    expect(results[2]?.content).toContain("permission denied");
    expect(results[2]?.content).toContain("A valid call");
    expect(results[4]?.content).toContain("STOP: 'write_file' has failed 5 times");
    expect(stop).toBe(true);
    // A call that works resets the count.
    const mixed = await guardsExample(turnOf([calls[0]!, calls[1]!]), schemas, async (name, args) => (args.path === "src/1.ts" ? { output: "ok", ok: true, target: "src/1.ts" } : failing(name, args)));
    expect(mixed.guard.failures("write_file")).toBe(0);
  });

  it("trips after five identical failures", async () => {
    const bad = '{"lines": "forty"}';
    const { results, stop } = await guardsExample(turnOf(Array.from({ length: 5 }, () => ["read_file", bad] as [string, string])), schemas, async () => ({ output: "", ok: true }));
    expect(stop).toBe(true);
    expect(results[4]?.content).toContain("STOP: 'read_file' has failed 5 times");
  });
});

/** README.md and every guide under docs/ (the examples moved from the README into the guides). */
function docPages(): string[] {
  const pages = ["README.md"];
  const walk = (dir: string) => {
    for (const entry of readdirSync(new URL(dir, ROOT), { withFileTypes: true })) {
      if (entry.isDirectory()) walk(`${dir}${entry.name}/`);
      else if (entry.name.endsWith(".md")) pages.push(`${dir}${entry.name}`);
    }
  };
  walk("docs/");
  return pages;
}

describe("README and docs/ show the examples' code", () => {
  const blocks = new Map<string, string>();
  for (const page of docPages()) for (const [file, block] of readmeBlocks(readFileSync(new URL(page, ROOT), "utf8"))) blocks.set(file, block);
  const pending = blocks.size === 0 && !process.env.CI;

  it.skipIf(pending)("has every example, exactly as in examples/", () => {
    for (const file of EXAMPLES) {
      const expected = readmeSnippet(ROOT, file);
      expect(blocks.get(file), `README.md or a guide in docs/ must show ${file} after an '<!-- example: ${file} -->' marker. All of them:\n\n${readmeSection(ROOT)}`).toBe(expected);
    }
  });

  it("asks for a section that satisfies it", () => {
    const section = readmeBlocks(`# README\n\n${readmeSection(ROOT)}\n`);
    for (const file of EXAMPLES) expect(section.get(file)).toBe(readmeSnippet(ROOT, file));
  });

  it("derives a snippet from each example", () => {
    for (const file of EXAMPLES) {
      const snippet = readmeSnippet(ROOT, file);
      expect(snippet).toMatch(/^import /);
      expect(snippet).toMatch(/from "toolwire(\/[a-z]+)?";/);
      expect(snippet).not.toContain("../src/");
      expect(snippet).not.toContain("#region");
    }
  });
});

import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { afterEach, describe, expect, it } from "vitest";
import { historyFormat } from "../../src/cli/commands/history.js";
import { renderReport } from "../../src/cli/commands/replay.js";
import { requestLine, startServe } from "../../src/cli/commands/serve.js";
import { CliError, EXIT } from "../../src/cli/context.js";
import { parseRecords } from "../../src/framing/records.js";
import { closestKeys, type ReplayServer, type ReplayStream } from "../../src/node/replay-server.js";
import { replayEvents } from "../../src/replay.js";
import type { DecodedTurn } from "../../src/types.js";
import { TESTDATA } from "../helpers/testdata.js";
import { cli } from "./support.js";

const KIMI = "anthropic/handwritten__kimi-start-input-quirks.ndjson";
const GEMINI = "gemini/handwritten__parallel-calls-without-ids.ndjson";

function scratch(): string {
  return mkdtempSync(join(tmpdir(), "toolwire-cli-"));
}

describe("toolwire replay: the quick start's report", () => {
  it("summarizes a long run in one screen, every line within the terminal width", async () => {
    for (const columns of [50, 80, 120]) {
      const { code, out } = await cli(["replay", "testdata"], { columns, rows: 40 });
      expect(code).toBe(0);
      const lines = out.trimEnd().split("\n");
      expect(lines.length).toBeLessThanOrEqual(40);
      for (const line of lines) expect(Array.from(line).length, line).toBeLessThanOrEqual(columns);
      if (columns >= 80) expect(out).toMatch(/^provider +files +streams +calls +repaired +truncated +invalid +server$/m);
      expect(out).toMatch(/^total +\d+ +\d+ +\d+/m);
      expect(out).toContain("Notable:");
      expect(out).toMatch(/Details: --verbose/);
    }
  });

  it("without a terminal, lines are whole (issue 29: piped output is not cut at 80 columns)", async () => {
    const { out } = await cli(["replay", "testdata", "--verbose"]);
    expect(out).not.toContain("…");
    expect(Math.max(...out.split("\n").map((line) => Array.from(line).length))).toBeGreaterThan(80);
  });

  it("lists recordings only: no fuzz regression files, no raw upstream corpus", async () => {
    const { out } = await cli(["replay", "testdata", "--verbose"]);
    expect(out).toMatch(/^testdata\/anthropic\//m);
    expect(out).not.toContain("regressions/");
    expect(out).not.toContain("upstream/");
    const { out: json } = await cli(["replay", "testdata", "--json"]);
    const count = json.trim().split("\n").length;
    expect(out).toMatch(new RegExp(`Replayed \\d+ files, ${count} streams`));
    // Named explicitly, a regressions folder is replayed.
    const { code, out: named } = await cli(["replay", "testdata/regressions", "--verbose"]);
    expect(code).toBe(0);
    expect(named).toMatch(/^testdata\/regressions\//m);
  });

  it("a folder named like an Object.prototype key is still searched", async () => {
    const dir = scratch();
    mkdirSync(join(dir, "constructor"));
    copyFileSync(join(TESTDATA, KIMI), join(dir, "constructor", "kimi.ndjson"));
    const { code, out } = await cli(["replay", "."], { cwd: dir });
    expect(code).toBe(0);
    expect(out).toMatch(/^constructor\/kimi\.ndjson$/m);
  });

  it("a short run lists every call, as before", async () => {
    const { out } = await cli(["replay", `testdata/${KIMI}`]);
    expect(out).toContain("kimi_start_input_continued_by_delta: anthropic");
    expect(out).toMatch(/~ glob tool_kimi_05 source=merged repairs=start_continuation/);
  });

  it("renderReport cuts long lines with an ellipsis", () => {
    const turn = replayEvents(parseRecords(readFileSync(join(TESTDATA, KIMI), "utf8"))[0]!) as DecodedTurn;
    const report = renderReport([{ shown: "x".repeat(200), short: "x", turns: [turn] }], { verbose: true, columns: 40, rows: 40 });
    expect(report.split("\n")[0]).toBe(`${"x".repeat(39)}…`);
  });
});

describe("toolwire replay --provider: a forced provider that understands nothing", () => {
  it("says which provider the events look like", async () => {
    const { code, err, out } = await cli(["replay", `testdata/${GEMINI}`, "--provider", "anthropic"]);
    // Issue 29: a forced provider that decodes nothing is an input error (was exit 0).
    expect(code).toBe(EXIT.input);
    // One line for the whole run, naming the file once (issue 29: was one line per stream).
    expect(err).toMatch(/^toolwire replay: --provider anthropic decoded nothing in 2 of 2 streams: their events look like gemini \(2\) \(first: .*\); try --provider gemini\.\n$/);
    expect(err.split(GEMINI).length - 1).toBe(1);
    expect(out).toContain("anthropic");
  });

  it("is quiet when the provider fits", async () => {
    const { err } = await cli(["replay", `testdata/${GEMINI}`, "--provider", "gemini"]);
    expect(err).toBe("");
  });
});

describe("toolwire history --format takes schema --target's names", () => {
  it.each([
    ["claude", "anthropic"],
    ["vertex-anthropic", "anthropic"],
    ["claude-strict", "anthropic"],
    ["google", "gemini"],
    ["vertex", "gemini"],
    ["bedrock-converse", "bedrock"],
    ["grok", "openai-chat"],
    ["llama.cpp", "openai-chat"],
    ["Anthropic", "anthropic"],
    ["openai-responses", "openai-responses"],
  ])("%s → %s", (name, format) => {
    expect(historyFormat(name)).toBe(format);
  });

  it("'openai' names two formats: a usage error saying which", () => {
    expect(() => historyFormat("openai")).toThrow(CliError);
    expect(() => historyFormat("codex")).toThrow(/openai-chat \(Chat Completions\) or openai-responses/);
    expect(() => historyFormat("cohere")).toThrow(/unknown format 'cohere'/);
  });

  it("works on the command line", async () => {
    const dir = scratch();
    writeFileSync(join(dir, "h.json"), JSON.stringify([{ role: "user", content: "hi" }, { role: "assistant", content: [{ type: "tool_use", id: "toolu_1", name: "a", input: {} }] }]));
    const { code, out } = await cli(["history", "check", "h.json", "--format", "claude"], { cwd: dir });
    expect(code).toBe(EXIT.findings);
    expect(out).toMatch(/^h\.json \(anthropic\): 1 fault/);
  });
});

describe("toolwire serve: request log and stream names", () => {
  const servers: ReplayServer[] = [];
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((server) => server.close()));
  });

  async function serve(): Promise<{ server: ReplayServer; log: string[] }> {
    const log: string[] = [];
    const server = await startServe(["testdata/anthropic"], { out: () => {}, err: (text) => void log.push(text), cwd: join(TESTDATA, "..") });
    servers.push(server);
    return { server, log };
  }

  function post(server: ReplayServer, stream: string | null): Promise<Response> {
    return fetch(`${server.url}/v1/messages`, { method: "POST", headers: stream === null ? {} : { "x-toolwire-stream": stream }, body: JSON.stringify({ stream: true }) });
  }

  it("logs each request: method, route, status, stream served", async () => {
    const { server, log } = await serve();
    const response = await post(server, "handwritten__kimi-start-input-quirks#kimi_delta_only");
    expect(response.status).toBe(200);
    await response.text();
    await (await fetch(`${server.url}/streams`)).text();
    await (await fetch(`${server.url}/v1/embeddings`, { method: "POST", body: "{}" })).text();
    expect(log).toEqual([
      "toolwire serve: POST /v1/messages 200 handwritten__kimi-start-input-quirks#kimi_delta_only\n",
      "toolwire serve: GET /streams 200\n",
      "toolwire serve: POST /v1/embeddings 404 no route\n",
    ]);
  });

  it("accepts any unique part of a key", async () => {
    const { server, log } = await serve();
    const response = await post(server, "continued_by");
    expect(response.status).toBe(200);
    expect(decodeURIComponent(response.headers.get("x-toolwire-stream") ?? "")).toBe("handwritten__kimi-start-input-quirks#kimi_start_input_continued_by_delta");
    await response.text();
    expect(log[0]).toContain("200 handwritten__kimi-start-input-quirks#kimi_start_input_continued_by_delta");
  });

  it("an ambiguous part lists the keys it matches; an unknown one the closest keys", async () => {
    const { server, log } = await serve();
    const ambiguous = await post(server, "start_then_delta");
    expect(ambiguous.status).toBe(404);
    expect(await ambiguous.text()).toMatch(/stream 'start_then_delta' is ambiguous: it matches handwritten__kimi-start-input-quirks#/);
    const typo = await post(server, "kimi_delta_onyl");
    expect(typo.status).toBe(404);
    const body = (await typo.json()) as { error: { message: string } };
    expect(body.error.message).toMatch(/no anthropic stream matches 'kimi_delta_onyl'; closest: handwritten__kimi-start-input-quirks#kimi_delta_only[,;]/);
    expect(log[1]).toMatch(/^toolwire serve: POST \/v1\/messages 404 no anthropic stream matches/);
  });

  it("closestKeys ranks by edit distance to the key's last part, and leaves out keys that share nothing", () => {
    const streams = ["a/get_weather", "a/get_whether", "b/list_files", "c/x#read_file"].map((key) => ({ key }) as ReplayStream);
    expect(closestKeys(streams, "get_wether", 2)).toEqual(["a/get_weather", "a/get_whether"]);
    expect(closestKeys(streams, "read_fil", 1)).toEqual(["c/x#read_file"]);
    expect(closestKeys(streams, "zz", 3)).toEqual([]);
  });

  it("requestLine", () => {
    expect(requestLine({ method: "POST", path: "/v1/messages", status: 200, stream: "k", provider: "anthropic" })).toBe("POST /v1/messages 200 k");
    expect(requestLine({ method: "GET", path: "/v1/messages", status: 405, stream: null, provider: null, reason: "streams are requested with POST" })).toBe("GET /v1/messages 405 streams are requested with POST");
  });
});

describe("toolwire import: gzip and Gemini JSON array bodies", () => {
  it("imports a .gz file like the file it holds", async () => {
    const dir = scratch();
    const source = join(TESTDATA, "raw", "anthropic-weather.sse");
    copyFileSync(source, join(dir, "stream.sse"));
    writeFileSync(join(dir, "stream.sse.gz"), gzipSync(readFileSync(source)));
    const plain = await cli(["import", "stream.sse"], { cwd: dir });
    const gz = await cli(["import", "stream.sse.gz"], { cwd: dir });
    expect(gz.code).toBe(0);
    expect(parseRecords(gz.out)).toEqual(parseRecords(plain.out));
    expect(gz.out).toMatch(/^# note: gzip file decompressed/m);
    // …and replays it directly.
    const replayed = await cli(["replay", "stream.sse.gz", "--json"], { cwd: dir });
    expect(JSON.parse(replayed.out)).toMatchObject({ provider: "anthropic", toolCalls: [{ name: "get_weather", arguments: { location: "Bergen" } }] });
  });

  it("imports a cassette whose body is gzip (Content-Encoding) and a bare Gemini JSON array", async () => {
    const dir = scratch();
    const [stream] = parseRecords(readFileSync(join(TESTDATA, GEMINI), "utf8"));
    const payloads = stream!.events.map((event) => event.data);
    const array = "[" + payloads.map((payload) => JSON.stringify(payload, null, 2)).join("\n,\r\n") + "]";
    writeFileSync(join(dir, "gemini.json"), array);
    const yaml = [
      "---",
      "version: 2",
      "interactions:",
      "- request:",
      "    url: https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:streamGenerateContent",
      "    method: POST",
      "  response:",
      "    code: 200",
      "    headers:",
      "      Content-Type:",
      "      - application/json; charset=UTF-8",
      "      Content-Encoding:",
      "      - gzip",
      `    body: !!binary ${gzipSync(array).toString("base64")}`,
      "",
    ].join("\n");
    writeFileSync(join(dir, "gemini.yaml"), yaml);
    for (const file of ["gemini.json", "gemini.yaml"]) {
      const { code, out, err } = await cli(["import", file], { cwd: dir });
      expect(err, file).toBe("");
      expect(code, file).toBe(0);
      expect(parseRecords(out)[0]?.events.map((event) => event.data), file).toEqual(payloads);
    }
    const replayed = await cli(["replay", "gemini.yaml", "--json"], { cwd: dir });
    expect(JSON.parse(replayed.out)).toMatchObject({ provider: "gemini", toolCalls: replayEvents(stream!).toolCalls.map((call) => ({ name: call.name, arguments: call.arguments })) });
  });
});

describe("toolwire expect: the user's recordings become regression tests", () => {
  it("writes drafts, keeps them on a second run, and conformance then holds them", async () => {
    const dir = scratch();
    mkdirSync(join(dir, "recordings"));
    copyFileSync(join(TESTDATA, KIMI), join(dir, "recordings", "kimi.ndjson"));
    copyFileSync(join(TESTDATA, GEMINI), join(dir, "recordings", "gemini.ndjson"));

    const first = await cli(["expect", "recordings"], { cwd: dir });
    expect(first.code).toBe(0);
    expect(first.out).toMatch(/^wrote {2}recordings\/gemini\.expected\.json \(gemini, 2 stream\(s\), \d+ call\(s\)\)$/m);
    expect(first.out).toMatch(/^wrote {2}recordings\/kimi\.expected\.json \(anthropic, 6 stream\(s\), 6 call\(s\)\)$/m);
    const expectation = JSON.parse(readFileSync(join(dir, "recordings", "kimi.expected.json"), "utf8")) as { provider: string; verifiedBy: string; streams: unknown[] };
    expect(expectation.provider).toBe("anthropic");
    expect(expectation.verifiedBy).toMatch(/^DRAFT/);
    expect(expectation.streams).toHaveLength(6);

    const check = await cli(["conformance", "recordings"], { cwd: dir });
    expect(check.code).toBe(0);
    expect(check.out).toMatch(/2 match their expectation, 0 differ/);

    const again = await cli(["expect", "recordings"], { cwd: dir });
    expect(again.out).toMatch(/^kept {3}recordings\/kimi\.expected\.json/m);
    expect(again.out).toMatch(/0 written, 2 kept/);

    // A decoder that changes its mind is caught.
    const edited = { ...expectation, verifiedBy: "read against the kilroy comments", streams: (expectation.streams as Array<{ toolCalls: Array<{ id: string }> }>).map((stream, i) => (i === 0 ? { ...stream, toolCalls: stream.toolCalls.map((call) => ({ ...call, id: "changed" })) } : stream)) };
    writeFileSync(join(dir, "recordings", "kimi.expected.json"), JSON.stringify(edited));
    expect((await cli(["conformance", "recordings"], { cwd: dir })).code).toBe(EXIT.findings);

    // --force rewrites from the decoder, keeping what the person wrote in verifiedBy.
    await cli(["expect", "recordings", "--force"], { cwd: dir });
    const rewritten = JSON.parse(readFileSync(join(dir, "recordings", "kimi.expected.json"), "utf8")) as { verifiedBy: string };
    expect(rewritten.verifiedBy).toBe("read against the kilroy comments");
    expect((await cli(["conformance", "recordings"], { cwd: dir })).code).toBe(0);
  });

  it("usage and provider errors", async () => {
    expect((await cli(["expect"])).code).toBe(EXIT.usage);
    expect((await cli(["expect", "testdata", "--provider", "cohere"])).code).toBe(EXIT.usage);
  });
});

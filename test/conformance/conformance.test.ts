import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { CliContext } from "../../src/cli/context.js";
import { main } from "../../src/cli/main.js";
import { expectedStreamOf, type Expectation } from "../../src/conformance/expectation.js";
import { conformanceRow, jsonDifferences, renderTable, summarize, summaryLine } from "../../src/conformance/report.js";
import { createDecoder } from "../../src/providers/registry.js";
import type { DecodedTurn } from "../../src/types.js";
import { g } from "../helpers/gemini-events.js";
import { TESTDATA } from "../helpers/testdata.js";

async function cli(args: string[], cwd: string): Promise<{ code: number; out: string; err: string }> {
  let out = "";
  let err = "";
  const ctx: CliContext = { out: (t) => void (out += t), err: (t) => void (err += t), cwd };
  const code = await main(args, ctx);
  return { code, out, err };
}

function geminiTurn(): DecodedTurn {
  const decoder = createDecoder("gemini", { sequence: "s1" });
  decoder.push(g.chunk([g.text("Hi"), g.call("add", { a: 1 }, { id: "c1" })], { finishReason: "STOP" }));
  return decoder.finish();
}

describe("conformance report (pure)", () => {
  const turn = geminiTurn();
  const expectation: Expectation = { provider: "gemini", streams: [expectedStreamOf(turn)] };

  it("a file that decodes to its expectation matches", () => {
    const row = conformanceRow({ file: "gemini/a.ndjson", provider: "gemini", turns: [turn], expectation });
    expect(row).toMatchObject({ provider: "gemini", calls: 1, sources: { final: 1 }, repairs: {}, status: { complete: 1 }, verdict: "match", differences: [] });
  });

  it("names every difference by path", () => {
    const changed: Expectation = JSON.parse(JSON.stringify(expectation)) as Expectation;
    changed.streams[0]!.toolCalls[0]!.arguments = { a: 2 };
    changed.streams[0]!.finishReason = "stop";
    const row = conformanceRow({ file: "gemini/a.ndjson", provider: "gemini", turns: [turn], expectation: changed });
    expect(row.verdict).toBe("differs");
    expect(row.differences).toEqual(["streams[0].finishReason: expected \"stop\", got \"tool_calls\"", "streams[0].toolCalls[0].arguments.a: expected 2, got 1"]);
  });

  it("reports a different stream count and a different provider", () => {
    const row = conformanceRow({ file: "x", provider: "gemini", turns: [turn], expectation: { provider: "ollama", streams: [] } });
    expect(row.differences).toEqual(['provider: expected "ollama", got "gemini"', "streams: expected 0 item(s), got 1"]);
    expect(jsonDifferences({ a: [1, 2] }, { a: [1, 3], b: true })).toEqual(["a[1]: expected 2, got 3", "b: expected (absent), got true"]);
  });

  it("a file without expectation is listed as such; a decoding failure is an error", () => {
    expect(conformanceRow({ file: "x", provider: null, turns: [turn], expectation: null }).verdict).toBe("no expectation");
    expect(conformanceRow({ file: "x", provider: null, turns: [], expectation: null, error: "cannot decode: boom" })).toMatchObject({ verdict: "error", differences: ["cannot decode: boom"] });
  });

  it("renders a table with the summary line last", () => {
    const rows = [
      conformanceRow({ file: "gemini/a.ndjson", provider: "gemini", turns: [turn], expectation }),
      conformanceRow({ file: "gemini/b.ndjson", provider: "gemini", turns: [turn], expectation: null }),
    ];
    const table = renderTable(rows).trimEnd().split("\n");
    expect(table[0]).toMatch(/^provider\s+file\s+calls\s+sources\s+repairs\s+status\s+expectation$/);
    expect(table[2]).toMatch(/^gemini\s+gemini\/a\.ndjson\s+1\s+final:1\s+-\s+complete:1\s+equal$/);
    expect(table[3]).toMatch(/no expectation$/);
    expect(table.at(-1)).toBe(summaryLine(summarize(rows)));
    expect(table.at(-1)).toBe(
      "Conformance: 2 file(s) (gemini 2), 2 stream(s), 2 call(s) (0 repaired, 0 truncated, 0 invalid; 0 server call(s)): 1 match their expectation, 0 differ, 1 without expectation, 0 error(s).",
    );
  });
});

describe("toolwire conformance", () => {
  it("replays every file of testdata/ and finds every expectation holds", async () => {
    const { code, out } = await cli(["conformance"], join(TESTDATA, ".."));
    const lines = out.trimEnd().split("\n");
    const summary = lines.at(-1) as string;
    expect(summary).toMatch(/^Conformance: \d+ file\(s\) \(anthropic \d+, bedrock \d+, gemini \d+, ollama \d+/);
    expect(summary).toMatch(/ 0 differ, /);
    expect(summary).toMatch(/ 0 error\(s\)\.$/);
    expect(code).toBe(0);
    // Every gemini, bedrock and ollama file has a reviewed expectation.
    for (const provider of ["gemini", "bedrock", "ollama"]) {
      const rows = lines.filter((line) => line.startsWith(`${provider} `));
      expect(rows.length).toBeGreaterThan(0);
      for (const row of rows) expect(row).toMatch(/ equal$/);
    }
  });

  it("--json gives the rows, the totals and the summary line", async () => {
    const { code, out } = await cli(["conformance", "testdata/gemini", "--json"], join(TESTDATA, ".."));
    expect(code).toBe(0);
    const report = JSON.parse(out) as { files: Array<{ file: string; verdict: string; sources: Record<string, number> }>; summary: { files: number; match: number }; line: string };
    expect(report.summary.files).toBe(report.files.length);
    expect(report.summary.match).toBe(report.files.length);
    expect(report.files.find((row) => row.file.includes("nested"))).toMatchObject({ verdict: "match", sources: { delta: 1 } });
    expect(report.line).toMatch(/^Conformance: /);
  });

  it("exits 1 and prints the differences when a file differs; a file without expectation is not a failure", async () => {
    const dir = mkdtempSync(join(tmpdir(), "toolwire-conformance-"));
    mkdirSync(join(dir, "gemini"));
    const name = "handwritten__parallel-calls-without-ids";
    copyFileSync(join(TESTDATA, "gemini", `${name}.ndjson`), join(dir, "gemini", `${name}.ndjson`));
    copyFileSync(join(TESTDATA, "ollama", "handwritten__streamed_parallel_calls.ndjson"), join(dir, "gemini", "no-expectation.ndjson"));

    let result = await cli(["conformance", dir], dir);
    expect(result.code).toBe(0);
    expect(result.out).toMatch(/no expectation/);

    const expected = JSON.parse(readFileSync(join(TESTDATA, "gemini", `${name}.expected.json`), "utf8")) as Expectation;
    expected.streams[0]!.toolCalls[0]!.arguments = { amount: 120, from: "EUR", to: "DKK" };
    writeFileSync(join(dir, "gemini", `${name}.expected.json`), JSON.stringify(expected));
    result = await cli(["conformance", dir], dir);
    expect(result.code).toBe(1);
    expect(result.out).toContain(`gemini/${name}.ndjson differs from its expectation:`);
    expect(result.out).toContain('streams[0].toolCalls[0].arguments.to: expected "DKK", got "NOK"');

    writeFileSync(join(dir, "gemini", `${name}.expected.json`), "{not json");
    result = await cli(["conformance", dir, "--json"], dir);
    expect(result.code).toBe(1);
    expect((JSON.parse(result.out) as { files: Array<{ verdict: string }> }).files.map((row) => row.verdict).sort()).toEqual(["error", "no expectation"]);
  });

  it("exit 3 for a path that does not exist, 2 for an unknown flag", async () => {
    expect((await cli(["conformance", "no/such/dir"], TESTDATA)).code).toBe(3);
    expect((await cli(["conformance", "--bogus"], TESTDATA)).code).toBe(2);
  });
});

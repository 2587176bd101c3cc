import { readFile, stat } from "node:fs/promises";
import { relative, resolve } from "node:path";
import { parseArgs } from "node:util";
import { expectationPath, type Expectation } from "../../conformance/expectation.js";
import { conformanceRow, hasFindings, renderTable, summarize, summaryLine, type ConformanceInput } from "../../conformance/report.js";
import { replayEvents } from "../../replay.js";
import { isProviderName, type DecodedTurn } from "../../types.js";
import { CliError, EXIT, type CliContext } from "../context.js";
import { collectFiles, loadRecordedFile } from "./replay.js";
import { ToolwireError } from "../../errors.js";

export const summary = "replay every recorded stream and compare each file with the expectation stored beside it";

export const usage = `Usage: toolwire conformance [dir|file]... [--json]

Replays every *.ndjson under the given directories (default: testdata) through the decoders and
compares each file with <name>.expected.json beside it. Prints a table: provider, file, calls,
argument sources, repairs, stream status, and whether the result equals the expectation; then the
differences of every file that differs, and a summary line.

  --json   one JSON document: {"files": [rows], "summary": {...}, "line": "..."}

Files without an expectation are listed as "no expectation"; they are not failures. Fuzz
regression files (testdata/regressions/) are skipped unless named: they record invariant
violations, not expected turns, and the test suite replays them.

Exit codes: 0 every expectation holds; 1 a file differs from its expectation or could not be
decoded or checked; 2 usage error; 3 a path cannot be read.`;

export async function run(args: string[], ctx: CliContext): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({ args, allowPositionals: true, options: { json: { type: "boolean", default: false } } });
  } catch (error) {
    throw new CliError(`${(error as Error).message}\n\n${usage}`, EXIT.usage);
  }
  const roots = parsed.positionals.length > 0 ? parsed.positionals : ["testdata"];
  // Fuzz regressions hold invariant counterexamples, not expected turns: test/fuzz replays them.
  const files = (await collectFiles(roots, ctx.cwd)).filter((path) => !/[\\/]regressions[\\/]/.test(relative(ctx.cwd, path)) || roots.some((root) => /regressions/.test(root)));
  if (files.length === 0) throw new CliError(`no .ndjson files under ${roots.join(", ")}`, EXIT.input);
  const base = await displayBase(roots, ctx.cwd);

  const rows = [];
  for (const path of files) rows.push(conformanceRow(await check(path, relative(base, path) || path)));
  const totals = summarize(rows);
  if (parsed.values.json) {
    ctx.out(JSON.stringify({ files: rows, summary: totals, line: summaryLine(totals) }, null, 2) + "\n");
  } else {
    ctx.out(renderTable(rows));
  }
  return hasFindings(totals) ? EXIT.findings : EXIT.ok;
}

/** File names are shown relative to the single directory given, else to the working directory. */
async function displayBase(roots: string[], cwd: string): Promise<string> {
  if (roots.length === 1) {
    const root = resolve(cwd, roots[0] as string);
    if ((await stat(root)).isDirectory()) return root;
  }
  return cwd;
}

async function check(path: string, file: string): Promise<ConformanceInput> {
  let expectation: Expectation | null;
  try {
    expectation = await readExpectation(expectationPath(path));
  } catch (error) {
    return { file, provider: null, turns: [], expectation: null, error: `the expectation ${relativeName(expectationPath(path))} cannot be used: ${(error as Error).message}` };
  }
  const turns: DecodedTurn[] = [];
  try {
    const loaded = await loadRecordedFile(path, undefined);
    for (const stream of loaded.streams) turns.push(replayEvents(stream));
  } catch (error) {
    return { file, provider: expectation?.provider ?? null, turns: [], expectation, error: `cannot decode: ${(error as Error).message}` };
  }
  return { file, provider: turns[0]?.provider ?? expectation?.provider ?? null, turns, expectation };
}

function relativeName(path: string): string {
  return path.split("/").pop() ?? path;
}

/** The expectation beside a file, null when there is none; throws when it exists but is malformed. */
async function readExpectation(path: string): Promise<Expectation | null> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    if ((error as { code?: string }).code === "ENOENT") return null;
    throw error;
  }
  const value = JSON.parse(text) as unknown;
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw new ToolwireError("invalid_expectation", "not a JSON object");
  const { provider, streams } = value as { provider?: unknown; streams?: unknown };
  if (!isProviderName(provider)) throw new ToolwireError("invalid_expectation", `"provider" must be a provider name, got ${JSON.stringify(provider)}`);
  if (!Array.isArray(streams)) throw new ToolwireError("invalid_expectation", `"streams" must be an array`);
  return value as Expectation;
}

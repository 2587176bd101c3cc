import { readFile, stat } from "node:fs/promises";
import { relative, resolve } from "node:path";
import { expectationPath, type Expectation } from "../../conformance/expectation.js";
import { conformanceRow, hasFindings, renderTable, summarize, summaryLine, type ConformanceInput } from "../../conformance/report.js";
import { replayEvents } from "../../replay.js";
import { isProviderName, type DecodedTurn } from "../../types.js";
import { parseCommandArgs } from "../args.js";
import { EXIT, type CliContext } from "../context.js";
import { collectInputFiles, inputError, loadRecording, type InputFile } from "../input.js";
import { ToolwireError } from "../../errors.js";

export const summary = "replay every recorded stream and compare each file with the expectation stored beside it";

export const usage = `Usage: toolwire conformance [dir|file]... [--json]

Replays every *.ndjson under the given directories (default: testdata), and every recording file
named (any format 'toolwire import' reads), through the decoders and compares each file with the
expectation beside it: <name>.expected.json for <name>.ndjson, <file>.expected.json otherwise
('toolwire expect' writes them). Prints a table: provider, file, calls,
argument sources, repairs, stream status, and whether the result equals the expectation; then the
differences of every file that differs, and a summary line.

  --json   one JSON document: {"files": [rows], "summary": {...}, "line": "..."}

A file whose expectation is still the draft 'toolwire expect' wrote (verifiedBy starts with
DRAFT) is marked "(DRAFT: unverified)": agreeing with it only says the decoder has not changed.
Files whose header names a text-call setting ('# textCalls: "auto"') are decoded with it. On a
terminal the table fits its width (long file names are shortened from the left); piped, lines
are whole.

Files without an expectation are listed as "no expectation"; they are not failures. Fuzz
regression files (regressions/ folders) are skipped unless named: they record invariant
violations, not expected turns, and the test suite replays them. So is an upstream/ folder (raw
corpus files, replayed through their imported copies).

Exit codes: 0 every expectation holds; 1 a file differs from its expectation or could not be
decoded or checked; 2 usage error; 3 input error: a path that is missing, unreadable or empty.`;

export async function run(args: string[], ctx: CliContext): Promise<number> {
  const parsed = parseCommandArgs("conformance", args, { json: { type: "boolean", default: false } });
  const roots = parsed.positionals.length > 0 ? parsed.positionals : ["testdata"];
  const files = (await collectInputFiles(roots, ctx.cwd)).filter((file) => !file.path.endsWith(".expected.json"));
  if (files.length === 0) throw inputError(roots.join("', '"), "no .ndjson files in it");
  const base = await displayBase(roots, ctx.cwd);

  const rows = [];
  for (const file of files) rows.push(conformanceRow(await check(file, relative(base, file.path) || file.path)));
  const totals = summarize(rows);
  if (parsed.values.json) {
    ctx.out(JSON.stringify({ files: rows, summary: totals, line: summaryLine(totals) }, null, 2) + "\n");
  } else {
    ctx.out(renderTable(rows, ctx.columns === undefined ? {} : { width: ctx.columns }));
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

async function check(input: InputFile, file: string): Promise<ConformanceInput> {
  const path = input.path;
  let expectation: Expectation | null;
  try {
    expectation = await readExpectation(expectationPath(path));
  } catch (error) {
    return { file, provider: null, turns: [], expectation: null, error: `the expectation ${relativeName(expectationPath(path))} cannot be used: ${(error as Error).message}` };
  }
  // Missing, unreadable or empty recordings are input errors (exit 3), as in every command.
  const loaded = await loadRecording(input);
  const turns: DecodedTurn[] = [];
  try {
    for (const stream of loaded.streams) turns.push(replayEvents(stream, loaded.textCalls ? { textCalls: loaded.textCalls } : {}));
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

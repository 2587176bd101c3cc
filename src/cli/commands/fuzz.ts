import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { basename, dirname, join, relative, resolve } from "node:path";
import { parseArgs } from "node:util";
import { describeParseError, usageError as commandUsageError } from "../args.js";
import type * as FuzzModule from "../../testing/fuzz.js";
import type { Finding, FuzzSource } from "../../testing/fuzz.js";
import type * as RegressionsModule from "../../testing/regressions.js";
import { detectProvider } from "../../providers/detect.js";
import { isProviderName, PROVIDERS, type ProviderName } from "../../types.js";
import { CliError, EXIT, type CliContext } from "../context.js";
import { collectInputFiles, loadRecording } from "../input.js";

export const summary = "fuzz the decoders over recorded and generated streams; findings become regression files";

export const usage = `Usage: toolwire fuzz [file|dir]... [--runs N] [--seed S] [--minutes M] [--provider P]...
                     [--out DIR] [--no-write] [--runs-per-round N]

Runs fast-check over every recorded stream in the given files and directories (default:
./testdata when it exists) and over generated streams for every provider: byte splits,
re-cut, duplicated, dropped and reordered events, corruption, truncation, hostile arguments.
It checks the invariants of toolwire/testing. Each finding is shrunk and written to
DIR/<provider>-<hash>.ndjson, which the test suite replays from then on. 'npm run fuzz' runs
this command. On a terminal, progress is shown at least every 5 seconds.

  --runs N            runs per provider (default 1000; without a limit when --minutes is given)
  --seed S            seed (default: from the clock; printed, so a run can be repeated)
  --minutes M         time budget
  --provider P        only provider P (repeatable): ${PROVIDERS.join(", ")}
  --out DIR           where regression files go (default: testdata/regressions)
  --no-write          report findings without writing files
  --runs-per-round N  runs per provider before moving to the next (default 100)

Needs fast-check (a peer dependency of toolwire/testing): npm install --save-dev fast-check.

Exit codes: 0 nothing new found; 1 new findings; 2 usage error; 3 input error (a path that is
missing, unreadable or empty).`;

/** How often a terminal sees a progress line. */
export const PROGRESS_INTERVAL_MS = 2_000;

function usageError(message: string): CliError {
  return commandUsageError("fuzz", message);
}

function positiveNumber(name: string, text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const value = Number(text);
  if (!Number.isFinite(value) || value <= 0) throw usageError(`--${name} must be a positive number, got ${JSON.stringify(text)}`);
  return value;
}

/**
 * A progress line at most every `intervalMs` (the first one at the first case), rewritten in place
 * on a terminal: elapsed time, runs per provider, findings so far.
 */
export function progressReporter(write: (text: string) => void, now: () => number, intervalMs = PROGRESS_INTERVAL_MS): {
  onCase(provider: ProviderName): void;
  finding(): void;
  done(): void;
} {
  const started = now();
  const runs = new Map<ProviderName, number>();
  let findings = 0;
  let last = Number.NEGATIVE_INFINITY;
  let shown = false;
  return {
    onCase(provider) {
      runs.set(provider, (runs.get(provider) ?? 0) + 1);
      const at = now();
      if (at - last < intervalMs) return;
      last = at;
      shown = true;
      const seconds = ((at - started) / 1000).toFixed(0);
      write(`\r\x1b[Kfuzz: ${seconds}s, ${[...runs].map(([name, n]) => `${name} ${n}`).join(", ")} cases checked, ${findings} finding(s)`);
    },
    finding() {
      findings++;
      if (shown) write("\r\x1b[K");
    },
    done() {
      if (shown) write("\r\x1b[K");
    },
  };
}

export async function run(args: string[], ctx: CliContext): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args,
      allowPositionals: true,
      options: {
        runs: { type: "string" },
        seed: { type: "string" },
        minutes: { type: "string" },
        provider: { type: "string", multiple: true },
        out: { type: "string" },
        "no-write": { type: "boolean", default: false },
        "runs-per-round": { type: "string" },
      },
    });
  } catch (error) {
    throw usageError(describeParseError(error));
  }
  const { values, positionals } = parsed;
  const runs = positiveNumber("runs", values.runs);
  const minutes = positiveNumber("minutes", values.minutes);
  const runsPerRound = positiveNumber("runs-per-round", values["runs-per-round"]);
  if (values.seed !== undefined && !/^\d+$/.test(values.seed)) throw usageError(`--seed must be a non-negative integer, got ${JSON.stringify(values.seed)}`);
  const seed = values.seed !== undefined ? Number(values.seed) % 0x80000000 : Date.now() % 0x80000000;
  const providers: ProviderName[] = [];
  for (const name of values.provider ?? []) {
    if (!isProviderName(name)) throw new CliError(`unknown provider '${name}'. Expected one of: ${PROVIDERS.join(", ")}.`, EXIT.usage);
    providers.push(name);
  }
  const selected = providers.length > 0 ? providers : [...PROVIDERS];
  const outDir = resolve(ctx.cwd, values.out ?? join("testdata", "regressions"));
  const write = !values["no-write"];

  // fast-check is an optional peer: load the fuzzer only now, and say what is missing if it is.
  let fuzz: typeof FuzzModule;
  let regressions: typeof RegressionsModule;
  try {
    fuzz = await import("../../testing/fuzz.js");
    regressions = await import("../../testing/regressions.js");
  } catch (error) {
    if ((error as { code?: string }).code === "ERR_MODULE_NOT_FOUND" && /fast-check/.test((error as Error).message)) {
      throw new CliError("needs fast-check, which is not installed: npm install --save-dev fast-check", EXIT.usage);
    }
    throw error;
  }

  const roots = positionals.length > 0 ? positionals : existsSync(join(ctx.cwd, "testdata")) ? ["testdata"] : [];
  const corpus: Partial<Record<ProviderName, FuzzSource[]>> = {};
  const unknown: string[] = [];
  for (const file of await collectInputFiles(roots, ctx.cwd)) {
    const loaded = await loadRecording(file);
    const folder = basename(dirname(file.path));
    for (const stream of loaded.streams) {
      let provider: ProviderName | null = isProviderName(folder) ? folder : stream.provider;
      if (provider === null) {
        try {
          provider = detectProvider(stream.events);
        } catch {
          unknown.push(`${file.shown}${stream.sequence !== null ? `#${stream.sequence}` : ""}`);
          continue;
        }
      }
      if (!selected.includes(provider)) continue;
      (corpus[provider] ??= []).push({ origin: `${file.shown}${stream.sequence !== null ? `#${stream.sequence}` : ""}`, events: stream.events });
    }
  }

  // Bugs already written down and still failing: the fuzzer looks past them.
  const signatures: string[] = [];
  const open: string[] = [];
  if (existsSync(outDir)) {
    for (const name of readdirSync(outDir).filter((n) => n.endsWith(".ndjson")).sort()) {
      try {
        const violations = regressions.replayRegression(regressions.parseRegression(readFileSync(join(outDir, name), "utf8")));
        if (violations.length > 0) {
          open.push(name);
          signatures.push(...violations.map((v) => v.signature));
        }
      } catch (error) {
        ctx.err(`toolwire fuzz: cannot replay ${name}: ${(error as Error).message}\n`);
      }
    }
  }

  const started = Date.now();
  ctx.out(
    `toolwire fuzz: seed ${seed}, ${minutes !== undefined ? `${minutes} minute(s)` : `${runs ?? 1000} runs per provider`}, ` +
      `corpus ${selected.map((p) => `${p}=${corpus[p]?.length ?? 0}`).join(" ")}\n`,
  );
  if (unknown.length > 0) ctx.out(`not fuzzed (provider not recognizable): ${unknown.join(", ")}\n`);
  if (open.length > 0) ctx.out(`known open findings (still failing, looked past): ${open.join(", ")}\n`);

  const progress = ctx.isTTY ? progressReporter(ctx.err, () => Date.now()) : null;
  const written: string[] = [];
  const report = (finding: Finding): void => {
    progress?.finding();
    const regression = regressions.regressionFromFinding(finding);
    const path = join(outDir, regressions.regressionFileName(regression));
    const shown = relative(ctx.cwd, path) || path;
    let where = "";
    if (write) {
      mkdirSync(outDir, { recursive: true });
      if (existsSync(path)) {
        where = ` (already recorded: ${shown})`;
      } else {
        writeFileSync(path, regressions.formatRegression(regression));
        written.push(path);
        where = ` -> ${shown}`;
      }
    }
    ctx.out(`\nFINDING ${finding.provider} ${finding.property}${where}\n  seed ${finding.seed} path ${finding.path}\n`);
    for (const v of finding.violations.slice(0, 5)) ctx.out(`  - [${v.property}] ${v.message.slice(0, 300)}\n`);
  };

  const result = fuzz.runFuzz({
    corpus,
    providers: selected,
    seed,
    ...(runs !== undefined ? { runs } : {}),
    ...(runsPerRound !== undefined ? { runsPerRound } : {}),
    ...(minutes !== undefined ? { deadline: started + minutes * 60_000 } : {}),
    ignore: signatures,
    onFinding: report,
    onNote: (note) => ctx.out(`note: ${note}\n`),
    ...(progress ? { onCase: progress.onCase } : {}),
  });
  progress?.done();

  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  ctx.out(
    `\n${Object.entries(result.runs)
      .map(([provider, n]) => `${provider}: ${n} runs`)
      .join(", ")}; ${result.findings.length} new finding(s) in ${seconds}s (seed ${seed})\n`,
  );
  if (result.skipped.length > 0) ctx.out(`skipped (no decoder registered): ${result.skipped.join(", ")}\n`);
  if (written.length > 0) ctx.out(`wrote ${written.length} regression file(s); the test suite replays them\n`);
  return result.findings.length > 0 ? EXIT.findings : EXIT.ok;
}

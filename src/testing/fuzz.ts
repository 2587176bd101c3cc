import fc from "fast-check";
import { supportedProviders } from "../providers/registry.js";
import { PROVIDERS, type ProviderName } from "../types.js";
import { checkCase, materialize, minimizeCase, type CheckCounts, type Finding, type FuzzCase, type FuzzSource } from "./cases.js";
import { generatedStream, mutationPlan } from "./generators.js";

/**
 * The fuzz loop: for each provider with a registered decoder, fast-check draws a source stream
 * (a recorded one or a generated one) and a mutation plan, decodes the result through the event
 * path and the byte path, and checks every invariant. Web-standard: files are the caller's job.
 * fast-check is loaded here; the cases and their checks (cases.ts) load without it.
 */
export { checkCase, materialize, minimizeCase, type CheckCounts, type Finding, type FuzzCase, type FuzzSource, type MaterializedCase } from "./cases.js";

// ---------------------------------------------------------------------------------------------
// The loop.

/**
 * Options of `runFuzz`: the corpus, providers, seed, run counts or deadline, known signatures and
 * callbacks.
 */
export interface FuzzOptions {
  /** Recorded streams per provider. */
  corpus?: Partial<Record<ProviderName, FuzzSource[]>>;
  /** Providers to fuzz (default: all); those without a registered decoder are skipped. */
  providers?: readonly ProviderName[];
  seed?: number;
  /** Runs per provider per round (default 100). */
  runsPerRound?: number;
  /** Stop after this many runs per provider (default 1000 when no time budget is given). */
  runs?: number;
  /** Stop at this time (ms since the epoch), checked between runs. */
  deadline?: number;
  /** Signatures already known (their violations are not reported again). */
  ignore?: Iterable<string>;
  /** Cap on checks spent minimizing one counterexample. */
  minimizeBudget?: number;
  onFinding?: (finding: Finding) => void;
  onNote?: (note: string) => void;
  /** Called after every checked case (shrinking included), for progress reports; keep it cheap. */
  onCase?: (provider: ProviderName) => void;
  now?: () => number;
}

/** What a fuzz pass did: runs and checks per provider, providers skipped, and its findings. */
export interface FuzzSummary {
  runs: Partial<Record<ProviderName, number>>;
  /** Per provider, how often each relational check ran. */
  checks: Partial<Record<ProviderName, CheckCounts>>;
  skipped: ProviderName[];
  findings: Finding[];
}

/** Derives one seed per provider and round so that each is reproducible on its own. */
export function roundSeed(seed: number, provider: ProviderName, round: number): number {
  let h = (seed ^ 0x9e3779b9) >>> 0;
  for (const ch of `${provider}#${round}`) h = Math.imul(h ^ ch.charCodeAt(0), 0x01000193) >>> 0;
  return h & 0x7fffffff;
}

/**
 * The fast-check arbitrary of fuzz cases for a provider: a recorded or generated stream with a
 * mutation plan.
 */
export function caseArbitrary(provider: ProviderName, corpus: readonly FuzzSource[]): fc.Arbitrary<FuzzCase> {
  const generated = generatedStream(provider).map((stream): FuzzSource => ({ origin: "generated", events: stream.events, spec: stream.spec }));
  const source = corpus.length > 0 ? fc.oneof(fc.constantFrom(...corpus), generated) : generated;
  return fc.record({ provider: fc.constant(provider), source, plan: mutationPlan() });
}


/**
 * Runs the fuzz loop: rounds of fast-check runs per provider until `runs` or `deadline`; each
 * finding is shrunk, minimized and reported through `onFinding`.
 */
export function runFuzz(options: FuzzOptions = {}): FuzzSummary {
  const now = options.now ?? (() => Date.now());
  const seed = options.seed ?? 1;
  const runsPerRound = options.runsPerRound ?? 100;
  const maxRuns = options.runs ?? (options.deadline === undefined ? 1000 : Number.POSITIVE_INFINITY);
  const ignore = new Set(options.ignore ?? []);
  const registered = new Set(supportedProviders());
  const wanted = options.providers ?? PROVIDERS;
  const providers = wanted.filter((p) => registered.has(p));
  const skipped = wanted.filter((p) => !registered.has(p));
  for (const provider of skipped) options.onNote?.(`skipping ${provider}: no decoder is registered for it yet`);
  const summary: FuzzSummary = { runs: {}, checks: {}, skipped, findings: [] };
  const timeLeft = (): number => (options.deadline === undefined ? Number.POSITIVE_INFINITY : options.deadline - now());

  for (let round = 0; providers.length > 0; round++) {
    let progressed = false;
    for (const provider of providers) {
      const done = summary.runs[provider] ?? 0;
      if (done >= maxRuns || timeLeft() <= 0) continue;
      const numRuns = Math.min(runsPerRound, maxRuns - done);
      const roundSeedValue = roundSeed(seed, provider, round);
      const corpus = options.corpus?.[provider] ?? [];
      const counts = (summary.checks[provider] ??= {});
      const property = fc.property(caseArbitrary(provider, corpus), (fuzzCase) => {
        const ok = checkCase(fuzzCase, ignore, counts).length === 0;
        options.onCase?.(provider);
        return ok;
      });
      const parameters: fc.Parameters<[FuzzCase]> = { seed: roundSeedValue, numRuns };
      const budget = timeLeft();
      if (Number.isFinite(budget)) parameters.interruptAfterTimeLimit = Math.max(1, budget);
      const details = fc.check(property, parameters);
      summary.runs[provider] = done + details.numRuns;
      progressed = true;
      if (!details.failed || !details.counterexample) continue;
      const shrunk = details.counterexample[0];
      const violations = checkCase(shrunk, ignore);
      const head = violations[0];
      if (!head) continue;
      const minimized = materialize(minimizeCase(shrunk, head.signature, ignore, options.minimizeBudget));
      const finalViolations = checkCase(minimized, ignore);
      const kept = finalViolations.some((v) => v.signature === head.signature) ? finalViolations : violations;
      const counterexample = finalViolations.some((v) => v.signature === head.signature) ? minimized : materialize(shrunk);
      const finding: Finding = { provider, property: head.property, violations: kept, counterexample, seed: roundSeedValue, path: details.counterexamplePath ?? "" };
      summary.findings.push(finding);
      // One report per bug: later runs look for something else.
      for (const v of kept) ignore.add(v.signature);
      options.onFinding?.(finding);
    }
    if (!progressed) break;
  }
  return summary;
}

import fc from "fast-check";
import { supportedProviders } from "../providers/registry.js";
import { PROVIDERS, type ProviderEvent, type ProviderName } from "../types.js";
import { generatedStream, type TurnSpec } from "./generators.js";
import {
  checkDeterministic,
  checkGenerated,
  checkPrefix,
  checkPreviews,
  checkRun,
  compareCalls,
  compareTurns,
  decodeBytesSafely,
  decodeEventsSafely,
  isCleanTurn,
  type DecodeRun,
  type PropertyName,
  type Violation,
} from "./invariants.js";
import { applyByteMutation, applyEventMutations, framingOf, isBenign, limitsFor, mutationPlan, type MutationPlan } from "./mutations.js";
import { keepAliveEvents } from "./shapes.js";
import { stringifyJson } from "./values.js";
import { encodeWire } from "./wire.js";

/**
 * The fuzz loop: for each provider with a registered decoder, fast-check draws a source stream
 * (a recorded one or a generated one) and a mutation plan, decodes the result through the event
 * path and the byte path, and checks every invariant. Web-standard: files are the caller's job.
 */

export interface FuzzSource {
  /** Where the stream came from: `testdata/<provider>/<file>#<sequence>` or `generated`. */
  origin: string;
  events: ProviderEvent[];
  /** Present for generated streams: what they must decode to. */
  spec?: TurnSpec;
}

export interface FuzzCase {
  provider: ProviderName;
  source: FuzzSource;
  plan: MutationPlan;
}

/** A case with its mutated events written out, as a regression file stores it. */
export interface MaterializedCase extends FuzzCase {
  mutated: ProviderEvent[];
}

export function materialize(fuzzCase: FuzzCase): MaterializedCase {
  return { ...fuzzCase, mutated: applyEventMutations(fuzzCase.provider, fuzzCase.source.events, fuzzCase.plan.events) };
}

/** Keep-alives, line endings, comments or field order were used: the plain encoding must agree. */
function usesFreedoms(plan: MutationPlan): boolean {
  const b = plan.bytes;
  return b.lineEnding !== "lf" || b.keepAlives.length > 0 || b.dataFirst || b.multilineData === true;
}

/** Whether an id appears on the wire (else it was minted, and may depend on fragment boundaries). */
function wireIdsOf(events: readonly ProviderEvent[]): (id: string) => boolean {
  let text: string | null = null;
  return (id) => {
    text ??= stringifyJson(events.map((event) => event.data));
    return text.includes(JSON.stringify(id).slice(1, -1));
  };
}

/** How many times each relational check ran: a fuzz pass that never reaches one proves nothing about it. */
export type CheckCounts = Partial<Record<PropertyName | "cases", number>>;

/** Every invariant for one case; `ignore` holds signatures already reported. */
export function checkCase(fuzzCase: FuzzCase | MaterializedCase, ignore: ReadonlySet<string> = new Set(), counts?: CheckCounts): Violation[] {
  const { provider, source, plan } = fuzzCase;
  const mutated = "mutated" in fuzzCase ? fuzzCase.mutated : applyEventMutations(provider, source.events, plan.events);
  const limits = limitsFor(plan);
  const options = limits ? { limits } : {};
  const found: Violation[] = [];
  const add = (violations: Violation[]): void => {
    for (const v of violations) if (!ignore.has(v.signature)) found.push(v);
  };
  const ran = (check: PropertyName | "cases"): true => {
    if (counts) counts[check] = (counts[check] ?? 0) + 1;
    return true;
  };
  ran("cases");

  // The event path: twice without previews (determinism), once with.
  const first = decodeEventsSafely(provider, mutated, options);
  add(checkRun(first, options));
  const second = decodeEventsSafely(provider, mutated, options);
  add(checkDeterministic(first, second));
  const previewed = decodeEventsSafely(provider, mutated, { ...options, previews: true });
  add(checkRun(previewed, options));
  add(checkPreviews(previewed, first));

  // The byte path: the same bytes whole and in chunks.
  const framing = framingOf(provider, plan.bytes);
  const byteOptions = { ...options, framing, previews: plan.previews };
  const { bytes, chunks } = applyByteMutation(provider, mutated, plan.bytes);
  const whole = decodeBytesSafely(provider, [bytes], byteOptions);
  add(checkRun(whole, options));
  if (chunks.length > 1) {
    const split = decodeBytesSafely(provider, chunks, byteOptions);
    add(checkRun(split, options));
    ran("split_invariant");
    add(compareTurns("split_invariant", whole, split, `splitting the bytes into ${chunks.length} chunks`));
  }
  // Multi-line data changes line and event lengths, which tight limits measure.
  if (isBenign(plan.bytes) && usesFreedoms(plan) && !(limits && plan.bytes.multilineData) && ran("framing_invariant")) {
    const plain = decodeBytesSafely(provider, [encodeWire(provider, mutated, { framing })], byteOptions);
    add(compareTurns("framing_invariant", plain, whole, "line endings, keep-alive comments or field order"));
  }

  // Relations to the unmutated stream, for plans made of one invariance-preserving change.
  // A relational check on a mutation that changed nothing would count without testing anything.
  const changed = mutated.length !== source.events.length || mutated.some((event, i) => event !== source.events[i]);
  const only = plan.events.length === 1 && changed ? plan.events[0] : undefined;
  if (only && !limits) {
    let reference: DecodeRun | null = null;
    const ref = (): DecodeRun => (reference ??= decodeEventsSafely(provider, source.events));
    if (only.op === "refragment" && isCleanTurn(ref().turn) && ran("refragment_invariant")) add(compareCalls("refragment_invariant", ref(), first, "re-cutting the argument fragments", wireIdsOf(source.events)));
    if (only.op === "interleave" && isCleanTurn(ref().turn) && ran("interleave_invariant")) add(compareCalls("interleave_invariant", ref(), first, "interleaving two calls' fragments", wireIdsOf(source.events)));
    if (only.op === "inject" && only.kind === "keepalive" && keepAliveEvents(provider).length > 0 && ran("keepalive_invariant")) add(compareTurns("keepalive_invariant", ref(), first, "inserting a keep-alive event"));
    if (only.op === "truncate" && isCleanTurn(ref().turn) && ran("prefix_consistent")) add(checkPrefix(first, ref()));
  }

  // Generated streams know their answer.
  if (source.spec && plan.events.length === 0 && !limits && ran("generated_roundtrip")) {
    add(checkGenerated(provider, first, source.spec, "event path"));
    if (isBenign(plan.bytes)) add(checkGenerated(provider, whole, source.spec, `byte path (${framing})`));
  }
  return found;
}

// ---------------------------------------------------------------------------------------------
// The loop.

export interface Finding {
  provider: ProviderName;
  property: PropertyName;
  violations: Violation[];
  /** The shrunk, then minimized, counterexample. */
  counterexample: MaterializedCase;
  seed: number;
  path: string;
}

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

export function caseArbitrary(provider: ProviderName, corpus: readonly FuzzSource[]): fc.Arbitrary<FuzzCase> {
  const generated = generatedStream(provider).map((stream): FuzzSource => ({ origin: "generated", events: stream.events, spec: stream.spec }));
  const source = corpus.length > 0 ? fc.oneof(fc.constantFrom(...corpus), generated) : generated;
  return fc.record({ provider: fc.constant(provider), source, plan: mutationPlan() });
}

/**
 * Removes source events while the same violation persists, so that a regression file holds the
 * few events that matter rather than a whole recorded stream.
 */
export function minimizeCase(fuzzCase: FuzzCase, signature: string, ignore: ReadonlySet<string>, budget = 400): FuzzCase {
  // A generated stream's spec describes every event: removing one would change the expectation.
  if (fuzzCase.source.spec && signature.startsWith("generated_roundtrip")) return fuzzCase;
  let best = fuzzCase;
  let checks = 0;
  const fails = (candidate: FuzzCase): boolean => {
    checks++;
    return checkCase(candidate, ignore).some((v) => v.signature === signature);
  };
  let chunk = Math.max(1, Math.floor(best.source.events.length / 2));
  while (chunk >= 1 && checks < budget) {
    let removed = false;
    for (let start = 0; start < best.source.events.length && checks < budget; ) {
      const events = [...best.source.events.slice(0, start), ...best.source.events.slice(start + chunk)];
      const { spec: _spec, ...rest } = best.source;
      const candidate: FuzzCase = { ...best, source: { ...rest, events } };
      if (events.length < best.source.events.length && fails(candidate)) {
        best = candidate;
        removed = true;
      } else {
        start += chunk;
      }
    }
    if (!removed) chunk = Math.floor(chunk / 2);
  }
  return best;
}

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

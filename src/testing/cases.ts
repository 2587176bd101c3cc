import type { ProviderEvent, ProviderName } from "../types.js";
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
  checkReencodeRoundtrip,
  checkTextCalls,
  checkEventJson,
  isCleanTurn,
  type DecodeRun,
  type PropertyName,
  type Violation,
} from "./invariants.js";
import { applyByteMutation, applyEventMutations, framingOf, isBenign, limitsFor, type MutationPlan } from "./mutations.js";
import { keepAliveEvents } from "./shapes.js";
import { defaultFraming } from "../framing/framer.js";
import { REENCODED_PROVIDERS } from "../reencode/index.js";
import type { TurnSpec } from "./spec.js";
import { stringifyJson } from "./values.js";
import { encodeWire } from "./wire.js";

/**
 * One fuzz case (a source stream, a mutation plan) and every invariant checked on it, through the
 * event path and the byte path. Plain functions: no fast-check, so regression files replay and
 * users' own cases are checked without it (the loop that draws cases is fuzz.ts).
 */

/** The stream a fuzz case starts from, before any mutation: its events, where they came from, and (when generated) what it must decode to. */
export interface FuzzSource {
  /** Where the stream came from: `testdata/<provider>/<file>#<sequence>` or `generated`. */
  origin: string;
  events: ProviderEvent[];
  /** Present for generated streams: what they must decode to. */
  spec?: TurnSpec;
}

/** One fuzz case: a provider, a source stream and a mutation plan. */
export interface FuzzCase {
  provider: ProviderName;
  source: FuzzSource;
  plan: MutationPlan;
}

/** A case with its mutated events written out, as a regression file stores it. */
export interface MaterializedCase extends FuzzCase {
  mutated: ProviderEvent[];
}

/** The case with its mutated events written out (as a regression file stores them). */
export function materialize(fuzzCase: FuzzCase): MaterializedCase {
  return { ...fuzzCase, mutated: applyEventMutations(fuzzCase.provider, fuzzCase.source.events, fuzzCase.plan.events) };
}

/**
 * Bytes that may be cut short or hold invalid UTF-8 (which both sides read as U+FFFD) but nothing
 * corrupt: a re-encoder forwards what it cannot read as it came, so a damaged frame or line is the
 * client's to reject.
 */
function intactBytes(bytes: MutationPlan["bytes"]): boolean {
  return bytes.corrupt.length === 0;
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

const textDecoder = new TextDecoder();

/** How many times each relational check ran: a fuzz pass that never reaches one proves nothing about it. */
export type CheckCounts = Partial<Record<PropertyName | "cases", number>>;

/** Every invariant for one case; `ignore` holds signatures already reported. */
export function checkCase(fuzzCase: FuzzCase | MaterializedCase, ignore: ReadonlySet<string> = new Set(), counts?: CheckCounts): Violation[] {
  const { provider, source, plan } = fuzzCase;
  const mutated = "mutated" in fuzzCase ? fuzzCase.mutated : applyEventMutations(provider, source.events, plan.events);
  const limits = limitsFor(plan);
  const options = { ...(limits ? { limits } : {}), ...(plan.textCalls ? { textCalls: "auto" as const } : {}) };
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
  // What the repairing fetch and the proxy send on decodes to the same runnable calls, well-formed.
  // Text calls stay text on the wire; limits cut differently on a re-encoded stream.
  const reencodedFraming = framing === defaultFraming(provider) || (provider === "anthropic" && framing === "aws-eventstream");
  if (REENCODED_PROVIDERS.includes(provider) && reencodedFraming && intactBytes(plan.bytes) && !limits && !plan.textCalls && ran("reencode_roundtrip")) {
    add(checkReencodeRoundtrip(provider, chunks.length > 1 ? chunks : [bytes], whole, { framing }));
  }
  if (framing === "sse" && ran("event_json_exact")) add(checkEventJson(textDecoder.decode(bytes)));
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
    const ref = (): DecodeRun => (reference ??= decodeEventsSafely(provider, source.events, options));
    if (only.op === "refragment" && isCleanTurn(ref().turn) && ran("refragment_invariant")) add(compareCalls("refragment_invariant", ref(), first, "re-cutting the argument fragments", wireIdsOf(source.events)));
    if (only.op === "interleave" && isCleanTurn(ref().turn) && ran("interleave_invariant")) add(compareCalls("interleave_invariant", ref(), first, "interleaving two calls' fragments", wireIdsOf(source.events)));
    if (only.op === "inject" && only.kind === "keepalive" && keepAliveEvents(provider).length > 0 && ran("keepalive_invariant")) add(compareTurns("keepalive_invariant", ref(), first, "inserting a keep-alive event"));
    if (only.op === "truncate" && isCleanTurn(ref().turn) && ran("prefix_consistent")) add(checkPrefix(first, ref()));
  }

  // Text calls: the incremental extractor inside the decoder reads what whole-text extraction reads.
  if (plan.textCalls && !limits && ran("text_calls_invariant")) {
    const { textCalls: _on, ...without } = options;
    add(checkTextCalls(decodeEventsSafely(provider, mutated, without), first));
  }

  // Generated streams know their answer (their text may hold text calls: only without the option).
  if (source.spec && plan.events.length === 0 && !limits && !plan.textCalls && ran("generated_roundtrip")) {
    add(checkGenerated(provider, first, source.spec, "event path"));
    if (isBenign(plan.bytes)) add(checkGenerated(provider, whole, source.spec, `byte path (${framing})`));
  }
  return found;
}

/**
 * A property the fuzzer found violated: the shrunk and minimized counterexample, with the seed and
 * path that reproduce it.
 */
export interface Finding {
  provider: ProviderName;
  property: PropertyName;
  violations: Violation[];
  /** The shrunk, then minimized, counterexample. */
  counterexample: MaterializedCase;
  seed: number;
  path: string;
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
import { ToolwireError } from "../errors.js";

import { parseRecords } from "../framing/records.js";
import { isProviderName, type ProviderEvent, type ProviderName } from "../types.js";
import { hashId } from "../util/hash.js";
import { checkCase, type Finding, type MaterializedCase } from "./cases.js";
import type { TurnSpec } from "./spec.js";
import type { PropertyName, Violation } from "./invariants.js";
import { describePlan, type MutationPlan } from "./mutations.js";
import { stringifyJson } from "./values.js";

/**
 * Regression files: a shrunk counterexample in the recorded stream format (docs/design.md), so that
 * `toolwire replay` reads it like any other recording. The `# key: value` header names what the
 * fuzzer knew; the records hold two sequences, `source` (the stream before the event mutations)
 * and `mutated` (after them). Byte mutations are applied again on replay from the plan.
 *
 * The file name is `<provider>-<hash>.ndjson`, the hash taken over the property, the plan and the
 * records (not the seed): the same counterexample found twice is one file.
 */

/**
 * One regression file read back (`parseRegression`) or about to be written (`formatRegression`):
 * the case (provider, source stream, mutation plan, mutated events), the property it violated,
 * the seed and path that found it, and whether the bug is fixed.
 */
export interface Regression extends MaterializedCase {
  /** The invariant the case violated. */
  property: PropertyName;
  /** The violation message when the file was written. */
  violation: string;
  /** The fast-check seed that found the case, or null. */
  seed: number | null;
  /** The fast-check path that reproduces the shrunk case with `seed`, or null. */
  path: string | null;
  /** `open` marks a known bug not fixed yet: the replay expects it to still fail. */
  status: "fixed" | "open";
  note?: string;
}

const MAGIC = "toolwire fuzz regression";

function record(sequence: string, provider: ProviderName, event: ProviderEvent): string {
  const out: Record<string, unknown> = { sequence, provider };
  if (event.event !== undefined) out.event = event.event;
  out.data = event.data === undefined ? null : event.data;
  return stringifyJson(out);
}

function body(regression: Pick<Regression, "provider" | "source" | "mutated">): string {
  const lines: string[] = [];
  for (const event of regression.source.events) lines.push(record("source", regression.provider, event));
  for (const event of regression.mutated) lines.push(record("mutated", regression.provider, event));
  return lines.join("\n") + "\n";
}

function identity(regression: Pick<Regression, "provider" | "property" | "plan" | "source" | "mutated">): string {
  return hashId(`${regression.property}\n${stringifyJson(regression.plan)}\n${stringifyJson(regression.source.spec ?? null)}\n${body(regression)}`);
}

/** The file name of a regression: provider and a hash of what reproduces it. */
export function regressionFileName(regression: Pick<Regression, "provider" | "property" | "plan" | "source" | "mutated">): string {
  return `${regression.provider}-${identity(regression)}.ndjson`;
}

function oneLine(text: string): string {
  return text.replace(/[\r\n]+/g, " ");
}

/**
 * A regression as file text: a `#` header (provider, property, violation, seed, plan, status) and
 * the mutated events as NDJSON records.
 */
export function formatRegression(regression: Regression): string {
  const header = [
    `# ${MAGIC}: found by \`npm run fuzz\`, replayed by test/fuzz/regressions.test.ts.`,
    `# provider: ${regression.provider}`,
    `# property: ${regression.property}`,
    `# violation: ${oneLine(regression.violation)}`,
    `# seed: ${regression.seed ?? "none"}`,
    `# path: ${regression.path ?? "none"}`,
    `# origin: ${oneLine(regression.source.origin)}`,
    `# mutation: ${oneLine(describePlan(regression.plan))}`,
    `# plan: ${stringifyJson(regression.plan)}`,
  ];
  if (regression.source.spec) header.push(`# spec: ${stringifyJson(regression.source.spec)}`);
  header.push(`# status: ${regression.status}`);
  if (regression.note) header.push(`# note: ${oneLine(regression.note)}`);
  return header.join("\n") + "\n" + body(regression);
}

/** A regression for a fuzz finding, `open` until the bug is fixed. */
export function regressionFromFinding(finding: Finding, status: Regression["status"] = "open"): Regression {
  const head = finding.violations.find((v) => v.property === finding.property) ?? finding.violations[0];
  return {
    ...finding.counterexample,
    property: finding.property,
    violation: head?.message ?? "",
    seed: finding.seed,
    path: finding.path,
    status,
  };
}

/** A regression file whose header or records cannot be read (code `invalid_regression`). */
export class RegressionFormatError extends ToolwireError {
  constructor(message: string) {
    super("invalid_regression", message);
  }
}

/** Reads a regression file back; throws RegressionFormatError when its header or records are not readable. */
export function parseRegression(text: string): Regression {
  const header = new Map<string, string>();
  for (const line of text.split("\n")) {
    if (!line.startsWith("# ")) continue;
    // No regular expression: `.` stops at U+2028, which JSON text may hold unescaped.
    const colon = line.indexOf(": ");
    const key = colon > 2 ? line.slice(2, colon) : "";
    if (/^[a-z]+$/.test(key)) header.set(key, line.slice(colon + 2).replace(/\r$/, ""));
  }
  if (!text.startsWith(`# ${MAGIC}`)) throw new RegressionFormatError(`not a regression file (it must start with "# ${MAGIC}")`);
  const provider = header.get("provider");
  if (!isProviderName(provider)) throw new RegressionFormatError(`unknown provider ${JSON.stringify(provider)}`);
  const planText = header.get("plan");
  if (!planText) throw new RegressionFormatError("no '# plan:' line");
  const plan = JSON.parse(planText) as MutationPlan;
  const specText = header.get("spec");
  const spec = specText ? (JSON.parse(specText) as TurnSpec) : undefined;
  const streams = parseRecords(text);
  const source = streams.find((s) => s.sequence === "source")?.events ?? [];
  const mutated = streams.find((s) => s.sequence === "mutated")?.events ?? [];
  const seed = header.get("seed");
  const path = header.get("path");
  const note = header.get("note");
  return {
    provider,
    property: (header.get("property") ?? "no_throw") as PropertyName,
    violation: header.get("violation") ?? "",
    seed: seed && seed !== "none" ? Number(seed) : null,
    path: path && path !== "none" ? path : null,
    status: header.get("status") === "open" ? "open" : "fixed",
    plan,
    source: { origin: header.get("origin") ?? "unknown", events: source, ...(spec ? { spec } : {}) },
    mutated,
    ...(note ? { note } : {}),
  };
}

/** Every invariant on a regression's stored case (the property it was written for included). */
export function replayRegression(regression: Regression): Violation[] {
  return checkCase(regression);
}

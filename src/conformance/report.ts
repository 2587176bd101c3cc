import type { DecodedTurn, ProviderName } from "../types.js";
import { jsonEqual } from "../json/equal.js";
import { expectedStreamOf, type Expectation } from "./expectation.js";
import { isPlainObject } from "../json/shape.js";
import { wrapWords } from "../util/wrap.js";

/**
 * The conformance report: every recorded file decoded, set against the expectation stored beside
 * it. Pure (no I/O): the CLI reads the files and hands over the decoded turns.
 */

export type Verdict = "match" | "differs" | "no expectation" | "error";

export interface ConformanceInput {
  /** Display name of the recorded file (relative path). */
  file: string;
  provider: ProviderName | null;
  /** The file's streams, decoded, in file order. Empty when decoding failed (see `error`). */
  turns: DecodedTurn[];
  /** The expectation stored beside the file, or null when there is none. */
  expectation: Expectation | null;
  /** Why the file (or its expectation) could not be read or decoded. */
  error?: string;
}

/** What a conformance row and the summary both count. */
interface CallCounts {
  streams: number;
  calls: number;
  serverCalls: number;
  /** Calls whose arguments needed a named repair. */
  repaired: number;
  truncated: number;
  invalid: number;
}

const CALL_COUNTS = ["streams", "calls", "serverCalls", "repaired", "truncated", "invalid"] as const;

export interface ConformanceRow extends CallCounts {
  provider: string;
  file: string;
  /** How many calls took their arguments from each source (`null` for calls without arguments). */
  sources: Record<string, number>;
  repairs: Record<string, number>;
  /** How many streams ended with each status. */
  status: Record<string, number>;
  verdict: Verdict;
  /** The expectation is still the unreviewed draft `toolwire expect` wrote (its verifiedBy starts with DRAFT). */
  draft: boolean;
  /** What differs from the expectation (paths and values), or why the row is an error. */
  differences: string[];
}

export interface ConformanceSummary extends CallCounts {
  files: number;
  match: number;
  differs: number;
  noExpectation: number;
  errors: number;
  /** Expectations that are unreviewed drafts: agreeing with one says only that nothing changed. */
  drafts: number;
  providers: Record<string, number>;
}

const MAX_DIFFERENCES = 20;

function count(into: Record<string, number>, key: string): void {
  into[key] = (into[key] ?? 0) + 1;
}

function show(value: unknown): string {
  const text = value === undefined ? "(absent)" : JSON.stringify(value);
  return text.length > 120 ? `${text.slice(0, 119)}…` : text;
}

/** Paths where `actual` differs from `expected`, e.g. `streams[0].toolCalls[1].arguments.city: expected "Paris", got "Pari"`. */
export function jsonDifferences(expected: unknown, actual: unknown, path = "", out: string[] = []): string[] {
  if (out.length >= MAX_DIFFERENCES || jsonEqual(expected, actual)) return out;
  const bothArrays = Array.isArray(expected) && Array.isArray(actual);
  const bothObjects = isPlainObject(expected) && isPlainObject(actual);
  if (bothArrays) {
    const a = expected as unknown[];
    const b = actual as unknown[];
    if (a.length !== b.length) out.push(`${path || "(root)"}: expected ${a.length} item(s), got ${b.length}`);
    for (let i = 0; i < Math.min(a.length, b.length); i++) jsonDifferences(a[i], b[i], `${path}[${i}]`, out);
    return out;
  }
  if (bothObjects) {
    const a = expected as Record<string, unknown>;
    const b = actual as Record<string, unknown>;
    for (const key of new Set([...Object.keys(a), ...Object.keys(b)])) {
      jsonDifferences(a[key], b[key], path ? `${path}.${key}` : key, out);
    }
    return out;
  }
  out.push(`${path || "(root)"}: expected ${show(expected)}, got ${show(actual)}`);
  return out;
}

/** Compares decoded turns with an expectation; returns the differences (empty when they agree). */
export function compareWithExpectation(turns: DecodedTurn[], expectation: Expectation): string[] {
  const differences: string[] = [];
  for (const turn of turns) {
    if (turn.provider !== expectation.provider) differences.push(`provider: expected ${show(expectation.provider)}, got ${show(turn.provider)}`);
  }
  return jsonDifferences({ streams: expectation.streams }, { streams: turns.map(expectedStreamOf) }, "", differences);
}

/** An expectation `toolwire expect` wrote that no person has checked yet: verifiedBy still says DRAFT. */
export function isDraft(expectation: Expectation | null): boolean {
  return expectation !== null && typeof expectation.verifiedBy === "string" && expectation.verifiedBy.startsWith("DRAFT");
}

export function conformanceRow(input: ConformanceInput): ConformanceRow {
  const row: ConformanceRow = {
    provider: input.provider ?? input.turns[0]?.provider ?? input.expectation?.provider ?? "?",
    file: input.file,
    streams: input.turns.length,
    calls: 0,
    serverCalls: 0,
    repaired: 0,
    truncated: 0,
    invalid: 0,
    sources: {},
    repairs: {},
    status: {},
    verdict: "no expectation",
    draft: isDraft(input.expectation),
    differences: [],
  };
  for (const turn of input.turns) {
    count(row.status, turn.status);
    row.serverCalls += turn.serverToolCalls.length;
    for (const call of turn.toolCalls) {
      row.calls++;
      count(row.sources, call.source ?? "none");
      for (const repair of call.repairs) count(row.repairs, repair);
      if (call.repairs.length > 0) row.repaired++;
      if (call.error?.code === "truncated") row.truncated++;
      else if (call.error) row.invalid++;
    }
  }
  if (input.error !== undefined) {
    row.verdict = "error";
    row.differences = [input.error];
  } else if (input.expectation) {
    row.differences = compareWithExpectation(input.turns, input.expectation);
    row.verdict = row.differences.length === 0 ? "match" : "differs";
  }
  return row;
}

export function summarize(rows: readonly ConformanceRow[]): ConformanceSummary {
  const summary: ConformanceSummary = {
    files: rows.length,
    streams: 0,
    calls: 0,
    serverCalls: 0,
    repaired: 0,
    truncated: 0,
    invalid: 0,
    match: 0,
    differs: 0,
    noExpectation: 0,
    errors: 0,
    drafts: 0,
    providers: {},
  };
  for (const row of rows) {
    if (row.draft) summary.drafts++;
    for (const key of CALL_COUNTS) summary[key] += row[key];
    count(summary.providers, row.provider);
    if (row.verdict === "match") summary.match++;
    else if (row.verdict === "differs") summary.differs++;
    else if (row.verdict === "error") summary.errors++;
    else summary.noExpectation++;
  }
  return summary;
}

/** True when the run found something: a file that differs from its expectation or could not be checked. */
export function hasFindings(summary: ConformanceSummary): boolean {
  return summary.differs > 0 || summary.errors > 0;
}

/** The one-line summary printed last (and quoted in the README). */
export function summaryLine(summary: ConformanceSummary): string {
  const providers = Object.entries(summary.providers)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([name, n]) => `${name} ${n}`)
    .join(", ");
  return (
    `Conformance: ${summary.files} file(s) (${providers}), ${summary.streams} stream(s), ${summary.calls} call(s) ` +
    `(${summary.repaired} repaired, ${summary.truncated} truncated, ${summary.invalid} invalid; ${summary.serverCalls} server call(s)): ` +
    `${summary.match} match their expectation, ${summary.differs} differ, ${summary.noExpectation} without expectation, ${summary.errors} error(s).` +
    ((summary.drafts ?? 0) > 0 ? ` ${summary.drafts} expectation(s) are unverified DRAFTs: check each against its recording and say how in its verifiedBy.` : "")
  );
}

function tally(counts: Record<string, number>): string {
  const entries = Object.entries(counts).sort(([a], [b]) => a.localeCompare(b));
  if (entries.length === 0) return "-";
  return entries.map(([key, n]) => `${key}:${n}`).join(" ");
}

const HEADERS = ["provider", "file", "calls", "sources", "repairs", "status", "expectation"] as const;

/** The verdict cell: a match against an unreviewed draft says so. */
function verdictCell(row: ConformanceRow): string {
  const verdict = row.verdict === "match" ? "equal" : row.verdict;
  return row.draft && row.verdict !== "error" ? `${verdict} (DRAFT: unverified)` : verdict;
}

/** A cell cut from the left to `width` characters, "…" in front: file names differ at their end. */
function cutLeft(cell: string, width: number): string {
  const chars = Array.from(cell);
  return chars.length <= width ? cell : `…${chars.slice(chars.length - Math.max(1, width - 1)).join("")}`;
}

/** A line cut to `width` characters, "…" at the end. */
function cutRight(line: string, width: number): string {
  const chars = Array.from(line);
  return chars.length <= width ? line : `${chars.slice(0, Math.max(1, width - 1)).join("")}…`;
}

/**
 * The table: one line per file, then the differences of the files that differ, then the summary
 * line. With `width` (a terminal's), the file column is shortened from the left and every other
 * line cut so that no line is wider; without it, lines are whole.
 */
export function renderTable(rows: readonly ConformanceRow[], options: { width?: number } = {}): string {
  const cells = rows.map((row) => [
    row.provider,
    row.file,
    `${row.calls}${row.serverCalls ? `+${row.serverCalls}s` : ""}${row.truncated || row.invalid ? ` (${[row.truncated ? `${row.truncated} truncated` : "", row.invalid ? `${row.invalid} invalid` : ""].filter(Boolean).join(", ")})` : ""}`,
    tally(row.sources),
    tally(row.repairs),
    tally(row.status),
    verdictCell(row),
  ]);
  let widths = HEADERS.map((header, i) => Math.max(header.length, ...cells.map((line) => (line[i] as string).length)));
  const width = options.width;
  if (width !== undefined) {
    const total = widths.reduce((sum, w) => sum + w, 0) + 2 * (widths.length - 1);
    const over = total - width;
    if (over > 0) {
      const fileWidth = Math.max(HEADERS[1].length, (widths[1] as number) - over);
      for (const line of cells) line[1] = cutLeft(line[1] as string, fileWidth);
      widths = HEADERS.map((header, i) => Math.max(header.length, ...cells.map((line) => Array.from(line[i] as string).length)));
    }
  }
  const format = (line: readonly string[]): string =>
    line
      .map((cell, i) => (i === line.length - 1 ? cell : cell.padEnd(widths[i] as number)))
      .join("  ")
      .trimEnd();
  const lines = [format(HEADERS), format(widths.map((w) => "-".repeat(w))), ...cells.map(format)];
  const detailed = rows.filter((row) => row.verdict === "differs" || row.verdict === "error");
  if (detailed.length > 0) {
    lines.push("");
    for (const row of detailed) {
      lines.push(`${row.file} ${row.verdict === "error" ? "could not be checked" : "differs from its expectation"}:`);
      for (const difference of row.differences) lines.push(`  ${difference}`);
    }
  }
  lines.push("", summaryLine(summarize(rows)));
  if (width === undefined) return lines.join("\n") + "\n";
  const fitted = lines.flatMap((line) => (line === summaryLine(summarize(rows)) ? wrapWords(line, width) : [cutRight(line, width)]));
  return fitted.join("\n") + "\n";
}

/**
 * Per-turn record of what mutating calls did to each target (a file path, a record id…), so an
 * agent can tell the model plainly which changes did NOT happen: a failure counts until a later
 * call on the same target succeeds. Diagnostics that are not failures should simply not be
 * recorded as failures.
 */

export interface OutcomeEntry {
  /** The normalized target key. */
  target: string;
  tool: string;
  ok: boolean;
  /** Short reason, for failures. */
  error?: string;
  callId?: string;
  /** Order of recording within the turn. */
  sequence: number;
}

/** Options of `createOutcomeLedger`: how a target becomes a key, and the footer's heading. */
export interface OutcomeLedgerOptions {
  /** Maps a target to its identity key. Default: path normalization (see normalizePathKey). */
  normalizeKey?: (target: string) => string;
  /** Heading of the footer (default "Files NOT modified this turn"). */
  heading?: string;
}

/** One outcome to record: which tool acted on which target, whether it worked, and why not. */
export interface RecordInput {
  tool: string;
  target: string;
  ok: boolean;
  error?: string;
  callId?: string;
}

/** The outcomes of one turn's mutating calls per target; created by `createOutcomeLedger`. */
export interface OutcomeLedger {
  record(input: RecordInput): OutcomeEntry;
  /** Every entry, in order. */
  entries(): OutcomeEntry[];
  /** For each target whose latest outcome is a failure: that failure. */
  unresolved(): OutcomeEntry[];
  /** Targets with at least one success this turn. */
  succeeded(): string[];
  /** The footer for the model, or null when every failure was superseded by a success. */
  footer(): string | null;
  /** Starts a new turn. */
  clear(): void;
}

/**
 * Creates an outcome ledger: record each mutating call's outcome on its target, then `footer()`
 * lists the targets whose latest attempt failed, to tell the model plainly what did NOT change.
 */
export function createOutcomeLedger(options: OutcomeLedgerOptions = {}): OutcomeLedger {
  const normalize = options.normalizeKey ?? normalizePathKey;
  const heading = options.heading ?? "Files NOT modified this turn";
  let log: OutcomeEntry[] = [];
  const latest = new Map<string, OutcomeEntry>();

  return {
    record(input) {
      const entry: OutcomeEntry = { target: normalize(input.target), tool: input.tool, ok: input.ok, sequence: log.length };
      if (input.error !== undefined) entry.error = input.error;
      if (input.callId !== undefined) entry.callId = input.callId;
      log.push(entry);
      latest.set(entry.target, entry);
      return entry;
    },
    entries() {
      return log.map((e) => ({ ...e }));
    },
    unresolved() {
      return [...latest.values()].filter((e) => !e.ok).sort((a, b) => a.sequence - b.sequence).map((e) => ({ ...e }));
    },
    succeeded() {
      return [...new Set(log.filter((e) => e.ok).map((e) => e.target))];
    },
    footer() {
      const failures = this.unresolved();
      if (failures.length === 0) return null;
      const lines = [`${heading} (the last attempt failed and no later call succeeded):`];
      for (const f of failures) lines.push(`- ${f.target} (${f.tool}${f.error ? `: ${oneLine(f.error)}` : ""})`);
      return lines.join("\n");
    },
    clear() {
      log = [];
      latest.clear();
    },
  };
}

function oneLine(text: string, max = 160): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > max ? flat.slice(0, max - 1) + "…" : flat;
}

/**
 * Path identity without touching a file system: separators unified, `.` segments and repeated
 * slashes removed, `..` resolved where a parent segment exists. `./src/a.ts`, `src//a.ts` and
 * `src/x/../a.ts` are the same key.
 */
export function normalizePathKey(target: string): string {
  const trimmed = target.trim().replace(/\\/g, "/");
  const absolute = trimmed.startsWith("/");
  const out: string[] = [];
  for (const segment of trimmed.split("/")) {
    if (segment === "" || segment === ".") continue;
    if (segment === ".." && out.length > 0 && out[out.length - 1] !== "..") {
      out.pop();
      continue;
    }
    if (segment === ".." && absolute) continue;
    out.push(segment);
  }
  const joined = out.join("/");
  return absolute ? `/${joined}` : joined || ".";
}

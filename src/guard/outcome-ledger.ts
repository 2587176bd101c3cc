/**
 * Per-turn record of what mutating calls did to each target (a file path, a record id…), so an
 * agent can tell the model plainly which changes did NOT happen: a target's first failure counts
 * until a later call on the same target succeeds. Diagnostics that are not failures should simply
 * not be recorded as failures. `createFileMutationLedger` finds the targets itself in the
 * arguments of file-writing tools (`write_file`, `patch` in replace mode, V4A patches).
 */

/** Defaults of the ledgers; the README's guard section is generated from them. */
export const OUTCOME_LEDGER_DEFAULTS = {
  heading: "Files NOT modified this turn",
  /** Paths listed in the footer; the rest are counted. */
  maxListed: 10,
  writeTools: ["write_file"] as readonly string[],
  patchTools: ["patch"] as readonly string[],
  /** Argument keys read as the file path of a write or replace-mode patch, in order. */
  pathKeys: ["path", "file_path", "filePath", "filename", "file"] as readonly string[],
  /** Argument keys read as V4A patch text, in order. */
  patchKeys: ["patch", "input", "diff"] as readonly string[],
  /** V4A patch lines naming a file (`*** Move to:` names the new path of an update). */
  v4aMarkers: ["*** Update File:", "*** Add File:", "*** Delete File:", "*** Move to:"] as readonly string[],
};

/** One recorded outcome: the normalized target, the tool, whether it worked and why not. */
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
  /**
   * Maps a target to its identity key. Default: path normalization without touching a file
   * system (`./src/a.ts`, `src//a.ts` and `src/x/../a.ts` are one key).
   */
  normalizeKey?: (target: string) => string;
  /** Heading of the footer (default "Files NOT modified this turn"). */
  heading?: string;
  /** Most targets the footer lists by name (default 10); it says how many more there are. */
  maxListed?: number;
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
  /** Records what one mutating call did to its target (`ok: false` with a short `error` for a failure); returns the entry. */
  record(input: RecordInput): OutcomeEntry;
  /** Every entry, in order. */
  entries(): OutcomeEntry[];
  /** For each target not succeeded since it failed: its first failure since its last success. */
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
  const heading = options.heading ?? OUTCOME_LEDGER_DEFAULTS.heading;
  const maxListed = Math.max(1, Math.floor(options.maxListed ?? OUTCOME_LEDGER_DEFAULTS.maxListed));
  let log: OutcomeEntry[] = [];
  // Per target: its first failure since its last success, or the success itself.
  const latest = new Map<string, OutcomeEntry>();

  return {
    record(input) {
      const entry: OutcomeEntry = { target: normalize(input.target), tool: input.tool, ok: input.ok, sequence: log.length };
      if (input.error !== undefined) entry.error = input.error;
      if (input.callId !== undefined) entry.callId = input.callId;
      log.push(entry);
      const current = latest.get(entry.target);
      // First error per target wins: a later failure does not hide what went wrong first.
      if (entry.ok || current === undefined || current.ok) latest.set(entry.target, entry);
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
      const lines = [`${heading} (a call failed and no later call on the same target succeeded):`];
      for (const f of failures.slice(0, maxListed)) lines.push(`- ${f.target} (${f.tool}${f.error ? `: ${oneLine(f.error)}` : ""})`);
      const more = failures.length - maxListed;
      if (more > 0) lines.push(`- … and ${more} more`);
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

// ---------------------------------------------------------------------------------------------
// File mutations: targets read from the calls themselves

/**
 * Options of `createFileMutationLedger`: which tools write or patch files, besides the ledger's own
 * options.
 */
export interface FileMutationLedgerOptions extends OutcomeLedgerOptions {
  /** Tools whose path argument names the file they write (default `["write_file"]`). */
  writeTools?: readonly string[];
  /**
   * Tools that patch files (default `["patch"]`): in replace mode (or with a path and no patch
   * text) the path argument is the target; otherwise the patch text is read as a V4A patch, whose
   * `*** Update File:` / `*** Add File:` / `*** Delete File:` / `*** Move to:` lines name them.
   */
  patchTools?: readonly string[];
}

/** A tool call as decoded (a `ToolCall` fits), or any `{name, arguments}`. */
export interface MutationCall {
  name: string;
  arguments: unknown;
  id?: string | null;
}

/** What running the call did: `ok: false` with the error text the tool returned. */
export interface MutationResult {
  ok: boolean;
  error?: string;
}

/**
 * An outcome ledger that reads the files a call writes from its arguments; created by
 * `createFileMutationLedger`.
 */
export interface FileMutationLedger extends OutcomeLedger {
  /**
   * Records a call and its result against every file it targets; returns the entries recorded
   * ([] for a call of another tool). A failed call whose files cannot be read from its arguments
   * is still reported in the footer, as a count.
   */
  recordCall(call: MutationCall, result: MutationResult): OutcomeEntry[];
}

/**
 * An outcome ledger for file-writing tools that finds each call's files itself: pass every call
 * and its result, then send `footer()` to the model.
 */
export function createFileMutationLedger(options: FileMutationLedgerOptions = {}): FileMutationLedger {
  const ledger = createOutcomeLedger(options);
  const unknownFailures: Array<{ tool: string; error?: string }> = [];
  return {
    ...ledger,
    recordCall(call, result) {
      const targets = mutationTargets(call, options);
      if (targets === null) return [];
      if (targets.length === 0) {
        if (!result.ok) unknownFailures.push({ tool: call.name, ...(result.error !== undefined ? { error: result.error } : {}) });
        return [];
      }
      return targets.map((target) =>
        ledger.record({
          tool: call.name,
          target,
          ok: result.ok,
          ...(result.error !== undefined ? { error: result.error } : {}),
          ...(typeof call.id === "string" ? { callId: call.id } : {}),
        }),
      );
    },
    footer() {
      const base = ledger.footer();
      if (unknownFailures.length === 0) return base;
      const tools = [...new Set(unknownFailures.map((f) => f.tool))].join(", ");
      const n = unknownFailures.length;
      const line = `- ${n} failed ${tools} call${n === 1 ? "" : "s"} whose file${n === 1 ? "" : "s"} could not be read from the arguments (${oneLine(unknownFailures[0]!.error ?? "no error text", 120)})`;
      if (base !== null) return `${base}\n${line}`;
      return `${options.heading ?? OUTCOME_LEDGER_DEFAULTS.heading} (a call failed and no later call on the same target succeeded):\n${line}`;
    },
    clear() {
      ledger.clear();
      unknownFailures.length = 0;
    },
  };
}

/** The footer for a turn's calls and results, in order (null when nothing is left failed). */
export function fileMutationFooter(calls: ReadonlyArray<{ call: MutationCall; result: MutationResult }>, options: FileMutationLedgerOptions = {}): string | null {
  const ledger = createFileMutationLedger(options);
  for (const { call, result } of calls) ledger.recordCall(call, result);
  return ledger.footer();
}

/**
 * The files a call writes, read from its arguments: null when the tool is not a write or patch
 * tool, [] when it is but no file can be read (arguments missing or unparseable).
 */
export function mutationTargets(call: MutationCall, options: Pick<FileMutationLedgerOptions, "writeTools" | "patchTools"> = {}): string[] | null {
  const writeTools = options.writeTools ?? OUTCOME_LEDGER_DEFAULTS.writeTools;
  const patchTools = options.patchTools ?? OUTCOME_LEDGER_DEFAULTS.patchTools;
  const isWrite = writeTools.includes(call.name);
  const isPatch = patchTools.includes(call.name);
  if (!isWrite && !isPatch) return null;
  const args = call.arguments;
  if (typeof args !== "object" || args === null || Array.isArray(args)) return [];
  const record = args as Record<string, unknown>;
  const path = firstString(record, OUTCOME_LEDGER_DEFAULTS.pathKeys);
  if (isWrite) return path === null ? [] : [path];
  const text = firstString(record, OUTCOME_LEDGER_DEFAULTS.patchKeys);
  const mode = typeof record.mode === "string" ? record.mode : null;
  if (mode === "replace" || (text === null && path !== null)) return path === null ? [] : [path];
  return text === null ? [] : v4aPatchTargets(text);
}

function firstString(record: Record<string, unknown>, keys: readonly string[]): string | null {
  for (const key of keys) {
    const value = record[key];
    if (typeof value === "string" && value.trim() !== "") return value.trim();
  }
  return null;
}

/**
 * The files a V4A patch (`*** Begin Patch` … `*** End Patch`) names, in order and without
 * repeats. One pass over the lines, no regular expression.
 */
export function v4aPatchTargets(patch: string): string[] {
  const out: string[] = [];
  const seen = new Set<string>();
  let start = 0;
  while (start <= patch.length) {
    let end = patch.indexOf("\n", start);
    if (end === -1) end = patch.length;
    const line = patch.slice(start, end).trim();
    start = end + 1;
    if (!line.startsWith("*** ")) continue;
    for (const marker of OUTCOME_LEDGER_DEFAULTS.v4aMarkers) {
      if (!line.startsWith(marker)) continue;
      const path = line.slice(marker.length).trim();
      if (path !== "" && !seen.has(path)) {
        seen.add(path);
        out.push(path);
      }
      break;
    }
  }
  return out;
}

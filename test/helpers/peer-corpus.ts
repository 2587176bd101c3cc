import { createHash } from "node:crypto";
import { isDeepStrictEqual } from "node:util";
import type { ReplayJsonLine } from "../../src/replay.js";

/** Reading the peer corpus (shared/corpus/peer): its MANIFEST.md, blob ids, and the comparison it prescribes. */

export interface ExpectedCall {
  name: string;
  /** Absent: not checked. `null`: the call must not be runnable. */
  arguments?: Record<string, unknown> | null;
  complete?: boolean;
}

/** A `<file>.expect.json`. */
export interface Expectation {
  provider: string;
  source: { repo: string; path: string; blob: string };
  turns: Array<{ toolCalls: ExpectedCall[] }>;
}

export interface ManifestRow {
  number: number;
  file: string;
  bytes: number;
  blob: string;
}

/** `git hash-object`: SHA-1 of "blob <length>\0" and the bytes. */
export function gitBlobId(bytes: Uint8Array): string {
  return createHash("sha1").update(`blob ${bytes.length}\0`).update(bytes).digest("hex");
}

/** The Files table of MANIFEST.md: number, file, and the last two columns (bytes, blob). */
export function parseManifest(text: string): ManifestRow[] {
  const rows: ManifestRow[] = [];
  for (const line of text.split("\n")) {
    const row = /^\| (\d+) \| `([^`]+)` \|.*\| (\d+) \| `([0-9a-f]{7,40})` \|\s*$/.exec(line);
    if (row) rows.push({ number: Number(row[1]), file: row[2] as string, bytes: Number(row[3]), blob: row[4] as string });
  }
  return rows;
}

/** What differs between the decoded turns and the expectation, as readable lines; empty when they agree. */
export function compareTurns(turns: readonly ReplayJsonLine[], expected: Expectation): string[] {
  const problems: string[] = [];
  if (turns.length !== expected.turns.length) problems.push(`${turns.length} turn(s) decoded, ${expected.turns.length} expected`);
  const shared = Math.min(turns.length, expected.turns.length);
  for (let t = 0; t < shared; t++) {
    const got = (turns[t] as ReplayJsonLine).toolCalls;
    const want = (expected.turns[t] as { toolCalls: ExpectedCall[] }).toolCalls;
    if (got.length !== want.length) {
      problems.push(`turn ${t + 1}: ${got.length} call(s) ${JSON.stringify(got.map((call) => call.name))}, ${want.length} expected ${JSON.stringify(want.map((call) => call.name))}`);
      continue;
    }
    want.forEach((call, c) => {
      const actual = got[c] as ReplayJsonLine["toolCalls"][number];
      const where = `turn ${t + 1} call ${c + 1}`;
      if (actual.name !== call.name) problems.push(`${where}: name ${JSON.stringify(actual.name)}, expected ${JSON.stringify(call.name)}`);
      if ("arguments" in call && !isDeepStrictEqual(actual.arguments, call.arguments)) {
        problems.push(`${where}: arguments ${JSON.stringify(actual.arguments)} (raw ${JSON.stringify(actual.rawArguments.slice(0, 120))}, repairs ${JSON.stringify(actual.repairs)}), expected ${JSON.stringify(call.arguments)}`);
      }
      if (call.complete !== undefined && actual.complete !== call.complete) problems.push(`${where}: complete ${actual.complete}, expected ${call.complete}`);
    });
  }
  return problems;
}

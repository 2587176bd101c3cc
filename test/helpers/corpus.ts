import { existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, it } from "vitest";
import { CORPUS_HINT, CORPUS_SKIP_MARK } from "./corpus-hint.js";

export { CORPUS_HINT, CORPUS_SKIP_MARK };

/**
 * Where the real-wire corpora live. They are other projects' recordings and parser test outputs,
 * with their manifests and licences; the repository does not ship them. A directory that holds
 * `upstream/`, `peer/` and `text-calls-peer/` is found at `TOOLWIRE_CORPUS`, or else at
 * `../shared/corpus` beside the checkout. Where neither exists the corpus tests skip (the summary
 * reporter prints one line saying so); with `TOOLWIRE_REQUIRE_CORPUS=1` (CI) a missing corpus fails
 * the run instead.
 */
export type CorpusName = "upstream" | "peer" | "text-calls-peer";

export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");

function locateRoot(): string | null {
  const configured = process.env.TOOLWIRE_CORPUS;
  if (configured) return resolve(configured);
  const beside = resolve(REPO_ROOT, "..", "shared", "corpus");
  return existsSync(beside) ? beside : null;
}

export const CORPUS_ROOT: string | null = locateRoot();
export const CORPUS_REQUIRED = process.env.TOOLWIRE_REQUIRE_CORPUS === "1";


/** The directory of one corpus, or null where it is absent (an error where the corpus is required). */
export function corpusDir(name: CorpusName): string | null {
  const dir = CORPUS_ROOT === null ? null : join(CORPUS_ROOT, name);
  if (dir !== null && existsSync(join(dir, "MANIFEST.md"))) return dir;
  if (CORPUS_REQUIRED) {
    throw new Error(`TOOLWIRE_REQUIRE_CORPUS=1 but the ${name} corpus is missing (no MANIFEST.md in ${dir ?? "TOOLWIRE_CORPUS or ../shared/corpus"}): ${CORPUS_HINT}`);
  }
  return null;
}

/** The directory of a corpus that a test needs; call it only inside `describeCorpus`. */
export function requireCorpusDir(name: CorpusName): string {
  const dir = corpusDir(name);
  if (dir === null) throw new Error(`the ${name} corpus is missing: ${CORPUS_HINT}`);
  return dir;
}

/**
 * `describe` for tests that read a corpus: skipped where the corpus is absent. The skipped suite's
 * name carries the marker the summary reporter counts, so one line reports every skip.
 */
export function describeCorpus(name: CorpusName, title: string, body: (dir: string) => void): void {
  const dir = corpusDir(name);
  if (dir === null) {
    describe.skip(`${CORPUS_SKIP_MARK} ${name}: ${title}`, () => {
      it("reads the corpus", () => undefined);
    });
    return;
  }
  describe(title, () => body(dir));
}

import { existsSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

/** The upstream corpus next to the repository (../shared/corpus/upstream), or TOOLWIRE_CORPUS. */
export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
export const CORPUS_DIR = process.env.TOOLWIRE_CORPUS
  ? resolve(process.env.TOOLWIRE_CORPUS)
  : resolve(REPO_ROOT, "..", "shared", "corpus", "upstream");
export const HAS_CORPUS = existsSync(join(CORPUS_DIR, "MANIFEST.md"));

if (!HAS_CORPUS) {
  console.warn(`upstream corpus not found at ${CORPUS_DIR}: tests on real corpus files are skipped (set TOOLWIRE_CORPUS)`);
}

/** Bytes of a corpus file by local name (`<owner>__<repo>/<file>`), with the name importFile sees. */
export function corpusFile(local: string): { name: string; bytes: Uint8Array } {
  const name = local.split("/").pop() as string;
  return { name, bytes: new Uint8Array(readFileSync(join(CORPUS_DIR, local))) };
}

export function utf8(text: string): Uint8Array {
  return new TextEncoder().encode(text);
}

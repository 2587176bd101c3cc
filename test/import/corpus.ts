import { readFileSync } from "node:fs";
import { ImportError, importFile } from "../../src/import/index.js";
import { join } from "node:path";
import { requireCorpusDir } from "../helpers/corpus.js";
import { CORPUS } from "../helpers/testdata.js";

export { REPO_ROOT } from "../helpers/corpus.js";
/** The upstream corpus (beside the checkout or at TOOLWIRE_CORPUS; null where absent): see test/helpers/corpus.ts. */
export const CORPUS_DIR = CORPUS;

/** Bytes of a corpus file by local name (`<owner>__<repo>/<file>`), with the name importFile sees; only inside corpus-gated tests. */
export function corpusFile(local: string): { name: string; bytes: Uint8Array } {
  const name = local.split("/").pop() as string;
  return { name, bytes: new Uint8Array(readFileSync(join(requireCorpusDir("upstream"), local))) };
}

export function utf8(text: string): Uint8Array {
  return new TextEncoder().encode(text);
}

/** The ImportError importFile throws for these bytes (fails the test when it throws none, or another error). */
export function importError(name: string, bytes: Uint8Array): ImportError {
  try {
    importFile(name, bytes);
  } catch (error) {
    if (error instanceof ImportError) return error;
    throw error;
  }
  throw new Error("expected an ImportError");
}

import { readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { CORPUS } from "../helpers/testdata.js";

export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
/** The upstream corpus (testdata/upstream, or TOOLWIRE_CORPUS): see test/helpers/testdata.ts. */
export const CORPUS_DIR = CORPUS;

/** Bytes of a corpus file by local name (`<owner>__<repo>/<file>`), with the name importFile sees. */
export function corpusFile(local: string): { name: string; bytes: Uint8Array } {
  const name = local.split("/").pop() as string;
  return { name, bytes: new Uint8Array(readFileSync(join(CORPUS_DIR, local))) };
}

export function utf8(text: string): Uint8Array {
  return new TextEncoder().encode(text);
}

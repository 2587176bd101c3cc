import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { importUpstream, type ImportedFile } from "../../scripts/import-corpus.js";
import { parseRecords, type RecordedStream } from "../../src/framing/records.js";
import type { ProviderName } from "../../src/types.js";
import { corpusDir } from "./corpus.js";

export const TESTDATA = new URL("../../testdata/", import.meta.url).pathname;

/**
 * The upstream corpus (other projects' recorded streams, with MANIFEST.md and licences) is not in the
 * repository: it is found by test/helpers/corpus.ts, or is null where absent (a fresh clone).
 */
export const CORPUS: string | null = corpusDir("upstream");

/** Reviewed expectations of corpus files: the project's own work, keyed by the corpus file name. */
export const CORPUS_EXPECTATIONS = join(TESTDATA, "corpus-expectations");

export interface TestdataFile {
  /** File name: for a corpus file, the name `npm run import-corpus` gives it (`<owner>__<repo>__<short>.ndjson`). */
  name: string;
  /** Where the records are: a file of testdata/, or for a corpus file the corpus file it was imported from. */
  path: string;
  /** The reviewed expectation (`.expected.json`) of this file. */
  expectationPath: string;
  text: string;
  streams: RecordedStream[];
  /** `<owner>__<repo>/<file>` in the upstream corpus, for a corpus file; null for the project's own. */
  upstream: string | null;
}

let imported: ImportedFile[] | null = null;

/** The upstream corpus imported in memory (once per test file), or [] where the corpus is absent. */
export function upstreamImported(): ImportedFile[] {
  if (CORPUS === null) return [];
  imported ??= importUpstream(CORPUS).files;
  return imported;
}

/** Expectation path of an upstream corpus file, by its local name `<owner>__<repo>/<file>`. */
export function upstreamExpectationPath(local: string): string {
  return join(CORPUS_EXPECTATIONS, "upstream", `${local}.expected.json`);
}

/** The project's own recorded streams of one provider (testdata/<provider>/*.ndjson). */
export function ownTestdataFiles(provider: ProviderName): TestdataFile[] {
  const dir = join(TESTDATA, provider);
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((name) => name.endsWith(".ndjson"))
    .sort()
    .map((name) => {
      const path = join(dir, name);
      const text = readFileSync(path, "utf8");
      return { name, path, expectationPath: path.replace(/\.ndjson$/, ".expected.json"), text, streams: parseRecords(text), upstream: null };
    });
}

/** The upstream corpus files of one provider, imported in memory; [] where the corpus is absent. */
export function upstreamTestdataFiles(provider: ProviderName): TestdataFile[] {
  if (CORPUS === null) return [];
  return upstreamImported()
    .filter((file) => file.provider === provider)
    .map((file) => ({
      name: file.out.split("/")[1] as string,
      path: join(CORPUS as string, file.local),
      expectationPath: upstreamExpectationPath(file.local),
      text: file.text,
      streams: file.streamsData,
      upstream: file.local,
    }))
    .sort((a, b) => (a.name < b.name ? -1 : 1));
}

/** Every recorded stream file of a provider: the project's own, and the upstream corpus's where present. */
export function testdataFiles(provider: ProviderName): TestdataFile[] {
  return [...ownTestdataFiles(provider), ...upstreamTestdataFiles(provider)].sort((a, b) => (a.name < b.name ? -1 : 1));
}

/** One upstream corpus file by its imported name (`<owner>__<repo>__<short>.ndjson`); only inside corpus-gated tests. */
export function upstreamFile(provider: ProviderName, name: string): TestdataFile {
  const file = upstreamTestdataFiles(provider).find((candidate) => candidate.name === name);
  if (!file) throw new Error(`no upstream corpus file imported as ${provider}/${name}`);
  return file;
}

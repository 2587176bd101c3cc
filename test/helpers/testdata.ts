import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { parseRecords, type RecordedStream } from "../../src/framing/records.js";
import type { ProviderName } from "../../src/types.js";

export const TESTDATA = new URL("../../testdata/", import.meta.url).pathname;
/**
 * The upstream corpus: real recorded streams copied byte for byte from public repositories, with
 * their MANIFEST.md and licences, in the repository at testdata/upstream/. TOOLWIRE_CORPUS points
 * the tests at another copy. It is never optional: a missing corpus fails the run loudly rather
 * than skipping the tests that read it.
 */
export const CORPUS = process.env.TOOLWIRE_CORPUS ? resolve(process.env.TOOLWIRE_CORPUS) : join(TESTDATA, "upstream");
if (!existsSync(join(CORPUS, "MANIFEST.md"))) {
  throw new Error(`the upstream corpus is missing: no MANIFEST.md in ${CORPUS}${process.env.TOOLWIRE_CORPUS ? " (from TOOLWIRE_CORPUS)" : " (it is part of the repository: restore testdata/upstream/)"}`);
}

export interface TestdataFile {
  name: string;
  path: string;
  text: string;
  streams: RecordedStream[];
  /** `<owner>__<repo>/<path with / as __>` in the upstream corpus, from the file's header. */
  upstream: string | null;
}

export function testdataFiles(provider: ProviderName): TestdataFile[] {
  const dir = join(TESTDATA, provider);
  return readdirSync(dir)
    .filter((name) => name.endsWith(".ndjson"))
    .sort()
    .map((name) => {
      const path = join(dir, name);
      const text = readFileSync(path, "utf8");
      const header = /^# upstream: (\S+)\/(\S+) (\S+)$/m.exec(text);
      const upstream = header ? `${header[1]}__${header[2]}/${(header[3] as string).replace(/\//g, "__")}` : null;
      return { name, path, text, streams: parseRecords(text), upstream };
    });
}

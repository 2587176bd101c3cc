import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { parseRecords, type RecordedStream } from "../../src/framing/records.js";
import type { ProviderName } from "../../src/types.js";

export const TESTDATA = new URL("../../testdata/", import.meta.url).pathname;
export const CORPUS = process.env.TOOLWIRE_CORPUS ?? new URL("../../../shared/corpus/upstream/", import.meta.url).pathname;

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

import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { parseRecords } from "../../src/framing/records.js";
import type { FuzzSource } from "../../src/testing/fuzz.js";
import { parseRegression, type Regression } from "../../src/testing/regressions.js";
import { PROVIDERS, type ProviderName } from "../../src/types.js";
import { TESTDATA } from "../helpers/testdata.js";

export const REGRESSIONS = join(TESTDATA, "regressions");

/** Every recorded stream in testdata/<provider>/, as fuzz sources. */
export function corpusSources(): Partial<Record<ProviderName, FuzzSource[]>> {
  const corpus: Partial<Record<ProviderName, FuzzSource[]>> = {};
  for (const provider of PROVIDERS) {
    const dir = join(TESTDATA, provider);
    if (!existsSync(dir)) continue;
    corpus[provider] = readdirSync(dir)
      .filter((name) => name.endsWith(".ndjson"))
      .sort()
      .flatMap((name) =>
        parseRecords(readFileSync(join(dir, name), "utf8")).map((stream) => ({
          origin: `testdata/${provider}/${name}${stream.sequence !== null ? `#${stream.sequence}` : ""}`,
          events: stream.events,
        })),
      );
  }
  return corpus;
}

export interface RegressionFile {
  name: string;
  text: string;
  regression: Regression;
}

export function regressionFiles(): RegressionFile[] {
  if (!existsSync(REGRESSIONS)) return [];
  return readdirSync(REGRESSIONS)
    .filter((name) => name.endsWith(".ndjson"))
    .sort()
    .map((name) => {
      const text = readFileSync(join(REGRESSIONS, name), "utf8");
      return { name, text, regression: parseRegression(text) };
    });
}

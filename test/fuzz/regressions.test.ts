import { describe, expect, it } from "vitest";
import { supportedProviders } from "../../src/providers/registry.js";
import { formatRegression, parseRegression, regressionFileName, replayRegression } from "../../src/testing/regressions.js";
import { regressionFiles } from "./support.js";

/**
 * Every counterexample the fuzzer ever found, replayed through all invariants. A file marked
 * `# status: open` is a known bug not fixed yet: it must still fail (so that fixing it is
 * noticed and the mark removed); every other file must pass.
 */

const files = regressionFiles();
const registered = new Set(supportedProviders());

describe("fuzz regressions (testdata/regressions)", () => {
  it("are named after their content", () => {
    for (const file of files) expect(file.name, file.name).toBe(regressionFileName(file.regression));
  });

  it("read back as written", () => {
    for (const file of files) expect(formatRegression(parseRegression(file.text)), file.name).toBe(file.text);
  });

  describe.each(files.map((file) => [file.name, file] as const))("%s", (_name, file) => {
    const { regression } = file;
    it.skipIf(!registered.has(regression.provider))(`${regression.property}${regression.status === "open" ? " (open: still fails)" : ""}`, () => {
      const violations = replayRegression(regression);
      if (regression.status === "open") {
        expect(violations.length, `${file.name} passes now: remove its '# status: open' line`).toBeGreaterThan(0);
      } else {
        expect(violations.map((v) => `[${v.property}] ${v.message}`)).toEqual([]);
      }
    });
  });
});

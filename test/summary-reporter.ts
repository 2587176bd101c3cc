import type { Reporter, TestModule } from "vitest/node";
import { CORPUS_HINT, CORPUS_SKIP_MARK } from "./helpers/corpus-hint.js";

/**
 * Prints one plain closing line, `Tests: N passed, N failed, N skipped`, which CI systems that do
 * not parse vitest's own summary can read.
 */
export default class SummaryReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    let passed = 0;
    let failed = 0;
    let skipped = 0;
    const corpusSuites = new Set<string>();
    for (const module of testModules) {
      for (const test of module.children.allTests()) {
        const state = test.result().state;
        if (state === "passed") passed++;
        else if (state === "failed") failed++;
        else skipped++;
        if (state !== "passed" && state !== "failed" && test.fullName.includes(CORPUS_SKIP_MARK)) corpusSuites.add(test.module.moduleId);
      }
    }
    // After every other reporter's summary, so that it is the closing line.
    process.once("exit", () => {
      if (corpusSuites.size > 0) process.stdout.write(`Corpus tests skipped in ${corpusSuites.size} files: no real-wire corpus found; ${CORPUS_HINT}.\n`);
      process.stdout.write(`Tests: ${passed} passed, ${failed} failed, ${skipped} skipped\n`);
    });
  }
}

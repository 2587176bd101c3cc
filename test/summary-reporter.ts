import type { Reporter, TestModule } from "vitest/node";

/**
 * Prints one plain closing line, `Tests: N passed, N failed, N skipped`, which CI systems that do
 * not parse vitest's own summary can read.
 */
export default class SummaryReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    let passed = 0;
    let failed = 0;
    let skipped = 0;
    for (const module of testModules) {
      for (const test of module.children.allTests()) {
        const state = test.result().state;
        if (state === "passed") passed++;
        else if (state === "failed") failed++;
        else skipped++;
      }
    }
    // After every other reporter's summary, so that it is the closing line.
    process.once("exit", () => process.stdout.write(`Tests: ${passed} passed, ${failed} failed, ${skipped} skipped\n`));
  }
}

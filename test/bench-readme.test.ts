import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { BENCH_END, BENCH_START, renderBench, withBenchTable, type BenchResults } from "../bench/report.js";

/** The Performance tables (docs/performance.md) are generated from the committed benchmark run, never edited by hand. */
describe("performance tables (docs/performance.md)", () => {
  const results = JSON.parse(readFileSync(new URL("../bench/results.json", import.meta.url), "utf8")) as BenchResults;
  const readme = readFileSync(new URL("../docs/performance.md", import.meta.url), "utf8");

  it("match bench/results.json (run `npm run bench:readme` after a bench run)", () => {
    expect(withBenchTable(readme, results)).toBe(readme);
  });

  it("name the machine, the Node version, the date and every door measured", () => {
    const block = readme.slice(readme.indexOf(BENCH_START), readme.indexOf(BENCH_END));
    expect(block).toContain(results.node);
    expect(block).toContain(results.date);
    expect(block).toContain(results.machine.cpu);
    for (const door of new Set(results.ratios.map((row) => row.door))) expect(block).toContain(`\`${door}\``);
    expect(renderBench(results)).toContain("Targets:");
  });
});

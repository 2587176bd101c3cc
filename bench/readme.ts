import { readFileSync, writeFileSync } from "node:fs";
import { withBenchTable, type BenchResults } from "./report.js";

/** `npm run bench:readme [-- results.json]`: renders the README's Performance tables from a bench run's JSON. */
const path = process.argv[2] ?? "bench/results.json";
const results = JSON.parse(readFileSync(path, "utf8")) as BenchResults;
const readme = readFileSync("README.md", "utf8");
writeFileSync("README.md", withBenchTable(readme, results));
process.stderr.write(`README.md: Performance tables rendered from ${path}\n`);

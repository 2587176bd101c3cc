import { readFileSync, writeFileSync } from "node:fs";
import { withBenchTable, type BenchResults } from "./report.js";

/** `npm run bench:readme [-- results.json]`: renders the Performance tables of docs/performance.md from a bench run's JSON. */
const PAGE = "docs/performance.md";
const path = process.argv[2] ?? "bench/results.json";
const results = JSON.parse(readFileSync(path, "utf8")) as BenchResults;
const page = readFileSync(PAGE, "utf8");
writeFileSync(PAGE, withBenchTable(page, results));
process.stderr.write(`${PAGE}: Performance tables rendered from ${path}\n`);

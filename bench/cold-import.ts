import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { median } from "./cpu.js";

/**
 * Cold import cost of each entry point: a fresh Node process per sample imports the built package
 * by name (`import("toolwire")`, resolved through package.json `exports`) and reports the CPU time
 * (user + system) the import took, without Node's own start-up. Medians over SAMPLES processes.
 * The root is the codec alone; its target is at most 50 ms (it loads no JSON Schema validator).
 *
 * `npm run build && node dist/bench/cold-import.js [samples]`
 */

const SAMPLES = Number(process.argv[2] ?? 15);
const ROOT_TARGET_MS = 50;

function packageRoot(from: string): string {
  for (let dir = from; ; dir = dirname(dir)) {
    const manifest = join(dir, "package.json");
    if (existsSync(manifest) && (JSON.parse(readFileSync(manifest, "utf8")) as { name?: string }).name === "toolwire") return dir;
    if (dirname(dir) === dir) throw new Error("cold-import: not inside the toolwire checkout");
  }
}

function sample(root: string, specifier: string, loader: "import" | "require"): number {
  const load = loader === "import" ? `await import(${JSON.stringify(specifier)})` : `require(${JSON.stringify(specifier)})`;
  const code = `const before = process.cpuUsage(); ${load}; const used = process.cpuUsage(before); console.log((used.user + used.system) / 1000);`;
  const child = spawnSync(process.execPath, [`--input-type=${loader === "import" ? "module" : "commonjs"}`, "-e", code], { cwd: root, encoding: "utf8" });
  if (child.status !== 0) throw new Error(`cold-import: ${loader} ${specifier} failed:\n${child.stderr}`);
  return Number(child.stdout.trim());
}

const root = packageRoot(dirname(fileURLToPath(import.meta.url)));
// Every entry of package.json `exports` but the fuzz one (it needs fast-check) and package.json.
const ENTRIES = Object.keys((JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { exports: Record<string, unknown> }).exports)
  .filter((subpath) => subpath !== "./package.json" && subpath !== "./testing/fuzz")
  .map((subpath) => (subpath === "." ? "toolwire" : `toolwire/${subpath.slice(2)}`));
if (!existsSync(join(root, "dist", "src", "index.js")) || !existsSync(join(root, "dist", "cjs", "index.js"))) {
  throw new Error("cold-import: build first (npm run build)");
}
console.log(`Cold import, CPU ms (median of ${SAMPLES} fresh processes, Node ${process.version}):`);
console.log("| entry | import (ESM) | require (CJS) |");
console.log("|---|---|---|");
let rootMs = Number.NaN;
for (const entry of ENTRIES) {
  const esm = median(Array.from({ length: SAMPLES }, () => sample(root, entry, "import")));
  const cjs = median(Array.from({ length: SAMPLES }, () => sample(root, entry, "require")));
  if (entry === "toolwire") rootMs = esm;
  console.log(`| \`${entry}\` | ${esm.toFixed(1)} | ${cjs.toFixed(1)} |`);
}
console.log(`Root target ≤ ${ROOT_TARGET_MS} ms: ${rootMs <= ROOT_TARGET_MS ? "met" : "NOT met"} (${rootMs.toFixed(1)} ms).`);

// The CommonJS half of the package: every file of the ESM build's src/ (except the CLI, which is
// ESM only) transpiled one to one by esbuild into dist/cjs/, with the ESM build's declarations
// copied beside them. dist/cjs/package.json says "commonjs", so Node and TypeScript read both the
// .js and the .d.ts files there as CommonJS. Run after `tsc -p tsconfig.build.json`.
import { copyFileSync, mkdirSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { build } from "esbuild";

const SRC = "src";
const TYPES = join("dist", "src");
const OUT = join("dist", "cjs");
const ESM_ONLY = [join(SRC, "cli")];

function walk(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (ESM_ONLY.includes(path)) return [];
    return entry.isDirectory() ? walk(path) : [path];
  });
}

rmSync(OUT, { recursive: true, force: true });
const sources = walk(SRC).filter((file) => file.endsWith(".ts") && !file.endsWith(".d.ts"));
await build({ entryPoints: sources, outdir: OUT, outbase: SRC, format: "cjs", platform: "node", target: "node20", bundle: false, logLevel: "warning" });
for (const file of sources) {
  const declaration = join(TYPES, relative(SRC, file)).replace(/\.ts$/, ".d.ts");
  const target = join(OUT, relative(SRC, file)).replace(/\.ts$/, ".d.ts");
  mkdirSync(dirname(target), { recursive: true });
  copyFileSync(declaration, target);
}
writeFileSync(join(OUT, "package.json"), `${JSON.stringify({ type: "commonjs" })}\n`);

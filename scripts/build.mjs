// `npm run build`: the package's two builds, from a clean dist/ (a file renamed or removed in src/
// must not linger in the package).
// - ESM and declarations: tsc -p tsconfig.build.json into dist/src/ (with bench/ and scripts/,
//   which the npm scripts run from dist/ but the package does not ship).
// - CommonJS: every file of src/ except the CLI (ESM only) transpiled one to one by esbuild into
//   dist/cjs/, with the declarations of the ESM build copied beside it. dist/cjs/package.json says
//   "commonjs", so Node and TypeScript read both the .js and the .d.ts files there as CommonJS.
import { spawnSync } from "node:child_process";
import process from "node:process";
import { copyFileSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
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

rmSync("dist", { recursive: true, force: true });
const tsc = spawnSync(process.execPath, [createRequire(import.meta.url).resolve("typescript/bin/tsc"), "-p", "tsconfig.build.json"], { stdio: "inherit" });
if (tsc.status !== 0) process.exit(tsc.status ?? 1);

const sources = walk(SRC).filter((file) => file.endsWith(".ts") && !file.endsWith(".d.ts"));
const cjs = await build({ entryPoints: sources, outdir: OUT, outbase: SRC, format: "cjs", platform: "node", target: "node20", bundle: false, logLevel: "warning" });
// A warning here is a CommonJS build that would misbehave (`import.meta` is empty in CommonJS,
// top-level await does not exist there): fail rather than ship it.
if (cjs.warnings.length > 0) {
  process.stderr.write(`build: the CommonJS build has ${cjs.warnings.length} warning(s); src/ outside src/cli must not use import.meta or top-level await.\n`);
  process.exit(1);
}
for (const file of sources) {
  const declaration = join(TYPES, relative(SRC, file)).replace(/\.ts$/, ".d.ts");
  const target = join(OUT, relative(SRC, file)).replace(/\.ts$/, ".d.ts");
  mkdirSync(dirname(target), { recursive: true });
  copyFileSync(declaration, target);
}
writeFileSync(join(OUT, "package.json"), `${JSON.stringify({ type: "commonjs" })}\n`);

// ESM for the package's `import` condition: each entry point of package.json `exports` bundled
// from src/ by esbuild, the code they share split into chunks (so that `toolwire` and
// `toolwire/schema` loaded together share one ToolwireError, one registry). Node's ESM loader
// pays per module (resolve, read, link): the 80-odd files of the root entry cost 65-70 ms of CPU
// to import, the bundle about 22. Dependencies stay imports. dist/src keeps the per-file build
// (the declarations beside it, the CLI, bench/ and scripts/ run from it).
const ESM_OUT = join("dist", "esm");
const manifest = JSON.parse(readFileSync("package.json", "utf8"));
const entryPoints = {};
for (const target of Object.values(manifest.exports)) {
  const file = typeof target === "object" ? target.import?.default : undefined;
  if (typeof file !== "string") continue;
  const entry = relative(ESM_OUT, file).replace(/\.js$/, "");
  entryPoints[entry] = join(SRC, `${entry}.ts`);
}
const esm = await build({
  entryPoints,
  outdir: ESM_OUT,
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "node",
  target: "node20",
  packages: "external",
  // Class and function names as written (errors' and classes' `name`, stack traces).
  keepNames: true,
  chunkNames: "chunks/[name]-[hash]",
  logLevel: "warning",
});
if (esm.warnings.length > 0) {
  process.stderr.write(`build: the ESM bundle has ${esm.warnings.length} warning(s).\n`);
  process.exit(1);
}

// `node scripts/check-engines.mjs [NODE_VERSION]`: the packages of package-lock.json whose
// `engines.node` excludes a Node version (default: the lowest the package claims, e.g. 20.0.0 for
// ">=20"), i.e. the ones `npm ci` on that Node prints EBADENGINE warnings for. `npm ci --dry-run`
// does not show them; this reads the lockfile, so it needs no install and no network.
// Exit code: 0 when every runtime dependency fits (dev dependencies are listed, not failed), 1 when
// a runtime dependency does not.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import process from "node:process";

const require = createRequire(import.meta.url);
const semver = require("semver");

const manifest = JSON.parse(readFileSync("package.json", "utf8"));
const lock = JSON.parse(readFileSync("package-lock.json", "utf8"));
const claimed = manifest.engines?.node ?? "*";
const node = process.argv[2] ?? semver.minVersion(claimed)?.version ?? process.versions.node;

const misfits = [];
for (const [path, info] of Object.entries(lock.packages ?? {})) {
  const range = info.engines?.node;
  if (path === "" || typeof range !== "string") continue;
  let fits;
  try {
    fits = semver.satisfies(node, range, { includePrerelease: true });
  } catch {
    fits = false;
  }
  if (!fits) misfits.push({ name: path.replace(/^.*node_modules\//, ""), path, version: info.version, range, dev: info.dev === true, optional: info.optional === true });
}

process.stdout.write(`package.json claims node ${claimed}; checked against Node ${node}: ${misfits.length} package(s) in package-lock.json exclude it\n`);
for (const misfit of misfits) {
  process.stdout.write(`  ${misfit.name}@${misfit.version} needs node ${misfit.range}${misfit.dev ? " (dev" : " (runtime"}${misfit.optional ? ", optional" : ""})${misfit.path.split("node_modules/").length > 2 ? ` at ${misfit.path}` : ""}\n`);
}
process.exit(misfits.some((misfit) => !misfit.dev) ? 1 : 0);

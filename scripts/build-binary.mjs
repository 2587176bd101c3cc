// `npm run build:binary`: toolwire's CLI as one executable file that needs no Node.js installed
// (Node's single executable applications, https://nodejs.org/api/single-executable-applications.html).
//
// 1. esbuild bundles src/cli/bin.ts and every dependency into one CommonJS file (SEA runs CommonJS;
//    the version is built in, since no package.json travels with the executable).
// 2. `node --experimental-sea-config` writes the preparation blob.
// 3. A copy of the running `node` gets the blob injected with postject (from node_modules when
//    installed, else `npm exec` fetches the pinned version from the npm registry); on macOS the
//    signature is removed before and an ad-hoc one added after.
//
// Output: dist/bin/toolwire (toolwire.exe on Windows), or `--out DIR`. Same OS and architecture as the builder.
// Exit code 0 when built; 1 with one line on stderr when a step cannot run.
import { spawnSync } from "node:child_process";
import { chmodSync, copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import process from "node:process";
import { build } from "esbuild";

const POSTJECT = "postject@1.0.0-alpha.6";
const FUSE = "NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2";
const outFlag = process.argv.indexOf("--out");
const OUT = outFlag !== -1 && process.argv[outFlag + 1] ? process.argv[outFlag + 1] : join("dist", "bin");
const bundle = join(OUT, "toolwire.cjs");
const blob = join(OUT, "toolwire.blob");
const executable = join(OUT, process.platform === "win32" ? "toolwire.exe" : "toolwire");

function fail(message) {
  process.stderr.write(`build:binary: ${message}\n`);
  process.exit(1);
}

function run(command, args, what) {
  const result = spawnSync(command, args, { stdio: ["ignore", "inherit", "inherit"], shell: process.platform === "win32" });
  if (result.error || result.status !== 0) fail(`${what} failed (${result.error?.message ?? `exit ${result.status}`})`);
}

const [major, minor] = process.versions.node.split(".").map(Number);
if (major < 20 || (major === 20 && minor < 6)) fail(`Node ${process.versions.node} cannot build single executables (20.6 or later can)`);

const { version } = JSON.parse(readFileSync("package.json", "utf8"));
rmSync(OUT, { recursive: true, force: true });
mkdirSync(OUT, { recursive: true });

await build({
  entryPoints: ["src/cli/bin.ts"],
  bundle: true,
  platform: "node",
  format: "cjs",
  target: "node20",
  outfile: bundle,
  define: { __TOOLWIRE_VERSION__: JSON.stringify(version), "import.meta.url": "__toolwire_url" },
  banner: { js: 'var __toolwire_url = require("node:url").pathToFileURL(__filename).href;' },
  logLevel: "warning",
});

writeFileSync(join(OUT, "sea-config.json"), `${JSON.stringify({ main: bundle, output: blob, disableExperimentalSEAWarning: true }, null, 2)}\n`);
run(process.execPath, ["--experimental-sea-config", join(OUT, "sea-config.json")], "node --experimental-sea-config");

copyFileSync(process.execPath, executable);
chmodSync(executable, 0o755);
if (process.platform === "darwin") run("codesign", ["--remove-signature", executable], "codesign --remove-signature");

const local = join("node_modules", ".bin", process.platform === "win32" ? "postject.cmd" : "postject");
const inject = [executable, "NODE_SEA_BLOB", blob, "--sentinel-fuse", FUSE, ...(process.platform === "darwin" ? ["--macho-segment-name", "NODE_SEA"] : [])];
if (existsSync(local)) run(local, inject, "postject");
else run("npm", ["exec", "--yes", `--package=${POSTJECT}`, "--", "postject", ...inject], `postject (${POSTJECT} from the npm registry)`);

if (process.platform === "darwin") run("codesign", ["--sign", "-", executable], "codesign --sign -");
rmSync(blob, { force: true });
process.stdout.write(`build:binary: wrote ${executable} (toolwire ${version}, Node ${process.versions.node}, ${process.platform}-${process.arch})\n`);

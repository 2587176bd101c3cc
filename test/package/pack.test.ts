import { spawn, spawnSync, type SpawnSyncReturns } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/**
 * SLOW (about 15-60 s: a full build, `npm pack` and an install). The package as a user gets it:
 * the packed tarball is installed into an empty temporary project and every entry point is loaded
 * with `import` and with `require`, and the bin is run.
 *
 * Offline by construction: the project's node_modules gets symlinks to this checkout's copies of
 * toolwire's runtime dependencies before `npm install --offline <tarball>`, so npm finds them all
 * present and only unpacks the tarball. fast-check (an optional peer) is left out at first, to
 * show that everything but `toolwire/testing/fuzz` loads without it.
 */

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const FUZZ = "toolwire/testing/fuzz";
/** Every entry of package.json `exports` (but package.json itself, and the fuzz entry, which needs fast-check). */
const SUBPATHS = Object.keys((JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { exports: Record<string, unknown> }).exports)
  .filter((subpath) => subpath !== "./package.json")
  .map((subpath) => (subpath === "." ? "toolwire" : `toolwire/${subpath.slice(2)}`))
  .filter((specifier) => specifier !== FUZZ);

let work = "";
let project = "";

function run(command: string, args: readonly string[], cwd: string): SpawnSyncReturns<string> {
  return spawnSync(command, args, { cwd, encoding: "utf8", shell: process.platform === "win32", env: { ...process.env, npm_config_update_notifier: "false" } });
}

/** `run` without blocking the worker (vitest's RPC times out when a long spawnSync holds the thread). */
function runAsync(command: string, args: readonly string[], cwd: string): Promise<SpawnSyncReturns<string>> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, shell: process.platform === "win32", env: { ...process.env, npm_config_update_notifier: "false" } });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (text: string) => void (stdout += text));
    child.stderr.setEncoding("utf8").on("data", (text: string) => void (stderr += text));
    child.on("error", reject);
    child.on("close", (status, signal) => resolve({ pid: child.pid ?? 0, output: [null, stdout, stderr], stdout, stderr, status, signal }));
  });
}

function ok(result: SpawnSyncReturns<string>, what: string): string {
  if (result.status !== 0) throw new Error(`${what} failed (${result.status}):\n${result.stdout}\n${result.stderr}`);
  return result.stdout;
}

/** Runs an ES module in the project; its stdout is JSON. */
function esm(code: string): unknown {
  return JSON.parse(ok(run(process.execPath, ["--input-type=module", "-e", code], project), `import (${code})`));
}

/** Runs a CommonJS script in the project; its stdout is JSON. */
function cjs(code: string): unknown {
  return JSON.parse(ok(run(process.execPath, ["--input-type=commonjs", "-e", code], project), `require (${code})`));
}

function linkDependency(name: string): void {
  const target = join(ROOT, "node_modules", name);
  const link = join(project, "node_modules", name);
  mkdirSync(join(link, ".."), { recursive: true });
  symlinkSync(target, link, "junction");
}

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), "toolwire-pack-"));
  // `prepack` builds the package first.
  const packed = ok(await runAsync("npm", ["pack", "--silent", "--pack-destination", work], ROOT), "npm pack").trim().split("\n").at(-1) ?? "";
  const tarball = join(work, packed);
  project = join(work, "project");
  mkdirSync(join(project, "node_modules"), { recursive: true });
  writeFileSync(join(project, "package.json"), `${JSON.stringify({ name: "toolwire-pack-test", private: true })}\n`);
  const manifest = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { dependencies: Record<string, string> };
  for (const name of Object.keys(manifest.dependencies)) linkDependency(name);
  ok(await runAsync("npm", ["install", "--offline", "--ignore-scripts", "--no-audit", "--no-fund", "--no-package-lock", tarball], project), "npm install");
}, 240_000);

afterAll(() => {
  if (work !== "") rmSync(work, { recursive: true, force: true });
});

describe("the packed tarball, installed into an empty project (slow)", () => {
  it("covers the entry points", () => {
    expect(SUBPATHS).toEqual(expect.arrayContaining(["toolwire", "toolwire/schema", "toolwire/history", "toolwire/guard", "toolwire/node", "toolwire/testing"]));
  });

  it.each(SUBPATHS)("%s loads with import and with require, with the same exports", (specifier) => {
    const imported = esm(`const m = await import(${JSON.stringify(specifier)}); console.log(JSON.stringify(Object.keys(m).filter((k) => k !== "default").sort()));`) as string[];
    const required = cjs(`console.log(JSON.stringify(Object.keys(require(${JSON.stringify(specifier)})).sort()));`) as string[];
    expect(imported.length).toBeGreaterThan(0);
    expect(required).toEqual(imported);
  });

  it("the root loads no JSON Schema validator, from either build", () => {
    const loaded = 'Object.keys(require.cache).filter((k) => /[\\\\/]ajv[\\\\/]/.test(k)).length';
    expect(cjs(`require("toolwire"); console.log(${loaded});`)).toBe(0);
    expect(esm(`import { createRequire } from "node:module"; const require = createRequire(import.meta.url); await import("toolwire"); console.log(${loaded});`)).toBe(0);
    expect(cjs(`require("toolwire/schema"); console.log(${loaded});`)).toBeGreaterThan(0);
  });

  it("an error thrown by the CommonJS copy is recognized by the ES module copy", () => {
    const seen = esm(
      'import { createRequire } from "node:module"; const esm = await import("toolwire"); const cjs = createRequire(import.meta.url)("toolwire");' +
        'let result; try { cjs.createDecoder("no-such-provider"); } catch (error) { result = { branded: esm.isToolwireError(error), code: error.code, sameClass: error instanceof esm.ToolwireError }; }' +
        "console.log(JSON.stringify(result));",
    );
    expect(seen).toEqual({ branded: true, code: "unsupported_provider", sameClass: false });
  });

  it("the ES module entries are bundles that share their code: an error from toolwire/schema is a ToolwireError of toolwire", () => {
    const seen = esm(
      'const root = await import("toolwire"); const schema = await import("toolwire/schema");' +
        'let result; try { schema.sanitizeSchema({ type: "object" }, "no-such-target"); } catch (error) { result = { code: error.code, sameClass: error instanceof root.ToolwireError, name: error.name }; }' +
        "console.log(JSON.stringify(result));",
    );
    expect(seen).toMatchObject({ sameClass: true });
    expect((seen as { code: unknown }).code).toEqual(expect.any(String));
    // Node's ES module loader pays per module (resolve, read, link): the import condition resolves to the bundle.
    expect(esm('console.log(JSON.stringify(import.meta.resolve("toolwire").replace(/^.*node_modules\\/toolwire\\//, "")))')).toBe("dist/esm/index.js");
  });

  it("toolwire/testing works without fast-check; toolwire/testing/fuzz says what it needs", () => {
    expect(cjs('const t = require("toolwire/testing"); console.log(JSON.stringify(typeof t.checkRun + " " + typeof t.parseRegression));')).toBe("function function");
    const missing = run(process.execPath, ["--input-type=module", "-e", `await import(${JSON.stringify(FUZZ)})`], project);
    expect(missing.status).not.toBe(0);
    expect(missing.stderr).toContain("fast-check");
  });

  it("toolwire/testing/fuzz loads with import and require once fast-check is installed", () => {
    linkDependency("fast-check");
    const imported = esm(`const m = await import(${JSON.stringify(FUZZ)}); console.log(JSON.stringify(Object.keys(m).sort()));`) as string[];
    const required = cjs(`console.log(JSON.stringify(Object.keys(require(${JSON.stringify(FUZZ)})).sort()));`) as string[];
    expect(imported).toContain("runFuzz");
    expect(required).toEqual(imported);
  });

  it("the bin runs", () => {
    const bin = join(project, "node_modules", ".bin", process.platform === "win32" ? "toolwire.cmd" : "toolwire");
    const help = run(bin, ["--help"], project);
    expect(help.status, help.stderr).toBe(0);
    expect(help.stdout).toContain("replay");
    const version = run(bin, ["--version"], project);
    expect(version.stdout).toBe(`${(JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { version: string }).version}\n`);
  });

  it("ships no source maps, tests, benchmarks or scripts", () => {
    const files = ok(run(process.execPath, ["-e", 'const fs = require("node:fs"); const walk = (d) => fs.readdirSync(d, { withFileTypes: true }).flatMap((e) => e.isDirectory() ? walk(d + "/" + e.name) : [d + "/" + e.name]); console.log(JSON.stringify(walk("node_modules/toolwire")));'], project), "list");
    const shipped = (JSON.parse(files) as string[]).map((file) => file.slice("node_modules/toolwire/".length));
    expect(shipped.filter((file) => file.endsWith(".map"))).toEqual([]);
    // Besides dist/: the README, the licence, package.json and the guides the README links to (docs/, issue 27).
    const rest = shipped.filter((file) => !file.startsWith("dist/src/") && !file.startsWith("dist/esm/") && !file.startsWith("dist/cjs/"));
    expect(rest.filter((file) => !file.startsWith("docs/")).sort()).toEqual(["LICENSE", "README.md", "package.json"]);
    expect(rest.filter((file) => file.startsWith("docs/") && !file.endsWith(".md"))).toEqual([]);
    const linked = [...readFileSync(join(ROOT, "README.md"), "utf8").matchAll(/\]\((docs\/[^)#]+\.md)(?:#[^)]*)?\)/g)].map((m) => m[1] as string);
    expect(linked.length).toBeGreaterThan(0);
    for (const page of new Set(linked)) expect(shipped, `README links to ${page}`).toContain(page);
    expect(shipped).toEqual(expect.arrayContaining(["docs/install.md", "docs/cli.md", "docs/ai-sdk.md", "docs/proxy.md"]));
    expect(shipped).toContain("dist/cjs/package.json");
  });

  it("npm publish --dry-run is clean (but for the login it cannot have here)", async () => {
    // The build is the one `npm pack` just made: --ignore-scripts does not build again.
    const result = await runAsync("npm", ["publish", "--dry-run", "--ignore-scripts"], ROOT);
    expect(result.status, result.stderr).toBe(0);
    const warnings = `${result.stdout}\n${result.stderr}`.split("\n").filter((line) => /\b(warn|WARN|ERR!?)\b/.test(line) && !/requires you to be logged in/.test(line));
    expect(warnings).toEqual([]);
    expect(result.stderr).toMatch(/docs\/install\.md/);
  });
});

/** The fenced js blocks of a docs page marked `<!-- run -->` (or `<!-- run: needs a b -->`: packages to link first). */
function runnableSnippets(page: string): Array<{ code: string; needs: string[] }> {
  const text = readFileSync(join(ROOT, page), "utf8");
  const found: Array<{ code: string; needs: string[] }> = [];
  const pattern = /<!-- run(?:: needs ([^>]*?))? -->\n```js\n([\s\S]*?)```/g;
  for (let match = pattern.exec(text); match !== null; match = pattern.exec(text)) {
    found.push({ needs: (match[1] ?? "").split(/\s+/).filter((name) => name !== ""), code: match[2] as string });
  }
  return found;
}

describe("the docs' snippets, run in the installed project against the installed bin's serve (slow)", () => {
  let serve: ReturnType<typeof spawn> | null = null;
  let url = "";
  beforeAll(async () => {
    const recordings = join(work, "recordings");
    mkdirSync(recordings);
    copyFileSync(join(ROOT, "testdata/openai-chat/handwritten__openai-length-mid-call.ndjson"), join(recordings, "cut.ndjson"));
    const bin = join(project, "node_modules", ".bin", process.platform === "win32" ? "toolwire.cmd" : "toolwire");
    serve = spawn(bin, ["serve", recordings, "--port", "0"], { cwd: project, shell: process.platform === "win32" });
    url = await new Promise<string>((resolve, reject) => {
      let out = "";
      serve?.stdout?.setEncoding("utf8").on("data", (text: string) => {
        out += text;
        const found = /http:\/\/127\.0\.0\.1:\d+/.exec(out);
        if (found) resolve(found[0]);
      });
      serve?.on("exit", (code) => reject(new Error(`serve exited (${code}): ${out}`)));
    });
  }, 60_000);
  afterAll(() => {
    serve?.kill();
  });

  const snippets = ["README.md", "docs/install.md", "docs/cli.md", "docs/ai-sdk.md"].flatMap((page) => runnableSnippets(page).map((snippet, i) => ({ name: `${page} #${i + 1}`, ...snippet })));

  it("finds the marked snippets", () => {
    expect(snippets.length).toBeGreaterThanOrEqual(3);
  });

  it.each(snippets)("$name runs", async ({ name, code, needs }) => {
    for (const dependency of needs) if (!existsSync(join(project, "node_modules", dependency))) linkDependency(dependency);
    const file = join(project, `snippet-${name.replace(/[^a-z0-9]+/gi, "-")}.mjs`);
    writeFileSync(file, code);
    const result = await new Promise<SpawnSyncReturns<string>>((resolve, reject) => {
      const child = spawn(process.execPath, [file], { cwd: project, env: { ...process.env, TOOLWIRE_URL: url } });
      let stdout = "";
      let stderr = "";
      child.stdout.setEncoding("utf8").on("data", (text: string) => void (stdout += text));
      child.stderr.setEncoding("utf8").on("data", (text: string) => void (stderr += text));
      child.on("error", reject);
      child.on("close", (status, signal) => resolve({ pid: child.pid ?? 0, output: [null, stdout, stderr], stdout, stderr, status, signal }));
    });
    expect(result.status, `${name}:\n${result.stdout}\n${result.stderr}`).toBe(0);
    expect(result.stdout.length).toBeGreaterThan(0);
    // A snippet that says what it prints prints that.
    const said = /^\/\/ (\S.*?)(?: \(|$)/m.exec(code.split("\n").at(-2) ?? "");
    if (said && code.trimEnd().split("\n").at(-1)?.startsWith("//")) expect(result.stdout.trim()).toBe(said[1]);
  }, 60_000);
});

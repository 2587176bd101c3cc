import { spawnSync, type SpawnSyncReturns } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { CliContext } from "../../src/cli/context.js";
import { main } from "../../src/cli/main.js";

export const REPO = fileURLToPath(new URL("../../", import.meta.url));

export interface CliRun {
  code: number;
  out: string;
  err: string;
}

/** Runs the CLI in-process, as `toolwire <args>` would in `cwd`. */
export async function cli(args: string[], options: { cwd?: string; columns?: number; rows?: number; isTTY?: boolean } = {}): Promise<CliRun> {
  let out = "";
  let err = "";
  const ctx: CliContext = {
    out: (text) => void (out += text),
    err: (text) => void (err += text),
    cwd: options.cwd ?? REPO,
    ...(options.columns !== undefined ? { columns: options.columns } : {}),
    ...(options.rows !== undefined ? { rows: options.rows } : {}),
    ...(options.isTTY !== undefined ? { isTTY: options.isTTY } : {}),
  };
  const code = await main(args, ctx);
  return { code, out, err };
}

/**
 * The CLI bundled as `npm run build:cli` bundles it (esbuild, ESM, packages external), into a
 * folder inside the repository so that it finds package.json and node_modules as the real bin does.
 */
export async function buildBin(): Promise<{ bin: string; remove(): void }> {
  const esbuild = await import("esbuild");
  mkdirSync(join(REPO, "dist"), { recursive: true });
  const outdir = mkdtempSync(join(REPO, "dist", "test-cli-"));
  await esbuild.build({
    entryPoints: [join(REPO, "src/cli/bin.ts")],
    bundle: true,
    splitting: true,
    platform: "node",
    format: "esm",
    target: "node20",
    packages: "external",
    outdir,
    logLevel: "silent",
  });
  return { bin: join(outdir, "bin.js"), remove: () => rmSync(outdir, { recursive: true, force: true }) };
}

export function runBin(bin: string, args: string[], cwd = REPO): SpawnSyncReturns<string> {
  return spawnSync(process.execPath, [bin, ...args], { cwd, encoding: "utf8", env: { ...process.env, TOOLWIRE_DEBUG: "" } });
}

/** A stack trace line, as Node prints them. */
export const STACK_LINE = /^\s+at .+[:(]/m;

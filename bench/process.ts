import { spawnSync } from "node:child_process";

/**
 * Runs a benchmark script in a Node process of its own (no configuration inherits another's heap,
 * JIT state or garbage) and returns the last line it printed. A process that fails throws with
 * its stderr.
 */
export function lastLineOfProcess(script: string, argv: readonly string[], flags: readonly string[] = []): string {
  const child = spawnSync(process.execPath, [...flags, script, ...argv], { encoding: "utf8", maxBuffer: 16 * 1024 * 1024 });
  if (child.status !== 0) throw new Error(`benchmark process failed (${argv.join(" ")}):\n${child.stderr}`);
  const lines = child.stdout.trim().split("\n");
  return lines[lines.length - 1] as string;
}

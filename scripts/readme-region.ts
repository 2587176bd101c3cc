import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

/**
 * Generated regions of the README and the guides in docs/: the text between
 * `<!-- NAME:start -->`-style markers is written by a script from code, never by hand. The table
 * scripts share this module; each writes its regions into the guide that holds them.
 */

/** A region: its two marker lines and the function that renders its text. */
export interface ReadmeRegion {
  start: string;
  end: string;
  render: () => string;
}

/** README text with the region between the markers replaced; null when the markers are missing. */
export function replaceBetween(readme: string, startMarker: string, endMarker: string, text: string): string | null {
  const start = readme.indexOf(startMarker);
  const end = readme.indexOf(endMarker);
  if (start === -1 || end === -1 || end < start) return null;
  return `${readme.slice(0, start + startMarker.length)}\n${text}\n${readme.slice(end)}`;
}

/** The text between the markers (without the surrounding newlines), or null. */
export function textBetween(readme: string, startMarker: string, endMarker: string): string | null {
  const start = readme.indexOf(startMarker);
  const end = readme.indexOf(endMarker);
  if (start === -1 || end === -1 || end < start) return null;
  return readme.slice(start + startMarker.length, end).replace(/^\n/, "").replace(/\n$/, "");
}

export type UpdateOutcome = "updated" | "up-to-date" | "out-of-date" | "no-markers" | "missing";

/** Rewrites (or, with `check`, only compares) every region of the README at `path`. */
export function updateRegions(path: string, regions: readonly ReadmeRegion[], options: { check?: boolean } = {}): UpdateOutcome {
  if (!existsSync(path)) return "missing";
  const readme = readFileSync(path, "utf8");
  let updated = readme;
  for (const region of regions) {
    const next = replaceBetween(updated, region.start, region.end, region.render());
    if (next === null) return "no-markers";
    updated = next;
  }
  if (updated === readme) return "up-to-date";
  if (options.check) return "out-of-date";
  writeFileSync(path, updated);
  return "updated";
}

/** The repository's root: the nearest directory above the script that holds a package.json. */
export function repoRootFrom(scriptUrl: string): string {
  let dir = dirname(fileURLToPath(scriptUrl));
  while (!existsSync(join(dir, "package.json"))) {
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`no package.json above ${fileURLToPath(scriptUrl)}`);
    dir = parent;
  }
  return dir;
}

/**
 * The file a script was asked for (`--file=PATH`, or the older `--readme=PATH`), else `file`
 * (a path relative to the repository's root: README.md or a guide in docs/).
 */
export function readmePathFrom(args: readonly string[], scriptUrl: string, file = "README.md"): string {
  const given = args.find((a) => a.startsWith("--file=") || a.startsWith("--readme="));
  if (given) return resolve(given.slice(given.indexOf("=") + 1));
  return join(repoRootFrom(scriptUrl), file);
}

/** Whether the module at `scriptUrl` is the script node was started with. */
export function isEntryPoint(scriptUrl: string): boolean {
  const script = process.argv[1];
  return script !== undefined && scriptUrl === pathToFileURL(resolve(script)).href;
}

/**
 * The command-line side of a generator script: `[--check] [--file=PATH]`. Updates (or checks)
 * the file (by default `file`, relative to the repository's root), prints one line saying how it
 * went, and returns the exit code (1 when the file is out of date, has no markers or is missing).
 */
export function runRegionScript(
  scriptUrl: string,
  what: string,
  script: string,
  update: (path: string, options: { check?: boolean }) => UpdateOutcome,
  file = "README.md",
): number {
  const args = process.argv.slice(2);
  const readmePath = readmePathFrom(args, scriptUrl, file);
  const outcome = update(readmePath, { check: args.includes("--check") });
  const messages: Record<UpdateOutcome, string> = {
    updated: `${readmePath}: ${what} updated\n`,
    "up-to-date": `${readmePath}: ${what} is up to date\n`,
    "out-of-date": `${readmePath}: ${what} is out of date; run node dist/scripts/${script}.js\n`,
    "no-markers": `${readmePath}: the ${what} markers are missing\n`,
    missing: `${readmePath}: not found\n`,
  };
  const ok = outcome === "updated" || outcome === "up-to-date";
  (ok ? process.stdout : process.stderr).write(messages[outcome]);
  return ok ? 0 : 1;
}

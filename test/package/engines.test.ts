import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

/**
 * Issue 29: the Node versions the package claims (`engines.node`) must hold for everything a user
 * installs. scripts/check-engines.mjs reads package-lock.json (npm ci --dry-run shows no engine
 * warnings) and exits 1 when a runtime dependency excludes the lowest claimed version; the
 * development packages that do are listed (docs/install.md says which and why): none from Node 20.19 on.
 */

const ROOT = fileURLToPath(new URL("../../", import.meta.url));

function check(version?: string) {
  return spawnSync(process.execPath, ["scripts/check-engines.mjs", ...(version ? [version] : [])], { cwd: ROOT, encoding: "utf8" });
}

describe("engines", () => {
  it("every runtime dependency accepts the lowest Node the package claims", () => {
    const result = check();
    expect(result.status, result.stdout).toBe(0);
    expect(result.stdout).toMatch(/^package\.json claims node >=20; checked against Node 20\.0\.0: \d+ package\(s\)/);
    expect(result.stdout).not.toMatch(/\(runtime/);
  });

  it("names the development packages a Node version gets EBADENGINE warnings for", () => {
    const result = check("20.20.2");
    expect(result.status).toBe(0);
    for (const line of result.stdout.trim().split("\n").slice(1)) expect(line).toMatch(/^ {2}\S+@\S+ needs node .+ \(dev/);
    expect(check("22.20.0").stdout).toMatch(/: 0 package\(s\)/);
  });

  it("npm ci on Node 20.19 or later prints no EBADENGINE: no package of the lockfile excludes it", () => {
    // The newest client majors (ai 7, openai 7) declare Node >= 22: scripts/interop-node22.sh tests
    // them on Node 22 instead of making them dev dependencies.
    for (const version of ["20.19.0", "20.20.2", "22.20.0"]) expect(check(version).stdout, version).toMatch(/: 0 package\(s\) in package-lock\.json exclude it\n$/);
  });
});

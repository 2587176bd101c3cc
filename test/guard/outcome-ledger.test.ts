import { describe, expect, it } from "vitest";
import {
  createFileMutationLedger,
  createOutcomeLedger,
  fileMutationFooter,
  mutationTargets,
  normalizePathKey,
  OUTCOME_LEDGER_DEFAULTS,
  v4aPatchTargets,
} from "../../src/guard/outcome-ledger.js";

describe("createOutcomeLedger", () => {
  it("lists failures no later success superseded, in the 'files NOT modified' footer", () => {
    const ledger = createOutcomeLedger();
    ledger.record({ tool: "patch", target: "src/a.ts", ok: false, error: "old_string not found in src/a.ts" });
    ledger.record({ tool: "write_file", target: "./src/a.ts", ok: true });
    ledger.record({ tool: "patch", target: "src/b.ts", ok: true });
    ledger.record({ tool: "patch", target: "src//b.ts", ok: false, error: "old_string matched 3 times;\nbe more specific" });
    ledger.record({ tool: "write_file", target: "docs/x/../c.md", ok: false, error: "permission denied" });
    expect(ledger.unresolved().map((e) => e.target)).toEqual(["src/b.ts", "docs/c.md"]);
    expect(ledger.succeeded()).toEqual(["src/a.ts", "src/b.ts"]);
    expect(ledger.footer()).toBe(
      [
        "Files NOT modified this turn (a call failed and no later call on the same target succeeded):",
        "- src/b.ts (patch: old_string matched 3 times; be more specific)",
        "- docs/c.md (write_file: permission denied)",
      ].join("\n"),
    );
  });

  it("has no footer when every failure was fixed, and starts over on clear", () => {
    const ledger = createOutcomeLedger({ heading: "Records NOT updated", normalizeKey: (k) => k.toLowerCase() });
    ledger.record({ tool: "update", target: "ID-1", ok: false, error: "conflict" });
    expect(ledger.footer()).toBe("Records NOT updated (a call failed and no later call on the same target succeeded):\n- id-1 (update: conflict)");
    ledger.record({ tool: "update", target: "id-1", ok: true });
    expect(ledger.footer()).toBeNull();
    ledger.clear();
    expect(ledger.entries()).toEqual([]);
  });
});

describe("normalizePathKey", () => {
  it.each([
    ["./src/a.ts", "src/a.ts"],
    ["src//a.ts", "src/a.ts"],
    ["src/x/../a.ts", "src/a.ts"],
    ["src\\\\win\\\\a.ts", "src/win/a.ts"],
    ["/abs/./p/../q", "/abs/q"],
    ["../up/a", "../up/a"],
    ["/../a", "/a"],
    [".", "."],
  ])("%s → %s", (input, expected) => {
    expect(normalizePathKey(input)).toBe(expected);
  });
});

describe("first error per target wins", () => {
  it("keeps the first failure until a success clears it, then counts again", () => {
    const ledger = createOutcomeLedger();
    ledger.record({ tool: "patch", target: "a.ts", ok: false, error: "old_string not found" });
    ledger.record({ tool: "write_file", target: "a.ts", ok: false, error: "permission denied" });
    expect(ledger.unresolved()).toMatchObject([{ target: "a.ts", tool: "patch", error: "old_string not found" }]);
    ledger.record({ tool: "write_file", target: "a.ts", ok: true });
    expect(ledger.footer()).toBeNull();
    ledger.record({ tool: "write_file", target: "a.ts", ok: false, error: "disk full" });
    expect(ledger.unresolved()).toMatchObject([{ error: "disk full" }]);
    expect(ledger.entries()).toHaveLength(4);
  });

  it("lists at most 10 targets and says how many more", () => {
    expect(OUTCOME_LEDGER_DEFAULTS.maxListed).toBe(10);
    const ledger = createOutcomeLedger();
    for (let i = 0; i < 13; i++) ledger.record({ tool: "write_file", target: `f${i}.ts`, ok: false, error: "EACCES" });
    const lines = ledger.footer()!.split("\n");
    expect(lines).toHaveLength(1 + 10 + 1);
    expect(lines[10]).toBe("- f9.ts (write_file: EACCES)");
    expect(lines[11]).toBe("- … and 3 more");
    expect(createOutcomeLedger({ maxListed: 2 }).footer()).toBeNull();
  });
});

const V4A_MULTI = [
  "*** Begin Patch",
  "*** Update File: src/app.ts",
  "@@ function main()",
  "-  return 1;",
  "+  return 2;",
  "*** Add File: src/new.ts",
  "+export const x = 1;",
  "*** Delete File: src/old.ts",
  "*** Update File: src/rename-me.ts",
  "*** Move to: src/renamed.ts",
  "@@",
  "-a",
  "+b",
  "*** End Patch",
].join("\r\n");

describe("mutationTargets / v4aPatchTargets", () => {
  it("reads the files of write_file, patch replace mode and V4A patches (single and multi-file)", () => {
    expect(mutationTargets({ name: "write_file", arguments: { path: "./src/a.ts", content: "x" } })).toEqual(["./src/a.ts"]);
    expect(mutationTargets({ name: "patch", arguments: { mode: "replace", path: "src/a.ts", old_string: "a", new_string: "b" } })).toEqual(["src/a.ts"]);
    expect(mutationTargets({ name: "patch", arguments: { path: "src/a.ts", old_string: "a", new_string: "b" } })).toEqual(["src/a.ts"]);
    expect(mutationTargets({ name: "patch", arguments: { mode: "patch", patch: "*** Begin Patch\n*** Update File: lib/one.py\n@@\n-a\n+b\n*** End Patch\n" } })).toEqual(["lib/one.py"]);
    expect(mutationTargets({ name: "patch", arguments: { mode: "patch", patch: V4A_MULTI } })).toEqual(["src/app.ts", "src/new.ts", "src/old.ts", "src/rename-me.ts", "src/renamed.ts"]);
    expect(mutationTargets({ name: "read_file", arguments: { path: "a" } })).toBeNull();
    expect(mutationTargets({ name: "patch", arguments: null })).toEqual([]);
    expect(mutationTargets({ name: "apply_patch", arguments: { input: V4A_MULTI } }, { patchTools: ["apply_patch"] })).toHaveLength(5);
  });

  it("ignores marker-like text that is not at the start of a line, and empty names", () => {
    expect(v4aPatchTargets("+ see *** Update File: x\n*** Update File:   \n*** Update File: y")).toEqual(["y"]);
  });

  it("scans a large patch in one pass", () => {
    const big = "*** Begin Patch\n" + "*** Update File: a\n+x\n".repeat(50_000) + "*** End Patch";
    expect(v4aPatchTargets(big)).toEqual(["a"]);
  });
});

describe("createFileMutationLedger / fileMutationFooter", () => {
  it("takes calls and results and gives the footer", () => {
    const footer = fileMutationFooter([
      { call: { name: "patch", arguments: { mode: "patch", patch: V4A_MULTI }, id: "c1" }, result: { ok: false, error: "context not found in src/app.ts" } },
      { call: { name: "write_file", arguments: { path: "src/new.ts", content: "x" } }, result: { ok: true } },
      { call: { name: "patch", arguments: { mode: "replace", path: "src/old.ts", old_string: "", new_string: "y" } }, result: { ok: false, error: "old_string is empty" } },
      { call: { name: "read_file", arguments: { path: "src/app.ts" } }, result: { ok: true } },
    ]);
    expect(footer).toBe(
      [
        "Files NOT modified this turn (a call failed and no later call on the same target succeeded):",
        "- src/app.ts (patch: context not found in src/app.ts)",
        "- src/old.ts (patch: context not found in src/app.ts)",
        "- src/rename-me.ts (patch: context not found in src/app.ts)",
        "- src/renamed.ts (patch: context not found in src/app.ts)",
      ].join("\n"),
    );
  });

  it("reports failed calls whose files cannot be read, and has no footer when all succeeded", () => {
    const ledger = createFileMutationLedger();
    expect(ledger.recordCall({ name: "write_file", arguments: null }, { ok: false, error: "invalid JSON" })).toEqual([]);
    expect(ledger.footer()).toBe("Files NOT modified this turn (a call failed and no later call on the same target succeeded):\n- 1 failed write_file call whose file could not be read from the arguments (invalid JSON)");
    ledger.clear();
    ledger.recordCall({ name: "write_file", arguments: { path: "a" } }, { ok: true });
    expect(ledger.footer()).toBeNull();
  });
});

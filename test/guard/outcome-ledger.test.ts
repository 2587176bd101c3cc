import { describe, expect, it } from "vitest";
import { createOutcomeLedger, normalizePathKey } from "../../src/guard/outcome-ledger.js";

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
        "Files NOT modified this turn (the last attempt failed and no later call succeeded):",
        "- src/b.ts (patch: old_string matched 3 times; be more specific)",
        "- docs/c.md (write_file: permission denied)",
      ].join("\n"),
    );
  });

  it("has no footer when every failure was fixed, and starts over on clear", () => {
    const ledger = createOutcomeLedger({ heading: "Records NOT updated", normalizeKey: (k) => k.toLowerCase() });
    ledger.record({ tool: "update", target: "ID-1", ok: false, error: "conflict" });
    expect(ledger.footer()).toBe("Records NOT updated (the last attempt failed and no later call succeeded):\n- id-1 (update: conflict)");
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

import { describe, expect, it } from "vitest";
import { createLoopGuard, fingerprintOf } from "../../src/guard/loop-guard.js";
import { validateArguments } from "../../src/schema/validate.js";
import type { ToolCallError } from "../../src/types.js";

const PATCH = {
  type: "object",
  properties: {
    mode: { type: "string", enum: ["replace", "patch"] },
    path: { type: "string" },
    old_string: { type: "string" },
    new_string: { type: "string" },
    patch: { type: "string" },
  },
  required: ["mode"],
  oneOf: [
    { properties: { mode: { const: "replace" } }, required: ["mode", "path", "old_string", "new_string"] },
    { properties: { mode: { const: "patch" } }, required: ["mode", "patch"] },
  ],
};

describe("createLoopGuard", () => {
  it("escalates at the third identical failure with the requirements and a valid example, then trips", () => {
    const guard = createLoopGuard({ schemas: { patch: PATCH } });
    // Kimi repeatedly omitted the per-mode fields (Hermes agent #15524).
    const failure = () => validateArguments(PATCH, { mode: "replace", path: "a.ts" }, { toolName: "patch" });
    const first = guard.failure("patch", failure());
    expect(first).toMatchObject({ action: "continue", count: 1, trip: false });
    expect(first.message).toBe(failure().message);
    expect(guard.failure("patch", failure()).action).toBe("continue");
    const third = guard.failure("patch", failure());
    expect(third.action).toBe("escalate");
    expect(third.message).toContain("This is attempt 3 with the same mistake. How to call 'patch':");
    expect(third.message).toContain("- When mode='replace': also path, old_string, new_string.");
    expect(third.message).toContain(`A valid call: {"mode":"replace","path":"<path>","old_string":"<old_string>","new_string":"<new_string>"}`);
    expect(guard.failure("patch", failure()).action).toBe("escalate");
    const fifth = guard.failure("patch", failure());
    expect(fifth).toMatchObject({ action: "trip", trip: true, count: 5, toolFailures: 5 });
    expect(fifth.message).toContain("STOP: 'patch' has failed 5 times in a row with the same error.");
  });

  it("resets on success", () => {
    const guard = createLoopGuard({ escalateAfter: 2, tripAfter: 3 });
    guard.failure("shell", "exit code 1: command not found: rgg");
    guard.success("shell");
    expect(guard.failures("shell")).toBe(0);
    expect(guard.failure("shell", "exit code 1: command not found: rgg").count).toBe(1);
  });

  it("counts each fingerprint separately and ignores the values in it", () => {
    const guard = createLoopGuard({ escalateAfter: 2 });
    const a = guard.failure("read", validateArguments(PATCH, { mode: "replace", path: "a.ts" }));
    const b = guard.failure("read", validateArguments(PATCH, { mode: "replace", path: "b.ts" }));
    expect(b.fingerprint).toBe(a.fingerprint);
    expect(b.action).toBe("escalate");
    const other = guard.failure("read", validateArguments(PATCH, { mode: "patch" }));
    expect(other.fingerprint).not.toBe(a.fingerprint);
    expect(other).toMatchObject({ count: 1, toolFailures: 3, action: "continue" });
  });

  it("fingerprints decoder errors by code and text errors without numbers, quotes or hashes", () => {
    const truncated: ToolCallError = { code: "truncated", message: "The call was cut off at 4096 tokens." };
    expect(fingerprintOf(truncated)).toBe("call:truncated");
    expect(fingerprintOf("ENOENT: no such file 'src/a.ts' (errno 2)")).toBe(fingerprintOf("ENOENT: no such file 'lib/b.ts' (errno 2)"));
    expect(fingerprintOf("commit 1a2b3c4d5e6f failed after 3 tries")).toBe(fingerprintOf("commit 99aa88bb77cc failed after 4 tries"));
    expect(fingerprintOf({ message: "x", fingerprint: "custom" })).toBe("custom");
  });

  it("escalates without a schema too, and never throws on a schema that does not compile", () => {
    const guard = createLoopGuard({ escalateAfter: 1, schemas: () => ({ type: 5 }) as never });
    const decision = guard.failure("x", "bad");
    expect(decision.action).toBe("escalate");
    expect(decision.message).toContain("Re-read the tool's parameter descriptions");
  });
});

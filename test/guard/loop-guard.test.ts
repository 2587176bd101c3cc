import { describe, expect, it } from "vitest";
import { createLoopGuard, exampleCalls, fingerprintOf, LOOP_GUARD_DEFAULTS } from "../../src/guard/loop-guard.js";
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
    expect(third.message).toContain(`A valid call with mode='replace': {"mode":"replace","path":"<path>","old_string":"<old_string>","new_string":"<new_string>"}`);
    expect(third.message).toContain(`A valid call with mode='patch': {"mode":"patch","patch":"<patch>"}`);
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

  it("escalates a model that varies its mistakes: missing field, then wrong type, then bad JSON", () => {
    const guard = createLoopGuard({ schemas: { patch: PATCH } });
    const a = guard.failure("patch", validateArguments(PATCH, { mode: "replace", path: "a.ts" }, { toolName: "patch" }));
    const b = guard.failure("patch", validateArguments(PATCH, { mode: "replace", path: 5, old_string: "x", new_string: "y" }, { toolName: "patch" }));
    expect(b.fingerprint).not.toBe(a.fingerprint);
    expect(b).toMatchObject({ action: "continue", count: 1, toolFailures: 2 });
    const c = guard.failure("patch", { code: "invalid_json", message: "The arguments are not valid JSON: unexpected end of input." });
    expect(c).toMatchObject({ action: "escalate", count: 1, toolFailures: 3 });
    expect(c.message).toContain("This is failure 3 in a row of 'patch' (not always the same mistake). How to call 'patch':");
    expect(c.message).toContain("- Required: mode.");
    expect(c.message).toContain("- When mode='replace': also path, old_string, new_string.");
    expect(c.message).toContain("- When mode='patch': also patch.");
    expect(c.message).toContain(`A valid call with mode='patch': {"mode":"patch","patch":"<patch>"}`);
    guard.failure("patch", "old_string not found");
    const fifth = guard.failure("patch", validateArguments(PATCH, {}, { toolName: "patch" }));
    expect(fifth).toMatchObject({ action: "trip", toolFailures: 5 });
    expect(fifth.message).toContain("STOP: 'patch' has failed 5 times in a row. Do not call it again this way");
  });

  it("counts per tool: another tool's failures and successes do not touch it; its own success resets it", () => {
    const guard = createLoopGuard({ escalateAfter: 2 });
    guard.failure("read", "ENOENT: no such file 'a.ts'");
    guard.failure("write", "EACCES");
    guard.success("write");
    expect(guard.failure("read", "EISDIR").action).toBe("escalate");
    guard.success("read");
    expect(guard.failure("read", "EISDIR")).toMatchObject({ action: "continue", toolFailures: 1 });
  });

  it("still fingerprints mistakes: the same one repeated is reported as such", () => {
    const guard = createLoopGuard({ escalateAfter: 2 });
    const a = guard.failure("read", validateArguments(PATCH, { mode: "replace", path: "a.ts" }));
    const b = guard.failure("read", validateArguments(PATCH, { mode: "replace", path: "b.ts" }));
    expect(b.fingerprint).toBe(a.fingerprint);
    expect(b).toMatchObject({ action: "escalate", count: 2 });
    expect(b.message).toContain("This is attempt 2 with the same mistake.");
  });

  it("builds one example per mode for if/then conditional requirements", () => {
    const schema = {
      type: "object",
      properties: { action: { enum: ["get", "put"] }, key: { type: "string" }, value: { type: "string" } },
      required: ["action", "key"],
      allOf: [{ if: { properties: { action: { const: "put" } } }, then: { required: ["value"] } }],
    };
    expect(exampleCalls(schema)).toEqual([{ mode: "action='put'", value: { action: "put", key: "<key>", value: "<value>" } }]);
    expect(exampleCalls({ type: "object", properties: { q: { type: "string" } }, required: ["q"] })).toEqual([{ mode: "", value: { q: "<q>" } }]);
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

describe("beforeCall: repeated identical calls", () => {
  it("blocks the same tool with equal arguments at the third call in a row, even when every call succeeded", () => {
    expect(LOOP_GUARD_DEFAULTS.maxIdenticalCalls).toBe(3);
    const guard = createLoopGuard();
    const args = { path: "src/a.ts", limit: 100 };
    expect(guard.beforeCall("read_file", args)).toMatchObject({ action: "run", identicalCalls: 1, reason: null, message: null, block: false });
    guard.success("read_file");
    // Key order does not make a call different.
    expect(guard.beforeCall("read_file", { limit: 100, path: "src/a.ts" })).toMatchObject({ action: "run", identicalCalls: 2 });
    guard.success("read_file");
    const third = guard.beforeCall("read_file", args);
    expect(third).toMatchObject({ action: "block", identicalCalls: 3, reason: "identical_calls", block: true });
    expect(third.message).toContain("Not run: this is call 3 in a row of 'read_file' with the same arguments");
    expect(third.message).toContain('"src/a.ts"');
    // It keeps refusing until the arguments change.
    expect(guard.beforeCall("read_file", args)).toMatchObject({ action: "block", identicalCalls: 4 });
    expect(guard.beforeCall("read_file", { path: "src/b.ts" })).toMatchObject({ action: "run", identicalCalls: 1 });
  });

  it("keeps a streak per tool: calls of other tools in between do not break it", () => {
    const guard = createLoopGuard({ maxIdenticalCalls: 2 });
    expect(guard.beforeCall("search", { q: "x" }).action).toBe("run");
    expect(guard.beforeCall("read_file", { path: "a" }).action).toBe("run");
    expect(guard.beforeCall("search", { q: "x" })).toMatchObject({ action: "block", identicalCalls: 2 });
    guard.reset("search");
    expect(guard.beforeCall("search", { q: "x" }).action).toBe("run");
  });

  it("is configurable per tool and can be turned off", () => {
    const guard = createLoopGuard({ maxIdenticalCalls: (tool) => (tool === "wait" ? 0 : 3) });
    for (let i = 0; i < 10; i++) expect(guard.beforeCall("wait", { seconds: 5 }).action).toBe("run");
    const off = createLoopGuard({ maxIdenticalCalls: 0 });
    for (let i = 0; i < 10; i++) expect(off.beforeCall("read_file", { path: "a" }).action).toBe("run");
  });
});

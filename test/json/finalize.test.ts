import { describe, expect, it } from "vitest";
import { finalizeArguments, type ArgumentSources, type FinalizeContext } from "../../src/json/finalize.js";

const complete: FinalizeContext = { toolName: "shell", complete: true, emptyMeansNoArguments: true };

function decide(sources: Partial<ArgumentSources>, ctx: Partial<FinalizeContext> = {}) {
  return finalizeArguments({ deltaText: "", ...sources }, { ...complete, ...ctx });
}

describe("rule 1: a final snapshot that parses wins", () => {
  it("uses the final object over the deltas", () => {
    const result = decide({ deltaText: '{"a":1}', final: { value: { a: 1 } } });
    expect(result).toMatchObject({ arguments: { a: 1 }, source: "final", error: null, repairs: [] });
    expect(result.diagnostics).toEqual([]);
  });

  it("reports a final snapshot that disagrees with the deltas", () => {
    const result = decide({ deltaText: '{"a":1}', final: { text: '{"a":2}' } });
    expect(result.arguments).toEqual({ a: 2 });
    expect(result.diagnostics.map((d) => d.code)).toEqual(["final_differs_from_delta"]);
  });

  it("falls back to the deltas when the final snapshot is unusable, and says so", () => {
    const result = decide({ deltaText: '{"a":1}', final: { text: "[1,2]" } });
    expect(result).toMatchObject({ arguments: { a: 1 }, source: "delta" });
    expect(result.diagnostics.map((d) => d.code)).toContain("final_unusable");
  });
});

describe("rule 2: a delta stream that parses as one object wins over start", () => {
  it("Kimi: equal start and delta count once", () => {
    const result = decide({ start: { command: "ls" }, deltaText: '{"command":"ls"}' });
    expect(result).toMatchObject({ arguments: { command: "ls" }, source: "delta", repairs: [] });
    expect(result.diagnostics.map((d) => d.code)).toEqual(["start_input_repeated"]);
  });

  it("a different start input is superseded, with a warning", () => {
    const result = decide({ start: { command: "ls" }, deltaText: '{"command":"pwd"}' });
    expect(result.arguments).toEqual({ command: "pwd" });
    expect(result.diagnostics[0]).toMatchObject({ code: "start_input_superseded", severity: "warning" });
  });

  it("a double-encoded object string is decoded and named", () => {
    const result = decide({ deltaText: JSON.stringify(JSON.stringify({ city: "Paris" })) });
    expect(result).toMatchObject({ arguments: { city: "Paris" }, repairs: ["decoded_string"] });
  });

  it("valid JSON that is not an object is an error, never wrapped", () => {
    const result = decide({ deltaText: "[1,2,3]" });
    expect(result.arguments).toBeNull();
    expect(result.error?.code).toBe("not_object");
    expect(result.error?.message).toContain("not an object");
  });
});

describe("rule 3: shapes classified before any repair", () => {
  it("collapses identical repeated objects", () => {
    const result = decide({ deltaText: '{"a":1}{"a":1}' });
    expect(result).toMatchObject({ arguments: { a: 1 }, source: "delta", repairs: ["collapsed_duplicate"] });
  });

  it("recognizes cumulative resends and keeps the last", () => {
    const result = decide({ deltaText: '{}{"stock":"MS"}{"stock":"MSFT","n":2}' });
    expect(result).toMatchObject({ arguments: { stock: "MSFT", n: 2 }, repairs: ["cumulative_resend"] });
  });

  it("merges a start input continued by the deltas (Kimi continuation)", () => {
    const result = decide({ start: { pattern: "*.c" }, deltaText: ',"path":"demo/rogue/original-rogue"}' });
    expect(result).toMatchObject({
      arguments: { pattern: "*.c", path: "demo/rogue/original-rogue" },
      source: "merged",
      repairs: ["start_continuation"],
      error: null,
    });
  });

  it("different complete objects glued together are split, one call each (issue 17)", () => {
    const result = decide({ deltaText: '{"path":"a.py"} {"path":"b.py"}{"path":"c.py"}' });
    expect(result).toMatchObject({ arguments: { path: "a.py" }, rawArguments: '{"path":"a.py"}', source: "delta", repairs: ["split_concatenated_calls"], error: null });
    expect(result.split).toEqual([
      { value: { path: "b.py" }, raw: '{"path":"b.py"}' },
      { value: { path: "c.py" }, raw: '{"path":"c.py"}' },
    ]);
  });

  it("anything short of several complete objects stays one invalid call", () => {
    for (const text of ['{"a":1}{"b":', '{"a":1} x {"b":2}', '{"a":1}[2]', '{"a":1}{"b":2']) {
      const result = decide({ deltaText: text });
      expect(result.arguments, text).toBeNull();
      expect(result.split, text).toBeUndefined();
      expect(result.error?.code, text).toBe("invalid_json");
    }
  });
});

describe("rule 4: gated syntax repair on complete calls only", () => {
  it("records an aggressive jsonrepair fix by name", () => {
    // jsonrepair quotes a bare word; the value is kept, but never silently.
    const result = decide({ deltaText: '{"path": "a.txt", "mode": replace}' });
    expect(result).toMatchObject({ arguments: { path: "a.txt", mode: "replace" }, repairs: ["jsonrepair"] });
  });

  it.each([
    ['```json\n{"a":1}\n```', { a: 1 }, ["strip_code_fence"]],
    ['{"a":1}<|call|>', { a: 1 }, ["strip_special_tokens"]],
    ['{"a": True, "b": None}', { a: true, b: null }, ["python_literals"]],
    ['{"re":"\\d+"}', { re: "\\d+" }, ["invalid_escapes"]],
    ['{"a":1,}', { a: 1 }, ["trailing_comma"]],
    ['{"a":[1, 2], "b": "x"', { a: [1, 2], b: "x" }, ["missing_closing_brace"]],
    ["{'a': 'x'}", { a: "x" }, ["single_quotes"]],
  ] as const)("repairs %s and names the fix", (text, value, repairs) => {
    const result = decide({ deltaText: text });
    expect(result.arguments).toEqual(value);
    expect(result.repairs).toEqual(repairs);
    expect(result.source).toBe("delta");
  });

  it("never completes cut-off JSON, even on a complete call", () => {
    const result = decide({ deltaText: '{"command":"ls' });
    expect(result.arguments).toBeNull();
    expect(result.error?.code).toBe("invalid_json");
    expect(result.error?.message).toContain("ends before it is complete");
  });

  it("never repairs a truncated call", () => {
    const result = decide({ deltaText: '{"a":1,}' }, { complete: false, truncationCause: "max_tokens" });
    expect(result).toMatchObject({ arguments: null, source: null });
    expect(result.error).toMatchObject({ code: "truncated", cause: "max_tokens" });
    expect(result.error?.message).toContain("max_tokens");
    // The model is told to send less per call, not to resend the same oversized call.
    expect(result.error?.message).toContain("split the content over several smaller calls");
    expect(result.error?.message).not.toContain("Send the call again");
  });
});

describe("rule 5: start, then empty", () => {
  it("a start input with no deltas is the arguments", () => {
    expect(decide({ start: { command: "ls" } })).toMatchObject({ arguments: { command: "ls" }, source: "start" });
  });

  it("whitespace-only deltas keep the start input", () => {
    expect(decide({ start: { command: "ls" }, deltaText: "  " })).toMatchObject({ arguments: { command: "ls" }, source: "start" });
  });

  it("invalid deltas fall back to a start input, with a warning", () => {
    const result = decide({ start: { command: "ls" }, deltaText: "{{{" });
    expect(result).toMatchObject({ arguments: { command: "ls" }, source: "start" });
    expect(result.diagnostics.map((d) => d.code)).toEqual(["delta_unusable_used_start"]);
  });

  it("nothing at all is {} only where the protocol means no arguments", () => {
    expect(decide({})).toMatchObject({ arguments: {}, source: "empty", error: null });
    const strict = decide({}, { emptyMeansNoArguments: false });
    expect(strict.arguments).toBeNull();
    expect(strict.error?.code).toBe("invalid_json");
  });
});

describe("rule 6: invalid JSON carries an actionable error", () => {
  it("says what, where, and what a valid call looks like", () => {
    const result = decide({ deltaText: '{"path": "a.txt", : "replace"}' });
    expect(result.arguments).toBeNull();
    expect(result.rawArguments).toBe('{"path": "a.txt", : "replace"}');
    expect(result.error?.code).toBe("invalid_json");
    expect(result.error?.position).toBe(18);
    expect(result.error?.message).toContain('"path": ...');
    expect(result.error?.message).toContain("shell");
  });
});

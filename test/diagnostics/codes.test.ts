import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { DOC_FILE, renderCodesPage, updateCodesPage } from "../../scripts/gen-codes-page.js";
import { describeCode, DIAGNOSTIC_CODES, isDiagnosticCode, type CodeInfo, type DiagnosticCode } from "../../src/diagnostics/codes.js";
import type { RepairCode, ToolCallErrorCode } from "../../src/types.js";
import { SCHEMA_TARGETS, TARGETS } from "../../src/schema/targets/index.js";
import { CODE_SHAPE, RULE_SHAPE, scanEmittedCodes } from "../helpers/code-scan.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));

describe("the registry of diagnostic, repair and error codes", () => {
  const { codes, prefixes } = scanEmittedCodes(ROOT);
  const registered = Object.keys(DIAGNOSTIC_CODES);

  it("holds every code src/ emits", () => {
    expect(codes.size).toBeGreaterThan(200);
    const missing = [...codes].filter(([code]) => !isDiagnosticCode(code)).map(([code, sites]) => `${code} (${sites.map((s) => `${s.file}:${s.line}`).join(", ")})`);
    expect(missing, "add these codes to src/diagnostics/codes.ts, then run node dist/scripts/gen-codes-page.js").toEqual([]);
  });

  it("holds every schema rule of every target (their ids are built in several ways, so they are read from TARGETS)", () => {
    const ids = new Set(SCHEMA_TARGETS.flatMap((target) => TARGETS[target].rules.map((rule) => rule.id)));
    expect(ids.size).toBeGreaterThan(30);
    expect([...ids].filter((id) => !isDiagnosticCode(id))).toEqual([]);
    for (const id of ids) if (isDiagnosticCode(id)) expect(DIAGNOSTIC_CODES[id].kinds as readonly string[], id).toContain("schema_rule");
  });

  it("holds the codes built from templates, and every prefix has some", () => {
    expect([...prefixes.keys()].sort()).toEqual(["eventstream_", "source_", "sse_", "strip_"]);
    for (const prefix of prefixes.keys()) expect(registered.filter((code) => code.startsWith(prefix)).length, prefix).toBeGreaterThan(1);
  });

  it("lists no code that src/ never emits", () => {
    const rules = new Set(SCHEMA_TARGETS.flatMap((target) => TARGETS[target].rules.map((rule) => rule.id)));
    const stale = registered.filter((code) => !codes.has(code) && !rules.has(code) && ![...prefixes.keys()].some((prefix) => code.startsWith(prefix)));
    expect(stale).toEqual([]);
  });

  it("gives each code a kind, a severity, a meaning and an action", () => {
    for (const [code, info] of Object.entries(DIAGNOSTIC_CODES) as Array<[string, CodeInfo]>) {
      expect(code === "strip_$ref" || CODE_SHAPE.test(code) || (RULE_SHAPE.test(code) && info.kinds.includes("schema_rule")), code).toBe(true);
      expect(info.kinds.length, code).toBeGreaterThan(0);
      expect(["info", "warning", "error"], code).toContain(info.severity);
      expect(info.meaning.length, code).toBeGreaterThan(20);
      expect(info.action.length, code).toBeGreaterThan(10);
    }
    expect(describeCode("truncated")?.kinds).toContain("call_error");
    expect(describeCode("no_such_code")).toBeUndefined();
  });

  it("covers the typed unions of repair and call-error codes (a type-level check)", () => {
    const repairs: DiagnosticCode[] = ["collapsed_duplicate", "minted_id"] satisfies RepairCode[];
    const errors: DiagnosticCode[] = ["truncated", "invalid_json"] satisfies ToolCallErrorCode[];
    // RepairCode and ToolCallErrorCode must be subsets of DiagnosticCode: this line fails to compile otherwise.
    const subset = <T extends DiagnosticCode>(values: readonly T[]) => values;
    subset<RepairCode>(repairs as RepairCode[]);
    subset<ToolCallErrorCode>(errors as ToolCallErrorCode[]);
    for (const code of [...repairs, ...errors]) expect(isDiagnosticCode(code)).toBe(true);
  });

  it("finds codes however they are written (a scan of a sample tree)", () => {
    const root = mkdtempSync(join(tmpdir(), "toolwire-codes-"));
    const src = join(root, "src", "providers");
    mkdirSync(src, { recursive: true });
    writeFileSync(
      join(src, "sample.ts"),
      [
        'warn("sample_warned", "A sample.");',
        'callDiag(state, "sample_call", "info", "A sample about a call.");',
        'turn.push({ code: flag ? "sample_a" : "sample_b", severity: "info", message: "x" });',
        'throw new ToolwireError("sample_thrown", "no");',
        'class SampleError extends ToolwireError { constructor() { super("sample_super", "no"); } }',
        'codes.push("sample_listed");',
        'export type RepairCode = "sample_typed" | "sample_typed_2";',
        'const code = `sample_${kind}`;',
        'something("not_a_code");',
      ].join("\n"),
    );
    const scan = scanEmittedCodes(root);
    expect([...scan.codes.keys()].sort()).toEqual(["sample_a", "sample_b", "sample_call", "sample_listed", "sample_super", "sample_thrown", "sample_typed", "sample_typed_2", "sample_warned"]);
    expect([...scan.prefixes.keys()]).toEqual(["sample_"]);
  });
});

describe("docs/reference/codes.md", () => {
  it("is generated from the registry — if this fails, run: npm run build && node dist/scripts/gen-codes-page.js", () => {
    expect(readFileSync(join(ROOT, DOC_FILE), "utf8")).toBe(renderCodesPage());
  });

  it("lists every code once, and updates a file in place", () => {
    const page = renderCodesPage();
    for (const code of Object.keys(DIAGNOSTIC_CODES)) expect(page).toContain(`| \`${code}\` |`);
    const file = join(mkdtempSync(join(tmpdir(), "toolwire-codes-page-")), "codes.md");
    expect(updateCodesPage(file, { check: true })).toBe("out-of-date");
    expect(updateCodesPage(file)).toBe("updated");
    expect(updateCodesPage(file, { check: true })).toBe("up-to-date");
  });
});

import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { currentRegion, DOC_FILE, END_MARKER, renderTextCallsTable, START_MARKER, updateReadme } from "../../scripts/gen-text-calls-table.js";
import { TEXT_CALL_SYNTAXES } from "../../src/text-calls/syntaxes.js";
import { LONGEST_MARKER } from "../../src/text-calls/extractor.js";

// The table lives in the text-calls guide (docs/text-calls.md), linked from the README.
const README = fileURLToPath(new URL(`../../${DOC_FILE}`, import.meta.url));
const readme = existsSync(README) ? readFileSync(README, "utf8") : "";

describe("text-call syntaxes table", () => {
  it("has one row per syntax of the registry", () => {
    const rows = renderTextCallsTable()
      .split("\n")
      .filter((line) => line.startsWith("| `"));
    expect(rows.map((row) => /^\| `([^`]+)`/.exec(row)?.[1])).toEqual(TEXT_CALL_SYNTAXES.map((s) => s.name));
  });

  it("updates a README region in place", () => {
    const file = join(mkdtempSync(join(tmpdir(), "toolwire-readme-")), "README.md");
    writeFileSync(file, `# x\n\n${START_MARKER}\n${END_MARKER}\n\nrest\n`);
    expect(updateReadme(file, { check: true })).toBe("out-of-date");
    expect(updateReadme(file)).toBe("updated");
    expect(updateReadme(file, { check: true })).toBe("up-to-date");
    expect(readFileSync(file, "utf8").endsWith(`\n${END_MARKER}\n\nrest\n`)).toBe(true);
  });

  it("docs/text-calls.md's region equals renderTextCallsTable() — if this fails, run: npm run build && node dist/scripts/gen-text-calls-table.js", () => {
    expect(currentRegion(readme)).toBe(renderTextCallsTable());
  });

  it("the guide states the longest marker the code holds back", () => {
    expect(readme).toContain(`at most the longest marker, ${LONGEST_MARKER} characters`);
  });
});

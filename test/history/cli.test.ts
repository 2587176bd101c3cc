import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { main } from "../../src/cli/main.js";
import { EXIT } from "../../src/cli/context.js";
import { checkHistory, type HistoryFormat } from "../../src/history/index.js";

const ROOT = join(import.meta.dirname, "..", "..");
const DATA = "testdata/history";

async function run(...args: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = "";
  let err = "";
  const code = await main(["history", ...args], { out: (text) => void (out += text), err: (text) => void (err += text), cwd: ROOT });
  return { code, out, err };
}

function messagesOf(document: unknown, format: HistoryFormat): unknown[] {
  if (Array.isArray(document)) return document;
  const key = format === "gemini" ? "contents" : format === "openai-responses" ? "input" : "messages";
  return (document as Record<string, unknown[]>)[key] as unknown[];
}

const FAULTY: Array<[string, HistoryFormat, string[]]> = [
  ["anthropic-aborted-run.json", "anthropic", ["empty_text", "invalid_call_id", "result_not_leading", "missing_result"]],
  ["openai-chat-trimmed-window.json", "openai-chat", ["orphan_result", "missing_result", "invalid_call_id", "invalid_call"]],
  ["openai-responses-missing-output.json", "openai-responses", ["missing_result"]],
  ["gemini-lost-response.json", "gemini", ["missing_result", "response_count_mismatch"]],
  ["bedrock-split-results.json", "bedrock", ["result_not_adjacent", "empty_error_result", "roles_not_alternating"]],
];

describe("toolwire history check", () => {
  it("reports no fault and exits 0 on a valid history", async () => {
    const { code, out } = await run("check", `${DATA}/anthropic-valid.json`, "--format", "anthropic");
    expect(code).toBe(EXIT.ok);
    expect(out).toBe(`${DATA}/anthropic-valid.json (anthropic): no faults in 4 messages\n`);
  });

  it.each(FAULTY)("%s: lists each fault with its message index, exits 1", async (file, format, codes) => {
    const { code, out } = await run("check", `${DATA}/${file}`, "--format", format);
    expect(code).toBe(EXIT.findings);
    for (const fault of codes) expect(out).toMatch(new RegExp(`message \\d+\\s+${fault}\\s`));
  });

  it("--json gives one object with the faults", async () => {
    const { code, out } = await run("check", `${DATA}/anthropic-aborted-run.json`, "--format", "anthropic", "--json");
    expect(code).toBe(EXIT.findings);
    const report = JSON.parse(out) as { ok: boolean; format: string; messages: number; faults: Array<{ code: string; index: number; ids: string[] }> };
    expect(report).toMatchObject({ ok: false, format: "anthropic", messages: 5 });
    expect(report.faults).toContainEqual(expect.objectContaining({ code: "missing_result", index: 3, ids: ["toolu_01Gho1LhNQt7FjqEiiHkrVMK"] }));
  });

  it("--ids and --thinking change what is a fault", async () => {
    expect((await run("check", `${DATA}/anthropic-valid.json`, "--format", "anthropic", "--ids", "mistral")).code).toBe(EXIT.findings);
    const lost = await run("check", `${DATA}/anthropic-thinking-lost.json`, "--format", "anthropic", "--thinking", "off");
    expect(lost.code).toBe(EXIT.ok);
  });
});

describe("toolwire history repair", () => {
  let dir = "";
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "toolwire-history-"));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it.each(FAULTY)("%s: repaired file on stdout passes the check, report on stderr", async (file, format) => {
    const { code, out, err } = await run("repair", `${DATA}/${file}`, "--format", format);
    expect(code).toBe(EXIT.ok);
    expect(err).toMatch(new RegExp(`^${DATA}/${file} \\(${format}\\): \\d+ edits?\\n`));
    const original = JSON.parse(await readFile(join(ROOT, DATA, file), "utf8")) as unknown;
    const repaired = JSON.parse(out) as unknown;
    expect(checkHistory(messagesOf(repaired, format), format)).toEqual([]);
    // The rest of the request body is kept.
    if (!Array.isArray(original)) expect(Object.keys(repaired as object)).toEqual(Object.keys(original as object));
  });

  it("leaves a valid history byte-for-byte equal (unknown fields included)", async () => {
    const { code, out, err } = await run("repair", `${DATA}/anthropic-valid.json`, "--format", "anthropic");
    expect(code).toBe(EXIT.ok);
    expect(err).toContain("nothing to repair");
    expect(JSON.parse(out)).toEqual(JSON.parse(await readFile(join(ROOT, DATA, "anthropic-valid.json"), "utf8")));
  });

  it("--out writes the file and prints the report; --json reports edits and the id map", async () => {
    const target = join(dir, "fixed.json");
    const written = await run("repair", `${DATA}/openai-chat-trimmed-window.json`, "--format", "openai-chat", "--out", target);
    expect(written.code).toBe(EXIT.ok);
    expect(written.out).toContain("id_remapped");
    const fixed = JSON.parse(await readFile(target, "utf8")) as { messages: unknown[] };
    expect(checkHistory(fixed.messages, "openai-chat")).toEqual([]);

    const json = await run("repair", `${DATA}/openai-chat-trimmed-window.json`, "--format", "openai-chat", "--json");
    const report = JSON.parse(json.out) as { ok: boolean; edits: Array<{ code: string }>; idMap: { toOriginal: Record<string, string> }; history: { messages: unknown[] } };
    expect(report.ok).toBe(true);
    expect(report.edits.map((edit) => edit.code)).toEqual(expect.arrayContaining(["orphan_result_to_text", "id_remapped", "invalid_call_replaced", "result_inserted"]));
    expect(Object.values(report.idMap.toOriginal)).toEqual(["fc_68b14140a1c88193a6417aabd97428b40b003345362caed7ab"]);
    expect(report.history.messages).toEqual(fixed.messages);
  });

  it("--policy drop removes dangling calls and orphan results instead", async () => {
    const { out } = await run("repair", `${DATA}/openai-chat-trimmed-window.json`, "--format", "openai-chat", "--policy", "drop", "--json");
    const codes = (JSON.parse(out) as { edits: Array<{ code: string }> }).edits.map((edit) => edit.code);
    expect(codes).toEqual(expect.arrayContaining(["orphan_result_dropped", "invalid_call_dropped"]));
    expect(codes).not.toContain("result_inserted");
  });

  it("a fault the policy keeps exits 1 and is listed", async () => {
    const { code, err } = await run("repair", `${DATA}/anthropic-thinking-lost.json`, "--format", "anthropic", "--policy", "thinking=keep");
    expect(code).toBe(EXIT.findings);
    expect(err).toContain("Left in place:");
    expect(err).toContain("missing_thinking");
    const converted = await run("repair", `${DATA}/anthropic-thinking-lost.json`, "--format", "anthropic");
    expect(converted.code).toBe(EXIT.ok);
    expect(converted.err).toContain("tool_exchange_to_text");
  });
});

describe("toolwire history: usage and input errors", () => {
  it.each([
    [["check", `${DATA}/anthropic-valid.json`, "--format", "cohere"], EXIT.usage, "unknown format 'cohere'"],
    [["lint", `${DATA}/anthropic-valid.json`, "--format", "anthropic"], EXIT.usage, "expected 'check' or 'repair'"],
    [["repair", `${DATA}/anthropic-valid.json`, "--format", "anthropic", "--policy", "dangling=maybe"], EXIT.usage, "unknown policy entry 'dangling=maybe'"],
    [["check", `${DATA}/anthropic-valid.json`, "--format", "anthropic", "--ids", "uuid"], EXIT.usage, "unknown id rule 'uuid'"],
    [["check", `${DATA}/anthropic-valid.json`, "--format", "anthropic", "--policy", "drop"], EXIT.usage, "apply to 'repair' only"],
    [["check", `${DATA}/missing.json`, "--format", "anthropic"], EXIT.input, "cannot read 'testdata/history/missing.json': no such file"],
    [["check", `${DATA}/not-json.json`, "--format", "anthropic"], EXIT.input, "is not valid JSON"],
    [["check", `${DATA}/no-messages.json`, "--format", "openai-chat"], EXIT.input, 'with a "messages" list'],
  ])("%j → exit %i", async (args, expected, text) => {
    const { code, err } = await run(...args);
    expect(code).toBe(expected);
    expect(err).toContain(text);
  });

  it("--help prints the usage", async () => {
    const { code, out } = await run("--help");
    expect(code).toBe(EXIT.ok);
    expect(out).toContain("Usage: toolwire history check|repair <file.json> [--format F]");
  });
});

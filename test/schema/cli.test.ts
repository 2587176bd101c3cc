import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { run, summary, usage } from "../../src/cli/commands/schema.js";
import { CliError, EXIT, type CliContext } from "../../src/cli/context.js";
import { main } from "../../src/cli/main.js";

let dir: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "toolwire-schema-"));
  const write = (name: string, value: unknown) => writeFileSync(join(dir, name), typeof value === "string" ? value : JSON.stringify(value));
  write("clean.json", { type: "object", properties: { path: { type: "string" } }, required: ["path"] });
  write("keys.json", { type: "object", properties: { "filter[id]": { type: "string" }, q: { type: "string" } } });
  write("tools.json", [
    { type: "function", function: { name: "read", parameters: { type: "object", properties: { path: { type: "string", pattern: "\\S" } } } } },
    { name: "edit", input_schema: { type: "object", properties: { "a b": { type: "string" } }, anyOf: [{ required: ["a b"] }] } },
  ]);
  write("broken.json", "{ not json");
  write("gemini.json", { tools: [{ functionDeclarations: [{ name: "find", parameters: { type: "object", properties: { q: { type: ["string", "null"] }, "a b": { const: 1 } } } }] }, { googleSearch: {} }] });
});

async function invoke(args: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = "";
  let err = "";
  const ctx: CliContext = { out: (t) => void (out += t), err: (t) => void (err += t), cwd: dir };
  try {
    return { code: await run(args, ctx), out, err };
  } catch (error) {
    if (error instanceof CliError) return { code: error.exitCode, out, err: err + error.message };
    throw error;
  }
}

describe("toolwire schema", () => {
  it("has a summary and a usage listing the targets", () => {
    expect(summary).toMatch(/JSON Schema/);
    expect(usage).toContain("openai-strict, anthropic, anthropic-strict, gemini, xai, llamacpp, kimi, fireworks, bedrock");
  });

  it("check exits 0 when the target accepts the schema", async () => {
    const { code, out } = await invoke(["check", "clean.json", "--target", "anthropic"]);
    expect(code).toBe(EXIT.ok);
    expect(out).toBe("clean.json: ok for anthropic\n");
  });

  it("check exits with findings and lists them", async () => {
    const { code, out } = await invoke(["check", "keys.json", "--target=anthropic"]);
    expect(code).toBe(EXIT.findings);
    expect(out).toContain("keys.json: 1 problem for anthropic");
    expect(out).toContain(`property keys not matching ^[a-zA-Z0-9_.-]{1,64}$: "filter[id]" [anthropic-keys, fixable]`);
  });

  it("check --json reports per tool", async () => {
    const { code, out } = await invoke(["check", "tools.json", "-t", "llamacpp", "--json"]);
    expect(code).toBe(EXIT.findings);
    const report = JSON.parse(out) as { target: string; results: Array<{ name: string; problems: Array<{ rule: string }> }> };
    expect(report.target).toBe("llamacpp");
    expect(report.results.map((r) => r.name)).toEqual(["read", "edit"]);
    expect(report.results[0]!.problems.map((p) => p.rule)).toEqual(["llamacpp-patterns"]);
    expect(report.results[1]!.problems.map((p) => p.rule)).toEqual(["top-level-combinators"]);
  });

  it("sanitize prints the document with each schema rewritten, changes on stderr", async () => {
    const { code, out, err } = await invoke(["sanitize", "tools.json", "--target", "anthropic"]);
    expect(code).toBe(EXIT.ok);
    const doc = JSON.parse(out) as [{ function: { name: string } }, { input_schema: { properties: object; anyOf?: unknown } }];
    expect(doc[0].function.name).toBe("read");
    expect(doc[1].input_schema.properties).toHaveProperty("a_b");
    expect(doc[1].input_schema.anyOf).toBeUndefined();
    expect(err).toContain("edit: 2 changes for anthropic");
    expect(err).toContain(`renamed "a b" → "a_b"`);
  });

  it("sanitize --json includes changes and the argument map", async () => {
    const { code, out } = await invoke(["sanitize", "keys.json", "--target", "gemini", "--json"]);
    expect(code).toBe(EXIT.ok);
    const report = JSON.parse(out) as { results: Array<{ schema: { properties: object }; changes: unknown[]; argumentMap: unknown[] }> };
    expect(Object.keys(report.results[0]!.schema.properties)).toEqual(["filter_id_", "q"]);
    expect(report.results[0]!.argumentMap).toHaveLength(1);
  });

  it("accepts target aliases", async () => {
    expect((await invoke(["check", "clean.json", "--target", "ollama"])).code).toBe(EXIT.ok);
  });

  it("exits with a usage error listing the targets for an unknown target", async () => {
    const { code, err } = await invoke(["check", "clean.json", "--target", "mistral"]);
    expect(code).toBe(EXIT.usage);
    expect(err).toContain("unknown target 'mistral'. Expected one of: openai, openai-strict");
  });

  it("exits with an input error for unreadable or invalid JSON files", async () => {
    const missing = await invoke(["check", "nope.json", "--target", "openai"]);
    expect(missing.code).toBe(EXIT.input);
    expect(missing.err).toContain("cannot read 'nope.json': no such file or directory");
    const broken = await invoke(["sanitize", "broken.json", "--target", "openai"]);
    expect(broken.code).toBe(EXIT.input);
    expect(broken.err).toContain("'broken.json' is not valid JSON");
  });

  it("exits with a usage error for missing arguments", async () => {
    // A bare schema names no provider: without --target it is an input error (issue 29: detected where the file says).
    expect((await invoke(["check", "clean.json"])).code).toBe(EXIT.input);
    expect((await invoke(["lint", "clean.json", "--target", "openai"])).code).toBe(EXIT.usage);
    expect((await invoke(["check", "--target", "openai"])).code).toBe(EXIT.usage);
  });

  it("is wired into the toolwire entry point", async () => {
    let out = "";
    let err = "";
    const ctx: CliContext = { out: (t) => void (out += t), err: (t) => void (err += t), cwd: dir };
    expect(await main(["schema", "--help"], ctx)).toBe(EXIT.ok);
    expect(out).toContain("Usage: toolwire schema check <schema.json> [--target T] [--json]");
    expect(await main(["schema", "check", "keys.json", "--target", "bedrock"], ctx)).toBe(EXIT.findings);
    expect(await main(["schema", "check", "keys.json", "--target", "nope"], ctx)).toBe(EXIT.usage);
    expect(err).toContain("toolwire schema: unknown target 'nope'. Expected one of:");
  });

  it("sanitize reads tool lists with the library's sanitizeTools: Gemini declarations and built-ins keep their shape", async () => {
    const { code, out } = await invoke(["sanitize", "gemini.json", "--target", "gemini", "--json"]);
    expect(code).toBe(EXIT.ok);
    const report = JSON.parse(out) as { results: Array<{ name: string }>; document: { tools: Array<Record<string, unknown>> } };
    expect(report.results.map((r) => r.name)).toEqual(["find"]);
    expect(report.document.tools[1]).toEqual({ googleSearch: {} });
    const params = (report.document.tools[0]!.functionDeclarations as Array<{ parameters: { properties: Record<string, unknown> } }>)[0]!.parameters;
    expect(params.properties.q).toEqual({ type: "string", nullable: true });
    expect(Object.keys(params.properties)).toEqual(["q", "a_b"]);
    const checked = await invoke(["check", "gemini.json", "--target", "gemini", "--json"]);
    expect((JSON.parse(checked.out) as { results: Array<{ name: string }> }).results.map((r) => r.name)).toEqual(["find"]);
  });
});

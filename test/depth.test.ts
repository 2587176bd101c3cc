/**
 * Input nested thousands of levels deep (tool input in a history, a schema) used to overflow the
 * stack: `toolwire history check|repair` and `toolwire schema sanitize` died with exit 70. The
 * library refuses it with TooDeepError (`too_deep`) before any recursive walk; the CLI exits with
 * its documented input error and one line.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { main } from "../src/cli/main.js";
import { EXIT } from "../src/cli/context.js";
import { isToolwireError } from "../src/errors.js";
import { DEFAULT_LIMITS, TooDeepError } from "../src/limits.js";
import { checkHistory, convertHistory, fromNeutral, HISTORY_FORMATS, MAX_HISTORY_DEPTH, repairHistory, toNeutral, type HistoryFormat } from "../src/history/index.js";
import { checkSchema, sanitizeSchema, validateArguments } from "../src/schema/index.js";
import { explainValue } from "../src/schema/validate.js";

const DEEP = 2000;

function nestedArrays(depth: number): unknown {
  let value: unknown = 1;
  for (let i = 0; i < depth; i++) value = [value];
  return value;
}

function nestedObjects(depth: number): Record<string, unknown> {
  let value: Record<string, unknown> = { leaf: true };
  for (let i = 1; i < depth; i++) value = { a: value };
  return value;
}

function nestedSchema(levels: number): Record<string, unknown> {
  let schema: Record<string, unknown> = { type: "string" };
  for (let i = 0; i < levels; i++) schema = { type: "object", properties: { a: schema } };
  return schema;
}

/** A history whose one call has `input` as its arguments (and whose result is missing). */
function historyWith(format: HistoryFormat, input: unknown): unknown[] {
  switch (format) {
    case "anthropic":
      return [{ role: "user", content: "go" }, { role: "assistant", content: [{ type: "tool_use", id: "toolu_1", name: "x", input }] }];
    case "openai-chat":
      return [{ role: "user", content: "go" }, { role: "assistant", content: null, tool_calls: [{ id: "call_1", type: "function", function: { name: "x", arguments: "{}" } }] }, { role: "tool", tool_call_id: "call_1", content: [{ type: "text", text: "r", extra: input }] }];
    case "openai-responses":
      return [{ role: "user", content: "go" }, { type: "function_call", call_id: "call_1", name: "x", arguments: "{}" }, { type: "function_call_output", call_id: "call_1", output: [{ type: "input_text", text: "r", extra: input }] }];
    case "gemini":
      return [{ role: "user", parts: [{ text: "go" }] }, { role: "model", parts: [{ functionCall: { name: "x", args: input } }] }];
    case "bedrock":
      return [{ role: "user", content: [{ text: "go" }] }, { role: "assistant", content: [{ toolUse: { toolUseId: "t1", name: "x", input } }] }];
  }
}

function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  return null;
}

function expectTooDeep(fn: () => unknown, what: string): void {
  const error = thrown(fn);
  expect(error).toBeInstanceOf(TooDeepError);
  expect(isToolwireError(error) && error.code).toBe("too_deep");
  expect((error as TooDeepError).what).toBe(what);
}

describe.each(HISTORY_FORMATS)(`history nested ${DEEP} levels deep (%s)`, (format) => {
  const deepObjects = historyWith(format, { value: nestedObjects(DEEP) });
  const deepArrays = historyWith(format, { value: nestedArrays(DEEP) });

  it("checkHistory, repairHistory, convertHistory, toNeutral throw TooDeepError", () => {
    for (const history of [deepObjects, deepArrays]) {
      expectTooDeep(() => checkHistory(history, format), "history");
      expectTooDeep(() => repairHistory(history, format), "history");
      expectTooDeep(() => convertHistory(history, format, format === "anthropic" ? "gemini" : "anthropic"), "history");
      expectTooDeep(() => toNeutral(history, format), "history");
    }
  });

  it("arguments as deep as the decoders accept still go through", () => {
    const history = historyWith(format, nestedObjects(DEFAULT_LIMITS.maxDepth));
    expect(() => repairHistory(history, format)).not.toThrow();
    expect(checkHistory(history, format).map((fault) => fault.code)).not.toContain("malformed_message");
  });
});

it.each(["openai-chat", "openai-responses"] as const)("%s: arguments text nested 20,000 deep is refused the same way", (format) => {
  const text = `{"a":${"[".repeat(20_000)}1${"]".repeat(20_000)}}`;
  const history =
    format === "openai-chat"
      ? [{ role: "user", content: "go" }, { role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "x", arguments: text } }] }]
      : [{ role: "user", content: "go" }, { type: "function_call", call_id: "c1", name: "x", arguments: text }];
  expectTooDeep(() => checkHistory(history, format), "history");
  expectTooDeep(() => repairHistory(history, format), "history");
});

it("fromNeutral refuses deep neutral messages too", () => {
  const neutral = [{ role: "assistant" as const, parts: [{ type: "tool_call" as const, id: "c", name: "x", arguments: nestedObjects(MAX_HISTORY_DEPTH + 1) }] }];
  expectTooDeep(() => fromNeutral(neutral, "anthropic"), "history");
});

describe("schemas nested 2,000 levels deep", () => {
  const deepSchema = nestedSchema(DEEP);
  const deepData = { type: "object", properties: { a: { type: "string", default: nestedArrays(DEEP) } } };

  it("sanitizeSchema, checkSchema and validateArguments throw TooDeepError", () => {
    for (const schema of [deepSchema, deepData]) {
      for (const target of ["gemini", "openai-strict", "llamacpp"]) expectTooDeep(() => sanitizeSchema(schema, target), "schema");
      expectTooDeep(() => checkSchema(schema, "anthropic"), "schema");
      expectTooDeep(() => validateArguments(schema, { a: "x" }), "schema");
      expectTooDeep(() => explainValue(schema, { a: 1 }), "schema");
    }
  });

  it("a schema at the limit is handled", () => {
    const schema = nestedSchema(DEFAULT_LIMITS.maxDepth / 2 - 1);
    expect(sanitizeSchema(schema, "gemini").schema).toBeTruthy();
    expect(validateArguments(schema, { a: 5 }).issues).toEqual([expect.objectContaining({ code: "type", path: ["a"] })]);
  });

  it("arguments nested deeper than the decoders accept are invalid with one too_deep issue", () => {
    const result = validateArguments({ type: "object", additionalProperties: { type: "array" } }, { value: nestedArrays(DEEP) }, { coerce: true });
    expect(result.valid).toBe(false);
    expect(result.issues).toEqual([expect.objectContaining({ code: "too_deep", path: [], expected: DEFAULT_LIMITS.maxDepth })]);
    expect(result.message).toContain("send flatter arguments");
  });
});

describe("CLI on input nested 2,000 levels deep", () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "toolwire-depth-"));
    await writeFile(join(dir, "history.json"), JSON.stringify(historyWith("anthropic", { value: nestedArrays(DEEP) })));
    await writeFile(join(dir, "schema.json"), JSON.stringify(nestedSchema(DEEP)));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  async function run(...args: string[]): Promise<{ code: number; out: string; err: string }> {
    let out = "";
    let err = "";
    const code = await main(args, { out: (text) => void (out += text), err: (text) => void (err += text), cwd: dir });
    return { code, out, err };
  }

  it.each([
    ["history", "check", "history.json", "--format", "anthropic"],
    ["history", "repair", "history.json", "--format", "anthropic"],
    ["schema", "sanitize", "schema.json", "--target", "gemini"],
    ["schema", "check", "schema.json", "--target", "gemini"],
  ])("toolwire %s %s exits with the input error code and one line", async (...args) => {
    const { code, out, err } = await run(...args);
    expect(code).toBe(EXIT.input);
    expect(out).toBe("");
    expect(err).toMatch(/^toolwire (history|schema): The (history|schema) nests more than \d+ levels deep, deeper than toolwire accepts; nothing was processed\. \(too_deep\)\n$/);
  });
});

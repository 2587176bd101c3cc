import { describe, expect, it } from "vitest";
import { compileSchema, SchemaCompileError } from "../../src/schema/compile.js";
import { validateArguments } from "../../src/schema/validate.js";

/** Hermes agent's patch tool (B8): per-mode requirements that models (Kimi, #15524) kept missing. */
const PATCH_ONEOF = {
  type: "object",
  properties: {
    mode: { type: "string", enum: ["replace", "patch"], default: "replace" },
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

const PATCH_IF_THEN = {
  type: "object",
  properties: PATCH_ONEOF.properties,
  required: ["mode"],
  allOf: [
    { if: { properties: { mode: { const: "replace" } }, required: ["mode"] }, then: { required: ["path", "old_string", "new_string"] } },
    { if: { properties: { mode: { const: "patch" } }, required: ["mode"] }, then: { required: ["patch"] } },
  ],
};

/** Hermes' kanban_complete: "at least one of summary or result". */
const KANBAN = {
  type: "object",
  properties: { summary: { type: "string" }, result: { type: "string" } },
  anyOf: [{ required: ["summary"] }, { required: ["result"] }],
};

const READ_FILE = {
  type: "object",
  properties: { path: { type: "string" }, offset: { type: "integer", minimum: 0 }, limit: { type: "integer", minimum: 1 } },
  required: ["path"],
  additionalProperties: false,
};

describe("validateArguments: messages a model can act on", () => {
  it("names the branch the call was closest to and what it still needs", () => {
    const result = validateArguments(PATCH_ONEOF, { mode: "replace" }, { toolName: "patch" });
    expect(result.valid).toBe(false);
    expect(result.message).toContain("Invalid arguments for tool 'patch':");
    expect(result.message).toContain("mode='replace' requires path, old_string, new_string");
    expect(result.issues[0]).toMatchObject({ code: "conditional", fields: ["path", "old_string", "new_string"] });
  });

  it("lists only what is still missing when part of the branch is there", () => {
    const result = validateArguments(PATCH_ONEOF, { mode: "replace", path: "a.ts" });
    expect(result.message).toContain("mode='replace' requires path, old_string, new_string (missing: old_string, new_string)");
  });

  it("says the same for if/then conditionals", () => {
    expect(validateArguments(PATCH_IF_THEN, { mode: "replace" }).message).toContain("mode='replace' requires path, old_string, new_string");
    expect(validateArguments(PATCH_IF_THEN, { mode: "patch" }).message).toContain("mode='patch' requires patch");
    expect(validateArguments(PATCH_IF_THEN, { mode: "patch", patch: "@@" }).valid).toBe(true);
  });

  it("turns required-only anyOf branches into 'provide at least one of'", () => {
    const result = validateArguments(KANBAN, {});
    expect(result.message).toContain("provide at least one of: summary, result");
    expect(result.issues).toHaveLength(1);
    expect(validateArguments(KANBAN, { result: "done" }).valid).toBe(true);
  });

  it("says 'only one of' when a oneOf of required sets matches twice", () => {
    const schema = { type: "object", properties: { url: { type: "string" }, file: { type: "string" } }, oneOf: [{ required: ["url"] }, { required: ["file"] }] };
    expect(validateArguments(schema, {}).message).toContain("provide exactly one of: url, file");
    expect(validateArguments(schema, { url: "u", file: "f" }).message).toContain("provide only one of: url or file (received url, file)");
  });

  it("reports type mismatches with the path and the value received", () => {
    const result = validateArguments(READ_FILE, { path: "src/a.ts", limit: "50" });
    expect(result.message).toContain(`at 'limit': expected integer, received string "50"`);
    expect(result.issues[0]).toMatchObject({ code: "type", path: ["limit"], expected: ["integer"], received: "50" });
  });

  it("reports missing fields, unknown fields (with a suggestion) and bounds together", () => {
    const result = validateArguments(READ_FILE, { lmit: 0, offset: -1 });
    expect(result.message).toContain("missing required field: path");
    expect(result.message).toContain("unknown field 'lmit'; did you mean 'limit'?");
    expect(result.message).toContain("at 'offset': must be >= 0; received number -1");
  });

  it("gives nested paths inside arrays", () => {
    const schema = {
      type: "object",
      properties: { edits: { type: "array", items: { type: "object", properties: { old: { type: "string" }, new: { type: "string" } }, required: ["old", "new"] } } },
      required: ["edits"],
    };
    const result = validateArguments(schema, { edits: [{ old: "a", new: "b" }, { old: "c" }, { old: 1, new: "d" }] });
    expect(result.message).toContain("at 'edits[1]': missing required field: new");
    expect(result.message).toContain("at 'edits[2].old': expected string, received number 1");
  });

  it("reads nullable unions as one expectation", () => {
    const schema = { type: "object", properties: { timeout: { anyOf: [{ type: "integer" }, { type: "null" }] } } };
    expect(validateArguments(schema, { timeout: "soon" }).message).toContain(`at 'timeout': expected integer or null, received string "soon"`);
  });

  it("lists allowed enum values", () => {
    expect(validateArguments(PATCH_ONEOF, { mode: "rewrite" }).message).toContain("at 'mode': must be one of 'replace', 'patch'; received 'rewrite'");
  });

  it("explains errors behind recursive $refs at their real location", () => {
    const schema = {
      type: "object",
      $defs: { node: { type: "object", properties: { value: { type: "integer" }, next: { $ref: "#/$defs/node" } }, required: ["value"] } },
      properties: { list: { $ref: "#/$defs/node" } },
    };
    const result = validateArguments(schema, { list: { value: 1, next: { next: { value: "x" } } } });
    expect(result.message).toContain("at 'list.next': missing required field: value");
    expect(result.message).toContain(`at 'list.next.next.value': expected integer, received string "x"`);
  });

  it("never mutates the arguments", () => {
    const args = Object.freeze({ path: "a", limit: Object.freeze(["5"]) });
    expect(() => validateArguments(READ_FILE, args, { coerce: true })).not.toThrow();
  });

  it("throws SchemaCompileError for a schema that is not JSON Schema", () => {
    expect(() => validateArguments({ type: "object", properties: { a: { type: 5 } } }, {})).toThrow(SchemaCompileError);
  });
});

describe("validateArguments: coercion", () => {
  const schema = {
    type: "object",
    properties: {
      count: { type: "integer" },
      ratio: { type: "number" },
      force: { type: "boolean" },
      note: { type: ["string", "null"] },
      retries: { type: ["integer", "null"] },
      id: { type: "string" },
      options: { type: "object", properties: { depth: { type: "integer" } } },
      paths: { type: "array", items: { type: "string" } },
    },
  };

  it("is off by default", () => {
    const result = validateArguments(schema, { count: "5" });
    expect(result.valid).toBe(false);
    expect(result.coercions).toEqual([]);
  });

  it("applies only where the schema asks for the type, and lists what it did", () => {
    const args = { count: "5", ratio: "0.5", force: "true", note: "null", retries: "null", id: "5", options: '{"depth": "2"}', paths: "src/a.ts" };
    const result = validateArguments(schema, args, { coerce: true });
    expect(result.valid).toBe(true);
    // "null" stays a string where a string is accepted; it becomes null only where it is not.
    expect(result.value).toEqual({ count: 5, ratio: 0.5, force: true, note: "null", retries: null, id: "5", options: { depth: 2 }, paths: ["src/a.ts"] });
    expect(result.coercions.map((c) => `${c.path.join(".")}:${c.kind}`)).toEqual([
      "count:number",
      "ratio:number",
      "force:boolean",
      "retries:null",
      "options:json",
      "options.depth:number",
      "paths:array",
    ]);
    expect(args.count).toBe("5");
  });

  it("does not coerce a valid call, nor values that do not convert cleanly", () => {
    const valid = validateArguments(schema, { id: "5" }, { coerce: true });
    expect(valid.coercions).toEqual([]);
    const result = validateArguments(schema, { count: "5.5", force: "yes" }, { coerce: true });
    expect(result.valid).toBe(false);
    expect(result.coercions).toEqual([]);
    expect(result.message).toContain(`at 'count': expected integer, received string "5.5"`);
  });

  it("can be limited to some kinds", () => {
    const result = validateArguments(schema, { count: "5", force: "true" }, { coerce: ["boolean"] });
    expect(result.valid).toBe(false);
    expect(result.coercions).toEqual([{ path: ["force"], kind: "boolean", from: "true", to: true }]);
    expect(result.message).toContain("Already converted: force");
  });
});

describe("compileSchema", () => {
  it("compiles once per schema object and once per distinct schema text", () => {
    const a = { type: "object", properties: { x: { type: "string" } } };
    const b = JSON.parse(JSON.stringify(a)) as typeof a;
    expect(compileSchema(a)).toBe(compileSchema(a));
    expect(compileSchema(b).validate).toBe(compileSchema(a).validate);
  });

  it("keeps schemas with the same $id apart", () => {
    const one = { $id: "https://example.com/tool", type: "object", properties: { a: { type: "string" } }, required: ["a"] };
    const two = { $id: "https://example.com/tool", type: "object", properties: { b: { type: "string" } }, required: ["b"] };
    expect(compileSchema(one).validate({ a: "x" })).toBe(true);
    expect(compileSchema(two).validate({ b: "x" })).toBe(true);
    expect(compileSchema(two).validate({ a: "x" })).toBe(false);
  });
});

describe("validateArguments: older drafts and OpenAPI", () => {
  it("reads draft-07 schemas (zod-to-json-schema output) as their authors meant", () => {
    const schema = {
      $schema: "http://json-schema.org/draft-07/schema#",
      type: "object",
      properties: {
        point: { type: "array", items: [{ type: "number" }, { type: "number" }], additionalItems: false },
        count: { type: "integer", minimum: 0, exclusiveMinimum: true },
        start: { type: "integer" },
        end: { type: "integer" },
        note: { type: "string", nullable: true },
      },
      dependencies: { start: ["end"] },
      definitions: { unused: { type: "string" } },
    };
    expect(validateArguments(schema, { point: [1, 2], count: 1, start: 1, end: 2, note: null }).valid).toBe(true);
    const result = validateArguments(schema, { point: [1, "x", 3], count: 0, start: 1 });
    expect(result.message).toContain(`at 'point[1]': expected number, received string "x"`);
    expect(result.message).toContain("at 'count': must be > 0; received number 0");
    expect(result.message).toContain("start requires end (missing: end)");
    expect(result.message).toContain("at 'point': must have at most 2 items; received 3");
  });
});

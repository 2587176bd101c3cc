import { describe, expect, it } from "vitest";
import { buildExample, conditionText, formatPath, requirementLines, suggestKey } from "../../src/schema/hints.js";
import type { SchemaNode } from "../../src/schema/json-schema.js";
import { isValid } from "../../src/schema/validate.js";

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

describe("buildExample", () => {
  const cases: Array<[string, SchemaNode]> = [
    ["discriminated oneOf", PATCH],
    ["at least one of", { type: "object", properties: { summary: { type: "string" }, result: { type: "string" } }, anyOf: [{ required: ["summary"] }, { required: ["result"] }] }],
    [
      "if/then",
      {
        type: "object",
        properties: { mode: { enum: ["replace", "patch"] }, path: { type: "string" } },
        required: ["mode"],
        allOf: [{ if: { properties: { mode: { const: "replace" } } }, then: { required: ["path"] } }],
      },
    ],
    [
      "formats and bounds",
      {
        type: "object",
        properties: {
          when: { type: "string", format: "date-time" },
          id: { type: "string", format: "uuid" },
          name: { type: "string", minLength: 3, maxLength: 5 },
          count: { type: "integer", minimum: 2, multipleOf: 2 },
          ratio: { type: "number", exclusiveMinimum: 0, maximum: 1 },
          tags: { type: "array", items: { type: "string" }, minItems: 2 },
        },
        required: ["when", "id", "name", "count", "ratio", "tags"],
      },
    ],
    [
      "$ref and nested objects",
      {
        type: "object",
        $defs: { range: { type: "object", properties: { start: { type: "integer", minimum: 1 }, end: { type: "integer" } }, required: ["start", "end"] } },
        properties: { range: { $ref: "#/$defs/range" }, opts: { type: "object", properties: { dry: { type: "boolean" } }, required: ["dry"] } },
        required: ["range", "opts"],
      },
    ],
    ["dependentRequired", { type: "object", properties: { start: { type: "integer" }, end: { type: "integer" } }, required: ["start"], dependentRequired: { start: ["end"] } }],
  ];

  it.each(cases)("builds a valid call for %s", (_name, schema) => {
    const example = buildExample(schema);
    expect(example).toBeDefined();
    expect(isValid(schema, example!.value)).toBe(true);
  });

  it("uses const, enum, default and examples first", () => {
    const schema = { type: "object", properties: { a: { const: 1 }, b: { enum: ["x", "y"] }, c: { type: "string", default: "d" }, d: { type: "integer", examples: [7] } }, required: ["a", "b", "c", "d"] };
    expect(buildExample(schema)!.value).toEqual({ a: 1, b: "x", c: "d", d: 7 });
  });

  it("gives up rather than return an invalid example", () => {
    expect(buildExample({ type: "object", properties: { code: { type: "string", pattern: "^[A-Z]{3}-\\d{4}$" } }, required: ["code"] })).toBeUndefined();
  });
});

describe("requirementLines", () => {
  it("states required and conditional fields", () => {
    expect(requirementLines(PATCH)).toEqual(["Required: mode.", "When mode='replace': also path, old_string, new_string.", "When mode='patch': also patch."]);
  });

  it("states at-least-one groups", () => {
    expect(requirementLines({ type: "object", anyOf: [{ required: ["summary"] }, { required: ["result"] }] })).toEqual(["Provide at least one of: summary, result."]);
  });
});

describe("conditionText", () => {
  it("reads const, enum and required conditions", () => {
    expect(conditionText({ properties: { mode: { const: "replace" } }, required: ["mode"] })).toBe("mode='replace'");
    expect(conditionText({ properties: { kind: { enum: ["a", "b"] } } })).toBe("kind in ('a', 'b')");
    expect(conditionText({ required: ["path"] })).toBe("path is given");
    expect(conditionText({ properties: { n: { const: 3 } }, required: ["x"] })).toBe("n=3 and x is given");
  });
});

describe("formatPath and suggestKey", () => {
  it("formats argument paths", () => {
    expect(formatPath([])).toBe("");
    expect(formatPath(["edits", 0, "old_string"])).toBe("edits[0].old_string");
    expect(formatPath(["filter[id]", "x"])).toBe('["filter[id]"].x');
  });

  it("suggests the closest declared key", () => {
    expect(suggestKey("file_path", ["path", "filePath"])).toBe("filePath");
    expect(suggestKey("lmit", ["limit", "offset"])).toBe("limit");
    expect(suggestKey("zzz", ["limit", "offset"])).toBeNull();
  });
});

describe("buildExample for a discriminated union", () => {
  it("fills each field from its declared schema", () => {
    expect(buildExample(PATCH)!.value).toEqual({ mode: "replace", path: "<path>", old_string: "<old_string>", new_string: "<new_string>" });
  });
});

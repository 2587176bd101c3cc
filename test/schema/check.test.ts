import { describe, expect, it } from "vitest";
import { checkSchema } from "../../src/schema/check.js";
import type { SchemaNode } from "../../src/schema/json-schema.js";
import { SCHEMA_TARGETS } from "../../src/schema/targets/index.js";

/** A schema every target accepts as it is. */
const PORTABLE = {
  type: "object",
  properties: {
    path: { type: "string", description: "File path." },
    limit: { type: "integer", description: "Lines to read." },
    mode: { type: "string", enum: ["head", "tail"] },
  },
  required: ["path", "limit", "mode"],
};

describe("checkSchema", () => {
  it.each(SCHEMA_TARGETS)("finds only the target's own object rule in a portable schema for %s", (target) => {
    // No single object shape suits everyone: strict modes need additionalProperties:false (which
    // Gemini's Schema rejects) and xAI needs an explicit additionalProperties:true.
    const own: Record<string, string> = { "openai-strict": "strict-objects", "anthropic-strict": "closed-objects", xai: "explicit-open-objects" };
    expect(checkSchema(PORTABLE, target).map((p) => p.rule)).toEqual(own[target] ? [own[target]] : []);
  });

  it("reports schemas that are not JSON Schema", () => {
    const problems = checkSchema({ type: "object", properties: { a: { type: "strng" } } }, "openai");
    expect(problems.some((p) => p.rule === "json-schema" && p.severity === "error" && !p.fixable)).toBe(true);
    expect(checkSchema("object", "openai")[0]).toMatchObject({ rule: "root-object", message: "the schema is not a JSON object" });
  });

  // Each case is an error text reported against a real tool catalog.
  it.each<[string, SchemaNode, string, string]>([
    ["anthropic", { type: "object", properties: { a: { type: "string" } }, anyOf: [{ required: ["a"] }] }, "top-level-combinators", "input_schema does not support oneOf, allOf, or anyOf at the top level"],
    ["anthropic", { type: "object", properties: { "filter[id]": { type: "string" } } }, "anthropic-keys", "Property keys should match pattern '^[a-zA-Z0-9_.-]{1,64}$'"],
    ["openai-strict", { type: "object", properties: { p: { type: "object", properties: { r: { type: "boolean" } } } }, required: ["p"], additionalProperties: false }, "strict-objects", "'additionalProperties' is required to be supplied and to be false"],
    ["openai-strict", { type: "object", properties: { read: { type: "string" }, limit: { type: "integer" } }, required: ["read"], additionalProperties: false }, "strict-objects", "'required' … Missing 'limit'"],
    ["gemini", { type: "object", properties: { tags: { type: "array" } } }, "json-encode", "properties[tags].items: missing field"],
    ["gemini", { type: "object", properties: { x: { type: "string" } }, additionalProperties: false }, "gemini-allow-list", 'Unknown name "additionalProperties" … Cannot find field'],
    ["gemini", { type: "object", properties: { c: { const: "a" } } }, "const-to-enum", 'Unknown name "const"'],
    ["llamacpp", { type: "object", properties: { s: { type: "string", pattern: ".*\\S.*" } } }, "llamacpp-patterns", "Pattern must start with '^' and end with '$'"],
    ["llamacpp", { type: "object", properties: { id: { type: "string", pattern: "^\\d+$" } } }, "llamacpp-patterns", "failed to parse grammar"],
    ["kimi", { type: "object", properties: { task: { description: "What to do." } } }, "json-encode", "At path 'properties.task': type is not defined"],
    ["kimi", { type: "object", properties: { a: { type: "string", anyOf: [{ minLength: 1 }, { format: "date" }] } } }, "type-beside-anyof", "when using anyOf, type should be defined in anyOf items"],
    ["kimi", { type: "object", properties: { a: { $ref: "#/$defs/a", description: "x" } }, $defs: { a: { type: "string" } } }, "inline-refs-siblings", "conflicting keywords found after $ref expansion: description"],
    ["fireworks", { type: "object", properties: { a: { $ref: "#/$defs/a", default: null } }, $defs: { a: { type: "string" } } }, "ref-default", "keyword(s) ['default'] not allowed at the same level as $ref"],
    ["xai", { type: "object", properties: { m: { type: "string", enum: ["Qwen/Qwen3.5-0.8B"] } } }, "slash-enum", "Invalid arguments passed to the model"],
  ])("%s: %j → %s (%s)", (target, schema, rule) => {
    const problems = checkSchema(schema, target);
    expect(problems.map((p) => p.rule)).toContain(rule);
    expect(problems.find((p) => p.rule === rule)!.fixable).toBe(true);
  });

  it("warns about documented size limits it cannot fix", () => {
    const many = Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`p${i}`, { type: "string" }]));
    const problems = checkSchema({ type: "object", properties: many, additionalProperties: false }, "anthropic-strict");
    expect(problems.find((p) => p.rule === "anthropic-strict-limits")).toMatchObject({ severity: "warning", fixable: false, message: "30 optional parameters (limit 24 across all strict tools)" });
  });

  it("reports external refs as unfixable for targets that inline", () => {
    const problems = checkSchema({ type: "object", properties: { a: { $ref: "https://example.com/a.json" } } }, "gemini");
    expect(problems.find((p) => p.message.includes("external"))).toMatchObject({ path: "#/properties/a", severity: "error", fixable: false });
    expect(checkSchema({ type: "string" }, "openai")).toEqual([
      { rule: "root-object", severity: "error", path: "#", message: "the root is of type string; tool arguments are always an object", fixable: false },
    ]);
  });
});

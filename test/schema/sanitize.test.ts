import { describe, expect, it } from "vitest";
import { checkSchema } from "../../src/schema/check.js";
import { stableStringify, type SchemaNode } from "../../src/schema/json-schema.js";
import { carryToolArguments, restoreToolArguments, sanitizeSchema, targetSchemaAsJsonSchema } from "../../src/schema/sanitize.js";
import { SCHEMA_TARGETS, UnknownTargetError } from "../../src/schema/targets/index.js";
import { isValid, validateArguments } from "../../src/schema/validate.js";

function deepFreeze<T>(value: T): T {
  if (typeof value === "object" && value !== null) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}

function props(result: { schema: SchemaNode }): Record<string, SchemaNode> {
  return result.schema.properties as Record<string, SchemaNode>;
}

/** The schema as sanitized round-trips a call: carried to the target, restored to the original. */
function roundTrip(schema: SchemaNode, target: string, args: Record<string, unknown>) {
  const result = sanitizeSchema(schema, target);
  const carried = carryToolArguments(result, args);
  expect(isValid(targetSchemaAsJsonSchema(result.schema, target), carried)).toBe(true);
  const restored = restoreToolArguments(result, carried);
  expect(isValid(schema, restored)).toBe(true);
  return { result, carried, restored };
}

const PATCH = {
  type: "object",
  properties: {
    mode: { type: "string", enum: ["replace", "patch"] },
    path: { type: "string", description: "File to edit." },
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

describe("sanitizeSchema: shared rules", () => {
  it("never mutates its input and is idempotent, for every target", () => {
    for (const target of SCHEMA_TARGETS) {
      const input = deepFreeze(structuredClone(PATCH));
      const result = sanitizeSchema(input, target);
      expect(stableStringify(input)).toBe(stableStringify(PATCH));
      const again = sanitizeSchema(result.schema, target);
      expect(again.changes).toEqual([]);
      expect(again.schema).toEqual(result.schema);
    }
  });

  it("rejects unknown targets with the list of valid ones, and accepts aliases", () => {
    expect(() => sanitizeSchema({ type: "object" }, "mistral")).toThrow(UnknownTargetError);
    expect(() => sanitizeSchema({ type: "object" }, "mistral")).toThrow(/valid targets: openai, openai-strict, anthropic/);
    expect(sanitizeSchema({ type: "object" }, "ollama").target).toBe("llamacpp");
    expect(sanitizeSchema({ type: "object" }, "LM-Studio").target).toBe("llamacpp");
  });

  // Hermes agent's top-level combinator strip (Codex: "schema must have type 'object' and not have 'oneOf'/'anyOf'/'allOf'/'enum'/'not' at the top level").
  it("flattens a top-level oneOf into REQUIRED-when descriptions while validation keeps the real contract", () => {
    const result = sanitizeSchema(PATCH, "anthropic");
    expect(result.schema.oneOf).toBeUndefined();
    expect(result.schema.required).toEqual(["mode"]);
    expect(props(result).path!.description).toBe("REQUIRED when mode='replace'. File to edit.");
    expect(props(result).patch!.description).toBe("REQUIRED when mode='patch'.");
    expect(validateArguments(PATCH, { mode: "replace" }).message).toContain("mode='replace' requires path, old_string, new_string");
  });

  it("turns a top-level 'at least one of' into a sentence on the object and the fields", () => {
    const kanban = { type: "object", properties: { summary: { type: "string" }, result: { type: "string" } }, anyOf: [{ required: ["summary"] }, { required: ["result"] }] };
    const result = sanitizeSchema(kanban, "openai");
    expect(result.schema.anyOf).toBeUndefined();
    expect(result.schema.description).toBe("Provide at least one of: summary, result.");
    expect(props(result).summary!.description).toBe("Provide at least one of: summary, result.");
  });

  it("merges a top-level allOf (if/then hint) keeping properties and required intact", () => {
    const schema = {
      type: "object",
      properties: { mode: { enum: ["a", "b"] }, x: { type: "string" } },
      required: ["mode"],
      allOf: [{ if: { properties: { mode: { const: "a" } } }, then: { required: ["x"] } }],
    };
    const result = sanitizeSchema(schema, "fireworks");
    expect(result.schema.allOf).toBeUndefined();
    expect(result.schema.required).toEqual(["mode"]);
    expect(props(result).x!.description).toBe("REQUIRED when mode='a'.");
  });

  it("drops top-level enum and not, keeping the object", () => {
    const result = sanitizeSchema({ type: "object", properties: { a: { type: "string" }, b: { type: "string" } }, not: { required: ["a", "b"] }, enum: [{}] }, "openai");
    expect(result.schema.not).toBeUndefined();
    expect(result.schema.enum).toBeUndefined();
    expect(result.schema.description).toBe("Do not provide a and b together.");
  });

  // Hermes B2 / #59386: "null is not of type 'array'".
  it("drops null-valued structural keywords but keeps null default/const and x-* data", () => {
    const result = sanitizeSchema(
      { type: "object", required: null, properties: { a: { type: "string", enum: null, default: null }, b: { type: "array", items: null }, c: { const: null, "x-meta": { type: null } } } },
      "openai",
    );
    expect(result.schema.required).toBeUndefined();
    expect(props(result).a).toEqual({ type: "string", default: null });
    expect(props(result).b).toEqual({ type: "array" });
    expect(props(result).c).toEqual({ const: null, "x-meta": { type: null } });
  });

  it("turns bare string schemas into schemas and gives objects properties", () => {
    const result = sanitizeSchema({ type: "object", properties: { opts: "object", name: "string", other: "the target id", nested: { type: "object" } } }, "llamacpp");
    expect(props(result)).toEqual({
      opts: { type: "object", properties: {} },
      name: { type: "string" },
      other: { description: "the target id" },
      nested: { type: "object", properties: {} },
    });
  });

  it("replaces missing or non-object parameters by an empty object schema", () => {
    expect(sanitizeSchema(undefined, "openai").schema).toEqual({ type: "object", properties: {} });
    expect(sanitizeSchema(null, "anthropic").schema).toEqual({ type: "object", properties: {} });
    expect(sanitizeSchema({ properties: { a: { type: "string" } } }, "openai").schema.type).toBe("object");
  });

  it("declares required keys missing from properties (Gemini: 'required[0]: property is not defined')", () => {
    // GenerateContentRequest.tools[0].function_declarations[1].parameters.required[0]: property is not defined
    const browserClick = { type: "object", properties: {}, required: ["ref"] };
    expect(checkSchema(browserClick, "gemini").map((p) => p.rule)).toContain("declare-required");
    const result = sanitizeSchema(browserClick, "gemini");
    expect(props(result).ref).toBeDefined();
    expect(result.schema.required).toEqual(["ref"]);
    const closed = sanitizeSchema({ type: "object", properties: { a: { type: "string" } }, required: ["a", "ghost"], additionalProperties: false }, "openai");
    expect(closed.schema.required).toEqual(["a"]);
  });
});

describe("sanitizeSchema: anthropic / bedrock", () => {
  // "tools.14.custom.input_schema.properties: Property keys should match pattern '^[a-zA-Z0-9_.-]{1,64}$'"
  it("renames keys Anthropic rejects and renames them back in the model's arguments", () => {
    const schema = {
      type: "object",
      properties: {
        "filter[id]": { type: "string" },
        $top: { type: "integer" },
        "@microsoft.graph.conflictBehavior": { type: "string" },
        "issue_class~neq": { type: "string" },
        filter_id_: { type: "string" },
        ["k".repeat(70)]: { type: "boolean" },
      },
      required: ["filter[id]"],
    };
    for (const target of ["anthropic", "bedrock", "anthropic-strict"]) {
      expect(checkSchema(schema, target).some((p) => p.message.includes("^[a-zA-Z0-9_.-]{1,64}$"))).toBe(true);
      const result = sanitizeSchema(schema, target);
      expect(Object.keys(props(result))).toEqual(["filter_id__2", "_top", "_microsoft.graph.conflictBehavior", "issue_class_neq", "filter_id_", "k".repeat(64)]);
      expect(result.schema.required).toEqual(["filter_id__2"]);
      const model = { filter_id__2: "7", _top: 5, "_microsoft.graph.conflictBehavior": "rename", filter_id_: "kept" };
      expect(restoreToolArguments(result, model)).toEqual({ "filter[id]": "7", $top: 5, "@microsoft.graph.conflictBehavior": "rename", filter_id_: "kept" });
    }
  });

  it.each(["anthropic", "bedrock"])("%s: collapses nullable unions to the non-null branch without `nullable`, null kept in its type", (target) => {
    const schema = {
      type: "object",
      properties: {
        a: { anyOf: [{ type: "string", minLength: 1 }, { type: "null" }], description: "A name." },
        b: { oneOf: [{ type: "null" }, { enum: ["x", "y"] }] },
        c: { anyOf: [{ $ref: "#/$defs/item" }, { type: "null" }], default: null },
        d: { anyOf: [{ type: "integer" }, { type: "string" }, { type: "null" }] },
      },
      $defs: { item: { type: "object", properties: { id: { type: "string" } } } },
    };
    const result = sanitizeSchema(schema, target);
    const p = props(result);
    expect(p.a).toEqual({ type: ["string", "null"], minLength: 1, description: "A name." });
    expect(p.b).toEqual({ enum: ["x", "y", null] });
    expect(p.c).toEqual({ type: ["object", "null"], properties: { id: { type: "string" } }, default: null });
    // Two non-null branches: the null branch goes, null stays allowed by the first.
    expect(p.d).toEqual({ anyOf: [{ type: ["integer", "null"] }, { type: "string" }] });
    expect(JSON.stringify(result.schema)).not.toContain("nullable");
    for (const value of [null, "n"]) expect(validateArguments(result.schema, { a: value }).valid).toBe(true);
    expect(sanitizeSchema(result.schema, target).changes).toEqual([]);
  });

  it("other targets keep the null hint: Gemini marks `nullable: true`, OpenAI keeps the union", () => {
    const schema = { type: "object", properties: { a: { anyOf: [{ type: "string" }, { type: "null" }] } } };
    expect(props(sanitizeSchema(schema, "gemini")).a).toEqual({ type: "string", nullable: true });
    expect(sanitizeSchema(schema, "openai").schema).toEqual(schema);
  });
});

describe("sanitizeSchema: openai-strict", () => {
  // "Invalid schema for function 'filesystem-set_permissions': In context=('properties', 'permissions'), 'additionalProperties' is required to be supplied and to be false."
  const setPermissions = {
    type: "object",
    properties: {
      path: { type: "string" },
      permissions: { type: "object", properties: { read: { type: "boolean" }, write: { type: "boolean" } }, required: ["read"] },
      recursive: { type: "boolean", default: false },
      mode: { type: "string", enum: ["add", "set"] },
    },
    required: ["path", "permissions"],
  };

  it("closes every object and makes optional fields required and nullable", () => {
    const before = checkSchema(setPermissions, "openai-strict").map((p) => p.message);
    expect(before).toContain("`additionalProperties` is not false; properties missing from `required`: write");
    const result = sanitizeSchema(setPermissions, "openai-strict");
    const p = props(result);
    expect(result.schema.additionalProperties).toBe(false);
    expect(result.schema.required).toEqual(["path", "permissions", "recursive", "mode"]);
    expect(p.permissions).toMatchObject({ additionalProperties: false, required: ["read", "write"] });
    expect(p.recursive!.type).toEqual(["boolean", "null"]);
    expect(p.mode).toMatchObject({ type: ["string", "null"], enum: ["add", "set", null] });
    expect(checkSchema(result.schema, "openai-strict")).toEqual([]);
  });

  it("sends null for absent optional fields and removes the nulls from the model's call", () => {
    const { carried, restored } = roundTrip(setPermissions, "openai-strict", { path: "a", permissions: { read: true } });
    expect(carried).toEqual({ path: "a", permissions: { read: true, write: null }, recursive: null, mode: null });
    expect(restored).toEqual({ path: "a", permissions: { read: true } });
  });

  // "Invalid schema for response_format 'example': In context=(), 'oneOf' is not permitted."
  it("rewrites nested oneOf as anyOf", () => {
    const schema = { type: "object", properties: { value: { oneOf: [{ type: "string" }, { type: "integer" }] } }, required: ["value"] };
    expect(checkSchema(schema, "openai-strict").map((p) => p.rule)).toContain("oneof-to-anyof");
    expect(props(sanitizeSchema(schema, "openai-strict")).value).toEqual({ anyOf: [{ type: "string" }, { type: "integer" }] });
  });

  it("sends free-form objects, maps and untyped values as JSON strings and decodes them back", () => {
    const schema = {
      type: "object",
      properties: { env: { type: "object", additionalProperties: { type: "string" } }, payload: { description: "Anything." }, meta: { type: "object" } },
      required: ["env"],
    };
    const result = sanitizeSchema(schema, "openai-strict");
    expect(props(result).env).toEqual({ type: "string", description: "(an object, JSON-encoded as a string)" });
    expect(props(result).payload).toEqual({ type: ["string", "null"], description: "Anything. (any JSON value, JSON-encoded as a string)" });
    const { carried, restored } = roundTrip(schema, "openai-strict", { env: { A: "1" }, payload: [1, { b: 2 }] });
    expect(carried).toEqual({ env: '{"A":"1"}', payload: '[1,{"b":2}]', meta: null });
    expect(restored).toEqual({ env: { A: "1" }, payload: [1, { b: 2 }] });
  });

  it("moves unsupported keywords and formats into descriptions", () => {
    const schema = { type: "object", properties: { name: { type: "string", minLength: 1, maxLength: 64, format: "uri" } }, required: ["name"] };
    expect(props(sanitizeSchema(schema, "openai-strict")).name).toEqual({ type: "string", description: "(at least 1 character; at most 64 characters) (format: uri)" });
  });

  it("keeps recursive $refs (supported) and makes their objects strict too", () => {
    const schema = {
      type: "object",
      $defs: { node: { type: "object", properties: { value: { type: "integer" }, next: { $ref: "#/$defs/node" } }, required: ["value"] } },
      properties: { list: { $ref: "#/$defs/node" } },
      required: ["list"],
    };
    const { result, carried, restored } = roundTrip(schema, "openai-strict", { list: { value: 1, next: { value: 2 } } });
    expect((result.schema.$defs as Record<string, SchemaNode>).node).toMatchObject({ additionalProperties: false, required: ["value", "next"] });
    expect(carried).toEqual({ list: { value: 1, next: { value: 2, next: null } } });
    expect(restored).toEqual({ list: { value: 1, next: { value: 2 } } });
  });
});

describe("sanitizeSchema: anthropic-strict", () => {
  it("moves numeric and length bounds into descriptions, limits minItems to 0/1, keeps optional fields", () => {
    const schema = {
      type: "object",
      properties: { n: { type: "integer", minimum: 1, maximum: 10 }, s: { type: "string", maxLength: 5 }, tags: { type: "array", items: { type: "string" }, minItems: 3 } },
      required: ["n"],
    };
    const result = sanitizeSchema(schema, "anthropic-strict");
    expect(props(result).n).toEqual({ type: "integer", description: "(>= 1; <= 10)" });
    expect(props(result).tags).toEqual({ type: "array", items: { type: "string" }, minItems: 1, description: "(at least 3 items)" });
    expect(result.schema.required).toEqual(["n"]);
    expect(result.schema.additionalProperties).toBe(false);
  });

  it("breaks recursion with a JSON string and uses anyOf for nullable types", () => {
    const schema = {
      type: "object",
      $defs: { node: { type: "object", properties: { value: { type: "integer" }, next: { $ref: "#/$defs/node" } }, required: ["value"] } },
      properties: { list: { $ref: "#/$defs/node" }, note: { type: ["string", "null"] } },
    };
    const result = sanitizeSchema(schema, "anthropic-strict");
    expect(props(result).note).toEqual({ anyOf: [{ type: "string" }, { type: "null" }] });
    expect((props(result).list!.properties as Record<string, SchemaNode>).next!.type).toBe("string");
    const { carried, restored } = roundTrip(schema, "anthropic-strict", { list: { value: 1, next: { value: 2, next: { value: 3 } } } });
    expect(carried).toEqual({ list: { value: 1, next: '{"value":2,"next":{"value":3}}' } });
    expect(restored).toEqual({ list: { value: 1, next: { value: 2, next: { value: 3 } } } });
  });

  it("moves patterns with lookaround into descriptions and keeps simple ones", () => {
    const schema = { type: "object", properties: { a: { type: "string", pattern: "^(?!tmp)[a-z]+$" }, b: { type: "string", pattern: "^[a-z]+$" } } };
    const result = sanitizeSchema(schema, "anthropic-strict");
    expect(props(result).a).toEqual({ type: "string", description: "(must match the regular expression ^(?!tmp)[a-z]+$)" });
    expect(props(result).b).toEqual({ type: "string", pattern: "^[a-z]+$" });
  });
});

describe("sanitizeSchema: gemini", () => {
  it("keeps only Gemini's Schema fields, inlines refs, and restores what it had to encode", () => {
    const schema = {
      $schema: "https://json-schema.org/draft/2020-12/schema",
      type: "object",
      $defs: { item: { type: "object", properties: { id: { type: "string" } }, required: ["id"], additionalProperties: false } },
      properties: {
        item: { $ref: "#/$defs/item" },
        kind: { const: "file" },
        level: { type: "integer", enum: [1, 2, 3] },
        note: { type: ["string", "null"], examples: ["hi"] },
        choice: { anyOf: [{ type: "string" }, { type: "null" }], description: "Optional." },
        env: { type: "object", additionalProperties: { type: "string" } },
        tags: { type: "array" },
        "x-y": { type: "number", exclusiveMinimum: 0 },
      },
      required: ["item", "kind"],
      additionalProperties: false,
    };
    const result = sanitizeSchema(schema, "gemini");
    expect(result.schema).toEqual({
      type: "object",
      properties: {
        item: { type: "object", properties: { id: { type: "string" } }, required: ["id"] },
        kind: { enum: ["file"], type: "string" },
        level: { type: "integer", enum: ["1", "2", "3"] },
        note: { type: "string", nullable: true, example: "hi" },
        choice: { type: "string", description: "Optional.", nullable: true },
        env: { type: "string", description: "(an object, JSON-encoded as a string)" },
        tags: { type: "array", items: { type: "string", description: "(any value, JSON-encoded as a string)" } },
        x_y: { type: "number", minimum: 0, description: "(> 0)" },
      },
      required: ["item", "kind"],
    });
    expect(checkSchema(result.schema, "gemini")).toEqual([]);
    const model = { item: { id: "a" }, kind: "file", level: "2", env: '{"A":"b"}', tags: ["1", '"x"'], x_y: 0.5 };
    expect(restoreToolArguments(result, model)).toEqual({ item: { id: "a" }, kind: "file", level: 2, env: { A: "b" }, tags: [1, "x"], "x-y": 0.5 });
    roundTrip(schema, "gemini", { item: { id: "a" }, kind: "file", level: 3, note: null, choice: null, env: {}, tags: [true] });
  });

  // "…properties[includeTags].items: missing field." / "…parameters.properties: should be non-empty for OBJECT type"
  it("reports the shapes Gemini rejects", () => {
    const schema = { type: "object", properties: { includeTags: { type: "array" }, options: { type: "object" }, a: { type: ["string", "integer"] } } };
    const rules = checkSchema(schema, "gemini").map((p) => p.rule);
    expect(rules).toEqual(expect.arrayContaining(["json-encode", "type-arrays-nullable"]));
  });

  it("renames keys Gemini does not accept (letters, digits, underscores; no leading digit)", () => {
    const result = sanitizeSchema({ type: "object", properties: { "1st": { type: "string" }, "old-string": { type: "string" }, "x.y": { type: "string" } } }, "gemini");
    expect(Object.keys(props(result))).toEqual(["_1st", "old_string", "x_y"]);
  });
});

describe("sanitizeSchema: unions made from tuples", () => {
  // A tuple becomes one `items` union of its positions, so restoring must tell the positions apart
  // by the value alone.
  const tupleSchema = (positions: unknown[]) => ({
    type: "object",
    properties: { t: { type: "array", prefixItems: positions, items: false } },
    required: ["t"],
  });

  it("restores an omitted optional field inside a tuple element (openai-strict; seed -539363489)", () => {
    // The first position is an open object that would also accept the second's strict-mode null:
    // the branch the value fits in the sanitized schema is the one restored through.
    const schema = tupleSchema([
      { type: "object", properties: { top: { type: "array" } }, required: [] },
      { type: "object", properties: { format: { type: "integer" }, path: { type: "object", properties: { a: { type: "string" } } } }, required: [], additionalProperties: false },
    ]);
    const result = sanitizeSchema(schema, "openai-strict");
    const restored = restoreToolArguments(result, { t: [{ top: [{ k: null }] }, { format: 822, path: null }] });
    expect(restored).toEqual({ t: [{ top: [{ k: null }] }, { format: 822 }] });
    expect(isValid(schema, restored)).toBe(true);
  });

  it("restores a renamed key in the tuple position that declares it (gemini drops additionalProperties; seed -778179191)", () => {
    // Both positions become open objects in Gemini's schema; the value's keys say which one it is.
    const schema = tupleSchema([
      { type: "object", properties: { limit: { type: "string" }, items: { type: "string" } }, additionalProperties: false },
      { type: "object", properties: { items: { type: "string" }, "a~b": { type: "boolean" } } },
    ]);
    const original = { t: [{}, { items: "", "a~b": true }] };
    const result = sanitizeSchema(schema, "gemini");
    const carried = carryToolArguments(result, original);
    expect(carried).toEqual({ t: [{}, { items: "", a_b: true }] });
    expect(restoreToolArguments(result, carried)).toEqual(original);
  });
});

describe("sanitizeSchema: xai", () => {
  it("drops a whole enum with any '/' value (values into the description, type kept), and every pattern and format", () => {
    const schema = {
      type: "object",
      properties: {
        model: { type: "string", enum: ["Qwen/Qwen3.5-0.8B", "meta-llama/Llama-3"] },
        size: { type: "string", enum: ["small", "large"] },
        pattern: { type: "string", description: "Glob to match." },
        date: { type: "string", format: "date" },
        url: { type: "string", format: "uri", pattern: "^https://" },
      },
    };
    const result = sanitizeSchema(schema, "xai");
    const p = props(result);
    expect(p.model).toEqual({ type: "string", description: "(one of: Qwen/Qwen3.5-0.8B, meta-llama/Llama-3)" });
    expect(p.size!.enum).toEqual(["small", "large"]);
    expect(p.pattern).toEqual({ type: "string", description: "Glob to match." });
    // xAI's /responses answers 400 on any format, even date-time (hermes-agent#27197).
    expect(p.date).toEqual({ type: "string", description: "(format: date)" });
    expect(p.url).toEqual({ type: "string", description: "(must match the regular expression ^https://; format: uri)" });
    expect(result.schema.additionalProperties).toBe(true);
    const untyped = sanitizeSchema({ type: "object", properties: { m: { enum: ["a/b", "c"], description: "Model." } } }, "xai");
    expect(props(untyped).m).toEqual({ type: "string", description: "Model. (one of: a/b, c)" });
    expect(checkSchema(result.schema, "xai")).toEqual([]);
  });
});

describe("sanitizeSchema: llamacpp (also Ollama, LM Studio)", () => {
  // "JSON schema conversion failed: Pattern must start with '^' and end with '$'"; "failed to parse grammar" for \d \w \s.
  it.each([
    ["^\\d+$", { pattern: "^[0-9]+$" }],
    ["^[\\w-]+$", { pattern: "^[A-Za-z0-9_-]+$" }],
    ["^\\W\\D$", { pattern: "^[^A-Za-z0-9_][^0-9]$" }],
    [".*\\S.*", { description: "(must match the regular expression .*\\S.*)" }],
    ["^.*\\S.*$", { description: "(must match the regular expression ^.*\\S.*$)" }],
    ["\\d", { description: "(must match the regular expression \\d)" }],
    ["^[a-z]+$", { pattern: "^[a-z]+$" }],
  ])("pattern %s", (pattern, expected) => {
    const schema = { type: "object", properties: { id: { type: "string", pattern } } };
    const result = sanitizeSchema(schema, "llamacpp");
    expect(props(result).id).toEqual({ type: "string", ...expected });
    expect(checkSchema(result.schema, "llamacpp")).toEqual([]);
  });

  it("sends `type: [T, \"null\"]` as an anyOf of single types, the form every converter version turns into a union rule", () => {
    const schema = {
      type: "object",
      properties: {
        name: { type: ["string", "null"], maxLength: 20, description: "Name." },
        size: { type: ["integer", "string", "null"], minimum: 0 },
        one: { type: ["string"] },
      },
    };
    const result = sanitizeSchema(schema, "llamacpp");
    const p = props(result);
    expect(p.name).toEqual({ description: "Name.", anyOf: [{ type: "string", maxLength: 20 }, { type: "null" }] });
    expect(p.size).toEqual({ anyOf: [{ type: "integer", minimum: 0 }, { type: "string" }, { type: "null" }] });
    expect(p.one).toEqual({ type: ["string"] });
    expect(checkSchema(result.schema, "llamacpp")).toEqual([]);
    for (const value of [null, "x"]) expect(validateArguments(result.schema, { name: value }).valid).toBe(true);
  });

  it("keeps formats the grammar knows and describes the others; inlines refs", () => {
    const schema = {
      type: "object",
      $defs: { when: { type: "string", format: "date-time" } },
      properties: { at: { $ref: "#/$defs/when" }, mail: { type: "string", format: "email" }, body: { type: "string", maxLength: 65536 } },
    };
    const result = sanitizeSchema(schema, "llamacpp");
    expect(props(result)).toEqual({
      at: { type: "string", format: "date-time" },
      mail: { type: "string", description: "(format: email)" },
      body: { type: "string", description: "(at most 65536 characters)" },
    });
    expect(result.schema.$defs).toBeUndefined();
  });
});

describe("sanitizeSchema: kimi", () => {
  // "<At path 'root': when using anyOf, type should be defined in anyOf items instead of the parent schema>"
  it("flattens type-beside-anyOf at the root and pushes nested types into the branches", () => {
    const ftBalance = {
      type: "object",
      anyOf: [
        { properties: { stock_code: {} }, required: ["stock_code"] },
        { properties: { report_type: {}, year: {} }, required: ["year", "report_type"] },
      ],
      properties: { stock_code: { type: "string" }, year: { type: "integer" } },
      required: [],
    };
    expect(checkSchema(ftBalance, "kimi").map((p) => p.rule)).toContain("top-level-combinators");
    const result = sanitizeSchema(ftBalance, "kimi");
    expect(result.schema.anyOf).toBeUndefined();
    expect(checkSchema(result.schema, "kimi")).toEqual([]);

    // 'properties.operation': when using anyOf, type should be defined in anyOf items instead of the parent schema
    const nested = { type: "object", properties: { operation: { type: "string", anyOf: [{ minLength: 3 }, { format: "date" }] } } };
    const fixed = sanitizeSchema(nested, "kimi");
    expect(props(fixed).operation).toEqual({ anyOf: [{ minLength: 3, type: "string" }, { format: "date", type: "string" }] });

    // Type-less fragments under an object are flattened like the root's.
    const fragments = { type: "object", properties: { op: { type: "object", properties: { a: { type: "string" } }, anyOf: [{ required: ["a"] }, { required: ["b"] }] } } };
    expect(props(sanitizeSchema(fragments, "kimi")).op!.anyOf).toBeUndefined();
  });

  // "<At path 'properties.truncateMode': type is not defined>"
  it("gives every property a type (inferred, or a JSON string when nothing implies one)", () => {
    const schema = { type: "object", properties: { truncateMode: { description: "Truncation mode" }, level: { enum: ["low", "high"] } } };
    const result = sanitizeSchema(schema, "kimi");
    expect(props(result).truncateMode).toEqual({ type: "string", description: "Truncation mode (any JSON value, JSON-encoded as a string)" });
    expect(props(result).level).toEqual({ enum: ["low", "high"], type: "string" });
    expect(restoreToolArguments(result, { truncateMode: '"head"' })).toEqual({ truncateMode: "head" });
  });

  it("moves definitions into $defs, inlines refs with siblings, renames a property called $ref", () => {
    const schema = {
      type: "object",
      definitions: { item: { type: "object", properties: { id: { type: "string" } } } },
      properties: { item: { $ref: "#/definitions/item", description: "The item." }, other: { $ref: "#/definitions/item" }, $ref: { type: "string" } },
    };
    const result = sanitizeSchema(schema, "kimi");
    expect(result.schema.definitions).toBeUndefined();
    expect(props(result).item).toEqual({ type: "object", properties: { id: { type: "string" } }, description: "The item." });
    expect(props(result).other).toEqual({ $ref: "#/$defs/item" });
    expect(props(result).ref).toEqual({ type: "string" });
    expect(restoreToolArguments(result, { ref: "x" })).toEqual({ $ref: "x" });
  });
});

describe("sanitizeSchema: fireworks", () => {
  // "JSON Schema not supported: keyword(s) ['default'] not allowed at the same level as $ref"
  it("drops default beside $ref and inlines local refs", () => {
    const schema = {
      type: "object",
      $defs: { SetCookieParam: { type: "object", properties: { name: { type: "string" } }, required: ["name"] } },
      properties: { cookie: { anyOf: [{ $ref: "#/$defs/SetCookieParam", default: null }, { type: "null" }], default: null } },
    };
    expect(checkSchema(schema, "fireworks").map((p) => p.rule)).toEqual(expect.arrayContaining(["ref-default", "inline-refs-all"]));
    const result = sanitizeSchema(schema, "fireworks");
    expect(props(result).cookie).toEqual({
      anyOf: [{ type: "object", properties: { name: { type: "string" } }, required: ["name"] }, { type: "null" }],
      default: null,
    });
  });

  it("rewrites type-less required fragments nested in properties", () => {
    const schema = { type: "object", properties: { criteria: { type: "object", properties: { a: { type: "string" }, b: { type: "string" } }, anyOf: [{ required: ["a"] }, { required: ["b"] }] } } };
    const result = sanitizeSchema(schema, "fireworks");
    expect(props(result).criteria!.anyOf).toBeUndefined();
    expect(props(result).criteria!.description).toBe("Provide at least one of: a, b.");
  });
});

describe("sanitizeSchema: flattening details", () => {
  it("merges branch properties into the root, with an enum for a discriminator the root lacks", () => {
    const schema = {
      type: "object",
      properties: { path: { type: "string" } },
      oneOf: [
        { type: "object", properties: { action: { const: "read" }, offset: { type: "integer" } }, required: ["action", "path"] },
        { type: "object", properties: { action: { const: "write" }, content: { type: "string" } }, required: ["action", "path", "content"] },
      ],
    };
    const result = sanitizeSchema(schema, "anthropic");
    expect(result.schema.required).toEqual(["action", "path"]);
    expect(props(result).action).toEqual({ type: "string", enum: ["read", "write"] });
    expect(props(result).offset).toEqual({ type: "integer" });
    expect(props(result).content).toEqual({ type: "string", description: "REQUIRED when action='write'." });
    // Every call valid under the original is valid under the flattened schema.
    for (const call of [{ action: "read", path: "a" }, { action: "write", path: "a", content: "x" }]) {
      expect(isValid(schema, call)).toBe(true);
      expect(isValid(result.schema, call)).toBe(true);
    }
  });

  it("merges allOf members and reports conflicts it resolved by keeping the first", () => {
    const schema = {
      type: "object",
      properties: {
        a: {
          allOf: [
            { type: "object", properties: { x: { type: "string" } }, required: ["x"] },
            { type: "object", properties: { x: { type: "string", minLength: 2 }, y: { type: "integer" } }, required: ["y"] },
          ],
        },
      },
    };
    const result = sanitizeSchema(schema, "openai-strict");
    const a = props(result).a!;
    expect(a.allOf).toBeUndefined();
    expect(a.required).toEqual(["x", "y"]);
    expect((a.properties as Record<string, SchemaNode>).x!.description).toBe("(also: at least 2 characters)");
    expect(result.changes.some((c) => c.rule === "merge-allof" && c.message.includes("conflicting properties.x kept from the first"))).toBe(true);
  });

  it("keeps __proto__ as an ordinary key in schemas and arguments", () => {
    const schema = JSON.parse('{"type":"object","properties":{"__proto__":{"type":"string"},"a b":{"type":"string"}}}') as SchemaNode;
    const result = sanitizeSchema(schema, "anthropic");
    expect(Object.keys(props(result))).toEqual(["__proto__", "a_b"]);
    const restored = restoreToolArguments(result, JSON.parse('{"__proto__":"x","a_b":"y"}')) as Record<string, unknown>;
    expect(Object.keys(restored)).toEqual(["__proto__", "a b"]);
    expect(Object.getPrototypeOf(restored)).toBe(Object.prototype);
  });

  it("closes implicitly open objects in strict mode: undeclared keys are dropped on the way to the model", () => {
    const schema = { type: "object", properties: { a: { type: "string" } }, required: ["a"] };
    const result = sanitizeSchema(schema, "openai-strict");
    expect(carryToolArguments(result, { a: "x", extra: 1 })).toEqual({ a: "x" });
  });
});

describe("sanitizeSchema: draft-07 input", () => {
  it("turns draft-07 dependencies and tuple items into what strict targets take", () => {
    const schema = {
      $schema: "http://json-schema.org/draft-07/schema#",
      type: "object",
      properties: { start: { type: "integer" }, end: { type: "integer" }, point: { type: "array", items: [{ type: "number" }, { type: "number" }] } },
      dependencies: { start: ["end"] },
    };
    const result = sanitizeSchema(schema, "openai-strict");
    expect(result.schema.dependencies).toBeUndefined();
    expect(props(result).end!.description).toBe("REQUIRED when start is given.");
    expect(props(result).point).toMatchObject({ items: { type: "number" } });
    expect(checkSchema(result.schema, "openai-strict")).toEqual([]);
    roundTrip(schema, "openai-strict", { start: 1, end: 2, point: [1, 2] });
  });
});

describe("sanitizeSchema: conditional requirements per mode", () => {
  it("writes one REQUIRED PARAMETERS summary per mode on the root besides the per-field hints", () => {
    for (const target of SCHEMA_TARGETS) {
      const result = sanitizeSchema(PATCH, target);
      expect(result.schema.description, target).toContain("REQUIRED PARAMETERS: mode='replace' → path, old_string, new_string; mode='patch' → patch.");
      expect(sanitizeSchema(result.schema, target).changes, target).toEqual([]);
    }
    const conditional = {
      type: "object",
      properties: { mode: { enum: ["a", "b"] }, x: { type: "string" }, y: { type: "string" } },
      required: ["mode"],
      allOf: [
        { if: { properties: { mode: { const: "a" } } }, then: { required: ["x", "y"] } },
        { if: { properties: { mode: { const: "b" } } }, then: { required: ["y"] } },
      ],
    };
    expect(sanitizeSchema(conditional, "anthropic").schema.description).toBe("REQUIRED PARAMETERS: mode='a' → x, y; mode='b' → y.");
  });

  it("keeps top-level anyOf/oneOf on request where the target takes them: as they are (openai), as whole objects (llamacpp)", () => {
    const kept = sanitizeSchema(PATCH, "openai", { rootCombinators: "keep" });
    // The branches stay (their required keys get declared, unconstrained, as everywhere).
    expect(kept.schema.oneOf).toMatchObject(PATCH.oneOf);
    expect(kept.schema.description).toBeUndefined();
    expect(kept.problems).toEqual([]);
    expect(sanitizeSchema(kept.schema, "openai", { rootCombinators: "keep" }).changes).toEqual([]);

    const grammar = sanitizeSchema(PATCH, "llamacpp", { rootCombinators: "keep" });
    const branches = grammar.schema.oneOf as SchemaNode[];
    expect(branches).toHaveLength(2);
    expect(branches[0]).toMatchObject({ type: "object", required: ["mode", "path", "old_string", "new_string"] });
    expect((branches[0]!.properties as Record<string, SchemaNode>).mode).toMatchObject({ const: "replace" });
    expect(Object.keys(branches[1]!.properties as object)).toEqual(Object.keys(PATCH.properties));
    expect(checkSchema(grammar.schema, "llamacpp", { rootCombinators: "keep" }).filter((p) => p.severity === "error")).toEqual([]);
    expect(sanitizeSchema(grammar.schema, "llamacpp", { rootCombinators: "keep" }).changes).toEqual([]);
    // Same meaning: what the original accepts and rejects, the kept schema does too.
    for (const args of [{ mode: "replace", path: "a", old_string: "x", new_string: "y" }, { mode: "patch", patch: "p" }, { mode: "replace", path: "a" }, { mode: "patch" }]) {
      expect(isValid(grammar.schema, args), JSON.stringify(args)).toBe(isValid(PATCH, args));
    }

    const anthropic = sanitizeSchema(PATCH, "anthropic", { rootCombinators: "keep" });
    expect(anthropic.schema.oneOf).toBeUndefined();
    expect(anthropic.changes[0]!.message).toContain('rootCombinators "keep" does not apply: Anthropic rejects top-level anyOf/oneOf');
  });
});

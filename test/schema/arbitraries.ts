import fc from "fast-check";
import { getAtPointer, isPlainObject, isSchemaNode, type SchemaNode } from "../../src/schema/json-schema.js";

/**
 * Generators for tool parameter schemas built from the shapes real tool catalogs contain (MCP
 * servers, OpenAPI conversions, Pydantic/Zod output), and for instances valid under them.
 */

/** Patterns with values that match them (instances cannot be derived from a regex in general). */
export const PATTERNS: ReadonlyArray<{ pattern: string; samples: string[] }> = [
  { pattern: "^[a-z]+$", samples: ["abc", "z"] },
  { pattern: "^\\d{3}$", samples: ["123", "000"] },
  { pattern: "\\d", samples: ["a1", "9", "x\n7"] },
  { pattern: "^\\w+-\\w+$", samples: ["a-b", "foo_1-x"] },
  { pattern: ".*\\S.*", samples: ["x", " y ", "\nz"] },
  // \b stands for the regex features some targets cannot take; lookaround and backreferences
  // cannot be validated in linear time at all (test/schema/regex.test.ts).
  { pattern: "^[a-z]+\\b$", samples: ["abc", "src"] },
  { pattern: "^[\\w.-]+@[\\w.-]+$", samples: ["a@b.c"] },
  { pattern: "^[A-Z]{2}-[0-9]{4}$", samples: ["AB-1234"] },
];

const FORMAT_SAMPLES: Record<string, string[]> = {
  date: ["2024-01-31"],
  "date-time": ["2024-01-31T12:00:00Z"],
  email: ["a@b.co"],
  uuid: ["123e4567-e89b-12d3-a456-426614174000"],
  uri: ["https://example.com/x"],
  hostname: ["example.com"],
};

/** Keys real schemas use, including ones some providers reject. */
export const KEYS = ["path", "mode", "limit", "query", "filter[id]", "$top", "a b", "pattern", "format", "1st", "x.y", "$ref", "issue_class~neq", "é", "items", "type"];

const leaf: fc.Arbitrary<SchemaNode> = fc.oneof(
  fc.constant({ type: "string" }),
  fc.record({ type: fc.constant("string"), description: fc.constantFrom("A name.", "Free text") }),
  fc.integer({ min: 0, max: 2 }).chain((min) => fc.integer({ min: min + 1, max: 12 }).map((max) => ({ type: "string", minLength: min, maxLength: max }))),
  fc.constantFrom(...PATTERNS).map((p) => ({ type: "string", pattern: p.pattern })),
  fc.constantFrom(...Object.keys(FORMAT_SAMPLES)).map((format) => ({ type: "string", format })),
  fc.record(
    { type: fc.constant("integer"), minimum: fc.integer({ min: -5, max: 5 }), maximum: fc.integer({ min: 6, max: 2000 }), multipleOf: fc.constantFrom(1, 2) },
    { requiredKeys: ["type"] },
  ),
  fc.record({ type: fc.constant("number"), exclusiveMinimum: fc.constant(0), maximum: fc.constant(10.5) }, { requiredKeys: ["type"] }),
  fc.constant({ type: "boolean" }),
  fc.constant({ type: "null" }),
  fc.constantFrom(["a", "b"], ["Qwen/Qwen3-8B", "meta/llama"], ["x"]).map((values) => ({ type: "string", enum: values })),
  fc.constantFrom([1, 2, 3], [0.5, 2], [true]).map((values) => ({ enum: values })),
  fc.constantFrom([1, "a"], ["a", null]).map((values) => ({ enum: values })),
  fc.constantFrom("x", 3, true).map((value) => ({ const: value })),
  fc.constant({ type: ["string", "null"] }),
  fc.constant({ type: ["integer", "null"], minimum: 0, description: "A count or null." }),
  fc.constant({ enum: ["org/model", "plain"] }),
  fc.constant({ type: ["integer", "string"], minLength: 1, minimum: 0 }),
  fc.constant({}),
  fc.constant({ description: "Anything." }),
  fc.constant({ type: "string", not: { const: "forbidden" } }),
  fc.constant({ type: "string", default: "x", examples: ["x"], "x-internal": { type: null } }),
);

function objectOf(child: fc.Arbitrary<SchemaNode>, maxKeys: number): fc.Arbitrary<SchemaNode> {
  return fc
    .uniqueArray(fc.constantFrom(...KEYS), { minLength: 1, maxLength: maxKeys })
    .chain((keys) =>
      fc.record({
        properties: fc.tuple(...keys.map(() => child)).map((subs) => Object.fromEntries(keys.map((k, i) => [k, subs[i]!]))),
        required: fc.subarray(keys),
        additionalProperties: fc.oneof(fc.constant(undefined), fc.constant(false), fc.constant(true), fc.constant({ type: "string" })),
      }),
    )
    .map(({ properties, required, additionalProperties }) => {
      const node: SchemaNode = { type: "object", properties, required };
      if (additionalProperties !== undefined) node.additionalProperties = additionalProperties;
      return node;
    });
}

const nodeArb: fc.Arbitrary<SchemaNode> = fc.letrec<{ node: SchemaNode }>((tie) => ({
  node: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    { arbitrary: leaf, weight: 6 },
    { arbitrary: objectOf(tie("node"), 3), weight: 2 },
    { arbitrary: fc.constantFrom<SchemaNode>({ type: "object" }, { type: "object", additionalProperties: { type: "integer" } }, { type: "object", properties: {} }), weight: 1 },
    {
      arbitrary: fc
        .record({ items: tie("node"), minItems: fc.constantFrom(undefined, 0, 1, 2), maxItems: fc.constantFrom(undefined, 4) })
        .map(({ items, minItems, maxItems }) => clean({ type: "array", items, minItems, maxItems })),
      weight: 2,
    },
    {
      // uniqueItems over scalars only: strict targets cannot tell an absent optional field from
      // null, so two objects differing only there would collapse into equal items.
      arbitrary: fc.record({ items: leaf, minItems: fc.constantFrom(undefined, 1) }).map(({ items, minItems }) => clean({ type: "array", items, minItems, uniqueItems: true })),
      weight: 2,
    },
    { arbitrary: fc.constant<SchemaNode>({ type: "array" }), weight: 1 },
    {
      arbitrary: fc
        .tuple(tie("node"), tie("node"), fc.constantFrom<unknown>(false, undefined, { type: "string" }))
        .map(([a, b, items]) => clean({ type: "array", prefixItems: [a, b], items })),
      weight: 1,
    },
    { arbitrary: tie("node").map((n) => ({ anyOf: [n, { type: "null" }], description: "Optional thing." })), weight: 2 },
    // Other spellings of a nullable union (Pydantic, MCP servers): oneOf, a `const: null` branch, null first.
    { arbitrary: tie("node").map((n) => ({ oneOf: [{ type: "null" }, n] })), weight: 1 },
    { arbitrary: tie("node").map((n) => ({ anyOf: [n, { const: null }], title: "Maybe" })), weight: 1 },
    { arbitrary: fc.tuple(tie("node"), tie("node")).map(([a, b]) => ({ anyOf: [a, b] })), weight: 1 },
    { arbitrary: fc.constant<SchemaNode>({ oneOf: [{ type: "string" }, { type: "integer" }] }), weight: 1 },
    {
      arbitrary: fc.tuple(objectOf(leaf, 2), objectOf(leaf, 2)).map(([a, b]) => ({ allOf: [a, b] })),
      weight: 1,
    },
    {
      arbitrary: fc.constant<SchemaNode>({
        type: "object",
        properties: { summary: { type: "string" }, result: { type: "string" } },
        anyOf: [{ required: ["summary"] }, { required: ["result"] }],
      }),
      weight: 1,
    },
  ),
})).node;

function clean(node: Record<string, unknown>): SchemaNode {
  return Object.fromEntries(Object.entries(node).filter(([, v]) => v !== undefined));
}

const DEFS: Record<string, SchemaNode> = {
  item: { type: "object", properties: { id: { type: "string" }, count: { type: "integer", minimum: 0 } }, required: ["id"], description: "An item." },
  node: { type: "object", properties: { value: { type: "integer" }, next: { $ref: "#/$defs/node" } }, required: ["value"] },
};

/** Root-level shapes that providers reject and the sanitizer has to flatten. */
const rootExtras = fc.constantFrom<string>("none", "none", "anyOf-at-least-one", "discriminated-oneOf", "if-then", "refs", "refs", "definitions", "not", "dependentRequired");

export const toolSchemaArb: fc.Arbitrary<SchemaNode> = fc.tuple(objectOf(nodeArb, 4), rootExtras).map(([root, extra]) => {
  const out: SchemaNode = { ...root };
  const props = { ...(root.properties as Record<string, unknown>) };
  switch (extra) {
    case "anyOf-at-least-one":
      props.summary = { type: "string" };
      props.result = { type: "string" };
      out.anyOf = [{ required: ["summary"] }, { required: ["result"] }];
      break;
    case "discriminated-oneOf":
      props.mode = { type: "string", enum: ["replace", "patch"] };
      props.old_string = { type: "string" };
      props.patch = { type: "string" };
      out.oneOf = [
        { properties: { mode: { const: "replace" } }, required: ["mode", "old_string"] },
        { properties: { mode: { const: "patch" } }, required: ["mode", "patch"] },
      ];
      break;
    case "if-then":
      props.mode = { enum: ["replace", "patch"] };
      props.new_string = { type: "string" };
      out.allOf = [{ if: { properties: { mode: { const: "replace" } }, required: ["mode"] }, then: { required: ["new_string"] } }];
      break;
    case "refs":
      props.item = { $ref: "#/$defs/item", default: null, description: "The item." };
      props.list = { $ref: "#/$defs/node" };
      out.$defs = DEFS;
      break;
    case "definitions":
      props.item = { $ref: "#/definitions/item" };
      out.definitions = { item: DEFS.item };
      break;
    case "not":
      props.a = { type: "string" };
      props.b = { type: "string" };
      out.not = { required: ["a", "b"] };
      break;
    case "dependentRequired":
      props.start = { type: "integer" };
      props.end = { type: "integer" };
      out.dependentRequired = { start: ["end"] };
      break;
  }
  out.properties = props;
  return out;
});

/** Values built by following the schema; callers keep the ones ajv accepts. */
export function instanceArb(schema: unknown, root: unknown, depth = 0): fc.Arbitrary<unknown> {
  if (schema === true) return fc.jsonValue({ maxDepth: 1 });
  if (!isSchemaNode(schema)) return fc.constant(null);
  if (typeof schema.$ref === "string") {
    if (depth > 4) return fc.constant(undefined);
    return instanceArb(getAtPointer(root, schema.$ref), root, depth + 1);
  }
  if ("const" in schema) return fc.constant(schema.const);
  if (Array.isArray(schema.enum)) return fc.constantFrom(...schema.enum);
  for (const keyword of ["anyOf", "oneOf"] as const) {
    const branches = schema[keyword];
    if (Array.isArray(branches) && !("properties" in schema)) {
      const base = { ...schema };
      delete base[keyword];
      return fc.oneof(...branches.map((b) => instanceArb(isSchemaNode(b) ? { ...base, ...b } : b, root, depth + 1)));
    }
  }
  if (Array.isArray(schema.allOf)) {
    let merged: SchemaNode = { ...schema };
    delete merged.allOf;
    for (const part of schema.allOf) {
      if (!isSchemaNode(part)) continue;
      merged = {
        ...merged,
        ...part,
        properties: { ...(merged.properties as object), ...(part.properties as object) },
        required: [...((merged.required as string[]) ?? []), ...((part.required as string[]) ?? [])],
      };
    }
    return instanceArb(merged, root, depth + 1);
  }
  const types = Array.isArray(schema.type) ? (schema.type as string[]) : typeof schema.type === "string" ? [schema.type] : null;
  if (types === null) return fc.jsonValue({ maxDepth: 1 });
  return fc.constantFrom(...types).chain((type) => valueOfType(type, schema, root, depth));
}

function valueOfType(type: string, schema: SchemaNode, root: unknown, depth: number): fc.Arbitrary<unknown> {
  switch (type) {
    case "string": {
      if (typeof schema.pattern === "string") {
        const known = PATTERNS.find((p) => p.pattern === schema.pattern);
        return fc.constantFrom(...(known?.samples ?? ["x"]));
      }
      if (typeof schema.format === "string" && FORMAT_SAMPLES[schema.format]) return fc.constantFrom(...FORMAT_SAMPLES[schema.format]!);
      const min = typeof schema.minLength === "number" ? schema.minLength : 0;
      const max = typeof schema.maxLength === "number" ? schema.maxLength : 8;
      // Strings models send in place of other types, kept only where the bounds allow them.
      const tricky = ["line\nbreak", "5", "true", "null", '{"a":1}'].filter((s) => s.length >= min && s.length <= max);
      const plain = fc.string({ minLength: min, maxLength: max });
      return tricky.length > 0 ? fc.oneof(plain, fc.constantFrom(...tricky)) : plain;
    }
    case "integer": {
      const step = typeof schema.multipleOf === "number" ? schema.multipleOf : 1;
      const min = typeof schema.minimum === "number" ? Math.ceil(schema.minimum / step) : -50;
      const max = typeof schema.maximum === "number" ? Math.floor(schema.maximum / step) : 50;
      return fc.integer({ min, max: Math.max(min, max) }).map((n) => n * step);
    }
    case "number":
      return fc.double({ min: 0.001, max: 10.5, noNaN: true, noDefaultInfinity: true });
    case "boolean":
      return fc.boolean();
    case "null":
      return fc.constant(null);
    case "array": {
      const minLength = typeof schema.minItems === "number" ? schema.minItems : 0;
      const maxLength = Math.max(minLength, Math.min(typeof schema.maxItems === "number" ? schema.maxItems : 3, 3));
      if (Array.isArray(schema.prefixItems)) {
        const prefix = schema.prefixItems.map((s) => instanceArb(s, root, depth + 1));
        const rest = schema.items === false || schema.items === undefined ? fc.constant([]) : fc.array(instanceArb(schema.items, root, depth + 1), { maxLength: 1 });
        return fc.tuple(fc.tuple(...prefix), rest).map(([p, r]) => [...p, ...r]);
      }
      const item = schema.items === undefined ? fc.jsonValue({ maxDepth: 1 }) : instanceArb(schema.items, root, depth + 1);
      return fc.array(item, { minLength, maxLength });
    }
    case "object": {
      const props = isPlainObject(schema.properties) ? schema.properties : {};
      const required = Array.isArray(schema.required) ? (schema.required as string[]) : [];
      const entries = Object.entries(props).map(([key, sub]) => {
        const value = instanceArb(sub, root, depth + 1);
        const present = required.includes(key) ? fc.constant(true) : fc.boolean();
        return fc.tuple(fc.constant(key), present, value);
      });
      // Extra keys only where the schema says so: strict targets close implicitly open objects
      // (documented; covered by unit tests), which drops such keys on the way to the model.
      const extraSchema = schema.additionalProperties;
      const extras =
        extraSchema === false || extraSchema === undefined
          ? fc.constant<Array<[string, unknown]>>([])
          : fc.array(fc.tuple(fc.constantFrom("zz_extra", "zz other"), extraSchema === true ? fc.jsonValue({ maxDepth: 1 }) : instanceArb(extraSchema, root, depth + 1)), { maxLength: 1 });
      return fc.tuple(fc.tuple(...entries), extras).map(([list, extra]) => {
        const out: Record<string, unknown> = {};
        for (const [key, present, value] of list) if (present && value !== undefined) out[key] = value;
        for (const [key, value] of extra) if (!(key in out)) out[key] = value;
        return out;
      });
    }
    default:
      return fc.constant(null);
  }
}

import {
  declaredTypes,
  isSchemaNode,
  jsonTypeOf,
  visitNodes,
  type JsonType,
  type SchemaNode,
} from "../json-schema.js";
import { transformWithMap } from "../value-map.js";
import { moveToDescription, nodeRule, type Finding, type Rule } from "./rule.js";

/** Rules about `type`, unions with null, and enum/const values. */

const KEYWORDS_BY_TYPE: Record<"string" | "number" | "array" | "object", readonly string[]> = {
  string: ["minLength", "maxLength", "pattern", "format", "contentEncoding", "contentMediaType"],
  number: ["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"],
  array: ["items", "prefixItems", "additionalItems", "minItems", "maxItems", "uniqueItems", "contains", "minContains", "maxContains", "unevaluatedItems"],
  object: [
    "properties",
    "required",
    "additionalProperties",
    "patternProperties",
    "propertyNames",
    "minProperties",
    "maxProperties",
    "dependentRequired",
    "dependentSchemas",
    "unevaluatedProperties",
  ],
};

function categoryOf(type: JsonType): keyof typeof KEYWORDS_BY_TYPE | null {
  if (type === "integer" || type === "number") return "number";
  if (type === "string" || type === "array" || type === "object") return type;
  return null;
}

function valueMatchesType(value: unknown, type: JsonType): boolean {
  const actual = jsonTypeOf(value);
  return actual === type || (type === "number" && actual === "integer");
}

/** One branch per type, each with the keywords that apply to that type and the enum values of that type. */
function distribute(node: SchemaNode, types: JsonType[]): { branches: SchemaNode[]; rest: SchemaNode } {
  const typed = new Set(Object.values(KEYWORDS_BY_TYPE).flat());
  const rest: SchemaNode = {};
  for (const [key, value] of Object.entries(node)) {
    if (key === "type" || key === "enum" || key === "const" || key === "nullable" || typed.has(key)) continue;
    rest[key] = value;
  }
  const branches: SchemaNode[] = [];
  for (const type of types) {
    const branch: SchemaNode = { type };
    const category = categoryOf(type);
    if (category) for (const key of KEYWORDS_BY_TYPE[category]) if (key in node) branch[key] = node[key];
    if (Array.isArray(node.enum)) {
      const values = node.enum.filter((v) => valueMatchesType(v, type));
      if (values.length === 0) continue;
      branch.enum = values;
    }
    if ("const" in node) {
      if (!valueMatchesType(node.const, type)) continue;
      branch.const = node.const;
    }
    branches.push(branch);
  }
  return { branches, rest };
}

/**
 * `type` arrays. Gemini takes one type (with OpenAPI's `nullable`); Anthropic strict asks for
 * unions as `anyOf`. Type-specific keywords move into the branch of their type.
 */
export function typeArrays(mode: "nullable" | "anyOf"): Rule {
  return nodeRule({
    id: mode === "nullable" ? "type-arrays-nullable" : "type-arrays-anyof",
    severity: "error",
    rows: [{ row: "typeArray", cell: mode === "nullable" ? "one type + `nullable` / `anyOf`" : "→ `anyOf`" }],
    match(node) {
      if (!Array.isArray(node.type)) return null;
      if (mode === "anyOf" && node.type.length < 2) return null;
      return "`type` is a list";
    },
    fix(node, _p, _v, _r, change) {
      const types = declaredTypes(node) ?? [];
      const nonNull = types.filter((t) => t !== "null");
      const hasNull = types.includes("null");
      if (nonNull.length === 0) {
        change('`type: ["null"]` → `type: "null"`');
        return { ...node, type: "null" };
      }
      if (nonNull.length === 1 && (mode === "nullable" || !hasNull)) {
        const out: SchemaNode = { ...node, type: nonNull[0] };
        if (hasNull) out.nullable = true;
        change(hasNull ? `\`type: [${nonNull[0]}, null]\` → \`type: ${nonNull[0]}\` + \`nullable: true\`` : "single-entry `type` list → string");
        return out;
      }
      const { branches, rest } = distribute(node, nonNull);
      if (hasNull && mode === "anyOf") branches.push({ type: "null" });
      const out: SchemaNode = { ...rest };
      if (Array.isArray(node.anyOf)) out.allOf = [...(Array.isArray(node.allOf) ? node.allOf : []), { anyOf: node.anyOf }];
      out.anyOf = branches;
      if (hasNull && mode === "nullable") out.nullable = true;
      change(`\`type: [${types.join(", ")}]\` → \`anyOf\` of single types`);
      return out;
    },
  });
}

function isNullBranch(branch: unknown): boolean {
  return isSchemaNode(branch) && branch.type === "null" && Object.keys(branch).every((k) => k === "type" || k === "description" || k === "title");
}

/** Gemini: `anyOf: [T, {type: "null"}]` → T with `nullable: true`, metadata carried over. */
export const nullableUnions: Rule = nodeRule({
  id: "nullable-unions",
  severity: "warning",
  rows: [{ row: "nullableUnion", cell: "T + `nullable: true`" }],
  match(node) {
    return Array.isArray(node.anyOf) && node.anyOf.some(isNullBranch) ? "union with a `null` branch" : null;
  },
  fix(node, _p, _v, _r, change) {
    const branches = node.anyOf as unknown[];
    const nonNull = branches.filter((b) => !isNullBranch(b));
    const rest: SchemaNode = { ...node };
    delete rest.anyOf;
    if (nonNull.length === 0) {
      change("null-only union → `type: null`");
      return { ...rest, type: "null" };
    }
    if (nonNull.length === 1 && isSchemaNode(nonNull[0])) {
      change("nullable union collapsed to its non-null branch + `nullable: true`");
      return { ...nonNull[0], ...rest, nullable: true };
    }
    change("null branch replaced by `nullable: true`");
    return { ...rest, anyOf: nonNull, nullable: true };
  },
});

/** Infers `type` from the keywords and enum values (a schema with `properties` describes an object). */
export function inferType(node: SchemaNode): JsonType | JsonType[] | null {
  const values = "const" in node ? [node.const] : Array.isArray(node.enum) ? node.enum : null;
  if (values) {
    const types = [...new Set(values.map((v) => jsonTypeOf(v)).filter((t): t is JsonType => t !== "undefined"))];
    const merged = types.includes("number") ? types.filter((t) => t !== "integer") : types;
    if (merged.length === 0) return null;
    return merged.length === 1 ? merged[0]! : merged;
  }
  const found: JsonType[] = [];
  for (const [category, keywords] of Object.entries(KEYWORDS_BY_TYPE)) {
    if (keywords.some((k) => k in node)) found.push(category as JsonType);
  }
  if (found.length === 0) return null;
  return found.length === 1 ? found[0]! : found;
}

function needsInference(node: SchemaNode): boolean {
  return !("type" in node) && !("$ref" in node) && !Array.isArray(node.anyOf) && !Array.isArray(node.oneOf) && !Array.isArray(node.allOf) && inferType(node) !== null;
}

/** Targets that need a `type` on every schema get it from the keywords where they imply one. */
export const inferTypes: Rule = nodeRule({
  id: "infer-types",
  severity: "error",
  rows: [{ row: "untyped", cell: "type inferred from keywords" }],
  match(node) {
    return needsInference(node) ? "schema without `type`" : null;
  },
  fix(node, _p, _v, _r, change) {
    const type = inferType(node)!;
    change(`added \`type: ${Array.isArray(type) ? `[${type.join(", ")}]` : type}\` implied by its keywords`);
    return { ...node, type };
  },
});

/** Gemini has no `const`: a one-value enum says the same. */
export const constToEnum: Rule = nodeRule({
  id: "const-to-enum",
  severity: "error",
  rows: [{ row: "const", cell: "→ one-value `enum`" }],
  match(node) {
    return "const" in node ? "`const` is not supported" : null;
  },
  fix(node, _p, _v, _r, change) {
    const out: SchemaNode = { ...node, enum: [node.const] };
    delete out.const;
    change("`const` → one-value `enum`");
    return out;
  },
});

/** Gemini's allow-list has `minimum`/`maximum` only: exclusive bounds become inclusive plus a description. */
export const exclusiveBounds: Rule = nodeRule({
  id: "exclusive-bounds",
  severity: "error",
  rows: [{ row: "exclusiveRange", cell: "inclusive + description" }],
  match(node) {
    return "exclusiveMinimum" in node || "exclusiveMaximum" in node ? "exclusive bound not supported" : null;
  },
  fix(node, _p, _v, _r, change) {
    let out: SchemaNode = { ...node };
    if (typeof node.exclusiveMinimum === "number") {
      const min = typeof node.minimum === "number" ? Math.max(node.minimum, node.exclusiveMinimum) : node.exclusiveMinimum;
      out.minimum = min;
    }
    if (typeof node.exclusiveMaximum === "number") {
      const max = typeof node.maximum === "number" ? Math.min(node.maximum, node.exclusiveMaximum) : node.exclusiveMaximum;
      out.maximum = max;
    }
    out = moveToDescription(out, ["exclusiveMinimum", "exclusiveMaximum"]).node;
    change("exclusive bounds → inclusive `minimum`/`maximum` (exclusiveness in the description)");
    return out;
  },
});

function nonStringEnum(node: SchemaNode): boolean {
  return Array.isArray(node.enum) && node.enum.some((v) => typeof v !== "string");
}

/**
 * Gemini's `enum` is a list of strings: other values are sent as strings (null becomes
 * `nullable`). The value map turns a string the model returns back into the original value.
 */
export const enumStrings: Rule = {
  id: "enum-strings",
  severity: "error",
  rows: [{ row: "nonStringEnum", cell: "stringified (restored on the way back)" }],
  detect(root) {
    const findings: Finding[] = [];
    visitNodes(root, (node, path) => {
      if (nonStringEnum(node)) findings.push({ path, message: "non-string `enum` values" });
    });
    return findings;
  },
  apply(root, ctx) {
    const { schema, stage } = transformWithMap(root, "enum-strings", (_original, node, map, path) => {
      if (!nonStringEnum(node)) return { node, map };
      const values = node.enum as unknown[];
      const kept = values.filter((v) => v !== null);
      const out: SchemaNode = { ...node, enum: kept.map((v) => (typeof v === "string" ? v : JSON.stringify(v))) };
      if (kept.length !== values.length) out.nullable = true;
      ctx.change(path, "enum values sent as strings");
      return { node: out, map: { ...map, enumValues: kept } };
    });
    ctx.addStage(stage);
    return schema as SchemaNode;
  },
};

function enumWithSlash(node: SchemaNode): boolean {
  return Array.isArray(node.enum) && node.enum.some((v) => typeof v === "string" && v.includes("/"));
}

/** xAI fails with "Invalid arguments passed to the model" on enum strings containing `/` (e.g. `Qwen/Qwen3-8B`). */
export const slashEnum: Rule = nodeRule({
  id: "slash-enum",
  severity: "error",
  rows: [{ row: "slashEnum", cell: "enum → description" }],
  match(node) {
    return enumWithSlash(node) ? "enum value containing `/`" : null;
  },
  fix(node, _p, _v, _r, change) {
    change("enum with `/` values moved into the description");
    return moveToDescription(node, ["enum"]).node;
  },
});

/** Anthropic strict mode takes primitive enum values only. */
export const complexEnum: Rule = nodeRule({
  id: "complex-enum",
  severity: "error",
  rows: [{ row: "complexEnum", cell: "enum → description" }],
  match(node) {
    return Array.isArray(node.enum) && node.enum.some((v) => typeof v === "object" && v !== null) ? "object/array enum values" : null;
  },
  fix(node, _p, _v, _r, change) {
    change("object/array enum moved into the description");
    return moveToDescription(node, ["enum"]).node;
  },
});

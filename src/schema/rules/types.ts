import {
  declaredTypes,
  getAtPointer,
  isSchemaNode,
  jsonTypeOf,
  visitNodes,
  type JsonType,
  type Schema,
  type SchemaNode,
} from "../json-schema.js";
import { compileDerived } from "../compile.js";
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
export function typeArrays(mode: "nullable" | "anyOf", cell?: string): Rule {
  return nodeRule({
    id: mode === "nullable" ? "type-arrays-nullable" : "type-arrays-anyof",
    severity: "error",
    rows: [{ row: "typeArray", cell: cell ?? (mode === "nullable" ? "one type + `nullable` / `anyOf`" : "→ `anyOf`") }],
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

const NULL_BRANCH_METADATA = new Set(["type", "const", "enum", "description", "title", "$comment"]);

/** A union branch that admits only null: `{type: "null"}`, `{type: ["null"]}`, `{const: null}`, `{enum: [null]}`. */
export function isNullBranch(branch: unknown): boolean {
  if (!isSchemaNode(branch) || !Object.keys(branch).every((k) => NULL_BRANCH_METADATA.has(k))) return false;
  if ("type" in branch) {
    const types = declaredTypes(branch);
    if (types === null || types.length === 0 || !types.every((t) => t === "null")) return false;
  }
  if ("const" in branch && branch.const !== null) return false;
  if ("enum" in branch && !(Array.isArray(branch.enum) && branch.enum.length > 0 && branch.enum.every((v) => v === null))) return false;
  return "type" in branch || "const" in branch || "enum" in branch;
}

function unionWithNull(node: SchemaNode): "anyOf" | "oneOf" | null {
  for (const keyword of ["anyOf", "oneOf"] as const) {
    const branches = node[keyword];
    if (Array.isArray(branches) && branches.some(isNullBranch)) return keyword;
  }
  return null;
}

/** Keys of the union node carried onto the branch it collapses to (the branch's own win otherwise). */
const CARRIED = ["title", "description", "default", "examples", "example", "$comment"];

function collapseNullable(node: SchemaNode, keyword: "anyOf" | "oneOf", mark: "nullable" | "description", change: (message: string) => void): SchemaNode {
  const branches = node[keyword] as unknown[];
  const nonNull = branches.filter((b) => !isNullBranch(b));
  const rest: SchemaNode = { ...node };
  delete rest[keyword];
  const marked = (out: SchemaNode): SchemaNode => {
    if (mark === "nullable") return { ...out, nullable: true };
    const note = "(may be null)";
    const current = typeof out.description === "string" ? out.description.trim() : "";
    return current.includes(note) ? out : { ...out, description: current === "" ? note : `${current} ${note}` };
  };
  if (nonNull.length === 0) {
    change("null-only union → `type: null`");
    return { ...rest, type: "null" };
  }
  if (nonNull.length === 1 && isSchemaNode(nonNull[0])) {
    const branch = nonNull[0];
    const out: SchemaNode = { ...branch };
    for (const [key, value] of Object.entries(rest)) {
      // A default beside a $ref is rejected by some validators (Fireworks); it stays off the ref.
      if (key === "default" && "$ref" in branch) continue;
      if (CARRIED.includes(key) || !(key in out)) out[key] = value;
    }
    change(mark === "nullable" ? "nullable union collapsed to its non-null branch + `nullable: true`" : "nullable union collapsed to its non-null branch (null noted in the description)");
    return marked(out);
  }
  change(mark === "nullable" ? "null branch replaced by `nullable: true`" : "null branch dropped (null noted in the description)");
  return marked({ ...rest, [keyword]: nonNull });
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
    return collapseNullable(node, "anyOf", "nullable", change);
  },
});

const ANNOTATIONS = new Set(["title", "description", "default", "examples", "example", "$comment", "deprecated", "readOnly", "writeOnly"]);

/**
 * `branch` widened to also accept null, without a union: "null" added to its `type` list (and to
 * its `enum`; a `const` becomes a two-value enum), recursively into `anyOf`/`allOf` members. Null
 * when that cannot be said exactly (a `not` that forbids null, a ref that does not resolve).
 */
function admitNull(branch: unknown, root: SchemaNode, depth = 0): SchemaNode | null {
  if (branch === true) return {};
  if (!isSchemaNode(branch) || depth > 16) return null;
  let node: SchemaNode = { ...branch };
  if (typeof node.$ref === "string") {
    // One level inlined; refs inside the copy still point at the kept definitions, so even a
    // recursive definition is described exactly.
    const target = node.$ref.startsWith("#") ? getAtPointer(root, node.$ref) : undefined;
    if (!isSchemaNode(target)) return null;
    const siblings = { ...node };
    delete siblings.$ref;
    node = { ...target, ...siblings };
  }
  if ("not" in node && !notAdmitsNull(node.not, root)) return null;
  const constrains = Object.keys(node).some((k) => !ANNOTATIONS.has(k));
  if (!constrains) return node;
  if ("const" in node) {
    node.enum = [node.const];
    delete node.const;
  }
  if (Array.isArray(node.enum) && !node.enum.includes(null)) node.enum = [...node.enum, null];
  if ("type" in node) {
    const types = declaredTypes(node) ?? [];
    if (!types.includes("null")) node.type = [...types, "null"];
  }
  for (const keyword of ["anyOf", "oneOf"] as const) {
    const branches = node[keyword];
    if (!Array.isArray(branches) || branches.some(isNullBranch)) continue;
    // One branch taking null is enough for anyOf, and the only way oneOf stays satisfiable.
    const first = admitNull(branches[0], root, depth + 1);
    if (first === null) return null;
    node[keyword] = [first, ...branches.slice(1)];
  }
  if (Array.isArray(node.allOf)) {
    const members: SchemaNode[] = [];
    for (const member of node.allOf) {
      const widened = admitNull(member, root, depth + 1);
      if (widened === null) return null;
      members.push(widened);
    }
    node.allOf = members;
  }
  return node;
}

/** Whether `not: schema` lets null through (the negated schema rejects null). */
function notAdmitsNull(schema: unknown, root: SchemaNode): boolean {
  try {
    return compileDerived(root, schema as Schema)(null) === false;
  } catch {
    return false;
  }
}

/**
 * Anthropic: nullable unions (`anyOf`/`oneOf` with a null branch) collapse to the non-null
 * branch, with no `nullable` keyword (Anthropic does not know it). Null stays allowed through the
 * branch's own `type` list (`anyOf: [{type: "string"}, {type: "null"}]` → `type: ["string",
 * "null"]`); where that cannot be said exactly (a recursive `$ref`, `not`), "(may be null)" in the
 * description tells the model, and local validation with the original schema still accepts null.
 */
export const nullBranchesDropped: Rule = nodeRule({
  id: "null-branches-dropped",
  severity: "warning",
  rows: [{ row: "nullableUnion", cell: "the non-null branch, null kept in its `type` list (no `nullable`)" }],
  match(node) {
    const keyword = unionWithNull(node);
    return keyword ? `\`${keyword}\` with a \`null\` branch` : null;
  },
  fix(node, _p, _v, root, change) {
    const keyword = unionWithNull(node)!;
    const nonNull = (node[keyword] as unknown[]).filter((b) => !isNullBranch(b));
    const widened = nonNull.length > 0 ? admitNull(nonNull[0], root) : null;
    if (widened !== null) {
      const rest: SchemaNode = { ...node };
      delete rest[keyword];
      if (nonNull.length > 1) {
        change("null branch dropped; null kept in the first branch's `type`");
        return { ...rest, [keyword]: [widened, ...nonNull.slice(1)] };
      }
      const out: SchemaNode = { ...widened };
      for (const [key, value] of Object.entries(rest)) if (ANNOTATIONS.has(key) || !(key in out)) out[key] = value;
      change("nullable union collapsed to its non-null branch, null kept in its `type`");
      return out;
    }
    return collapseNullable(node, keyword, "description", change);
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

/**
 * xAI fails with "Invalid arguments passed to the model" on enum strings containing `/` (e.g.
 * `Qwen/Qwen3-8B`): the whole enum is dropped, its values listed in the description, and the
 * type the values had is kept (added when the node had none).
 */
export const slashEnum: Rule = nodeRule({
  id: "slash-enum",
  severity: "error",
  rows: [{ row: "slashEnum", cell: "whole enum dropped, values → description, type kept" }],
  match(node) {
    return enumWithSlash(node) ? "enum value containing `/`" : null;
  },
  fix(node, _p, _v, _r, change) {
    const type = "type" in node || "$ref" in node ? null : inferType(node);
    change("enum with `/` values moved into the description");
    const out = moveToDescription(node, ["enum"]).node;
    return type === null ? out : { ...out, type };
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

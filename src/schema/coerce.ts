import {
  declaredTypes,
  getAtPointer,
  isLocalRef,
  isPlainObject,
  isSchemaNode,
  jsonTypeOf,
  setOwn,
  valueHasType,
  type JsonType,
  type Schema,
  type SchemaNode,
} from "./json-schema.js";

/**
 * Schema-guided coercion of values models commonly send in the wrong JSON type: `"5"` for 5,
 * `"true"` for true, `"null"` for null, an object sent as a JSON string, a single value where a
 * list is expected. A value is only changed where the schema at that location does not accept
 * its type and does accept the coerced one; everything else is left exactly as it came.
 */

/**
 * What a coercion did: a string read as a `number`, `boolean` or `null`; a string holding JSON read
 * as the object or list it holds (`json`); one value wrapped in a list (`array`).
 */
export type CoercionKind = "number" | "boolean" | "null" | "json" | "array";

/** One coercion applied to the arguments: where, which kind, and the value before and after. */
export interface Coercion {
  path: Array<string | number>;
  kind: CoercionKind;
  from: unknown;
  to: unknown;
}

// One optional sign, digits, optional fraction and exponent: no nested quantifiers.
const NUMERIC = /^-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?$/;

const MAX_DEPTH = 64;

/**
 * Schema-guided coercion of values models send in the wrong JSON type (`"5"` for 5, `"true"`,
 * `"null"`, an object as a JSON string, one value where a list is expected). A value changes only
 * where the schema rejects its type and accepts the coerced one; the input is never mutated and
 * every change is listed.
 */
export function coerceArguments(
  schema: Schema,
  value: unknown,
  kinds: readonly CoercionKind[] = ["number", "boolean", "null", "json", "array"],
): { value: unknown; coercions: Coercion[] } {
  const coercions: Coercion[] = [];
  const allowed = new Set(kinds);
  const result = coerceAt([schema], value, [], { root: schema, allowed, coercions, depth: 0 });
  return { value: result, coercions };
}

interface Ctx {
  root: Schema;
  allowed: Set<CoercionKind>;
  coercions: Coercion[];
  depth: number;
}

/** Flattens `$ref` and `allOf` so that every schema constraining this location is in one list. */
function expand(schemas: Schema[], root: Schema, depth = 0): SchemaNode[] {
  const out: SchemaNode[] = [];
  for (const schema of schemas) {
    if (!isSchemaNode(schema)) continue;
    out.push(schema);
    if (depth > 16) continue;
    if (isLocalRef(schema.$ref)) {
      const target = getAtPointer(root, schema.$ref);
      if (target !== undefined) out.push(...expand([target as Schema], root, depth + 1));
    }
    if (Array.isArray(schema.allOf)) out.push(...expand(schema.allOf as Schema[], root, depth + 1));
  }
  return out;
}

/** The JSON types acceptable at a location, or null when any type may do. */
function acceptedTypes(nodes: SchemaNode[], root: Schema, depth = 0): Set<JsonType> | null {
  let result: Set<JsonType> | null = null;
  const intersect = (types: Set<JsonType>) => {
    if (result === null) result = new Set(types);
    else result = new Set([...result].filter((t) => types.has(t) || (t === "integer" && types.has("number"))));
  };
  for (const node of nodes) {
    const declared = declaredTypes(node);
    if (declared) intersect(new Set(declared));
    const values = "const" in node ? [node.const] : Array.isArray(node.enum) ? node.enum : null;
    if (values) intersect(new Set(values.map((v) => jsonTypeOf(v)).filter((t): t is JsonType => t !== "undefined")));
    for (const keyword of ["anyOf", "oneOf"] as const) {
      const branches = node[keyword];
      if (!Array.isArray(branches) || depth > 16) continue;
      const union = new Set<JsonType>();
      let open = false;
      for (const branch of branches) {
        const types = acceptedTypes(expand([branch as Schema], root), root, depth + 1);
        if (types === null) open = true;
        else types.forEach((t) => union.add(t));
      }
      if (!open) intersect(union);
    }
  }
  return result;
}

function accepts(types: Set<JsonType> | null, value: unknown): boolean {
  if (types === null) return true;
  for (const t of types) if (valueHasType(value, t)) return true;
  return false;
}

function coerceAt(schemas: Schema[], value: unknown, path: Array<string | number>, ctx: Ctx): unknown {
  if (ctx.depth > MAX_DEPTH) return value;
  const nodes = expand(schemas, ctx.root);
  if (nodes.length === 0) return value;
  const types = acceptedTypes(nodes, ctx.root);
  let current = value;
  if (!accepts(types, current) && types !== null) current = convert(current, types, path, ctx);
  const inner: Ctx = { ...ctx, depth: ctx.depth + 1 };
  if (isPlainObject(current)) {
    let out: Record<string, unknown> | null = null;
    for (const key of Object.keys(current)) {
      const subs = alternatives(propertyCandidates(nodes, key, ctx.root));
      if (subs.length === 0) continue;
      const next = coerceAt(subs, current[key], [...path, key], inner);
      if (next !== current[key]) {
        out ??= { ...current };
        setOwn(out, key, next);
      }
    }
    return out ?? current;
  }
  if (Array.isArray(current)) {
    let out: unknown[] | null = null;
    current.forEach((item, index) => {
      const subs = alternatives(itemCandidates(nodes, index, ctx.root));
      if (subs.length === 0) return;
      const next = coerceAt(subs, item, [...path, index], inner);
      if (next !== item) {
        out ??= [...(current as unknown[])];
        out[index] = next;
      }
    });
    return out ?? current;
  }
  return current;
}

function convert(value: unknown, types: Set<JsonType>, path: Array<string | number>, ctx: Ctx): unknown {
  const record = (kind: CoercionKind, to: unknown) => {
    ctx.coercions.push({ path, kind, from: value, to });
    return to;
  };
  if (typeof value === "string") {
    const text = value.trim();
    if (ctx.allowed.has("number") && (types.has("number") || types.has("integer")) && NUMERIC.test(text)) {
      const n = Number(text);
      if (Number.isFinite(n) && (types.has("number") || Number.isInteger(n))) return record("number", n);
    }
    if (ctx.allowed.has("boolean") && types.has("boolean") && (text === "true" || text === "false")) return record("boolean", text === "true");
    if (ctx.allowed.has("null") && types.has("null") && text === "null") return record("null", null);
    if (ctx.allowed.has("json") && (types.has("object") || types.has("array")) && (text.startsWith("{") || text.startsWith("["))) {
      try {
        const parsed: unknown = JSON.parse(text);
        if (accepts(types, parsed)) return record("json", parsed);
      } catch {
        // Not JSON: leave the value for validation to report.
      }
    }
  }
  if (ctx.allowed.has("array") && types.has("array") && !Array.isArray(value) && value !== undefined) {
    return record("array", [value]);
  }
  return value;
}

/** Candidates from different branches are alternatives, not joint constraints. */
function alternatives(subs: Schema[]): Schema[] {
  return subs.length > 1 ? [{ anyOf: subs }] : subs;
}

function branchNodes(nodes: SchemaNode[], root: Schema): SchemaNode[] {
  const out = [...nodes];
  for (const node of nodes) {
    for (const keyword of ["anyOf", "oneOf"] as const) {
      const branches = node[keyword];
      if (Array.isArray(branches)) out.push(...expand(branches as Schema[], root));
    }
  }
  return out;
}

function propertyCandidates(nodes: SchemaNode[], key: string, root: Schema): Schema[] {
  const out: Schema[] = [];
  for (const node of branchNodes(nodes, root)) {
    const props = node.properties;
    if (isPlainObject(props) && Object.prototype.hasOwnProperty.call(props, key)) {
      out.push(props[key] as Schema);
      continue;
    }
    if (isSchemaNode(node.additionalProperties)) out.push(node.additionalProperties);
  }
  return out;
}

function itemCandidates(nodes: SchemaNode[], index: number, root: Schema): Schema[] {
  const out: Schema[] = [];
  for (const node of branchNodes(nodes, root)) {
    if (Array.isArray(node.prefixItems) && index < node.prefixItems.length) out.push(node.prefixItems[index] as Schema);
    else if (Array.isArray(node.items) && index < node.items.length) out.push(node.items[index] as Schema);
    else if (isSchemaNode(node.items)) out.push(node.items);
  }
  return out;
}

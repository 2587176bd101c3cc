import { ToolwireError } from "../errors.js";
import { isPlainObject, setOwn } from "../json/shape.js";
import { DEFAULT_LIMITS, nestsDeeperThan, TooDeepError } from "../limits.js";

/**
 * Shared vocabulary for walking JSON Schema documents: which keywords hold subschemas, which
 * hold opaque data, JSON pointers, stable serialization and local `$ref` resolution.
 * Everything here is pure: nodes are never mutated, transformed trees are fresh objects.
 */

/** A JSON Schema object node (the non-boolean form of `Schema`). */
export type SchemaNode = Record<string, unknown>;
/** A JSON Schema (2020-12): an object or a boolean. */
export type Schema = boolean | SchemaNode;
/** The JSON Schema type names. */
export type JsonType = "string" | "number" | "integer" | "boolean" | "null" | "array" | "object";

export const JSON_TYPES: readonly JsonType[] = ["string", "number", "integer", "boolean", "null", "array", "object"];

/** Keywords whose value is a map from names to subschemas. */
export const MAP_KEYWORDS = ["properties", "patternProperties", "$defs", "definitions", "dependentSchemas"] as const;
/** Keywords whose value is a list of subschemas. */
export const LIST_KEYWORDS = ["anyOf", "oneOf", "allOf", "prefixItems"] as const;
/** Keywords whose value is one subschema (`items` may also be a draft-07 tuple list). */
export const SINGLE_KEYWORDS = [
  "items",
  "additionalItems",
  "additionalProperties",
  "unevaluatedProperties",
  "unevaluatedItems",
  "contains",
  "propertyNames",
  "not",
  "if",
  "then",
  "else",
] as const;

/**
 * The deepest JSON nesting a schema may have (`DEFAULT_LIMITS.maxDepth`, as arguments): the schema
 * walks and ajv's compiler recurse, and a schema nested thousands of levels deep would overflow
 * the stack. Real tool schemas stay far below it.
 */
export const MAX_SCHEMA_DEPTH = DEFAULT_LIMITS.maxDepth;

/** Throws TooDeepError (code `too_deep`) when `schema` nests deeper than MAX_SCHEMA_DEPTH. */
export function assertSchemaDepth(schema: unknown): void {
  if (nestsDeeperThan(schema, MAX_SCHEMA_DEPTH)) throw new TooDeepError("schema", MAX_SCHEMA_DEPTH);
}

export function isSchemaNode(value: unknown): value is SchemaNode {
  return isPlainObject(value);
}

export { isPlainObject, setOwn };

export function isExtensionKeyword(key: string): boolean {
  return key.startsWith("x-");
}

/** RFC 6901 pointer segment escaping. */
export function escapePointer(segment: string): string {
  return segment.replace(/~/g, "~0").replace(/\//g, "~1");
}

export function unescapePointer(segment: string): string {
  return segment.replace(/~1/g, "/").replace(/~0/g, "~");
}

export function pointer(base: string, ...segments: Array<string | number>): string {
  let out = base;
  for (const segment of segments) out += "/" + escapePointer(String(segment));
  return out;
}

/** Deterministic serialization (object keys sorted) used for cache keys and equality. */
export function stableStringify(value: unknown): string {
  const seen = new Set<unknown>();
  const write = (v: unknown): string => {
    if (v === undefined) return "null";
    if (typeof v !== "object" || v === null) return JSON.stringify(v) ?? "null";
    if (seen.has(v)) throw new ToolwireError("cyclic_value", "cannot serialize a cyclic structure");
    seen.add(v);
    let out: string;
    if (Array.isArray(v)) {
      out = "[" + v.map(write).join(",") + "]";
    } else {
      const keys = Object.keys(v).sort();
      out = "{" + keys.map((k) => JSON.stringify(k) + ":" + write((v as Record<string, unknown>)[k])).join(",") + "}";
    }
    seen.delete(v);
    return out;
  };
  return write(value);
}

export function jsonTypeOf(value: unknown): JsonType | "undefined" {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  switch (typeof value) {
    case "string":
      return "string";
    case "boolean":
      return "boolean";
    case "number":
      return Number.isInteger(value) ? "integer" : "number";
    case "object":
      return "object";
    default:
      return "undefined";
  }
}

/** True when `value` is acceptable for a schema `type` entry (integers are numbers too). */
export function valueHasType(value: unknown, type: JsonType): boolean {
  const actual = jsonTypeOf(value);
  if (actual === type) return true;
  return type === "number" && actual === "integer";
}

/** The `type` keyword as a list, or null when absent or malformed. */
export function declaredTypes(node: SchemaNode): JsonType[] | null {
  const t = node.type;
  if (typeof t === "string") return (JSON_TYPES as readonly string[]).includes(t) ? [t as JsonType] : null;
  if (Array.isArray(t)) {
    const types = t.filter((x): x is JsonType => typeof x === "string" && (JSON_TYPES as readonly string[]).includes(x));
    return types.length > 0 ? types : null;
  }
  return null;
}

export interface ChildRef {
  keyword: string;
  /** Property name, definition name or list index; undefined for single-schema keywords. */
  key?: string | number;
  schema: unknown;
  path: string;
}

/** The direct subschema positions of a node, in a stable order. */
export function childSchemas(node: SchemaNode, path: string): ChildRef[] {
  const out: ChildRef[] = [];
  for (const keyword of MAP_KEYWORDS) {
    const map = node[keyword];
    if (!isPlainObject(map)) continue;
    for (const key of Object.keys(map)) out.push({ keyword, key, schema: map[key], path: pointer(path, keyword, key) });
  }
  for (const keyword of LIST_KEYWORDS) {
    const list = node[keyword];
    if (!Array.isArray(list)) continue;
    list.forEach((schema, index) => out.push({ keyword, key: index, schema, path: pointer(path, keyword, index) }));
  }
  for (const keyword of SINGLE_KEYWORDS) {
    if (!(keyword in node)) continue;
    const value = node[keyword];
    if (keyword === "items" && Array.isArray(value)) {
      value.forEach((schema, index) => out.push({ keyword, key: index, schema, path: pointer(path, keyword, index) }));
      continue;
    }
    out.push({ keyword, schema: value, path: pointer(path, keyword) });
  }
  return out;
}

/** Calls `visit` for every schema node (objects only), parents before children. */
export function visitNodes(schema: unknown, visit: (node: SchemaNode, path: string, parent: ChildRef | null) => void): void {
  const stack: Array<{ schema: unknown; path: string; via: ChildRef | null }> = [{ schema, path: "#", via: null }];
  while (stack.length > 0) {
    const { schema: current, path, via } = stack.pop()!;
    if (!isSchemaNode(current)) continue;
    visit(current, path, via);
    const children = childSchemas(current, path);
    for (let i = children.length - 1; i >= 0; i--) {
      const child = children[i]!;
      stack.push({ schema: child.schema, path: child.path, via: child });
    }
  }
}

/** A node's replacement (or the node itself), given where the node sits. */
type NodeRewrite = (node: SchemaNode, path: string, via: ChildRef | null) => unknown;

/**
 * Rebuilds the tree bottom-up: children first, then `fn` on the node with its rebuilt children.
 * `fn` returns the replacement (or the same node). Input is never mutated.
 */
export function transformNodes(schema: unknown, fn: NodeRewrite, path = "#", via: ChildRef | null = null): unknown {
  if (!isSchemaNode(schema)) return schema;
  const rebuilt = rebuildChildren(schema, path, (child) => transformNodes(child.schema, fn, child.path, child));
  return fn(rebuilt, path, via);
}

/**
 * Rebuilds the tree top-down: `fn` sees each node before its children, so a rule can consume
 * part of a subtree (an `allOf` member holding an `if`/`then`) before the walk reaches it.
 */
export function transformNodesTopDown(schema: unknown, fn: NodeRewrite, path = "#", via: ChildRef | null = null): unknown {
  if (!isSchemaNode(schema)) return schema;
  const replaced = fn(schema, path, via);
  if (!isSchemaNode(replaced)) return replaced;
  return rebuildChildren(replaced, path, (child) => transformNodesTopDown(child.schema, fn, child.path, child));
}

/** A shallow copy of `node` whose subschemas are replaced by `map(child)`. */
export function rebuildChildren(node: SchemaNode, path: string, map: (child: ChildRef) => unknown): SchemaNode {
  const out: SchemaNode = { ...node };
  for (const keyword of MAP_KEYWORDS) {
    const value = node[keyword];
    if (!isPlainObject(value)) continue;
    const next: Record<string, unknown> = {};
    for (const key of Object.keys(value)) setOwn(next, key, map({ keyword, key, schema: value[key], path: pointer(path, keyword, key) }));
    out[keyword] = next;
  }
  for (const keyword of LIST_KEYWORDS) {
    const value = node[keyword];
    if (!Array.isArray(value)) continue;
    out[keyword] = value.map((schema, index) => map({ keyword, key: index, schema, path: pointer(path, keyword, index) }));
  }
  for (const keyword of SINGLE_KEYWORDS) {
    if (!(keyword in node)) continue;
    const value = node[keyword];
    if (keyword === "items" && Array.isArray(value)) {
      out[keyword] = value.map((schema, index) => map({ keyword, key: index, schema, path: pointer(path, keyword, index) }));
      continue;
    }
    out[keyword] = map({ keyword, schema: value, path: pointer(path, keyword) });
  }
  return out;
}

export function getAtPointer(root: unknown, ref: string): unknown {
  if (!ref.startsWith("#")) return undefined;
  const body = ref.slice(1);
  if (body === "") return root;
  if (!body.startsWith("/")) return undefined;
  let current: unknown = root;
  for (const raw of body.slice(1).split("/")) {
    let decoded = raw;
    try {
      decoded = decodeURIComponent(raw);
    } catch {
      // A literal "%" in a name: use the segment as written.
    }
    const segment = unescapePointer(decoded);
    if (Array.isArray(current)) current = current[Number(segment)];
    else if (isPlainObject(current)) current = Object.prototype.hasOwnProperty.call(current, segment) ? current[segment] : undefined;
    else return undefined;
  }
  return current;
}

/** True for `#/...` references into the same document. */
export function isLocalRef(ref: unknown): ref is string {
  return typeof ref === "string" && ref.startsWith("#");
}

/** The one value a schema allows (`const`, or an `enum` of one value), or null. */
export function pinOf(schema: SchemaNode): { value: unknown } | null {
  if ("const" in schema) return { value: schema.const };
  if (Array.isArray(schema.enum) && schema.enum.length === 1) return { value: schema.enum[0] };
  return null;
}

/** The one value property `key` of `node` is pinned to, or null. */
export function propertyPin(node: unknown, key: string): { value: unknown } | null {
  if (!isSchemaNode(node) || !isPlainObject(node.properties)) return null;
  const sub = node.properties[key];
  return isSchemaNode(sub) ? pinOf(sub) : null;
}

/** The names in a node's `required` list (entries that are not strings are left out). */
export function requiredOf(node: SchemaNode): string[] {
  return Array.isArray(node.required) ? node.required.filter((x): x is string => typeof x === "string") : [];
}

/** A value as messages quote it: a string in single quotes, anything else as its JSON preview. */
export function literal(value: unknown, max = 60): string {
  return typeof value === "string" ? `'${value}'` : preview(value, max);
}

/** Compact one-line JSON for messages, cut at `max` characters. */
export function preview(value: unknown, max = 60): string {
  let text: string;
  try {
    text = JSON.stringify(value) ?? String(value);
  } catch {
    text = String(value);
  }
  return text.length > max ? text.slice(0, max - 1) + "…" : text;
}

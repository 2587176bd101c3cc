import { compileDerived } from "./compile.js";
import { dialectToJsonSchema } from "./dialect.js";
import {
  declaredTypes,
  isLocalRef,
  isPlainObject,
  isSchemaNode,
  jsonTypeOf,
  pointer,
  setOwn,
  type JsonType,
  type SchemaNode,
} from "./json-schema.js";

/**
 * How sanitizing changed the shape of argument values, as plain JSON data so it can be stored
 * beside a tool definition. Each sanitizer stage that changes value shapes (renamed keys, values
 * sent as JSON strings, strict mode's nulls for absent optional fields, closed objects, Gemini's
 * string enums) records a map against its own output schema. `carryArguments` applies the stages
 * in order (original → target shape: history replay, tests); `restoreArguments` undoes them in
 * reverse (a model's target-shaped arguments → the shape the tool was written for).
 */

export interface ValueMapNode {
  /** The value is sent as a JSON-encoded string. */
  json?: true;
  /** Object keys renamed by the stage: output key → original key. */
  renamed?: Record<string, string>;
  /** Per-property maps keyed by the output key. */
  properties?: Record<string, ValueMapNode>;
  /** Map for keys not listed in `properties`. */
  additional?: ValueMapNode;
  /** Output keys of an object the stage closed: carrying drops any other key. */
  closed?: string[];
  /** Output keys carrying fills with null when absent (strict mode: every field present). */
  fillNull?: string[];
  /** Output keys whose null restoring removes (the original field was optional, not nullable). */
  dropNull?: string[];
  items?: ValueMapNode;
  prefixItems?: ValueMapNode[];
  /** anyOf/oneOf branches, each with the value shapes used to pick it. */
  branches?: BranchMap[];
  /** allOf members: all of them apply. */
  all?: ValueMapNode[];
  /** A `$ref`: the stage's `defs` entry to apply. */
  ref?: string;
  /** Enum values sent as strings: restoring maps a string back to the original value. */
  enumValues?: unknown[];
}

export interface ValueShape {
  /** JSON types the branch accepts (null: any). */
  types: JsonType[] | null;
  /** Declared object keys (null: not an object schema with properties). */
  keys: string[] | null;
  /** The object takes no keys beyond `keys` (`additionalProperties: false`). */
  closed?: boolean;
}

export interface BranchMap {
  in: ValueShape;
  out: ValueShape;
  map: ValueMapNode;
  /** The branch's schema before and after the stage: when several branches fit a value's type, the first the value is valid under is taken. */
  inSchema?: unknown;
  outSchema?: unknown;
}

/** One rewrite stage of a sanitized schema, recorded so that arguments can be mapped back through it. */
export interface ValueMapStage {
  rule: string;
  root: ValueMapNode;
  /** Maps of `$defs`/`definitions` entries by pointer (`#/$defs/name`), and `#` for the root. */
  defs?: Record<string, ValueMapNode>;
  /** The `$defs`/`definitions` of the stage's input and output schemas, for `$ref`s in branch schemas. */
  inDefs?: SchemaNode;
  outDefs?: SchemaNode;
}

/** The stages of one sanitization, in the order they were applied. */
export type ArgumentMap = ValueMapStage[];

/** Original-shaped arguments → the shape the sanitized schema describes. */
export function carryArguments(map: ArgumentMap, args: unknown): unknown {
  let value = args;
  for (const stage of map) value = applyNode(value, stage.root, stage, "carry", 0);
  return value;
}

/** Arguments shaped by the sanitized schema (what the model sent) → the original shape. */
export function restoreArguments(map: ArgumentMap, args: unknown): unknown {
  let value = args;
  for (let i = map.length - 1; i >= 0; i--) {
    const stage = map[i]!;
    value = applyNode(value, stage.root, stage, "restore", 0);
  }
  return value;
}

type Direction = "carry" | "restore";

const MAX_DEPTH = 256;

function applyNode(value: unknown, node: ValueMapNode, stage: ValueMapStage, dir: Direction, depth: number): unknown {
  if (depth > MAX_DEPTH || value === undefined) return value;
  if (node.ref !== undefined) {
    const target = stage.defs?.[node.ref];
    return target ? applyNode(value, target, stage, dir, depth + 1) : value;
  }
  if (node.json) {
    if (dir === "carry") return JSON.stringify(value);
    if (typeof value !== "string") return value;
    try {
      return JSON.parse(value) as unknown;
    } catch {
      return value;
    }
  }
  let v: unknown = value;
  if (node.enumValues && dir === "restore" && typeof v === "string" && !node.enumValues.includes(v)) {
    const text = v;
    const original = node.enumValues.find((e) => typeof e !== "string" && JSON.stringify(e) === text);
    if (original !== undefined) v = original;
  }
  if (node.all) {
    const members = dir === "carry" ? node.all : [...node.all].reverse();
    for (const member of members) v = applyNode(v, member, stage, dir, depth + 1);
  }
  if (node.branches) {
    if (dir === "carry") {
      const branch = pickBranch(v, node.branches, dir, stage);
      if (branch) v = applyNode(v, branch.map, stage, dir, depth + 1);
    } else {
      v = restoreThroughBranches(v, node.branches, stage, depth);
    }
  }
  if (isPlainObject(v) && (node.properties || node.renamed || node.closed || node.fillNull || node.dropNull || node.additional)) {
    return dir === "carry" ? carryObject(v, node, stage, depth) : restoreObject(v, node, stage, depth);
  }
  if (Array.isArray(v) && (node.items || node.prefixItems)) {
    return v.map((item, index) => {
      const sub = node.prefixItems?.[index] ?? node.items;
      return sub ? applyNode(item, sub, stage, dir, depth + 1) : item;
    });
  }
  return v;
}

function carryObject(v: Record<string, unknown>, node: ValueMapNode, stage: ValueMapStage, depth: number): Record<string, unknown> {
  const outKeyOf = new Map<string, string>();
  for (const [outKey, inKey] of Object.entries(node.renamed ?? {})) outKeyOf.set(inKey, outKey);
  const out: Record<string, unknown> = {};
  for (const [key, val] of Object.entries(v)) {
    const outKey = outKeyOf.get(key) ?? key;
    if (node.closed && !node.closed.includes(outKey)) continue;
    const sub = node.properties && Object.prototype.hasOwnProperty.call(node.properties, outKey) ? node.properties[outKey] : node.additional;
    setOwn(out, outKey, sub ? applyNode(val, sub, stage, "carry", depth + 1) : val);
  }
  for (const key of node.fillNull ?? []) if (!Object.prototype.hasOwnProperty.call(out, key)) setOwn(out, key, null);
  return out;
}

function restoreObject(v: Record<string, unknown>, node: ValueMapNode, stage: ValueMapStage, depth: number): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, val] of Object.entries(v)) {
    if (val === null && node.dropNull?.includes(key)) continue;
    const inKey = node.renamed && Object.prototype.hasOwnProperty.call(node.renamed, key) ? node.renamed[key]! : key;
    const sub = node.properties && Object.prototype.hasOwnProperty.call(node.properties, key) ? node.properties[key] : node.additional;
    setOwn(out, inKey, sub ? applyNode(val, sub, stage, "restore", depth + 1) : val);
  }
  return out;
}

function typeMatches(types: JsonType[] | null, value: unknown): boolean {
  if (types === null) return true;
  const actual = jsonTypeOf(value);
  return types.some((t) => t === actual || (t === "number" && actual === "integer"));
}

const normalized = new WeakMap<object, SchemaNode>();

function validUnder(schema: unknown, defs: SchemaNode | undefined, value: unknown): boolean {
  if (typeof schema === "boolean") return schema;
  if (!isSchemaNode(schema)) return false;
  let node = normalized.get(schema);
  if (!node) {
    node = dialectToJsonSchema(schema);
    normalized.set(schema, node);
  }
  try {
    return compileDerived(defs ?? EMPTY_DEFS, node)(value) === true;
  } catch {
    return false;
  }
}

const EMPTY_DEFS: SchemaNode = {};

/**
 * Restoring through a union: target shapes of different branches can coincide (an array of
 * JSON strings and an array of plain strings), so each candidate's restoration is checked
 * against that branch's original schema and the first valid one wins.
 */
function restoreThroughBranches(value: unknown, branches: BranchMap[], stage: ValueMapStage, depth: number): unknown {
  let candidates = branches.filter((b) => typeMatches(b.out.types, value));
  if (candidates.length === 0) return value;
  if (candidates.length === 1) return applyNode(value, candidates[0]!.map, stage, "restore", depth + 1);
  // The model wrote the value against the sanitized schema: the branches it is valid under there
  // come first. An open branch can accept a restoration that still holds another branch's
  // strict-mode nulls (a tuple turned into a union of its positions), so trying branches in
  // declaration order alone picks the wrong one.
  // Targets that drop `additionalProperties` leave several branches open to any object, so among
  // equally fitting branches the one that declares the value's keys (renamed keys included) goes first.
  const fits = new Map(candidates.map((c) => [c, c.outSchema !== undefined && validUnder(c.outSchema, stage.outDefs, value)]));
  const declared = (c: BranchMap): number => {
    if (!isPlainObject(value) || c.out.keys === null) return 0;
    const keys = Object.keys(value);
    const known = keys.filter((k) => c.out.keys!.includes(k)).length;
    return known - (keys.length - known);
  };
  candidates = candidates
    .map((c, order) => ({ c, order, fit: fits.get(c) === true ? 1 : 0, score: declared(c) }))
    .sort((x, y) => y.fit - x.fit || y.score - x.score || x.order - y.order)
    .map((entry) => entry.c);
  for (const candidate of candidates) {
    const restored = applyNode(value, candidate.map, stage, "restore", depth + 1);
    if (candidate.inSchema !== undefined && validUnder(candidate.inSchema, stage.inDefs, restored)) return restored;
  }
  const fallback = pickBranch(value, candidates, "restore", stage) ?? candidates[0]!;
  return applyNode(value, fallback.map, stage, "restore", depth + 1);
}

function pickBranch(value: unknown, branches: BranchMap[], dir: Direction, stage: ValueMapStage): BranchMap | undefined {
  const side = dir === "carry" ? "in" : "out";
  let candidates = branches.filter((b) => typeMatches(b[side].types, value));
  if (candidates.length <= 1) return candidates[0];
  const defs = dir === "carry" ? stage.inDefs : stage.outDefs;
  const valid = candidates.filter((candidate) => {
    const schema = dir === "carry" ? candidate.inSchema : candidate.outSchema;
    return schema !== undefined && validUnder(schema, defs, value);
  });
  // Among branches the value is valid under, prefer one that declares all its keys: an open
  // branch that a strict target closes would drop them.
  if (valid.length === 1 || (valid.length > 1 && !isPlainObject(value))) return valid[0];
  if (valid.length > 1) candidates = valid;
  if (!isPlainObject(value)) return candidates[0];
  const keys = Object.keys(value);
  let best = candidates[0];
  let bestScore = -Infinity;
  for (const candidate of candidates) {
    const shape = candidate[side];
    const declared = shape.keys ?? [];
    const unknown = keys.filter((k) => !declared.includes(k)).length;
    // A closed branch cannot be the one an object with undeclared keys matched; one closed by the
    // stage (its map lists the keys it keeps) would drop them.
    const kept = candidate.map.closed;
    const dropped = kept ? keys.filter((k) => !kept.includes(k)).length : 0;
    const score = keys.length - 2 * unknown - 4 * dropped - (shape.closed && unknown > 0 ? 1000 : 0);
    if (score > bestScore) {
      bestScore = score;
      best = candidate;
    }
  }
  return best;
}

/** The value shape a schema node accepts, for picking union branches. */
export function shapeOf(node: unknown): ValueShape {
  if (!isSchemaNode(node)) return { types: null, keys: null };
  let types: JsonType[] | null = declaredTypes(node);
  const values = "const" in node ? [node.const] : Array.isArray(node.enum) ? node.enum : null;
  if (values && types === null) {
    types = [...new Set(values.map((v) => jsonTypeOf(v)).filter((t): t is JsonType => t !== "undefined"))];
  }
  if (types === null && (Array.isArray(node.anyOf) || Array.isArray(node.oneOf))) {
    const branches = (node.anyOf ?? node.oneOf) as unknown[];
    const union = new Set<JsonType>();
    for (const b of branches) {
      const t = shapeOf(b).types;
      if (t === null) {
        types = null;
        union.clear();
        break;
      }
      t.forEach((x) => union.add(x));
    }
    if (union.size > 0) types = [...union];
  }
  if (types && node.nullable === true && !types.includes("null")) types = [...types, "null"];
  const keys = isPlainObject(node.properties) ? Object.keys(node.properties) : null;
  return node.additionalProperties === false ? { types, keys, closed: true } : { types, keys };
}

function isEmptyMap(node: ValueMapNode | undefined): boolean {
  return node === undefined || Object.keys(node).length === 0;
}

export type MapVisitor = (
  original: SchemaNode,
  rebuilt: SchemaNode,
  childMap: ValueMapNode,
  path: string,
) => { node: unknown; map?: ValueMapNode | undefined };

/**
 * A bottom-up transform that also assembles the stage's value map from the positions of the
 * children (properties, items, prefixItems, anyOf/oneOf, allOf, `$ref`, `$defs`). The visitor
 * gets the node as it was, as rebuilt with transformed children, and the children's map.
 */
export function transformWithMap(schema: unknown, rule: string, visit: MapVisitor): { schema: unknown; stage: ValueMapStage | null } {
  const defs: Record<string, ValueMapNode> = {};
  const walk = (node: unknown, path: string): { node: unknown; map: ValueMapNode | undefined } => {
    if (!isSchemaNode(node)) return { node, map: undefined };
    const rebuilt: SchemaNode = { ...node };
    const map: ValueMapNode = {};
    for (const keyword of ["properties", "patternProperties", "dependentSchemas", "$defs", "definitions"] as const) {
      const value = node[keyword];
      if (!isPlainObject(value)) continue;
      const next: Record<string, unknown> = {};
      for (const key of Object.keys(value)) {
        const child = walk(value[key], pointer(path, keyword, key));
        setOwn(next, key, child.node);
        if (isEmptyMap(child.map)) continue;
        if (keyword === "properties") setOwn((map.properties ??= {}), key, child.map!);
        if ((keyword === "$defs" || keyword === "definitions") && path === "#") defs[pointer("#", keyword, key)] = child.map!;
      }
      rebuilt[keyword] = next;
    }
    for (const keyword of ["anyOf", "oneOf", "allOf", "prefixItems"] as const) {
      const value = node[keyword];
      if (!Array.isArray(value)) continue;
      const children = value.map((child, index) => walk(child, pointer(path, keyword, index)));
      rebuilt[keyword] = children.map((c) => c.node);
      if (children.every((c) => isEmptyMap(c.map))) continue;
      if (keyword === "allOf") map.all = children.map((c) => c.map ?? {});
      else if (keyword === "prefixItems") map.prefixItems = children.map((c) => c.map ?? {});
      else map.branches = children.map((c, i) => ({ in: shapeOf(value[i]), out: shapeOf(c.node), map: c.map ?? {}, inSchema: value[i], outSchema: c.node }));
    }
    for (const keyword of ["items", "additionalProperties", "additionalItems", "not", "if", "then", "else", "contains", "propertyNames", "unevaluatedProperties", "unevaluatedItems"] as const) {
      if (!(keyword in node)) continue;
      const value = node[keyword];
      if (keyword === "items" && Array.isArray(value)) {
        const children = value.map((child, index) => walk(child, pointer(path, keyword, index)));
        rebuilt.items = children.map((c) => c.node);
        if (!children.every((c) => isEmptyMap(c.map))) map.prefixItems = children.map((c) => c.map ?? {});
        continue;
      }
      const child = walk(value, pointer(path, keyword));
      rebuilt[keyword] = child.node;
      if (isEmptyMap(child.map)) continue;
      if (keyword === "items" || keyword === "additionalItems") map.items ??= child.map!;
      if (keyword === "additionalProperties") map.additional = child.map!;
    }
    if (isLocalRef(node.$ref)) map.ref = node.$ref;
    const result = visit(node, rebuilt, map, path);
    return { node: result.node, map: isEmptyMap(result.map) ? undefined : result.map };
  };
  const result = walk(schema, "#");
  const root = result.map ?? {};
  defs["#"] = root;
  const stage: ValueMapStage = { rule, root, defs };
  const inDefs = definitionsOf(schema);
  const outDefs = definitionsOf(result.node);
  if (inDefs) stage.inDefs = inDefs;
  if (outDefs) stage.outDefs = outDefs;
  return { schema: result.node, stage: hasEffect(root, stage, new Set()) ? stage : null };
}

function definitionsOf(schema: unknown): SchemaNode | undefined {
  if (!isSchemaNode(schema)) return undefined;
  const out: SchemaNode = {};
  if (schema.$defs !== undefined) out.$defs = schema.$defs;
  if (schema.definitions !== undefined) out.definitions = schema.definitions;
  return Object.keys(out).length > 0 ? out : undefined;
}

/** False when a map only follows `$ref`s and unions to nothing: such a stage is dropped. */
function hasEffect(node: ValueMapNode | undefined, stage: ValueMapStage, seen: Set<ValueMapNode>): boolean {
  if (node === undefined || seen.has(node)) return false;
  seen.add(node);
  if (node.json || node.renamed || node.closed || node.fillNull || node.dropNull || node.enumValues) return true;
  if (node.ref !== undefined && hasEffect(stage.defs?.[node.ref], stage, seen)) return true;
  const children = [
    ...Object.values(node.properties ?? {}),
    node.additional,
    node.items,
    ...(node.prefixItems ?? []),
    ...(node.branches ?? []).map((b) => b.map),
    ...(node.all ?? []),
  ];
  return children.some((child) => hasEffect(child, stage, seen));
}

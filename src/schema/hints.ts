import { compileDerived, compileSchema, validUnder } from "./compile.js";
import type { Coercion } from "./coerce.js";
import {
  declaredTypes,
  getAtPointer,
  isLocalRef,
  isPlainObject,
  isSchemaNode,
  literal,
  pinOf,
  preview,
  requiredOf,
  setOwn,
  type Schema,
  type SchemaNode,
} from "./json-schema.js";
import type { PathSegment, ValidationIssue } from "./validate.js";

/**
 * Text written for the model: validation messages, condition phrasing shared with the sanitizer's
 * descriptions ("REQUIRED when mode='replace'"), requirement summaries and valid examples.
 */

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/** `edits[0].path`, `["weird key"].x`; empty string for the root. */
export function formatPath(path: readonly PathSegment[]): string {
  let out = "";
  for (const segment of path) {
    if (typeof segment === "number") out += `[${segment}]`;
    else if (IDENTIFIER.test(segment)) out += out === "" ? segment : `.${segment}`;
    else out += `[${JSON.stringify(segment)}]`;
  }
  return out;
}

export interface RenderOptions {
  toolName?: string | undefined;
  coercions?: Coercion[];
}

/**
 * The message for the model listing every validation issue, with required fields and an example
 * where they help.
 */
export function renderValidationMessage(issues: ValidationIssue[], options: RenderOptions = {}): string {
  const head = options.toolName ? `Invalid arguments for tool '${options.toolName}':` : "Invalid arguments:";
  const lines = [head];
  for (const issue of issues) renderIssue(issue, 0, lines);
  if (options.coercions && options.coercions.length > 0) {
    lines.push(
      `(Already converted: ${options.coercions.map((c) => `${formatPath(c.path) || "arguments"} ${preview(c.from, 30)} → ${preview(c.to, 30)}`).join("; ")}.)`,
    );
  }
  lines.push("Correct the arguments and call the tool again.");
  return lines.join("\n");
}

function renderIssue(issue: ValidationIssue, depth: number, lines: string[]): void {
  const where = formatPath(issue.path);
  const prefix = where === "" ? "" : `at '${where}': `;
  lines.push(`${"  ".repeat(depth)}- ${prefix}${issue.message}`);
  for (const child of issue.children ?? []) renderIssue(child, depth + 1, lines);
}

/** The declared key closest to an unknown one (case/separator-insensitive, or ≤2 edits). */
export function suggestKey(name: string, known: readonly string[]): string | null {
  if (known.length === 0) return null;
  const norm = (s: string) => s.toLowerCase().replace(/[-_\s.]/g, "");
  const exact = known.find((k) => norm(k) === norm(name));
  if (exact) return exact;
  let best: string | null = null;
  let bestDistance = 3;
  for (const k of known) {
    const d = editDistance(name.toLowerCase(), k.toLowerCase(), bestDistance);
    if (d < bestDistance) {
      bestDistance = d;
      best = k;
    }
  }
  return best;
}

/** Levenshtein distance, abandoning once every cell of a row exceeds `limit`. */
function editDistance(a: string, b: string, limit: number): number {
  if (Math.abs(a.length - b.length) >= limit) return limit;
  let prev = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    let rowMin = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      const v = Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + cost);
      row.push(v);
      if (v < rowMin) rowMin = v;
    }
    if (rowMin >= limit) return limit;
    prev = row;
  }
  return prev[b.length]!;
}

/**
 * The condition of an `if` schema in words: `mode='replace'`, `mode in ('a', 'b')`, `path is given`,
 * joined with "and". Falls back to the JSON of the condition.
 */
export function conditionText(schema: Schema): string {
  if (!isSchemaNode(schema)) return schema ? "always" : "never";
  const parts: string[] = [];
  const covered = new Set<string>();
  if (isPlainObject(schema.properties)) {
    for (const [key, sub] of Object.entries(schema.properties)) {
      if (!isSchemaNode(sub)) continue;
      if ("const" in sub) parts.push(`${key}=${literal(sub.const, 40)}`);
      else if (Array.isArray(sub.enum) && sub.enum.length === 1) parts.push(`${key}=${literal(sub.enum[0], 40)}`);
      else if (Array.isArray(sub.enum)) parts.push(`${key} in (${sub.enum.map(literal).join(", ")})`);
      else continue;
      covered.add(key);
    }
  }
  const required = Array.isArray(schema.required) ? schema.required.filter((x): x is string => typeof x === "string") : [];
  for (const key of required) if (!covered.has(key)) parts.push(`${key} is given`);
  const understood = new Set(["properties", "required", "type", "description", "title"]);
  const leftover = Object.keys(schema).some((k) => !understood.has(k));
  if (parts.length === 0 || leftover) return parts.length > 0 ? `${parts.join(" and ")} (and ${preview(schema, 60)})` : `the arguments match ${preview(schema, 80)}`;
  return parts.join(" and ");
}

/**
 * What a call must contain, as short lines: the required fields, then conditional requirements
 * from `if`/`then`, discriminated `anyOf`/`oneOf` branches and "at least one of" groups.
 */
export function requirementLines(schema: Schema): string[] {
  const root = resolveNode(schema, schema);
  if (!root) return [];
  const lines: string[] = [];
  const required = requiredOf(root);
  if (required.length > 0) lines.push(`Required: ${required.join(", ")}.`);
  const conditional = (node: SchemaNode) => {
    if (node.if !== undefined && isSchemaNode(node.then)) {
      const needs = requiredOf(node.then);
      if (needs.length > 0) lines.push(`When ${conditionText(node.if as Schema)}: also ${needs.join(", ")}.`);
    }
    if (node.if !== undefined && isSchemaNode(node.else)) {
      const needs = requiredOf(node.else);
      if (needs.length > 0) lines.push(`Unless ${conditionText(node.if as Schema)}: also ${needs.join(", ")}.`);
    }
  };
  conditional(root);
  if (Array.isArray(root.allOf)) for (const b of root.allOf) if (isSchemaNode(b)) conditional(b);
  for (const keyword of ["anyOf", "oneOf"] as const) {
    const branches = root[keyword];
    if (!Array.isArray(branches)) continue;
    const nodes = branches.map((b) => resolveNode(b as Schema, schema)).filter((b): b is SchemaNode => b !== null);
    const sets = nodes.map(requiredOf);
    const pinned = nodes.map(pinnedProperty);
    if (pinned.every((p) => p !== null)) {
      nodes.forEach((_, i) => {
        const p = pinned[i]!;
        const needs = sets[i]!.filter((f) => f !== p.key && !required.includes(f));
        if (needs.length > 0) lines.push(`When ${p.key}=${literal(p.value, 40)}: also ${needs.join(", ")}.`);
      });
    } else if (sets.every((s) => s.length > 0)) {
      const lead = keyword === "anyOf" ? "Provide at least one of" : "Provide exactly one of";
      lines.push(`${lead}: ${sets.map((s) => (s.length === 1 ? s[0] : `(${s.join(", ")})`)).join(", ")}.`);
    }
  }
  return lines;
}

function pinnedProperty(node: SchemaNode): { key: string; value: unknown } | null {
  if (!isPlainObject(node.properties)) return null;
  for (const [key, sub] of Object.entries(node.properties)) {
    const pin = isSchemaNode(sub) ? pinOf(sub) : null;
    if (pin) return { key, value: pin.value };
  }
  return null;
}

function resolveNode(schema: Schema, root: Schema, depth = 0): SchemaNode | null {
  if (!isSchemaNode(schema)) return null;
  if (isLocalRef(schema.$ref) && depth < 16) {
    const target = getAtPointer(root, schema.$ref);
    const resolved = resolveNode(target as Schema, root, depth + 1);
    if (resolved) {
      const rest = { ...schema };
      delete rest.$ref;
      return { ...resolved, ...rest };
    }
  }
  return schema;
}

const FORMAT_EXAMPLES: Record<string, string> = {
  date: "2024-01-31",
  time: "12:00:00Z",
  "date-time": "2024-01-31T12:00:00Z",
  duration: "P1D",
  email: "user@example.com",
  hostname: "example.com",
  uri: "https://example.com/",
  "uri-reference": "https://example.com/",
  url: "https://example.com/",
  ipv4: "192.0.2.1",
  ipv6: "2001:db8::1",
  uuid: "123e4567-e89b-12d3-a456-426614174000",
};

/**
 * A value valid under `schema`, built from its const/enum/default/examples, formats and bounds,
 * with only the required fields (plus whatever conditional requirements demand). Returns
 * undefined when no valid value could be built (e.g. a pattern nothing simple satisfies).
 */
export function buildExample(schema: Schema): { value: unknown } | undefined {
  const validate = compileSchema(schema).validate;
  const ctx: ExampleCtx = { root: schema, depth: 0 };
  const candidate = exampleFor(schema, ctx, undefined);
  if (candidate !== undefined && validate(candidate.value)) return candidate;
  return undefined;
}

interface ExampleCtx {
  root: Schema;
  depth: number;
}

function exampleFor(schema: Schema, ctx: ExampleCtx, name: string | undefined): { value: unknown } | undefined {
  if (schema === true) return { value: name ?? "value" };
  if (!isSchemaNode(schema) || ctx.depth > 24) return undefined;
  const inner: ExampleCtx = { root: ctx.root, depth: ctx.depth + 1 };
  const node = resolveNode(schema, ctx.root) ?? schema;
  const accept = (value: unknown) => (validUnder(ctx.root, node, value) ? { value } : undefined);

  if ("const" in node) return { value: node.const };
  if (Array.isArray(node.enum) && node.enum.length > 0) return { value: node.enum[0] };
  if ("default" in node) {
    const hit = accept(node.default);
    if (hit) return hit;
  }
  if (Array.isArray(node.examples)) {
    for (const example of node.examples) {
      const hit = accept(example);
      if (hit) return hit;
    }
  }
  for (const keyword of ["oneOf", "anyOf"] as const) {
    const branches = node[keyword];
    if (!Array.isArray(branches)) continue;
    const base = { ...node };
    delete base[keyword];
    for (const branch of branches) {
      if (isSchemaNode(branch) && declaredTypes(branch)?.every((t) => t === "null")) continue;
      const merged: SchemaNode = isSchemaNode(branch) ? mergeForExample(base, resolveNode(branch, ctx.root) ?? branch) : base;
      const built = exampleFor(merged, inner, name);
      if (built && validUnder(ctx.root, node, built.value)) return built;
    }
  }
  if (Array.isArray(node.allOf) && node.allOf.length > 0) {
    let merged: SchemaNode = { ...node };
    delete merged.allOf;
    for (const part of node.allOf) {
      const resolved = resolveNode(part as Schema, ctx.root);
      if (resolved) merged = mergeForExample(merged, resolved);
    }
    const built = exampleFor(merged, inner, name);
    if (built) return built;
  }

  const types = declaredTypes(node) ?? inferExampleType(node);
  const type = types.find((t) => t !== "null") ?? types[0];
  switch (type) {
    case "object":
      return objectExample(node, inner);
    case "array": {
      const itemSchema = isSchemaNode(node.items) || node.items === true ? (node.items as Schema) : undefined;
      const count = typeof node.minItems === "number" ? Math.max(node.minItems, 1) : itemSchema ? 1 : 0;
      const items: unknown[] = [];
      for (let i = 0; i < count; i++) {
        const prefix = Array.isArray(node.prefixItems) ? (node.prefixItems[i] as Schema | undefined) : undefined;
        const built = exampleFor(prefix ?? itemSchema ?? true, inner, name);
        if (!built) return undefined;
        items.push(built.value);
      }
      return accept(items) ?? (count > 0 ? { value: items } : undefined);
    }
    case "string":
      return stringExample(node, name, accept);
    case "integer":
    case "number":
      return numberExample(node, type === "integer");
    case "boolean":
      return { value: true };
    case "null":
      return { value: null };
    default:
      return { value: name ?? "value" };
  }
}

function inferExampleType(node: SchemaNode): string[] {
  if (isPlainObject(node.properties) || Array.isArray(node.required)) return ["object"];
  if (node.items !== undefined || node.prefixItems !== undefined) return ["array"];
  if (typeof node.pattern === "string" || typeof node.format === "string" || typeof node.minLength === "number") return ["string"];
  if (typeof node.minimum === "number" || typeof node.maximum === "number") return ["number"];
  return ["string"];
}

function mergeForExample(a: SchemaNode, b: SchemaNode): SchemaNode {
  const out: SchemaNode = { ...a };
  for (const [key, value] of Object.entries(b)) {
    if (key === "properties" && isPlainObject(value)) {
      const merged: Record<string, unknown> = { ...(isPlainObject(a.properties) ? a.properties : {}) };
      // A branch's `{const}` pins a value; the base keeps describing the rest of the property.
      for (const [name, sub] of Object.entries(value)) merged[name] = isSchemaNode(merged[name]) && isSchemaNode(sub) ? { ...merged[name], ...sub } : sub;
      out.properties = merged;
    }
    else if (key === "required" && Array.isArray(value)) out.required = [...new Set([...(Array.isArray(a.required) ? a.required : []), ...value])];
    else if (!(key in out)) out[key] = value;
  }
  return out;
}

function objectExample(node: SchemaNode, ctx: ExampleCtx): { value: unknown } | undefined {
  const props = isPlainObject(node.properties) ? node.properties : {};
  const value: Record<string, unknown> = {};
  const add = (key: string): boolean => {
    if (Object.prototype.hasOwnProperty.call(value, key)) return true;
    const built = exampleFor((props[key] as Schema | undefined) ?? true, ctx, key);
    if (!built) return false;
    setOwn(value, key, built.value);
    return true;
  };
  for (const key of requiredOf(node)) if (!add(key)) return undefined;
  // Conditional requirements (if/then, at-least-one groups) surface as missing fields: add them and retry.
  for (let round = 0; round < 4; round++) {
    if (validUnder(ctx.root, node, value)) return { value };
    const missing = missingFields(node, value, ctx);
    if (missing.length === 0) break;
    let added = false;
    for (const key of missing) if (!(key in value) && add(key)) added = true;
    if (!added) break;
  }
  return validUnder(ctx.root, node, value) ? { value } : undefined;
}

function missingFields(node: SchemaNode, value: Record<string, unknown>, ctx: ExampleCtx): string[] {
  const validate = compileDerived(ctx.root, node);
  if (validate(value)) return [];
  const out: string[] = [];
  for (const error of validate.errors ?? []) {
    if (error.instancePath !== "") continue;
    const params = error.params as Record<string, unknown>;
    if (error.keyword === "required" && typeof params.missingProperty === "string") out.push(params.missingProperty);
    if (error.keyword === "dependentRequired" && typeof params.missingProperty === "string") out.push(params.missingProperty);
  }
  return [...new Set(out)];
}

function stringExample(node: SchemaNode, name: string | undefined, accept: (v: unknown) => { value: unknown } | undefined): { value: unknown } | undefined {
  const min = typeof node.minLength === "number" ? node.minLength : 0;
  const max = typeof node.maxLength === "number" ? node.maxLength : Infinity;
  const fit = (s: string) => {
    let out = s;
    while (out.length < min) out += "x";
    return out.length > max ? out.slice(0, max) : out;
  };
  const candidates: string[] = [];
  if (typeof node.format === "string" && FORMAT_EXAMPLES[node.format]) candidates.push(FORMAT_EXAMPLES[node.format]!);
  candidates.push(fit(name ? `<${name}>` : "text"), fit(name ?? "text"), fit("example"), fit("a"), fit("0"), fit("A"), fit("a1"), fit("1"));
  for (const c of candidates) {
    const hit = accept(c);
    if (hit) return hit;
  }
  return undefined;
}

function numberExample(node: SchemaNode, integer: boolean): { value: unknown } {
  const step = typeof node.multipleOf === "number" && node.multipleOf > 0 ? node.multipleOf : integer ? 1 : 1;
  let low = -Infinity;
  if (typeof node.minimum === "number") low = node.minimum;
  if (typeof node.exclusiveMinimum === "number") low = Math.max(low, node.exclusiveMinimum + (integer ? 1 : step / 2));
  let high = Infinity;
  if (typeof node.maximum === "number") high = node.maximum;
  if (typeof node.exclusiveMaximum === "number") high = Math.min(high, node.exclusiveMaximum - (integer ? 1 : step / 2));
  let value = low === -Infinity ? Math.min(0, high) : low;
  value = Math.ceil(value / step) * step;
  if (integer) value = Math.ceil(value);
  return { value };
}

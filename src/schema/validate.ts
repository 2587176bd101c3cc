import { compileDerived, compileSchema, validUnder, type ErrorObject } from "./compile.js";
import { coerceArguments, type Coercion, type CoercionKind } from "./coerce.js";
import { conditionText, renderValidationMessage, suggestKey } from "./hints.js";
import { compilePattern, type LinearRegExp } from "./regex.js";
import { DEFAULT_LIMITS, nestsDeeperThan } from "../limits.js";
import { samePath } from "../json/shape.js";
import {
  getAtPointer,
  isLocalRef,
  isPlainObject,
  isSchemaNode,
  jsonTypeOf,
  literal,
  pinOf,
  preview,
  requiredOf,
  type Schema,
  type SchemaNode,
} from "./json-schema.js";

/**
 * Argument validation whose result a model can act on. ajv (draft 2020-12) decides validity; the
 * explanation is built by walking the schema along the value, so that a failed `anyOf` names the
 * branch that was closest and what it still needs, instead of ajv's flat list of every branch's
 * errors (whose schema paths also lose their context behind non-inlined `$ref`s).
 */

export type PathSegment = string | number;

/** The kind of a validation issue (missing field, wrong type, unknown field, pattern…). */
export type IssueCode =
  | "missing"
  | "type"
  | "enum"
  | "const"
  | "unknown_field"
  | "format"
  | "pattern"
  | "range"
  | "length"
  | "items"
  | "properties"
  | "dependent"
  | "one_of"
  | "branch"
  | "conditional"
  | "not"
  | "not_allowed"
  | "too_deep"
  | "other";

/** One way the arguments fail the schema, located by path, with a one-line message for the model. */
export interface ValidationIssue {
  code: IssueCode;
  /** Location in the arguments (property names and array indexes). Empty for the root. */
  path: PathSegment[];
  /** One line for the model, without the location prefix. */
  message: string;
  /** The JSON Schema keyword that failed. */
  keyword: string;
  /** Missing fields (`missing`, `conditional`) or the alternatives (`one_of`). */
  fields?: string[];
  expected?: unknown;
  received?: unknown;
  /** Details under a `branch`/`conditional` headline. */
  children?: ValidationIssue[];
}

/** Options of `validateArguments`: coercion, and the tool name used in the message. */
export interface ValidateOptions {
  /**
   * Schema-guided coercion tried only when the arguments are invalid as sent: `true` for every
   * kind, or a list of kinds. Each applied coercion is listed in the result.
   */
  coerce?: boolean | readonly CoercionKind[];
  /** Tool name used in the message. */
  toolName?: string;
}

/**
 * The result of `validateArguments`: valid or not, the (possibly coerced) value, the issues and a
 * message written for the model.
 */
export interface ValidationResult {
  valid: boolean;
  /** The arguments after coercion (the input itself when nothing was coerced). Never the input mutated. */
  value: unknown;
  issues: ValidationIssue[];
  coercions: Coercion[];
  /** Written for the model; empty when valid. */
  message: string;
}

export type { Coercion, CoercionKind };

const ALL_COERCIONS: readonly CoercionKind[] = ["number", "boolean", "null", "json", "array"];

/**
 * Validates tool arguments against a JSON Schema (2020-12, via ajv; compiled schemas are cached).
 * When invalid, optional coercion is tried first; the result's message tells the model what was
 * wrong and what a valid call looks like.
 * Arguments nested deeper than `DEFAULT_LIMITS.maxDepth` (which the decoders already refuse) are
 * invalid with one `too_deep` issue, unwalked. Throws SchemaCompileError for a schema that cannot
 * be compiled (including a pattern the linear-time engine refuses) and TooDeepError for a schema
 * nested deeper than `DEFAULT_LIMITS.maxDepth` (256).
 */
export function validateArguments(schema: Schema, args: unknown, options: ValidateOptions = {}): ValidationResult {
  const { validate } = compileSchema(schema);
  if (nestsDeeperThan(args, DEFAULT_LIMITS.maxDepth)) {
    const issues: ValidationIssue[] = [
      {
        code: "too_deep",
        path: [],
        keyword: "maxDepth",
        expected: DEFAULT_LIMITS.maxDepth,
        message: `the arguments nest more than ${DEFAULT_LIMITS.maxDepth} levels deep; send flatter arguments`,
      },
    ];
    return { valid: false, value: args, issues, coercions: [], message: renderValidationMessage(issues, { toolName: options.toolName }) };
  }
  const passes = (v: unknown): boolean => validate(v) === true;
  if (passes(args)) return { valid: true, value: args, issues: [], coercions: [], message: "" };

  let value = args;
  let coercions: Coercion[] = [];
  const kinds = options.coerce === true ? ALL_COERCIONS : Array.isArray(options.coerce) ? options.coerce : [];
  if (kinds.length > 0) {
    const coerced = coerceArguments(schema, args, kinds);
    if (coerced.coercions.length > 0) {
      value = coerced.value;
      coercions = coerced.coercions;
      if (passes(value)) return { valid: true, value, issues: [], coercions, message: "" };
    }
  }
  const issues = explainValue(schema, value);
  const finalIssues = issues.length > 0 ? issues : (passes(value), rawIssues(validate.errors ?? [], []));
  return {
    valid: false,
    value,
    issues: finalIssues,
    coercions,
    message: renderValidationMessage(finalIssues, { toolName: options.toolName, coercions }),
  };
}

/** True when `value` is valid under `schema` (compiled once, cached). */
export function isValid(schema: Schema, value: unknown): boolean {
  return compileSchema(schema).validate(value) === true;
}

/** Explains why `value` fails `schema`; empty when it is valid. */
export function explainValue(schema: Schema, value: unknown): ValidationIssue[] {
  return explain(schema, value, [], { root: schema, depth: 0 });
}

interface Ctx {
  root: Schema;
  depth: number;
}

const MAX_DEPTH = 48;

/** Keywords the explainer cannot decompose without changing their meaning. */
const OPAQUE_EVALUATION = ["unevaluatedProperties", "unevaluatedItems", "$dynamicRef", "$recursiveRef"];

function errorsFor(ctx: Ctx, node: Schema, value: unknown): ErrorObject[] {
  const validate = node === ctx.root ? compileSchema(node).validate : compileDerived(ctx.root, node);
  return validate(value) ? [] : [...(validate.errors ?? [])];
}

function explain(node: Schema, value: unknown, path: PathSegment[], ctx: Ctx): ValidationIssue[] {
  if (node === true) return [];
  if (node === false) {
    return [{ code: "not_allowed", path, keyword: "false", message: "no value is allowed here; remove it" }];
  }
  if (validUnder(ctx.root, node, value)) return [];
  if (ctx.depth > MAX_DEPTH || OPAQUE_EVALUATION.some((k) => k in node)) return rawIssues(errorsFor(ctx, node, value), path);
  const inner: Ctx = { root: ctx.root, depth: ctx.depth + 1 };
  const issues: ValidationIssue[] = [];

  if (isLocalRef(node.$ref)) {
    const target = getAtPointer(ctx.root, node.$ref);
    if (target === undefined) return rawIssues(errorsFor(ctx, node, value), path);
    issues.push(...explain(target as Schema, value, path, inner));
  }

  const local = localKeywords(node);
  issues.push(...localIssues(errorsFor(ctx, local, value), value, path, node));

  if (isPlainObject(value)) {
    for (const key of Object.keys(value)) {
      for (const sub of propertySchemas(node, key)) issues.push(...explain(sub, value[key], [...path, key], inner));
    }
  } else if (Array.isArray(value)) {
    value.forEach((item, index) => {
      const sub = itemSchema(node, index);
      if (sub !== undefined) issues.push(...explain(sub, item, [...path, index], inner));
    });
  }

  if (Array.isArray(node.allOf)) for (const branch of node.allOf) issues.push(...explain(branch as Schema, value, path, inner));
  for (const keyword of ["anyOf", "oneOf"] as const) {
    const branches = node[keyword];
    if (Array.isArray(branches)) {
      const issue = explainBranches(keyword, branches as Schema[], value, path, inner);
      if (issue) issues.push(issue);
    }
  }
  if (node.if !== undefined) {
    const issue = explainConditional(node, value, path, inner);
    if (issue) issues.push(issue);
  }
  if (node.not !== undefined && validUnder(ctx.root, node.not as Schema, value)) {
    issues.push({ code: "not", path, keyword: "not", message: describeNot(node.not as Schema) });
  }
  if (isPlainObject(node.dependentSchemas) && isPlainObject(value)) {
    for (const [key, dep] of Object.entries(node.dependentSchemas)) {
      if (key in value) issues.push(...explain(dep as Schema, value, path, inner));
    }
  }
  return dedupe(issues);
}

/**
 * The node with combinators and `$ref` removed and child schemas replaced by `true`, so that its
 * own keywords (type, required, enum, bounds, additionalProperties:false…) can be checked alone
 * while the key sets that additionalProperties depends on stay intact.
 */
const localCache = new WeakMap<SchemaNode, SchemaNode>();

function localKeywords(node: SchemaNode): SchemaNode {
  const cached = localCache.get(node);
  if (cached) return cached;
  const out = buildLocal(node);
  localCache.set(node, out);
  return out;
}

function buildLocal(node: SchemaNode): SchemaNode {
  const out: SchemaNode = {};
  for (const [key, value] of Object.entries(node)) {
    switch (key) {
      case "$ref":
      case "allOf":
      case "anyOf":
      case "oneOf":
      case "not":
      case "if":
      case "then":
      case "else":
      case "dependentSchemas":
      case "$defs":
      case "definitions":
        break;
      case "properties":
      case "patternProperties":
        if (isPlainObject(value)) out[key] = Object.fromEntries(Object.keys(value).map((k) => [k, true]));
        break;
      case "additionalProperties":
      case "additionalItems":
        out[key] = value === false ? false : true;
        break;
      case "items":
        out[key] = Array.isArray(value) ? value.map(() => true) : value === false ? false : true;
        break;
      case "prefixItems":
        if (Array.isArray(value)) out[key] = value.map(() => true);
        break;
      default:
        out[key] = value;
    }
  }
  return out;
}

/** The schemas that apply to `node`'s property `key` (properties, matching patternProperties, or additionalProperties). */
function propertySchemas(node: SchemaNode, key: string): Schema[] {
  const out: Schema[] = [];
  const props = node.properties;
  if (isPlainObject(props) && Object.prototype.hasOwnProperty.call(props, key)) out.push(props[key] as Schema);
  let matchedPattern = false;
  if (isPlainObject(node.patternProperties)) {
    for (const [pattern, sub] of Object.entries(node.patternProperties)) {
      let re: LinearRegExp;
      try {
        re = compilePattern(pattern);
      } catch {
        // Only reachable when ajv never needed the pattern (its schema is `true`); it constrains nothing.
        continue;
      }
      if (re.test(key)) {
        out.push(sub as Schema);
        matchedPattern = true;
      }
    }
  }
  if (out.length === 0 && !matchedPattern && isSchemaNode(node.additionalProperties)) out.push(node.additionalProperties);
  return out;
}

function itemSchema(node: SchemaNode, index: number): Schema | undefined {
  if (Array.isArray(node.prefixItems)) {
    if (index < node.prefixItems.length) return node.prefixItems[index] as Schema;
    return isSchemaNode(node.items) ? node.items : undefined;
  }
  if (Array.isArray(node.items)) {
    if (index < node.items.length) return node.items[index] as Schema;
    return isSchemaNode(node.additionalItems) ? node.additionalItems : undefined;
  }
  return isSchemaNode(node.items) ? node.items : undefined;
}

function explainBranches(
  keyword: "anyOf" | "oneOf",
  branches: Schema[],
  value: unknown,
  path: PathSegment[],
  ctx: Ctx,
): ValidationIssue | null {
  const passing = branches.map((b) => validUnder(ctx.root, b, value));
  const passCount = passing.filter(Boolean).length;
  if (keyword === "anyOf" ? passCount > 0 : passCount === 1) return null;

  const requiredSets = requiredOnlyBranches(branches);
  if (keyword === "oneOf" && passCount > 1) {
    const matched = branches.map((_, i) => i).filter((i) => passing[i]);
    if (requiredSets && isPlainObject(value)) {
      const given = [...new Set(matched.flatMap((i) => requiredSets[i]!))];
      return {
        code: "one_of",
        path,
        keyword,
        fields: requiredSets.flat(),
        message: `provide only one of: ${formatFieldSets(requiredSets)} (received ${given.join(", ")})`,
      };
    }
    return {
      code: "one_of",
      path,
      keyword,
      message: `matches ${passCount} of the allowed forms (${matched.map((i) => `#${i + 1}`).join(", ")}); it must match exactly one`,
    };
  }

  if (requiredSets && isPlainObject(value)) {
    const single = requiredSets.every((set) => set.length === 1);
    const lead = keyword === "anyOf" ? "provide at least one of" : "provide exactly one of";
    return {
      code: "one_of",
      path,
      keyword,
      fields: [...new Set(requiredSets.flat())],
      message: single ? `${lead}: ${requiredSets.map((s) => s[0]).join(", ")}` : `${lead} these sets of fields: ${formatFieldSets(requiredSets)}`,
    };
  }

  const explained = branches.map((b) => explain(b, value, path, ctx));
  const typeUnion = typeUnionIssue(explained, branches, value, path, keyword);
  if (typeUnion) return typeUnion;

  let best = 0;
  let bestScore = Infinity;
  explained.forEach((issues, i) => {
    const score = scoreBranch(issues, path, branches[i]!, value);
    if (score < bestScore) {
      bestScore = score;
      best = i;
    }
  });
  const branch = branches[best]!;
  const issues = explained[best]!;
  const discriminator = isSchemaNode(branch) ? matchedDiscriminator(branch, value) : null;
  const missingOnly = issues.length > 0 && issues.every((i) => i.code === "missing" && samePath(i.path, path));
  if (discriminator && missingOnly && isSchemaNode(branch)) {
    const needs = requiredOf(branch).filter((f) => f !== discriminator.key);
    const missing = issues.flatMap((i) => i.fields ?? []);
    const partial = missing.length < needs.length ? ` (missing: ${missing.join(", ")})` : "";
    return {
      code: "conditional",
      path,
      keyword,
      fields: missing,
      message: `${discriminator.text} requires ${needs.join(", ")}${partial}`,
    };
  }
  const head = discriminator
    ? `with ${discriminator.text}:`
    : `does not match any of the ${branches.length} allowed forms; the closest (form #${best + 1}) needs:`;
  return { code: "branch", path, keyword, message: head, children: issues };
}

function explainConditional(node: SchemaNode, value: unknown, path: PathSegment[], ctx: Ctx): ValidationIssue | null {
  const ifSchema = node.if as Schema;
  const holds = validUnder(ctx.root, ifSchema, value);
  const branch = (holds ? node.then : node.else) as Schema | undefined;
  if (branch === undefined || validUnder(ctx.root, branch, value)) return null;
  const cond = conditionText(ifSchema);
  const text = holds ? cond : `not ${cond.includes(" ") ? `(${cond})` : cond}`;
  const issues = explain(branch, value, path, ctx);
  const missingOnly = issues.length > 0 && issues.every((i) => i.code === "missing" && samePath(i.path, path));
  if (missingOnly && isSchemaNode(branch)) {
    const needs = requiredOf(branch);
    const missing = issues.flatMap((i) => i.fields ?? []);
    const partial = missing.length < needs.length ? ` (missing: ${missing.join(", ")})` : "";
    return { code: "conditional", path, keyword: "if", fields: missing, message: `${text} requires ${needs.join(", ")}${partial}` };
  }
  return { code: "conditional", path, keyword: "if", message: `when ${text}:`, children: issues };
}

/** Branches that only list required fields (`{required: [...]}`): the "at least one of" idiom. */
function requiredOnlyBranches(branches: Schema[]): string[][] | null {
  const sets: string[][] = [];
  for (const b of branches) {
    if (!isSchemaNode(b)) return null;
    const keys = Object.keys(b).filter((k) => k !== "description" && k !== "title" && k !== "$comment");
    if (!keys.includes("required")) return null;
    if (keys.some((k) => k !== "required" && !(k === "type" && b.type === "object"))) return null;
    const req = requiredOf(b);
    if (req.length === 0) return null;
    sets.push(req);
  }
  return sets.length > 0 ? sets : null;
}

function formatFieldSets(sets: string[][]): string {
  return sets.map((s) => (s.length === 1 ? s[0] : `(${s.join(", ")})`)).join(" or ");
}

/** Every branch failed only on its type/enum/const at this location: say "expected A or B". */
function typeUnionIssue(
  explained: ValidationIssue[][],
  branches: Schema[],
  value: unknown,
  path: PathSegment[],
  keyword: string,
): ValidationIssue | null {
  const expected: string[] = [];
  for (let i = 0; i < explained.length; i++) {
    const issues = explained[i]!;
    if (issues.length !== 1) return null;
    const issue = issues[0]!;
    if (!samePath(issue.path, path)) return null;
    if (issue.code === "type") expected.push(...(issue.expected as string[]));
    else if (issue.code === "const") expected.push(preview(issue.expected));
    else if (issue.code === "enum") expected.push(...(issue.expected as unknown[]).map((v) => preview(v)));
    else return null;
    void branches[i];
  }
  const unique = [...new Set(expected)];
  return {
    code: "type",
    path,
    keyword,
    expected: unique,
    received: value,
    message: `expected ${joinOr(unique)}, received ${describeReceived(value)}`,
  };
}

function scoreBranch(issues: ValidationIssue[], path: PathSegment[], branch: Schema, value: unknown): number {
  let score = 0;
  for (const issue of issues) {
    const here = samePath(issue.path, path);
    if (issue.code === "type" && here) score += 100;
    else if ((issue.code === "const" || issue.code === "enum") && issue.path.length === path.length + 1 && isPlainObject(value)) score += 50;
    else if (issue.code === "missing") score += issue.fields?.length ?? 1;
    else if (issue.code === "unknown_field") score += 2;
    else if (issue.code === "not_allowed") score += 10;
    else score += 3;
  }
  if (isSchemaNode(branch) && matchedDiscriminator(branch, value)) score -= 0.5;
  return score;
}

/** A property of the branch pinned by `const` (or a one-value `enum`) that the value matches. */
function matchedDiscriminator(branch: SchemaNode, value: unknown): { key: string; text: string } | null {
  if (!isPlainObject(value) || !isPlainObject(branch.properties)) return null;
  for (const [key, sub] of Object.entries(branch.properties)) {
    if (!isSchemaNode(sub) || !(key in value)) continue;
    const pin = pinOf(sub);
    if (pin && JSON.stringify(pin.value) === JSON.stringify(value[key])) return { key, text: `${key}=${literal(pin.value)}` };
  }
  return null;
}

function describeNot(schema: Schema): string {
  if (isSchemaNode(schema)) {
    const keys = Object.keys(schema);
    const req = requiredOf(schema);
    if (keys.length === 1 && req.length > 1) return `do not provide ${req.join(" and ")} together`;
    if (keys.length === 1 && req.length === 1) return `do not provide ${req[0]}`;
  }
  return `must not match ${preview(schema, 80)}`;
}

function joinOr(items: string[]): string {
  if (items.length <= 1) return items[0] ?? "nothing";
  return `${items.slice(0, -1).join(", ")} or ${items[items.length - 1]}`;
}

/** A value as a validation message names it: its JSON type and a short preview. */
export function describeReceived(value: unknown): string {
  const type = jsonTypeOf(value);
  if (type === "null") return "null";
  if (type === "undefined") return "nothing";
  const name = type === "integer" ? "number" : type;
  return `${name} ${preview(value)}`;
}

function segmentsOf(instancePath: string): PathSegment[] {
  if (instancePath === "") return [];
  return instancePath
    .slice(1)
    .split("/")
    .map((s) => s.replace(/~1/g, "/").replace(/~0/g, "~"))
    .map((s) => (/^(0|[1-9]\d*)$/.test(s) ? Number(s) : s));
}

function valueAt(root: unknown, rel: PathSegment[]): unknown {
  let current = root;
  for (const s of rel) {
    if (Array.isArray(current) && typeof s === "number") current = current[s];
    else if (isPlainObject(current)) current = current[String(s)];
    else return undefined;
  }
  return current;
}

/** Converts ajv errors on a node's own keywords (see localKeywords) into issues. */
function localIssues(errors: ErrorObject[], value: unknown, base: PathSegment[], node: SchemaNode): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  const missingByPath = new Map<string, { path: PathSegment[]; fields: string[] }>();
  const detailedKeys = errors.some((error) => error.propertyName !== undefined);
  for (const error of errors) {
    const rel = segmentsOf(error.instancePath);
    const path = [...base, ...rel];
    const received = valueAt(value, rel);
    const params = error.params as Record<string, unknown>;
    if (error.keyword === "propertyNames" && detailedKeys) continue;
    if (error.propertyName !== undefined) {
      issues.push(keyIssue(error, path));
      continue;
    }
    if (error.keyword === "required") {
      const key = JSON.stringify(path);
      const entry = missingByPath.get(key) ?? { path, fields: [] };
      entry.fields.push(String(params.missingProperty));
      missingByPath.set(key, entry);
      continue;
    }
    if (error.keyword === "additionalProperties") {
      const name = String(params.additionalProperty);
      const known = isPlainObject(node.properties) ? Object.keys(node.properties) : [];
      const suggestion = suggestKey(name, known);
      const hint = suggestion ? `; did you mean '${suggestion}'?` : known.length > 0 ? ` (allowed: ${known.join(", ")})` : "";
      issues.push({ code: "unknown_field", path, keyword: error.keyword, received: name, message: `unknown field '${name}'${hint}` });
      continue;
    }
    issues.push(convertError(error, path, received));
  }
  for (const { path, fields } of missingByPath.values()) {
    issues.unshift({
      code: "missing",
      path,
      keyword: "required",
      fields,
      message: `missing required field${fields.length > 1 ? "s" : ""}: ${fields.join(", ")}`,
    });
  }
  return issues;
}

function convertError(error: ErrorObject, path: PathSegment[], received: unknown): ValidationIssue {
  const params = error.params as Record<string, unknown>;
  const got = describeReceived(received);
  switch (error.keyword) {
    case "type": {
      const expected = String(params.type).split(",");
      return { code: "type", path, keyword: "type", expected, received, message: `expected ${joinOr(expected)}, received ${got}` };
    }
    case "enum": {
      const allowed = (params.allowedValues as unknown[]) ?? [];
      return {
        code: "enum",
        path,
        keyword: "enum",
        expected: allowed,
        received,
        message: `must be one of ${allowed.map(literal).join(", ")}; received ${literalOrDescribe(received)}`,
      };
    }
    case "const":
      return {
        code: "const",
        path,
        keyword: "const",
        expected: params.allowedValue,
        received,
        message: `must be ${literal(params.allowedValue)}; received ${literalOrDescribe(received)}`,
      };
    case "format":
      return { code: "format", path, keyword: "format", expected: params.format, received, message: `must be a valid ${String(params.format)}; received ${got}` };
    case "pattern":
      return { code: "pattern", path, keyword: "pattern", expected: params.pattern, received, message: `must match the pattern ${String(params.pattern)}; received ${got}` };
    case "minLength":
      return { code: "length", path, keyword: error.keyword, expected: params.limit, received, message: `must be at least ${String(params.limit)} characters long; received ${got}` };
    case "maxLength":
      return { code: "length", path, keyword: error.keyword, expected: params.limit, received, message: `must be at most ${String(params.limit)} characters long; received ${String(typeof received === "string" ? received.length : "?")} characters` };
    case "minimum":
    case "maximum":
    case "exclusiveMinimum":
    case "exclusiveMaximum":
      return { code: "range", path, keyword: error.keyword, expected: params.limit, received, message: `must be ${String(params.comparison)} ${String(params.limit)}; received ${got}` };
    case "multipleOf":
      return { code: "range", path, keyword: error.keyword, expected: params.multipleOf, received, message: `must be a multiple of ${String(params.multipleOf)}; received ${got}` };
    case "items":
    case "additionalItems":
      if (typeof params.limit !== "number") return { code: "other", path, keyword: error.keyword, received, message: error.message ?? `fails ${error.keyword}` };
      return { code: "items", path, keyword: error.keyword, expected: params.limit, received, message: itemCountMessage("at most", params.limit, received) };
    case "minItems":
    case "maxItems":
      return { code: "items", path, keyword: error.keyword, expected: params.limit, received, message: itemCountMessage(error.keyword === "minItems" ? "at least" : "at most", params.limit, received) };
    case "uniqueItems":
      return { code: "items", path, keyword: error.keyword, received, message: `items must be unique; items ${String(params.j)} and ${String(params.i)} are equal` };
    case "minProperties":
    case "maxProperties":
      return { code: "properties", path, keyword: error.keyword, expected: params.limit, received, message: `must have ${error.keyword === "minProperties" ? "at least" : "at most"} ${String(params.limit)} field${params.limit === 1 ? "" : "s"}` };
    case "dependentRequired":
      return {
        code: "dependent",
        path,
        keyword: error.keyword,
        fields: [String(params.missingProperty)],
        message: `${String(params.property)} requires ${String(params.deps)} (missing: ${String(params.missingProperty)})`,
      };
    case "false schema":
      return { code: "not_allowed", path, keyword: error.keyword, received, message: "this field is not allowed; remove it" };
    default:
      return { code: "other", path, keyword: error.keyword, received, message: error.message ?? `fails ${error.keyword}` };
  }
}

/** `must have at most 3 items; received 5`. */
function itemCountMessage(bound: "at least" | "at most", limit: unknown, received: unknown): string {
  return `must have ${bound} ${String(limit)} item${limit === 1 ? "" : "s"}; received ${Array.isArray(received) ? received.length : "?"}`;
}

function literalOrDescribe(value: unknown): string {
  return typeof value === "string" ? `'${value}'` : describeReceived(value);
}

/** A `propertyNames` failure: about the key itself, named in the message (ajv reports it on the object). */
function keyIssue(error: ErrorObject, path: PathSegment[]): ValidationIssue {
  const key = error.propertyName as string;
  const issue = convertError(error, path, key);
  return { ...issue, received: key, message: `the key '${key}' ${issue.message}` };
}

/** Plain conversion of ajv errors, used where the schema cannot be decomposed. */
function rawIssues(errors: ErrorObject[], base: PathSegment[]): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  const detailedKeys = errors.some((error) => error.propertyName !== undefined);
  for (const error of errors) {
    if (["anyOf", "oneOf", "if", "allOf", "not"].includes(error.keyword) && errors.length > 1) continue;
    if (error.keyword === "propertyNames" && detailedKeys) continue;
    const path = [...base, ...segmentsOf(error.instancePath)];
    if (error.propertyName !== undefined) issues.push(keyIssue(error, path));
    else if (error.keyword === "required") {
      const field = String((error.params as Record<string, unknown>).missingProperty);
      issues.push({ code: "missing", path, keyword: "required", fields: [field], message: `missing required field: ${field}` });
    } else {
      issues.push(convertError(error, path, (error as { data?: unknown }).data));
    }
  }
  return dedupe(issues);
}

function dedupe(issues: ValidationIssue[]): ValidationIssue[] {
  const seen = new Set<string>();
  const out: ValidationIssue[] = [];
  // Missing-field issues at one path are merged so "missing: a" and "missing: b" read as one line.
  const missing = new Map<string, ValidationIssue>();
  for (const issue of issues) {
    if (issue.code === "missing") {
      const key = JSON.stringify(issue.path);
      const existing = missing.get(key);
      if (existing) {
        for (const f of issue.fields ?? []) if (!existing.fields!.includes(f)) existing.fields!.push(f);
        existing.message = `missing required field${existing.fields!.length > 1 ? "s" : ""}: ${existing.fields!.join(", ")}`;
        continue;
      }
      const copy = { ...issue, fields: [...(issue.fields ?? [])] };
      missing.set(key, copy);
      out.push(copy);
      continue;
    }
    const key = `${issue.code}|${JSON.stringify(issue.path)}|${issue.message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(issue);
  }
  return out;
}

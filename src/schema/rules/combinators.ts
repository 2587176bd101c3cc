import { conditionText } from "../hints.js";
import {
  declaredTypes,
  getAtPointer,
  isLocalRef,
  isPlainObject,
  isSchemaNode,
  literal,
  preview,
  propertyPin,
  requiredOf,
  setOwn,
  stableStringify,
  transformNodesTopDown,
  visitNodes,
  type JsonType,
  type Schema,
  type SchemaNode,
} from "../json-schema.js";
import { describeConstraint, nodeRule, type Finding, type Rule, type RuleContext } from "./rule.js";

/**
 * Combinators a target cannot take are flattened into the object they constrain: branch fields
 * become ordinary properties and the requirements move into descriptions the model reads
 * ("REQUIRED when mode='replace'."). Local validation keeps using the original schema, so the
 * real contract is still enforced; the sanitized schema only ever gets looser.
 */

function resolveLocal(schema: unknown, root: SchemaNode, depth = 0): SchemaNode | null {
  if (!isSchemaNode(schema)) return null;
  if (!isLocalRef(schema.$ref) || depth > 8) return schema;
  const target = resolveLocal(getAtPointer(root, schema.$ref), root, depth + 1);
  if (!target) return schema;
  const siblings = { ...schema };
  delete siblings.$ref;
  return { ...target, ...siblings };
}

/** The key every branch pins, if there is one (a discriminated union). */
function discriminatorKey(branches: SchemaNode[]): string | null {
  const first = branches[0];
  if (!first || !isPlainObject(first.properties)) return null;
  for (const key of Object.keys(first.properties)) {
    if (branches.every((b) => propertyPin(b, key) !== null)) return key;
  }
  return null;
}

/** Requirements collected while flattening, written into descriptions at the end. */
class Notes {
  private fieldConditions = new Map<string, string[]>();
  private fieldSentences = new Map<string, string[]>();
  private nodeSentences: string[] = [];
  /** Per mode (`mode='replace'`), every field it requires: the node's "REQUIRED PARAMETERS" summary. */
  private modes = new Map<string, string[]>();

  requireWhen(field: string, condition: string): void {
    const list = this.fieldConditions.get(field) ?? [];
    if (!list.includes(condition)) list.push(condition);
    this.fieldConditions.set(field, list);
    const mode = condition.startsWith("when ") ? condition.slice(5) : condition;
    const fields = this.modes.get(mode) ?? [];
    if (!fields.includes(field)) fields.push(field);
    this.modes.set(mode, fields);
  }

  fieldNote(field: string, sentence: string): void {
    const list = this.fieldSentences.get(field) ?? [];
    if (!list.includes(sentence)) list.push(sentence);
    this.fieldSentences.set(field, list);
  }

  nodeNote(sentence: string): void {
    if (!this.nodeSentences.includes(sentence)) this.nodeSentences.push(sentence);
  }

  get empty(): boolean {
    return this.fieldConditions.size === 0 && this.fieldSentences.size === 0 && this.nodeSentences.length === 0;
  }

  /** "REQUIRED PARAMETERS: mode='replace' → path, old_string, new_string; mode='patch' → patch." */
  private summary(): string | null {
    if (this.modes.size === 0) return null;
    return `REQUIRED PARAMETERS: ${[...this.modes].map(([mode, fields]) => `${mode} → ${fields.join(", ")}`).join("; ")}.`;
  }

  writeInto(node: SchemaNode): SchemaNode {
    const properties: Record<string, unknown> = isPlainObject(node.properties) ? { ...node.properties } : {};
    const touch = (field: string, fn: (sub: SchemaNode) => SchemaNode) => {
      const current = Object.prototype.hasOwnProperty.call(properties, field) ? properties[field] : undefined;
      const sub: SchemaNode = isSchemaNode(current) ? current : {};
      setOwn(properties, field, fn(sub));
    };
    for (const [field, conditions] of this.fieldConditions) {
      touch(field, (sub) => prefixDescription(sub, `REQUIRED ${conditions.join(" or ")}.`));
    }
    for (const [field, sentences] of this.fieldSentences) {
      touch(field, (sub) => suffixDescription(sub, sentences.join(" ")));
    }
    let out: SchemaNode = { ...node };
    if (this.fieldConditions.size > 0 || this.fieldSentences.size > 0) out.properties = properties;
    const summary = this.summary();
    const sentences = summary === null ? this.nodeSentences : [summary, ...this.nodeSentences];
    if (sentences.length > 0) out = suffixDescription(out, sentences.join(" "));
    return out;
  }
}

function prefixDescription(node: SchemaNode, sentence: string): SchemaNode {
  const current = typeof node.description === "string" ? node.description.trim() : "";
  if (current.includes(sentence)) return node;
  return { ...node, description: current === "" ? sentence : `${sentence} ${current}` };
}

function suffixDescription(node: SchemaNode, sentence: string): SchemaNode {
  const current = typeof node.description === "string" ? node.description.trim() : "";
  if (current.includes(sentence)) return node;
  return { ...node, description: current === "" ? sentence : `${current} ${sentence}` };
}

/** Keywords of a constraint subschema in words, e.g. "must be 'x'; at least 1 character". */
function constraintWords(node: SchemaNode): string {
  const parts: string[] = [];
  for (const [key, value] of Object.entries(node)) {
    if (["description", "title", "$comment"].includes(key)) continue;
    if (key === "type") {
      parts.push(`of type ${Array.isArray(value) ? value.join("/") : String(value)}`);
      continue;
    }
    const text = describeConstraint(key, value);
    if (text !== "") parts.push(text);
  }
  return parts.join("; ");
}

/**
 * Flattens `node[keyword]` (anyOf/oneOf): branch properties merged into the node, the fields every
 * branch requires made required, and the rest written as conditional requirements.
 */
function flattenBranches(node: SchemaNode, keyword: "anyOf" | "oneOf", root: SchemaNode, notes: Notes): SchemaNode {
  const raw = node[keyword] as unknown[];
  const out: SchemaNode = { ...node };
  delete out[keyword];
  const branches = raw.map((b) => resolveLocal(b, root)).filter((b): b is SchemaNode => b !== null);
  if (branches.length === 0) return out;

  const properties: Record<string, unknown> = isPlainObject(out.properties) ? { ...out.properties } : {};
  const required = requiredOf(out);
  const sets = branches.map(requiredOf);
  const common = sets.reduce((acc, set) => acc.filter((f) => set.includes(f)));
  const addRequired = common.filter((f) => !required.includes(f));
  const key = discriminatorKey(branches);

  const branchKeys = [...new Set(branches.flatMap((b) => (isPlainObject(b.properties) ? Object.keys(b.properties) : [])))];
  for (const name of branchKeys) {
    if (Object.prototype.hasOwnProperty.call(properties, name)) continue;
    const defining = branches.filter((b) => isPlainObject(b.properties) && name in (b.properties as object));
    const pins = defining.map((b) => propertyPin(b, name));
    if (pins.every((p) => p !== null)) {
      const values = uniqueValues(pins.map((p) => p!.value));
      const types = [...new Set(values.map(typeOfValue))];
      setOwn(properties, name, types.length === 1 ? { type: types[0], enum: values } : { enum: values });
      continue;
    }
    const variants = uniqueSchemas(defining.map((b) => (b.properties as Record<string, unknown>)[name]));
    setOwn(properties, name, variants.length === 1 ? variants[0] : { anyOf: variants });
  }
  for (const name of [...new Set(sets.flat())]) if (!Object.prototype.hasOwnProperty.call(properties, name)) setOwn(properties, name, {});
  if (Object.keys(properties).length > 0 || isPlainObject(out.properties)) out.properties = properties;
  if (addRequired.length > 0) out.required = [...required, ...addRequired];
  const alreadyRequired = new Set([...required, ...addRequired]);

  if (key !== null) {
    branches.forEach((b, i) => {
      const condition = `when ${key}=${literal(propertyPin(b, key)!.value, 40)}`;
      for (const field of sets[i]!) if (field !== key && !alreadyRequired.has(field)) notes.requireWhen(field, condition);
    });
    return out;
  }
  if (branches.every(isRequiredOnly) && sets.every((s) => s.length > 0)) {
    const groups = sets.map((s) => (s.length === 1 ? s[0]! : `(${s.join(", ")})`));
    const lead = keyword === "anyOf" ? "Provide at least one of" : "Provide exactly one of";
    const sentence = `${lead}: ${groups.join(", ")}.`;
    notes.nodeNote(sentence);
    for (const field of new Set(sets.flat())) if (!alreadyRequired.has(field)) notes.fieldNote(field, sentence);
    return out;
  }
  const forms = branches.map((b, i) => {
    const req = sets[i]!.filter((f) => !alreadyRequired.has(f));
    return req.length > 0 ? `(${req.join(", ")})` : preview(b, 60);
  });
  notes.nodeNote(`Must match ${keyword === "oneOf" ? "exactly one" : "at least one"} of these forms: ${forms.join(" or ")}.`);
  return out;
}

function isRequiredOnly(node: SchemaNode): boolean {
  return Object.keys(node).every((k) => k === "required" || k === "description" || k === "title" || (k === "type" && node.type === "object"));
}

function uniqueValues(values: unknown[]): unknown[] {
  const seen = new Set<string>();
  return values.filter((v) => {
    const key = stableStringify(v);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

function uniqueSchemas(schemas: unknown[]): unknown[] {
  return uniqueValues(schemas);
}

function typeOfValue(value: unknown): JsonType {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  if (typeof value === "number") return Number.isInteger(value) ? "integer" : "number";
  if (typeof value === "string" || typeof value === "boolean" || typeof value === "object") return typeof value as JsonType;
  return "string";
}

/** `if`/`then`/`else` on `node` into field requirements and notes. */
function flattenConditional(node: SchemaNode, notes: Notes): SchemaNode {
  const out: SchemaNode = { ...node };
  const condition = node.if !== undefined ? conditionText(node.if as Schema) : "always";
  for (const [keyword, phrase] of [
    ["then", `when ${condition}`],
    ["else", `unless ${condition}`],
  ] as const) {
    const branch = node[keyword];
    delete out[keyword];
    if (!isSchemaNode(branch)) continue;
    const required = requiredOf(out);
    for (const field of requiredOf(branch)) if (!required.includes(field)) notes.requireWhen(field, phrase);
    if (isPlainObject(branch.properties)) {
      for (const [field, sub] of Object.entries(branch.properties)) {
        if (!isSchemaNode(sub)) continue;
        const words = constraintWords(sub);
        if (words !== "") notes.fieldNote(field, `(${phrase}: ${words})`);
      }
    }
    const rest = { ...branch };
    delete rest.required;
    delete rest.properties;
    delete rest.description;
    if (Object.keys(rest).length > 0) notes.nodeNote(`${capitalize(phrase)}: must match ${preview(rest, 100)}.`);
  }
  delete out.if;
  return out;
}

function flattenDependencies(node: SchemaNode, notes: Notes): SchemaNode {
  const out: SchemaNode = { ...node };
  // Draft-07 `dependencies` holds both forms: lists of names and schemas.
  if (isPlainObject(node.dependencies)) {
    for (const [key, dep] of Object.entries(node.dependencies)) {
      if (Array.isArray(dep)) for (const field of dep) if (typeof field === "string") notes.requireWhen(field, `when ${key} is given`);
      if (isSchemaNode(dep)) {
        for (const field of requiredOf(dep)) notes.requireWhen(field, `when ${key} is given`);
        const rest = { ...dep };
        delete rest.required;
        if (Object.keys(rest).length > 0) notes.nodeNote(`When ${key} is given: must match ${preview(rest, 100)}.`);
      }
    }
    delete out.dependencies;
  }
  if (isPlainObject(node.dependentRequired)) {
    for (const [key, fields] of Object.entries(node.dependentRequired)) {
      if (!Array.isArray(fields)) continue;
      for (const field of fields) if (typeof field === "string") notes.requireWhen(field, `when ${key} is given`);
    }
    delete out.dependentRequired;
  }
  if (isPlainObject(node.dependentSchemas)) {
    for (const [key, dep] of Object.entries(node.dependentSchemas)) {
      if (!isSchemaNode(dep)) continue;
      for (const field of requiredOf(dep)) notes.requireWhen(field, `when ${key} is given`);
      const rest = { ...dep };
      delete rest.required;
      if (Object.keys(rest).length > 0) notes.nodeNote(`When ${key} is given: must match ${preview(rest, 100)}.`);
    }
    delete out.dependentSchemas;
  }
  return out;
}

function flattenNot(node: SchemaNode, notes: Notes): SchemaNode {
  const out: SchemaNode = { ...node };
  const not = node.not;
  delete out.not;
  if (isSchemaNode(not)) {
    const req = requiredOf(not);
    const only = Object.keys(not).every((k) => k === "required" || k === "description");
    if (only && req.length > 1) notes.nodeNote(`Do not provide ${req.join(" and ")} together.`);
    else if (only && req.length === 1) notes.nodeNote(`Do not provide ${req[0]}.`);
    else notes.nodeNote(`Must not match ${preview(not, 100)}.`);
  } else if (not === true) {
    notes.nodeNote("No value is allowed here.");
  }
  return out;
}

function capitalize(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/** A `{required, properties, …}` fragment with no type of its own: only meaningful on the object it sits on. */
function isFragment(schema: unknown): boolean {
  if (!isSchemaNode(schema)) return false;
  if ("type" in schema || "$ref" in schema) return false;
  const allowed = new Set(["required", "properties", "description", "title", "$comment", "not", "dependentRequired", "minProperties", "maxProperties", "if", "then", "else"]);
  return Object.keys(schema).every((k) => allowed.has(k));
}

function isPureConditional(schema: unknown): boolean {
  if (!isSchemaNode(schema)) return false;
  return "if" in schema && Object.keys(schema).every((k) => ["if", "then", "else", "description", "$comment"].includes(k));
}

/** Root-level `not`/`allOf`/`anyOf`/`oneOf` are the top-level-combinators rule's. */
function conditionalReasons(node: SchemaNode, isRoot: boolean): string[] {
  const reasons: string[] = [];
  if ("if" in node || "then" in node || "else" in node) reasons.push("`if`/`then`/`else`");
  if ("dependentRequired" in node) reasons.push("`dependentRequired`");
  if ("dependentSchemas" in node) reasons.push("`dependentSchemas`");
  if (isPlainObject(node.dependencies)) reasons.push("`dependencies`");
  if (isRoot) return reasons;
  if ("not" in node) reasons.push("`not`");
  if (Array.isArray(node.allOf) && node.allOf.some(isPureConditional)) reasons.push("`allOf` holding `if`/`then`");
  for (const keyword of ["anyOf", "oneOf"] as const) {
    const branches = node[keyword];
    if (Array.isArray(branches) && branches.length > 0 && branches.every(isFragment)) reasons.push(`\`${keyword}\` of type-less fragments`);
  }
  return reasons;
}

function flattenConditionals(node: SchemaNode, root: SchemaNode): SchemaNode {
  const notes = new Notes();
  let out: SchemaNode = { ...node };
  if (Array.isArray(out.allOf)) {
    const keep: unknown[] = [];
    for (const member of out.allOf) {
      if (isPureConditional(member)) {
        const flattened = flattenConditional(member as SchemaNode, notes);
        const rest = { ...flattened };
        delete rest.description;
        delete rest.$comment;
        if (Object.keys(rest).length > 0) keep.push(rest);
      } else keep.push(member);
    }
    if (keep.length > 0) out.allOf = keep;
    else delete out.allOf;
  }
  if ("if" in out || "then" in out || "else" in out) out = flattenConditional(out, notes);
  out = flattenDependencies(out, notes);
  if ("not" in out) out = flattenNot(out, notes);
  for (const keyword of ["anyOf", "oneOf"] as const) {
    const branches = out[keyword];
    if (Array.isArray(branches) && branches.length > 0 && branches.every(isFragment)) out = flattenBranches(out, keyword, root, notes);
  }
  return notes.empty ? out : notes.writeInto(out);
}

/**
 * `if`/`then`/`else`, `dependentRequired`/`dependentSchemas`, `not` and `anyOf`/`oneOf` of
 * type-less fragments, at any depth, into descriptions.
 */
export const conditionals: Rule = {
  id: "conditionals",
  severity: "error",
  rows: [{ row: "conditionals", cell: "→ description" }],
  detect(root) {
    const findings: Finding[] = [];
    visitNodes(root, (node, path) => {
      const reasons = conditionalReasons(node, path === "#");
      if (reasons.length > 0) findings.push({ path, message: `conditional requirement the target cannot express: ${reasons.join(", ")}` });
    });
    return findings;
  },
  apply(root, ctx) {
    return transformNodesTopDown(root, (node, path) => {
      const reasons = conditionalReasons(node, path === "#");
      if (reasons.length === 0) return node;
      ctx.change(path, `moved ${reasons.join(", ")} into descriptions`);
      return flattenConditionals(node, root);
    }) as SchemaNode;
  },
};

const ROOT_COMBINATORS = ["anyOf", "oneOf", "allOf", "enum", "not"] as const;
type RootCombinator = (typeof ROOT_COMBINATORS)[number];

/**
 * Top-level `anyOf`/`oneOf`/`allOf`/`enum`/`not`: rejected by Anthropic ("input_schema does not
 * support oneOf, allOf, or anyOf at the top level"), the Codex backend, OpenAI strict, Fireworks
 * and Kimi (`type` beside `anyOf` at the root). The root becomes one plain object.
 */
export const hoistRootCombinators: Rule = rootCombinatorsRule(ROOT_COMBINATORS);

/** The same rule leaving top-level `anyOf`/`oneOf` alone (SanitizeOptions.rootCombinators "keep"). */
export const hoistRootCombinatorsButUnions: Rule = rootCombinatorsRule(["allOf", "enum", "not"]);

function rootCombinatorsRule(handled: readonly RootCombinator[]): Rule {
  return {
    id: "top-level-combinators",
    severity: "error",
    rows: [{ row: "topCombinators", cell: "flattened (REQUIRED per field, per-mode summary on the root)" }],
    detect(root) {
      const found = handled.filter((k) => k in root);
      return found.length > 0 ? [{ path: "#", message: `top-level ${found.map((k) => `\`${k}\``).join(", ")}` }] : [];
    },
    apply(root, ctx) {
      const found = handled.filter((k) => k in root);
      if (found.length === 0) return root;
      const notes = new Notes();
      let out: SchemaNode = { ...root };
      if (handled.includes("allOf") && Array.isArray(out.allOf)) {
        const members = out.allOf;
        delete out.allOf;
        for (const member of members) {
          if (isPureConditional(member)) {
            flattenConditional({ ...(member as SchemaNode), required: out.required }, notes);
            continue;
          }
          const resolved = resolveLocal(member, root);
          if (resolved) out = mergeInto(out, resolved, notes).node;
        }
      }
      for (const keyword of ["anyOf", "oneOf"] as const) {
        if (handled.includes(keyword) && Array.isArray(out[keyword])) out = flattenBranches(out, keyword, root, notes);
      }
      if (handled.includes("enum") && "enum" in out) delete out.enum;
      if (handled.includes("not") && "not" in out) out = flattenNot(out, notes);
      ctx.change("#", `flattened top-level ${found.join(", ")} into the root object`);
      return notes.empty ? out : notes.writeInto(out);
    },
  };
}

/**
 * Kept top-level `anyOf`/`oneOf` branches made whole objects: each branch gets the root's
 * properties (its own pins merged in) and required fields. llama.cpp's converter reads `anyOf`
 * before anything else and ignores the keywords beside it, so a branch that only pins `mode` and
 * lists `required` would otherwise become an object with just `mode`.
 */
export const wholeRootBranches: Rule = {
  id: "whole-root-branches",
  severity: "error",
  rows: [],
  detect(root) {
    const findings: Finding[] = [];
    for (const keyword of ["anyOf", "oneOf"] as const) {
      const branches = root[keyword];
      if (!Array.isArray(branches)) continue;
      branches.forEach((branch, i) => {
        if (!isWholeBranch(root, branch)) findings.push({ path: `#/${keyword}/${i}`, message: "top-level branch without the root's properties (the converter ignores keywords beside anyOf)" });
      });
    }
    return findings;
  },
  apply(root, ctx) {
    let out = root;
    for (const keyword of ["anyOf", "oneOf"] as const) {
      const branches = out[keyword];
      if (!Array.isArray(branches) || branches.every((b) => isWholeBranch(out, b))) continue;
      out = { ...out, [keyword]: branches.map((b) => (isWholeBranch(out, b) ? b : wholeBranch(out, b))) };
      ctx.change("#", `top-level \`${keyword}\` branches completed with the root's properties and required fields`);
    }
    return out;
  },
};

function rootBase(root: SchemaNode): SchemaNode {
  const base: SchemaNode = {};
  for (const key of ["type", "properties", "required", "additionalProperties"]) if (key in root) base[key] = root[key];
  return base;
}

function wholeBranch(root: SchemaNode, branch: unknown): unknown {
  const resolved = resolveLocal(branch, root);
  if (!resolved) return branch;
  const out: SchemaNode = { ...rootBase(root), ...resolved };
  const properties: Record<string, unknown> = isPlainObject(root.properties) ? { ...root.properties } : {};
  if (isPlainObject(resolved.properties)) {
    for (const [name, sub] of Object.entries(resolved.properties)) {
      const base = properties[name];
      setOwn(properties, name, isSchemaNode(base) && isSchemaNode(sub) ? { ...base, ...sub } : sub);
    }
  }
  out.properties = properties;
  out.required = [...new Set([...requiredOf(root), ...requiredOf(resolved)])];
  if (!("type" in resolved)) out.type = "object";
  return out;
}

function isWholeBranch(root: SchemaNode, branch: unknown): boolean {
  if (!isSchemaNode(branch) || !isPlainObject(branch.properties)) return false;
  const props = branch.properties;
  const rootProps = isPlainObject(root.properties) ? Object.keys(root.properties) : [];
  const required = requiredOf(branch);
  return "type" in branch && rootProps.every((k) => Object.prototype.hasOwnProperty.call(props, k)) && requiredOf(root).every((k) => required.includes(k));
}

export const oneOfToAnyOf: Rule = nodeRule({
  id: "oneof-to-anyof",
  severity: "error",
  rows: [{ row: "oneOf", cell: "→ `anyOf`" }],
  match(node) {
    return Array.isArray(node.oneOf) ? "`oneOf` is not supported" : null;
  },
  fix(node, _p, _v, _r, change) {
    const out = { ...node };
    const branches = out.oneOf;
    delete out.oneOf;
    if (Array.isArray(out.anyOf)) {
      out.allOf = [...(Array.isArray(out.allOf) ? out.allOf : []), { anyOf: branches }];
      change("`oneOf` kept as an `anyOf` inside `allOf` (the node already had an `anyOf`)");
    } else {
      out.anyOf = branches;
      change("`oneOf` → `anyOf` (a value matching two branches is no longer rejected)");
    }
    return out;
  },
});

/**
 * Merges `b` into `a` as `allOf: [a, b]` would constrain it: properties united, `required`
 * united, `type` intersected. Where both constrain the same thing differently, `a` wins (the
 * result is looser than the original, never stricter) and the conflict is reported.
 */
function mergeInto(a: SchemaNode, b: SchemaNode, notes: Notes): { node: SchemaNode; conflicts: string[] } {
  const out: SchemaNode = { ...a };
  const conflicts: string[] = [];
  for (const [key, value] of Object.entries(b)) {
    if (!(key in out)) {
      out[key] = value;
      continue;
    }
    const current = out[key];
    if (stableStringify(current) === stableStringify(value)) continue;
    if (key === "properties" && isPlainObject(current) && isPlainObject(value)) {
      const merged: Record<string, unknown> = { ...current };
      for (const [name, sub] of Object.entries(value)) {
        const has = Object.prototype.hasOwnProperty.call(merged, name);
        if (!has || merged[name] === true || (isSchemaNode(merged[name]) && Object.keys(merged[name] as object).length === 0)) setOwn(merged, name, sub);
        else if (stableStringify(merged[name]) !== stableStringify(sub)) {
          conflicts.push(`properties.${name}`);
          if (isSchemaNode(sub)) {
            const existing = merged[name];
            const differing = isSchemaNode(existing) ? Object.fromEntries(Object.entries(sub).filter(([k, v]) => stableStringify(existing[k]) !== stableStringify(v))) : sub;
            const words = constraintWords(differing);
            if (words !== "") notes.fieldNote(name, `(also: ${words})`);
          }
        }
      }
      out.properties = merged;
    } else if (key === "required" && Array.isArray(current) && Array.isArray(value)) {
      out.required = [...new Set([...current, ...value])];
    } else if (key === "type") {
      const ta = declaredTypes(a) ?? [];
      const tb = declaredTypes(b) ?? [];
      const both = ta.filter((t) => tb.includes(t) || (t === "integer" && tb.includes("number")));
      for (const t of tb) if (t === "integer" && ta.includes("number") && !both.includes("integer")) both.push("integer");
      if (both.length > 0) out.type = both.length === 1 ? both[0] : both;
      else conflicts.push("type");
    } else if (key === "description" || key === "title" || key === "$comment") {
      continue;
    } else {
      conflicts.push(key);
      const text = describeConstraint(key, value);
      if (text !== "") notes.nodeNote(`(also: ${text})`);
    }
  }
  return { node: out, conflicts };
}

/** `allOf` members merged into their parent (OpenAI strict, Gemini; xAI takes one member only). */
export const mergeAllOf: Rule = nodeRule({
  id: "merge-allof",
  severity: "error",
  rows: [{ row: "allOf", cell: "merged" }],
  match(node) {
    return Array.isArray(node.allOf) ? "`allOf` is not supported" : null;
  },
  fix(node, _p, _v, root, change) {
    const notes = new Notes();
    let out: SchemaNode = { ...node };
    const members = out.allOf as unknown[];
    delete out.allOf;
    const conflicts: string[] = [];
    for (const member of members) {
      if (member === true) continue;
      const resolved = resolveLocal(member, root);
      if (!resolved) continue;
      const merged = mergeInto(out, resolved, notes);
      out = merged.node;
      conflicts.push(...merged.conflicts);
    }
    change(conflicts.length > 0 ? `merged \`allOf\`; conflicting ${conflicts.join(", ")} kept from the first` : "merged `allOf` into the node");
    return notes.empty ? out : notes.writeInto(out);
  },
});

/**
 * Kimi: "when using anyOf, type should be defined in anyOf items instead of the parent schema".
 * The parent's type is pushed into each branch (intersected with the branch's own).
 */
export const typeBesideAnyOf: Rule = nodeRule({
  id: "type-beside-anyof",
  severity: "error",
  rows: [{ row: "typeWithAnyOf", cell: "type pushed into branches" }],
  match(node) {
    return "type" in node && (Array.isArray(node.anyOf) || Array.isArray(node.oneOf)) ? "`type` beside `anyOf`/`oneOf`" : null;
  },
  fix(node, _p, _v, _r, change) {
    const parent = declaredTypes(node);
    const out: SchemaNode = { ...node };
    delete out.type;
    for (const keyword of ["anyOf", "oneOf"] as const) {
      const branches = out[keyword];
      if (!Array.isArray(branches) || parent === null) continue;
      const kept: unknown[] = [];
      for (const branch of branches) {
        if (branch === true) {
          kept.push({ type: parent.length === 1 ? parent[0] : parent });
          continue;
        }
        if (!isSchemaNode(branch)) continue;
        const own = declaredTypes(branch);
        const types = own === null ? parent : own.filter((t) => parent.includes(t) || (t === "integer" && parent.includes("number")));
        if (types.length === 0) continue;
        kept.push({ ...branch, type: types.length === 1 ? types[0] : types });
      }
      out[keyword] = kept.length > 0 ? kept : branches;
    }
    change("moved `type` into each `anyOf`/`oneOf` branch");
    return out;
  },
});

export type { RuleContext };

import { isPlainObject, setOwn, visitNodes, type SchemaNode } from "../json-schema.js";
import { transformWithMap, type ValueMapNode } from "../value-map.js";
import type { Finding, RowCell, Rule } from "./rule.js";

/**
 * Property keys a target rejects are renamed deterministically (invalid characters → `_`, cut to
 * the length limit, collisions get `_2`, `_3`… in declaration order; keys that are already valid
 * keep their names). `required`, `dependentRequired` and `propertyOrdering` follow, and the value
 * map renames the model's keys back.
 */
export interface KeyPolicy {
  id: string;
  rows: RowCell[];
  describe: string;
  valid(key: string): boolean;
  fix(key: string): string;
}

/** Anthropic (and Bedrock/Vertex in front of it): "Property keys should match pattern '^[a-zA-Z0-9_.-]{1,64}$'". */
export const ANTHROPIC_KEYS: KeyPolicy = {
  id: "anthropic-keys",
  rows: [{ row: "keys", cell: "renamed to `^[a-zA-Z0-9_.-]{1,64}$`" }],
  describe: "^[a-zA-Z0-9_.-]{1,64}$",
  valid: (key) => /^[a-zA-Z0-9_.-]{1,64}$/.test(key),
  fix: (key) => key.replace(/[^a-zA-Z0-9_.-]/g, "_").slice(0, 64) || "param",
};

/** Gemini function parameters: "must start with a letter or an underscore … a-z, A-Z, 0-9, or underscores, maximum length of 64". */
export const GEMINI_KEYS: KeyPolicy = {
  id: "gemini-keys",
  rows: [{ row: "keys", cell: "renamed to `^[A-Za-z_][A-Za-z0-9_]{0,63}$`" }],
  describe: "^[A-Za-z_][A-Za-z0-9_]{0,63}$",
  valid: (key) => /^[A-Za-z_][A-Za-z0-9_]{0,63}$/.test(key),
  fix: (key) => {
    const cleaned = key.replace(/[^A-Za-z0-9_]/g, "_");
    const start = /^[A-Za-z_]/.test(cleaned) ? cleaned : `_${cleaned}`;
    return start.slice(0, 64) || "param";
  },
};

/** Kimi: a property literally named `$ref` fails with "$ref must be a string". */
export const KIMI_KEYS: KeyPolicy = {
  id: "kimi-keys",
  rows: [{ row: "keys", cell: "`$ref` key renamed" }],
  describe: "not `$ref`",
  valid: (key) => key !== "$ref",
  fix: (key) => key.replace(/^\$/, "") || "param",
};

function renamePlan(keys: string[], policy: KeyPolicy): Map<string, string> {
  const taken = new Set(keys.filter((k) => policy.valid(k)));
  const plan = new Map<string, string>();
  for (const key of keys) {
    if (policy.valid(key)) continue;
    const base = policy.fix(key);
    let candidate = base;
    for (let i = 2; taken.has(candidate) || !policy.valid(candidate); i++) {
      const suffix = `_${i}`;
      candidate = base.slice(0, 64 - suffix.length) + suffix;
      if (i > 10000) break;
    }
    taken.add(candidate);
    plan.set(key, candidate);
  }
  return plan;
}

function badKeys(node: SchemaNode, policy: KeyPolicy): string[] {
  const keys = new Set<string>();
  if (isPlainObject(node.properties)) for (const k of Object.keys(node.properties)) if (!policy.valid(k)) keys.add(k);
  if (Array.isArray(node.required)) for (const k of node.required) if (typeof k === "string" && !policy.valid(k)) keys.add(k);
  return [...keys];
}

export function renameKeys(policy: KeyPolicy): Rule {
  return {
    id: policy.id,
    severity: "error",
    rows: policy.rows,
    detect(root) {
      const findings: Finding[] = [];
      visitNodes(root, (node, path) => {
        const bad = badKeys(node, policy);
        if (bad.length > 0) findings.push({ path, message: `property keys not matching ${policy.describe}: ${bad.map((k) => JSON.stringify(k)).join(", ")}` });
      });
      return findings;
    },
    apply(root, ctx) {
      const { schema, stage } = transformWithMap(root, policy.id, (_original, node, map, path) => {
        const bad = badKeys(node, policy);
        if (bad.length === 0) return { node, map };
        const declared = isPlainObject(node.properties) ? Object.keys(node.properties) : [];
        const required = Array.isArray(node.required) ? node.required.filter((k): k is string => typeof k === "string") : [];
        const plan = renamePlan([...new Set([...declared, ...required])], policy);
        const rename = (k: string) => plan.get(k) ?? k;
        const out: SchemaNode = { ...node };
        const next: ValueMapNode = { ...map };
        if (isPlainObject(node.properties)) {
          const props: Record<string, unknown> = {};
          const propMaps: Record<string, ValueMapNode> = {};
          for (const [key, sub] of Object.entries(node.properties)) {
            setOwn(props, rename(key), sub);
            const subMap = map.properties?.[key];
            if (subMap) setOwn(propMaps, rename(key), subMap);
          }
          out.properties = props;
          if (Object.keys(propMaps).length > 0) next.properties = propMaps;
          else delete next.properties;
        }
        if (Array.isArray(node.required)) out.required = node.required.map((k) => (typeof k === "string" ? rename(k) : k));
        if (Array.isArray(node.propertyOrdering)) out.propertyOrdering = node.propertyOrdering.map((k) => (typeof k === "string" ? rename(k) : k));
        if (isPlainObject(node.dependentRequired)) {
          out.dependentRequired = Object.fromEntries(
            Object.entries(node.dependentRequired).map(([k, v]) => [rename(k), Array.isArray(v) ? v.map((x) => (typeof x === "string" ? rename(x) : x)) : v]),
          );
        }
        const renamed: Record<string, string> = { ...(map.renamed ?? {}) };
        for (const [from, to] of plan) renamed[to] = from;
        next.renamed = renamed;
        if (next.closed) next.closed = next.closed.map(rename);
        if (next.fillNull) next.fillNull = next.fillNull.map(rename);
        if (next.dropNull) next.dropNull = next.dropNull.map(rename);
        ctx.change(path, `renamed ${[...plan].map(([a, b]) => `${JSON.stringify(a)} → ${JSON.stringify(b)}`).join(", ")}`);
        return { node: out, map: next };
      });
      ctx.addStage(stage);
      return schema as SchemaNode;
    },
  };
}

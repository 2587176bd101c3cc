import {
  getAtPointer,
  isLocalRef,
  isPlainObject,
  isSchemaNode,
  rebuildChildren,
  stableStringify,
  unescapePointer,
  visitNodes,
  type SchemaNode,
} from "../json-schema.js";
import { transformWithMap } from "../value-map.js";
import { nodeRule, type Finding, type Rule } from "./rule.js";

/** `$ref` handling: inlining where refs are unsupported or buggy, breaking recursion, sibling keywords. */

const ANNOTATIONS = new Set(["description", "title", "default", "examples", "$comment", "deprecated", "readOnly", "writeOnly"]);

/** Refs whose expansion reaches themselves again. */
function cyclicRefs(root: SchemaNode): Set<string> {
  const edges = new Map<string, Set<string>>();
  const refsIn = (node: unknown): Set<string> => {
    const found = new Set<string>();
    visitNodes(node, (n) => {
      if (isLocalRef(n.$ref)) found.add(n.$ref);
    });
    return found;
  };
  const pending = [...refsIn(root)];
  while (pending.length > 0) {
    const ref = pending.pop()!;
    if (edges.has(ref)) continue;
    const target = getAtPointer(root, ref);
    const next = target === undefined ? new Set<string>() : refsIn(target);
    edges.set(ref, next);
    pending.push(...next);
  }
  const cyclic = new Set<string>();
  for (const start of edges.keys()) {
    const seen = new Set<string>();
    const stack = [...(edges.get(start) ?? [])];
    while (stack.length > 0) {
      const ref = stack.pop()!;
      if (ref === start) {
        cyclic.add(start);
        break;
      }
      if (seen.has(ref)) continue;
      seen.add(ref);
      stack.push(...(edges.get(ref) ?? []));
    }
  }
  return cyclic;
}

export type InlineMode = "all" | "recursive" | "siblings";

function siblingKeys(node: SchemaNode): string[] {
  return Object.keys(node).filter((k) => k !== "$ref");
}

function inlineReason(node: SchemaNode, mode: InlineMode, cyclic: Set<string>): string | null {
  if (!isLocalRef(node.$ref)) return typeof node.$ref === "string" ? null : null;
  switch (mode) {
    case "all":
      return "`$ref` is not supported";
    case "recursive":
      return cyclic.has(node.$ref) ? "recursive `$ref` is not supported" : null;
    case "siblings":
      if (!node.$ref.startsWith("#/$defs/")) return "references must start with #/$defs";
      return siblingKeys(node).length > 0 ? `keywords beside \`$ref\`: ${siblingKeys(node).join(", ")}` : null;
  }
}

function mergeSiblings(resolved: unknown, siblings: SchemaNode): SchemaNode {
  const base: SchemaNode = isSchemaNode(resolved) ? { ...resolved } : resolved === false ? { not: {} } : {};
  for (const [key, value] of Object.entries(siblings)) {
    if (ANNOTATIONS.has(key) || !(key in base)) base[key] = value;
  }
  return base;
}

const MAX_INLINED_NODES = 20000;

/**
 * Replaces `$ref`s by their targets. Where a recursive structure would expand forever the
 * recursion point becomes a string holding the JSON of the sub-value (the value map encodes and
 * decodes it), so the schema stays finite and every original value can still be sent.
 */
export function inlineRefs(mode: InlineMode): Rule {
  const rows =
    mode === "all"
      ? [
          { row: "ref" as const, cell: "inlined" },
          { row: "recursiveRef" as const, cell: "inlined; recursion → JSON string" },
          { row: "refSiblings" as const, cell: "inlined (siblings kept)" },
        ]
      : mode === "recursive"
        ? [{ row: "recursiveRef" as const, cell: "recursion → JSON string" }]
        : [
            { row: "refSiblings" as const, cell: "inlined (siblings kept)" },
            { row: "definitions" as const, cell: "non-`#/$defs` refs inlined" },
          ];
  return {
    id: `inline-refs-${mode}`,
    severity: "error",
    rows,
    detect(root) {
      const cyclic = cyclicRefs(root);
      const findings: Finding[] = [];
      visitNodes(root, (node, path) => {
        if (typeof node.$ref === "string" && !isLocalRef(node.$ref)) {
          findings.push({ path, message: `external \`$ref\` ${node.$ref} cannot be resolved; bundle it first`, fixable: false });
          return;
        }
        const reason = inlineReason(node, mode, cyclic);
        if (reason) findings.push({ path, message: reason });
      });
      if (mode === "all") for (const k of ["$defs", "definitions"]) if (k in root) findings.push({ path: `#/${k}`, message: `\`${k}\` is not supported` });
      return findings;
    },
    apply(root, ctx) {
      const cyclic = cyclicRefs(root);
      const placeholders = new WeakSet<object>();
      let produced = 0;
      const expand = (schema: unknown, stack: string[], path: string): unknown => {
        if (!isSchemaNode(schema)) return schema;
        produced++;
        if (produced > MAX_INLINED_NODES) return schema;
        if (inlineReason(schema, mode, cyclic) !== null && isLocalRef(schema.$ref)) {
          const ref = schema.$ref;
          const target = getAtPointer(root, ref);
          const siblings = { ...schema };
          delete siblings.$ref;
          if (target === undefined) return schema;
          if (stack.includes(ref)) {
            if (mode === "siblings" && ref.startsWith("#/$defs/")) {
              ctx.change(path, `dropped ${siblingKeys(schema).join(", ")} beside a recursive \`$ref\``);
              return { $ref: ref };
            }
            const name = unescapePointer(ref.split("/").pop() ?? "value");
            const description = [typeof siblings.description === "string" ? siblings.description : isSchemaNode(target) && typeof target.description === "string" ? target.description : "", `A JSON-encoded '${name}' value (recursive structure).`]
              .filter((s) => s !== "")
              .join(" ");
            const placeholder: SchemaNode = { type: "string", description };
            placeholders.add(placeholder);
            ctx.change(path, `recursive \`$ref\` ${ref} sent as a JSON string`);
            return placeholder;
          }
          const resolved = expand(target, [...stack, ref], path);
          ctx.change(path, `inlined \`$ref\` ${ref}`);
          return mergeSiblings(resolved, siblings);
        }
        return rebuildChildren(schema, path, (child) => {
          if ((child.keyword === "$defs" || child.keyword === "definitions") && path === "#" && mode === "all") return child.schema;
          const ref = child.keyword === "$defs" || child.keyword === "definitions" ? `#/${child.keyword}/${String(child.key)}` : null;
          return expand(child.schema, ref ? [ref] : stack, child.path);
        });
      };
      let out = expand(root, [], "#") as SchemaNode;
      if (mode === "all") {
        out = { ...out };
        for (const k of ["$defs", "definitions"]) {
          if (k in out) {
            delete out[k];
            ctx.change("#", `removed \`${k}\` (every reference inlined)`);
          }
        }
      } else {
        out = dropUnusedDefs(out, ctx.change);
      }
      const { schema, stage } = transformWithMap(out, `inline-refs-${mode}`, (original, node, map) =>
        placeholders.has(original) ? { node: original, map: { json: true } } : { node, map },
      );
      ctx.addStage(stage);
      return schema as SchemaNode;
    },
  };
}

function dropUnusedDefs(root: SchemaNode, change: (path: string, message: string) => void): SchemaNode {
  const used = new Set<string>();
  visitNodes(root, (node) => {
    if (isLocalRef(node.$ref)) used.add(node.$ref);
  });
  let out = root;
  for (const keyword of ["$defs", "definitions"] as const) {
    const defs = root[keyword];
    if (!isPlainObject(defs)) continue;
    const kept: Record<string, unknown> = {};
    for (const [name, def] of Object.entries(defs)) {
      const prefix = `#/${keyword}/${name.replace(/~/g, "~0").replace(/\//g, "~1")}`;
      if ([...used].some((r) => r === prefix || r.startsWith(prefix + "/"))) kept[name] = def;
    }
    if (Object.keys(kept).length !== Object.keys(defs).length) {
      out = { ...out };
      if (Object.keys(kept).length > 0) out[keyword] = kept;
      else delete out[keyword];
      change(`#/${keyword}`, "removed definitions no longer referenced");
    }
  }
  return out;
}

/** Fireworks: "keyword(s) ['default'] not allowed at the same level as $ref". */
export const refDefault: Rule = nodeRule({
  id: "ref-default",
  severity: "error",
  rows: [{ row: "refSiblings", cell: "`default` dropped" }],
  match(node) {
    return "$ref" in node && "default" in node ? "`default` beside `$ref`" : null;
  },
  fix(node, _p, _v, _r, change) {
    const out = { ...node };
    delete out.default;
    change("dropped `default` beside `$ref`");
    return out;
  },
});

/** Kimi: "references must start with #/$defs". Draft-07 `definitions` move into `$defs`. */
export const definitionsToDefs: Rule = {
  id: "definitions-to-defs",
  severity: "error",
  rows: [{ row: "definitions", cell: "→ `$defs`" }],
  detect(root) {
    const findings: Finding[] = [];
    if (isPlainObject(root.definitions)) findings.push({ path: "#/definitions", message: "`definitions` instead of `$defs`" });
    visitNodes(root, (node, path) => {
      if (typeof node.$ref === "string" && node.$ref.startsWith("#/definitions/")) findings.push({ path, message: "reference into `definitions`" });
    });
    return findings;
  },
  apply(root, ctx) {
    if (!isPlainObject(root.definitions)) {
      const hasRefs = this.detect(root).length > 0;
      if (!hasRefs) return root;
    }
    const defs: Record<string, unknown> = isPlainObject(root.$defs) ? { ...root.$defs } : {};
    const renamed = new Map<string, string>();
    for (const [name, def] of Object.entries(isPlainObject(root.definitions) ? root.definitions : {})) {
      let target = name;
      for (let i = 2; target in defs && stableStringify(defs[target]) !== stableStringify(def); i++) target = `${name}_${i}`;
      defs[target] = def;
      renamed.set(name, target);
    }
    const rewrite = (node: unknown): unknown => {
      if (Array.isArray(node)) return node.map(rewrite);
      if (!isPlainObject(node)) return node;
      const out: Record<string, unknown> = {};
      for (const [key, value] of Object.entries(node)) {
        if (key === "$ref" && typeof value === "string" && value.startsWith("#/definitions/")) {
          const [, , first, ...rest] = value.split("/");
          const name = unescapePointer(first ?? "");
          const target = renamed.get(name) ?? name;
          out.$ref = ["#", "$defs", target.replace(/~/g, "~0").replace(/\//g, "~1"), ...rest].join("/");
        } else if (key === "default" || key === "const" || key === "enum" || key === "examples") out[key] = value;
        else out[key] = rewrite(value);
      }
      return out;
    };
    const out = rewrite({ ...root, $defs: defs }) as SchemaNode;
    delete out.definitions;
    if (Object.keys(defs).length === 0) delete out.$defs;
    ctx.change("#", "moved `definitions` into `$defs` and rewrote references");
    return out;
  },
};

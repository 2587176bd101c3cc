import { isSchemaNode, stableStringify, type SchemaNode } from "../json-schema.js";
import { moveToDescription, movedToDescription, nodeRule, type RowCell, type Rule } from "./rule.js";

/** Keywords a target rejects or silently mishandles, moved into descriptions (never silently dropped). */

/**
 * Removes `keywords` wherever they appear on a schema node and writes them into its description.
 * A property *named* like a keyword (`properties.pattern`) is a key of `properties`, not a keyword
 * of a schema node, so it is never touched.
 */
export function describeKeywords(id: string, keywords: readonly string[], rows: RowCell[], severity: "error" | "warning" = "error"): Rule {
  const present = (node: SchemaNode) => keywords.filter((k) => k in node);
  return nodeRule({
    id,
    severity,
    rows,
    match(node) {
      const found = present(node);
      return found.length > 0 ? `unsupported ${found.map((k) => `\`${k}\``).join(", ")}` : null;
    },
    fix(node, _p, _v, _r, change) {
      let base = node;
      // Without patternProperties, keys it allowed would fall under additionalProperties:false: relax it.
      if (keywords.includes("patternProperties") && "patternProperties" in node && node.additionalProperties === false) {
        base = { ...node };
        delete base.additionalProperties;
      }
      const { node: out, moved } = moveToDescription(base, keywords);
      change(`moved ${moved.map((k) => `\`${k}\``).join(", ")} into the description`);
      return out;
    },
  });
}

/** `format` values outside the target's list move into the description. */
export function formats(id: string, allowed: readonly string[], cell: string): Rule {
  return nodeRule({
    id,
    severity: "error",
    rows: [{ row: "format", cell }],
    match(node) {
      return typeof node.format === "string" && !allowed.includes(node.format)
        ? `format ${JSON.stringify(node.format)} is not supported`
        : "format" in node && typeof node.format !== "string"
          ? "malformed `format`"
          : null;
    },
    fix(node, _p, _v, _r, change) {
      change(`moved format ${JSON.stringify(node.format)} into the description`);
      return moveToDescription(node, ["format"]).node;
    },
  });
}

interface PatternScan {
  anchored: boolean;
  /** `\d`, `\w`, `\D`, `\W` outside character classes or `\d`/`\w` inside: expandable exactly. */
  expandable: boolean;
  /** Anything llama.cpp's converter cannot take that has no exact rewrite. */
  blocked: string[];
  lookaround: boolean;
  backreference: boolean;
  wordBoundary: boolean;
  expanded: string;
}

const SHORTHAND: Record<string, string> = { d: "[0-9]", w: "[A-Za-z0-9_]", D: "[^0-9]", W: "[^A-Za-z0-9_]" };
const IN_CLASS: Record<string, string> = { d: "0-9", w: "A-Za-z0-9_" };

/** One left-to-right pass over a regex source: linear, no regex applied to it. */
function scanPattern(source: string): PatternScan {
  const scan: PatternScan = {
    anchored: source.startsWith("^") && source.endsWith("$") && !source.endsWith("\\$"),
    expandable: false,
    blocked: [],
    lookaround: false,
    backreference: false,
    wordBoundary: false,
    expanded: "",
  };
  let out = "";
  let inClass = false;
  for (let i = 0; i < source.length; i++) {
    const ch = source[i]!;
    if (ch === "\\") {
      const next = source[i + 1] ?? "";
      i++;
      if (/[1-9]/.test(next) || next === "k") scan.backreference = true;
      if (next === "b" && !inClass) scan.wordBoundary = true;
      if (next === "B") scan.wordBoundary = true;
      if (next === "p" || next === "P") scan.blocked.push(`\\${next}{…}`);
      if (next === "s" || next === "S") scan.blocked.push(`\\${next}`);
      if (inClass && IN_CLASS[next]) {
        out += IN_CLASS[next];
        scan.expandable = true;
        continue;
      }
      if (inClass && (next === "D" || next === "W")) {
        scan.blocked.push(`\\${next} inside [...]`);
        out += "\\" + next;
        continue;
      }
      if (!inClass && SHORTHAND[next]) {
        out += SHORTHAND[next];
        scan.expandable = true;
        continue;
      }
      out += "\\" + next;
      continue;
    }
    if (inClass) {
      if (ch === "]") inClass = false;
      out += ch;
      continue;
    }
    if (ch === "[") {
      inClass = true;
      out += ch;
      if (source[i + 1] === "^") {
        out += "^";
        i++;
      }
      if (source[i + 1] === "]") {
        out += "]";
        i++;
      }
      continue;
    }
    if (ch === "(" && source[i + 1] === "?") {
      const kind = source.slice(i + 2, i + 4);
      if (kind.startsWith("=") || kind.startsWith("!") || kind === "<=" || kind === "<!") scan.lookaround = true;
    }
    out += ch;
  }
  scan.expanded = out;
  return scan;
}

function llamaPatternProblem(pattern: string): string | null {
  const scan = scanPattern(pattern);
  if (!scan.anchored) return "pattern must start with '^' and end with '$' (llama.cpp: \"Pattern must start with '^' and end with '$'\")";
  if (scan.lookaround || scan.backreference || scan.wordBoundary || scan.blocked.length > 0) return "pattern uses regex features the grammar converter cannot take";
  if (scan.expandable) return "pattern uses \\d/\\w shorthands (\"failed to parse grammar\")";
  return null;
}

/**
 * llama.cpp's json-schema-to-grammar (also behind Ollama and LM Studio) rejects patterns that are
 * not anchored `^…$` and emits an unparseable grammar for `\d \w \s`. `\d`/`\w` (and `\D`/`\W`
 * outside classes) are rewritten exactly; anything else moves into the description. An unanchored
 * pattern is not anchored with `.*`: llama.cpp's `.` excludes newlines, which would forbid values
 * the schema allows.
 */
export const llamaPatterns: Rule = nodeRule({
  id: "llamacpp-patterns",
  severity: "error",
  rows: [
    { row: "patternAnchors", cell: "→ description" },
    { row: "patternShorthand", cell: "`\\d` `\\w` expanded; `\\s` → description" },
    { row: "patternFeatures", cell: "→ description" },
  ],
  match(node) {
    return typeof node.pattern === "string" ? llamaPatternProblem(node.pattern) : null;
  },
  fix(node, _p, _v, _r, change) {
    const pattern = node.pattern as string;
    const scan = scanPattern(pattern);
    if (scan.anchored && scan.expandable && !scan.lookaround && !scan.backreference && !scan.wordBoundary && scan.blocked.length === 0) {
      change(`pattern ${pattern} → ${scan.expanded}`);
      return { ...node, pattern: scan.expanded };
    }
    change(`pattern ${pattern} moved into the description`);
    return moveToDescription(node, ["pattern"]).node;
  },
});

/** Lookaround, backreferences and `\b` (Anthropic strict; RE2-based validators such as xAI's). */
export const patternFeatures: Rule = nodeRule({
  id: "pattern-features",
  severity: "error",
  rows: [{ row: "patternFeatures", cell: "→ description" }],
  match(node) {
    if (typeof node.pattern !== "string") return null;
    const scan = scanPattern(node.pattern);
    return scan.lookaround || scan.backreference || scan.wordBoundary ? "pattern uses lookaround, backreferences or \\b" : null;
  },
  fix(node, _p, _v, _r, change) {
    change("pattern moved into the description");
    return moveToDescription(node, ["pattern"]).node;
  },
});

const HUGE = 1000;

/** llama.cpp expands bounds into repetitions (`char{1,65536}`): huge ones blow up the grammar. */
export const hugeBounds: Rule = nodeRule({
  id: "huge-bounds",
  severity: "warning",
  rows: [{ row: "hugeBounds", cell: "→ description" }],
  match(node) {
    const keys = ["minLength", "maxLength", "minItems", "maxItems"].filter((k) => typeof node[k] === "number" && (node[k] as number) > HUGE);
    return keys.length > 0 ? `${keys.join(", ")} above ${HUGE} expands into a huge grammar` : null;
  },
  fix(node, _p, _v, _r, change) {
    const keys = ["minLength", "maxLength", "minItems", "maxItems"].filter((k) => typeof node[k] === "number" && (node[k] as number) > HUGE);
    change(`moved ${keys.join(", ")} into the description`);
    return moveToDescription(node, keys).node;
  },
});

/** Anthropic strict: `minItems` only 0 or 1. Larger values become 1 plus a description. */
export const minItemsZeroOrOne: Rule = nodeRule({
  id: "min-items-0-1",
  severity: "error",
  rows: [{ row: "itemCount", cell: "`minItems` > 1 → 1 + description; `maxItems` → description" }],
  match(node) {
    return typeof node.minItems === "number" && node.minItems > 1 ? "`minItems` other than 0 or 1" : null;
  },
  fix(node, _p, _v, _r, change) {
    const { node: out } = moveToDescription(node, ["minItems"]);
    change(`minItems ${String(node.minItems)} → 1 (the rest in the description)`);
    return { ...out, minItems: 1 };
  },
});

function tupleOf(node: SchemaNode): unknown[] | null {
  if (Array.isArray(node.prefixItems)) return node.prefixItems;
  if (Array.isArray(node.items)) return node.items;
  return null;
}

/**
 * Tuples (`prefixItems`, draft-07 `items: [...]`) become one `items` schema accepting any of the
 * positions' schemas; a closed tuple keeps its length as `maxItems`. `items: true/false` become
 * plain bounds.
 */
export const tuplesToItems: Rule = nodeRule({
  id: "tuples-to-items",
  severity: "error",
  rows: [{ row: "tuples", cell: "→ `items` union + description" }],
  match(node) {
    if (tupleOf(node)) return "tuple schema is not supported";
    if (typeof node.items === "boolean") return "boolean `items`";
    return null;
  },
  fix(node, _p, _v, _r, change) {
    const out: SchemaNode = { ...node };
    const tuple = tupleOf(node);
    if (!tuple) {
      if (node.items === false) out.maxItems = 0;
      delete out.items;
      change("boolean `items` → bounds");
      return out;
    }
    const rest = Array.isArray(node.prefixItems) ? node.items : node.additionalItems;
    delete out.prefixItems;
    delete out.additionalItems;
    const variants: unknown[] = [];
    const seen = new Set<string>();
    for (const schema of [...tuple, ...(rest === undefined || rest === false ? [] : [rest])]) {
      const key = stableStringify(schema);
      if (seen.has(key)) continue;
      seen.add(key);
      variants.push(schema === true ? {} : schema);
    }
    if (rest === false) out.maxItems = typeof node.maxItems === "number" ? Math.min(node.maxItems, tuple.length) : tuple.length;
    if (variants.length === 0) delete out.items;
    else out.items = variants.length === 1 ? variants[0] : { anyOf: variants };
    const described = `(positions: ${tuple.map((s, i) => `${i}: ${isSchemaNode(s) && typeof s.type === "string" ? s.type : "any"}`).join(", ")})`;
    const current = typeof out.description === "string" ? out.description.trim() : "";
    if (!current.includes(described)) out.description = current === "" ? described : `${current} ${described}`;
    change("tuple → `items` union (positions in the description)");
    return out;
  },
});

/**
 * Gemini's `parameters` Schema (OpenAPI 3.0 subset): any other key is "Unknown name … Cannot find
 * field". Runs last, after the rewrites that keep meaning (const → enum, refs inlined…).
 */
export const GEMINI_ALLOWED = [
  "type",
  "format",
  "title",
  "description",
  "nullable",
  "enum",
  "maxItems",
  "minItems",
  "properties",
  "required",
  "minProperties",
  "maxProperties",
  "minLength",
  "maxLength",
  "pattern",
  "example",
  "anyOf",
  "propertyOrdering",
  "default",
  "items",
  "minimum",
  "maximum",
] as const;

const GEMINI_DESCRIBE = ["multipleOf", "uniqueItems", "contains", "minContains", "maxContains", "propertyNames", "patternProperties", "not"];

export const geminiAllowList: Rule = nodeRule({
  id: "gemini-allow-list",
  severity: "error",
  rows: [
    ...movedToDescription("multipleOf", "uniqueItems", "contains", "keyConstraints"),
    { row: "unevaluated", cell: "dropped" },
    { row: "openObject", cell: "`additionalProperties` dropped" },
    { row: "otherKeywords", cell: "dropped (`examples` → `example`)" },
  ],
  match(node) {
    const extra = Object.keys(node).filter((k) => !(GEMINI_ALLOWED as readonly string[]).includes(k));
    return extra.length > 0 ? `keys outside Gemini's Schema: ${extra.join(", ")}` : null;
  },
  fix(node, _p, _v, _r, change) {
    const extra = Object.keys(node).filter((k) => !(GEMINI_ALLOWED as readonly string[]).includes(k));
    let out: SchemaNode = { ...node };
    if (Array.isArray(node.examples) && node.examples.length > 0 && !("example" in node)) out.example = node.examples[0];
    out = moveToDescription(out, GEMINI_DESCRIBE.filter((k) => extra.includes(k))).node;
    for (const key of extra) delete out[key];
    change(`removed ${extra.join(", ")}`);
    return out;
  },
});

/** Gemini formats: the Developer API accepts `enum` and `date-time` for strings, int32/int64, float/double. */
export const GEMINI_FORMATS = ["date-time", "enum", "int32", "int64", "float", "double"];

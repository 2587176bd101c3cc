import { preview, transformNodes, visitNodes, type ChildRef, type SchemaNode } from "../json-schema.js";
import type { ValueMapStage } from "../value-map.js";

/**
 * A rule finds one kind of schema shape a target rejects or mishandles (`detect`, used by
 * checkSchema) and, when it can, rewrites it (`apply`, used by sanitizeSchema). Targets are
 * ordered lists of rules; the implementations here are shared, parameterised per target.
 */

export type Severity = "error" | "warning";

export interface Finding {
  path: string;
  message: string;
  /** False when the rule's rewrite cannot fix this particular finding. */
  fixable?: boolean;
}

export interface RuleContext {
  change(path: string, message: string): void;
  addStage(stage: ValueMapStage | null): void;
}

/** Rows of the README compatibility table, in display order. */
export const ROWS = {
  nullKeywords: "null-valued keyword (`required: null`, `items: null`…)",
  bareString: 'bare string schema (`"string"`)',
  rootType: "root without `type: object`",
  topCombinators: "top-level `anyOf`/`oneOf`/`allOf`/`enum`/`not`",
  conditionals: "`if`/`then`/`else`, `dependentRequired`, `not`, type-less `anyOf` branches",
  oneOf: "`oneOf`",
  allOf: "`allOf`",
  noProperties: "object without `properties`",
  undeclaredRequired: "`required` naming an undeclared property",
  untyped: "schema without `type` (or `true`)",
  typeArray: '`type: [T, "null"]` / `type: [A, B]`',
  nullableUnion: 'nullable union `anyOf: [T, {type: "null"}]`',
  typeWithAnyOf: "`type` beside `anyOf`/`oneOf`",
  ref: "`$ref` / `$defs`",
  recursiveRef: "recursive `$ref`",
  refSiblings: "`$ref` with sibling keywords (`default`, `description`)",
  definitions: "`definitions` (draft-07) / refs outside `#/$defs`",
  freeForm: "free-form object or map (no declared properties)",
  openObject: "object allowing undeclared keys",
  optional: "optional property",
  keys: "property key characters",
  const: "`const`",
  slashEnum: "enum value containing `/`",
  nonStringEnum: "non-string `enum` values",
  complexEnum: "object/array `enum` values",
  pattern: "`pattern`",
  patternAnchors: "`pattern` not anchored `^…$`",
  patternShorthand: "`\\d` `\\w` `\\s` in `pattern`",
  patternFeatures: "lookaround / backreference / `\\b` in `pattern`",
  format: "`format`",
  stringLength: "`minLength` / `maxLength`",
  numberRange: "`minimum` / `maximum`",
  exclusiveRange: "`exclusiveMinimum` / `exclusiveMaximum`",
  multipleOf: "`multipleOf`",
  itemCount: "`minItems` / `maxItems`",
  hugeBounds: "length or count bound above 1000",
  uniqueItems: "`uniqueItems`",
  tuples: "`prefixItems` / tuple `items`",
  arrayNoItems: "array without `items`",
  contains: "`contains` / `minContains` / `maxContains`",
  propertyCount: "`minProperties` / `maxProperties`",
  keyConstraints: "`patternProperties` / `propertyNames`",
  unevaluated: "`unevaluatedProperties` / `unevaluatedItems`",
  otherKeywords: "keywords outside the target's allow-list (`$schema`, `examples`, `x-*`…)",
  limits: "documented size limits",
} as const;

export type RowId = keyof typeof ROWS;

export interface RowCell {
  row: RowId;
  cell: string;
}

/** The table cells of rows whose keywords the rule moves into the description. */
export function movedToDescription(...rows: RowId[]): RowCell[] {
  return rows.map((row) => ({ row, cell: "→ description" }));
}

/**
 * One schema-compatibility rule of a target: what it detects, how it rewrites the schema, and its
 * row in the compatibility table.
 */
export interface Rule {
  id: string;
  severity: Severity;
  /** What the rule does, per compatibility-table row. */
  rows: RowCell[];
  detect(root: SchemaNode): Finding[];
  /** Absent for check-only rules (limits nothing can fix). */
  apply?(root: SchemaNode, ctx: RuleContext): SchemaNode;
}

export interface NodeRuleSpec {
  id: string;
  severity: Severity;
  rows: RowCell[];
  /** A problem message when the node needs this rule, else null. */
  match(node: SchemaNode, path: string, via: ChildRef | null, root: SchemaNode): string | null;
  /** The replacement node; `change` describes what was done. */
  fix(node: SchemaNode, path: string, via: ChildRef | null, root: SchemaNode, change: (message: string) => void): unknown;
}

/** A rule that looks at each node on its own; fixes are applied bottom-up. */
export function nodeRule(spec: NodeRuleSpec): Rule {
  return {
    id: spec.id,
    severity: spec.severity,
    rows: spec.rows,
    detect(root) {
      const findings: Finding[] = [];
      visitNodes(root, (node, path, via) => {
        const message = spec.match(node, path, via, root);
        if (message !== null) findings.push({ path, message });
      });
      return findings;
    },
    apply(root, ctx) {
      return transformNodes(root, (node, path, via) => {
        if (spec.match(node, path, via, root) === null) return node;
        return spec.fix(node, path, via, root, (message) => ctx.change(path, message));
      }) as SchemaNode;
    },
  };
}

/** Constraint keywords in words, for text moved into a description. */
export function describeConstraint(keyword: string, value: unknown): string {
  const n = typeof value === "number" ? value : NaN;
  const plural = (count: number, word: string) => `${count} ${word}${count === 1 ? "" : "s"}`;
  switch (keyword) {
    case "pattern":
      return `must match the regular expression ${String(value)}`;
    case "format":
      return `format: ${String(value)}`;
    case "minLength":
      return `at least ${plural(n, "character")}`;
    case "maxLength":
      return `at most ${plural(n, "character")}`;
    case "minimum":
      return `>= ${n}`;
    case "maximum":
      return `<= ${n}`;
    case "exclusiveMinimum":
      return `> ${n}`;
    case "exclusiveMaximum":
      return `< ${n}`;
    case "multipleOf":
      return `a multiple of ${n}`;
    case "minItems":
      return `at least ${plural(n, "item")}`;
    case "maxItems":
      return `at most ${plural(n, "item")}`;
    case "uniqueItems":
      return value === true ? "items must be unique" : "";
    case "minProperties":
      return `at least ${plural(n, "field")}`;
    case "maxProperties":
      return `at most ${plural(n, "field")}`;
    case "minContains":
      return `at least ${plural(n, "matching item")}`;
    case "maxContains":
      return `at most ${plural(n, "matching item")}`;
    case "contains":
      return `must contain an item matching ${preview(value, 80)}`;
    case "enum":
      return Array.isArray(value) ? `one of: ${value.map((v) => (typeof v === "string" ? v : preview(v, 40))).join(", ")}` : "";
    case "const":
      return `must be ${preview(value, 60)}`;
    case "propertyNames":
      return `field names must match ${preview(value, 80)}`;
    case "patternProperties":
      return `extra fields whose names match ${Object.keys(value as object).join(", ")} are allowed`;
    case "not":
      return `must not match ${preview(value, 80)}`;
    case "default":
      return `default: ${preview(value, 60)}`;
    default:
      return `${keyword}: ${preview(value, 60)}`;
  }
}

/** Removes `keywords` from the node and appends them, in words, to its description. */
export function moveToDescription(node: SchemaNode, keywords: readonly string[]): { node: SchemaNode; moved: string[] } {
  const out: SchemaNode = { ...node };
  const parts: string[] = [];
  const moved: string[] = [];
  for (const keyword of keywords) {
    if (!(keyword in out)) continue;
    const text = describeConstraint(keyword, out[keyword]);
    if (text !== "") parts.push(text);
    delete out[keyword];
    moved.push(keyword);
  }
  if (parts.length === 0) return { node: out, moved };
  const sentence = `(${parts.join("; ")})`;
  const current = typeof out.description === "string" ? out.description.trim() : "";
  if (!current.includes(sentence)) out.description = current === "" ? sentence : `${current} ${sentence}`;
  return { node: out, moved };
}

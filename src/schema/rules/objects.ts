import {
  declaredTypes,
  isPlainObject,
  isSchemaNode,
  rebuildChildren,
  requiredOf,
  setOwn,
  transformNodes,
  visitNodes,
  type SchemaNode,
} from "../json-schema.js";
import { transformWithMap, type BranchMap, type ValueMapNode } from "../value-map.js";
import { nodeRule, type Finding, type RowCell, type Rule } from "./rule.js";

/** Object shapes: values sent as JSON strings, strict modes' closed objects and all-required fields. */

function isObjectNode(node: SchemaNode): boolean {
  return declaredTypes(node)?.includes("object") ?? false;
}

function declaredKeys(node: SchemaNode): string[] {
  return isPlainObject(node.properties) ? Object.keys(node.properties) : [];
}

/** An object that takes arbitrary keys and declares none: a strict grammar cannot describe it. */
function isFreeForm(node: SchemaNode): boolean {
  return isObjectNode(node) && declaredKeys(node).length === 0 && node.additionalProperties !== false;
}

/** Declared properties plus explicitly allowed extra keys (`additionalProperties: true` or a schema). */
function isExplicitlyOpen(node: SchemaNode): boolean {
  return isObjectNode(node) && declaredKeys(node).length > 0 && (node.additionalProperties === true || isSchemaNode(node.additionalProperties) || isPlainObject(node.patternProperties));
}

function isUntyped(node: SchemaNode): boolean {
  return !("type" in node) && !("$ref" in node) && !("enum" in node) && !("const" in node) && !Array.isArray(node.anyOf) && !Array.isArray(node.oneOf) && !Array.isArray(node.allOf);
}

function isArrayWithoutItems(node: SchemaNode): boolean {
  return (declaredTypes(node)?.includes("array") ?? false) && !("items" in node) && !("prefixItems" in node);
}

export interface JsonEncodeOptions {
  freeForm?: boolean;
  /** Also objects with declared properties that explicitly allow more keys (strict targets would drop them). */
  explicitlyOpen?: boolean;
  untyped?: boolean;
  arraysWithoutItems?: boolean;
}

function jsonNode(node: SchemaNode, what: string): SchemaNode {
  const out: SchemaNode = { type: "string" };
  if (typeof node.title === "string") out.title = node.title;
  const description = typeof node.description === "string" ? node.description.trim() : "";
  const note = `(${what}, JSON-encoded as a string)`;
  out.description = description === "" ? note : `${description} ${note}`;
  return out;
}

/**
 * Shapes a target cannot describe (free-form objects and maps, schemas without a type, arrays
 * without `items`) are sent as a string holding the value's JSON. The value map encodes the
 * original value and decodes what the model sends, so no value is lost or forbidden.
 */
export function jsonEncode(options: JsonEncodeOptions): Rule {
  const rows: RowCell[] = [];
  if (options.freeForm) rows.push({ row: "freeForm", cell: "JSON string (decoded on the way back)" });
  if (options.explicitlyOpen) rows.push({ row: "openObject", cell: "explicit extra keys: JSON string" });
  if (options.untyped) rows.push({ row: "untyped", cell: "JSON string when no type can be inferred" });
  if (options.arraysWithoutItems) rows.push({ row: "arrayNoItems", cell: "items as JSON strings" });
  const reason = (node: SchemaNode, path: string): string | null => {
    if (path === "#") return null;
    if (options.freeForm && isFreeForm(node)) return "free-form object (no declared properties)";
    if (options.explicitlyOpen && isExplicitlyOpen(node)) return "object explicitly allowing undeclared keys";
    if (options.untyped && isUntyped(node)) return "schema without a type";
    if (options.arraysWithoutItems && isArrayWithoutItems(node)) return "array without `items`";
    return null;
  };
  const trueChildren = (node: SchemaNode): boolean =>
    (isPlainObject(node.properties) && Object.values(node.properties).some((v) => v === true)) ||
    node.items === true ||
    (Array.isArray(node.anyOf) && node.anyOf.some((v) => v === true));
  return {
    id: "json-encode",
    severity: "error",
    rows,
    detect(root) {
      const findings: Finding[] = [];
      visitNodes(root, (node, path) => {
        const why = reason(node, path);
        if (why) findings.push({ path, message: why });
        if (options.untyped && trueChildren(node)) findings.push({ path, message: "`true` subschema (any value)" });
      });
      return findings;
    },
    apply(root, ctx) {
      // `true` subschemas mean "any value": make them `{}` so they are handled like untyped nodes.
      const normalized = options.untyped
        ? (transformNodes(root, (node, path) =>
            trueChildren(node)
              ? rebuildChildren(node, path, (child) =>
                  child.schema === true && (child.keyword === "properties" || child.keyword === "items" || child.keyword === "anyOf") ? {} : child.schema,
                )
              : node,
          ) as SchemaNode)
        : root;
      const { schema, stage } = transformWithMap(normalized, "json-encode", (_original, node, map, path) => {
        if (path === "#") return { node, map };
        if ((options.freeForm && isFreeForm(node)) || (options.explicitlyOpen && isExplicitlyOpen(node)) || (options.untyped && isUntyped(node))) {
          ctx.change(path, `${reason(node, path)}: sent as a JSON string`);
          return { node: jsonNode(node, isObjectNode(node) ? "an object" : "any JSON value"), map: { json: true } };
        }
        if (map.branches && ambiguousStrings(map.branches)) {
          ctx.change(path, "union mixing JSON-encoded and plain string branches: sent as a JSON string");
          return { node: jsonNode(node, "any of the listed forms"), map: { json: true } };
        }
        if (options.arraysWithoutItems && isArrayWithoutItems(node)) {
          ctx.change(path, "array without `items`: items sent as JSON strings");
          return { node: { ...node, items: jsonNode({}, "any value") }, map: { ...map, items: { json: true } } };
        }
        return { node, map };
      });
      ctx.addStage(stage);
      return schema as SchemaNode;
    },
  };
}

/**
 * A union where a JSON-encoded branch sits beside another branch that takes strings: a string
 * from the model could belong to either, so the whole union is encoded instead.
 */
function ambiguousStrings(branches: BranchMap[]): boolean {
  const stringy = branches.filter((b) => b.out.types === null || b.out.types.includes("string"));
  return stringy.length > 1 && branches.some((b) => b.map.json);
}

/** True when the schema already admits null (a `$ref` is assumed not to). */
function acceptsNull(schema: unknown): boolean {
  if (schema === true) return true;
  if (!isSchemaNode(schema)) return false;
  const types = declaredTypes(schema);
  if (types && !types.includes("null")) return false;
  if (Array.isArray(schema.enum) && !schema.enum.includes(null)) return false;
  if ("const" in schema && schema.const !== null) return false;
  if (types || Array.isArray(schema.enum) || "const" in schema) return true;
  for (const keyword of ["anyOf", "oneOf"] as const) {
    const branches = schema[keyword];
    if (Array.isArray(branches)) return branches.some(acceptsNull);
  }
  return !("$ref" in schema) && !Array.isArray(schema.allOf);
}

/** The schema plus null: `type` gains "null" where that is exact, otherwise an `anyOf` with null. */
function withNull(schema: unknown): unknown {
  if (!isSchemaNode(schema)) return { anyOf: [schema, { type: "null" }] };
  const simple = !("$ref" in schema) && !("const" in schema) && !Array.isArray(schema.anyOf) && !Array.isArray(schema.oneOf) && !Array.isArray(schema.allOf);
  const types = declaredTypes(schema);
  if (simple && types) {
    const out: SchemaNode = { ...schema, type: [...types, "null"] };
    if (Array.isArray(schema.enum)) out.enum = [...schema.enum, null];
    return out;
  }
  const inner: SchemaNode = { ...schema };
  const outer: SchemaNode = {};
  for (const key of ["title", "description"]) {
    if (typeof inner[key] === "string") {
      outer[key] = inner[key];
      delete inner[key];
    }
  }
  return { ...outer, anyOf: [inner, { type: "null" }] };
}

function strictProblems(node: SchemaNode, allRequired: boolean): string[] {
  if (!isObjectNode(node)) return [];
  const problems: string[] = [];
  if (node.additionalProperties !== false) problems.push("`additionalProperties` is not false");
  if (allRequired) {
    const required = requiredOf(node);
    const optional = declaredKeys(node).filter((k) => !required.includes(k));
    if (optional.length > 0) problems.push(`properties missing from \`required\`: ${optional.join(", ")}`);
  }
  return problems;
}

/**
 * OpenAI strict mode ("'additionalProperties' is required to be supplied and to be false";
 * "'required' is required to be supplied and to be an array including every key in properties"),
 * and Anthropic strict (closed objects, optional fields allowed). Optional fields become
 * required-and-nullable; the value map sends null for an absent field and removes the null again
 * on the way back (strict mode cannot tell absent from null, so a nullable optional field set to
 * null comes back absent). Objects that explicitly allow more keys were already sent as JSON
 * strings by jsonEncode; the ones left open only by omission are closed here, and undeclared keys
 * are dropped when arguments are carried to the target.
 */
export function strictObjects(allRequired: boolean): Rule {
  const rows: RowCell[] = [{ row: "openObject", cell: "implicitly open: closed (undeclared keys dropped)" }];
  if (allRequired) rows.push({ row: "optional", cell: "required + nullable (null ↔ absent)" });
  return {
    id: allRequired ? "strict-objects" : "closed-objects",
    severity: "error",
    rows,
    detect(root) {
      const findings: Finding[] = [];
      visitNodes(root, (node, path) => {
        const problems = strictProblems(node, allRequired);
        if (problems.length > 0) findings.push({ path, message: problems.join("; ") });
      });
      return findings;
    },
    apply(root, ctx) {
      const { schema, stage } = transformWithMap(root, allRequired ? "strict-objects" : "closed-objects", (_original, node, map, path) => {
        // Closed even when it already was: a union branch picked for a value may have to drop keys.
        if (strictProblems(node, allRequired).length === 0) return { node, map: isObjectNode(node) ? { ...map, closed: declaredKeys(node) } : map };
        const keys = declaredKeys(node);
        const out: SchemaNode = { ...node, additionalProperties: false };
        const next: ValueMapNode = { ...map, closed: keys };
        if (node.additionalProperties !== false) ctx.change(path, "closed the object (`additionalProperties: false`)");
        if (allRequired) {
          const required = requiredOf(node);
          const optional = keys.filter((k) => !required.includes(k));
          if (optional.length > 0) {
            const props = { ...(node.properties as Record<string, unknown>) };
            const dropNull: string[] = [];
            // Strict mode cannot tell an absent field from null: null on an optional field means absent.
            for (const key of optional) {
              if (!acceptsNull(props[key])) setOwn(props, key, withNull(props[key]));
              dropNull.push(key);
            }
            out.properties = props;
            out.required = keys;
            next.fillNull = optional;
            if (dropNull.length > 0) next.dropNull = dropNull;
            ctx.change(path, `optional ${optional.join(", ")} made required and nullable (null means absent)`);
          }
        }
        return { node: out, map: next };
      });
      ctx.addStage(stage);
      return schema as SchemaNode;
    },
  };
}

/** xAI compiles tools strictly with `additionalProperties` defaulting to false: say `true` where the schema means it. */
export const explicitOpenObjects: Rule = nodeRule({
  id: "explicit-open-objects",
  severity: "error",
  rows: [{ row: "openObject", cell: "`additionalProperties: true` made explicit" }],
  match(node) {
    return isObjectNode(node) && !("additionalProperties" in node) && !("unevaluatedProperties" in node)
      ? "object without `additionalProperties` (xAI defaults it to false)"
      : null;
  },
  fix(node, _p, _v, _r, change) {
    change("made `additionalProperties: true` explicit");
    return { ...node, additionalProperties: true };
  },
});

import {
  childSchemas,
  declaredTypes,
  isExtensionKeyword,
  isPlainObject,
  JSON_TYPES,
  rebuildChildren,
  setOwn,
  type SchemaNode,
} from "../json-schema.js";
import { nodeRule, type Rule } from "./rule.js";

/** Normalisations every target gets: they repair schemas that are not valid JSON Schema at all, or shapes no provider accepts. */

/** `required: null`, `items: null`…: "null is not of type 'array'" on strict validators. */
export const nullKeywords: Rule = nodeRule({
  id: "null-keywords",
  severity: "error",
  rows: [{ row: "nullKeywords", cell: "dropped" }],
  match(node) {
    const keys = nullValued(node);
    return keys.length > 0 ? `${keys.map((k) => `\`${k}\``).join(", ")} ${keys.length > 1 ? "are" : "is"} null` : null;
  },
  fix(node, _path, _via, _root, change) {
    const out = { ...node };
    const keys = nullValued(node);
    for (const key of keys) delete out[key];
    change(`dropped null-valued ${keys.join(", ")}`);
    return out;
  },
});

/** Keywords whose value is data, where null is a legitimate value. */
const NULL_DATA = new Set(["default", "const", "example", "examples"]);

function nullValued(node: SchemaNode): string[] {
  return Object.keys(node).filter((k) => node[k] === null && !NULL_DATA.has(k) && !isExtensionKeyword(k));
}

/** `"properties": {"name": "string"}`: a type name or a description where a schema belongs. */
export const bareStrings: Rule = nodeRule({
  id: "bare-strings",
  severity: "error",
  rows: [{ row: "bareString", cell: "typed schema" }],
  match(node, path) {
    const bad = childSchemas(node, path).filter((c) => typeof c.schema === "string");
    return bad.length > 0 ? `string where a schema belongs at ${bad.map((c) => c.path).join(", ")}` : null;
  },
  fix(node, path, _via, _root, change) {
    return rebuildChildren(node, path, (child) => {
      if (typeof child.schema !== "string") return child.schema;
      change(`${child.path}: string ${JSON.stringify(child.schema)} turned into a schema`);
      return schemaFromString(child.schema);
    });
  },
});

function schemaFromString(text: string): SchemaNode {
  const lower = text.trim().toLowerCase();
  if ((JSON_TYPES as readonly string[]).includes(lower)) {
    if (lower === "object") return { type: "object", properties: {} };
    return { type: lower };
  }
  return text.trim() === "" ? {} : { description: text };
}

/** Tool arguments are always an object: the root must say so. */
export const rootObject: Rule = {
  id: "root-object",
  severity: "error",
  rows: [{ row: "rootType", cell: "`type: object` added" }],
  detect(root) {
    const types = declaredTypes(root);
    if (types === null) return [{ path: "#", message: "the root does not declare `type: \"object\"`" }];
    if (!types.includes("object")) return [{ path: "#", message: `the root is of type ${types.join("/")}; tool arguments are always an object`, fixable: false }];
    if (types.length > 1) return [{ path: "#", message: "the root allows types other than object" }];
    return [];
  },
  apply(root, ctx) {
    const types = declaredTypes(root);
    if (types !== null && !types.includes("object")) return root;
    if (types !== null && types.length === 1 && root.type === "object") return root;
    ctx.change("#", "root declared `type: object`");
    return { ...root, type: "object" };
  },
};

/** `{type: "object"}` without `properties`: llama.cpp's converter and strict modes want the key. */
export const objectProperties: Rule = nodeRule({
  id: "object-properties",
  severity: "warning",
  rows: [{ row: "noProperties", cell: "`properties: {}` added" }],
  match(node) {
    return declaredTypes(node)?.includes("object") && !isPlainObject(node.properties) ? "object schema without `properties`" : null;
  },
  fix(node, _p, _v, _r, change) {
    change("added `properties: {}`");
    return { ...node, properties: {} };
  },
});

/**
 * `required` naming a key that `properties` does not declare ("property is not defined" on
 * Gemini). The key is declared with an unconstrained schema so the contract stays visible; when
 * `additionalProperties: false` makes the key impossible anyway it is dropped from `required`.
 */
export const declareRequired: Rule = nodeRule({
  id: "declare-required",
  severity: "error",
  rows: [{ row: "undeclaredRequired", cell: "declared" }],
  match(node) {
    const missing = undeclaredRequired(node);
    return missing.length > 0 ? `required ${missing.join(", ")} not declared in \`properties\`` : null;
  },
  fix(node, _p, _v, _r, change) {
    const missing = undeclaredRequired(node);
    const properties = { ...(node.properties as Record<string, unknown>) };
    if (node.additionalProperties === false && !isPlainObject(node.patternProperties)) {
      change(`dropped unsatisfiable required ${missing.join(", ")}`);
      return { ...node, required: (node.required as unknown[]).filter((k) => !missing.includes(k as string)) };
    }
    for (const key of missing) setOwn(properties, key, {});
    change(`declared required ${missing.join(", ")} in \`properties\``);
    return { ...node, properties };
  },
});

function undeclaredRequired(node: SchemaNode): string[] {
  if (!Array.isArray(node.required) || !isPlainObject(node.properties)) return [];
  const props = node.properties;
  return node.required.filter((k): k is string => typeof k === "string" && !Object.prototype.hasOwnProperty.call(props, k));
}

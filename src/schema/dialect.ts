import { declaredTypes, transformNodes, type SchemaNode } from "./json-schema.js";

/**
 * Reads the OpenAPI-flavoured keywords some targets use (Gemini's `nullable: true`, and enum
 * values sent as strings on integer/number/boolean schemas) as standard JSON Schema, so values
 * can be validated against a sanitized schema with a JSON Schema validator.
 */
export function dialectToJsonSchema(schema: SchemaNode): SchemaNode {
  return transformNodes(schema, (node) => {
    let out: SchemaNode = node;
    const types = declaredTypes(node);
    if (Array.isArray(node.enum) && types && types.length === 1 && types[0] !== "string") {
      const type = types[0];
      out = {
        ...out,
        enum: node.enum.map((v) => {
          if (typeof v !== "string") return v;
          if (type === "boolean") return v === "true" ? true : v === "false" ? false : v;
          if (type === "integer" || type === "number") return v.trim() !== "" && Number.isFinite(Number(v)) ? Number(v) : v;
          try {
            return JSON.parse(v) as unknown;
          } catch {
            return v;
          }
        }),
      };
    }
    if (node.nullable === true) {
      out = { ...out };
      delete out.nullable;
      if (types) {
        if (!types.includes("null")) out.type = [...types, "null"];
        if (Array.isArray(out.enum) && !out.enum.includes(null)) out.enum = [...out.enum, null];
      } else if (Array.isArray(out.anyOf)) out.anyOf = [...out.anyOf, { type: "null" }];
    }
    return out;
  }) as SchemaNode;
}

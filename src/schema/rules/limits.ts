import { isPlainObject, visitNodes } from "../json-schema.js";
import type { Finding, Rule } from "./rule.js";

/** Documented size limits: nothing can fix these, so they are check-only warnings. */

/**
 * OpenAI Structured Outputs: at most 5000 object properties, 10 levels of nesting, 1000 enum
 * values and 120,000 characters of property names, enum and const values per schema.
 */
export const openaiStrictLimits: Rule = {
  id: "openai-strict-limits",
  severity: "warning",
  rows: [{ row: "limits", cell: "5000 props, depth 10, 1000 enum values, 120k chars (warning)" }],
  detect(root) {
    let properties = 0;
    let enumValues = 0;
    let chars = 0;
    let depth = 0;
    visitNodes(root, (node, path) => {
      if (isPlainObject(node.properties)) {
        const keys = Object.keys(node.properties);
        properties += keys.length;
        chars += keys.reduce((n, k) => n + k.length, 0);
        const level = path.split("/properties/").length;
        if (level > depth) depth = level;
      }
      if (Array.isArray(node.enum)) {
        enumValues += node.enum.length;
        chars += node.enum.reduce((n: number, v) => n + (typeof v === "string" ? v.length : String(v).length), 0);
      }
      if (typeof node.const === "string") chars += node.const.length;
    });
    const findings: Finding[] = [];
    if (properties > 5000) findings.push({ path: "#", message: `${properties} object properties (limit 5000)` });
    if (depth > 10) findings.push({ path: "#", message: `${depth} levels of object nesting (limit 10)` });
    if (enumValues > 1000) findings.push({ path: "#", message: `${enumValues} enum values (limit 1000)` });
    if (chars > 120000) findings.push({ path: "#", message: `${chars} characters of names and enum values (limit 120000)` });
    return findings;
  },
};

/**
 * Anthropic strict tools: at most 24 optional parameters and 16 parameters using `anyOf` or type
 * lists, counted across all strict tools of a request (a single schema over the limit is
 * certainly over it).
 */
export const anthropicStrictLimits: Rule = {
  id: "anthropic-strict-limits",
  severity: "warning",
  rows: [{ row: "limits", cell: "24 optional, 16 union parameters per request (warning)" }],
  detect(root) {
    let optional = 0;
    let unions = 0;
    visitNodes(root, (node) => {
      if (isPlainObject(node.properties)) {
        const required = Array.isArray(node.required) ? node.required : [];
        optional += Object.keys(node.properties).filter((k) => !required.includes(k)).length;
      }
      if (Array.isArray(node.anyOf) || Array.isArray(node.type)) unions++;
    });
    const findings: Finding[] = [];
    if (optional > 24) findings.push({ path: "#", message: `${optional} optional parameters (limit 24 across all strict tools)` });
    if (unions > 16) findings.push({ path: "#", message: `${unions} parameters with anyOf/type lists (limit 16 across all strict tools)` });
    return findings;
  },
};

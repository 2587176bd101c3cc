import { metaValidate } from "./compile.js";
import { isSchemaNode, type SchemaNode } from "./json-schema.js";
import type { Severity } from "./rules/rule.js";
import { resolveTarget, type SchemaTarget, type TargetDefinition } from "./targets/index.js";

/** What a target would reject or mishandle in a tool's parameter schema. */
export interface SchemaProblem {
  /** The rule that found it (`json-schema` for meta-schema violations). */
  rule: string;
  severity: Severity;
  /** JSON pointer into the schema (`#/properties/path`). */
  path: string;
  message: string;
  /** True when sanitizeSchema rewrites it for this target. */
  fixable: boolean;
}

/** A schema target or one of its aliases (`claude`, `vertex`…), case-insensitive. */
export type TargetName = SchemaTarget | (string & {});

/**
 * What in `schema` the target would reject or silently ignore, without changing it;
 * `sanitizeSchema` fixes what is fixable.
 */
export function checkSchema(schema: unknown, target: TargetName): SchemaProblem[] {
  const def = resolveTarget(target);
  if (!isSchemaNode(schema)) {
    return [{ rule: "root-object", severity: "error", path: "#", message: "the schema is not a JSON object", fixable: true }];
  }
  return [...metaProblems(schema), ...ruleProblems(schema, def)];
}

export function metaProblems(schema: SchemaNode): SchemaProblem[] {
  return metaValidate(schema).map((error) => ({
    rule: "json-schema",
    severity: "error" as const,
    path: "#" + error.instancePath,
    message: `not valid JSON Schema: ${error.instancePath || "root"} ${error.message ?? error.keyword}`,
    fixable: false,
  }));
}

export function ruleProblems(schema: SchemaNode, def: TargetDefinition): SchemaProblem[] {
  const problems: SchemaProblem[] = [];
  for (const rule of def.rules) {
    for (const finding of rule.detect(schema)) {
      problems.push({ rule: rule.id, severity: rule.severity, path: finding.path, message: finding.message, fixable: finding.fixable ?? rule.apply !== undefined });
    }
  }
  return problems;
}

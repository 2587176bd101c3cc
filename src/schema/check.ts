import { metaValidate } from "./compile.js";
import { assertSchemaDepth, isPlainObject, isSchemaNode, pointer, visitNodes, type SchemaNode } from "./json-schema.js";
import { patternProblem } from "./regex.js";
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

export type TargetName = SchemaTarget | (string & {});

/** What `target` would reject or mishandle. Throws TooDeepError for a schema nested deeper than MAX_SCHEMA_DEPTH. */
export function checkSchema(schema: unknown, target: TargetName): SchemaProblem[] {
  const def = resolveTarget(target);
  assertSchemaDepth(schema);
  if (!isSchemaNode(schema)) {
    return [{ rule: "root-object", severity: "error", path: "#", message: "the schema is not a JSON object", fixable: true }];
  }
  return [...metaProblems(schema), ...ruleProblems(schema, def)];
}

/** Meta-schema violations, and patterns toolwire's validator cannot run (rule `pattern-engine`). */
export function metaProblems(schema: SchemaNode): SchemaProblem[] {
  const problems: SchemaProblem[] = metaValidate(schema).map((error) => ({
    rule: "json-schema",
    severity: "error" as const,
    path: "#" + error.instancePath,
    message: `not valid JSON Schema: ${error.instancePath || "root"} ${error.message ?? error.keyword}`,
    fixable: false,
  }));
  return [...problems, ...patternProblems(schema)];
}

/**
 * Every `pattern` and `patternProperties` key (`propertyNames` holds a `pattern` of its own) that
 * the linear-time engine refuses: validateArguments throws SchemaCompileError on such a schema.
 */
export function patternProblems(schema: SchemaNode): SchemaProblem[] {
  const problems: SchemaProblem[] = [];
  const report = (path: string, pattern: string) => {
    const reason = patternProblem(pattern);
    if (reason === null) return;
    problems.push({
      rule: "pattern-engine",
      severity: "error",
      path,
      message: `the pattern ${JSON.stringify(pattern)} cannot be checked: ${reason}. toolwire matches schema patterns in linear time (RE2), without backreferences or lookaround`,
      fixable: false,
    });
  };
  visitNodes(schema, (node, path) => {
    if (typeof node.pattern === "string") report(pointer(path, "pattern"), node.pattern);
    if (isPlainObject(node.patternProperties)) for (const key of Object.keys(node.patternProperties)) report(pointer(path, "patternProperties", key), key);
  });
  return problems;
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

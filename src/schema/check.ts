import { metaValidate } from "./compile.js";
import { assertSchemaDepth, isPlainObject, isSchemaNode, pointer, visitNodes, type SchemaNode } from "./json-schema.js";
import { patternProblem } from "./regex.js";
import type { Severity } from "./rules/rule.js";
import { hoistRootCombinators, hoistRootCombinatorsButUnions, wholeRootBranches } from "./rules/combinators.js";
import { resolveTarget, type SchemaTarget, type TargetDefinition } from "./targets/index.js";
import { refuseToolDefinition } from "./tool-shape.js";

/** Options of sanitizeSchema and checkSchema. */
export interface SanitizeOptions {
  /**
   * Top-level `anyOf`/`oneOf` (a tool whose required fields depend on a mode): "flatten" (the
   * default) merges the branches into one object with REQUIRED hints in the descriptions;
   * "keep" leaves them for targets that accept them (`openai` as is, `llamacpp` with whole
   * branches), for models that honor them literally. Targets that reject them always flatten.
   */
  rootCombinators?: "flatten" | "keep";
}

/** The target's rules as the options change them. */
export function targetWithOptions(def: TargetDefinition, options: SanitizeOptions): TargetDefinition {
  if (options.rootCombinators !== "keep" || def.rootCombinators === undefined) return def;
  const rules = def.rules.flatMap((rule) =>
    rule !== hoistRootCombinators ? [rule] : def.rootCombinators === "whole-branches" ? [hoistRootCombinatorsButUnions, wholeRootBranches] : [hoistRootCombinatorsButUnions],
  );
  return { ...def, rules };
}

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
 * `sanitizeSchema` fixes what is fixable. A whole tool definition is refused
 * (ToolDefinitionGivenError): pass its parameter schema, or the tool list to `sanitizeTools`.
 * Throws TooDeepError for a schema nested deeper than `DEFAULT_LIMITS.maxDepth` (256).
 */
export function checkSchema(schema: unknown, target: TargetName, options: SanitizeOptions = {}): SchemaProblem[] {
  refuseToolDefinition(schema, "checkSchema");
  const def = targetWithOptions(resolveTarget(target), options);
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

import { checkSchema, metaProblems, ruleProblems, targetWithOptions, type SanitizeOptions, type SchemaProblem, type TargetName } from "./check.js";
import { assertSchemaDepth, isSchemaNode, stableStringify, type SchemaNode } from "./json-schema.js";
import type { RuleContext } from "./rules/rule.js";
import { resolveTarget, type SchemaTarget } from "./targets/index.js";
import { refuseToolDefinition } from "./tool-shape.js";
import { carryArguments, restoreArguments, type ArgumentMap } from "./value-map.js";

/**
 * Rewrites a tool's parameter schema into one the target accepts. Given a whole tool definition
 * (any shape sanitizeTools reads) it throws ToolDefinitionGivenError rather than rewrite the
 * wrong object; use sanitizeTools for tool lists. Every rewrite keeps the
 * schema's meaning or loosens it (requirements a target cannot express move into descriptions,
 * which the model reads; validation of the model's arguments keeps using the original schema).
 * Shapes that change the values themselves (renamed keys, values sent as JSON strings, strict
 * mode's nulls) are recorded in `argumentMap`: restoreArguments turns what the model sent back
 * into the shape the tool expects. The input is never mutated, and sanitizing a sanitized
 * schema changes nothing.
 *
 * Deliberate exceptions to "never stricter", each a reading of what the schema's author meant:
 * the root is an object (tool arguments always are); a schema with `properties` (or `items`,
 * `minLength`…) but no `type` is read as that type where a target needs a type; a property that
 * only some flattened branches declare keeps their schema; strict targets close objects that were
 * open only because `additionalProperties` was left out (undeclared keys are dropped on the way).
 */

export interface SchemaChange {
  rule: string;
  path: string;
  message: string;
}

/**
 * The result of `sanitizeSchema`: the schema to send, every change made, what is still wrong, and
 * the map `restoreToolArguments` uses on the way back.
 */
export interface SanitizeResult {
  target: SchemaTarget;
  schema: SchemaNode;
  changes: SchemaChange[];
  /** What is still wrong for the target after sanitizing (nothing fixable remains). */
  problems: SchemaProblem[];
  argumentMap: ArgumentMap;
}

const MAX_PASSES = 4;

/**
 * Rewrites a tool schema so that `target` accepts it, moving what it cannot express into
 * descriptions; each change is listed, and `restoreToolArguments` maps the model's arguments back
 * to the original schema. A whole tool definition is refused (ToolDefinitionGivenError): use
 * sanitizeTools for those.
 */
export function sanitizeSchema(schema: unknown, target: TargetName, options: SanitizeOptions = {}): SanitizeResult {
  refuseToolDefinition(schema, "sanitizeSchema");
  const def = targetWithOptions(resolveTarget(target), options);
  // The rules recurse: a schema nested thousands of levels deep is refused (TooDeepError) first.
  assertSchemaDepth(schema);
  const changes: SchemaChange[] = [];
  if (options.rootCombinators === "keep" && def.rootCombinators === undefined && isSchemaNode(schema) && ("anyOf" in schema || "oneOf" in schema)) {
    changes.push({ rule: "top-level-combinators", path: "#", message: `rootCombinators "keep" does not apply: ${def.title} rejects top-level anyOf/oneOf, so they are flattened` });
  }
  const argumentMap: ArgumentMap = [];
  let current: SchemaNode;
  if (isSchemaNode(schema)) current = schema;
  else {
    current = {};
    changes.push({ rule: "root-object", path: "#", message: `replaced a non-object schema (${schema === undefined ? "missing" : JSON.stringify(schema)}) by an empty object schema` });
  }
  // Rules feed each other (a merged allOf can expose a type list); repeat until nothing changes.
  for (let pass = 0; pass < MAX_PASSES; pass++) {
    const before = stableStringify(current);
    for (const rule of def.rules) {
      if (!rule.apply) continue;
      const ctx: RuleContext = {
        change: (path, message) => changes.push({ rule: rule.id, path, message }),
        addStage: (stage) => {
          if (stage) argumentMap.push(stage);
        },
      };
      current = rule.apply(current, ctx);
    }
    if (stableStringify(current) === before) break;
  }
  const problems = [...metaProblems(current), ...ruleProblems(current, def)];
  return { target: def.name, schema: current, changes, problems, argumentMap };
}

/**
 * The model's arguments (shaped by the sanitized schema) back in the original schema's shape.
 * The root is never re-encoded, so an object stays an object.
 */
export function restoreToolArguments(result: Pick<SanitizeResult, "argumentMap">, args: Record<string, unknown>): Record<string, unknown>;
export function restoreToolArguments(result: Pick<SanitizeResult, "argumentMap">, args: unknown): unknown;
export function restoreToolArguments(result: Pick<SanitizeResult, "argumentMap">, args: unknown): unknown {
  return restoreArguments(result.argumentMap, args);
}

/** Original-shaped arguments in the sanitized schema's shape (replaying history to a target). */
export function carryToolArguments(result: Pick<SanitizeResult, "argumentMap">, args: Record<string, unknown>): Record<string, unknown>;
export function carryToolArguments(result: Pick<SanitizeResult, "argumentMap">, args: unknown): unknown;
export function carryToolArguments(result: Pick<SanitizeResult, "argumentMap">, args: unknown): unknown {
  return carryArguments(result.argumentMap, args);
}

/** The sanitized schema read as standard JSON Schema (only Gemini's dialect differs). */
export function targetSchemaAsJsonSchema(schema: SchemaNode, target: TargetName): SchemaNode {
  const def = resolveTarget(target);
  return def.toJsonSchema ? def.toJsonSchema(schema) : schema;
}

export { checkSchema };

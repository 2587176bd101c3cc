/**
 * `toolwire/schema`: tool argument validation with messages written for the model, coercion of
 * common slips, and tool schemas sanitized and checked for a provider's dialect. Loads ajv.
 */
export { validateArguments, type ValidationResult, type ValidationIssue, type ValidateOptions } from "./validate.js";
export { coerceArguments, type Coercion, type CoercionKind } from "./coerce.js";
export { sanitizeSchema, restoreToolArguments, type SanitizeResult } from "./sanitize.js";
export { checkSchema, type SanitizeOptions, type SchemaProblem, type TargetName } from "./check.js";
export { sanitizeTools, InvalidToolsError, type SanitizeToolsResult } from "./tools.js";
export { ToolDefinitionGivenError } from "./tool-shape.js";
export { SchemaCompileError } from "./compile.js";
export { UnsupportedPatternError } from "./regex.js";
export { UnknownTargetError } from "./targets/index.js";
export { SCHEMA_TARGETS, type SchemaTarget } from "./targets/types.js";
export type { Schema } from "./json-schema.js";

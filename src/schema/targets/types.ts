import type { SchemaNode } from "../json-schema.js";
import type { Rule } from "../rules/rule.js";

export const SCHEMA_TARGETS = [
  "openai",
  "openai-strict",
  "anthropic",
  "anthropic-strict",
  "gemini",
  "xai",
  "llamacpp",
  "kimi",
  "fireworks",
  "bedrock",
] as const;

export type SchemaTarget = (typeof SCHEMA_TARGETS)[number];

export interface TargetDefinition {
  name: SchemaTarget;
  /** Column header in the compatibility table. */
  title: string;
  /** Other names accepted for the target (`ollama`, `lmstudio` for llamacpp…). */
  aliases: readonly string[];
  /** Applied in order by sanitizeSchema; all detected by checkSchema. */
  rules: readonly Rule[];
  /** Reads the target's dialect as standard JSON Schema (Gemini's `nullable` and string enums). */
  toJsonSchema?(schema: SchemaNode): SchemaNode;
  /**
   * How the target takes top-level `anyOf`/`oneOf` when SanitizeOptions.rootCombinators is
   * "keep": as they are, or with each branch made a whole object. Absent: the target rejects them
   * (or mishandles them), so they are always flattened.
   */
  rootCombinators?: "keep" | "whole-branches";
  /** Where the rules come from, and how sure they are. */
  sources: readonly string[];
}

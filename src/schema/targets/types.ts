import type { SchemaNode } from "../json-schema.js";
import type { Rule } from "../rules/rule.js";

/** The targets `sanitizeSchema` and `checkSchema` know. */
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

/** One of `SCHEMA_TARGETS`. */
export type SchemaTarget = (typeof SCHEMA_TARGETS)[number];

/** A schema target: its names, its rules in order, and the sources its rules come from. */
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

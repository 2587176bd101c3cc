import { bareStrings, declareRequired, nullKeywords, objectProperties, rootObject } from "../rules/base.js";
import { hoistRootCombinators } from "../rules/combinators.js";
import type { Rule } from "../rules/rule.js";

/**
 * What every target gets, first: repairs of schemas that are not valid JSON Schema, a plain
 * object root (the Codex backend, Anthropic and strict modes reject top-level combinators), and
 * explicit `properties`/declared `required` keys.
 */
export const COMMON_RULES: readonly Rule[] = [nullKeywords, bareStrings, hoistRootCombinators, rootObject, objectProperties, declareRequired];

import { conditionals, mergeAllOf, oneOfToAnyOf } from "../rules/combinators.js";
import { describeKeywords, formats, minItemsZeroOrOne, patternFeatures, tuplesToItems } from "../rules/keywords.js";
import { ANTHROPIC_KEYS, renameKeys } from "../rules/keys.js";
import { anthropicStrictLimits } from "../rules/limits.js";
import { jsonEncode, strictObjects } from "../rules/objects.js";
import { inlineRefs, refDefault } from "../rules/refs.js";
import { complexEnum, inferTypes, typeArrays } from "../rules/types.js";
import { movedToDescription } from "../rules/rule.js";
import { COMMON_RULES } from "./common.js";
import type { TargetDefinition } from "./types.js";

export const ANTHROPIC_STRICT_FORMATS = ["date-time", "time", "date", "duration", "email", "hostname", "uri", "ipv4", "ipv6", "uuid"];

/** Anthropic `strict: true` tools and structured outputs (`output_config.format`). */
export const anthropicStrict: TargetDefinition = {
  name: "anthropic-strict",
  title: "Anthropic strict",
  aliases: ["claude-strict"],
  rules: [
    ...COMMON_RULES,
    conditionals,
    oneOfToAnyOf,
    mergeAllOf,
    inlineRefs("recursive"),
    refDefault,
    tuplesToItems,
    inferTypes,
    typeArrays("anyOf"),
    jsonEncode({ freeForm: true, explicitlyOpen: true, untyped: true, arraysWithoutItems: true }),
    describeKeywords(
      "anthropic-strict-keywords",
      [
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "multipleOf",
        "minLength",
        "maxLength",
        "maxItems",
        "uniqueItems",
        "minProperties",
        "maxProperties",
        "patternProperties",
        "propertyNames",
        "contains",
        "minContains",
        "maxContains",
        "unevaluatedProperties",
        "unevaluatedItems",
      ],
      movedToDescription("numberRange", "exclusiveRange", "multipleOf", "stringLength", "uniqueItems", "propertyCount", "keyConstraints", "contains", "unevaluated"),
    ),
    minItemsZeroOrOne,
    formats("anthropic-strict-formats", ANTHROPIC_STRICT_FORMATS, "kept if date-time, time, date, duration, email, hostname, uri, ipv4, ipv6, uuid; else → description"),
    patternFeatures,
    complexEnum,
    strictObjects(false),
    renameKeys(ANTHROPIC_KEYS),
    anthropicStrictLimits,
  ],
  sources: [
    "Limitations as listed in Anthropic's structured-outputs docs (quoted by third parties) and the TypeScript SDK's transformJSONSchema: no numeric or length bounds, minItems 0/1 only, listed formats, no recursive schemas, additionalProperties false on every object, 24 optional / 16 union parameters per request.",
    "\"'oneOf' is not supported\" (public threads). Pattern features (lookaround, backreferences, \\b) per the same docs.",
  ],
};

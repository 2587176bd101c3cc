import { conditionals, mergeAllOf, oneOfToAnyOf } from "../rules/combinators.js";
import { describeKeywords, formats, tuplesToItems } from "../rules/keywords.js";
import { openaiStrictLimits } from "../rules/limits.js";
import { jsonEncode, strictObjects } from "../rules/objects.js";
import { inferTypes } from "../rules/types.js";
import { movedToDescription } from "../rules/rule.js";
import { COMMON_RULES } from "./common.js";
import type { TargetDefinition } from "./types.js";

export const OPENAI_STRICT_FORMATS = ["date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"];

/** OpenAI `strict: true` function tools and Structured Outputs. */
export const openaiStrict: TargetDefinition = {
  name: "openai-strict",
  title: "OpenAI strict",
  aliases: ["openai-structured"],
  rules: [
    ...COMMON_RULES,
    conditionals,
    oneOfToAnyOf,
    mergeAllOf,
    tuplesToItems,
    inferTypes,
    jsonEncode({ freeForm: true, explicitlyOpen: true, untyped: true, arraysWithoutItems: true }),
    describeKeywords(
      "openai-strict-keywords",
      ["minLength", "maxLength", "uniqueItems", "contains", "minContains", "maxContains", "minProperties", "maxProperties", "patternProperties", "propertyNames", "unevaluatedProperties", "unevaluatedItems"],
      movedToDescription("stringLength", "uniqueItems", "contains", "propertyCount", "keyConstraints", "unevaluated"),
    ),
    formats("openai-strict-formats", OPENAI_STRICT_FORMATS, "kept if date-time, time, date, duration, email, hostname, ipv4, ipv6, uuid; else → description"),
    strictObjects(true),
    openaiStrictLimits,
  ],
  sources: [
    "Verified errors: \"Invalid schema for function '…': In context=('properties', 'permissions'), 'additionalProperties' is required to be supplied and to be false.\"; \"Invalid schema for response_format '…': In context=(), 'oneOf' is not permitted.\" (public issue threads).",
    "Supported-keyword list and limits (5000 properties, 10 levels, 1000 enum values, 120,000 characters) from the Structured Outputs guide as quoted by third parties; minLength/maxLength are treated as unsupported.",
  ],
};

import { dialectToJsonSchema } from "../dialect.js";
import { conditionals, mergeAllOf, oneOfToAnyOf } from "../rules/combinators.js";
import { formats, GEMINI_FORMATS, geminiAllowList, tuplesToItems } from "../rules/keywords.js";
import { GEMINI_KEYS, renameKeys } from "../rules/keys.js";
import { jsonEncode } from "../rules/objects.js";
import { inlineRefs } from "../rules/refs.js";
import { constToEnum, enumStrings, exclusiveBounds, inferTypes, nullableUnions, typeArrays } from "../rules/types.js";
import { COMMON_RULES } from "./common.js";
import type { TargetDefinition } from "./types.js";

/**
 * Gemini `functionDeclarations[].parameters`: the OpenAPI 3.0 Schema subset. (The newer
 * `parametersJsonSchema` field takes near-full JSON Schema; use the `openai` target for it.)
 */
export const gemini: TargetDefinition = {
  name: "gemini",
  title: "Gemini",
  aliases: ["google", "vertex", "vertex-gemini"],
  rules: [
    ...COMMON_RULES,
    conditionals,
    oneOfToAnyOf,
    inlineRefs("all"),
    mergeAllOf,
    constToEnum,
    exclusiveBounds,
    tuplesToItems,
    inferTypes,
    typeArrays("nullable"),
    nullableUnions,
    jsonEncode({ freeForm: true, untyped: true, arraysWithoutItems: true }),
    formats("gemini-formats", GEMINI_FORMATS, "kept if date-time/enum/int32/int64/float/double; else → description"),
    enumStrings,
    geminiAllowList,
    renameKeys(GEMINI_KEYS),
  ],
  toJsonSchema: dialectToJsonSchema,
  sources: [
    "Schema fields from the google.ai.generativelanguage.v1beta Schema proto (type, format, title, description, nullable, enum as strings, items, min/maxItems, properties, required, min/maxProperties, min/maxLength, pattern, example, anyOf, propertyOrdering, default, minimum, maximum).",
    "Verified errors: \"…parameters.required[0]: property is not defined\", \"…properties[x].items: missing field.\", \"Unknown name \\\"additionalProperties\\\" … Cannot find field.\", \"…properties: should be non-empty for OBJECT type\".",
    "Parameter names: \"must start with a letter or an underscore … a-z, A-Z, 0-9, or underscores with a maximum length of 64\" (Vertex FunctionDeclaration reference).",
  ],
};

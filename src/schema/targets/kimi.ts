import { conditionals, mergeAllOf, typeBesideAnyOf } from "../rules/combinators.js";
import { KIMI_KEYS, renameKeys } from "../rules/keys.js";
import { jsonEncode } from "../rules/objects.js";
import { definitionsToDefs, inlineRefs } from "../rules/refs.js";
import { inferTypes } from "../rules/types.js";
import { COMMON_RULES } from "./common.js";
import type { TargetDefinition } from "./types.js";

/** Kimi / Moonshot: "moonshot flavored json schema" (MFJS). */
export const kimi: TargetDefinition = {
  name: "kimi",
  title: "Kimi",
  aliases: ["moonshot"],
  rules: [
    ...COMMON_RULES,
    conditionals,
    // Kimi merges allOf members itself and fails on conflicts ("Conflict in schema definitions for key 'if'").
    mergeAllOf,
    definitionsToDefs,
    typeBesideAnyOf,
    inlineRefs("siblings"),
    inferTypes,
    jsonEncode({ untyped: true }),
    renameKeys(KIMI_KEYS),
  ],
  sources: [
    "Verified errors: \"tools.function.parameters is not a valid moonshot flavored json schema, details: <At path 'properties.task': type is not defined>\" and \"<At path 'root': when using anyOf, type should be defined in anyOf items instead of the parent schema>\" (MoonshotAI/kimi-cli#1595 and others); allOf members merged by the validator (\"Conflict in schema definitions for key 'if'\", earendil-works/pi#5822).",
    "From Hermes agent reports: \"references must start with #/$defs\", \"conflicting keywords found after $ref expansion: description\", \"$ref must be a string\".",
  ],
};

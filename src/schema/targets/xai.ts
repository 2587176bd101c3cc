import { conditionals, mergeAllOf, oneOfToAnyOf } from "../rules/combinators.js";
import { describeKeywords, formats } from "../rules/keywords.js";
import { explicitOpenObjects } from "../rules/objects.js";
import { inlineRefs } from "../rules/refs.js";
import { slashEnum } from "../rules/types.js";
import { COMMON_RULES } from "./common.js";
import type { TargetDefinition } from "./types.js";

export const XAI_FORMATS = ["date", "time", "date-time", "email", "uuid", "ipv4"];

/** xAI (Grok): tool schemas are always compiled strictly ("the strict flag is implicitly always true"). */
export const xai: TargetDefinition = {
  name: "xai",
  title: "xAI",
  aliases: ["grok"],
  rules: [
    ...COMMON_RULES,
    conditionals,
    oneOfToAnyOf,
    mergeAllOf,
    inlineRefs("recursive"),
    describeKeywords(
      "xai-keywords",
      ["pattern", "minLength", "maxLength", "minItems", "maxItems", "minContains", "maxContains"],
      [
        { row: "pattern", cell: "→ description" },
        { row: "stringLength", cell: "→ description" },
        { row: "itemCount", cell: "→ description" },
        { row: "contains", cell: "`min/maxContains` → description" },
      ],
    ),
    formats("xai-formats", XAI_FORMATS, "kept if date, time, date-time, email, uuid, ipv4; else → description"),
    slashEnum,
    explicitOpenObjects,
  ],
  sources: [
    "xAI Structured Outputs docs: tool schemas follow the structured-output rules; oneOf behaves as anyOf; allOf with one subschema only; $ref/$defs non-circular only; additionalProperties defaults to false; enforced formats date, time, date-time, email, uuid, ipv4….",
    "Older xAI docs: minLength/maxLength and minItems/maxItems not supported. Hermes agent: pattern/format 400 on Responses (#27197); enum values with `/` fail with \"Invalid arguments passed to the model\" (#28490) — not in xAI's docs.",
  ],
};

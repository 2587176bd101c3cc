import { conditionals, mergeAllOf, oneOfToAnyOf } from "../rules/combinators.js";
import { describeKeywords } from "../rules/keywords.js";
import { explicitOpenObjects } from "../rules/objects.js";
import { inlineRefs } from "../rules/refs.js";
import { slashEnum } from "../rules/types.js";
import { movedToDescription } from "../rules/rule.js";
import { COMMON_RULES } from "./common.js";
import type { TargetDefinition } from "./types.js";

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
      ["pattern", "format", "minLength", "maxLength", "minItems", "maxItems", "minContains", "maxContains"],
      [
        ...movedToDescription("pattern"),
        { row: "format", cell: "every `format` → description (400 on xAI Responses, even `date-time`)" },
        ...movedToDescription("stringLength", "itemCount"),
        { row: "contains", cell: "`min/maxContains` → description" },
      ],
    ),
    slashEnum,
    explicitOpenObjects,
  ],
  sources: [
    "xAI Structured Outputs docs: tool schemas follow the structured-output rules; oneOf behaves as anyOf; allOf with one subschema only; $ref/$defs non-circular only; additionalProperties defaults to false; enforced formats date, time, date-time, email, uuid, ipv4….",
    "Older xAI docs: minLength/maxLength and minItems/maxItems not supported. `pattern` and `format` (any value: MCP tools with `format: date-time` failed) are rejected with 400 \"Invalid arguments passed to the model\" on /v1/responses (NousResearch/hermes-agent#27197, fixed by stripping both in chat and Responses tool shapes in #27575), although xAI's docs list enforced formats; enum values with `/` fail the same way (#28490) — not in xAI's docs.",
  ],
};

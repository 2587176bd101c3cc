import { conditionals } from "../rules/combinators.js";
import { inlineRefs, refDefault } from "../rules/refs.js";
import { COMMON_RULES } from "./common.js";
import type { TargetDefinition } from "./types.js";

/** Fireworks' OpenAI-compatible endpoint (draft-07-strict validator). */
export const fireworks: TargetDefinition = {
  name: "fireworks",
  title: "Fireworks",
  aliases: [],
  rules: [...COMMON_RULES, conditionals, refDefault, inlineRefs("all")],
  sources: [
    "\"JSON Schema not supported: keyword(s) ['default'] not allowed at the same level as $ref\" (NousResearch/hermes-agent#44676); local #/$defs refs rejected in some paths (#56979); type-less fragments such as {\"required\": [\"criteria\"]} not understood.",
  ],
};

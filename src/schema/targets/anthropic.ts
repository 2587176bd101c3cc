import { ANTHROPIC_KEYS, renameKeys } from "../rules/keys.js";
import { COMMON_RULES } from "./common.js";
import type { TargetDefinition } from "./types.js";

/** Anthropic Messages tools (non-strict): keywords are hints, but the root and the keys are checked. */
export const anthropic: TargetDefinition = {
  name: "anthropic",
  title: "Anthropic",
  aliases: ["claude", "vertex-anthropic"],
  rules: [...COMMON_RULES, renameKeys(ANTHROPIC_KEYS)],
  sources: [
    "Verified errors: \"tools.N.custom.input_schema: input_schema does not support oneOf, allOf, or anyOf at the top level\"; \"tools.N.custom.input_schema.properties: Property keys should match pattern '^[a-zA-Z0-9_.-]{1,64}$'\" (anthropics/claude-code issues).",
    "Nullable anyOf unions are left alone: the claim that they are rejected is unverified.",
  ],
};

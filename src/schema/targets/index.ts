import { anthropic } from "./anthropic.js";
import { anthropicStrict } from "./anthropic-strict.js";
import { bedrock } from "./bedrock.js";
import { fireworks } from "./fireworks.js";
import { gemini } from "./gemini.js";
import { kimi } from "./kimi.js";
import { llamacpp } from "./llamacpp.js";
import { openai } from "./openai.js";
import { openaiStrict } from "./openai-strict.js";
import { SCHEMA_TARGETS, type SchemaTarget, type TargetDefinition } from "./types.js";
import { xai } from "./xai.js";
import { ToolwireError } from "../../errors.js";

export { SCHEMA_TARGETS, type SchemaTarget, type TargetDefinition };

/** Every schema target's definition, by name. */
export const TARGETS: Readonly<Record<SchemaTarget, TargetDefinition>> = {
  openai,
  "openai-strict": openaiStrict,
  anthropic,
  "anthropic-strict": anthropicStrict,
  gemini,
  xai,
  llamacpp,
  kimi,
  fireworks,
  bedrock,
};

/** A schema target name that is neither a target nor an alias of one (code `unknown_target`). */
export class UnknownTargetError extends ToolwireError {
  constructor(readonly target: string) {
    super("unknown_target", `unknown schema target '${target}'; valid targets: ${SCHEMA_TARGETS.join(", ")} (also: ${aliasList().join(", ")})`);
  }
}

function aliasList(): string[] {
  return SCHEMA_TARGETS.flatMap((t) => TARGETS[t].aliases);
}

/** The target for a name or alias (case-insensitive), or null. */
export function findTarget(name: string): TargetDefinition | null {
  const key = name.trim().toLowerCase();
  for (const target of SCHEMA_TARGETS) {
    const def = TARGETS[target];
    if (def.name === key || def.aliases.includes(key)) return def;
  }
  return null;
}

/** The target for a name or alias (case-insensitive); throws UnknownTargetError. */
export function resolveTarget(name: string): TargetDefinition {
  const def = findTarget(name);
  if (!def) throw new UnknownTargetError(name);
  return def;
}

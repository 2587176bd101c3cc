import type { ProviderEvent, ProviderName } from "../types.js";
import { isPlainObject } from "../json/shape.js";
import { ToolwireError } from "../errors.js";
import { ANTHROPIC_MESSAGE_EVENTS } from "./fields.js";

/** Recognizes a provider from the shape of its payloads, for recorded files that do not say. */

const ANTHROPIC_TYPES: ReadonlySet<string> = new Set(ANTHROPIC_MESSAGE_EVENTS);

const BEDROCK_KEYS = new Set(["messageStart", "contentBlockStart", "contentBlockDelta", "contentBlockStop", "messageStop", "metadata"]);

function vote(event: ProviderEvent): ProviderName | null {
  const data = event.data;
  const name = event.event;
  if (name && ANTHROPIC_TYPES.has(name)) return "anthropic";
  if (name && name.startsWith("response.")) return "openai-responses";
  if (name && BEDROCK_KEYS.has(name) && name !== "metadata") return "bedrock";
  // Exception frames of the AWS event stream, as the framing (and the importer) records them.
  if (name === "exception" && isPlainObject(data) && typeof data.exceptionType === "string") return "bedrock";
  if (!isPlainObject(data)) return null;
  const type = typeof data.type === "string" ? data.type : null;
  if (type && ANTHROPIC_TYPES.has(type)) return "anthropic";
  if (type && type.startsWith("response.")) return "openai-responses";
  if (data.object === "chat.completion.chunk" || (Array.isArray(data.choices) && !("candidates" in data))) return "openai-chat";
  if (Array.isArray(data.candidates) || isPlainObject(data.usageMetadata)) return "gemini";
  const keys = Object.keys(data);
  if (keys.some((key) => BEDROCK_KEYS.has(key) && key !== "metadata") && keys.length <= 2) return "bedrock";
  // The AWS SDK's form of an exception event: one key naming it, e.g. {"throttlingException": {message}}.
  if (keys.length === 1 && /^[a-z][A-Za-z]*Exception$/.test(keys[0] as string) && isPlainObject(data[keys[0] as string])) return "bedrock";
  if ("done" in data && ("message" in data || "done_reason" in data) && "model" in data) return "ollama";
  return null;
}

/**
 * The provider cannot be told from the events: none of them looks like any provider's
 * (code `provider_not_recognized`, no candidates), or they match several (`provider_ambiguous`).
 */
export class ProviderDetectionError extends ToolwireError {
  constructor(
    message: string,
    readonly candidates: ProviderName[],
  ) {
    super(candidates.length === 0 ? "provider_not_recognized" : "provider_ambiguous", message);
  }
}

/** The single provider whose shapes the events show; throws when none or several match. */
export function detectProvider(events: readonly ProviderEvent[]): ProviderName {
  const counts = new Map<ProviderName, number>();
  for (const event of events) {
    const provider = vote(event);
    if (provider) counts.set(provider, (counts.get(provider) ?? 0) + 1);
  }
  const candidates = [...counts.keys()];
  if (candidates.length === 1) return candidates[0] as ProviderName;
  if (candidates.length === 0) {
    throw new ProviderDetectionError("Could not recognize the provider from the payloads; pass --provider.", []);
  }
  const summary = [...counts].map(([provider, count]) => `${provider} (${count} events)`).join(", ");
  throw new ProviderDetectionError(`The payloads match several providers: ${summary}; pass --provider.`, candidates);
}

import type { ProviderEvent, Usage } from "../types.js";
import type { DiagnosticCode } from "../diagnostics/codes.js";
import { isPlaceholderId } from "../assemble/call-ids.js";
import { isPlainObject } from "../json/shape.js";
import { mintCallId } from "../util/hash.js";

/** The message types of Anthropic's Messages stream (also inside Bedrock InvokeModel chunks). */
export const ANTHROPIC_MESSAGE_EVENTS = ["message_start", "content_block_start", "content_block_delta", "content_block_stop", "message_delta", "message_stop"] as const;

/** Typed reads from untrusted payloads: wrong types read as absent, never throw. */
export function stringField(object: unknown, key: string): string | null {
  if (!isPlainObject(object)) return null;
  const value = object[key];
  return typeof value === "string" ? value : null;
}

export function numberField(object: unknown, key: string): number | null {
  if (!isPlainObject(object)) return null;
  const value = object[key];
  return typeof value === "number" && Number.isFinite(value) ? value : null;
}

/** The object's fields but `keys`, as plain data (a `"__proto__"` key from the wire stays a key). */
export function fieldsExcept(object: Record<string, unknown>, keys: readonly string[]): Record<string, unknown> {
  const fields: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(object)) {
    if (keys.includes(key)) continue;
    if (key === "__proto__") Object.defineProperty(fields, key, { value, enumerable: true, writable: true, configurable: true });
    else fields[key] = value;
  }
  return fields;
}

/** What a non-JSON payload most likely is, so the diagnostic says more than "not JSON". */
export function describeNonJson(text: string): string {
  if (text.startsWith("{") || text.startsWith("[")) return "An event payload looks like JSON but does not parse (malformed or cut off); it was ignored.";
  return "An event payload is not JSON; it was ignored.";
}

/**
 * The event's type: the payload's `type` when present, else the SSE event name (compatible
 * servers and recorded files omit one or the other).
 */
export function eventType(event: ProviderEvent): string {
  const fromData = stringField(event.data, "type");
  return fromData ?? event.event ?? "unknown";
}

/**
 * The id of a call that opens as a content block: the id as sent, or, when none came or it is a
 * placeholder, one minted from the name and the block index. A minted id and a missing name are
 * reported, naming the block (`block`) and its id field (`idKey`).
 */
export function blockCallId(
  sent: string | null,
  name: string,
  index: number,
  wire: { block: string; idKey: string; prefix: string },
  warn: (code: DiagnosticCode, message: string, data: undefined, providerIndex: number) => void,
): { id: string; minted: boolean } {
  const minted = !sent || isPlaceholderId(sent);
  const id = minted ? mintCallId(wire.prefix, name, "", index) : sent;
  if (minted) warn("call_id_minted", `The ${wire.block} at index ${index} has no ${wire.idKey}; a deterministic id ${id} was minted.`, undefined, index);
  if (!name) warn("call_name_missing", `The ${wire.block} at index ${index} has no name.`, undefined, index);
  return { id, minted };
}

/** Token counts read off the wire, by Usage field (null: the provider did not say). */
type TokenCounts = { [K in Exclude<keyof Usage, "raw">]?: number | null };
/**
 * A Usage holding the counts the provider sent, with `raw` its usage object as sent. One store per
 * field: a loop over the field names made keyed stores, 2.5x slower (Gemini sends usage on every chunk).
 */
export function usageOf(raw: unknown, counts: TokenCounts): Usage {
  const usage: Usage = { raw };
  if (counts.inputTokens != null) usage.inputTokens = counts.inputTokens;
  if (counts.outputTokens != null) usage.outputTokens = counts.outputTokens;
  if (counts.totalTokens != null) usage.totalTokens = counts.totalTokens;
  if (counts.cacheReadInputTokens != null) usage.cacheReadInputTokens = counts.cacheReadInputTokens;
  if (counts.cacheCreationInputTokens != null) usage.cacheCreationInputTokens = counts.cacheCreationInputTokens;
  if (counts.reasoningTokens != null) usage.reasoningTokens = counts.reasoningTokens;
  return usage;
}

/** The total a provider left out: input plus output, when it sent both. */
export function sumOf(input: number | null, output: number | null): number | null {
  return input !== null && output !== null ? input + output : null;
}

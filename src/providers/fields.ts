import type { ProviderEvent, Usage } from "../types.js";
import { isPlainObject } from "../json/equal.js";

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

/** Token counts read off the wire, by Usage field (null: the provider did not say). */
type TokenCounts = { [K in Exclude<keyof Usage, "raw">]?: number | null };
const USAGE_FIELDS = ["inputTokens", "outputTokens", "totalTokens", "cacheReadInputTokens", "cacheCreationInputTokens", "reasoningTokens"] as const;

/** A Usage holding the counts the provider sent, with `raw` its usage object as sent. */
export function usageOf(raw: unknown, counts: TokenCounts): Usage {
  const usage: Usage = { raw };
  for (const field of USAGE_FIELDS) {
    const count = counts[field];
    if (count !== null && count !== undefined) usage[field] = count;
  }
  return usage;
}

/** The total a provider left out: input plus output, when it sent both. */
export function sumOf(input: number | null, output: number | null): number | null {
  return input !== null && output !== null ? input + output : null;
}

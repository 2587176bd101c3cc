import type { ProviderEvent } from "../types.js";
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

/**
 * The event's type: the payload's `type` when present, else the SSE event name (compatible
 * servers and recorded files omit one or the other).
 */
export function eventType(event: ProviderEvent): string {
  const fromData = stringField(event.data, "type");
  return fromData ?? event.event ?? "unknown";
}

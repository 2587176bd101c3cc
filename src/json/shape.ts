/**
 * The shape checks every reader of untrusted JSON needs: one home, so that what counts as an
 * object is decided once.
 */

/** A JSON object: not null, not an array. */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Sets an own property, also for keys such as `__proto__` that plain assignment would treat specially. */
export function setOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

/** Whether two paths into a JSON value (keys and indexes) are the same. */
export function samePath(a: readonly (string | number)[], b: readonly (string | number)[]): boolean {
  return a.length === b.length && a.every((segment, i) => segment === b[i]);
}

/**
 * A JSON object read from a decoded binary record (an event-stream frame, a cassette): bytes
 * (`Uint8Array`) are a payload, not an object of fields.
 */
export function isFieldRecord(value: unknown): value is Record<string, unknown> {
  return isPlainObject(value) && !(value instanceof Uint8Array);
}

/** True when `text` is one JSON value (`JSON.parse` accepts it). */
export function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

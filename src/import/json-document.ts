import { base64ToBytes } from "../framing/aws-eventstream.js";
import { ImportError } from "./errors.js";
import { looksLikeEventStream } from "./eventstream.js";
import { GZIP_MAGIC, startsWithBytes, utf8OrNull } from "./text.js";
import { isPlainObject } from "../json/shape.js";

/**
 * Helpers shared by the readers of recordings that are one JSON document (HAR, ddapm-test-agent
 * cassettes, Google GenAI SDK replays): field access on unknown JSON, header maps, base64 bodies,
 * and the `Content-Encoding` a recorder left on a body it stored decoded.
 */

function headerValue(value: unknown): string | null {
  if (typeof value === "string") return value;
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  if (Array.isArray(value)) {
    const parts = value.map(headerValue).filter((part): part is string => part !== null);
    return parts.length > 0 ? parts.join(", ") : null;
  }
  return null;
}

function addHeader(headers: Map<string, string>, name: string, value: string): void {
  const key = name.toLowerCase();
  const seen = headers.get(key);
  headers.set(key, seen === undefined ? value : `${seen}, ${value}`);
}

/** Headers stored as an object (`{"Content-Type": "…"}`; a value may be a list): lower-cased names. */
export function headersFromObject(value: unknown): Map<string, string> {
  const headers = new Map<string, string>();
  if (!isPlainObject(value)) return headers;
  for (const [name, raw] of Object.entries(value)) {
    const text = headerValue(raw);
    if (text !== null) addHeader(headers, name, text);
  }
  return headers;
}

/** Headers stored as HAR name/value pairs (`[{"name": "…", "value": "…"}]`); repeated names joined with ", ". */
export function headersFromPairs(value: unknown): Map<string, string> {
  const headers = new Map<string, string>();
  if (!Array.isArray(value)) return headers;
  for (const pair of value) {
    if (!isPlainObject(pair) || typeof pair.name !== "string") continue;
    const text = headerValue(pair.value);
    if (text !== null) addHeader(headers, pair.name, text);
  }
  return headers;
}

/** Bytes of a base64 body, or an ImportError (`malformed`) that says where. */
export function base64Body(text: string, file: string, label: string, what: string): Uint8Array {
  try {
    return base64ToBytes(text);
  } catch {
    throw new ImportError(`${label}${what} is not valid base64`, "malformed", file);
  }
}

/** zlib's two-byte header (RFC 1950): what an HTTP `deflate` body starts with. */
function looksLikeZlib(bytes: Uint8Array): boolean {
  const [cmf, flg] = [bytes[0], bytes[1]];
  return cmf !== undefined && flg !== undefined && (cmf & 0x0f) === 8 && ((cmf << 8) | flg) % 31 === 0;
}

/**
 * HAR writers and the test agent store the body as the client read it, decompressed, yet keep the
 * response's `Content-Encoding` header. A body that does not look compressed (text, an AWS event
 * stream) gets the header dropped, with a note; one that does (gzip's magic, a zlib header under
 * `deflate`, or bytes that are none of those) keeps it, so the importer inflates it or says it
 * cannot.
 */
export function withoutStaleEncoding(body: string | Uint8Array, headers: Map<string, string>, label: string, notes: string[]): Map<string, string> {
  const encoding = (headers.get("content-encoding") ?? "").trim().toLowerCase();
  if (encoding === "" || encoding === "identity") return headers;
  if (typeof body !== "string") {
    if (startsWithBytes(body, GZIP_MAGIC)) return headers;
    if (encoding === "deflate" && looksLikeZlib(body)) return headers;
    if (utf8OrNull(body) === null && !looksLikeEventStream(body)) return headers;
  }
  const copy = new Map(headers);
  copy.delete("content-encoding");
  notes.push(`${label}content-encoding ${encoding} declared, but the recorder stored the body decoded`);
  return copy;
}

/** The path of a URL, absolute or not (recorders redact hosts into placeholders). */
export function pathOf(url: string | null): string {
  if (!url) return "";
  try {
    return new URL(url).pathname;
  } catch {
    return url.split("?")[0] ?? url;
  }
}

/** Up to `max` top-level keys of a JSON object, for error messages. */
export function keysOf(doc: Record<string, unknown>, max = 8): string {
  const keys = Object.keys(doc);
  if (keys.length === 0) return "none (an empty object)";
  const shown = keys.slice(0, max).map((key) => JSON.stringify(key.length > 40 ? `${key.slice(0, 40)}…` : key));
  return keys.length > max ? `${shown.join(", ")} and ${keys.length - max} more` : shown.join(", ");
}

import type { RecordedStream } from "../framing/records.js";
import type { BodyInflater } from "./decompress.js";
import { ImportError } from "./errors.js";
import { exchangeToStream } from "./http.js";
import { base64Body, headersFromObject, withoutStaleEncoding } from "./json-document.js";
import { isPlainObject } from "../json/shape.js";

/**
 * The JSON cassette of Datadog's APM test agent (ddapm-test-agent's VCR proxy, used by dd-trace-js
 * and dd-trace-py): one exchange per file,
 * `{request: {method, url, headers, body}, response: {status: {code, message}, headers, body}}`.
 * The body is the text the client read (decompressed), or `"base64:" + base64` for a binary one
 * (AWS event streams).
 */

const BASE64_PREFIX = "base64:";

export function isTestAgentCassette(doc: unknown): boolean {
  return isPlainObject(doc) && isPlainObject(doc.request) && isPlainObject(doc.response) && "body" in doc.response && ("status" in doc.response || "headers" in doc.response);
}

function statusOf(status: unknown): number | null {
  if (typeof status === "number") return status;
  if (isPlainObject(status) && typeof status.code === "number") return status.code;
  return null;
}

export function testAgentToStreams(doc: unknown, file: string, notes: string[], inflater?: BodyInflater): RecordedStream[] {
  if (!isPlainObject(doc) || !isPlainObject(doc.request) || !isPlainObject(doc.response)) {
    throw new ImportError("a test-agent cassette needs 'request' and 'response' objects", "malformed", file);
  }
  const { request, response } = doc;
  const label = "interaction-0: ";
  const raw = response.body;
  if (raw === "" || raw === null || raw === undefined) {
    notes.push(`${label}skipped: the response has no body`);
    return [];
  }
  if (typeof raw !== "string") {
    throw new ImportError(`${label}response.body is ${Array.isArray(raw) ? "a list" : typeof raw}; the test agent stores a string (text, or "base64:" + base64)`, "malformed", file);
  }
  const body = raw.startsWith(BASE64_PREFIX) ? base64Body(raw.slice(BASE64_PREFIX.length), file, label, 'response.body after "base64:"') : raw;
  const headers = withoutStaleEncoding(body, headersFromObject(response.headers), label, notes);
  const stream = exchangeToStream(
    {
      index: 0,
      method: typeof request.method === "string" ? request.method : null,
      url: typeof request.url === "string" ? request.url : null,
      status: statusOf(response.status),
      headers,
      body,
    },
    file,
    notes,
    inflater,
  );
  return stream ? [stream] : [];
}

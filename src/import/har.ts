import type { RecordedStream } from "../framing/records.js";
import type { BodyInflater } from "./decompress.js";
import { ImportError } from "./errors.js";
import { exchangeToStream } from "./http.js";
import { base64Body, headersFromPairs, withoutStaleEncoding } from "./json-document.js";
import { isPlainObject } from "../json/shape.js";

/**
 * HAR 1.2 (HTTP Archive): `{log: {entries: [{request, response}]}}`, as written by Polly.js,
 * Playwright, browsers' developer tools and proxies. Each entry's `response.content.text` holds the
 * body, decompressed and unchunked by the spec; `content.encoding: "base64"` marks a body stored as
 * base64 (binary bodies, or every body for some writers). Headers are `{name, value}` pairs.
 */

export function isHar(doc: unknown): boolean {
  return isPlainObject(doc) && isPlainObject(doc.log) && Array.isArray(doc.log.entries);
}

export function harToStreams(doc: unknown, file: string, notes: string[], inflater?: BodyInflater): RecordedStream[] {
  if (!isPlainObject(doc) || !isPlainObject(doc.log) || !Array.isArray(doc.log.entries)) {
    throw new ImportError("a HAR file needs a 'log' object with an 'entries' list", "malformed", file);
  }
  const streams: RecordedStream[] = [];
  doc.log.entries.forEach((entry: unknown, index: number) => {
    const label = `interaction-${index}: `;
    if (!isPlainObject(entry) || !isPlainObject(entry.response)) {
      throw new ImportError(`log.entries[${index}] has no 'response' object (expected a HAR 1.2 entry)`, "malformed", file);
    }
    const request = isPlainObject(entry.request) ? entry.request : {};
    const response = entry.response;
    const content = response.content;
    if (!isPlainObject(content)) {
      notes.push(`${label}skipped: the response has no 'content' object`);
      return;
    }
    if (typeof content.text !== "string") {
      // Playwright can keep bodies beside the HAR (content._file); browsers omit ones they did not keep.
      const elsewhere = typeof content._file === "string" ? ` (stored outside the HAR in ${JSON.stringify(content._file)}, not read)` : "";
      notes.push(`${label}skipped: the response has no content.text${elsewhere}`);
      return;
    }
    const encoding = typeof content.encoding === "string" ? content.encoding.trim().toLowerCase() : "";
    let body: string | Uint8Array;
    if (encoding === "") {
      body = content.text;
    } else if (encoding === "base64") {
      body = base64Body(content.text, file, label, "content.text with content.encoding base64");
    } else {
      throw new ImportError(`${label}content.encoding ${JSON.stringify(content.encoding)} is not base64, the only encoding HAR 1.2 names`, "malformed", file);
    }
    let headers = headersFromPairs(response.headers);
    if (!headers.has("content-type") && typeof content.mimeType === "string" && content.mimeType !== "") headers.set("content-type", content.mimeType);
    headers = withoutStaleEncoding(body, headers, label, notes);
    const stream = exchangeToStream(
      {
        index,
        method: typeof request.method === "string" ? request.method : null,
        url: typeof request.url === "string" ? request.url : null,
        status: typeof response.status === "number" ? response.status : null,
        headers,
        body,
      },
      file,
      notes,
      inflater,
    );
    if (stream) streams.push(stream);
  });
  return streams;
}

import type { RecordedStream } from "../framing/records.js";
import type { ProviderEvent } from "../types.js";
import { ImportError } from "./errors.js";
import { providerFromUrl } from "./http.js";
import { headersFromObject, pathOf } from "./json-document.js";
import { isPlainObject } from "../json/shape.js";

/**
 * The replay files of Google's GenAI SDKs (js-genai `recordID`/`bodySegments`/`statusCode`,
 * python-genai `replay_id`/`body_segments`/`status_code`):
 * `{recordID, interactions: [{request, response: {statusCode, headers, bodySegments}}]}`. The SDK
 * parsed the stream before recording it: each `bodySegments` element is one stream chunk as a JSON
 * object, without the SSE framing, so each becomes one record as a `data:` line would.
 */

function bodySegmentsOf(response: Record<string, unknown>): unknown {
  return response.bodySegments ?? response.body_segments;
}

export function isGenaiReplay(doc: unknown): boolean {
  if (!isPlainObject(doc) || !Array.isArray(doc.interactions)) return false;
  if (typeof doc.recordID === "string" || typeof doc.replay_id === "string") return true;
  return doc.interactions.some((interaction) => isPlainObject(interaction) && isPlainObject(interaction.response) && Array.isArray(bodySegmentsOf(interaction.response)));
}

function statusOf(response: Record<string, unknown>): number | null {
  const status = response.statusCode ?? response.status_code;
  return typeof status === "number" ? status : null;
}

export function genaiReplayToStreams(doc: unknown, file: string, notes: string[]): RecordedStream[] {
  if (!isPlainObject(doc) || !Array.isArray(doc.interactions)) {
    throw new ImportError("a GenAI replay file needs an 'interactions' list", "malformed", file);
  }
  const streams: RecordedStream[] = [];
  let chunks = 0;
  doc.interactions.forEach((interaction: unknown, index: number) => {
    const label = `interaction-${index}: `;
    if (!isPlainObject(interaction) || !isPlainObject(interaction.response)) {
      throw new ImportError(`interactions[${index}] has no 'response' object (expected a GenAI SDK replay interaction)`, "malformed", file);
    }
    const request = isPlainObject(interaction.request) ? interaction.request : {};
    const response = interaction.response;
    const url = typeof request.url === "string" ? request.url : null;
    const method = typeof request.method === "string" ? request.method : "request";
    const status = statusOf(response);
    const segments = bodySegmentsOf(response);
    if (!Array.isArray(segments)) {
      const bytes = response.byteSegments ?? response.byte_segments;
      if (Array.isArray(bytes)) {
        notes.push(`${label}skipped: a binary response (byte segments), not a stream`);
        return;
      }
      throw new ImportError(`${label}the response has no bodySegments list`, "malformed", file);
    }
    const type = (headersFromObject(response.headers).get("content-type") ?? "").split(";")[0]?.trim().toLowerCase() ?? "";
    const streamed = /:streamGenerateContent$/i.test(pathOf(url)) || type === "text/event-stream";
    if (!streamed) {
      notes.push(`${label}skipped: ${status !== null ? `HTTP ${status} ` : ""}${type || "untyped"} response to ${method} ${url ?? "(no URL)"} is not a stream`);
      return;
    }
    if (status !== null && (status < 200 || status >= 300)) notes.push(`${label}recorded with HTTP status ${status}`);
    const events: ProviderEvent[] = segments.map((segment: unknown) => ({ data: segment }));
    chunks += events.length;
    // The SDK speaks only the Gemini API (Gemini Developer API or Vertex AI).
    streams.push({ sequence: `interaction-${index}`, provider: providerFromUrl(url) ?? "gemini", events });
  });
  if (streams.length > 0) notes.push(`${chunks} stream chunk(s) stored parsed by the GenAI SDK (no SSE framing recorded): one record each`);
  return streams;
}

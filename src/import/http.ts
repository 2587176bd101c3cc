import { createNdjsonFramer } from "../framing/ndjson.js";
import type { RecordedStream } from "../framing/records.js";
import type { ProviderEvent, ProviderName } from "../types.js";
import { ImportError } from "./errors.js";
import { codingOf, type BodyInflater } from "./decompress.js";
import { eventStreamBodyToEvents, looksLikeEventStream } from "./eventstream.js";
import { jsonArrayBodyToEvents, looksLikeJsonArray } from "./json-array.js";
import { sseBodyToEvents } from "./sse.js";
import { pathOf } from "./json-document.js";
import { GZIP_MAGIC, startsWithBytes, utf8OrNull } from "./text.js";
import { isJson } from "../json/shape.js";

/** One recorded request/response pair, whatever the cassette format. */
export interface HttpExchange {
  index: number;
  method: string | null;
  url: string | null;
  status: number | null;
  /** Lower-cased header names; repeated headers joined with ", ". */
  headers: Map<string, string>;
  body: string | Uint8Array;
}

/**
 * The provider an endpoint speaks, from its path. Only a hint: an explicit provider wins, and
 * OpenAI-compatible hosts are all `openai-chat` by construction.
 */
export function providerFromUrl(url: string | null): ProviderName | null {
  if (!url) return null;
  let path = pathOf(url);
  try {
    // Bedrock model ids arrive percent-encoded (us.amazon.nova-micro-v1%3A0).
    path = decodeURIComponent(path);
  } catch {
    // A stray '%' is not worth failing an import over; match on the raw path.
  }
  if (path.endsWith("/converse-stream") || path.endsWith("/converse")) return "bedrock";
  // invoke-with-response-stream carries whatever the model speaks: decided from the frames.
  if (path.endsWith("/invoke-with-response-stream") || path.endsWith("/invoke")) return null;
  if (/\/v1\/messages$/.test(path) || /:(stream)?rawPredict$/i.test(path)) return "anthropic";
  if (path.endsWith("/chat/completions")) return "openai-chat";
  if (path.endsWith("/responses")) return "openai-responses";
  if (/:(streamGenerateContent|generateContent)$/.test(path)) return "gemini";
  if (path === "/api/chat" || path === "/api/generate") return "ollama";
  return null;
}

function mediaType(headers: Map<string, string>): string {
  return (headers.get("content-type") ?? "").split(";")[0]?.trim().toLowerCase() ?? "";
}

function asBytes(body: string | Uint8Array): Uint8Array {
  return typeof body === "string" ? new TextEncoder().encode(body) : body;
}

function asText(body: string | Uint8Array): string | null {
  return typeof body === "string" ? body : utf8OrNull(body);
}

const NDJSON_TYPES = new Set(["application/x-ndjson", "application/ndjson", "application/jsonl", "application/x-jsonlines", "application/jsonlines"]);

/**
 * Turns one recorded response into a stream named `interaction-<i>`, or returns null (with a
 * note saying why) for a response that is not a stream.
 */
export function exchangeToStream(exchange: HttpExchange, file: string, notes: string[], inflater?: BodyInflater): RecordedStream | null {
  const sequence = `interaction-${exchange.index}`;
  const label = `${sequence}: `;
  const type = mediaType(exchange.headers);
  const encoding = (exchange.headers.get("content-encoding") ?? "").trim().toLowerCase();
  const urlProvider = providerFromUrl(exchange.url);
  const what = `${exchange.method ?? "request"} ${exchange.url ?? "(no URL)"}`;

  const bytesView = typeof exchange.body === "string" ? null : exchange.body;
  if ((bytesView && startsWithBytes(bytesView, GZIP_MAGIC)) || (encoding !== "" && encoding !== "identity" && asText(exchange.body) === null)) {
    const coding = bytesView ? codingOf(bytesView, encoding) : null;
    const inflated = coding && inflater ? inflater.take(bytesView as Uint8Array, coding) : null;
    if (inflated === null) {
      if (coding && inflater) return null; // Collected: the import runs again once it is inflated.
      throw new ImportError(
        coding
          ? `${label}the response body is ${coding}-compressed; importFile is synchronous and cannot inflate it: use importRecording (or \`toolwire import\`), which does.`
          : `${label}the response body is compressed (${encoding}), a coding toolwire cannot read. Record with compression off, or decompress the body first.`,
        "compressed",
        file,
      );
    }
    notes.push(`${label}${coding} body decompressed`);
    return exchangeToStream({ ...exchange, body: inflated, headers: withoutEncoding(exchange.headers) }, file, notes);
  }
  if (encoding !== "" && encoding !== "identity") {
    notes.push(`${label}content-encoding ${encoding} declared, but the recorder stored the body decompressed`);
  }

  let events: ProviderEvent[];
  let provider: ProviderName | null = urlProvider;
  const text = asText(exchange.body);
  const sniffedSse = text !== null && /^(?:\s*\n)*(?:event|data|id|retry)?:/.test(text);

  if (type === "application/vnd.amazon.eventstream" || (type === "" && looksLikeEventStream(asBytes(exchange.body)))) {
    const decoded = eventStreamBodyToEvents(asBytes(exchange.body), file, label, notes);
    events = decoded.events;
    provider = decoded.provider;
  } else if (type === "text/event-stream" || (type === "" && sniffedSse)) {
    if (text === null) throw new ImportError(`${label}the text/event-stream body is not valid UTF-8`, "malformed", file);
    events = sseBodyToEvents(text, label, notes);
  } else if (NDJSON_TYPES.has(type)) {
    if (text === null) throw new ImportError(`${label}the ${type} body is not valid UTF-8`, "malformed", file);
    const framer = createNdjsonFramer();
    events = [...framer.push(text), ...framer.flush()];
  } else if ((type === "application/json" || type === "") && urlProvider === "gemini" && /:streamGenerateContent$/.test(pathOf(exchange.url)) && text !== null && looksLikeJsonArray(text)) {
    // streamGenerateContent without alt=sse: one JSON array, streamed an element at a time.
    events = jsonArrayBodyToEvents(text, file, label, notes);
  } else if ((type === "application/json" || type === "") && urlProvider === "ollama" && text !== null && isJson(text)) {
    // Ollama's stream:false answer is the very object a stream sends as its done:true line, so
    // it decodes as a one-record stream (the only Ollama tool-call capture in the corpus is one).
    events = [{ data: JSON.parse(text) as unknown }];
    notes.push(`${label}non-streamed Ollama response (stream:false) kept as a one-record stream: it is the shape of a final NDJSON line`);
  } else {
    const status = exchange.status !== null ? `HTTP ${exchange.status} ` : "";
    notes.push(`${label}skipped: ${status}${type || "untyped"} response to ${what} is not a stream`);
    return null;
  }

  if (exchange.status !== null && (exchange.status < 200 || exchange.status >= 300)) {
    notes.push(`${label}recorded with HTTP status ${exchange.status}`);
  }
  return { sequence, provider, events };
}

function withoutEncoding(headers: Map<string, string>): Map<string, string> {
  const copy = new Map(headers);
  copy.delete("content-encoding");
  return copy;
}


import { parseDocument, YAMLError } from "yaml";
import type { RecordedStream } from "../framing/records.js";
import { ImportError } from "./errors.js";
import type { BodyInflater } from "./decompress.js";
import { exchangeToStream, type HttpExchange } from "./http.js";
import { isFieldRecord } from "../json/shape.js";

/**
 * YAML HTTP cassettes: go-vcr v2 (`response.body` is the body, `response.code` the status) and
 * VCR.py (`response.body.string`, `response.status.code`). Binary bodies are YAML `!!binary`
 * scalars, which the yaml package turns into bytes.
 */

export type CassetteFormat = "go-vcr-v2" | "vcr.py";


function headerText(value: unknown): string | null {
  if (typeof value === "string") return value;
  if (typeof value === "number") return String(value);
  // VCR.py stores some header values (boto's) as !!binary.
  if (value instanceof Uint8Array) return new TextDecoder().decode(value);
  if (Array.isArray(value)) {
    const parts = value.map(headerText).filter((part): part is string => part !== null);
    return parts.length > 0 ? parts.join(", ") : null;
  }
  return null;
}

function headerMap(value: unknown): Map<string, string> {
  const headers = new Map<string, string>();
  if (!isFieldRecord(value)) return headers;
  for (const [name, raw] of Object.entries(value)) {
    const text = headerText(raw);
    if (text !== null) headers.set(name.toLowerCase(), text);
  }
  return headers;
}

function bodyOf(response: Record<string, unknown>): string | Uint8Array | null {
  const body = response.body;
  if (typeof body === "string") return body;
  if (body instanceof Uint8Array) return new Uint8Array(body);
  if (isFieldRecord(body)) {
    const inner = body.string;
    if (typeof inner === "string") return inner;
    if (inner instanceof Uint8Array) return new Uint8Array(inner);
  }
  return null;
}

function statusOf(response: Record<string, unknown>): number | null {
  if (typeof response.code === "number") return response.code;
  const status = response.status;
  if (isFieldRecord(status) && typeof status.code === "number") return status.code;
  if (typeof status === "number") return status;
  if (typeof status === "string") {
    const match = /^\s*(\d{3})\b/.exec(status);
    if (match) return Number(match[1]);
  }
  return null;
}

export function detectCassette(doc: unknown): CassetteFormat | null {
  if (!isFieldRecord(doc) || !Array.isArray(doc.interactions)) return null;
  const first = doc.interactions.find(isFieldRecord);
  const response = first && isFieldRecord(first.response) ? first.response : null;
  if (response && isFieldRecord(response.body) && "string" in response.body) return "vcr.py";
  if (doc.version === 2 || (response && ("code" in response || "proto" in response))) return "go-vcr-v2";
  return doc.interactions.length === 0 ? (doc.version === 2 ? "go-vcr-v2" : "vcr.py") : null;
}

export function parseYaml(text: string, file: string, notes: string[]): unknown {
  let document;
  try {
    // parseDocument rather than parse: parse logs warnings to the console, a library must not.
    document = parseDocument(text, { logLevel: "silent" });
  } catch (error) {
    if (error instanceof YAMLError) throw new ImportError(`not valid YAML: ${firstLine(error.message)}`, "malformed", file);
    throw error;
  }
  const [error] = document.errors;
  if (error) throw new ImportError(`not valid YAML: ${firstLine(error.message)}`, "malformed", file);
  for (const warning of document.warnings) notes.push(`YAML: ${firstLine(warning.message)}`);
  try {
    return document.toJS({ maxAliasCount: 1000 });
  } catch (error) {
    // Alias bombs and unresolvable aliases surface here, not as parse errors.
    throw new ImportError(`cannot expand YAML: ${firstLine(error instanceof Error ? error.message : String(error))}`, "malformed", file);
  }
}

function firstLine(text: string): string {
  return text.split("\n")[0] ?? text;
}

export function cassetteToStreams(doc: unknown, format: CassetteFormat, file: string, notes: string[], inflater?: BodyInflater): RecordedStream[] {
  if (!isFieldRecord(doc) || !Array.isArray(doc.interactions)) {
    throw new ImportError("a cassette needs a top-level 'interactions' list", "malformed", file);
  }
  const streams: RecordedStream[] = [];
  doc.interactions.forEach((interaction: unknown, index: number) => {
    if (!isFieldRecord(interaction) || !isFieldRecord(interaction.response)) {
      throw new ImportError(`interaction ${index} has no 'response' mapping (expected a ${format} cassette)`, "malformed", file);
    }
    const request = isFieldRecord(interaction.request) ? interaction.request : {};
    const response = interaction.response;
    const body = bodyOf(response);
    if (body === null) {
      notes.push(`interaction-${index}: skipped: the response has no body`);
      return;
    }
    const url = typeof request.url === "string" ? request.url : typeof request.uri === "string" ? request.uri : null;
    const exchange: HttpExchange = {
      index,
      method: typeof request.method === "string" ? request.method : null,
      url,
      status: statusOf(response),
      headers: headerMap(response.headers),
      body,
    };
    const stream = exchangeToStream(exchange, file, notes, inflater);
    if (stream) streams.push(stream);
  });
  return streams;
}

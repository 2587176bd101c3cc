import { base64ToBytes } from "../framing/aws-eventstream.js";
import { isWrappedRecord, parseRecords, RecordFormatError, type RecordedStream } from "../framing/records.js";
import { isProviderName, type ProviderName } from "../types.js";
import { cassetteToStreams, detectCassette, parseYaml } from "./cassette.js";
import { CollectingInflater, inflate, ReadyInflater, type BodyInflater } from "./decompress.js";
import { ImportError, type ImportOptions, type ImportResult } from "./errors.js";
import { base64EventStreamToEvents, eventStreamBodyToEvents, looksLikeEventStream } from "./eventstream.js";
import { genaiReplayToStreams, isGenaiReplay } from "./genai-replay.js";
import { harToStreams, isHar } from "./har.js";
import { httprrToStreams, isHttprr } from "./httprr.js";
import { jsonArrayBodyToEvents, looksLikeJsonArray } from "./json-array.js";
import { keysOf } from "./json-document.js";
import { jsonLinesToEvents } from "./json-lines.js";
import { sseBodyToEvents } from "./sse.js";
import { GZIP_MAGIC, startsWithBytes, utf8OrNull } from "./text.js";
import { splitConcatenatedMessages } from "./split-messages.js";
import { isTestAgentCassette, testAgentToStreams } from "./test-agent.js";
import { UnsupportedProviderError } from "../providers/registry.js";
import { isJson, isPlainObject } from "../json/shape.js";

export { ImportError, type ImportOptions } from "./errors.js";
export { providerFromUrl } from "./http.js";
export { dechunk } from "./httprr.js";

/**
 * Converts a recorded provider stream in any container format found in the upstream corpus
 * into RecordedStreams. Pure: bytes in, data out; no I/O and no Node APIs.
 */

export type ImportFormat =
  | "sse"
  | "json-array"
  | "json-lines"
  | "records"
  | "eventstream"
  | "eventstream-base64"
  | "go-vcr-v2"
  | "vcr.py"
  | "httprr-v1"
  | "har"
  | "ddapm-test-agent"
  | "genai-replay";

export const IMPORT_FORMATS_HELP =
  "raw SSE text, JSON per line (*.chunks.txt), a JSON array body (Gemini without alt=sse), toolwire/kilroy NDJSON records, binary or base64 AWS event stream, go-vcr v2 or VCR.py YAML cassettes (or VCR.py JSON), httprr v1 traces, HAR 1.2 files (Polly.js, Playwright, browsers), ddapm-test-agent JSON cassettes, Google GenAI SDK replay files; gzip-compressed files and bodies (importRecording)";

/** The JSON documents the importer knows, for the error that names a document it does not. */
const JSON_CONTAINERS_HELP =
  "a HAR 1.2 file ({log: {entries}}), a ddapm-test-agent cassette ({request, response: {status, headers, body}}), a Google GenAI SDK replay ({recordID or replay_id, interactions[].response.bodySegments}) or a VCR.py JSON cassette ({interactions[].response.body.string})";

const BASE64_TEXT = /^[A-Za-z0-9+/\s]+={0,2}\s*$/;

function firstContentLine(text: string): string {
  for (const line of text.split(/\r\n|\r|\n/)) {
    const trimmed = line.trim();
    if (trimmed !== "" && !trimmed.startsWith("#")) return trimmed;
  }
  return "";
}

/**
 * What detection can tell before parsing: a YAML cassette is go-vcr or VCR.py only once parsed.
 * `json-cassette` is a VCR.py cassette serialized as JSON; `json-document` is a JSON document of
 * no container the importer knows (or one that is not valid JSON), which importing reports.
 */
export type DetectedFormat = Exclude<ImportFormat, "go-vcr-v2" | "vcr.py"> | "yaml-cassette" | "json-cassette" | "json-document";

/** Detection's verdict, with the JSON document it had to parse to decide (so it is parsed once). */
interface Sniffed {
  format: DetectedFormat;
  doc?: unknown;
  /** For `json-document`: why the text is neither JSON per line nor a known JSON container. */
  problem?: string;
}

/** Decides the container from the name's suffix where it is unambiguous, else from the bytes. */
export function detectFormat(name: string, bytes: Uint8Array): DetectedFormat | null {
  return sniff(name, bytes)?.format ?? null;
}

function sniff(name: string, bytes: Uint8Array): Sniffed | null {
  const format = sniffFormat(name, bytes);
  if (format === null) return null;
  return typeof format === "string" ? { format } : format;
}

function sniffFormat(name: string, bytes: Uint8Array): DetectedFormat | Sniffed | null {
  const lower = name.toLowerCase();
  if (isHttprr(bytes)) return "httprr-v1";
  if (lower.endsWith(".eventstream.base64.txt") || lower.endsWith(".eventstream.b64")) return "eventstream-base64";
  if (looksLikeEventStream(bytes)) return "eventstream";
  const text = utf8OrNull(bytes);
  if (text === null) return null;
  if (lower.endsWith(".yaml") || lower.endsWith(".yml")) return "yaml-cassette";
  if (lower.endsWith(".sse")) return "sse";
  if (lower.endsWith(".chunks.txt")) return "json-lines";
  const first = firstContentLine(text);
  if (/^(event|data|id|retry)?:/.test(first)) return "sse";
  if (first.startsWith("[") && looksLikeJsonArray(text)) return "json-array";
  if (first.startsWith("{")) return jsonObjectKind(text, first);
  if (first.startsWith("[")) return jsonLinesKind(text);
  if (/^(---|%YAML|version:|interactions:)/.test(first)) return "yaml-cassette";
  if (first !== "" && BASE64_TEXT.test(text) && looksLikeEventStream(base64OrEmpty(text))) return "eventstream-base64";
  return null;
}

function base64OrEmpty(text: string): Uint8Array {
  try {
    return base64ToBytes(text);
  } catch {
    return new Uint8Array(0);
  }
}

/**
 * Text that opens with '{': one JSON document (a HAR file, a test-agent cassette, a GenAI replay,
 * a VCR.py JSON cassette) or JSON per line. A document of a known container wins; a document of
 * another shape on one line is JSON per line (a one-event stream); on several lines, or text that
 * is neither, it is reported as a JSON document the importer does not know. Parsing the whole text
 * stops at the end of the first value when it is JSON per line, so the cost stays linear.
 */
function jsonObjectKind(text: string, first: string): DetectedFormat | Sniffed {
  let doc: unknown;
  let wholeError: string | null = null;
  try {
    doc = JSON.parse(text);
  } catch (error) {
    wholeError = error instanceof Error ? error.message : String(error);
  }
  if (wholeError === null) {
    if (isGenaiReplay(doc)) return { format: "genai-replay", doc };
    if (detectCassette(doc) !== null) return { format: "json-cassette", doc };
    if (isHar(doc)) return { format: "har", doc };
    if (isTestAgentCassette(doc)) return { format: "ddapm-test-agent", doc };
    if (!isPlainObject(doc) || !/[\r\n]/.test(text.trim())) return jsonLinesKind(text);
    return { format: "json-document", doc, problem: `a JSON document of an unknown container format: expected ${JSON_CONTAINERS_HELP}; its top-level keys are ${keysOf(doc)}` };
  }
  if (isJson(first)) return jsonLinesKind(text);
  return {
    format: "json-document",
    problem: `neither JSON per line (the first line, ${quoteFirst(first)}, is not a complete JSON value) nor one JSON document (${wholeError})`,
  };
}

function quoteFirst(line: string): string {
  return JSON.stringify(line.length > 40 ? `${line.slice(0, 40)}…` : line);
}

function jsonLinesKind(text: string): "records" | "json-lines" {
  for (const line of text.split("\n")) {
    const trimmed = line.trim();
    if (trimmed === "" || trimmed.startsWith("#")) continue;
    try {
      if (isWrappedRecord(JSON.parse(trimmed))) return "records";
    } catch {
      // Let parseRecords report the line with its number.
    }
  }
  return "json-lines";
}

function textOf(bytes: Uint8Array, name: string, expected: string): string {
  const text = utf8OrNull(bytes);
  if (text === null) throw new ImportError(`expected ${expected} as UTF-8 text, but the bytes are not valid UTF-8`, "malformed", name);
  return text;
}

function recordsOf(text: string, name: string): RecordedStream[] {
  try {
    return parseRecords(text);
  } catch (error) {
    if (error instanceof RecordFormatError) throw new ImportError(error.message, "malformed", name);
    throw error;
  }
}

/**
 * Converts a recording synchronously. Compressed data needs an asynchronous decompressor, so a
 * gzip file or a compressed body in a cassette is an ImportError (`compressed`) here: use
 * {@link importRecording}, which reads them.
 */
export function importFile(name: string, bytes: Uint8Array, options: ImportOptions = {}): ImportResult {
  return importWith(name, bytes, options);
}

/**
 * Converts a recording like {@link importFile}, and also reads gzip-compressed files (`.gz`, or
 * gzip's magic bytes) and gzip- or deflate-compressed response bodies in cassettes and httprr
 * traces (`Content-Encoding`), with the web-standard `DecompressionStream`.
 */
export async function importRecording(name: string, bytes: Uint8Array, options: ImportOptions = {}): Promise<ImportResult> {
  let file = name;
  let content = bytes;
  const notes: string[] = [];
  if (startsWithBytes(bytes, GZIP_MAGIC)) {
    content = await inflate(bytes, "gzip", name);
    file = name.replace(/\.gz$/i, "");
    notes.push(`gzip file decompressed (${bytes.length} → ${content.length} bytes)`);
  }
  const collecting = new CollectingInflater();
  let result: ImportResult | null = null;
  let failure: unknown = null;
  try {
    result = importWith(file, content, options, collecting);
  } catch (error) {
    failure = error;
  }
  if (collecting.pending.length > 0) {
    // Every compressed body is read before the bodies that follow them: run again with them inflated.
    const inflated: Uint8Array[] = [];
    for (const [i, { body, coding }] of collecting.pending.entries()) inflated.push(await inflate(body, coding, file, `compressed body ${i + 1}: `));
    result = importWith(file, content, options, new ReadyInflater(inflated));
  } else if (failure !== null) {
    throw failure;
  }
  const done = result as ImportResult;
  return { ...done, notes: [...notes, ...done.notes] };
}

function importWith(name: string, bytes: Uint8Array, options: ImportOptions, inflater?: BodyInflater): ImportResult {
  if (options.provider !== undefined && !isProviderName(options.provider)) {
    throw new UnsupportedProviderError(String(options.provider));
  }
  if (startsWithBytes(bytes, GZIP_MAGIC)) {
    throw new ImportError("the file is gzip-compressed: importFile is synchronous and cannot inflate it; use importRecording (or `toolwire import`), or gunzip it first.", "compressed", name);
  }
  const sniffed = sniff(name, bytes);
  if (sniffed === null) {
    throw new ImportError(`unrecognized format: expected one of ${IMPORT_FORMATS_HELP}`, "unrecognized_format", name);
  }
  const detected = sniffed.format;

  const notes: string[] = [];
  let format: ImportFormat;
  let streams: RecordedStream[];
  switch (detected) {
    case "sse":
      format = detected;
      streams = [{ sequence: null, provider: null, events: sseBodyToEvents(textOf(bytes, name, "SSE"), "", notes) }];
      break;
    case "json-array":
      format = detected;
      streams = [{ sequence: null, provider: null, events: jsonArrayBodyToEvents(textOf(bytes, name, "a JSON array"), name, "", notes) }];
      break;
    case "json-lines":
      format = detected;
      streams = [
        {
          sequence: null,
          provider: null,
          events: jsonLinesToEvents(textOf(bytes, name, "JSON lines"), name, notes, { lenient: name.toLowerCase().endsWith(".chunks.txt") }),
        },
      ];
      break;
    case "records": {
      format = detected;
      const text = textOf(bytes, name, "NDJSON records");
      streams = recordsOf(text, name);
      // Comments in hand-written record files say what each sequence is meant to show; keep them.
      for (const line of text.split("\n")) {
        const comment = line.trim();
        if (comment.startsWith("#") && comment.replace(/^#+/, "").trim() !== "") notes.push(`source comment: ${comment.replace(/^#+\s*/, "")}`);
      }
      break;
    }
    case "eventstream": {
      format = detected;
      const decoded = eventStreamBodyToEvents(bytes, name, "", notes);
      streams = [{ sequence: null, provider: decoded.provider, events: decoded.events }];
      break;
    }
    case "eventstream-base64": {
      format = detected;
      const decoded = base64EventStreamToEvents(textOf(bytes, name, "base64"), name, notes);
      streams = [{ sequence: null, provider: decoded.provider, events: decoded.events }];
      break;
    }
    case "httprr-v1":
      format = detected;
      streams = httprrToStreams(bytes, name, notes, inflater);
      break;
    case "json-document":
      throw new ImportError(sniffed.problem ?? "a JSON document of an unknown container format", sniffed.doc === undefined ? "malformed" : "unrecognized_format", name);
    case "har":
      format = detected;
      streams = harToStreams(sniffed.doc, name, notes, inflater);
      break;
    case "ddapm-test-agent":
      format = detected;
      streams = testAgentToStreams(sniffed.doc, name, notes, inflater);
      break;
    case "genai-replay":
      format = detected;
      streams = genaiReplayToStreams(sniffed.doc, name, notes);
      break;
    case "json-cassette": {
      const cassette = detectCassette(sniffed.doc) ?? "vcr.py";
      format = cassette;
      notes.push(`${cassette} cassette serialized as JSON`);
      streams = cassetteToStreams(sniffed.doc, cassette, name, notes, inflater);
      break;
    }
    case "yaml-cassette": {
      const doc = parseYaml(textOf(bytes, name, "YAML"), name, notes);
      const cassette = detectCassette(doc);
      if (cassette === null) {
        throw new ImportError("YAML file is not an HTTP cassette: expected go-vcr v2 or VCR.py 'interactions'", "unrecognized_format", name);
      }
      format = cassette;
      streams = cassetteToStreams(doc, cassette, name, notes, inflater);
      break;
    }
  }

  streams = splitConcatenatedMessages(streams, notes);

  if (options.provider !== undefined) {
    const provider: ProviderName = options.provider;
    const disagreeing = streams.filter((stream) => stream.provider !== null && stream.provider !== provider);
    if (disagreeing.length > 0) {
      const seen = [...new Set(disagreeing.map((stream) => stream.provider))].join(", ");
      notes.push(`provider ${provider} given explicitly; the container suggested ${seen}`);
    }
    streams = streams.map((stream) => ({ ...stream, provider }));
  }
  return { format, streams, notes };
}

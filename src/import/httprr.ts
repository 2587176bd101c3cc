import type { RecordedStream } from "../framing/records.js";
import { concatBytes } from "../util/bytes.js";
import { ImportError } from "./errors.js";
import type { BodyInflater } from "./decompress.js";
import { exchangeToStream, type HttpExchange } from "./http.js";
import { startsWithBytes } from "./text.js";

/**
 * rsc.io/httprr v1 traces: the line `httprr trace v1`, then per exchange a line
 * `<request bytes> <response bytes>` followed by the raw HTTP/1.1 request and response.
 * Lengths count bytes, so the trace is walked as bytes, never as decoded text.
 */

const MAGIC = "httprr trace v1\n";
const MAGIC_BYTES = [...MAGIC].map((c) => c.charCodeAt(0));

export function isHttprr(bytes: Uint8Array): boolean {
  return startsWithBytes(bytes, MAGIC_BYTES);
}

const latin1 = new TextDecoder("latin1");

function indexOfSequence(bytes: Uint8Array, sequence: readonly number[], from: number): number {
  outer: for (let i = from; i + sequence.length <= bytes.length; i++) {
    for (let j = 0; j < sequence.length; j++) if (bytes[i + j] !== sequence[j]) continue outer;
    return i;
  }
  return -1;
}

const CRLF = [0x0d, 0x0a];
const CRLFCRLF = [0x0d, 0x0a, 0x0d, 0x0a];

interface RawMessage {
  startLine: string;
  headers: Map<string, string>;
  body: Uint8Array;
}

function splitMessage(bytes: Uint8Array, what: string, file: string): RawMessage {
  const end = indexOfSequence(bytes, CRLFCRLF, 0);
  if (end < 0) throw new ImportError(`${what}: no blank line after the HTTP headers`, "malformed", file);
  // Header bytes are ASCII by the HTTP grammar; latin1 maps any stray byte one-to-one.
  const [startLine = "", ...lines] = latin1.decode(bytes.subarray(0, end)).split("\r\n");
  const headers = new Map<string, string>();
  for (const line of lines) {
    const colon = line.indexOf(":");
    if (colon <= 0) throw new ImportError(`${what}: malformed header line ${JSON.stringify(line)}`, "malformed", file);
    const name = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    headers.set(name, headers.has(name) ? `${headers.get(name)}, ${value}` : value);
  }
  return { startLine, headers, body: bytes.subarray(end + 4) };
}

/** Removes HTTP/1.1 chunked transfer coding (chunk extensions and trailers are dropped). */
export function dechunk(body: Uint8Array, what: string, file: string): Uint8Array {
  const parts: Uint8Array[] = [];
  let pos = 0;
  while (true) {
    const lineEnd = indexOfSequence(body, CRLF, pos);
    if (lineEnd < 0) throw new ImportError(`${what}: chunked body ends inside a chunk-size line at byte ${pos}`, "malformed", file);
    const sizeText = latin1.decode(body.subarray(pos, lineEnd)).split(";")[0]?.trim() ?? "";
    if (!/^[0-9a-fA-F]+$/.test(sizeText)) {
      throw new ImportError(`${what}: invalid chunk size ${JSON.stringify(sizeText)} at byte ${pos} of the chunked body`, "malformed", file);
    }
    const size = parseInt(sizeText, 16);
    const start = lineEnd + 2;
    if (size === 0) break;
    if (start + size + 2 > body.length) {
      throw new ImportError(`${what}: chunk of ${size} bytes at byte ${pos} runs past the end of the body`, "malformed", file);
    }
    parts.push(body.subarray(start, start + size));
    pos = start + size;
    if (body[pos] !== 0x0d || body[pos + 1] !== 0x0a) {
      throw new ImportError(`${what}: chunk at byte ${start} is not followed by CRLF`, "malformed", file);
    }
    pos += 2;
  }
  return concatBytes(parts);
}

export function httprrToStreams(bytes: Uint8Array, file: string, notes: string[], inflater?: BodyInflater): RecordedStream[] {
  if (!isHttprr(bytes)) throw new ImportError(`expected an httprr trace starting with ${JSON.stringify(MAGIC.trim())}`, "unrecognized_format", file);
  const streams: RecordedStream[] = [];
  let pos = MAGIC.length;
  let index = 0;
  while (pos < bytes.length) {
    const lineEnd = bytes.indexOf(0x0a, pos);
    const header = lineEnd < 0 ? "" : latin1.decode(bytes.subarray(pos, lineEnd));
    const match = /^(\d+) (\d+)$/.exec(header);
    if (!match) {
      throw new ImportError(`exchange ${index} at byte ${pos}: expected a '<request length> <response length>' line, found ${JSON.stringify(header.slice(0, 40))}`, "malformed", file);
    }
    const requestLength = Number(match[1]);
    const responseLength = Number(match[2]);
    const requestStart = lineEnd + 1;
    const responseStart = requestStart + requestLength;
    const responseEnd = responseStart + responseLength;
    if (responseEnd > bytes.length) {
      throw new ImportError(`exchange ${index} at byte ${pos}: lengths ${requestLength}+${responseLength} run past the end of the file (${bytes.length} bytes)`, "malformed", file);
    }
    const what = `interaction-${index}`;
    const request = splitMessage(bytes.subarray(requestStart, responseStart), `${what} request`, file);
    const response = splitMessage(bytes.subarray(responseStart, responseEnd), `${what} response`, file);
    const [method = null, url = null] = request.startLine.split(" ");
    const statusMatch = /^HTTP\/\d(?:\.\d)? (\d{3})/.exec(response.startLine);

    let body = response.body;
    if (/\bchunked\b/i.test(response.headers.get("transfer-encoding") ?? "")) {
      body = dechunk(body, `${what} response`, file);
      notes.push(`${what}: chunked transfer coding removed`);
    } else {
      const declared = response.headers.get("content-length");
      if (declared !== undefined && Number(declared) !== body.length) {
        notes.push(`${what}: Content-Length says ${declared} bytes, the trace holds ${body.length}`);
      }
    }
    const exchange: HttpExchange = {
      index,
      method,
      url,
      status: statusMatch ? Number(statusMatch[1]) : null,
      headers: response.headers,
      body,
    };
    const stream = exchangeToStream(exchange, file, notes, inflater);
    if (stream) streams.push(stream);
    pos = responseEnd;
    index++;
  }
  return streams;
}

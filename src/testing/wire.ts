import { bytesToBase64, encodeEventStreamMessage } from "../framing/aws-eventstream.js";
import { encodeJsonEventFrame } from "../framing/aws-eventstream-encode.js";
import { defaultFraming, type FramingName } from "../framing/framer.js";
import { isPlainObject } from "../json/shape.js";
import type { ProviderEvent, ProviderName } from "../types.js";
import { stringifyJson } from "./values.js";
import { concatBytes } from "../util/bytes.js";

/**
 * Provider events back to the bytes a server would send, with the freedoms each framing allows
 * (line endings, comments, field order), so that properties can state "this freedom changes
 * nothing". Deterministic: the same events and options always give the same bytes.
 */

export type LineEnding = "lf" | "crlf" | "cr";

/** How `encodeWire` writes events: framing, line endings, keep-alives and field order. */
export interface WireOptions {
  /** Framing to write; defaults to the provider's own (SSE for most, NDJSON for Ollama, the AWS event stream for Bedrock). */
  framing?: FramingName;
  lineEnding?: LineEnding;
  /** Positions (event indices, taken modulo events + 1) before which a keep-alive goes: an SSE comment or a blank NDJSON line. */
  keepAlives?: readonly number[];
  /** SSE only: write `data:` before `event:` (Bedrock Mantle does). */
  dataFirst?: boolean;
  /**
   * SSE only: spread each JSON payload over several `data:` lines (a line break after every `{`,
   * `[` and `,` outside strings). The SSE spec joins them with line feeds, which JSON reads as
   * whitespace: the events are unchanged.
   */
  multilineData?: boolean;
}

/** Breaks compact JSON text into lines after `{`, `[` and `,` outside strings; linear, no parse. */
export function spreadJsonLines(text: string): string {
  let out = "";
  let from = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++;
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) {
      inString = true;
    } else if (c === 0x7b || c === 0x5b || c === 0x2c) {
      out += text.slice(from, i + 1) + "\n";
      from = i + 1;
    }
  }
  return out + text.slice(from);
}

const utf8 = new TextEncoder();

function newline(ending: LineEnding | undefined): string {
  return ending === "crlf" ? "\r\n" : ending === "cr" ? "\r" : "\n";
}

function payloadText(data: unknown): string {
  return typeof data === "string" ? data : stringifyJson(data === undefined ? null : data);
}

function keepAliveSlots(count: number, positions: readonly number[] | undefined): Map<number, number> {
  const slots = new Map<number, number>();
  for (const position of positions ?? []) {
    const at = position % (count + 1);
    slots.set(at, (slots.get(at) ?? 0) + 1);
  }
  return slots;
}

/** Events as Server-Sent Events text. */
export function encodeSseText(events: readonly ProviderEvent[], options: WireOptions = {}): string {
  const nl = newline(options.lineEnding);
  const slots = keepAliveSlots(events.length, options.keepAlives);
  const parts: string[] = [];
  const keepAlive = (at: number): void => {
    for (let k = slots.get(at) ?? 0; k > 0; k--) parts.push(`: keep-alive${nl}`);
  };
  events.forEach((event, i) => {
    keepAlive(i);
    const name = event.event !== undefined ? `event: ${event.event}${nl}` : "";
    // Any line break inside a payload starts a new data line, as a server's SSE writer would do.
    const text = payloadText(event.data);
    const data = (options.multilineData && typeof event.data !== "string" ? spreadJsonLines(text) : text)
      .split(/\r\n|\r|\n/)
      .map((line) => `data: ${line}${nl}`)
      .join("");
    parts.push(options.dataFirst ? data + name : name + data, nl);
  });
  keepAlive(events.length);
  return parts.join("");
}

/** Events as NDJSON text, one payload per line. */
export function encodeNdjsonText(events: readonly ProviderEvent[], options: WireOptions = {}): string {
  const nl = options.lineEnding === "crlf" ? "\r\n" : "\n";
  const slots = keepAliveSlots(events.length, options.keepAlives);
  const parts: string[] = [];
  const keepAlive = (at: number): void => {
    for (let k = slots.get(at) ?? 0; k > 0; k--) parts.push(nl);
  };
  events.forEach((event, i) => {
    keepAlive(i);
    const text = typeof event.data === "string" && !/[\r\n]/.test(event.data) ? event.data : stringifyJson(event.data ?? null);
    parts.push(text, nl);
  });
  keepAlive(events.length);
  return parts.join("");
}

/** Events as a JSON array (Gemini without `alt=sse`). */
export function encodeJsonArrayText(events: readonly ProviderEvent[], options: WireOptions = {}): string {
  const nl = newline(options.lineEnding);
  return "[" + events.map((event) => stringifyJson(event.data ?? null)).join("," + nl) + "]";
}

/**
 * ConverseStream frames. Events in the framing's own form (`{event, data}`) keep their name as
 * `:event-type`; SDK-wrapped one-key objects are unwrapped; exceptions and protocol errors get
 * their own frame kinds, as the decoder reads them back.
 */
export function encodeEventStreamBytes(events: readonly ProviderEvent[]): Uint8Array {
  const frames = events.map((event) => {
    let name = event.event;
    let body: unknown = event.data;
    if (name === undefined && isPlainObject(body)) {
      const keys = Object.keys(body);
      if (keys.length === 1) {
        name = keys[0] as string;
        body = body[name];
      }
    }
    if (name === "error" && isPlainObject(body) && ("errorCode" in body || "errorMessage" in body)) {
      return encodeEventStreamMessage(
        { ":message-type": "error", ":error-code": String(body.errorCode ?? ""), ":error-message": String(body.errorMessage ?? "") },
        new Uint8Array(0),
      );
    }
    if (name !== undefined && (name === "exception" || name.endsWith("Exception"))) {
      const fields: Record<string, unknown> = isPlainObject(body) ? { ...body } : { payload: body };
      const type = name === "exception" ? (typeof fields.exceptionType === "string" ? fields.exceptionType : "exception") : name;
      delete fields.exceptionType;
      return encodeEventStreamMessage({ ":message-type": "exception", ":exception-type": type, ":content-type": "application/json" }, stringifyJson(fields));
    }
    const headers: Record<string, string> = { ":message-type": "event", ":content-type": "application/json" };
    if (name !== undefined) headers[":event-type"] = name;
    return encodeEventStreamMessage(headers, payloadText(body));
  });
  return concatBytes(frames);
}

/**
 * Anthropic events as Claude on Bedrock sends them (`invoke-with-response-stream`): each event's
 * JSON, with its `type` (the SSE event name when the payload lacks one), base64 in the `bytes`
 * field of a `chunk` frame.
 */
export function encodeInvokeChunkBytes(events: readonly ProviderEvent[]): Uint8Array {
  const utf8Bytes = new TextEncoder();
  return concatBytes(
    events.map((event) => {
      let data = event.data;
      if (isPlainObject(data) && data.type === undefined && event.event !== undefined) data = { type: event.event, ...data };
      return encodeJsonEventFrame("chunk", { bytes: bytesToBase64(utf8Bytes.encode(payloadText(data))) });
    }),
  );
}

/** The bytes of `events` in `framing` (the provider's own by default). */
export function encodeWire(provider: ProviderName, events: readonly ProviderEvent[], options: WireOptions = {}): Uint8Array {
  const framing = options.framing ?? defaultFraming(provider);
  switch (framing) {
    case "sse":
      return utf8.encode(encodeSseText(events, options));
    case "ndjson":
      return utf8.encode(encodeNdjsonText(events, options));
    case "json-array":
      return utf8.encode(encodeJsonArrayText(events, options));
    case "aws-eventstream":
      return provider === "anthropic" ? encodeInvokeChunkBytes(events) : encodeEventStreamBytes(events);
  }
}

/** Framings a provider's bytes may arrive in (the fuzzer picks among them). */
export function framingsFor(provider: ProviderName): FramingName[] {
  if (provider === "gemini") return ["sse", "json-array"];
  // Claude on Bedrock: the Anthropic events in eventstream `chunk` frames.
  if (provider === "anthropic") return ["sse", "aws-eventstream"];
  return [defaultFraming(provider)];
}

export { concatBytes };

/** Splits bytes at the given offsets (taken modulo length + 1, deduplicated, sorted). */
export function splitBytes(bytes: Uint8Array, cuts: readonly number[]): Uint8Array[] {
  const points = [...new Set(cuts.map((cut) => cut % (bytes.length + 1)))].sort((x, y) => x - y);
  const chunks: Uint8Array[] = [];
  let start = 0;
  for (const point of points) {
    chunks.push(bytes.subarray(start, point));
    start = point;
  }
  chunks.push(bytes.subarray(start));
  return chunks;
}

/** Offsets just inside every multi-byte UTF-8 sequence: cutting there splits a character across chunks. */
export function multibyteCutPoints(bytes: Uint8Array, limit = 64): number[] {
  const cuts: number[] = [];
  for (let i = 0; i < bytes.length && cuts.length < limit; i++) {
    const byte = bytes[i] as number;
    if (byte >= 0xc2 && byte <= 0xf4) cuts.push(i + 1 + (cuts.length % 2 === 1 && byte >= 0xe0 ? 1 : 0));
  }
  return cuts;
}

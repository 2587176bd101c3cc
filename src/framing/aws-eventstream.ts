import type { Diagnostic, ProviderEvent } from "../types.js";
import { ToolwireError } from "../errors.js";
import { isFieldRecord } from "../json/shape.js";

/**
 * Binary `application/vnd.amazon.eventstream` framing (Bedrock ConverseStream and
 * InvokeModelWithResponseStream). Web-standard only (DataView, TextDecoder, atob) so the same
 * code runs in browsers and edge runtimes.
 *
 * Frame layout (all integers big-endian):
 *   total length u32 | headers length u32 | prelude CRC32 u32 | headers | payload | message CRC32 u32
 */

export type EventStreamHeaderValue = string | number | boolean | Uint8Array;

/**
 * One decoded AWS event-stream message: its headers (`:event-type`, `:message-type`…) and raw
 * payload bytes.
 */
export interface EventStreamMessage {
  headers: Record<string, EventStreamHeaderValue>;
  payload: Uint8Array;
}

export type EventStreamErrorCode =
  | "prelude_crc"
  | "message_crc"
  | "invalid_length"
  | "invalid_header"
  | "truncated"
  | "invalid_chunk";

/** A malformed AWS event-stream frame or message; `code` says what is wrong with it. */
export class EventStreamError extends ToolwireError {
  declare readonly code: EventStreamErrorCode;

  constructor(
    message: string,
    code: EventStreamErrorCode,
    /** Byte offset of the offending frame in the stream, or null when the error is not about a frame. */
    readonly offset: number | null,
  ) {
    super(code, message);
  }
}

const PRELUDE_LENGTH = 12;
/** Prelude + message CRC. */
const FRAME_OVERHEAD = 16;
// The spec caps a message at 16 MiB and its headers at 128 KiB. Enforcing the caps makes a
// corrupted length (that still passed the prelude CRC by chance) fail fast instead of
// buffering forever.
const MAX_MESSAGE_LENGTH = 16 * 1024 * 1024;
const MAX_HEADERS_LENGTH = 128 * 1024;

// ---------------------------------------------------------------------------------------------
// CRC32 (IEEE 802.3, reflected polynomial 0xEDB88320), the checksum the spec mandates.

const CRC_TABLE: Uint32Array = (() => {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
})();

/** CRC32 of `bytes[start, end)`, continuing from `previous` (pass the result of an earlier call to chain). */
export function crc32(bytes: Uint8Array, start = 0, end = bytes.length, previous = 0): number {
  let crc = ~previous >>> 0;
  for (let i = start; i < end; i++) {
    crc = (CRC_TABLE[(crc ^ (bytes[i] as number)) & 0xff] as number) ^ (crc >>> 8);
  }
  return ~crc >>> 0;
}

function hex32(value: number): string {
  return "0x" + value.toString(16).padStart(8, "0");
}

// ---------------------------------------------------------------------------------------------
// Header value types (the spec's numbering).

const HeaderType = {
  BoolTrue: 0,
  BoolFalse: 1,
  Byte: 2,
  Short: 3,
  Integer: 4,
  Long: 5,
  ByteArray: 6,
  String: 7,
  Timestamp: 8,
  Uuid: 9,
} as const;

const utf8Decoder = new TextDecoder("utf-8", { fatal: true });
const utf8Encoder = new TextEncoder();

function decodeHeaders(frame: Uint8Array, start: number, end: number, frameOffset: number): Record<string, EventStreamHeaderValue> {
  const view = new DataView(frame.buffer, frame.byteOffset, frame.byteLength);
  const headers: Record<string, EventStreamHeaderValue> = {};
  let pos = start;
  const fail = (what: string): never => {
    throw new EventStreamError(
      `AWS event stream frame at byte offset ${frameOffset}: malformed header at frame byte ${pos}: ${what}`,
      "invalid_header",
      frameOffset,
    );
  };
  const need = (n: number): void => {
    if (pos + n > end) fail(`needs ${n} more bytes but the headers section ends at frame byte ${end}`);
  };
  while (pos < end) {
    need(1);
    const nameLength = view.getUint8(pos);
    pos += 1;
    if (nameLength === 0) fail("empty header name");
    need(nameLength);
    let name: string;
    try {
      name = utf8Decoder.decode(frame.subarray(pos, pos + nameLength));
    } catch {
      return fail("header name is not valid UTF-8");
    }
    pos += nameLength;
    need(1);
    const type = view.getUint8(pos);
    pos += 1;
    let value: EventStreamHeaderValue;
    switch (type) {
      case HeaderType.BoolTrue:
        value = true;
        break;
      case HeaderType.BoolFalse:
        value = false;
        break;
      case HeaderType.Byte:
        need(1);
        value = view.getInt8(pos);
        pos += 1;
        break;
      case HeaderType.Short:
        need(2);
        value = view.getInt16(pos);
        pos += 2;
        break;
      case HeaderType.Integer:
        need(4);
        value = view.getInt32(pos);
        pos += 4;
        break;
      case HeaderType.Long:
      case HeaderType.Timestamp:
        // Numbers past 2^53 lose precision; no header Bedrock sends comes near that.
        need(8);
        value = Number(view.getBigInt64(pos));
        pos += 8;
        break;
      case HeaderType.ByteArray: {
        need(2);
        const length = view.getUint16(pos);
        pos += 2;
        need(length);
        value = frame.slice(pos, pos + length);
        pos += length;
        break;
      }
      case HeaderType.String: {
        need(2);
        const length = view.getUint16(pos);
        pos += 2;
        need(length);
        try {
          value = utf8Decoder.decode(frame.subarray(pos, pos + length));
        } catch {
          return fail(`value of '${name}' is not valid UTF-8`);
        }
        pos += length;
        break;
      }
      case HeaderType.Uuid: {
        need(16);
        let hex = "";
        for (let i = 0; i < 16; i++) hex += (frame[pos + i] as number).toString(16).padStart(2, "0");
        value = `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
        pos += 16;
        break;
      }
      default:
        return fail(`unknown value type ${type} for header '${name}'`);
    }
    // defineProperty, not assignment: a header named "__proto__" must stay data.
    Object.defineProperty(headers, name, { value, enumerable: true, writable: true, configurable: true });
  }
  return headers;
}

/**
 * Decodes one complete frame (`frame` holds exactly its bytes, `frameOffset` is its offset in the
 * stream, for the error message). Throws EventStreamError on a bad message CRC or header.
 */
export function decodeFrame(frame: Uint8Array, frameOffset: number): EventStreamMessage {
  const view = new DataView(frame.buffer, frame.byteOffset, frame.byteLength);
  const expected = view.getUint32(frame.length - 4);
  const computed = crc32(frame, 0, frame.length - 4);
  if (expected !== computed) {
    throw new EventStreamError(
      `AWS event stream frame at byte offset ${frameOffset}: message CRC32 mismatch (frame says ${hex32(expected)}, bytes give ${hex32(computed)}); the frame is corrupted`,
      "message_crc",
      frameOffset,
    );
  }
  const headersLength = view.getUint32(4);
  const headersEnd = PRELUDE_LENGTH + headersLength;
  return {
    headers: decodeHeaders(frame, PRELUDE_LENGTH, headersEnd, frameOffset),
    payload: frame.slice(headersEnd, frame.length - 4),
  };
}

/**
 * Validates the 12-byte prelude at `bytes[start]` (its CRC and the length caps) and returns the
 * frame's total length. Throws EventStreamError when the lengths cannot be trusted.
 */
export function readPrelude(bytes: Uint8Array, start: number, frameOffset: number): number {
  const view = new DataView(bytes.buffer, bytes.byteOffset + start, PRELUDE_LENGTH);
  const totalLength = view.getUint32(0);
  const headersLength = view.getUint32(4);
  const expected = view.getUint32(8);
  const computed = crc32(bytes, start, start + 8);
  if (expected !== computed) {
    throw new EventStreamError(
      `AWS event stream frame at byte offset ${frameOffset}: prelude CRC32 mismatch (prelude says ${hex32(expected)}, bytes give ${hex32(computed)}); the length fields cannot be trusted`,
      "prelude_crc",
      frameOffset,
    );
  }
  if (totalLength < FRAME_OVERHEAD || totalLength > MAX_MESSAGE_LENGTH) {
    throw new EventStreamError(
      `AWS event stream frame at byte offset ${frameOffset}: total length ${totalLength} is outside ${FRAME_OVERHEAD}..${MAX_MESSAGE_LENGTH}`,
      "invalid_length",
      frameOffset,
    );
  }
  if (headersLength > MAX_HEADERS_LENGTH || headersLength > totalLength - FRAME_OVERHEAD) {
    throw new EventStreamError(
      `AWS event stream frame at byte offset ${frameOffset}: headers length ${headersLength} does not fit a ${totalLength}-byte frame`,
      "invalid_length",
      frameOffset,
    );
  }
  return totalLength;
}

/**
 * Cuts an event-stream body into whole frames, each handed out as the bytes it came in (a
 * re-encoder forwards them untouched; `createEventStreamFramer` decodes them).
 */
export class EventStreamFrameSplitter {
  private buffer = new Uint8Array(0);
  private start = 0;
  private end = 0;
  /** Stream offset of the next unread byte. */
  offset = 0;

  append(bytes: Uint8Array): void {
    const pending = this.end - this.start;
    if (this.end + bytes.length > this.buffer.length) {
      if (pending + bytes.length <= this.buffer.length) {
        this.buffer.copyWithin(0, this.start, this.end);
      } else {
        // Doubling keeps appends amortized O(bytes) when a large frame arrives in small pieces.
        const next = new Uint8Array(Math.max(pending + bytes.length, this.buffer.length * 2, 1024));
        next.set(this.buffer.subarray(this.start, this.end), 0);
        this.buffer = next;
      }
      this.start = 0;
      this.end = pending;
    }
    this.buffer.set(bytes, this.end);
    this.end += bytes.length;
  }

  /**
   * The next whole frame, or null until more bytes arrive. Throws EventStreamError for a prelude
   * that cannot be trusted. The frame is a view of the buffer, valid until the next `append`:
   * copy what is kept longer.
   */
  next(): Uint8Array | null {
    if (this.end - this.start < PRELUDE_LENGTH) return null;
    const total = readPrelude(this.buffer, this.start, this.offset);
    if (this.end - this.start < total) return null;
    const frame = this.buffer.subarray(this.start, this.start + total);
    this.start += total;
    this.offset += total;
    return frame;
  }

  /** The error for the bytes left after the last whole frame (the body ended inside one), or null when none are. */
  truncated(): EventStreamError | null {
    const left = this.end - this.start;
    if (left === 0) return null;
    const needed = left >= PRELUDE_LENGTH ? `a ${new DataView(this.buffer.buffer, this.buffer.byteOffset + this.start, 4).getUint32(0)}-byte frame` : "a 12-byte prelude";
    return new EventStreamError(`AWS event stream truncated: ${left} trailing bytes at byte offset ${this.offset} do not complete ${needed}`, "truncated", this.offset);
  }

  /** Every byte not read yet, as it came; they count as read. */
  rest(): Uint8Array {
    const out = this.buffer.slice(this.start, this.end);
    this.start = this.end;
    this.offset += out.length;
    return out;
  }
}

export interface EventStreamFramer {
  /** Feeds bytes split anywhere; returns the frames this chunk completed. Throws EventStreamError on a corrupt frame. */
  push(bytes: Uint8Array): EventStreamMessage[];
  /** Ends the stream; throws EventStreamError when bytes of an incomplete frame remain. */
  flush(): EventStreamMessage[];
}

/**
 * A push framer for the AWS event-stream binary format (Bedrock): bytes in any cut, messages out,
 * with prelude and message CRCs checked and frames capped at 16 MiB.
 */
export function createEventStreamFramer(): EventStreamFramer {
  const frames = new EventStreamFrameSplitter();
  let failure: EventStreamError | null = null;

  const drain = (): EventStreamMessage[] => {
    const out: EventStreamMessage[] = [];
    try {
      for (;;) {
        const at = frames.offset;
        const frame = frames.next();
        if (frame === null) break;
        out.push(decodeFrame(frame, at));
      }
    } catch (error) {
      // Frames before the corrupt one were valid and are consumed: hand them out now and
      // raise the error on the next call, so a chunk holding both loses nothing that arrived.
      if (out.length === 0 || !(error instanceof EventStreamError)) throw error;
      failure = error;
    }
    return out;
  };

  const guard = <T>(fn: () => T): T => {
    if (failure) throw failure;
    try {
      return fn();
    } catch (error) {
      if (error instanceof EventStreamError) failure = error;
      throw error;
    }
  };

  return {
    push(bytes) {
      return guard(() => {
        if (bytes.length > 0) frames.append(bytes);
        return drain();
      });
    },
    flush() {
      return guard(() => {
        const out = drain();
        const cut = frames.truncated();
        if (cut) throw cut;
        return out;
      });
    },
  };
}

/**
 * A frame that cannot be read, or bytes that end inside one, as the diagnostic every event-stream
 * reader gives: a cut body is a warning (nothing arrived corrupted), anything else an error.
 */
export function eventStreamDiagnostic(error: EventStreamError): Diagnostic {
  const cut = error.code === "truncated";
  return {
    code: `eventstream_${error.code}`,
    severity: cut ? "warning" : "error",
    message: `${error.message}.${cut ? "" : " Nothing after this offset was read; the events before it were kept."}`,
    data: { code: error.code, offset: error.offset },
  };
}

/** Decodes a complete event-stream body in one call. */
export function decodeEventStream(bytes: Uint8Array): EventStreamMessage[] {
  const framer = createEventStreamFramer();
  return [...framer.push(bytes), ...framer.flush()];
}

// ---------------------------------------------------------------------------------------------
// Encoding (tests, fuzzing, replay servers).

/** A header value with an explicit wire type, for the types a plain JS value cannot name. */
export type TypedHeaderValue =
  | { type: "byte" | "short" | "integer" | "long" | "timestamp"; value: number }
  | { type: "uuid"; value: string }
  | { type: "bytes"; value: Uint8Array }
  | { type: "string"; value: string }
  | { type: "boolean"; value: boolean };

function typed(value: EventStreamHeaderValue | TypedHeaderValue): TypedHeaderValue {
  if (typeof value === "string") return { type: "string", value };
  if (typeof value === "boolean") return { type: "boolean", value };
  if (value instanceof Uint8Array) return { type: "bytes", value };
  if (typeof value === "number") {
    return Number.isInteger(value) && value >= -0x80000000 && value <= 0x7fffffff ? { type: "integer", value } : { type: "long", value };
  }
  return value;
}

function encodeHeader(name: string, input: EventStreamHeaderValue | TypedHeaderValue): Uint8Array {
  const nameBytes = utf8Encoder.encode(name);
  if (nameBytes.length === 0 || nameBytes.length > 255) throw new EventStreamError(`header name '${name}' must be 1..255 bytes`, "invalid_header", null);
  const header = typed(input);
  let body: Uint8Array;
  let type: number;
  const fixed = (size: number, write: (view: DataView) => void): Uint8Array => {
    const bytes = new Uint8Array(size);
    write(new DataView(bytes.buffer));
    return bytes;
  };
  const sized = (bytes: Uint8Array): Uint8Array => {
    if (bytes.length > 0xffff) throw new EventStreamError(`header '${name}' value exceeds 65535 bytes`, "invalid_header", null);
    const out = new Uint8Array(2 + bytes.length);
    new DataView(out.buffer).setUint16(0, bytes.length);
    out.set(bytes, 2);
    return out;
  };
  switch (header.type) {
    case "boolean":
      type = header.value ? HeaderType.BoolTrue : HeaderType.BoolFalse;
      body = new Uint8Array(0);
      break;
    case "byte":
      type = HeaderType.Byte;
      body = fixed(1, (v) => v.setInt8(0, header.value));
      break;
    case "short":
      type = HeaderType.Short;
      body = fixed(2, (v) => v.setInt16(0, header.value));
      break;
    case "integer":
      type = HeaderType.Integer;
      body = fixed(4, (v) => v.setInt32(0, header.value));
      break;
    case "long":
    case "timestamp":
      type = header.type === "long" ? HeaderType.Long : HeaderType.Timestamp;
      body = fixed(8, (v) => v.setBigInt64(0, BigInt(Math.trunc(header.value))));
      break;
    case "bytes":
      type = HeaderType.ByteArray;
      body = sized(header.value);
      break;
    case "string":
      type = HeaderType.String;
      body = sized(utf8Encoder.encode(header.value));
      break;
    case "uuid": {
      type = HeaderType.Uuid;
      const hex = header.value.replace(/-/g, "");
      if (!/^[0-9a-fA-F]{32}$/.test(hex)) throw new EventStreamError(`header '${name}': '${header.value}' is not a UUID`, "invalid_header", null);
      body = new Uint8Array(16);
      for (let i = 0; i < 16; i++) body[i] = parseInt(hex.slice(i * 2, i * 2 + 2), 16);
      break;
    }
  }
  const out = new Uint8Array(1 + nameBytes.length + 1 + body.length);
  out[0] = nameBytes.length;
  out.set(nameBytes, 1);
  out[1 + nameBytes.length] = type;
  out.set(body, 2 + nameBytes.length);
  return out;
}

/** Encodes one frame. Plain numbers become `integer` (or `long` outside int32); use TypedHeaderValue for the rest. */
export function encodeEventStreamMessage(
  headers: Record<string, EventStreamHeaderValue | TypedHeaderValue>,
  payload: Uint8Array | string,
): Uint8Array {
  const payloadBytes = typeof payload === "string" ? utf8Encoder.encode(payload) : payload;
  const parts = Object.entries(headers).map(([name, value]) => encodeHeader(name, value));
  const headersLength = parts.reduce((sum, part) => sum + part.length, 0);
  const totalLength = FRAME_OVERHEAD + headersLength + payloadBytes.length;
  const frame = new Uint8Array(totalLength);
  const view = new DataView(frame.buffer);
  view.setUint32(0, totalLength);
  view.setUint32(4, headersLength);
  view.setUint32(8, crc32(frame, 0, 8));
  let pos = PRELUDE_LENGTH;
  for (const part of parts) {
    frame.set(part, pos);
    pos += part.length;
  }
  frame.set(payloadBytes, pos);
  view.setUint32(totalLength - 4, crc32(frame, 0, totalLength - 4));
  return frame;
}

// ---------------------------------------------------------------------------------------------
// Frames to provider events.

function parsePayload(payload: Uint8Array): unknown {
  if (payload.length === 0) return {};
  let text: string;
  try {
    text = utf8Decoder.decode(payload);
  } catch {
    // Not text at all: hand the bytes on rather than inventing characters.
    return payload;
  }
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}


/**
 * Maps a frame to the provider event the Bedrock decoder reads: events keep their
 * `:event-type` as the event name with the (unwrapped) JSON body as data; exceptions become
 * `{event: "exception", data: {exceptionType, ...payload}}`; protocol errors
 * `{event: "error", data: {errorCode, errorMessage}}`.
 */
export function toProviderEvent(message: EventStreamMessage): ProviderEvent {
  const messageType = message.headers[":message-type"];
  const data = parsePayload(message.payload);
  if (messageType === "exception") {
    const exceptionType = message.headers[":exception-type"];
    return {
      event: "exception",
      data: { exceptionType: typeof exceptionType === "string" ? exceptionType : null, ...(isFieldRecord(data) ? data : { payload: data }) },
    };
  }
  if (messageType === "error") {
    const code = message.headers[":error-code"];
    const text = message.headers[":error-message"];
    return {
      event: "error",
      data: { errorCode: typeof code === "string" ? code : null, errorMessage: typeof text === "string" ? text : null },
    };
  }
  const eventType = message.headers[":event-type"];
  const event: ProviderEvent = { data };
  if (typeof eventType === "string") event.event = eventType;
  else if (typeof messageType === "string") event.event = messageType;
  return event;
}

/** Decodes standard base64 (padding optional, whitespace ignored). Throws on other characters. */
export function base64ToBytes(text: string): Uint8Array {
  const clean = text.replace(/[\s]/g, "");
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(clean) || clean.replace(/=+$/, "").length % 4 === 1) {
    throw new ToolwireError("invalid_base64", "not valid base64");
  }
  const binary = atob(clean);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

/** Base64 of `bytes` (what a Bedrock `chunk` frame's `bytes` field holds). */
export function bytesToBase64(bytes: Uint8Array): string {
  let binary = "";
  // In slices: String.fromCharCode with a whole large array as arguments overflows the stack.
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary);
}

/**
 * InvokeModelWithResponseStream wraps each native model event as `:event-type chunk` with
 * `{bytes: base64(event JSON), p}`. Returns the inner event (named by its `type`, which for
 * Anthropic models is the SSE event name), or null when `event` is not such a chunk.
 */
export function unwrapInvokeModelChunk(event: ProviderEvent): ProviderEvent | null {
  if (event.event !== "chunk" || !isFieldRecord(event.data) || typeof event.data.bytes !== "string") return null;
  let inner: unknown;
  try {
    inner = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(base64ToBytes(event.data.bytes)));
  } catch (error) {
    throw new EventStreamError(
      `InvokeModel chunk does not hold base64-encoded JSON: ${error instanceof Error ? error.message : String(error)}`,
      "invalid_chunk",
      null,
    );
  }
  const out: ProviderEvent = { data: inner };
  if (isFieldRecord(inner) && typeof inner.type === "string") out.event = inner.type;
  return out;
}

import { createDecoder } from "../providers/registry.js";
import type { CodecEvent, DecodedTurn, ProviderEvent, ProviderName } from "../types.js";
import { createByteDecoder, type ByteDecoderOptions } from "./bytes.js";

/**
 * What `decodeStream` accepts: a fetch `Response`, a byte `ReadableStream`, or an async iterable
 * of byte chunks, text chunks, or already-parsed provider payloads (what the official SDKs'
 * raw streams yield).
 */
export type StreamSource = Response | ReadableStream<Uint8Array> | AsyncIterable<Uint8Array | string | object>;

export type DecodeStreamOptions = ByteDecoderOptions;

function isResponse(source: unknown): source is Response {
  return typeof Response !== "undefined" && source instanceof Response;
}

function isReadableStream(source: unknown): source is ReadableStream<Uint8Array> {
  return typeof ReadableStream !== "undefined" && source instanceof ReadableStream;
}

async function* iterateReadable<T>(stream: ReadableStream<T>): AsyncGenerator<T> {
  const reader = stream.getReader();
  try {
    while (true) {
      const { done, value } = await reader.read();
      if (done) return;
      yield value;
    }
  } finally {
    reader.releaseLock();
  }
}

function toIterable(source: StreamSource): AsyncIterable<Uint8Array | string | object> {
  if (isResponse(source)) {
    if (!source.body) return (async function* () {})();
    return iterateReadable(source.body);
  }
  if (isReadableStream(source)) return iterateReadable(source);
  return source;
}

/** Wraps a payload object from an SDK iterable as a provider event, keeping an SSE-style name when it has one. */
function asProviderEvent(item: object): ProviderEvent {
  const type = (item as { type?: unknown }).type;
  return typeof type === "string" ? { event: type, data: item } : { data: item };
}

/** Decodes a live stream into CodecEvents; the last event is always `finish` with the DecodedTurn. */
export async function* decodeStream(provider: ProviderName, source: StreamSource, options: DecodeStreamOptions = {}): AsyncGenerator<CodecEvent> {
  const bytes = createByteDecoder(provider, options);
  // Parsed payloads skip framing; created lazily so byte streams pay nothing for it.
  let objects: ReturnType<typeof createDecoder> | null = null;
  for await (const item of toIterable(source)) {
    if (item instanceof Uint8Array || typeof item === "string") {
      if (objects) throw new TypeError("decodeStream: a source must yield either bytes/text or parsed events, not both.");
      yield* bytes.push(item);
    } else {
      objects ??= createDecoder(provider, options);
      yield* objects.push(asProviderEvent(item));
    }
  }
  yield* objects ? objects.end() : bytes.end();
}

/** Decodes a whole stream and returns the DecodedTurn. */
export async function collectTurn(provider: ProviderName, source: StreamSource, options: DecodeStreamOptions = {}): Promise<DecodedTurn> {
  let turn: DecodedTurn | null = null;
  for await (const event of decodeStream(provider, source, options)) {
    if (event.type === "finish") turn = event.turn;
  }
  return turn as DecodedTurn;
}

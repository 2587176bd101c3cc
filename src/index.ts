// Public surface: re-exports only.
export * from "./types.js";
export { createDecoder, supportedProviders, UnsupportedProviderError } from "./providers/registry.js";
export type { StreamingDecoder } from "./providers/codec.js";
export { detectProvider, ProviderDetectionError } from "./providers/detect.js";
export { createByteDecoder, type ByteDecoder, type ByteDecoderOptions } from "./adapters/bytes.js";
export { decodeStream, collectTurn, type StreamSource, type DecodeStreamOptions } from "./adapters/web.js";
export { createSseFramer, encodeSse, type SseFramer } from "./framing/sse.js";
export { createNdjsonFramer } from "./framing/ndjson.js";
export { parseRecords, serializeRecords, RecordFormatError, type RecordedStream } from "./framing/records.js";
export { IncrementalJsonParser, scanJson, type IncrementalJsonOptions } from "./json/incremental.js";
export { finalizeArguments, type ArgumentSources, type FinalizeContext, type FinalizeResult } from "./json/finalize.js";
export { replayEvents, toReplayJson, type ReplayInput, type ReplayJsonLine, type ReplayJsonCall } from "./replay.js";

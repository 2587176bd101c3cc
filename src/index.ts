/**
 * `toolwire`: the codec. Decoders for each provider, byte and stream adapters, recording and
 * replay, limits, re-encoders and the text-call extractor. Re-exports only; each name is listed in
 * `test/package/surface.test.ts`, which keeps the public surface small.
 *
 * Schemas, history and guards have their own entry points (`toolwire/schema`, `toolwire/history`,
 * `toolwire/guard`) so that importing the codec does not load a JSON Schema validator.
 */

// The data model: providers, events, calls, turns, diagnostics.
export { PROVIDERS } from "./types.js";
export type {
  ProviderName,
  ProviderEvent,
  ToolCall,
  ToolCallError,
  ToolCallErrorCode,
  RepairCode,
  TruncationCause,
  Usage,
  Diagnostic,
  ContentBlock,
  DecodedTurn,
  CodecEvent,
  DecoderOptions,
} from "./types.js";
export { ToolwireError, isToolwireError } from "./errors.js";

// Decoding: the push core, raw bytes, and streams (Response, ReadableStream, SDK iterables).
export { createDecoder, UnsupportedProviderError } from "./providers/registry.js";
export type { StreamingDecoder } from "./providers/codec.js";
export { detectProvider, ProviderDetectionError } from "./providers/detect.js";
export { createByteDecoder, type ByteDecoder, type ByteDecoderOptions } from "./adapters/bytes.js";
export { decodeStream, decodeStreamBatches, collectTurn, type StreamSource, type DecodeStreamOptions } from "./adapters/web.js";
export { DEFAULT_IDLE_TIMEOUT_MS } from "./adapters/watchdog.js";
export { DEFAULT_LIMITS, TooDeepError, type DecoderLimits } from "./limits.js";

// Recording and replay (the NDJSON record format of docs/design.md).
export { record, type Recording, type RecordSink, type RecordOptions } from "./adapters/record.js";
export { parseRecords, RecordFormatError, type RecordedStream } from "./framing/records.js";
export { replayEvents } from "./replay.js";

// Re-encoders: a decoded stream written back in its own protocol, fixed calls rewritten (the repairing fetch, `toolwire/fetch`, uses them).
export { createReencoder, createReencodingStream, type ReencoderOptions, type Reencoder, type RepairReport, repairWholeResponse, type WholeResponseRepair } from "./reencode/index.js";

// Tool calls written into assistant text (servers without a tool parser): the `textCalls` option and the extractor behind it.
export { extractTextCalls, TextCallOptionsError, type ExtractedTextCall, type TextCallSetting, type TextCallOptions, type TextCallSyntaxName } from "./text-calls/index.js";

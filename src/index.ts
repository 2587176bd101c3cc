/**
 * `toolwire`: the codec. Decoders for each provider, byte and stream adapters, framing, recorded
 * streams and replay, argument finalization, limits and conformance expectations. Re-exports only.
 *
 * Schemas, history and guards have their own entry points (`toolwire/schema`, `toolwire/history`,
 * `toolwire/guard`) so that importing the codec does not load a JSON Schema validator.
 */
export * from "./types.js";
export { ToolwireError, isToolwireError } from "./errors.js";
export { createDecoder, supportedProviders, UnsupportedProviderError } from "./providers/registry.js";
export type { StreamingDecoder } from "./providers/codec.js";
export { detectProvider, ProviderDetectionError } from "./providers/detect.js";
export { createByteDecoder, type ByteDecoder, type ByteDecoderOptions } from "./adapters/bytes.js";
export { decodeStream, decodeStreamBatches, collectTurn, type StreamSource, type StreamSourceFor, type DecodeStreamOptions } from "./adapters/web.js";
export { record, type Recording, type RecordSink, type RecordOptions } from "./adapters/record.js";
export { DEFAULT_IDLE_TIMEOUT_MS, type WatchdogOptions } from "./adapters/watchdog.js";
export type { AnthropicStreamEventLike, OpenAIChatChunkLike, OpenAIResponsesEventLike, SdkEventOf } from "./adapters/sdk.js";
export { createSseFramer, encodeSse, type SseFramer } from "./framing/sse.js";
export { createNdjsonFramer } from "./framing/ndjson.js";
export { parseRecords, serializeRecords, RecordFormatError, type RecordedStream } from "./framing/records.js";
export { IncrementalJsonParser, scanJson, type IncrementalJsonOptions } from "./json/incremental.js";
export { finalizeArguments, type ArgumentSources, type FinalizeContext, type FinalizeResult } from "./json/finalize.js";
export { replayEvents, toReplayJson, type ReplayInput, type ReplayJsonLine, type ReplayJsonCall } from "./replay.js";
export { DEFAULT_LIMITS, TooDeepError, type DecoderLimits } from "./limits.js";
export { createJsonArrayFramer } from "./framing/json-array.js";
export { createEventStreamFramer, EventStreamError, encodeEventStreamMessage, type EventStreamMessage } from "./framing/aws-eventstream.js";
export { expectedStreamOf, type Expectation, type ExpectedStream, type ExpectedCall } from "./conformance/expectation.js";

// Re-encoders: a decoded stream written back in its own protocol, fixed calls rewritten (the repairing fetch, `toolwire/fetch`, uses them).
export { createReencoder, createReencodingStream, createAnthropicReencoder, createOpenAIChatReencoder, createOpenAIResponsesReencoder, createOllamaReencoder, createBedrockReencoder, createBedrockInvokeReencoder, createGeminiReencoder, type GeminiReencoderOptions, REENCODED_PROVIDERS, type Reencoder, type RepairReport, repairWholeResponse, type WholeResponseOptions, type WholeResponseRepair } from "./reencode/index.js";

// Tool calls written into assistant text (servers without a tool parser): the extractor behind `textCalls`.
export * from "./text-calls/index.js";

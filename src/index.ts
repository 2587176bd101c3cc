// Public surface: re-exports only.
export * from "./types.js";
export { createDecoder, supportedProviders, UnsupportedProviderError } from "./providers/registry.js";
export type { StreamingDecoder } from "./providers/codec.js";
export { detectProvider, ProviderDetectionError } from "./providers/detect.js";
export { createByteDecoder, type ByteDecoder, type ByteDecoderOptions } from "./adapters/bytes.js";
export { decodeStream, collectTurn, type StreamSource, type StreamSourceFor, type DecodeStreamOptions } from "./adapters/web.js";
export { record, type Recording, type RecordSink, type RecordOptions } from "./adapters/record.js";
export type { WatchdogOptions } from "./adapters/watchdog.js";
export type { AnthropicStreamEventLike, OpenAIChatChunkLike, OpenAIResponsesEventLike, SdkEventOf } from "./adapters/sdk.js";
export { createSseFramer, encodeSse, type SseFramer } from "./framing/sse.js";
export { createNdjsonFramer } from "./framing/ndjson.js";
export { parseRecords, serializeRecords, RecordFormatError, type RecordedStream } from "./framing/records.js";
export { IncrementalJsonParser, scanJson, type IncrementalJsonOptions } from "./json/incremental.js";
export { finalizeArguments, type ArgumentSources, type FinalizeContext, type FinalizeResult } from "./json/finalize.js";
export { replayEvents, toReplayJson, type ReplayInput, type ReplayJsonLine, type ReplayJsonCall } from "./replay.js";
export { DEFAULT_LIMITS, type DecoderLimits } from "./limits.js";
export { createJsonArrayFramer } from "./framing/json-array.js";
export { createEventStreamFramer, EventStreamError, encodeEventStreamMessage, type EventStreamMessage } from "./framing/aws-eventstream.js";
export { expectedStreamOf, type Expectation, type ExpectedStream, type ExpectedCall } from "./conformance/expectation.js";

// Tool calls written into assistant text (servers without a tool parser): the extractor behind `textCalls`.
export * from "./text-calls/index.js";

// History: pairing check/repair, encoding and conversion across the five history formats.
export {
  checkHistory,
  repairHistory,
  convertHistory,
  encodeTurn,
  encodeToolResults,
  toNeutral,
  fromNeutral,
  HISTORY_FORMATS,
  isHistoryFormat,
  FAULT_CODES,
  EDIT_CODES,
  DANGLING_RESULT_TEXT,
  INVALID_ARGUMENTS_KEY,
  readInvalidArgumentsPlaceholder,
  type HistoryFormat,
  type Fault,
  type FaultCode,
  type Edit,
  type EditCode,
  type HistoryOptions,
  type RepairPolicy,
  type RepairResult,
  type ConvertResult,
  type EncodeTurnOptions,
  type EncodedTurn,
  type ToolResultInput,
  type IdMap,
  type Message as HistoryMessage,
  type Part as HistoryPart,
  type Role as HistoryRole,
} from "./history/index.js";
export { classifyProviderError, providerErrorRules, type ProviderErrorReason, type Recovery, type ClassifyOptions } from "./guard/provider-errors.js";

// Tool schemas: validation written for the model, per-target sanitizing and checking.
export {
  validateArguments,
  coerceArguments,
  sanitizeSchema,
  checkSchema,
  restoreToolArguments,
  carryToolArguments,
  buildExample,
  SCHEMA_TARGETS,
  UnknownTargetError,
  type ValidationResult,
  type ValidationIssue,
  type SanitizeResult,
  type SchemaChange,
  type SchemaProblem,
  type SchemaTarget,
} from "./schema/index.js";
export { createLoopGuard, type LoopGuard, type LoopGuardOptions, type GuardDecision, type GuardAction } from "./guard/loop-guard.js";
export { createOutcomeLedger, type OutcomeLedger, type OutcomeEntry } from "./guard/outcome-ledger.js";

import type { DecoderLimits } from "./limits.js";
import type { TextCallSetting } from "./text-calls/options.js";
import type { DiagnosticCode } from "./diagnostics/codes.js";

/**
 * The data model shared by every decoder, the assembler, the CLI and the adapters.
 * Everything here is plain JSON-serializable data so that a DecodedTurn can be stored,
 * diffed and replayed.
 */

/** The wire protocols toolwire decodes, by name (`ProviderName` is one of them). */
export const PROVIDERS = ["anthropic", "openai-chat", "openai-responses", "gemini", "bedrock", "ollama"] as const;
/** One of `PROVIDERS`: a wire protocol toolwire decodes. */
export type ProviderName = (typeof PROVIDERS)[number];

/** True when `value` is one of `PROVIDERS`. */
export function isProviderName(value: unknown): value is ProviderName {
  return typeof value === "string" && (PROVIDERS as readonly string[]).includes(value);
}

/** One framed event as it came off the wire: the SSE event name (if any) and the payload. */
export interface ProviderEvent {
  /** SSE `event:` name, Bedrock `:event-type`, or undefined when the framing has none. */
  event?: string | undefined;
  /** Parsed JSON payload, or the raw string when the payload is not JSON (e.g. `[DONE]`). */
  data: unknown;
}

/** Where a call's final arguments came from (docs/design.md, "Argument sources and precedence"). */
export type ArgumentSource = "start" | "delta" | "final" | "merged" | "empty" | "text" | "failed_generation";

/**
 * Named fixes applied to a call's arguments. Every value that differs from a strict parse of a
 * single source carries at least one of these.
 */
export type RepairCode =
  | "collapsed_duplicate"
  | "cumulative_resend"
  | "start_continuation"
  | "decoded_string"
  | "strip_code_fence"
  | "strip_special_tokens"
  | "python_literals"
  | "invalid_escapes"
  | "trailing_comma"
  /** Single-quoted strings (Python reprs) written with double quotes; their content unchanged. */
  | "single_quotes"
  /** A complete call whose text lacked only the outer object's closing brace. */
  | "missing_closing_brace"
  /** jsonrepair's rewrite, accepted only when verified lossless (e.g. a bare word or single-quoted string quoted). */
  | "jsonrepair"
  /** Two different complete objects glued at one index became two calls (the second has a minted id). */
  | "split_concatenated_calls"
  /** The call's id was replaced by a minted one (duplicate or placeholder id); `providerId` keeps the sent one. */
  | "minted_id";

/** Why a call has no usable arguments. */
export type ToolCallErrorCode =
  | "invalid_json"
  | "truncated"
  | "not_object"
  /** The arguments exceeded `limits.maxArgumentChars`; the rest was not kept. */
  | "too_large"
  /** The arguments nest deeper than `limits.maxDepth`. */
  | "too_deep"
  /** A number a double cannot hold as written: beyond ±1.8e308, or an integer literal beyond ±2^53 it would give back with other digits. */
  | "number_out_of_range";

/** Why a call never reached its end marker. */
export type TruncationCause =
  | "max_tokens"
  | "stream_ended"
  | "stream_error"
  | "aborted"
  | "message_restarted"
  | "limit_exceeded"
  /** A call written in text whose markup broke off before the call's end (see `textCalls`). */
  | "markup_broken";

/** Why a call's arguments are null, with a message written for the model. */
export interface ToolCallError {
  code: ToolCallErrorCode;
  /** Written for the model: what was wrong, where, and what a valid call looks like. */
  message: string;
  /** Byte-independent character offset into rawArguments where parsing failed, when known. */
  position?: number;
  cause?: TruncationCause;
  /**
   * A lossy repair's candidate (it drops, invents or reorders tokens), never used as `arguments`:
   * shown to the model or the user, who decide.
   */
  suggestion?: Record<string, unknown>;
}

/**
 * A tool call as decoded: identity, the arguments (an object, or null when unusable), the raw text,
 * which source won, whether it completed, and every repair, as named codes.
 */
export interface ToolCall {
  /** Position of the call among the turn's calls of its kind, in the order they opened. */
  index: number;
  /** Unique within the turn: a duplicate or placeholder id sent by the provider is replaced by a minted one. */
  id: string;
  /** The id the provider sent, when `id` differs from it (minted for a duplicate); absent otherwise. */
  providerId?: string;
  name: string;
  /** The finalized arguments object, or null when the call is truncated or invalid. */
  arguments: Record<string, unknown> | null;
  /** The text the arguments were taken from (for `final`/`start` objects: their JSON). */
  rawArguments: string;
  source: ArgumentSource | null;
  /** True when the provider sent the call's end marker. False calls are never executable. */
  complete: boolean;
  repairs: RepairCode[];
  error: ToolCallError | null;
  /** Provider block/item position (Anthropic block index, Responses output_index, …). */
  providerIndex?: number;
  /** "server" for provider-executed tools (Anthropic server_tool_use): never for the client to run. */
  kind?: "client" | "server";
  /** Opaque provider fields that must be sent back (e.g. Gemini thoughtSignature, Anthropic caller). */
  providerFields?: Record<string, unknown>;
  /** For calls extracted from text (`source: "text"` or `"failed_generation"`): the syntax name, e.g. "hermes". */
  textSyntax?: string;
}

/** Why the turn ended, normalized across providers (`rawFinishReason` keeps the provider's value). */
export type FinishReason = "tool_calls" | "stop" | "length" | "content_filter" | "error" | "other";

/**
 * `complete` when the stream ended properly, `incomplete` when it was cut short, `error` when the
 * provider sent an error.
 */
export type TurnStatus = "complete" | "incomplete" | "error";

/** Token usage, normalized across providers, with the provider's own object in `raw`. */
export interface Usage {
  inputTokens?: number;
  outputTokens?: number;
  totalTokens?: number;
  cacheReadInputTokens?: number;
  cacheCreationInputTokens?: number;
  reasoningTokens?: number;
  /** The provider's usage object as last received (cumulative providers: the last snapshot). */
  raw: unknown;
}

/** How serious a diagnostic is. */
export type DiagnosticSeverity = "info" | "warning" | "error";

/** Something the decoder noticed and did about the stream, with a stable `code`. */
export interface Diagnostic {
  /** One of the codes of `DIAGNOSTIC_CODES` (docs/reference/codes.md). */
  code: DiagnosticCode;
  message: string;
  severity?: DiagnosticSeverity;
  /** Index of the call the diagnostic is about (ToolCall.index), when there is one. */
  callIndex?: number;
  /** Provider block/item index, when there is one. */
  providerIndex?: number;
  data?: unknown;
}

/** Content blocks in order, as needed to replay the turn into a history. */
export type ContentBlock =
  | { type: "text"; text: string; citations?: unknown[]; providerIndex?: number }
  | { type: "thinking"; thinking: string; signature: string | null; providerIndex?: number }
  | { type: "redacted_thinking"; data: string; providerIndex?: number }
  | { type: "reasoning"; text: string; id?: string; encryptedContent?: string; summary?: string[]; providerIndex?: number }
  | { type: "tool_call"; callIndex: number; providerIndex?: number }
  | { type: "server_tool_call"; callIndex: number; providerIndex?: number }
  /** Provider-executed tool results and other blocks that arrive whole; kept verbatim. */
  | { type: "opaque"; blockType: string; value: unknown; providerIndex?: number };

/** An error the provider reported in the stream (the turn's `error`). */
export interface TurnError {
  type: string;
  message: string;
  raw?: unknown;
}

/**
 * Everything one streamed turn said: status, finish reason, text, reasoning, client and server tool
 * calls, blocks in order, usage and diagnostics.
 */
export interface DecodedTurn {
  /** Name of the recorded sequence this turn came from, or null for a live stream. */
  sequence: string | null;
  provider: ProviderName;
  status: TurnStatus;
  finishReason: FinishReason | null;
  /** The provider's own stop/finish value, verbatim. */
  rawFinishReason: string | null;
  text: string;
  /** Reasoning/thinking text, kept apart from `text`. */
  reasoning: string;
  toolCalls: ToolCall[];
  /** Provider-executed calls (Anthropic server_tool_use): reported, never for the client to run. */
  serverToolCalls: ToolCall[];
  blocks: ContentBlock[];
  usage: Usage | null;
  messageId: string | null;
  model: string | null;
  error: TurnError | null;
  diagnostics: Diagnostic[];
}

/** Events emitted by the push core as the stream is decoded. */
export type CodecEvent =
  | { type: "message_start"; messageId: string | null; model: string | null }
  /** `index`: the block's position in `DecodedTurn.blocks` (unique per block, in every provider). */
  | { type: "text_delta"; index: number; text: string }
  | { type: "reasoning_delta"; index: number; text: string }
  | { type: "tool_call_start"; index: number; id: string; name: string; kind: "client" | "server" }
  | {
      type: "tool_call_delta";
      index: number;
      id: string;
      delta: string;
      kind: "client" | "server";
      /**
       * Live partial arguments (only with `previews: true`). The same object is updated in place
       * by every delta of the call: copy it if you need a snapshot.
       */
      preview?: unknown;
    }
  /**
   * The finalized call. Emitted at once for a call whose arguments parse strictly; for a call that
   * closed with arguments needing a text repair or not parsing, it waits for the end of the turn,
   * whose stop reason decides between `invalid_json` and `truncated` (cause `max_tokens`). Calls
   * split off a glued call (`split_concatenated_calls`) get a `tool_call_start` and this event
   * right after the call they came from.
   */
  | { type: "tool_call_end"; call: ToolCall }
  | { type: "diagnostic"; diagnostic: Diagnostic }
  | { type: "finish"; turn: DecodedTurn };

/** Options of `createDecoder`: previews, the sequence name and the limits. */
export interface DecoderOptions {
  /** Maintain a live partial value of each call's arguments on every delta event. */
  previews?: boolean;
  /** Name stamped on the DecodedTurn (`sequence`). */
  sequence?: string | null;
  /** Maximum nesting depth the preview parser follows (deeper content is still kept as text). */
  maxPreviewDepth?: number;
  /** Hostile-input bounds; see `DEFAULT_LIMITS` for the defaults. */
  limits?: DecoderLimits;
  /**
   * Extract tool calls the model wrote into its text (servers without a tool parser): `"auto"`,
   * a list of syntax names, or `TextCallOptions` (tool names and schemas, reasoning). Off when absent.
   */
  textCalls?: TextCallSetting;
  /**
   * Whether the decoded turn keeps the text and reasoning it received (default true). `false` is
   * for consumers that only need the events (a relay: the proxy's re-encoder): deltas are still
   * emitted, but not accumulated, so memory stays with the calls not yet decided rather than
   * growing with the turn, and text no longer counts toward `limits.maxTurnChars`; the turn's
   * `text`, `reasoning` and text blocks are then empty.
   */
  retainText?: boolean;
}

/** The synchronous push core: no I/O, no timers, deterministic. */
export interface Decoder {
  readonly provider: ProviderName;
  push(event: ProviderEvent): CodecEvent[];
  /** Ends the stream: finalizes every call and returns the turn. Idempotent. */
  finish(): DecodedTurn;
}

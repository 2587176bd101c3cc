import type { DecodedTurn, DecoderOptions, ProviderName } from "../types.js";

/**
 * One change toolwire made to what passes between a client and a provider, or one finding it
 * attached (a classified error). `code` is the code the rest of toolwire uses for the same thing:
 * a call's RepairCode (`cumulative_resend`, `minted_id`, …) or error code (`truncated`,
 * `invalid_json`), a history EditCode, a schema rule id, a decoder diagnostic code, or a
 * ProviderErrorReason.
 */
export interface RepairReport {
  /** `request`: the request body; `response`: the streamed response; `recovery`: a retry after a provider error. */
  stage: "request" | "response" | "recovery";
  /**
   * `rewritten`: a call's events were replaced by an equivalent well-formed encoding;
   * `withheld`: a truncated or invalid call was not delivered; `normalized`: a protocol-level fix
   * (a missing message_start, finish_reason or role, a keep-alive sent as data, renumbered blocks);
   * `edited`: a history edit; `sanitized`: a tool schema change; `retried`: the request was sent
   * again after a recoverable error; `classified`: an error passed through, with its reason.
   */
  action: "rewritten" | "withheld" | "normalized" | "edited" | "sanitized" | "retried" | "classified";
  /** What was changed or found, as the code the rest of toolwire uses for it (see above, and docs/reference/codes.md). */
  code: string;
  /** The change in a sentence, for a person or a model. */
  message: string;
  /** The protocol of the request or response. */
  provider?: ProviderName;
  /** A call's change: the call's index in the decoded turn. */
  callIndex?: number;
  /** A call's change: its id, after repair. */
  id?: string;
  /** A call's change: the id the provider sent, when it differs from `id`. */
  providerId?: string;
  /** A call's change: its tool name. */
  name?: string;
  /** A history edit: the index of the message it concerns. */
  messageIndex?: number;
  /** A schema change: the tool whose schema it concerns. */
  tool?: string;
  /**
   * The id of the request the repair belongs to (`x-request-id`, the client's or one minted):
   * set by `toolwire proxy` on every report its `onRepair` receives, so that a repair can be
   * traced to its request (the log line, `x-toolwire-repairs`). Absent elsewhere.
   */
  requestId?: string;
}

/** A re-encoder: the provider's wire events in, the same protocol's events out (see `createReencoder`). */
export interface Reencoder {
  readonly provider: ProviderName;
  /** Feeds body bytes; returns the bytes that can be forwarded now. */
  push(chunk: Uint8Array): Uint8Array[];
  /** The body ended: returns what was still held (held calls are decided now). */
  flush(): Uint8Array[];
  /**
   * The same as `flush`, its former name.
   * @deprecated Use `flush`: toolwire's stages all say `push` and `flush` (`finish` only where a result is returned).
   */
  end(): Uint8Array[];
  /** The turn as toolwire decoded the upstream stream (after `flush`). */
  readonly turn: DecodedTurn | null;
  /** Every change made so far. */
  readonly repairs: readonly RepairReport[];
}

/** Options of `createReencoder`: the decoder options, and two choices some providers' wires need. */
export interface ReencoderOptions extends DecoderOptions {
  /**
   * Gemini only: put toolwire's id on a call Gemini sent without one (default true), so that the
   * client's calls carry the ids of toolwire's turn. Set it to false for Vertex AI, whose
   * FunctionCall has no `id` field (a history sent back with one is refused with a 400).
   */
  addMissingIds?: boolean;
  /**
   * The body's framing when it is not the provider's own: `"aws-eventstream"` for Anthropic
   * Messages events inside Bedrock's binary event stream (InvokeModelWithResponseStream, Claude on
   * Bedrock). Only `anthropic` takes it (`bedrock` is always an event stream); any other
   * combination throws a ToolwireError with code `unsupported_framing`.
   */
  framing?: "aws-eventstream";
}

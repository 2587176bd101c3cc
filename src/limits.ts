/**
 * Bounds on what one stream may make toolwire hold. Streams come from proxies and local servers of
 * every quality; each bound turns a hostile or broken stream into a typed error or a diagnostic
 * instead of unbounded memory or a stack overflow further down (JSON.stringify recurses).
 */
export interface DecoderLimits {
  /** Characters of argument text kept per call (default 16 MiB). Beyond it the call fails with `too_large`. */
  maxArgumentChars?: number;
  /** Nesting depth of a call's arguments (default 256). Deeper arguments fail with `too_deep`. */
  maxDepth?: number;
  /** Calls per turn (default 1024); later calls are dropped with a diagnostic. */
  maxCallsPerTurn?: number;
  /** Characters of text, reasoning and arguments held per turn (default 256 MiB); then decoding stops. */
  maxTurnChars?: number;
  /** Longest SSE line or pending event in characters (default 64 MiB); then framing stops. */
  maxLineChars?: number;
}

/**
 * The default decoder limits (see the README's Reliability section); override any of them with
 * `limits` in the decoder options.
 */
export const DEFAULT_LIMITS: Required<DecoderLimits> = {
  maxArgumentChars: 16 * 1024 * 1024,
  maxDepth: 256,
  maxCallsPerTurn: 1024,
  maxTurnChars: 256 * 1024 * 1024,
  maxLineChars: 64 * 1024 * 1024,
};

export function resolveLimits(limits: DecoderLimits | undefined): Required<DecoderLimits> {
  return { ...DEFAULT_LIMITS, ...(limits ?? {}) };
}

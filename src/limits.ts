import { ToolwireError } from "./errors.js";

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
  /** Longest SSE line or pending event, NDJSON line or JSON-array element, in characters (default 64 MiB); then framing stops. */
  maxLineChars?: number;
}

/**
 * The default decoder limits (each is explained on `DecoderLimits`, and in docs/providers.md,
 * "Limits"); override any of them with `limits` in the decoder options.
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

/**
 * Input nested deeper than toolwire walks. The walks over histories and schemas recurse, so a
 * value nested thousands of levels deep would overflow the stack; it is refused before any walk.
 */
export class TooDeepError extends ToolwireError {
  constructor(
    /** What was refused: `history`, `schema`. */
    readonly what: string,
    /** The deepest nesting accepted. */
    readonly limit: number,
  ) {
    super("too_deep", `The ${what} nests more than ${limit} levels deep, deeper than toolwire accepts; nothing was processed.`);
  }
}

/** Reused by every call: the depth check runs on every event, so it allocates nothing per node. */
const depthNodes: unknown[] = [];
const depthLevels: number[] = [];

/**
 * True when `value` nests deeper than `max` levels (an object or array is one level). Iterative,
 * and stops at the first branch that proves it.
 */
export function nestsDeeperThan(value: unknown, max: number): boolean {
  if (typeof value !== "object" || value === null) return false;
  // An explicit stack with a top index: resetting an array's length on every event cost more
  // than the walk itself on streams of tiny deltas.
  let top = 0;
  depthNodes[top] = value;
  depthLevels[top] = 1;
  top++;
  while (top > 0) {
    top--;
    const node = depthNodes[top] as object;
    const level = depthLevels[top] as number;
    depthNodes[top] = undefined;
    if (level > max) {
      for (let i = 0; i < top; i++) depthNodes[i] = undefined;
      return true;
    }
    if (Array.isArray(node)) {
      for (const child of node) {
        if (typeof child === "object" && child !== null) {
          depthNodes[top] = child;
          depthLevels[top] = level + 1;
          top++;
        }
      }
    } else {
      for (const key in node) {
        const child = (node as Record<string, unknown>)[key];
        if (typeof child === "object" && child !== null) {
          depthNodes[top] = child;
          depthLevels[top] = level + 1;
          top++;
        }
      }
    }
  }
  return false;
}

// Marks toolwire's errors so that a copy of the package loaded twice (ESM and CommonJS) still
// recognizes them: `instanceof` cannot.
const BRAND = Symbol.for("toolwire.error");

/**
 * The one base class of every error toolwire throws. `code` is a stable snake_case string a caller
 * can switch on (`err instanceof ToolwireError && err.code === "unknown_target"`); the message is
 * for people. Wrapped errors are kept as `cause`. Across two loaded copies of the package use
 * `isToolwireError`.
 */
export class ToolwireError extends Error {
  /** Stable machine-readable code, snake_case. */
  readonly code: string;

  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.name = new.target.name;
    Object.defineProperty(this, BRAND, { value: true });
  }
}

/**
 * True for any error toolwire threw, also when two copies of the package are loaded (an ESM and a
 * CommonJS copy, or two versions), where `instanceof` fails.
 */
export function isToolwireError(value: unknown): value is ToolwireError {
  return value instanceof ToolwireError || (typeof value === "object" && value !== null && (value as Record<symbol, unknown>)[BRAND] === true);
}

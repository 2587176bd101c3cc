import type { Diagnostic } from "../types.js";
import { ToolwireError } from "../errors.js";

/**
 * The idle timeout `decodeStream` and `collectTurn` apply when the caller sets none: 120 s
 * without a chunk ends the turn `incomplete` (`idle_timeout`), so a hung stream never hangs an
 * agent. Reasoning models can think silently for a while, but providers send keep-alives (SSE
 * `ping` events and comments count as data) well within this.
 */
export const DEFAULT_IDLE_TIMEOUT_MS = 120_000;

/**
 * Stall protection for `decodeStream` and `collectTurn`: an idle timeout (on by default), a
 * deadline and an abort signal; each ends the turn `incomplete` with its open calls truncated,
 * never hangs it. The push core has no timers by design; this lives in the async adapter layer and
 * uses only `setTimeout` and `AbortSignal`, so it runs in browsers and edge runtimes as well as Node.
 */
export interface WatchdogOptions {
  /**
   * Longest wait for the next chunk, in ms. Time the consumer spends between reads does not count.
   * In `decodeStream` and `collectTurn` it defaults to {@link DEFAULT_IDLE_TIMEOUT_MS} (120 s);
   * `0` turns it off.
   */
  idleTimeoutMs?: number;
  /** Longest time for the whole stream, in ms from the start of decoding. */
  deadlineMs?: number;
  /** Ends the turn when aborted, as a timeout does. */
  signal?: AbortSignal;
}

export type StopCode = "idle_timeout" | "deadline_exceeded" | "aborted";

export interface Stop {
  code: StopCode;
  diagnostic: Diagnostic;
  /** The value to cancel the source with: the signal's reason, or an Error naming the timeout. */
  reason: unknown;
}

const STOPPED: unique symbol = Symbol("toolwire.watchdog.stopped");
export type Stopped = typeof STOPPED;

export function isStopped(value: unknown): value is Stopped {
  return value === STOPPED;
}

function validDuration(name: string, value: number | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== "number" || Number.isNaN(value) || value < 0) {
    throw new ToolwireError("invalid_option", `${name} must be a non-negative number of milliseconds, got ${String(value)}`);
  }
  return value;
}

function describeReason(reason: unknown): string {
  if (reason instanceof Error) return reason.message;
  if (reason === undefined) return "no reason given";
  return typeof reason === "string" ? reason : String(reason);
}

/**
 * Races each read of a source against an idle timer, a deadline and a signal. After the first
 * stop every wait resolves at once with `STOPPED`; `dispose` clears the timers and the listener.
 */
export class Watchdog {
  private stop: Stop | null = null;
  private wake: (() => void) | null = null;
  private idleTimer: ReturnType<typeof setTimeout> | undefined;
  private deadlineTimer: ReturnType<typeof setTimeout> | undefined;
  private readonly idleTimeoutMs: number | undefined;
  private readonly signal: AbortSignal | undefined;
  private readonly onAbort = (): void => {
    const reason = this.signal?.reason;
    this.trip({
      code: "aborted",
      reason,
      diagnostic: {
        code: "aborted",
        severity: "error",
        message: `The stream was aborted through its AbortSignal (${describeReason(reason)}); the turn is incomplete and its open calls are truncated.`,
      },
    });
  };

  constructor(
    options: WatchdogOptions,
    private readonly onStop: (stop: Stop) => void,
  ) {
    this.idleTimeoutMs = validDuration("idleTimeoutMs", options.idleTimeoutMs);
    const deadlineMs = validDuration("deadlineMs", options.deadlineMs);
    this.signal = options.signal;
    if (deadlineMs !== undefined) {
      this.deadlineTimer = setTimeout(() => {
        const message = `The stream did not end within its deadline of ${deadlineMs} ms; the turn is incomplete and its open calls are truncated.`;
        this.trip({ code: "deadline_exceeded", reason: new ToolwireError("deadline_exceeded", message), diagnostic: { code: "deadline_exceeded", severity: "error", message, data: { deadlineMs } } });
      }, deadlineMs);
    }
    if (this.signal) {
      if (this.signal.aborted) this.onAbort();
      else this.signal.addEventListener("abort", this.onAbort, { once: true });
    }
  }

  /** Whether any bound is set; without one, reads need no racing at all. */
  static needed(options: WatchdogOptions): boolean {
    return options.idleTimeoutMs !== undefined || options.deadlineMs !== undefined || options.signal !== undefined;
  }

  get stopped(): Stop | null {
    return this.stop;
  }

  /** The read's result, or `STOPPED` if a bound tripped first (the read is then left to settle unobserved). */
  race<T>(read: Promise<T>): Promise<T | Stopped> {
    if (this.stop) {
      read.catch(() => {});
      return Promise.resolve(STOPPED);
    }
    // One promise per read and a reused timer callback: this runs once per chunk (once per event
    // for an SDK stream), so it avoids Promise.race and a closure per read. Whichever settles it
    // first wins; a read that fails after a stop is handled here and ignored.
    return new Promise<T | Stopped>((resolve, reject) => {
      this.wake = () => resolve(STOPPED);
      if (this.idleTimeoutMs !== undefined) this.idleTimer = setTimeout(this.onIdle, this.idleTimeoutMs);
      read.then(
        (value) => {
          this.settled();
          resolve(value);
        },
        (error: unknown) => {
          this.settled();
          reject(error);
        },
      );
    });
  }

  private readonly onIdle = (): void => {
    const idle = this.idleTimeoutMs as number;
    const message = `No data arrived for ${idle} ms (idle timeout); the turn is incomplete and its open calls are truncated.`;
    this.trip({ code: "idle_timeout", reason: new ToolwireError("idle_timeout", message), diagnostic: { code: "idle_timeout", severity: "error", message, data: { idleTimeoutMs: idle } } });
  };

  private settled(): void {
    if (this.idleTimer !== undefined) {
      clearTimeout(this.idleTimer);
      this.idleTimer = undefined;
    }
    this.wake = null;
  }

  private trip(stop: Stop): void {
    if (this.stop) return;
    this.stop = stop;
    this.clear();
    this.wake?.();
    this.onStop(stop);
  }

  private clear(): void {
    clearTimeout(this.idleTimer);
    clearTimeout(this.deadlineTimer);
    this.idleTimer = undefined;
    this.deadlineTimer = undefined;
    this.signal?.removeEventListener("abort", this.onAbort);
  }

  dispose(): void {
    this.clear();
  }
}

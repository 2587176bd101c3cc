import { TurnBuilder, type TurnEnd } from "../assemble/turn.js";
import type { DiagnosticCode } from "../diagnostics/codes.js";
import { provablyShallow, SHALLOW_DEPTH } from "../framing/framed-event.js";
import { nestsDeeperThan, resolveLimits } from "../limits.js";
import type { CodecEvent, DecodedTurn, Decoder, DecoderOptions, Diagnostic, ProviderEvent, ProviderName, TruncationCause, TurnStatus } from "../types.js";

// The whole-response re-encoders import the depth check from here.
export { nestsDeeperThan } from "../limits.js";

/**
 * What a provider contributes: how to read one wire event into the turn builder, and what the end
 * of the stream means. Everything else (event draining, finishing once, ignoring late events,
 * never throwing out of push) is shared by `wrapCodec`.
 */
export interface ProviderCodec {
  push(event: ProviderEvent): void;
  /** The stream is over: what the codec still holds goes to the turn; returns the turn's status and why calls still open are truncated. */
  flush(): TurnEnd;
  /** Whether a call that received no argument text at all means "no arguments" in this protocol. */
  readonly emptyMeansNoArguments: boolean;
}

/**
 * The turn's status at the end of the stream: complete when the provider sent its end signal
 * (`ended`); else incomplete, reported as ended before that signal (`missing`) or before any event.
 */
export function endStatus(turn: TurnBuilder, ended: boolean, started: boolean, missing: { code: DiagnosticCode; message: string; empty: string }): TurnStatus {
  const status: TurnStatus = turn.hasError ? "error" : ended ? "complete" : "incomplete";
  if (status === "incomplete") turn.diagnostic({ code: started ? missing.code : "empty_stream", severity: "warning", message: started ? missing.message : missing.empty });
  return status;
}

export type CodecFactory = (turn: TurnBuilder, options: DecoderOptions) => ProviderCodec;

/** A decoder that can also hand over the events produced while finishing. */
export interface StreamingDecoder extends Decoder {
  /** Like `push`, appending the events to `sink` instead of returning a new array. */
  pushInto(event: ProviderEvent, sink: CodecEvent[]): void;
  /** Ends the input and returns the trailing events (truncated calls, diagnostics, `finish`). Idempotent. */
  flush(): CodecEvent[];
  /** @deprecated The former name of `flush`. */
  end(): CodecEvent[];
  /**
   * Ends the stream on the consumer's side (a timeout, an AbortSignal, a source that failed): like
   * `flush`, with `diagnostic` recorded first, and, unless the provider had already ended the turn
   * (complete or error), the turn is `incomplete` and open calls are truncated with `cause`.
   * A no-op after the decoder finished.
   */
  abort(diagnostic: Diagnostic, cause?: TruncationCause): CodecEvent[];
}

export function wrapCodec(provider: ProviderName, factory: CodecFactory, options: DecoderOptions = {}): StreamingDecoder {
  const turn = new TurnBuilder(provider, options);
  // Below this, decoders see the event and fail a too-deep call by itself (too_deep); above it,
  // JSON.stringify of the event would risk the stack, so the event never reaches a decoder.
  // Never below SHALLOW_DEPTH: framed events proven shallower than that skip the walk.
  const maxEventDepth = Math.max(resolveLimits(options.limits).maxDepth + 16, SHALLOW_DEPTH);
  let lateEvents: { count: number } | null = null;
  const codec = factory(turn, options);
  let result: DecodedTurn | null = null;

  const flush = (abortedBy?: { diagnostic: Diagnostic; cause: TruncationCause }): CodecEvent[] => {
    if (result) return [];
    if (abortedBy) turn.diagnostic(abortedBy.diagnostic);
    let outcome: TurnEnd;
    try {
      outcome = codec.flush();
    } catch (error) {
      turn.diagnostic(internalError(error, "end"));
      outcome = { status: "incomplete", truncationCause: "stream_ended" };
    }
    // A turn the provider had already ended keeps its status: only the wait for the connection to
    // close was cut short, and calling that turn incomplete would make an agent drop a good turn.
    if (abortedBy && outcome.status === "incomplete") outcome = { status: "incomplete", truncationCause: abortedBy.cause };
    const finished = turn.finish(outcome, codec.emptyMeansNoArguments);
    result = finished.turn;
    return finished.events;
  };

  const pushInto = (event: ProviderEvent, sink: CodecEvent[]): void => {
    if (result) {
      // The turn is already handed out: report on it (once, with a count), but do not change its content.
      if (lateEvents) lateEvents.count++;
      else {
        lateEvents = { count: 1 };
        result.diagnostics.push({ code: "event_after_finish", severity: "warning", message: "Events arrived after the decoder finished; they were ignored.", data: lateEvents });
      }
      return;
    }
    // No tool call can nest this deep and be accepted (limits.maxDepth), and every decoder would
    // otherwise have to guard each JSON.stringify of a whole object against a stack overflow.
    const tooDeep = !provablyShallow(event) && nestsDeeperThan(event.data, maxEventDepth);
    const own = turn.redirectTo(sink);
    try {
      if (tooDeep) {
        const message = `An event nests deeper than ${maxEventDepth} levels, far past what any call may hold (limits.maxDepth); it was ignored.`;
        turn.diagnostic({ code: "event_too_deep", severity: "error", message, data: { event: event.event ?? null } });
      } else codec.push(event);
    } catch (error) {
      // A decoder bug must not take the stream down: report it and keep going.
      turn.diagnostic(internalError(error, "push", event));
    } finally {
      turn.restoreSink(own);
    }
  };

  return {
    provider,
    pushInto,
    push(event) {
      const sink: CodecEvent[] = [];
      pushInto(event, sink);
      return sink;
    },
    flush: () => flush(),
    end: () => flush(),
    abort: (diagnostic, cause = "aborted") => flush({ diagnostic, cause }),
    finish() {
      flush();
      return result as DecodedTurn;
    },
  };
}

function internalError(error: unknown, where: string, event?: ProviderEvent) {
  return {
    code: "internal_error" as const,
    severity: "error" as const,
    message: `toolwire failed while handling ${where === "push" ? "an event" : "the end of the stream"}: ${error instanceof Error ? error.message : String(error)}. Please report this with the recorded stream.`,
    data: event,
  };
}


import type { Diagnostic, ProviderEvent, ProviderName } from "../types.js";
import { createEventStreamFramer, EventStreamError, eventStreamDiagnostic, toProviderEvent, unwrapInvokeModelChunk, type EventStreamMessage } from "./aws-eventstream.js";
import { createJsonArrayFramer } from "./json-array.js";
import { createNdjsonFramer } from "./ndjson.js";
import { createSseFramer } from "./sse.js";
import { ToolwireError } from "../errors.js";

export type FramingName = "sse" | "ndjson" | "json-array" | "aws-eventstream";

/** Bytes in, provider events out: the layer below every decoder. */
export interface Framer {
  /** Feeds bytes or text; returns the events this chunk completed. */
  push(chunk: Uint8Array | string): ProviderEvent[];
  /** The body ended: returns what was still buffered (a last event without its terminator). */
  flush(): ProviderEvent[];
  /** Framing-level findings (an oversized line or element, a cut or corrupt frame). */
  readonly diagnostics: Diagnostic[];
}

/**
 * The framing each provider uses on the wire. Gemini's other form (no `alt=sse`, one JSON array)
 * is `json-array`, chosen explicitly.
 */
export function defaultFraming(provider: ProviderName): FramingName {
  switch (provider) {
    case "ollama":
      return "ndjson";
    case "bedrock":
      return "aws-eventstream";
    default:
      return "sse";
  }
}

export interface FramerOptions {
  /** `DecoderLimits.maxLineChars`: the longest line, pending event or array element a framer buffers. */
  maxLineChars?: number;
}

export function createFramer(framing: FramingName, options: FramerOptions = {}): Framer {
  switch (framing) {
    case "sse":
      return createSseFramer(options);
    case "ndjson":
      return createNdjsonFramer(options);
    case "json-array":
      return createJsonArrayFramer(options);
    case "aws-eventstream":
      return createAwsEventStreamFramer();
  }
}

/**
 * The binary `application/vnd.amazon.eventstream` body (Bedrock ConverseStream, and
 * InvokeModelWithResponseStream whose `chunk` frames are unwrapped into the model's native
 * events) as provider events.
 *
 * A frame that fails its CRC or cannot be read ends the stream: the events before it are kept, a
 * diagnostic names the failure and its byte offset, and an `error` event reaches the decoder so
 * that the turn's status is `error` (corrupt bytes are never decoded as data). A body cut in the
 * middle of a frame is different: nothing arrived corrupted, the stream just ended, so it is a
 * warning and the turn ends incomplete.
 */
export function createAwsEventStreamFramer(): Framer {
  const frames = createEventStreamFramer();
  const diagnostics: Diagnostic[] = [];
  let failed = false;

  const failure = (error: EventStreamError): ProviderEvent[] => {
    failed = true;
    diagnostics.push(eventStreamDiagnostic(error));
    if (error.code === "truncated") return [];
    // `message` as well, so that decoders reading an Anthropic-style error body show the text.
    return [{ event: "error", data: { errorCode: `eventstream_${error.code}`, errorMessage: error.message, message: error.message, offset: error.offset } }];
  };

  const convert = (messages: EventStreamMessage[]): ProviderEvent[] => {
    const out: ProviderEvent[] = [];
    for (const message of messages) {
      const event = toProviderEvent(message);
      try {
        out.push(unwrapInvokeModelChunk(event) ?? event);
      } catch (error) {
        if (!(error instanceof EventStreamError)) throw error;
        out.push(...failure(error));
        break;
      }
    }
    return out;
  };

  const guarded = (fn: () => EventStreamMessage[]): ProviderEvent[] => {
    if (failed) return [];
    let messages: EventStreamMessage[];
    try {
      messages = fn();
    } catch (error) {
      if (error instanceof EventStreamError) return failure(error);
      throw error;
    }
    return convert(messages);
  };

  return {
    diagnostics,
    push(chunk) {
      if (typeof chunk === "string") {
        throw new ToolwireError("binary_required", "The aws-eventstream framing reads binary bytes: pass Uint8Array chunks, not text (decoding the body as text corrupts it).");
      }
      return guarded(() => frames.push(chunk));
    },
    flush() {
      // A failure stashed while frames before it were handed out surfaces here.
      return guarded(() => frames.flush());
    },
  };
}

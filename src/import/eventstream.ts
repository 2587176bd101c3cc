import {
  base64ToBytes,
  crc32,
  decodeEventStream,
  EventStreamError,
  toProviderEvent,
  unwrapInvokeModelChunk,
} from "../framing/aws-eventstream.js";
import type { ProviderEvent, ProviderName } from "../types.js";
import { ANTHROPIC_MESSAGE_EVENTS } from "../providers/fields.js";
import { ImportError } from "./errors.js";
import { plural } from "./text.js";

const ANTHROPIC_EVENT_TYPES: ReadonlySet<string> = new Set([...ANTHROPIC_MESSAGE_EVENTS, "ping", "error"]);

export interface EventStreamBody {
  events: ProviderEvent[];
  /** `anthropic` when every frame was an InvokeModel chunk holding an Anthropic event, else `bedrock`. */
  provider: ProviderName;
}

/**
 * Decodes a binary event-stream body. InvokeModelWithResponseStream chunk frames are unwrapped
 * into the native events they carry, because no decoder reads the base64 envelope.
 */
export function eventStreamBodyToEvents(bytes: Uint8Array, file: string, label: string, notes: string[]): EventStreamBody {
  let frames;
  try {
    frames = decodeEventStream(bytes);
  } catch (error) {
    if (error instanceof EventStreamError) throw new ImportError(`${label}${error.message}`, "malformed", file);
    throw error;
  }
  let chunks = 0;
  let anthropicChunks = 0;
  let exceptions = 0;
  const events: ProviderEvent[] = [];
  for (const frame of frames) {
    const event = toProviderEvent(frame);
    let inner: ProviderEvent | null;
    try {
      inner = unwrapInvokeModelChunk(event);
    } catch (error) {
      if (error instanceof EventStreamError) throw new ImportError(`${label}frame ${events.length}: ${error.message}`, "malformed", file);
      throw error;
    }
    if (inner) {
      chunks++;
      if (inner.event !== undefined && ANTHROPIC_EVENT_TYPES.has(inner.event)) anthropicChunks++;
      events.push(inner);
    } else {
      if (event.event === "exception") exceptions++;
      events.push(event);
    }
  }
  notes.push(`${label}${plural(frames.length, "event-stream frame")}, CRCs verified`);
  if (chunks > 0) {
    notes.push(`${label}${plural(chunks, "InvokeModel chunk frame")} unwrapped (base64 bytes decoded; the envelope's "p" padding dropped)`);
  }
  if (exceptions > 0) notes.push(`${label}${plural(exceptions, "exception frame")} kept as {event: "exception", data: {exceptionType, …}}`);
  const provider: ProviderName = chunks > 0 && anthropicChunks === chunks ? "anthropic" : "bedrock";
  return { events, provider };
}

export function base64EventStreamToEvents(text: string, file: string, notes: string[]): EventStreamBody {
  let bytes: Uint8Array;
  try {
    bytes = base64ToBytes(text);
  } catch {
    throw new ImportError("expected base64 text of a binary AWS event stream, found characters outside the base64 alphabet", "malformed", file);
  }
  return eventStreamBodyToEvents(bytes, file, "", notes);
}

/** True when `bytes` begin with a CRC-valid event-stream prelude: enough to tell a binary body apart. */
export function looksLikeEventStream(bytes: Uint8Array): boolean {
  if (bytes.length < 16) return false;
  const view = new DataView(bytes.buffer, bytes.byteOffset, 12);
  return view.getUint32(8) === crc32(bytes, 0, 8) && view.getUint32(0) >= 16;
}

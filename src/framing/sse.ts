import { createParser, type EventSourceMessage, type ParseError } from "eventsource-parser";
import type { Diagnostic, ProviderEvent } from "../types.js";

/**
 * Server-Sent Events framing over eventsource-parser: bytes split anywhere (UTF-8 sequences
 * included), any line ending, comments, any field order. Payloads that are JSON are parsed;
 * anything else is passed on as a string so that the decoder can say what it was.
 */
export interface SseFramer {
  /** Feeds bytes or text; returns the events completed by this chunk. */
  push(chunk: Uint8Array | string): ProviderEvent[];
  /** Flushes a final event that was not followed by a blank line. */
  finish(): ProviderEvent[];
  /** Framing-level findings (comments are not findings; oversized lines are). */
  readonly diagnostics: Diagnostic[];
}

export interface SseFramerOptions {
  /** Largest partial line or pending event, in characters, before the framer gives up. */
  maxBufferSize?: number;
  onComment?: (comment: string) => void;
}

export function parseSseData(data: string): unknown {
  // Cheap pre-check keeps "[DONE]" and keep-alive text from paying for a thrown exception.
  const first = firstNonSpace(data);
  if (first === "{" || first === "[" || first === '"') {
    try {
      return JSON.parse(data);
    } catch {
      return data;
    }
  }
  return data;
}

function firstNonSpace(text: string): string {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c !== 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0d) return text[i] as string;
  }
  return "";
}

export function createSseFramer(options: SseFramerOptions = {}): SseFramer {
  const decoder = new TextDecoder("utf-8");
  let pending: ProviderEvent[] = [];
  const diagnostics: Diagnostic[] = [];
  let failed = false;

  const onEvent = (message: EventSourceMessage): void => {
    const event: ProviderEvent = { data: parseSseData(message.data) };
    if (message.event !== undefined) event.event = message.event;
    pending.push(event);
  };
  const onError = (error: ParseError): void => {
    if (error.type === "max-buffer-size-exceeded") {
      failed = true;
      diagnostics.push({
        code: "sse_buffer_exceeded",
        severity: "error",
        message: `An SSE line or event exceeded ${options.maxBufferSize ?? "the"} characters; the rest of the stream was not read.`,
      });
    } else {
      diagnostics.push({ code: `sse_${error.type.replace(/-/g, "_")}`, severity: "info", message: error.message });
    }
  };
  const parser = createParser({
    onEvent,
    onError,
    onComment: options.onComment,
    maxBufferSize: options.maxBufferSize,
  });

  const drain = (): ProviderEvent[] => {
    const out = pending;
    pending = [];
    return out;
  };

  return {
    diagnostics,
    push(chunk) {
      if (failed) return [];
      const text = typeof chunk === "string" ? chunk : decoder.decode(chunk, { stream: true });
      if (text.length > 0) parser.feed(text);
      return drain();
    },
    finish() {
      if (!failed) {
        const tail = decoder.decode();
        if (tail.length > 0) parser.feed(tail);
        // A last event without its blank line still counts: the bytes arrived.
        parser.feed("\n\n");
      }
      return drain();
    },
  };
}

/** Serializes provider events as an SSE body (used by tests, replay servers and byte-split properties). */
export function encodeSse(events: readonly ProviderEvent[]): string {
  let out = "";
  for (const event of events) {
    if (event.event !== undefined) out += `event: ${event.event}\n`;
    const payload = typeof event.data === "string" ? event.data : JSON.stringify(event.data);
    for (const line of payload.split("\n")) out += `data: ${line}\n`;
    out += "\n";
  }
  return out;
}

import { createParser, type EventSourceMessage, type ParseError } from "eventsource-parser";
import type { Diagnostic, ProviderEvent } from "../types.js";
import { framedEvent } from "./framed-event.js";
import { LineEndNormalizer } from "./line-ends.js";
import { SseSizeMeter } from "./sse-meter.js";
import { EventJsonReader } from "./event-template.js";
import type { DiagnosticCode } from "../diagnostics/codes.js";
import type { Framer } from "./framer.js";
import { firstNonSpace } from "../json/whitespace.js";

export interface SseFramerOptions {
  /** Largest partial line or pending event, in characters, before the framer gives up. */
  maxLineChars?: number;
  onComment?: (comment: string) => void;
}

/** Parses an event's data as JSON where it is JSON; `parse` is JSON.parse or a stream's own reader. */
export function parseSseData(data: string, parse: (text: string) => unknown = JSON.parse): unknown {
  // Cheap pre-check keeps "[DONE]" and keep-alive text from paying for a thrown exception.
  const first = firstNonSpace(data);
  if (first === "{" || first === "[" || first === '"') {
    try {
      return parse(data);
    } catch {
      return data;
    }
  }
  return data;
}

/**
 * A push framer for Server-Sent Events (eventsource-parser underneath): bytes split anywhere
 * (UTF-8 sequences included), any line ending, comments, any field order; `{event, data}` provider
 * events out, with `data` parsed as JSON where it is JSON, else passed on as a string so that the
 * decoder can say what it was. Comments are not findings; oversized lines are.
 */
export function createSseFramer(options: SseFramerOptions = {}): Framer {
  const decoder = new TextDecoder("utf-8");
  let pending: ProviderEvent[] = [];
  const diagnostics: Diagnostic[] = [];
  let failed = false;
  const maxLength = options.maxLineChars;
  const lines = maxLength !== undefined ? new SseSizeMeter(maxLength) : null;
  const json = new EventJsonReader();
  const parse = (text: string): unknown => json.parse(text);
  const lineEnds = new LineEndNormalizer();

  const exceeded = (): void => {
    failed = true;
    diagnostics.push({
      code: "sse_buffer_exceeded",
      severity: "error",
      message: `An SSE line or event exceeded ${maxLength ?? "the"} characters; the rest of the stream was not read.`,
    });
  };

  const onEvent = (message: EventSourceMessage): void => {
    if (failed) return;
    // Never true while the meter works (an event's data is shorter than its lines); kept so that
    // the limit holds for the data even if the meter were wrong.
    if (maxLength !== undefined && message.data.length > maxLength) {
      exceeded();
      return;
    }
    pending.push(framedEvent(parseSseData(message.data, parse), message.event, message.data.length));
  };
  const lineErrors = new Map<string, { count: number; first: string | null }>();
  const onError = (error: ParseError): void => {
    if (error.type === "max-buffer-size-exceeded") {
      if (!failed) exceeded();
    } else {
      // One diagnostic per kind, counted: a body of garbage lines would otherwise hold one object
      // per line, many times the size of the input.
      // eventsource-parser's error types, each registered as sse_<type> (test/diagnostics/codes.test.ts).
      const code = `sse_${error.type.replace(/-/g, "_")}` as DiagnosticCode;
      const seen = lineErrors.get(code);
      if (seen) {
        seen.count++;
      } else {
        const data = { count: 1, first: error.line === undefined ? null : error.line.slice(0, 200) };
        lineErrors.set(code, data);
        diagnostics.push({ code, severity: "info", message: error.message, data });
      }
    }
  };
  const parser = createParser({
    onEvent,
    onError,
    onComment: options.onComment,
    // A backstop only: the meter stops the stream before the partial line plus the event's data
    // (each at most maxLength) can reach it.
    maxBufferSize: maxLength !== undefined ? 2 * maxLength + 16 : undefined,
  });

  /** Feeds the parser up to the first line over the limit, so that what came before it still counts. */
  const feedMeasured = (text: string): void => {
    const overflow = lines ? lines.feed(text) : -1;
    const fits = overflow < 0 ? text : text.slice(0, overflow);
    if (fits.length > 0) parser.feed(fits);
    if (overflow < 0) return;
    // No CR reaches here (line ends are LF), so the parser holds back no line end of `fits`.
    if (!failed) exceeded();
  };

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
      feedMeasured(lineEnds.normalize(text));
      return drain();
    },
    flush() {
      if (!failed) {
        feedMeasured(lineEnds.normalize(decoder.decode()));
        if (failed) return drain();
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

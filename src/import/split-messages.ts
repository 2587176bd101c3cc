import type { RecordedStream } from "../framing/records.js";
import { eventType } from "../providers/fields.js";

/**
 * Some fixtures concatenate several complete Anthropic responses into one file (each resumed turn
 * of a programmatic tool-calling loop is its own HTTP response). A message_start after a
 * message_stop starts a new response, so each becomes its own sequence. A message_start that
 * arrives *before* message_stop is a spliced retry inside one response and is left to the decoder.
 */
export function splitConcatenatedMessages(streams: RecordedStream[], notes: string[]): RecordedStream[] {
  return streams.flatMap((stream) => {
    const starts: number[] = [];
    let stopped = false;
    stream.events.forEach((event, i) => {
      const type = eventType(event);
      if (type === "message_stop") stopped = true;
      if (type === "message_start" && stopped) {
        starts.push(i);
        stopped = false;
      }
    });
    if (starts.length === 0) return [stream];
    const bounds = [0, ...starts, stream.events.length];
    const base = stream.sequence === null ? "message" : `${stream.sequence}/message`;
    notes.push(`${stream.sequence ?? "the stream"} holds ${bounds.length - 1} complete responses one after another; each became its own sequence (${base}-1…${bounds.length - 1})`);
    return bounds.slice(0, -1).map((from, k) => {
      const to = bounds[k + 1] as number;
      const part: RecordedStream = { sequence: `${base}-${k + 1}`, provider: stream.provider, events: stream.events.slice(from, to) };
      if (stream.times) part.times = stream.times.slice(from, to);
      return part;
    });
  });
}

import { encodeEventStreamMessage } from "../../src/framing/aws-eventstream.js";
import type { ProviderEvent } from "../../src/types.js";

/** Builders for Bedrock ConverseStream events in the SDK-wrapped form `{"<eventType>": body}`. */
export const b = {
  messageStart: (): ProviderEvent => ({ data: { messageStart: { role: "assistant" } } }),
  text: (index: number, text: string): ProviderEvent => ({ data: { contentBlockDelta: { contentBlockIndex: index, delta: { text } } } }),
  reasoning: (index: number, reasoningContent: Record<string, unknown>): ProviderEvent => ({
    data: { contentBlockDelta: { contentBlockIndex: index, delta: { reasoningContent } } },
  }),
  toolStart: (index: number, toolUseId: string, name: string, extra: Record<string, unknown> = {}): ProviderEvent => ({
    data: { contentBlockStart: { contentBlockIndex: index, start: { toolUse: { toolUseId, name, ...extra } } } },
  }),
  input: (index: number, input: string): ProviderEvent => ({ data: { contentBlockDelta: { contentBlockIndex: index, delta: { toolUse: { input } } } } }),
  stop: (index: number): ProviderEvent => ({ data: { contentBlockStop: { contentBlockIndex: index } } }),
  messageStop: (stopReason: string): ProviderEvent => ({ data: { messageStop: { stopReason } } }),
  metadata: (usage: Record<string, number> = { inputTokens: 471, outputTokens: 91, totalTokens: 562 }): ProviderEvent => ({
    data: { metadata: { usage, metrics: { latencyMs: 422 } } },
  }),
};

/** The form the binary framing yields: the event name from `:event-type`, the bare body (with `p` padding). */
export function unwrapped(events: ProviderEvent[]): ProviderEvent[] {
  return events.map((event, i) => {
    const [name, body] = Object.entries(event.data as Record<string, Record<string, unknown>>)[0] as [string, Record<string, unknown>];
    return { event: name, data: { ...body, p: "abcdefghijklmnopqrstuvwxyz".slice(0, (i * 7) % 26) } };
  });
}

/** Binary `application/vnd.amazon.eventstream` frames for SDK-wrapped events (exceptions as exception frames). */
export function encodeFrames(events: ProviderEvent[]): Uint8Array {
  const frames = unwrapped(events).map((event) => {
    const name = event.event as string;
    if (name.endsWith("Exception")) {
      const { p: _p, ...body } = event.data as Record<string, unknown>;
      return encodeEventStreamMessage({ ":message-type": "exception", ":exception-type": name, ":content-type": "application/json" }, JSON.stringify(body));
    }
    return encodeEventStreamMessage({ ":event-type": name, ":content-type": "application/json", ":message-type": "event" }, JSON.stringify(event.data));
  });
  return concat(frames);
}

export function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

import { encodeSse } from "../../src/framing/sse.js";
import type { CodecEvent, DecodedTurn, ProviderEvent } from "../../src/types.js";

/** A byte stream the test feeds by hand, to hold a stream open at a chosen point. */
export interface Pushable {
  stream: ReadableStream<Uint8Array>;
  push(text: string | Uint8Array): void;
  close(): void;
  fail(error: unknown): void;
  /** Resolves with the reason when the consumer cancels the stream. */
  cancelled: Promise<unknown>;
}

export function pushable(): Pushable {
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  let onCancel!: (reason: unknown) => void;
  const cancelled = new Promise<unknown>((resolve) => (onCancel = resolve));
  const stream = new ReadableStream<Uint8Array>({
    start(c) {
      controller = c;
    },
    cancel(reason) {
      onCancel(reason);
    },
  });
  const encoder = new TextEncoder();
  return {
    stream,
    push: (text) => controller.enqueue(typeof text === "string" ? encoder.encode(text) : text),
    close: () => controller.close(),
    fail: (error) => controller.error(error),
    cancelled,
  };
}

export const sse = (events: ProviderEvent[]): string => encodeSse(events);

/** Pulls events until `until` matches one, leaving the generator suspended there. */
export async function readUntil(events: AsyncGenerator<CodecEvent>, until: (event: CodecEvent) => boolean): Promise<CodecEvent[]> {
  const seen: CodecEvent[] = [];
  while (true) {
    const next = await events.next();
    if (next.done) throw new Error(`the stream ended before the awaited event; saw ${seen.map((event) => event.type).join(", ")}`);
    seen.push(next.value);
    if (until(next.value)) return seen;
  }
}

export async function drain(events: AsyncGenerator<CodecEvent>): Promise<{ events: CodecEvent[]; turn: DecodedTurn }> {
  const all: CodecEvent[] = [];
  for await (const event of events) all.push(event);
  const last = all.at(-1);
  if (!last || last.type !== "finish") throw new Error("decodeStream did not end with finish");
  return { events: all, turn: last.turn };
}

/** JSON round trip: what a stored turn holds (undefined fields gone), for deep equality across paths. */
export function plain<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}

/** An async iterable shaped like the SDKs' `Stream`: parsed events and an AbortController. */
export function sdkLikeStream(events: unknown[], options: { stallAfter?: number; throwAfter?: { index: number; error: unknown } } = {}) {
  const controller = new AbortController();
  const stream = {
    controller,
    async *[Symbol.asyncIterator]() {
      for (let i = 0; i <= events.length; i++) {
        if (options.throwAfter && i === options.throwAfter.index) throw options.throwAfter.error;
        if (options.stallAfter !== undefined && i === options.stallAfter) {
          // Waits for the abort the way a fetch body does, then ends as the SDKs do on abort.
          await new Promise<void>((resolve) => controller.signal.addEventListener("abort", () => resolve(), { once: true }));
          return;
        }
        if (i < events.length) yield events[i];
      }
    },
  };
  return stream;
}

import type { Reencoder } from "../reencode/types.js";

/**
 * A response body re-encoded as it is read: each read of the returned stream reads the body until
 * the re-encoder releases something, or the body ends (then `onEnd` gets the re-encoder, after its
 * `end`). Behaves as the body piped through `createReencodingStream`: the body's error is the
 * stream's, a cancel cancels the body, a re-encoder that throws errors the stream and cancels the
 * body. One stream pulled rather than a TransformStream piped to, because the pipe's reads, writes
 * and their promises cost more per chunk than re-encoding a small chunk does, and what they
 * allocate for a held call outlives the young generation (docs/proxy.md, Cost).
 */
export function reencodedBody(body: ReadableStream<Uint8Array>, reencoder: Reencoder, onEnd: (reencoder: Reencoder) => void): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  const fail = (error: unknown): never => {
    reader.cancel(error).catch(() => {});
    throw error;
  };
  // A chunk pushed, or (null) the end: flushed, then reported. The one place that order is kept.
  const next = (chunk: Uint8Array | null): Uint8Array[] => {
    if (chunk !== null) return reencoder.push(chunk);
    const pieces = reencoder.flush();
    onEnd(reencoder);
    return pieces;
  };
  let pulled = false;
  let taken = false;
  const stream = new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        if (taken) throw new TypeError("the re-encoded body was taken by a reader of its source");
        pulled = true;
        for (;;) {
          const { done, value } = await reader.read();
          let pieces: Uint8Array[];
          try {
            pieces = next(done ? null : value);
          } catch (error) {
            return fail(error);
          }
          for (const piece of pieces) controller.enqueue(piece);
          if (done) {
            controller.close();
            return;
          }
          if (pieces.length > 0) return;
        }
      },
      cancel(reason) {
        return reader.cancel(reason);
      },
    },
    { highWaterMark: 0 },
  );
  sources.set(stream, (take) => {
    if (pulled || taken) return null;
    const taker = take(body);
    if (taker === null) return null;
    taken = true;
    sources.delete(stream);
    return { next, taker };
  });
  return stream;
}

/** A re-encoded body taken over: what `take` made of its source, and how to feed the re-encoder. */
export interface ReencodedSource<T> {
  /** Pushes a chunk and returns what the re-encoder releases; `null`: the body ended (flush, then the end report). Throws what the re-encoder throws. */
  next(chunk: Uint8Array | null): Uint8Array[];
  taker: T;
}

type Take = <T>(take: (body: ReadableStream<Uint8Array>) => T | null) => ReencodedSource<T> | null;

const sources = new WeakMap<ReadableStream<Uint8Array>, Take>();

/**
 * Takes over a re-encoded body nobody has read yet, for a caller that feeds the re-encoder itself
 * (the proxy, from the upstream socket: no web stream and no promise per chunk). `take` is handed
 * the body's source and says whether it can read it (null: it cannot, and the stream stays as it
 * was). Once taken, the stream is spent: a read of it fails. Null for any other stream, or once read.
 */
export function takeReencodedSource<T>(stream: ReadableStream<Uint8Array>, take: (body: ReadableStream<Uint8Array>) => T | null): ReencodedSource<T> | null {
  return sources.get(stream)?.(take) ?? null;
}

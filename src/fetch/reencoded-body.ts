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
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        for (;;) {
          const { done, value } = await reader.read();
          let pieces: Uint8Array[];
          try {
            pieces = done ? reencoder.flush() : reencoder.push(value);
            if (done) onEnd(reencoder);
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
}

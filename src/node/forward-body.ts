import type { ServerResponse } from "node:http";
import { firstEvent } from "./first-event.js";

/**
 * Writes a fetch response's body to a Node response as it arrives, waiting for the client to
 * drain, and cancels the upstream read once the client has gone. Leaves the response open.
 * `onFirstChunk` is called once, right after the first chunk is written.
 *
 * Chunks that arrive in one turn of the event loop (a re-encoder releasing held events hands
 * over several at once) are written corked, so they leave in one `writev` (one chunked-encoding
 * frame each, one system call) rather than one per chunk.
 */
export async function forwardBody(body: ReadableStream<Uint8Array>, res: ServerResponse, onFirstChunk?: () => void): Promise<void> {
  const reader = body.getReader();
  let first = onFirstChunk;
  let corked = false;
  const uncork = (): void => {
    corked = false;
    res.uncork();
  };
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      if (!corked) {
        corked = true;
        res.cork();
        process.nextTick(uncork);
      }
      const drained = res.write(value);
      if (first) {
        first();
        first = undefined;
      }
      if (!drained) {
        if (corked) uncork();
        await firstEvent(res, ["drain", "close"]);
      }
      if (res.destroyed) {
        await reader.cancel().catch(() => {});
        return;
      }
    }
  } finally {
    if (corked) uncork();
  }
}

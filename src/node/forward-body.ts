import type { ServerResponse } from "node:http";
import { firstEvent } from "./first-event.js";

/**
 * Writes a fetch response's body to a Node response as it arrives, waiting for the client to
 * drain, and cancels the upstream read once the client has gone. Leaves the response open.
 * `onFirstChunk` is called once, right after the first chunk is written.
 */
export async function forwardBody(body: ReadableStream<Uint8Array>, res: ServerResponse, onFirstChunk?: () => void): Promise<void> {
  const reader = body.getReader();
  let first = onFirstChunk;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return;
    const drained = res.write(value);
    if (first) {
      first();
      first = undefined;
    }
    if (!drained) await firstEvent(res, ["drain", "close"]);
    if (res.destroyed) {
      await reader.cancel().catch(() => {});
      return;
    }
  }
}

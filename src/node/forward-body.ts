import type { ServerResponse } from "node:http";
import { firstEvent } from "./first-event.js";

/**
 * Writes a fetch response's body to a Node response as it arrives, waiting for the client to
 * drain, and cancels the upstream read once the client has gone. Leaves the response open.
 */
export async function forwardBody(body: ReadableStream<Uint8Array>, res: ServerResponse): Promise<void> {
  const reader = body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return;
    if (!res.write(value)) await firstEvent(res, ["drain", "close"]);
    if (res.destroyed) {
      await reader.cancel().catch(() => {});
      return;
    }
  }
}

import type { IncomingMessage, ServerResponse } from "node:http";
import { takeReencodedSource, type ReencodedSource } from "../fetch/reencoded-body.js";
import { firstEvent } from "./first-event.js";
import { takeNodeBody } from "./upstream-fetch.js";

/**
 * Writes a fetch response's body to a Node response as it arrives, waiting for the client to
 * drain, and cancels the upstream read once the client has gone. Leaves the response open.
 * `onFirstChunk` is called once, right after the first chunk is written.
 *
 * Chunks that arrive in one turn of the event loop (a re-encoder releasing held events hands
 * over several at once) are written corked, so they leave in one `writev` (one chunked-encoding
 * frame each, one system call) rather than one per chunk.
 *
 * A body the repairing fetch re-encodes from a response of the proxy's own upstream client is
 * not read as a web stream: the upstream's Node response feeds the re-encoder directly
 * (`forwardReencoded`), the same bytes, errors and cancellation without two streams and their
 * promises per chunk (docs/proxy.md, Cost).
 */
export async function forwardBody(body: ReadableStream<Uint8Array>, res: ServerResponse, onFirstChunk?: () => void): Promise<void> {
  const direct = takeReencodedSource(body, takeNodeBody);
  if (direct !== null) return forwardReencoded(direct, res, onFirstChunk);
  const reader = body.getReader();
  const writer = new CorkedWriter(res, onFirstChunk);
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      if (!writer.write([value])) await firstEvent(res, ["drain", "close"]);
      if (res.destroyed) {
        await reader.cancel().catch(() => {});
        return;
      }
    }
  } finally {
    writer.uncork();
  }
}

/** Writes pieces corked until the end of the event-loop turn; reports the first write once. */
class CorkedWriter {
  private corked = false;

  constructor(
    private readonly res: ServerResponse,
    private first: (() => void) | undefined,
  ) {}

  /** False when the client's buffer is full: wait for `drain` before writing more. */
  write(pieces: readonly Uint8Array[]): boolean {
    if (pieces.length === 0) return true;
    if (!this.corked) {
      this.corked = true;
      this.res.cork();
      process.nextTick(() => this.uncork());
    }
    let drained = true;
    for (const piece of pieces) drained = this.res.write(piece) && drained;
    if (this.first) {
      this.first();
      this.first = undefined;
    }
    if (!drained) this.uncork();
    return drained;
  }

  uncork(): void {
    if (!this.corked) return;
    this.corked = false;
    this.res.uncork();
  }
}

/**
 * The upstream's Node response, re-encoded into the client's response as its chunks arrive:
 * paused while the client's buffer is full, destroyed when the client goes. Resolves when the
 * body has been written (or the client has gone); rejects when the upstream fails or the
 * re-encoder throws, as reading the re-encoded web stream would.
 */
function forwardReencoded(source: ReencodedSource<IncomingMessage>, res: ServerResponse, onFirstChunk?: () => void): Promise<void> {
  const { next, taker: upstream } = source;
  const writer = new CorkedWriter(res, onFirstChunk);
  return new Promise<void>((resolve, reject) => {
    const fail = (error: unknown): void => {
      detach();
      upstream.destroy();
      reject(error);
    };
    const cut = (): void => fail(new Error("the upstream response was cut"));
    const data = (received: unknown): void => {
      const chunk = received as Buffer;
      let pieces: Uint8Array[];
      try {
        pieces = next(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.length));
      } catch (error) {
        fail(error);
        return;
      }
      if (!writer.write(pieces)) upstream.pause();
    };
    const end = (): void => {
      let pieces: Uint8Array[];
      try {
        pieces = next(null);
      } catch (error) {
        fail(error);
        return;
      }
      writer.write(pieces);
      detach();
      resolve();
    };
    const gone = (): void => {
      // The client went before the body was written: the upstream read is cancelled.
      detach();
      upstream.destroy();
      resolve();
    };
    const listeners: Array<[NodeJS.EventEmitter, string, (arg?: unknown) => void]> = [
      [upstream, "data", data],
      [upstream, "end", end],
      [upstream, "error", fail],
      [upstream, "aborted", cut],
      // Closed without its end (the connection dropped): cut, as the web stream would report it.
      [upstream, "close", cut],
      [res, "drain", () => upstream.resume()],
      [res, "close", gone],
    ];
    function detach(): void {
      for (const [emitter, name, listener] of listeners) emitter.off(name, listener);
      writer.uncork();
    }
    for (const [emitter, name, listener] of listeners) emitter.on(name, listener);
    if (res.destroyed) gone();
  });
}

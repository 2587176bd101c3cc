import { createDecoder } from "../providers/registry.js";
import type { DecodedTurn, DecoderOptions, ProviderName } from "../types.js";
import { DecoderTap } from "./common.js";
import { encodeOut, SseEventSplitter, type RawSseEvent } from "./sse-events.js";
import type { Reencoder, RepairReport } from "./types.js";

/**
 * What every SSE re-encoder shares: the body is split into events, each is decoded on a tap and
 * handed to the protocol's `handle`, which writes what can be forwarded now; at the end the
 * protocol decides what it still holds. The protocols differ only in `handle` and `endHeld`.
 */
export abstract class SseReencoder implements Reencoder {
  private readonly splitter = new SseEventSplitter();
  protected readonly tap: DecoderTap;
  private ended = false;

  protected constructor(
    readonly provider: ProviderName,
    options: DecoderOptions,
  ) {
    this.tap = new DecoderTap(provider, createDecoder(provider, options));
  }

  get turn(): DecodedTurn | null {
    return this.tap.turn;
  }

  get repairs(): readonly RepairReport[] {
    return this.tap.repairs;
  }

  push(chunk: Uint8Array): Uint8Array[] {
    const out: string[] = [];
    for (const event of this.splitter.push(chunk)) this.handle(event, out);
    return encodeOut(out);
  }

  end(): Uint8Array[] {
    if (this.ended) return [];
    this.ended = true;
    const out: string[] = [];
    for (const event of this.splitter.finish()) this.handle(event, out);
    this.tap.end();
    this.endHeld(out);
    return encodeOut(out);
  }

  /** One event of the body: write to `out` what is forwarded now. */
  protected abstract handle(raw: RawSseEvent, out: string[]): void;

  /** The body ended: decide every call still held (write what is released to `out`). */
  protected abstract endHeld(out: string[]): void;
}

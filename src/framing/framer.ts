import type { Diagnostic, ProviderEvent, ProviderName } from "../types.js";
import { createNdjsonFramer } from "./ndjson.js";
import { createSseFramer } from "./sse.js";

export type FramingName = "sse" | "ndjson";

/** Bytes in, provider events out: the layer below every decoder. */
export interface Framer {
  push(chunk: Uint8Array | string): ProviderEvent[];
  finish(): ProviderEvent[];
  readonly diagnostics?: Diagnostic[];
}

/** The framing each provider uses on the wire. */
export function defaultFraming(provider: ProviderName): FramingName {
  return provider === "ollama" ? "ndjson" : "sse";
}

export interface FramerOptions {
  maxLineLength?: number;
}

export function createFramer(framing: FramingName, options: FramerOptions = {}): Framer {
  switch (framing) {
    case "sse":
      return createSseFramer(options.maxLineLength !== undefined ? { maxBufferSize: options.maxLineLength } : {});
    case "ndjson":
      return createNdjsonFramer();
  }
}

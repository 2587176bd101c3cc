import { createByteDecoder } from "../../src/adapters/bytes.js";
import { concatBytes } from "../../src/testing/wire.js";
import { createReencoder } from "../../src/reencode/index.js";
import type { Reencoder } from "../../src/reencode/types.js";
import type { DecodedTurn, ProviderEvent, ProviderName } from "../../src/types.js";
import { cyclicPieces } from "../helpers/pieces.js";

/** A recorded stream as the provider sends it over SSE (event names and payload types restored, as `toolwire serve` does). */
export function sseBody(provider: ProviderName, events: readonly ProviderEvent[]): string {
  let out = "";
  for (const event of events) {
    let data = event.data;
    let name = event.event;
    if ((provider === "anthropic" || provider === "openai-responses") && typeof data === "object" && data !== null && !Array.isArray(data)) {
      const record = data as Record<string, unknown>;
      if (name === undefined && typeof record.type === "string") name = record.type;
      if (name !== undefined && name !== "error" && record.type === undefined) data = { type: name, ...record };
    }
    if (name !== undefined) out += `event: ${name}\n`;
    const payload = typeof data === "string" ? data : JSON.stringify(data);
    for (const line of payload.split("\n")) out += `data: ${line}\n`;
    out += "\n";
  }
  return out;
}

/** Runs bytes through a re-encoder in the given chunk sizes (cycled). */
export function reencode(provider: ProviderName, body: Uint8Array, sizes: readonly number[] = [body.length || 1]): { output: Uint8Array; reencoder: Reencoder; pieces: number } {
  return reencodeWith(createReencoder(provider), body, sizes);
}

/** Runs bytes through the given re-encoder in the given chunk sizes (cycled). */
export function reencodeWith(reencoder: Reencoder, body: Uint8Array, sizes: readonly number[] = [body.length || 1]): { output: Uint8Array; reencoder: Reencoder; pieces: number } {
  const parts: Uint8Array[] = [];
  for (const piece of cyclicPieces(body, sizes)) parts.push(...reencoder.push(piece));
  parts.push(...reencoder.end());
  return { output: concatBytes(parts), reencoder, pieces: parts.length };
}

export function decodeBytes(provider: ProviderName, bytes: Uint8Array): DecodedTurn {
  const decoder = createByteDecoder(provider);
  decoder.push(bytes);
  return decoder.finish();
}

/** A recorded Ollama stream as its NDJSON body. */
export function ndjsonBody(events: readonly ProviderEvent[]): string {
  return events.map((event) => `${typeof event.data === "string" ? event.data : JSON.stringify(event.data)}\n`).join("");
}

import { createByteDecoder } from "../adapters/bytes.js";
import type { DecodedTurn, DecoderOptions, ProviderName } from "../types.js";
import { createAnthropicReencoder } from "./anthropic.js";
import { createBedrockReencoder } from "./bedrock.js";
import { createOpenAIChatReencoder } from "./openai-chat.js";
import { createOpenAIResponsesReencoder } from "./openai-responses.js";
import { createOllamaReencoder } from "./ollama.js";
import { createGeminiReencoder } from "./gemini.js";
import type { Reencoder, RepairReport } from "./types.js";

export type { Reencoder, RepairReport } from "./types.js";
export { createAnthropicReencoder } from "./anthropic.js";
export { createOpenAIChatReencoder } from "./openai-chat.js";
export { createOpenAIResponsesReencoder } from "./openai-responses.js";
export { createOllamaReencoder } from "./ollama.js";
export { createGeminiReencoder, type GeminiReencoderOptions } from "./gemini.js";
export { createBedrockReencoder } from "./bedrock.js";
export { createBedrockInvokeReencoder } from "./bedrock-invoke.js";
export { repairWholeResponse, type WholeResponseOptions, type WholeResponseRepair } from "./whole.js";

/** Protocols whose streams are re-encoded; the others pass through unchanged (and are decoded for the report). */
export const REENCODED_PROVIDERS: readonly ProviderName[] = ["anthropic", "openai-chat", "openai-responses", "ollama", "bedrock", "gemini"];

/**
 * The re-encoder for a provider's stream: body bytes in, the same protocol's bytes out, with the
 * calls toolwire fixed rewritten, truncated or invalid calls withheld, and every other event
 * forwarded byte for byte as soon as it arrives (see `createAnthropicReencoder`,
 * `createOpenAIChatReencoder`, `createBedrockReencoder` for the binary ConverseStream,
 * `createGeminiReencoder` for SSE and the streamed JSON array). For providers without a
 * re-encoder (none at present) the bytes pass through unchanged and are decoded on the side, so
 * that `turn` still tells what toolwire found.
 */
export function createReencoder(provider: ProviderName, options: DecoderOptions = {}): Reencoder {
  if (provider === "anthropic") return createAnthropicReencoder(options);
  if (provider === "openai-chat") return createOpenAIChatReencoder(options);
  if (provider === "openai-responses") return createOpenAIResponsesReencoder(options);
  if (provider === "ollama") return createOllamaReencoder(options);
  if (provider === "bedrock") return createBedrockReencoder(options);
  if (provider === "gemini") return createGeminiReencoder(options);
  return createPassthrough(provider, options);
}

function createPassthrough(provider: ProviderName, options: DecoderOptions): Reencoder {
  const decoder = createByteDecoder(provider, options);
  let turn: DecodedTurn | null = null;
  const repairs: RepairReport[] = [];
  return {
    provider,
    push(chunk) {
      decoder.push(chunk);
      return [chunk];
    },
    end() {
      if (turn === null) turn = decoder.finish();
      return [];
    },
    get turn() {
      return turn;
    },
    repairs,
  };
}

/**
 * A `TransformStream` over response body bytes that re-encodes as it goes: each output chunk is
 * written as soon as the re-encoder releases it. `onEnd` gets the decoded turn and the repairs
 * when the body ends (or the stream is cancelled: then the turn is the one decoded so far).
 */
export function createReencodingStream(reencoder: Reencoder, onEnd?: (reencoder: Reencoder) => void): TransformStream<Uint8Array, Uint8Array> {
  let done = false;
  const finish = (): Uint8Array[] => {
    if (done) return [];
    done = true;
    const rest = reencoder.end();
    onEnd?.(reencoder);
    return rest;
  };
  return new TransformStream<Uint8Array, Uint8Array>({
    transform(chunk, controller) {
      for (const piece of reencoder.push(chunk)) controller.enqueue(piece);
    },
    flush(controller) {
      for (const piece of finish()) controller.enqueue(piece);
    },
  });
}

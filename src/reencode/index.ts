import { ToolwireError } from "../errors.js";
import { UnsupportedProviderError } from "../providers/registry.js";
import type { ProviderName } from "../types.js";
import { createAnthropicReencoder } from "./anthropic.js";
import { createAnthropicTextCallReencoder } from "./anthropic-text-calls.js";
import { createResponsesTextCallReencoder } from "./responses-text-calls.js";
import { createBedrockReencoder } from "./bedrock.js";
import { createOpenAIChatReencoder } from "./openai-chat.js";
import { createOpenAIResponsesReencoder } from "./openai-responses.js";
import { createOllamaReencoder } from "./ollama.js";
import { createGeminiReencoder } from "./gemini.js";
import { createBedrockInvokeReencoder } from "./bedrock-invoke.js";
import type { Reencoder, ReencoderOptions } from "./types.js";

export type { Reencoder, ReencoderOptions, RepairReport } from "./types.js";
export { createGeminiReencoder } from "./gemini.js";
export { createBedrockInvokeReencoder } from "./bedrock-invoke.js";
export { repairWholeResponse, type WholeResponseRepair } from "./whole.js";

/** Protocols whose streams are re-encoded: all of them. */
export const REENCODED_PROVIDERS: readonly ProviderName[] = ["anthropic", "openai-chat", "openai-responses", "ollama", "bedrock", "gemini"];

/**
 * The re-encoder for a provider's stream, as `createDecoder` is its decoder: body bytes in, the
 * same protocol's bytes out, with the calls toolwire fixed rewritten, truncated or invalid calls
 * withheld, and every other event forwarded byte for byte as soon as it arrives. With `textCalls`,
 * the calls a model wrote into its text go out as the protocol's call events (OpenAI Chat,
 * Ollama, Anthropic Messages and OpenAI Responses: the protocols servers without a tool parser
 * speak; Gemini, Bedrock and Claude on Bedrock ignore the option). Throws UnsupportedProviderError for a name that is not a
 * provider.
 */
export function createReencoder(provider: ProviderName, options: ReencoderOptions = {}): Reencoder {
  const { addMissingIds, framing, ...decoderOptions } = options;
  if (framing !== undefined && !(framing === "aws-eventstream" && (provider === "anthropic" || provider === "bedrock"))) {
    throw new ToolwireError("unsupported_framing", `No re-encoder for ${provider} in framing '${String(framing)}': only anthropic takes "aws-eventstream" (Claude on Bedrock), and bedrock always is one.`);
  }
  if (provider === "openai-chat") return createOpenAIChatReencoder(decoderOptions);
  if (provider === "ollama") return createOllamaReencoder(decoderOptions);
  if (provider === "anthropic" && framing === undefined && decoderOptions.textCalls !== undefined) return createAnthropicTextCallReencoder(decoderOptions);
  if (provider === "openai-responses" && decoderOptions.textCalls !== undefined) return createResponsesTextCallReencoder(decoderOptions);
  // Calls written into the text are re-encoded for the protocols open-weight servers speak (Chat
  // Completions, Ollama, Messages, Responses): Gemini's, Bedrock's and Claude on Bedrock's
  // streams (only Google's and AWS's servers speak them, and they parse calls) as if `textCalls` were off.
  delete decoderOptions.textCalls;
  if (provider === "anthropic") return framing === "aws-eventstream" ? createBedrockInvokeReencoder(decoderOptions) : createAnthropicReencoder(decoderOptions);
  if (provider === "openai-responses") return createOpenAIResponsesReencoder(decoderOptions);
  if (provider === "bedrock") return createBedrockReencoder(decoderOptions);
  if (provider === "gemini") return createGeminiReencoder(addMissingIds === undefined ? decoderOptions : { ...decoderOptions, addMissingIds });
  throw new UnsupportedProviderError(provider);
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
    const rest = reencoder.flush();
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

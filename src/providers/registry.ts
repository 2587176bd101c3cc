import type { DecoderOptions, ProviderName } from "../types.js";
import { anthropicCodec } from "./anthropic.js";
import { bedrockCodec } from "./bedrock.js";
import { geminiCodec } from "./gemini.js";
import { ollamaCodec } from "./ollama.js";
import { openaiChatCodec } from "./openai-chat.js";
import { openaiResponsesCodec } from "./openai-responses.js";
import { wrapCodec, type CodecFactory, type StreamingDecoder } from "./codec.js";
import { ToolwireError } from "../errors.js";

/** One codec per provider; providers not yet implemented are absent and rejected by name. */
const CODECS: Partial<Record<ProviderName, CodecFactory>> = {
  anthropic: anthropicCodec,
  "openai-chat": openaiChatCodec,
  "openai-responses": openaiResponsesCodec,
  gemini: geminiCodec,
  bedrock: bedrockCodec,
  ollama: ollamaCodec,
};

/** A provider name toolwire has no decoder for (code `unsupported_provider`). */
export class UnsupportedProviderError extends ToolwireError {
  constructor(readonly provider: string) {
    super("unsupported_provider", `No decoder for provider '${provider}'. Supported: ${supportedProviders().join(", ")}.`);
  }
}

/** The providers that have a decoder. */
export function supportedProviders(): ProviderName[] {
  return Object.keys(CODECS) as ProviderName[];
}

/** The synchronous push core for one provider: `push(event) → CodecEvent[]`, `finish() → DecodedTurn`. */
export function createDecoder(provider: ProviderName, options: DecoderOptions = {}): StreamingDecoder {
  const factory = CODECS[provider];
  if (!factory) throw new UnsupportedProviderError(provider);
  return wrapCodec(provider, factory, options);
}

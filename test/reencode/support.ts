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

const CHAT_ENVELOPE = { id: "chatcmpl-1", object: "chat.completion.chunk", created: 1, model: "qwen" };

/** A Chat stream as a server without a tool parser sends it: the model's text in content deltas. */
export function chatTextBody(pieces: readonly string[], finish = "stop", reasoning: readonly string[] = []): string {
  const chunks: unknown[] = [{ ...CHAT_ENVELOPE, choices: [{ index: 0, delta: { role: "assistant", content: "" }, finish_reason: null }] }];
  for (const text of reasoning) chunks.push({ ...CHAT_ENVELOPE, choices: [{ index: 0, delta: { reasoning_content: text }, finish_reason: null }] });
  for (const text of pieces) chunks.push({ ...CHAT_ENVELOPE, choices: [{ index: 0, delta: { content: text }, finish_reason: null }] });
  chunks.push({ ...CHAT_ENVELOPE, choices: [{ index: 0, delta: {}, finish_reason: finish }] });
  chunks.push({ ...CHAT_ENVELOPE, choices: [], usage: { prompt_tokens: 5, completion_tokens: 7, total_tokens: 12 } });
  return `${chunks.map((chunk) => `data: ${JSON.stringify(chunk)}\n\n`).join("")}data: [DONE]\n\n`;
}

/** A tool whose schema types XML parameters (integer, boolean), for the text-call tests. */
export const TEXT_CALL_TOOLS = [
  {
    type: "function",
    function: {
      name: "get_weather",
      parameters: { type: "object", properties: { city: { type: "string" }, days: { type: "integer" }, metric: { type: "boolean" } } },
    },
  },
];

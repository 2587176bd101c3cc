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

/** A Messages stream as a server without a tool parser sends it (llama-server, vLLM, Ollama `/v1/messages`): the model's text in text deltas. */
export function anthropicTextBody(pieces: readonly string[], stopReason = "end_turn", thinking: readonly string[] = []): string {
  const events: Array<[string, Record<string, unknown>]> = [["message_start", { type: "message_start", message: { id: "msg_1", type: "message", role: "assistant", model: "qwen", content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 5, output_tokens: 0 } } }]];
  let index = 0;
  if (thinking.length > 0) {
    events.push(["content_block_start", { type: "content_block_start", index, content_block: { type: "thinking", thinking: "", signature: "" } }]);
    for (const text of thinking) events.push(["content_block_delta", { type: "content_block_delta", index, delta: { type: "thinking_delta", thinking: text } }]);
    events.push(["content_block_stop", { type: "content_block_stop", index }]);
    index++;
  }
  events.push(["content_block_start", { type: "content_block_start", index, content_block: { type: "text", text: "" } }]);
  for (const text of pieces) events.push(["content_block_delta", { type: "content_block_delta", index, delta: { type: "text_delta", text } }]);
  events.push(["content_block_stop", { type: "content_block_stop", index }]);
  events.push(["message_delta", { type: "message_delta", delta: { stop_reason: stopReason, stop_sequence: null }, usage: { output_tokens: 7 } }]);
  events.push(["message_stop", { type: "message_stop" }]);
  return events.map(([name, data]) => `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`).join("");
}

/** A Responses stream as a server without a tool parser sends it (vLLM, llama-server `/v1/responses`): the model's text in output_text deltas of one message item. */
export function responsesTextBody(pieces: readonly string[], status: "completed" | "incomplete" = "completed"): string {
  const text = pieces.join("");
  const response = { id: "resp_1", object: "response", created_at: 1, model: "qwen", status: "in_progress", output: [] as unknown[] };
  const part = { type: "output_text", text: "", annotations: [] };
  const item = { id: "msg_1", type: "message", status: "in_progress", role: "assistant", content: [] as unknown[] };
  const done = { ...item, status: "completed", content: [{ ...part, text }] };
  const events: Array<Record<string, unknown>> = [
    { type: "response.created", response },
    { type: "response.in_progress", response },
    { type: "response.output_item.added", output_index: 0, item },
    { type: "response.content_part.added", item_id: "msg_1", output_index: 0, content_index: 0, part },
    ...pieces.map((delta) => ({ type: "response.output_text.delta", item_id: "msg_1", output_index: 0, content_index: 0, delta, logprobs: [] })),
    { type: "response.output_text.done", item_id: "msg_1", output_index: 0, content_index: 0, text, logprobs: [] },
    { type: "response.content_part.done", item_id: "msg_1", output_index: 0, content_index: 0, part: { ...part, text } },
    { type: "response.output_item.done", output_index: 0, item: done },
    { type: `response.${status}`, response: { ...response, status, output: [done], ...(status === "incomplete" ? { incomplete_details: { reason: "max_output_tokens" } } : {}), usage: { input_tokens: 5, output_tokens: 7, total_tokens: 12 } } },
  ];
  return events.map((event, sequence) => `event: ${event.type as string}\ndata: ${JSON.stringify({ ...event, sequence_number: sequence })}\n\n`).join("");
}

import type { ProviderEvent } from "../../src/types.js";

/** Builders for Anthropic wire events, so tests read like the streams they describe. */
export const a = {
  messageStart: (id = "msg_1", usage: Record<string, number> = { input_tokens: 10, output_tokens: 1 }): ProviderEvent => ({
    event: "message_start",
    data: { type: "message_start", message: { id, type: "message", role: "assistant", model: "claude-test", content: [], usage } },
  }),
  textStart: (index: number, text = ""): ProviderEvent => ({ event: "content_block_start", data: { type: "content_block_start", index, content_block: { type: "text", text } } }),
  text: (index: number, text: string): ProviderEvent => ({ event: "content_block_delta", data: { type: "content_block_delta", index, delta: { type: "text_delta", text } } }),
  toolStart: (index: number, id: string, name: string, input: unknown = {}, type = "tool_use"): ProviderEvent => ({
    event: "content_block_start",
    data: { type: "content_block_start", index, content_block: { type, id, name, input } },
  }),
  json: (index: number, partial_json: string): ProviderEvent => ({
    event: "content_block_delta",
    data: { type: "content_block_delta", index, delta: { type: "input_json_delta", partial_json } },
  }),
  stop: (index: number): ProviderEvent => ({ event: "content_block_stop", data: { type: "content_block_stop", index } }),
  messageDelta: (stop_reason: string, usage: Record<string, number> = { output_tokens: 20 }): ProviderEvent => ({
    event: "message_delta",
    data: { type: "message_delta", delta: { stop_reason, stop_sequence: null }, usage },
  }),
  messageStop: (): ProviderEvent => ({ event: "message_stop", data: { type: "message_stop" } }),
  ping: (): ProviderEvent => ({ event: "ping", data: { type: "ping" } }),
};

/** A complete tool call stream: message_start, one tool block, stop reason, message_stop. */
export function toolStream(index: number, id: string, name: string, fragments: string[], input: unknown = {}): ProviderEvent[] {
  return [
    a.messageStart(),
    a.toolStart(index, id, name, input),
    ...fragments.map((fragment) => a.json(index, fragment)),
    a.stop(index),
    a.messageDelta("tool_use"),
    a.messageStop(),
  ];
}

import { describe, expect, it } from "vitest";
import { createDecoder, supportedProviders } from "../../src/providers/registry.js";
import type { DecodedTurn, ProviderEvent, ProviderName } from "../../src/types.js";

/**
 * One scenario, written in each provider's own wire shape: text, then two parallel calls to the
 * same tool with nested arguments, then the provider's "tool calls" stop. Every decoder must give
 * the same DecodedTurn, apart from what is provider-specific by nature: the provider name, the raw
 * finish reason, message id and model, where arguments came from (`source`, `rawArguments`:
 * streamed text for some providers, a whole object for others), provider block indexes and fields,
 * and the raw usage object.
 */

const TEXT = ["Let me check ", "both cities."];
const CALLS = [
  { id: "call_A", name: "get_weather", arguments: { location: { city: "Paris", country: "FR" }, units: ["C", "F"], details: { wind: true, hours: [6, 12] } } },
  { id: "call_B", name: "get_weather", arguments: { location: { city: "Kyoto", country: "JP" }, units: ["C"], details: { wind: false, hours: [], note: "tab\there \"quoted\" ✓" } } },
] as const;
const USAGE = { input: 100, output: 50 };

/** Cuts a call's JSON text into fragments, mid-token, as streaming providers do. */
function fragments(value: unknown): string[] {
  const text = JSON.stringify(value);
  const out: string[] = [];
  for (let at = 0, size = 3; at < text.length; at += size, size = (size % 11) + 2) out.push(text.slice(at, at + size));
  return out;
}

const SCENARIOS: Record<ProviderName, () => ProviderEvent[]> = {
  anthropic: () => {
    const e = (type: string, fields: Record<string, unknown>): ProviderEvent => ({ event: type, data: { type, ...fields } });
    return [
      e("message_start", { message: { id: "msg_1", type: "message", role: "assistant", model: "claude-test", content: [], usage: { input_tokens: USAGE.input, output_tokens: 1 } } }),
      e("content_block_start", { index: 0, content_block: { type: "text", text: "" } }),
      ...TEXT.map((text) => e("content_block_delta", { index: 0, delta: { type: "text_delta", text } })),
      e("content_block_stop", { index: 0 }),
      ...CALLS.flatMap((call, i) => [
        e("content_block_start", { index: i + 1, content_block: { type: "tool_use", id: call.id, name: call.name, input: {} } }),
        e("content_block_delta", { index: i + 1, delta: { type: "input_json_delta", partial_json: "" } }),
        ...fragments(call.arguments).map((partial_json) => e("content_block_delta", { index: i + 1, delta: { type: "input_json_delta", partial_json } })),
        e("content_block_stop", { index: i + 1 }),
      ]),
      e("message_delta", { delta: { stop_reason: "tool_use", stop_sequence: null }, usage: { output_tokens: USAGE.output } }),
      e("message_stop", {}),
    ];
  },

  "openai-chat": () => {
    const chunk = (delta: Record<string, unknown>, finish: string | null = null): ProviderEvent => ({
      data: { id: "chatcmpl-1", object: "chat.completion.chunk", created: 1760000000, model: "gpt-test", choices: [{ index: 0, delta, finish_reason: finish }] },
    });
    return [
      chunk({ role: "assistant", content: "" }),
      ...TEXT.map((content) => chunk({ content })),
      ...CALLS.flatMap((call, i) => [
        chunk({ tool_calls: [{ index: i, id: call.id, type: "function", function: { name: call.name, arguments: "" } }] }),
        ...fragments(call.arguments).map((args) => chunk({ tool_calls: [{ index: i, function: { arguments: args } }] })),
      ]),
      chunk({}, "tool_calls"),
      { data: { id: "chatcmpl-1", object: "chat.completion.chunk", created: 1760000000, model: "gpt-test", choices: [], usage: { prompt_tokens: USAGE.input, completion_tokens: USAGE.output, total_tokens: USAGE.input + USAGE.output } } },
      { data: "[DONE]" },
    ];
  },

  "openai-responses": () => {
    const e = (type: string, fields: Record<string, unknown>): ProviderEvent => ({ event: type, data: { type, ...fields } });
    const text = TEXT.join("");
    const message = { id: "msg_1", type: "message", status: "completed", role: "assistant", content: [{ type: "output_text", text, annotations: [] }] };
    const items = CALLS.map((call, i) => ({ id: `fc_${i}`, type: "function_call", status: "completed", call_id: call.id, name: call.name, arguments: JSON.stringify(call.arguments) }));
    return [
      e("response.created", { response: { id: "resp_1", object: "response", status: "in_progress", model: "gpt-test", output: [], usage: null } }),
      e("response.output_item.added", { output_index: 0, item: { ...message, status: "in_progress", content: [] } }),
      e("response.content_part.added", { item_id: "msg_1", output_index: 0, content_index: 0, part: { type: "output_text", text: "", annotations: [] } }),
      ...TEXT.map((delta) => e("response.output_text.delta", { item_id: "msg_1", output_index: 0, content_index: 0, delta })),
      e("response.output_text.done", { item_id: "msg_1", output_index: 0, content_index: 0, text }),
      e("response.content_part.done", { item_id: "msg_1", output_index: 0, content_index: 0, part: { type: "output_text", text, annotations: [] } }),
      e("response.output_item.done", { output_index: 0, item: message }),
      ...CALLS.flatMap((call, i) => [
        e("response.output_item.added", { output_index: i + 1, item: { ...items[i], status: "in_progress", arguments: "" } }),
        ...fragments(call.arguments).map((delta) => e("response.function_call_arguments.delta", { item_id: `fc_${i}`, output_index: i + 1, delta })),
        e("response.function_call_arguments.done", { item_id: `fc_${i}`, output_index: i + 1, arguments: items[i]?.arguments }),
        e("response.output_item.done", { output_index: i + 1, item: items[i] }),
      ]),
      e("response.completed", {
        response: { id: "resp_1", object: "response", status: "completed", model: "gpt-test", output: [message, ...items], usage: { input_tokens: USAGE.input, output_tokens: USAGE.output, total_tokens: USAGE.input + USAGE.output } },
      }),
    ];
  },

  gemini: () => {
    const chunk = (parts: unknown[], extra: Record<string, unknown> = {}): ProviderEvent => ({
      data: {
        candidates: [{ content: { role: "model", parts }, index: 0, ...extra }],
        usageMetadata: { promptTokenCount: USAGE.input, candidatesTokenCount: USAGE.output, totalTokenCount: USAGE.input + USAGE.output },
        modelVersion: "gemini-test",
        responseId: "resp_1",
      },
    });
    return [
      ...TEXT.map((text) => chunk([{ text }])),
      chunk([{ functionCall: { ...CALLS[0], args: CALLS[0].arguments, arguments: undefined }, thoughtSignature: "SIG" }]),
      chunk([{ functionCall: { ...CALLS[1], args: CALLS[1].arguments, arguments: undefined } }], { finishReason: "STOP" }),
    ].map((event) => JSON.parse(JSON.stringify(event)) as ProviderEvent);
  },

  bedrock: () => [
    { data: { messageStart: { role: "assistant" } } },
    ...TEXT.map((text) => ({ data: { contentBlockDelta: { contentBlockIndex: 0, delta: { text } } } })),
    { data: { contentBlockStop: { contentBlockIndex: 0 } } },
    ...CALLS.flatMap((call, i) => [
      { data: { contentBlockStart: { contentBlockIndex: i + 1, start: { toolUse: { toolUseId: call.id, name: call.name } } } } },
      ...fragments(call.arguments).map((input) => ({ data: { contentBlockDelta: { contentBlockIndex: i + 1, delta: { toolUse: { input } } } } })),
      { data: { contentBlockStop: { contentBlockIndex: i + 1 } } },
    ]),
    { data: { messageStop: { stopReason: "tool_use" } } },
    { data: { metadata: { usage: { inputTokens: USAGE.input, outputTokens: USAGE.output, totalTokens: USAGE.input + USAGE.output }, metrics: { latencyMs: 400 } } } },
  ],

  ollama: () => {
    const line = (message: Record<string, unknown>, extra: Record<string, unknown> = {}): ProviderEvent => ({
      data: { model: "qwen3", created_at: "2025-07-01T10:00:00Z", message: { role: "assistant", content: "", ...message }, done: false, ...extra },
    });
    return [
      ...TEXT.map((content) => line({ content })),
      ...CALLS.map((call, i) => line({ tool_calls: [{ id: call.id, function: { index: i, name: call.name, arguments: call.arguments } }] })),
      line({}, { done: true, done_reason: "stop", prompt_eval_count: USAGE.input, eval_count: USAGE.output }),
    ];
  },
};

function decode(provider: ProviderName): DecodedTurn {
  const decoder = createDecoder(provider);
  for (const event of SCENARIOS[provider]()) decoder.push(event);
  return decoder.finish();
}

/** The DecodedTurn without the fields that are provider-specific by nature. */
function neutral(turn: DecodedTurn) {
  return {
    status: turn.status,
    finishReason: turn.finishReason,
    text: turn.text,
    reasoning: turn.reasoning,
    toolCalls: turn.toolCalls.map((call) => ({
      index: call.index,
      id: call.id,
      name: call.name,
      arguments: call.arguments,
      complete: call.complete,
      repairs: call.repairs,
      error: call.error,
      kind: call.kind,
    })),
    serverToolCalls: turn.serverToolCalls,
    blocks: turn.blocks.map((block) => block.type),
    usage: turn.usage && { inputTokens: turn.usage.inputTokens, outputTokens: turn.usage.outputTokens, totalTokens: turn.usage.totalTokens },
    error: turn.error,
    problems: turn.diagnostics.filter((d) => d.severity === "warning" || d.severity === "error").map((d) => d.code),
  };
}

const EXPECTED = {
  status: "complete",
  finishReason: "tool_calls",
  text: "Let me check both cities.",
  reasoning: "",
  toolCalls: CALLS.map((call, index) => ({ index, id: call.id, name: call.name, arguments: call.arguments, complete: true, repairs: [], error: null, kind: "client" })),
  serverToolCalls: [],
  blocks: ["text", "tool_call", "tool_call"],
  usage: { inputTokens: USAGE.input, outputTokens: USAGE.output, totalTokens: USAGE.input + USAGE.output },
  error: null,
  problems: [],
};

const registered = new Set(supportedProviders());

describe("the same scenario gives the same DecodedTurn from every provider", () => {
  for (const provider of Object.keys(SCENARIOS) as ProviderName[]) {
    // A provider without a registered decoder is skipped by name, not silently passed.
    it.skipIf(!registered.has(provider))(`${provider}${registered.has(provider) ? "" : " (no decoder registered yet)"}`, () => {
      expect(neutral(decode(provider))).toEqual(EXPECTED);
    });
  }

  it("all six providers are registered", () => {
    expect([...registered].sort()).toEqual(["anthropic", "bedrock", "gemini", "ollama", "openai-chat", "openai-responses"]);
  });

  it("the provider-specific parts differ as they should", () => {
    const sources = Object.fromEntries([...registered].map((provider) => [provider, decode(provider).toolCalls.map((call) => call.source)]));
    expect(sources).toMatchObject({ anthropic: ["delta", "delta"], bedrock: ["delta", "delta"], gemini: ["final", "final"], ollama: ["final", "final"] });
    if (registered.has("gemini")) expect(decode("gemini").toolCalls[0]?.providerFields).toEqual({ thoughtSignature: "SIG" });
  });
});

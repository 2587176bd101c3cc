import type { ProviderEvent } from "../../src/types.js";

/** Builders for Chat Completions chunks, so tests read like the streams they describe. */
export const c = {
  chunk: (choice: Record<string, unknown> | null, top: Record<string, unknown> = {}): ProviderEvent => ({
    data: {
      id: "chatcmpl-test",
      object: "chat.completion.chunk",
      created: 1760000000,
      model: "gpt-test",
      choices: choice === null ? [] : [{ index: 0, ...choice }],
      ...top,
    },
  }),
  role: (): ProviderEvent => c.chunk({ delta: { role: "assistant", content: "" }, finish_reason: null }),
  text: (text: string): ProviderEvent => c.chunk({ delta: { content: text }, finish_reason: null }),
  reasoning: (text: string, field = "reasoning_content"): ProviderEvent => c.chunk({ delta: { [field]: text }, finish_reason: null }),
  /** One `tool_calls` entry; `undefined` fields are left out, as servers do. */
  entry: (fields: { index?: number; id?: string; type?: string; name?: string; args?: unknown; extra?: Record<string, unknown> }): Record<string, unknown> => {
    const entry: Record<string, unknown> = {};
    if (fields.index !== undefined) entry.index = fields.index;
    if (fields.id !== undefined) entry.id = fields.id;
    if (fields.type !== undefined) entry.type = fields.type;
    const fn: Record<string, unknown> = {};
    if (fields.name !== undefined) fn.name = fields.name;
    if (fields.args !== undefined) fn.arguments = fields.args;
    if (Object.keys(fn).length > 0) entry.function = fn;
    return { ...entry, ...fields.extra };
  },
  tools: (...entries: Record<string, unknown>[]): ProviderEvent => c.chunk({ delta: { tool_calls: entries }, finish_reason: null }),
  /** The first fragment of a call as OpenAI sends it: index, id, type, name and empty arguments. */
  open: (index: number, id: string, name: string, args = ""): ProviderEvent => c.tools(c.entry({ index, id, type: "function", name, args })),
  args: (index: number, args: unknown): ProviderEvent => c.tools(c.entry({ index, args })),
  finish: (reason: string, top: Record<string, unknown> = {}): ProviderEvent => c.chunk({ delta: {}, finish_reason: reason }, top),
  usage: (usage: Record<string, unknown> = { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 }): ProviderEvent => c.chunk(null, { usage }),
  done: (): ProviderEvent => ({ data: "[DONE]" }),
};

/** A complete Chat stream: role chunk, the given chunks, finish_reason, usage chunk and [DONE]. */
export function chatStream(chunks: ProviderEvent[], finish = "tool_calls"): ProviderEvent[] {
  return [c.role(), ...chunks, c.finish(finish), c.usage(), c.done()];
}

/** One call streamed in the given argument fragments (OpenAI's shape). */
export function chatCall(index: number, id: string, name: string, fragments: string[]): ProviderEvent[] {
  return [c.open(index, id, name), ...fragments.map((fragment) => c.args(index, fragment))];
}

/** Builders for Responses events (`event:` name equal to the payload type, as the API sends them). */
export const r = {
  event: (type: string, fields: Record<string, unknown> = {}): ProviderEvent => ({ event: type, data: { type, ...fields } }),
  created: (id = "resp_test"): ProviderEvent => r.event("response.created", { response: { id, object: "response", status: "in_progress", model: "gpt-test", output: [], usage: null } }),
  callAdded: (outputIndex: number, itemId: string, callId: string, name: string, args = ""): ProviderEvent =>
    r.event("response.output_item.added", { output_index: outputIndex, item: { id: itemId, type: "function_call", status: "in_progress", arguments: args, call_id: callId, name } }),
  argsDelta: (outputIndex: number, itemId: string, delta: string): ProviderEvent =>
    r.event("response.function_call_arguments.delta", { item_id: itemId, output_index: outputIndex, delta }),
  argsDone: (outputIndex: number, itemId: string, args: string): ProviderEvent =>
    r.event("response.function_call_arguments.done", { item_id: itemId, output_index: outputIndex, arguments: args }),
  callDone: (outputIndex: number, itemId: string, callId: string, name: string, args: string): ProviderEvent =>
    r.event("response.output_item.done", { output_index: outputIndex, item: { id: itemId, type: "function_call", status: "completed", arguments: args, call_id: callId, name } }),
  completed: (output: unknown[] = [], usage: unknown = { input_tokens: 10, output_tokens: 5, total_tokens: 15 }, id = "resp_test"): ProviderEvent =>
    r.event("response.completed", { response: { id, object: "response", status: "completed", model: "gpt-test", output, usage } }),
  incomplete: (reason: string): ProviderEvent =>
    r.event("response.incomplete", { response: { id: "resp_test", status: "incomplete", incomplete_details: { reason }, output: [], usage: { input_tokens: 10, output_tokens: 100 } } }),
};

/** One function call as the Responses API streams it: added, deltas, arguments.done, item done. */
export function responsesCall(outputIndex: number, itemId: string, callId: string, name: string, fragments: string[]): ProviderEvent[] {
  const args = fragments.join("");
  return [
    r.callAdded(outputIndex, itemId, callId, name),
    ...fragments.map((fragment) => r.argsDelta(outputIndex, itemId, fragment)),
    r.argsDone(outputIndex, itemId, args),
    r.callDone(outputIndex, itemId, callId, name, args),
  ];
}

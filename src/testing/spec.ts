import type { ProviderEvent, ProviderName } from "../types.js";
import { stringifyJson } from "./values.js";

/**
 * Valid streams in each provider's wire shape, generated from one provider-neutral spec (text,
 * reasoning, calls with random JSON arguments), so that the fuzzer reaches beyond the recorded
 * corpus and knows what each generated stream must decode to.
 */

export interface CallSpec {
  /** Omitted for the providers where ids are optional on the wire (Gemini, Ollama), sometimes. */
  id?: string;
  name: string;
  arguments: Record<string, unknown>;
}

/** A provider-neutral turn: text pieces, calls, and how to lay them out on the wire. */
export interface TurnSpec {
  text: string[];
  calls: CallSpec[];
  /** Sizes (cycled) at which argument JSON is cut into fragments. */
  fragmentSizes: number[];
  /** Gemini: stream arguments as JSON-path leaves (Vertex) where the value allows it. */
  streamedArgs: boolean;
  /** Gemini/Ollama: every call in its own chunk rather than all in one. */
  callPerChunk: boolean;
  /** Open every call, then send their fragments round-robin, then close them (a legal interleaving). */
  interleaved?: boolean;
}

/** A generated stream: the provider's events and the spec they render. */
export interface GeneratedStream {
  provider: ProviderName;
  events: ProviderEvent[];
  spec: TurnSpec;
}

// ---------------------------------------------------------------------------------------------
// Rendering a spec in each wire shape.

function fragments(text: string, sizes: readonly number[]): string[] {
  const out: string[] = [];
  for (let at = 0, k = 0; at < text.length; k++) {
    const size = sizes[k % sizes.length] ?? 8;
    out.push(text.slice(at, at + size));
    at += size;
  }
  return out;
}

interface CallEvents {
  open: ProviderEvent[];
  fragments: ProviderEvent[];
  close: ProviderEvent[];
}

/** Calls one after another, or (spec.interleaved) all opened, fragments round-robin, all closed. */
function schedule(spec: TurnSpec, render: (call: CallSpec, i: number) => CallEvents): ProviderEvent[] {
  const calls = spec.calls.map(render);
  if (!spec.interleaved) return calls.flatMap((c) => [...c.open, ...c.fragments, ...c.close]);
  const out: ProviderEvent[] = calls.flatMap((c) => c.open);
  const longest = Math.max(0, ...calls.map((c) => c.fragments.length));
  for (let k = 0; k < longest; k++) for (const c of calls) if (k < c.fragments.length) out.push(c.fragments[k] as ProviderEvent);
  out.push(...calls.flatMap((c) => c.close));
  return out;
}

function callId(provider: ProviderName, call: CallSpec, i: number): string {
  const prefix = provider === "anthropic" ? "toolu_" : provider === "bedrock" ? "tooluse_" : "call_";
  return call.id !== undefined ? prefix + call.id : `${prefix}gen${i}`;
}

/** The id a decoded call must carry, or undefined when the wire carries none (the decoder mints one). */
export function expectedCallId(provider: ProviderName, call: CallSpec, i: number): string | undefined {
  if ((provider === "gemini" || provider === "ollama") && call.id === undefined) return undefined;
  return callId(provider, call, i);
}

function renderAnthropic(spec: TurnSpec): ProviderEvent[] {
  const ev = (data: Record<string, unknown>): ProviderEvent => ({ event: data.type as string, data });
  const out: ProviderEvent[] = [
    ev({ type: "message_start", message: { id: "msg_gen", type: "message", role: "assistant", model: "gen", content: [], stop_reason: null, usage: { input_tokens: 3, output_tokens: 1 } } }),
  ];
  let index = 0;
  if (spec.text.length > 0) {
    out.push(ev({ type: "content_block_start", index, content_block: { type: "text", text: "" } }));
    for (const text of spec.text) out.push(ev({ type: "content_block_delta", index, delta: { type: "text_delta", text } }));
    out.push(ev({ type: "content_block_stop", index }));
    index++;
  }
  const first = index;
  out.push(
    ...schedule(spec, (call, i) => {
      const at = first + i;
      return {
        open: [ev({ type: "content_block_start", index: at, content_block: { type: "tool_use", id: callId("anthropic", call, i), name: call.name, input: {} } })],
        fragments: ["", ...fragments(stringifyJson(call.arguments), spec.fragmentSizes)].map((piece) =>
          ev({ type: "content_block_delta", index: at, delta: { type: "input_json_delta", partial_json: piece } }),
        ),
        close: [ev({ type: "content_block_stop", index: at })],
      };
    }),
  );
  out.push(ev({ type: "message_delta", delta: { stop_reason: spec.calls.length > 0 ? "tool_use" : "end_turn", stop_sequence: null }, usage: { output_tokens: 9 } }));
  out.push(ev({ type: "message_stop" }));
  return out;
}

function renderOpenAiChat(spec: TurnSpec): ProviderEvent[] {
  const chunk = (delta: Record<string, unknown>, finish: string | null = null): ProviderEvent => ({
    data: { id: "chatcmpl-gen", object: "chat.completion.chunk", created: 1, model: "gen", choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }], usage: null },
  });
  const out: ProviderEvent[] = [chunk({ role: "assistant", content: "" })];
  for (const text of spec.text) out.push(chunk({ content: text }));
  out.push(
    ...schedule(spec, (call, i) => ({
      open: [chunk({ tool_calls: [{ index: i, id: callId("openai-chat", call, i), type: "function", function: { name: call.name, arguments: "" } }] })],
      fragments: fragments(stringifyJson(call.arguments), spec.fragmentSizes).map((piece) => chunk({ tool_calls: [{ index: i, function: { arguments: piece } }] })),
      close: [],
    })),
  );
  out.push(chunk({}, spec.calls.length > 0 ? "tool_calls" : "stop"));
  out.push({ data: { id: "chatcmpl-gen", object: "chat.completion.chunk", created: 1, model: "gen", choices: [], usage: { prompt_tokens: 3, completion_tokens: 9, total_tokens: 12 } } });
  out.push({ data: "[DONE]" });
  return out;
}

function renderOpenAiResponses(spec: TurnSpec): ProviderEvent[] {
  let sequence = 0;
  const ev = (type: string, fields: Record<string, unknown>): ProviderEvent => ({ event: type, data: { type, sequence_number: sequence++, ...fields } });
  const response = (status: string, output: unknown[], usage: unknown): Record<string, unknown> => ({ id: "resp_gen", object: "response", status, model: "gen", output, usage });
  const out: ProviderEvent[] = [ev("response.created", { response: response("in_progress", [], null) }), ev("response.in_progress", { response: response("in_progress", [], null) })];
  const items: unknown[] = [];
  let outputIndex = 0;
  if (spec.text.length > 0) {
    const text = spec.text.join("");
    const id = "msg_gen";
    out.push(ev("response.output_item.added", { output_index: outputIndex, item: { id, type: "message", status: "in_progress", role: "assistant", content: [] } }));
    out.push(ev("response.content_part.added", { output_index: outputIndex, item_id: id, content_index: 0, part: { type: "output_text", text: "", annotations: [] } }));
    for (const delta of spec.text) out.push(ev("response.output_text.delta", { output_index: outputIndex, item_id: id, content_index: 0, delta }));
    out.push(ev("response.output_text.done", { output_index: outputIndex, item_id: id, content_index: 0, text }));
    const part = { type: "output_text", text, annotations: [] };
    out.push(ev("response.content_part.done", { output_index: outputIndex, item_id: id, content_index: 0, part }));
    const item = { id, type: "message", status: "completed", role: "assistant", content: [part] };
    out.push(ev("response.output_item.done", { output_index: outputIndex, item }));
    items.push(item);
    outputIndex++;
  }
  const first = outputIndex;
  // Sequence numbers follow wire order, so events are numbered after scheduling.
  const pending = schedule(spec, (call, i) => {
    const id = `fc_gen${i}`;
    const at = first + i;
    const args = stringifyJson(call.arguments);
    const base = { id, type: "function_call", call_id: callId("openai-responses", call, i), name: call.name };
    const item = { ...base, status: "completed", arguments: args };
    items.push(item);
    const raw = (type: string, fields: Record<string, unknown>): ProviderEvent => ({ event: type, data: { type, ...fields } });
    return {
      open: [raw("response.output_item.added", { output_index: at, item: { ...base, status: "in_progress", arguments: "" } })],
      fragments: fragments(args, spec.fragmentSizes).map((delta) => raw("response.function_call_arguments.delta", { item_id: id, output_index: at, delta })),
      close: [raw("response.function_call_arguments.done", { item_id: id, output_index: at, arguments: args }), raw("response.output_item.done", { output_index: at, item })],
    };
  });
  for (const event of pending) {
    const { type, ...fields } = event.data as Record<string, unknown>;
    out.push(ev(type as string, fields));
  }
  out.push(ev("response.completed", { response: response("completed", items, { input_tokens: 3, output_tokens: 9, total_tokens: 12 }) }));
  return out;
}

/** True when every container in `value` is non-empty: only such values can be sent as JSON-path leaves. */
function leafExpressible(value: unknown): boolean {
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const node = stack.pop();
    if (typeof node !== "object" || node === null) continue;
    const children = Array.isArray(node) ? node : Object.values(node);
    if (children.length === 0) return false;
    stack.push(...children);
  }
  return true;
}

function leafPath(path: Array<string | number>): string {
  return (
    "$" +
    path
      .map((segment) => (typeof segment === "number" ? `[${segment}]` : /^[A-Za-z_][A-Za-z0-9_]*$/.test(segment) ? `.${segment}` : `[${JSON.stringify(segment)}]`))
      .join("")
  );
}

/** Vertex `partialArgs` entries for an object, leaves in document order, strings cut into pieces. */
function partialArgs(args: Record<string, unknown>, sizes: readonly number[]): Array<Record<string, unknown>> {
  const entries: Array<Record<string, unknown>> = [];
  const stack: Array<[unknown, Array<string | number>]> = [[args, []]];
  while (stack.length > 0) {
    const [node, path] = stack.pop() as [unknown, Array<string | number>];
    if (typeof node === "object" && node !== null) {
      const children: Array<[unknown, Array<string | number>]> = Array.isArray(node)
        ? node.map((child, i) => [child, [...path, i]])
        : Object.keys(node).map((key) => [(node as Record<string, unknown>)[key], [...path, key]]);
      for (let i = children.length - 1; i >= 0; i--) stack.push(children[i] as [unknown, Array<string | number>]);
      continue;
    }
    const jsonPath = leafPath(path);
    if (typeof node === "string") {
      const pieces = fragments(node, sizes);
      pieces.forEach((piece) => entries.push({ jsonPath, stringValue: piece, willContinue: true }));
      entries.push({ jsonPath, stringValue: "" });
    } else if (typeof node === "number") {
      entries.push({ jsonPath, numberValue: node });
    } else if (typeof node === "boolean") {
      entries.push({ jsonPath, boolValue: node });
    } else {
      entries.push({ jsonPath, nullValue: null });
    }
  }
  return entries;
}

function renderGemini(spec: TurnSpec): ProviderEvent[] {
  const usage = { promptTokenCount: 3, candidatesTokenCount: 9, totalTokenCount: 12 };
  const chunk = (parts: unknown[], finish?: string): ProviderEvent => ({
    data: {
      candidates: [{ content: { role: "model", parts }, ...(finish ? { finishReason: finish } : {}), index: 0 }],
      usageMetadata: usage,
      modelVersion: "gen",
      responseId: "resp_gen",
    },
  });
  const out: ProviderEvent[] = spec.text.map((text) => chunk([{ text }]));
  const whole: unknown[] = [];
  spec.calls.forEach((call, i) => {
    const id = expectedCallId("gemini", call, i);
    const idField = id !== undefined ? { id } : {};
    if (spec.streamedArgs && Object.keys(call.arguments).length > 0 && leafExpressible(call.arguments)) {
      // Whole calls held back for one chunk go out first, so that calls keep their order.
      if (whole.length > 0) out.push(chunk(whole.splice(0)));
      out.push(chunk([{ functionCall: { name: call.name, ...idField, willContinue: true } }]));
      for (const entry of partialArgs(call.arguments, spec.fragmentSizes)) out.push(chunk([{ functionCall: { partialArgs: [entry], willContinue: true } }]));
      out.push(chunk([{ functionCall: {} }]));
      return;
    }
    const part = { functionCall: { name: call.name, args: call.arguments, ...idField } };
    if (spec.callPerChunk) out.push(chunk([part]));
    else whole.push(part);
  });
  out.push(chunk(whole.length > 0 ? whole : [{ text: "" }], "STOP"));
  return out;
}

function renderBedrock(spec: TurnSpec): ProviderEvent[] {
  let padding = 0;
  const ev = (event: string, body: Record<string, unknown>): ProviderEvent => ({ event, data: { ...body, p: "abcdefghijklmnopqrstuvwxyz".slice(0, (padding++ * 7) % 27) } });
  const out: ProviderEvent[] = [ev("messageStart", { role: "assistant" })];
  let index = 0;
  if (spec.text.length > 0) {
    for (const text of spec.text) out.push(ev("contentBlockDelta", { contentBlockIndex: index, delta: { text } }));
    out.push(ev("contentBlockStop", { contentBlockIndex: index }));
    index++;
  }
  const first = index;
  out.push(
    ...schedule(spec, (call, i) => ({
      open: [ev("contentBlockStart", { contentBlockIndex: first + i, start: { toolUse: { toolUseId: callId("bedrock", call, i), name: call.name } } })],
      fragments: fragments(stringifyJson(call.arguments), spec.fragmentSizes).map((input) => ev("contentBlockDelta", { contentBlockIndex: first + i, delta: { toolUse: { input } } })),
      close: [ev("contentBlockStop", { contentBlockIndex: first + i })],
    })),
  );
  out.push(ev("messageStop", { stopReason: spec.calls.length > 0 ? "tool_use" : "end_turn" }));
  out.push(ev("metadata", { usage: { inputTokens: 3, outputTokens: 9, totalTokens: 12 }, metrics: { latencyMs: 5 } }));
  return out;
}

function renderOllama(spec: TurnSpec): ProviderEvent[] {
  const line = (message: Record<string, unknown>, done = false, extra: Record<string, unknown> = {}): ProviderEvent => ({
    data: { model: "gen", created_at: "2025-01-01T00:00:00Z", message: { role: "assistant", content: "", ...message }, done, ...extra },
  });
  const out: ProviderEvent[] = spec.text.map((content) => line({ content }));
  const entries = spec.calls.map((call, i) => {
    const id = expectedCallId("ollama", call, i);
    return { ...(id !== undefined ? { id } : {}), function: { index: i, name: call.name, arguments: call.arguments } };
  });
  if (spec.callPerChunk) for (const entry of entries) out.push(line({ tool_calls: [entry] }));
  else if (entries.length > 0) out.push(line({ tool_calls: entries }));
  out.push(line({}, true, { done_reason: "stop", prompt_eval_count: 3, eval_count: 9 }));
  return out;
}

const RENDERERS: Record<ProviderName, (spec: TurnSpec) => ProviderEvent[]> = {
  anthropic: renderAnthropic,
  "openai-chat": renderOpenAiChat,
  "openai-responses": renderOpenAiResponses,
  gemini: renderGemini,
  bedrock: renderBedrock,
  ollama: renderOllama,
};

/** The spec as `provider` would stream it. Deterministic. */
export function renderSpec(provider: ProviderName, spec: TurnSpec): ProviderEvent[] {
  return RENDERERS[provider](spec);
}

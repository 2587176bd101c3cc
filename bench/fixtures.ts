/**
 * Synthetic but realistic benchmark streams: one tool call whose arguments (a file write with
 * escaped multi-line content) are streamed in fixed-size fragments, framed as the provider does.
 */

export function bigArguments(targetBytes: number): string {
  const line = 'export const value = "text with \\"quotes\\", tabs\\t and unicode é✓";\n';
  const lines: string[] = [];
  let size = 0;
  while (size < targetBytes) {
    lines.push(line);
    size += line.length + 4;
  }
  return JSON.stringify({ path: "src/generated/file.ts", mode: "overwrite", content: lines.join(""), tags: ["bench", "large"] });
}

export function fragments(text: string, size: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}

/** An Anthropic Messages SSE body carrying one tool_use block whose input is streamed in `size`-char deltas. */
export function anthropicSseBody(argumentsText: string, size: number): string {
  const events: string[] = [];
  const emit = (type: string, data: unknown): void => {
    events.push(`event: ${type}\ndata: ${JSON.stringify(data)}\n\n`);
  };
  emit("message_start", {
    type: "message_start",
    message: { id: "msg_bench", type: "message", role: "assistant", model: "claude-bench", content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 10, output_tokens: 1 } },
  });
  emit("content_block_start", { type: "content_block_start", index: 0, content_block: { type: "tool_use", id: "toolu_bench", name: "write_file", input: {} } });
  for (const fragment of fragments(argumentsText, size)) {
    emit("content_block_delta", { type: "content_block_delta", index: 0, delta: { type: "input_json_delta", partial_json: fragment } });
  }
  emit("content_block_stop", { type: "content_block_stop", index: 0 });
  emit("message_delta", { type: "message_delta", delta: { stop_reason: "tool_use", stop_sequence: null }, usage: { output_tokens: 1000 } });
  emit("message_stop", { type: "message_stop" });
  return events.join("");
}

/** Network-sized chunks of the encoded body, as a fetch body would deliver them. */
export function chunkBytes(body: string, chunkSize = 16 * 1024): Uint8Array[] {
  const bytes = new TextEncoder().encode(body);
  const chunks: Uint8Array[] = [];
  for (let i = 0; i < bytes.length; i += chunkSize) chunks.push(bytes.subarray(i, i + chunkSize));
  return chunks;
}

/**
 * An OpenAI Chat Completions SSE body carrying one tool call whose arguments are streamed in
 * `size`-char fragments, as api.openai.com sends it: role chunk, the call's first fragment with
 * id, type, name and empty arguments, continuation fragments, finish chunk, usage chunk, [DONE].
 */
export function openaiChatSseBody(argumentsText: string, size: number): string {
  const events: string[] = [];
  const chunk = (choices: unknown[], extra: Record<string, unknown> = {}): void => {
    events.push(`data: ${JSON.stringify({ id: "chatcmpl-bench", object: "chat.completion.chunk", created: 1760000000, model: "gpt-bench", choices, usage: null, ...extra })}\n\n`);
  };
  const delta = (value: Record<string, unknown>, finish: string | null = null) => [{ index: 0, delta: value, logprobs: null, finish_reason: finish }];
  chunk(delta({ role: "assistant", content: null }));
  chunk(delta({ tool_calls: [{ index: 0, id: "call_bench", type: "function", function: { name: "write_file", arguments: "" } }] }));
  for (const fragment of fragments(argumentsText, size)) chunk(delta({ tool_calls: [{ index: 0, function: { arguments: fragment } }] }));
  chunk(delta({}, "tool_calls"));
  chunk([], { usage: { prompt_tokens: 10, completion_tokens: 1000, total_tokens: 1010 } });
  events.push("data: [DONE]\n\n");
  return events.join("");
}

/** The strict function tool the benchmark's arguments satisfy (OpenAI structured-outputs rules). */
export const WRITE_FILE_TOOL = {
  type: "function" as const,
  function: {
    name: "write_file",
    strict: true,
    parameters: {
      type: "object",
      properties: { path: { type: "string" }, mode: { type: "string" }, content: { type: "string" }, tags: { type: "array", items: { type: "string" } } },
      required: ["path", "mode", "content", "tags"],
      additionalProperties: false,
    },
  },
};

/** A tool call of a benchmark turn, with its arguments as the JSON text the model streams. */
export interface BenchCall {
  id: string;
  name: string;
  argumentsText: string;
}

/**
 * An Anthropic Messages SSE body for a whole turn: an optional text block streamed in
 * `textSize`-char deltas, then one tool_use block per call (Anthropic sends parallel calls as
 * consecutive blocks), arguments in `size`-char `input_json_delta` fragments.
 */
export function anthropicTurnBody(text: string, calls: BenchCall[], size: number, textSize = size): string {
  const events: string[] = [];
  const emit = (type: string, data: unknown): void => {
    events.push(`event: ${type}\ndata: ${JSON.stringify(data)}\n\n`);
  };
  emit("message_start", {
    type: "message_start",
    message: { id: "msg_bench", type: "message", role: "assistant", model: "claude-bench", content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 10, output_tokens: 1 } },
  });
  let index = 0;
  if (text) {
    emit("content_block_start", { type: "content_block_start", index, content_block: { type: "text", text: "" } });
    for (const fragment of fragments(text, textSize)) emit("content_block_delta", { type: "content_block_delta", index, delta: { type: "text_delta", text: fragment } });
    emit("content_block_stop", { type: "content_block_stop", index });
    index++;
  }
  for (const call of calls) {
    emit("content_block_start", { type: "content_block_start", index, content_block: { type: "tool_use", id: call.id, name: call.name, input: {} } });
    for (const fragment of fragments(call.argumentsText, size)) {
      emit("content_block_delta", { type: "content_block_delta", index, delta: { type: "input_json_delta", partial_json: fragment } });
    }
    emit("content_block_stop", { type: "content_block_stop", index });
    index++;
  }
  emit("message_delta", { type: "message_delta", delta: { stop_reason: calls.length > 0 ? "tool_use" : "end_turn", stop_sequence: null }, usage: { output_tokens: 1000 } });
  emit("message_stop", { type: "message_stop" });
  return events.join("");
}

/**
 * An OpenAI Chat Completions SSE body for a whole turn: text in `content` deltas, then the calls,
 * each opened by a fragment carrying its id and name. With `interleave`, the calls' argument
 * fragments alternate round-robin (parallel calls as some servers and proxies stream them);
 * otherwise each call streams whole before the next.
 */
export function openaiChatTurnBody(text: string, calls: BenchCall[], size: number, interleave = false, textSize = size): string {
  const events: string[] = [];
  const chunk = (choices: unknown[], extra: Record<string, unknown> = {}): void => {
    events.push(`data: ${JSON.stringify({ id: "chatcmpl-bench", object: "chat.completion.chunk", created: 1760000000, model: "gpt-bench", choices, usage: null, ...extra })}\n\n`);
  };
  const delta = (value: Record<string, unknown>, finish: string | null = null) => [{ index: 0, delta: value, logprobs: null, finish_reason: finish }];
  chunk(delta({ role: "assistant", content: null }));
  for (const fragment of text ? fragments(text, textSize) : []) chunk(delta({ content: fragment }));
  const open = (index: number, call: BenchCall): void => chunk(delta({ tool_calls: [{ index, id: call.id, type: "function", function: { name: call.name, arguments: "" } }] }));
  const pieces = calls.map((call) => fragments(call.argumentsText, size));
  if (interleave) {
    calls.forEach((call, index) => open(index, call));
    const longest = Math.max(0, ...pieces.map((list) => list.length));
    for (let at = 0; at < longest; at++) {
      pieces.forEach((list, index) => {
        const fragment = list[at];
        if (fragment !== undefined) chunk(delta({ tool_calls: [{ index, function: { arguments: fragment } }] }));
      });
    }
  } else {
    calls.forEach((call, index) => {
      open(index, call);
      for (const fragment of pieces[index] ?? []) chunk(delta({ tool_calls: [{ index, function: { arguments: fragment } }] }));
    });
  }
  chunk(delta({}, calls.length > 0 ? "tool_calls" : "stop"));
  chunk([], { usage: { prompt_tokens: 10, completion_tokens: 1000, total_tokens: 1010 } });
  events.push("data: [DONE]\n\n");
  return events.join("");
}

/** Arguments of a small, ordinary tool call of about `targetBytes` (a search or a short edit). */
export function smallArguments(targetBytes: number, seed: number): string {
  const words = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta"];
  let note = "";
  for (let i = 0; note.length < targetBytes - 80; i++) note += `${words[(i + seed) % words.length]} `;
  return JSON.stringify({ path: `src/module-${seed}.ts`, query: "export function", limit: 20 + seed, note: note.trim(), flags: ["case", "regex"] });
}

/** The assistant text of a small agent turn: a few sentences before the calls. */
export function smallTurnText(targetChars: number): string {
  const sentence = "I will look at the module first and then update the failing test accordingly. ";
  let text = "";
  while (text.length < targetChars) text += sentence;
  return text.slice(0, targetChars);
}

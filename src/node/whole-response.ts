import type { DecodedTurn, ProviderName, ToolCall } from "../types.js";

/**
 * The non-streamed response a recorded stream assembles to, in the provider's own non-streamed
 * shape (Messages object, chat.completion, Responses object, GenerateContentResponse, Converse
 * response, Ollama `stream: false` object), so that `toolwire serve` can answer a non-streamed
 * request from the streams it holds.
 *
 * The calls are put together as the provider sent them, not as toolwire repaired them: string
 * arguments (Chat, Responses) are the raw concatenated fragments, cut or invalid ones included;
 * object arguments (Anthropic, Converse, Gemini, Ollama) are the raw text parsed, or, where it does
 * not parse, the arguments toolwire decoded (a repaired or split call). A call of these providers
 * with neither (cut by a length stop or a dropped connection, invalid) is left out: an object
 * body cannot hold half an object, and `{}` in its place would be a runnable call nobody sent.
 * The recorded stop reason is kept, so that the repairing fetch or the proxy has the same evidence
 * in the whole body as in the stream.
 */

/** Each call's arguments as text: what the provider streamed for it. */
function rawText(call: ToolCall): string {
  return call.rawArguments;
}

/** Each call's arguments as an object: the raw text parsed where it parses, else what toolwire decoded, else null. */
function rawObject(call: ToolCall): Record<string, unknown> | null {
  try {
    const value = JSON.parse(call.rawArguments === "" ? "{}" : call.rawArguments) as unknown;
    if (typeof value === "object" && value !== null && !Array.isArray(value)) return value as Record<string, unknown>;
  } catch {
    // Not JSON as sent: fall back to the decoded arguments.
  }
  return call.arguments;
}

/** Whether an object-argument provider's body can carry the call (see above). */
function carried(call: ToolCall): boolean {
  return rawObject(call) !== null;
}

function usageOf(turn: DecodedTurn): { input: number; output: number } {
  return { input: turn.usage?.inputTokens ?? 0, output: turn.usage?.outputTokens ?? 0 };
}

/** Content in the order the stream sent it: thinking, text and calls by their block order. */
function ordered(turn: DecodedTurn): Array<{ kind: "text"; text: string } | { kind: "thinking"; text: string; signature: string | null } | { kind: "call"; call: ToolCall }> {
  const out: ReturnType<typeof ordered> = [];
  const seen = new Set<number>();
  for (const block of turn.blocks) {
    if (block.type === "text" && block.text !== "") out.push({ kind: "text", text: block.text });
    else if (block.type === "thinking") out.push({ kind: "thinking", text: block.thinking, signature: block.signature });
    else if (block.type === "reasoning") out.push({ kind: "thinking", text: block.text, signature: null });
    else if (block.type === "tool_call") {
      const call = turn.toolCalls[block.callIndex];
      if (call) {
        seen.add(block.callIndex);
        out.push({ kind: "call", call });
      }
    }
  }
  // Streams whose decoder keeps no blocks: the text first, then the calls.
  if (!out.some((item) => item.kind === "text") && turn.text !== "" && !turn.blocks.some((block) => block.type === "text")) out.unshift({ kind: "text", text: turn.text });
  turn.toolCalls.forEach((call, index) => {
    if (!seen.has(index)) out.push({ kind: "call", call });
  });
  return out;
}

export function assembleWholeResponse(provider: ProviderName, turn: DecodedTurn): Record<string, unknown> {
  const stringArguments = provider === "openai-chat" || provider === "openai-responses";
  const items = ordered(turn).filter((item) => item.kind !== "call" || stringArguments || carried(item.call));
  const calls = stringArguments ? turn.toolCalls : turn.toolCalls.filter(carried);
  const usage = usageOf(turn);
  const id = turn.messageId ?? "toolwire_replay";
  const model = turn.model ?? "toolwire-replay";
  switch (provider) {
    case "anthropic":
      return {
        id,
        type: "message",
        role: "assistant",
        model,
        content: items.map((item) =>
          item.kind === "text"
            ? { type: "text", text: item.text }
            : item.kind === "thinking"
              ? { type: "thinking", thinking: item.text, signature: item.signature ?? "" }
              : { type: "tool_use", id: item.call.providerId ?? item.call.id, name: item.call.name, input: rawObject(item.call) ?? {} },
        ),
        stop_reason: turn.rawFinishReason ?? (calls.length > 0 ? "tool_use" : "end_turn"),
        stop_sequence: null,
        usage: { input_tokens: usage.input, output_tokens: usage.output },
      };
    case "openai-chat":
      return {
        id,
        object: "chat.completion",
        created: 0,
        model,
        choices: [
          {
            index: 0,
            message: {
              role: "assistant",
              content: turn.text === "" ? null : turn.text,
              ...(turn.reasoning !== "" ? { reasoning_content: turn.reasoning } : {}),
              ...(calls.length > 0 ? { tool_calls: calls.map((call) => ({ id: call.providerId ?? call.id, type: "function", function: { name: call.name, arguments: rawText(call) } })) } : {}),
            },
            // Calls read from the text (`textCalls`) are served as a server with a tool parser sends them.
            finish_reason: turn.finishReason === "tool_calls" && calls.some((call) => call.source === "text") ? "tool_calls" : (turn.rawFinishReason ?? (calls.length > 0 ? "tool_calls" : "stop")),
          },
        ],
        usage: { prompt_tokens: usage.input, completion_tokens: usage.output, total_tokens: usage.input + usage.output },
      };
    case "openai-responses": {
      const output = items.map((item, i) =>
        item.kind === "text"
          ? { type: "message", id: `msg_${i}`, status: "completed", role: "assistant", content: [{ type: "output_text", text: item.text, annotations: [] }] }
          : item.kind === "thinking"
            ? { type: "reasoning", id: `rs_${i}`, summary: item.text === "" ? [] : [{ type: "summary_text", text: item.text }] }
            : { type: "function_call", id: `fc_${i}`, call_id: item.call.providerId ?? item.call.id, name: item.call.name, arguments: rawText(item.call), status: "completed" },
      );
      const incomplete = turn.rawFinishReason === "max_output_tokens" || turn.finishReason === "length";
      return {
        id,
        object: "response",
        created_at: 0,
        status: incomplete ? "incomplete" : "completed",
        ...(incomplete ? { incomplete_details: { reason: "max_output_tokens" } } : {}),
        model,
        output,
        usage: { input_tokens: usage.input, output_tokens: usage.output, total_tokens: usage.input + usage.output },
      };
    }
    case "gemini":
      return {
        candidates: [
          {
            content: {
              role: "model",
              parts: items.map((item) =>
                item.kind === "text"
                  ? { text: item.text }
                  : item.kind === "thinking"
                    ? { text: item.text, thought: true }
                    : { functionCall: { ...(item.call.providerId ? { id: item.call.providerId } : {}), name: item.call.name, args: rawObject(item.call) ?? {} } },
              ),
            },
            finishReason: turn.rawFinishReason ?? "STOP",
            index: 0,
          },
        ],
        usageMetadata: { promptTokenCount: usage.input, candidatesTokenCount: usage.output, totalTokenCount: usage.input + usage.output },
        modelVersion: model,
      };
    case "bedrock":
      return {
        output: {
          message: {
            role: "assistant",
            content: items.map((item) =>
              item.kind === "text"
                ? { text: item.text }
                : item.kind === "thinking"
                  ? { reasoningContent: { reasoningText: { text: item.text, ...(item.signature ? { signature: item.signature } : {}) } } }
                  : { toolUse: { toolUseId: item.call.providerId ?? item.call.id, name: item.call.name, input: rawObject(item.call) ?? {} } },
            ),
          },
        },
        stopReason: turn.rawFinishReason ?? (calls.length > 0 ? "tool_use" : "end_turn"),
        usage: { inputTokens: usage.input, outputTokens: usage.output, totalTokens: usage.input + usage.output },
        metrics: { latencyMs: 0 },
      };
    case "ollama":
      return {
        model,
        created_at: new Date(0).toISOString(),
        message: {
          role: "assistant",
          content: turn.text,
          ...(turn.reasoning !== "" ? { thinking: turn.reasoning } : {}),
          ...(calls.length > 0 ? { tool_calls: calls.map((call) => ({ function: { name: call.name, arguments: rawObject(call) ?? {} } })) } : {}),
        },
        done: true,
        done_reason: turn.rawFinishReason ?? "stop",
        prompt_eval_count: usage.input,
        eval_count: usage.output,
      };
  }
}

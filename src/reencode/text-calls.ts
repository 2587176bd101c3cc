import type { CodecEvent } from "../types.js";
import { isPlainObject, type DecoderTap } from "./common.js";
import type { RepairReport } from "./types.js";

/**
 * Re-encoding with `textCalls` (a server without a tool parser, whose model writes its calls into
 * the text): the decoder takes the calls' markup out of the text, holds what may still start a
 * marker, and moves reasoning written into the text (`<think>…</think>`) to reasoning. So the text
 * of a chunk can no longer pass byte for byte: each chunk carries the text and reasoning the
 * decoder released while reading it (most often exactly what it carried, and then it passes
 * unchanged), and the calls go out as the protocol's own call events.
 *
 * `ReleasedText` collects, per event, what the decoder released; `rewriteChatDelta` puts it into a
 * Chat chunk. The Chat re-encoder (openai-chat.ts) sends the calls.
 */
/** How a call read from the text and sent as the protocol's call event is reported (`DecoderTap.rewritten`). */
export const TEXT_CALL_REPORT = { code: "text_call_extracted" } as const;

/** How reasoning taken out of the text is reported (once per stream or body); `to`: where it was sent. */
export function reasoningMoved(to: string): Omit<RepairReport, "stage" | "provider"> {
  return {
    action: "normalized",
    code: "text_reasoning_extracted",
    message: `Reasoning the model wrote into its text (<think>…</think> or the like) was sent as ${to}, as a server with a reasoning parser sends it.`,
  };
}

export const REASONING_MOVED = reasoningMoved("reasoning_content");

/** How a stop reason changed to match the calls read from the text is reported (`field`: the protocol's name for it). */
export function stopReasonForTextCalls(field: string, from: unknown, to: string): Omit<RepairReport, "stage" | "provider"> {
  return { action: "normalized", code: "finish_reason_text_calls", message: `${field} '${String(from)}' became '${to}' to match the calls read from the text.` };
}

/** Where a Chat delta or message carries reasoning: `reasoning_content`, unless the server uses `reasoning` alone. */
export function reasoningField(carrier: Record<string, unknown>): "reasoning_content" | "reasoning" {
  return typeof carrier.reasoning_content === "string" || typeof carrier.reasoning !== "string" ? "reasoning_content" : "reasoning";
}

export class ReleasedText {
  private text = "";
  private reasoning = "";
  /** Reasoning was taken out of the text (reported once per stream). */
  private movedReasoning = false;

  constructor(private readonly tap: DecoderTap) {
    tap.observer = (event: CodecEvent) => {
      if (event.type === "text_delta") this.text += event.text;
      else if (event.type === "reasoning_delta") this.reasoning += event.text;
    };
  }

  /** What was released since the last call, and forgets it. */
  take(): { text: string; reasoning: string } {
    const released = { text: this.text, reasoning: this.reasoning };
    this.text = "";
    this.reasoning = "";
    return released;
  }

  /**
   * A chunk's single choice with its `content` and reasoning set to what was released for it:
   * `same` when that is what it carried (it passes byte for byte), `drop` when nothing is left in
   * it, else the rewritten chunk. A chunk with several choices keeps its own (text calls are read
   * on one choice; docs/text-calls.md).
   */
  rewriteChatChunk(data: Record<string, unknown>, released: { text: string; reasoning: string }): "same" | "drop" | Record<string, unknown> {
    const choices = Array.isArray(data.choices) ? data.choices : [];
    const choice = choices.length === 1 && isPlainObject(choices[0]) ? choices[0] : null;
    if (choice === null) return "same";
    const delta = isPlainObject(choice.delta) ? choice.delta : {};
    const content = typeof delta.content === "string" ? delta.content : "";
    const field = reasoningField(delta);
    const reasoning = typeof delta[field] === "string" ? (delta[field] as string) : "";
    if (content === released.text && reasoning === released.reasoning) return "same";
    if (released.reasoning.length > reasoning.length && !this.movedReasoning) {
      this.movedReasoning = true;
      this.tap.report(REASONING_MOVED);
    }
    const next: Record<string, unknown> = { ...delta };
    if (released.text !== "" || "content" in delta) next.content = released.text;
    if (released.reasoning !== "" || field in delta) next[field] = released.reasoning;
    // A server that sends the reasoning under both names gets the same text under both.
    if (field === "reasoning_content" && typeof delta.reasoning === "string" && delta.reasoning === reasoning) next.reasoning = released.reasoning;
    const rewritten = { ...data, choices: [{ ...choice, delta: next }] };
    return isEmptyChunk(rewritten) ? "drop" : rewritten;
  }
}

/**
 * An Ollama `/api/chat` line with `message.content` and `message.thinking` set to what was released
 * for it: `same` when that is what it carried, `drop` when a line that carried only text is left
 * with none, else the rewritten line.
 */
export function rewriteOllamaLine(data: Record<string, unknown>, released: { text: string; reasoning: string }): "same" | "drop" | Record<string, unknown> {
  const message = isPlainObject(data.message) ? data.message : null;
  if (message === null) return released.text === "" && released.reasoning === "" ? "same" : { ...data, message: ollamaText(released) };
  const content = typeof message.content === "string" ? message.content : "";
  const thinking = typeof message.thinking === "string" ? message.thinking : "";
  if (content === released.text && thinking === released.reasoning) return "same";
  const next: Record<string, unknown> = { ...message, content: released.text };
  if (released.reasoning !== "" || "thinking" in message) next.thinking = released.reasoning;
  if (released.text === "" && released.reasoning === "" && data.done !== true && !Array.isArray(message.tool_calls) && Object.keys(message).every((key) => key === "role" || key === "content" || key === "thinking")) return "drop";
  return { ...data, message: next };
}

/** An Ollama message holding released text, reasoning and calls. */
export function ollamaText(released: { text: string; reasoning: string }, toolCalls: readonly unknown[] = []): Record<string, unknown> {
  return { role: "assistant", content: released.text, ...(released.reasoning !== "" ? { thinking: released.reasoning } : {}), ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}) };
}

const CHUNK_KEYS = new Set(["id", "object", "created", "model", "system_fingerprint", "service_tier", "choices", "usage"]);
const CHOICE_KEYS = new Set(["index", "delta", "finish_reason", "logprobs"]);
const TEXT_KEYS = new Set(["content", "reasoning_content", "reasoning"]);

/**
 * A chunk that carries nothing once its held text is taken out (no role, finish, usage, logprobs,
 * or field toolwire does not know): it is not sent, rather than sent empty.
 */
function isEmptyChunk(data: Record<string, unknown>): boolean {
  for (const key of Object.keys(data)) if (!CHUNK_KEYS.has(key)) return false;
  if (data.usage !== undefined && data.usage !== null) return false;
  const choice = (data.choices as unknown[])[0] as Record<string, unknown>;
  for (const key of Object.keys(choice)) if (!CHOICE_KEYS.has(key)) return false;
  if ((choice.finish_reason !== undefined && choice.finish_reason !== null) || (choice.logprobs !== undefined && choice.logprobs !== null)) return false;
  const delta = choice.delta as Record<string, unknown>;
  for (const [key, value] of Object.entries(delta)) if (!TEXT_KEYS.has(key) || value !== "") return false;
  return true;
}


import type { HistoryFormat } from "../history/index.js";
import { isPlainObject } from "../json/shape.js";

/**
 * Which provider's message format a conversation history is written in, from what only that format
 * has: Gemini's `parts` and role `model`, Responses items' `type`s, Chat's `tool` and `system`
 * roles and `tool_calls`, Converse's `toolUse`/`toolResult` blocks, Messages' typed blocks. Each
 * message (and the request body's own keys) votes; the format with the most votes wins when no other
 * has any. A list of plain `{role, content: "text"}` messages says nothing: null.
 */

export interface HistoryDetection {
  format: HistoryFormat | null;
  /** Votes per format, for the message that explains a mismatch or an ambiguity. */
  votes: Partial<Record<HistoryFormat, number>>;
}

const RESPONSES_TYPES = new Set(["function_call", "function_call_output", "reasoning", "custom_tool_call", "custom_tool_call_output", "item_reference", "web_search_call", "file_search_call", "computer_call", "computer_call_output", "local_shell_call", "mcp_call"]);
const RESPONSES_CONTENT = new Set(["input_text", "output_text", "input_image", "input_file", "refusal"]);
const ANTHROPIC_BLOCKS = new Set(["tool_use", "tool_result", "thinking", "redacted_thinking", "server_tool_use", "web_search_tool_result", "document", "image", "text", "search_result", "container_upload"]);
const BEDROCK_BLOCKS = ["toolUse", "toolResult", "reasoningContent", "cachePoint", "guardContent"];

function voteOf(message: unknown): HistoryFormat | null {
  if (!isPlainObject(message)) return null;
  if (Array.isArray(message.parts) || message.role === "model") return "gemini";
  if (typeof message.type === "string" && (RESPONSES_TYPES.has(message.type) || message.type === "message")) return "openai-responses";
  if (message.role === "tool" || message.role === "system" || message.role === "developer" || message.role === "function" || Array.isArray(message.tool_calls) || "tool_call_id" in message) {
    return "openai-chat";
  }
  const content = message.content;
  if (!Array.isArray(content)) return null;
  for (const block of content) {
    if (!isPlainObject(block)) continue;
    if (BEDROCK_BLOCKS.some((key) => key in block)) return "bedrock";
    if (typeof block.type === "string") {
      if (RESPONSES_CONTENT.has(block.type)) return "openai-responses";
      if (block.type === "image_url" || block.type === "input_audio") return "openai-chat";
      if (ANTHROPIC_BLOCKS.has(block.type) && block.type !== "text") return "anthropic";
    } else if (typeof block.text === "string" && Object.keys(block).length === 1) {
      return "bedrock";
    }
  }
  return null;
}

/** The format a history document (a list of messages or a request body) is written in, with the evidence. */
export function detectHistoryFormat(document: unknown): HistoryDetection {
  const votes: Partial<Record<HistoryFormat, number>> = {};
  const vote = (format: HistoryFormat, weight = 1): void => {
    votes[format] = (votes[format] ?? 0) + weight;
  };
  let messages: unknown[] = [];
  if (Array.isArray(document)) {
    messages = document;
  } else if (isPlainObject(document)) {
    if (Array.isArray(document.contents)) {
      vote("gemini", 2);
      messages = document.contents;
    } else if (Array.isArray(document.input)) {
      vote("openai-responses", 2);
      messages = document.input;
    } else if (Array.isArray(document.messages)) {
      messages = document.messages;
      if (typeof document.modelId === "string" || Array.isArray(document.system)) vote(Array.isArray(document.system) && !document.modelId ? "anthropic" : "bedrock");
      else if (typeof document.system === "string" || typeof document.max_tokens === "number") vote("anthropic");
    }
  }
  for (const message of messages) {
    const format = voteOf(message);
    if (format) vote(format);
  }
  const ranked = (Object.entries(votes) as Array<[HistoryFormat, number]>).sort(([, a], [, b]) => b - a);
  const [first, second] = ranked;
  const format = first && (!second || first[1] > 2 * second[1]) ? first[0] : null;
  return { format, votes };
}

/** `anthropic (3 messages), openai-chat (1)`: the evidence, for messages. */
export function describeVotes(votes: HistoryDetection["votes"]): string {
  return (Object.entries(votes) as Array<[HistoryFormat, number]>)
    .sort(([, a], [, b]) => b - a)
    .map(([format, count]) => `${format} (${count})`)
    .join(", ");
}

/**
 * OpenAI Chat Completions `messages[]` ⇄ neutral. Also the dialect of DeepSeek, Kimi, Mistral,
 * Groq, vLLM, llama.cpp and most gateways: `reasoning_content` (or `reasoning`) on assistant
 * messages is read and written back under the key it came with.
 */
import {
  clone,
  invalidMessage,
  leftovers,
  readArgumentsText,
  readTextResultBlock,
  resultText,
  wireArgumentsText,
  withNative,
  type Message,
  type Part,
  type ReasoningPart,
  type ResultContent,
  type ToolCallPart,
  type ToolResultPart,
} from "../model.js";
import { isPlainObject } from "../../json/shape.js";

const REASONING_KEYS = ["reasoning_content", "reasoning"] as const;

/** Chat Completions `messages` → neutral messages, one to one. */
export function fromOpenAIChat(messages: readonly unknown[]): Message[] {
  return messages.map(readMessage);
}

function readMessage(value: unknown): Message {
  if (!isPlainObject(value)) return invalidMessage(value, "not an object");
  switch (value.role) {
    case "system":
    case "developer":
    case "user":
      return readContentMessage(value);
    case "assistant":
      return readAssistant(value);
    case "tool":
      return readTool(value);
    default:
      return invalidMessage(value, `unknown role ${JSON.stringify(value.role)}`);
  }
}

/** Content shared by every role: a string, null, absent, or a list of parts. */
function readContent(value: Record<string, unknown>): Pick<Message, "parts" | "form"> | null {
  const { content } = value;
  if (typeof content === "string") return { parts: [{ type: "text", text: content }], form: "string" };
  if (content === null) return { parts: [], form: "null" };
  if (content === undefined) return { parts: [], form: "absent" };
  if (!Array.isArray(content)) return null;
  return { parts: content.map(readContentPart) };
}

function readContentPart(item: unknown): Part {
  if (isPlainObject(item) && item.type === "text" && typeof item.text === "string") return withNative({ type: "text", text: item.text }, item, ["type", "text"]);
  return { type: "opaque", format: "openai-chat", value: clone(item) };
}

function readContentMessage(value: Record<string, unknown>): Message {
  const content = readContent(value);
  if (!content) return invalidMessage(value, "content is neither a string nor a list of parts");
  const role = value.role === "user" ? "user" : "system";
  // `developer` is kept as a native role so that it is written back as it came.
  return withNative<Message>({ role, ...content }, value, value.role === "developer" ? ["content"] : ["role", "content"]);
}

function readAssistant(value: Record<string, unknown>): Message {
  const content = readContent(value);
  if (!content) return invalidMessage(value, "content is neither a string nor a list of parts");
  const known = ["role", "content"];
  const parts: Part[] = [];
  const reasoningKey = REASONING_KEYS.find((key) => typeof value[key] === "string");
  if (reasoningKey !== undefined) {
    known.push(reasoningKey);
    const part: ReasoningPart = { type: "reasoning", text: value[reasoningKey] as string };
    parts.push(reasoningKey === "reasoning" ? { ...part, native: { field: "reasoning" } } : part);
  }
  parts.push(...content.parts);
  if (Array.isArray(value.tool_calls) && value.tool_calls.length > 0) {
    const toolCalls = value.tool_calls.map(readToolCall);
    if (toolCalls.includes(null)) return invalidMessage(value, "a tool call has no id or no function name");
    parts.push(...(toolCalls as ToolCallPart[]));
    known.push("tool_calls");
  }
  return withNative<Message>({ role: "assistant", parts, ...(content.form ? { form: content.form } : {}) }, value, known);
}

function readToolCall(value: unknown): ToolCallPart | null {
  if (isPlainObject(value) && value.type === "custom" && isPlainObject(value.custom) && typeof value.id === "string" && typeof value.custom.name === "string" && typeof value.custom.input === "string") {
    return withNative<ToolCallPart>({ type: "tool_call", id: value.id, name: value.custom.name, arguments: { input: value.custom.input }, custom: true }, value, ["id", "type", "custom"]);
  }
  if (!isPlainObject(value) || !isPlainObject(value.function)) return null;
  const { id } = value;
  const { name, arguments: args } = value.function;
  if (typeof id !== "string" || typeof name !== "string") return null;
  const part: ToolCallPart = { type: "tool_call", id, name, ...readArgumentsText(typeof args === "string" ? args : JSON.stringify(args ?? {})) };
  return withNative(part, value, value.type === "function" ? ["id", "type", "function"] : ["id", "function"]);
}

function readTool(value: Record<string, unknown>): Message {
  const { tool_call_id: callId, content } = value;
  if (typeof callId !== "string") return invalidMessage(value, "tool message without a string tool_call_id");
  let resultContent: ToolResultPart["content"];
  if (typeof content === "string") resultContent = content;
  else if (Array.isArray(content)) resultContent = content.map((item) => readTextResultBlock(item));
  else return invalidMessage(value, "tool message content is neither a string nor a list of parts");
  const part: ToolResultPart = { type: "tool_result", callId, content: resultContent };
  const native = leftovers(value, ["role", "tool_call_id", "content"]);
  if (native && typeof native.name === "string") part.name = native.name;
  return { role: "tool", parts: [native ? { ...part, native } : part] };
}

/**
 * Neutral → Chat Completions. Results inside user messages become `tool` messages placed before
 * the rest of the user message; parts that belong to other formats are left out.
 */
export function toOpenAIChat(messages: readonly Message[]): unknown[] {
  return messages.flatMap(writeMessage);
}

function writeMessage(message: Message): unknown[] {
  if (message.invalid !== undefined) return [clone(message.raw)];
  const toolMessages = message.parts.filter((part): part is ToolResultPart => part.type === "tool_result").map(writeTool);
  const rest = message.parts.filter((part) => part.type !== "tool_result");
  if (message.role === "tool") return toolMessages;
  if (message.role === "assistant") return [writeAssistant(message, rest), ...toolMessages];
  if (rest.length === 0 && toolMessages.length > 0) return toolMessages;
  const role = message.role === "system" ? "system" : "user";
  return [...toolMessages, { role, ...writeContent(message, rest), ...clone(message.native) }];
}

function writeContent(message: Message, parts: readonly Part[]): { content?: unknown } {
  const texts = parts.filter((part) => part.type === "text");
  if (message.form === "null" && parts.length === 0) return { content: null };
  if (message.form === "absent" && parts.length === 0) return {};
  if (message.form === "string" && texts.length === parts.length && texts.length <= 1) return { content: texts[0]?.text ?? "" };
  return {
    content: parts.flatMap((part) => {
      if (part.type === "text") return [{ type: "text", text: part.text, ...clone(part.native) }];
      if (part.type === "opaque" && part.format === "openai-chat") return [clone(part.value)];
      return [];
    }),
  };
}

function writeAssistant(message: Message, parts: readonly Part[]): Record<string, unknown> {
  const reasoning = parts.filter((part): part is ReasoningPart => part.type === "reasoning");
  const toolCalls = parts.filter((part): part is ToolCallPart => part.type === "tool_call");
  const content = parts.filter((part) => part.type === "text" || part.type === "opaque");
  const out: Record<string, unknown> = { role: "assistant" };
  const first = reasoning[0];
  if (first) out[first.native?.field === "reasoning" ? "reasoning" : "reasoning_content"] = reasoning.map((part) => part.text).join("");
  Object.assign(out, writeContent(message, content));
  if (toolCalls.length > 0) out.tool_calls = toolCalls.map(writeToolCall);
  return { ...out, ...clone(message.native) };
}

function writeToolCall(call: ToolCallPart): unknown {
  if (call.custom) {
    const input = call.arguments !== null && typeof call.arguments.input === "string" ? call.arguments.input : wireArgumentsText(call);
    return { id: call.id, type: "custom", custom: { name: call.name, input }, ...clone(call.native) };
  }
  return { id: call.id, type: "function", function: { name: call.name, arguments: wireArgumentsText(call) }, ...clone(call.native) };
}

function writeTool(result: ToolResultPart): unknown {
  const content =
    typeof result.content === "string"
      ? result.content
      : result.content.every((item) => item.type === "text")
        ? (result.content as Array<Extract<ResultContent, { type: "text" }>>).map((item) => ({ type: "text", text: item.text, ...clone(item.native) }))
        : resultText(result.content);
  return { role: "tool", tool_call_id: result.callId, content, ...clone(result.native) };
}

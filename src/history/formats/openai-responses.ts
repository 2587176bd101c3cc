/**
 * OpenAI Responses `input[]` items ⇄ neutral, one neutral message per item: a `function_call` is
 * an assistant message holding one call, a `function_call_output` a tool message holding one
 * result, a `reasoning` item an assistant message holding one reasoning part.
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
  type ToolCallPart,
  type ToolResultPart,
} from "../model.js";
import { isPlainObject } from "../../json/shape.js";

/** Responses `input` items → neutral messages, one to one. */
export function fromOpenAIResponses(items: readonly unknown[]): Message[] {
  return items.map(readItem);
}

function readItem(value: unknown): Message {
  if (!isPlainObject(value)) return invalidMessage(value, "not an object");
  const type = value.type;
  if (type === "message" || (type === undefined && typeof value.role === "string")) return readMessageItem(value);
  if (type === "function_call" && typeof value.call_id === "string" && typeof value.name === "string") {
    const args = typeof value.arguments === "string" ? value.arguments : "";
    const call: ToolCallPart = { type: "tool_call", id: value.call_id, name: value.name, ...readArgumentsText(args === "" ? "{}" : args) };
    if (args === "") call.argumentsText = "";
    if (typeof value.id === "string") call.itemId = value.id;
    return { role: "assistant", parts: [withNative(call, value, ["type", "call_id", "name", "arguments", ...(call.itemId !== undefined ? ["id"] : [])])] };
  }
  if (type === "custom_tool_call" && typeof value.call_id === "string" && typeof value.name === "string" && typeof value.input === "string") {
    const call: ToolCallPart = { type: "tool_call", id: value.call_id, name: value.name, arguments: { input: value.input }, custom: true };
    if (typeof value.id === "string") call.itemId = value.id;
    return { role: "assistant", parts: [withNative(call, value, ["type", "call_id", "name", "input", ...(call.itemId !== undefined ? ["id"] : [])])] };
  }
  if ((type === "function_call_output" || type === "custom_tool_call_output") && typeof value.call_id === "string") {
    const { output } = value;
    const content = typeof output === "string" ? output : Array.isArray(output) ? output.map((item) => readTextResultBlock(item, "input_text")) : null;
    if (content === null) return invalidMessage(value, "function_call_output without a string or list output", "tool");
    const result: ToolResultPart = { type: "tool_result", callId: value.call_id, content };
    // A custom tool's output keeps its item type in `native`.
    return { role: "tool", parts: [withNative(result, value, type === "function_call_output" ? ["type", "call_id", "output"] : ["call_id", "output"])] };
  }
  if (type === "reasoning") return readReasoning(value);
  // Hosted-tool calls and other items: kept whole, on the side of the conversation they belong to.
  const role = typeof type === "string" && type.endsWith("_call") ? "assistant" : "user";
  return { role, parts: [{ type: "opaque", format: "openai-responses", value: clone(value) }] };
}

function readMessageItem(value: Record<string, unknown>): Message {
  const { role, content } = value;
  const neutralRole = role === "assistant" ? "assistant" : role === "user" ? "user" : role === "system" || role === "developer" ? "system" : null;
  if (neutralRole === null) return invalidMessage(value, `unknown role ${JSON.stringify(role)}`);
  const known = role === "developer" ? ["content"] : ["role", "content"];
  if (typeof content === "string") return withNative<Message>({ role: neutralRole, parts: [{ type: "text", text: content }], form: "string" }, value, known);
  if (!Array.isArray(content)) return invalidMessage(value, "content is neither a string nor a list", neutralRole);
  return withNative<Message>({ role: neutralRole, parts: content.map(readContentPart) }, value, known);
}

function readContentPart(item: unknown): Part {
  if (isPlainObject(item) && (item.type === "input_text" || item.type === "output_text") && typeof item.text === "string") {
    return { type: "text", text: item.text, native: leftovers(item, ["text"]) as Record<string, unknown> };
  }
  return { type: "opaque", format: "openai-responses", value: clone(item) };
}

function readReasoning(value: Record<string, unknown>): Message {
  const part: ReasoningPart = { type: "reasoning", text: "" };
  const known = ["type"];
  if (typeof value.id === "string") {
    part.id = value.id;
    known.push("id");
  }
  const { summary, content, encrypted_content: encrypted } = value;
  if (Array.isArray(summary) && summary.every((item) => isPlainObject(item) && item.type === "summary_text" && typeof item.text === "string" && Object.keys(item).length === 2)) {
    part.summary = summary.map((item) => (item as { text: string }).text);
    known.push("summary");
  }
  const only = Array.isArray(content) && content.length === 1 ? content[0] : undefined;
  if (isPlainObject(only) && only.type === "reasoning_text" && typeof only.text === "string" && Object.keys(only).length === 2) {
    part.text = only.text;
    known.push("content");
  }
  if (typeof encrypted === "string") {
    part.encryptedContent = encrypted;
    known.push("encrypted_content");
  }
  return { role: "assistant", parts: [withNative(part, value, known)] };
}

/**
 * Neutral → Responses input items. A message with several parts becomes several items in order
 * (reasoning, message, function_call, …); results become `function_call_output` items placed before
 * the rest of their message. Parts that belong to other formats are left out.
 */
export function toOpenAIResponses(messages: readonly Message[]): unknown[] {
  return messages.flatMap(writeMessage);
}

function writeMessage(message: Message): unknown[] {
  if (message.invalid !== undefined) return [clone(message.raw)];
  const outputs = message.parts.filter((part): part is ToolResultPart => part.type === "tool_result").map(writeOutput);
  const items: unknown[] = [...outputs];
  let pending: Part[] = [];
  const flush = () => {
    if (pending.length > 0) items.push(writeMessageItem(message, pending));
    pending = [];
  };
  for (const part of message.parts) {
    switch (part.type) {
      case "tool_result":
        break;
      case "text":
        pending.push(part);
        break;
      case "reasoning":
        flush();
        items.push(writeReasoning(part));
        break;
      case "tool_call":
        flush();
        items.push(writeCall(part));
        break;
      case "opaque":
        if (part.format !== "openai-responses") break;
        if (isPlainObject(part.value) && typeof part.value.type === "string" && !part.value.type.startsWith("input_") && !part.value.type.startsWith("output_")) {
          flush();
          items.push(clone(part.value));
        } else pending.push(part);
        break;
    }
  }
  flush();
  if (items.length === 0 && message.role !== "tool") items.push(writeMessageItem(message, []));
  return items;
}

function writeMessageItem(message: Message, parts: readonly Part[]): unknown {
  const role = message.role === "assistant" ? "assistant" : message.role === "system" ? "system" : "user";
  const textType = role === "assistant" ? "output_text" : "input_text";
  const only = parts[0];
  const content =
    message.form === "string" && parts.length <= 1 && (only === undefined || only.type === "text")
      ? (only?.text ?? "")
      : parts.map((part) => (part.type === "text" ? { type: textType, text: part.text, ...clone(part.native) } : clone((part as { value: unknown }).value)));
  return { role, content, ...clone(message.native) };
}

function writeReasoning(part: ReasoningPart): unknown {
  return {
    type: "reasoning",
    ...(part.id !== undefined ? { id: part.id } : {}),
    ...(part.summary !== undefined ? { summary: part.summary.map((text) => ({ type: "summary_text", text })) } : {}),
    ...(part.text !== "" ? { content: [{ type: "reasoning_text", text: part.text }] } : {}),
    ...(part.encryptedContent !== undefined ? { encrypted_content: part.encryptedContent } : {}),
    ...clone(part.native),
  };
}

function writeCall(call: ToolCallPart): unknown {
  if (call.custom) {
    const input = call.arguments !== null && typeof call.arguments.input === "string" ? call.arguments.input : wireArgumentsText(call);
    return { type: "custom_tool_call", call_id: call.id, name: call.name, input, ...(call.itemId !== undefined ? { id: call.itemId } : {}), ...clone(call.native) };
  }
  return {
    type: "function_call",
    call_id: call.id,
    name: call.name,
    arguments: wireArgumentsText(call),
    ...(call.itemId !== undefined ? { id: call.itemId } : {}),
    ...clone(call.native),
  };
}

function writeOutput(result: ToolResultPart): unknown {
  const output =
    typeof result.content === "string"
      ? result.content
      : result.content.every((item) => item.type !== "json")
        ? result.content.map((item) => (item.type === "text" ? { type: "input_text", text: item.text, ...clone(item.native) } : clone((item as { value: unknown }).value)))
        : resultText(result.content);
  return { type: "function_call_output", call_id: result.callId, output, ...clone(result.native) };
}

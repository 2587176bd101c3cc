/**
 * Anthropic Messages `messages[]` ⇄ neutral. The system prompt is a top-level request field, not a
 * message, so it never appears here.
 */
import { clone, invalidMessage, leftovers, readArguments, readTextResultBlock, wireArgumentsValue, withNative, writeParts, type Message, type Part, type ResultContent, type ToolResultPart } from "../model.js";
import { isPlainObject } from "../../json/shape.js";

/** Anthropic Messages `messages` → neutral messages, one to one. */
export function fromAnthropic(messages: readonly unknown[]): Message[] {
  return messages.map(readMessage);
}

function readMessage(value: unknown): Message {
  if (!isPlainObject(value)) return invalidMessage(value, "not an object");
  const { role, content } = value;
  if (role !== "user" && role !== "assistant") {
    const why = role === "system" ? "Anthropic takes the system prompt as the top-level `system` field, not as a message" : `unknown role ${JSON.stringify(role)}`;
    return invalidMessage(value, why);
  }
  const native = leftovers(value, ["role", "content"]);
  const base: Message = { role, parts: [], ...(native ? { native } : {}) };
  if (typeof content === "string") return { ...base, parts: [{ type: "text", text: content }], form: "string" };
  if (!Array.isArray(content)) return invalidMessage(value, "content is neither a string nor a list of blocks", role);
  return { ...base, parts: content.map(readBlock) };
}

function readBlock(block: unknown): Part {
  if (!isPlainObject(block)) return { type: "opaque", format: "anthropic", value: clone(block) };
  switch (block.type) {
    case "text":
      if (typeof block.text === "string") return withNative({ type: "text", text: block.text }, block, ["type", "text"]);
      break;
    case "thinking":
      if (typeof block.thinking === "string") {
        const signature = typeof block.signature === "string" ? { signature: block.signature } : {};
        return withNative({ type: "reasoning", text: block.thinking, ...signature }, block, ["type", "thinking", ...(signature.signature !== undefined ? ["signature"] : [])]);
      }
      break;
    case "redacted_thinking":
      if (typeof block.data === "string") return withNative({ type: "reasoning", text: "", redacted: block.data }, block, ["type", "data"]);
      break;
    case "tool_use":
      if (typeof block.id === "string" && typeof block.name === "string" && "input" in block) {
        return withNative({ type: "tool_call", id: block.id, name: block.name, ...readArguments(block.input) }, block, ["type", "id", "name", "input"]);
      }
      break;
    case "tool_result":
      if (typeof block.tool_use_id === "string") return readResult(block);
      break;
  }
  return { type: "opaque", format: "anthropic", value: clone(block) };
}

function readResult(block: Record<string, unknown>): ToolResultPart {
  const { content, is_error: isError } = block;
  const part: ToolResultPart = { type: "tool_result", callId: block.tool_use_id as string, content: [] };
  const known = ["type", "tool_use_id"];
  if (typeof content === "string") {
    part.content = content;
    known.push("content");
  } else if (Array.isArray(content)) {
    part.content = content.map((item) => readTextResultBlock(item));
    known.push("content");
  }
  if (typeof isError === "boolean") {
    part.isError = isError;
    known.push("is_error");
  }
  return withNative(part, block, known);
}

/**
 * Neutral → Anthropic. `system` and `tool` messages become user messages (use `convertHistory` to
 * lift system prompts out); parts that belong to other formats are left out.
 */
export function toAnthropic(messages: readonly Message[]): unknown[] {
  return messages.map(writeMessage);
}

function writeMessage(message: Message): unknown {
  if (message.invalid !== undefined) return clone(message.raw);
  const role = message.role === "assistant" ? "assistant" : "user";
  const only = message.parts[0];
  const content =
    message.form === "string" && message.parts.length === 1 && only?.type === "text"
      ? only.text
      : writeParts(message.parts, writePart);
  return { role, content, ...clone(message.native) };
}

function writePart(part: Part): Record<string, unknown> | null {
  const native = clone(part.type === "opaque" ? undefined : part.native);
  switch (part.type) {
    case "text":
      return { type: "text", text: part.text, ...native };
    case "reasoning":
      if (part.redacted !== undefined) return { type: "redacted_thinking", data: part.redacted, ...native };
      return { type: "thinking", thinking: part.text, ...(part.signature !== undefined ? { signature: part.signature } : {}), ...native };
    case "tool_call":
      return { type: "tool_use", id: part.id, name: part.name, input: wireArgumentsValue(part), ...native };
    case "tool_result":
      return {
        type: "tool_result",
        tool_use_id: part.callId,
        content: typeof part.content === "string" ? part.content : part.content.map(writeResultBlock),
        ...(part.isError !== undefined ? { is_error: part.isError } : {}),
        ...native,
      };
    case "opaque":
      return part.format === "anthropic" && isPlainObject(part.value) ? clone(part.value) : null;
  }
}

function writeResultBlock(item: ResultContent): unknown {
  switch (item.type) {
    case "text":
      return { type: "text", text: item.text, ...clone(item.native) };
    case "json":
      return { type: "text", text: JSON.stringify(item.value) };
    case "opaque":
      return clone(item.value);
  }
}

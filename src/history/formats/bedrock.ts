/**
 * Bedrock Converse `messages[]` ⇄ neutral. Each content block is a single-key union
 * (`{text}`, `{toolUse}`, `{toolResult}`, `{reasoningContent}`, …); the system prompt is a separate
 * request field.
 */
import { clone, invalidMessage, readArguments, wireArgumentsValue, withNative, writeUserAssistant, type Message, type Part, type ResultContent, type ToolResultPart } from "../model.js";
import { isPlainObject } from "../../json/shape.js";

/** Bedrock Converse `messages` → neutral messages, one to one. */
export function fromBedrock(messages: readonly unknown[]): Message[] {
  return messages.map(readMessage);
}

function readMessage(value: unknown): Message {
  if (!isPlainObject(value)) return invalidMessage(value, "not an object");
  const { role, content } = value;
  if (role !== "user" && role !== "assistant") return invalidMessage(value, `unknown role ${JSON.stringify(role)}`);
  if (!Array.isArray(content)) return invalidMessage(value, "content is not a list of blocks", role);
  return withNative<Message>({ role, parts: content.map(readBlock) }, value, ["role", "content"]);
}

function readBlock(block: unknown): Part {
  if (!isPlainObject(block)) return { type: "opaque", format: "bedrock", value: clone(block) };
  if (typeof block.text === "string") return withNative({ type: "text", text: block.text }, block, ["text"]);
  const { toolUse, toolResult, reasoningContent } = block;
  if (isPlainObject(toolUse) && typeof toolUse.toolUseId === "string" && typeof toolUse.name === "string" && "input" in toolUse && Object.keys(block).length === 1) {
    return withNative({ type: "tool_call", id: toolUse.toolUseId, name: toolUse.name, ...readArguments(toolUse.input) }, toolUse, ["toolUseId", "name", "input"]);
  }
  if (isPlainObject(toolResult) && typeof toolResult.toolUseId === "string" && Array.isArray(toolResult.content) && Object.keys(block).length === 1) {
    const part: ToolResultPart = { type: "tool_result", callId: toolResult.toolUseId, content: toolResult.content.map(readResultBlock) };
    const known = ["toolUseId", "content"];
    if (toolResult.status === "error" || toolResult.status === "success") {
      part.isError = toolResult.status === "error";
      known.push("status");
    }
    return withNative(part, toolResult, known);
  }
  if (isPlainObject(reasoningContent) && Object.keys(block).length === 1) {
    const { reasoningText, redactedContent } = reasoningContent;
    if (isPlainObject(reasoningText) && typeof reasoningText.text === "string" && Object.keys(reasoningContent).length === 1) {
      const signature = typeof reasoningText.signature === "string" ? { signature: reasoningText.signature } : {};
      return withNative({ type: "reasoning", text: reasoningText.text, ...signature }, reasoningText, ["text", ...(signature.signature !== undefined ? ["signature"] : [])]);
    }
    if (typeof redactedContent === "string" && Object.keys(reasoningContent).length === 1) return { type: "reasoning", text: "", redacted: redactedContent };
  }
  return { type: "opaque", format: "bedrock", value: clone(block) };
}

function readResultBlock(block: unknown): ResultContent {
  if (isPlainObject(block) && Object.keys(block).length === 1) {
    if (typeof block.text === "string") return { type: "text", text: block.text };
    if ("json" in block) return { type: "json", value: clone(block.json) };
  }
  return { type: "opaque", value: clone(block) };
}

/** Neutral → Converse messages. `system` and `tool` messages become user messages. */
export function toBedrock(messages: readonly Message[]): unknown[] {
  return writeUserAssistant(messages, "assistant", "content", writePart);
}

function writePart(part: Part): unknown {
  switch (part.type) {
    case "text":
      return { text: part.text, ...clone(part.native) };
    case "reasoning":
      if (part.redacted !== undefined) return { reasoningContent: { redactedContent: part.redacted } };
      return { reasoningContent: { reasoningText: { text: part.text, ...(part.signature !== undefined ? { signature: part.signature } : {}), ...clone(part.native) } } };
    case "tool_call":
      return { toolUse: { toolUseId: part.id, name: part.name, input: wireArgumentsValue(part), ...clone(part.native) } };
    case "tool_result": {
      const content = typeof part.content === "string" ? [{ text: part.content }] : part.content.map(writeResultBlock);
      const status = part.isError === undefined ? {} : { status: part.isError ? "error" : "success" };
      return { toolResult: { toolUseId: part.callId, content, ...status, ...clone(part.native) } };
    }
    case "opaque":
      return part.format === "bedrock" ? clone(part.value) : null;
  }
}

function writeResultBlock(item: ResultContent): unknown {
  switch (item.type) {
    case "text":
      return { text: item.text };
    case "json":
      return { json: clone(item.value) };
    case "opaque":
      return clone(item.value);
  }
}

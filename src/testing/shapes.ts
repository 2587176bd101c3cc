import { isPlainObject } from "../json/shape.js";
import type { ProviderEvent, ProviderName } from "../types.js";
import { cloneJson } from "./values.js";

/**
 * What the mutations need to know about each provider's wire shape: which events carry argument
 * fragments (to re-split them or interleave them), which events are no-ops by protocol
 * (keep-alives), which are unknown to the decoder, and where arguments live (to plant hostile
 * values). Everything else about a provider stays inside its decoder.
 */

export interface ArgumentDelta {
  /** Identifies the call the fragment belongs to; equal keys in a row are one call's run. */
  key: string;
  text: string;
}

type Json = Record<string, unknown>;

function obj(value: unknown): Json | null {
  return isPlainObject(value) ? value : null;
}

function typeOf(event: ProviderEvent): string | undefined {
  const data = obj(event.data);
  return typeof data?.type === "string" ? data.type : event.event;
}

/** Bedrock events come as `{event: name, data: body}` or SDK-wrapped `{data: {name: body}}`. */
function bedrockBody(event: ProviderEvent): { name: string; body: Json; wrapped: boolean } | null {
  const data = obj(event.data);
  if (!data) return null;
  if (event.event !== undefined) return { name: event.event, body: data, wrapped: false };
  const keys = Object.keys(data);
  if (keys.length !== 1) return null;
  const body = obj(data[keys[0] as string]);
  return body ? { name: keys[0] as string, body, wrapped: true } : null;
}

function chatToolEntry(event: ProviderEvent): { choice: Json; entry: Json; fn: Json } | null {
  const data = obj(event.data);
  if (!data || !Array.isArray(data.choices) || data.choices.length !== 1) return null;
  const choice = obj(data.choices[0]);
  const delta = obj(choice?.delta);
  if (!choice || !delta || (choice.finish_reason !== null && choice.finish_reason !== undefined)) return null;
  // Only fragments that carry nothing but the call: text or usage in the same chunk would be moved.
  for (const key of Object.keys(delta)) if (key !== "tool_calls" && key !== "role" && !(key === "content" && (delta.content === null || delta.content === ""))) return null;
  if (!Array.isArray(delta.tool_calls) || delta.tool_calls.length !== 1) return null;
  const entry = obj(delta.tool_calls[0]);
  const fn = obj(entry?.function);
  if (!entry || !fn || typeof fn.arguments !== "string") return null;
  return { choice, entry, fn };
}

/** The argument fragment an event carries, if it is a pure argument delta. */
export function argumentDelta(provider: ProviderName, event: ProviderEvent): ArgumentDelta | null {
  switch (provider) {
    case "anthropic": {
      const data = obj(event.data);
      const delta = obj(data?.delta);
      if (typeOf(event) !== "content_block_delta" || delta?.type !== "input_json_delta" || typeof delta.partial_json !== "string") return null;
      return { key: `block:${String(data?.index)}`, text: delta.partial_json };
    }
    case "bedrock": {
      const found = bedrockBody(event);
      if (!found || found.name !== "contentBlockDelta") return null;
      const toolUse = obj(obj(found.body.delta)?.toolUse);
      if (typeof toolUse?.input !== "string") return null;
      return { key: `block:${String(found.body.contentBlockIndex)}`, text: toolUse.input };
    }
    case "openai-responses": {
      const type = typeOf(event);
      if (type !== "response.function_call_arguments.delta" && type !== "response.custom_tool_call_input.delta") return null;
      const data = obj(event.data);
      if (typeof data?.delta !== "string") return null;
      return { key: `item:${String(data.item_id ?? data.output_index)}`, text: data.delta };
    }
    case "openai-chat": {
      const found = chatToolEntry(event);
      if (!found) return null;
      const id = typeof found.entry.id === "string" ? found.entry.id : "";
      // A fragment naming a call (id) starts its own run: a new id at a used index is a new call.
      return { key: `choice:${String(found.choice.index)}:tool:${String(found.entry.index)}${id ? `:id:${id}` : ""}`, text: found.fn.arguments as string };
    }
    default:
      return null;
  }
}

/**
 * `event` carrying `text` instead of its fragment. `first` keeps everything the original carried
 * (ids, names); later pieces of a re-split run carry only what a continuation carries.
 */
export function withArgumentDelta(provider: ProviderName, event: ProviderEvent, text: string, first: boolean): ProviderEvent {
  const copy = cloneJson(event);
  const data = copy.data as Json;
  switch (provider) {
    case "anthropic":
      (data.delta as Json).partial_json = text;
      break;
    case "bedrock": {
      const body = (copy.event !== undefined ? data : (Object.values(data)[0] as Json)) as Json;
      ((body.delta as Json).toolUse as Json).input = text;
      break;
    }
    case "openai-responses":
      data.delta = text;
      break;
    case "openai-chat": {
      const choice = (data.choices as Json[])[0] as Json;
      const delta = choice.delta as Json;
      const entry = (delta.tool_calls as Json[])[0] as Json;
      const fn = entry.function as Json;
      fn.arguments = text;
      if (!first) {
        delete entry.id;
        delete entry.type;
        delete fn.name;
        delete delta.role;
      }
      break;
    }
    default:
      break;
  }
  return copy;
}

/** Events the protocol defines as no-ops: inserting them anywhere must change nothing. */
export function keepAliveEvents(provider: ProviderName): ProviderEvent[] {
  switch (provider) {
    case "anthropic":
      return [{ event: "ping", data: { type: "ping" } }];
    default:
      return [];
  }
}

/** Events a decoder does not know or cannot read: it must report them and carry on. */
export function strangeEvents(provider: ProviderName): ProviderEvent[] {
  const generic: ProviderEvent[] = [
    { data: "this is not JSON" },
    { data: null },
    { data: [] },
    { data: 42 },
    { data: "" },
    { data: {} },
    { event: "error", data: "upstream exploded" },
    { data: { unexpected: { nested: [1, 2, 3] } } },
  ];
  const specific: Record<ProviderName, ProviderEvent[]> = {
    anthropic: [
      { event: "future_event", data: { type: "future_event", payload: { x: 1 } } },
      { event: "content_block_delta", data: { type: "content_block_delta", index: 0, delta: { type: "future_delta", value: 1 } } },
      { event: "content_block_start", data: { type: "content_block_start", index: 7, content_block: { type: "future_block" } } },
      { event: "content_block_stop", data: { type: "content_block_stop", index: 99 } },
      // Indices a decoder must not use to size an array or a loop.
      { event: "content_block_start", data: { type: "content_block_start", index: 4_294_967_295, content_block: { type: "tool_use", id: "toolu_far", name: "far", input: {} } } },
      { event: "content_block_start", data: { type: "content_block_start", index: -1, content_block: { type: "text", text: "negative" } } },
      { event: "content_block_delta", data: { type: "content_block_delta", index: 0.5, delta: { type: "input_json_delta", partial_json: "{" } } },
      { event: "message_start", data: { type: "message_start", message: { id: "msg_again", content: [{ type: "tool_use", id: "toolu_whole", name: "whole", input: { a: 1 } }] } } },
    ],
    "openai-chat": [
      { data: { object: "chat.completion.chunk", choices: [{ index: 0, delta: { tool_calls: [{ index: 5, function: { arguments: "{" } }] } }] } },
      { data: { object: "chat.completion.chunk", choices: [{ index: 3, delta: { content: "other choice" } }] } },
      { data: { object: "chat.completion.chunk", choices: null } },
      { data: "[DONE]" },
      { data: { object: "chat.completion.chunk", choices: [{ index: 0, delta: { tool_calls: [{ index: 1_000_000_000, id: "call_far", function: { name: "far", arguments: "{}" } }] } }] } },
      { data: { object: "chat.completion.chunk", choices: [{ index: 0, delta: { tool_calls: [{ index: -1, id: "call_neg", function: { name: "neg", arguments: "{}" } }] } }] } },
      { data: { object: "chat.completion.chunk", choices: [{ index: 0, delta: { tool_calls: [{ index: "0", id: 7, function: { name: ["x"], arguments: 42 } }] } }] } },
      { data: { object: "chat.completion.chunk", choices: [{ index: 0, delta: { function_call: { name: "legacy", arguments: "{" } } }] } },
    ],
    "openai-responses": [
      { event: "response.future_event", data: { type: "response.future_event", sequence_number: 999 } },
      { event: "response.function_call_arguments.delta", data: { type: "response.function_call_arguments.delta", item_id: "fc_unknown", output_index: 77, delta: "{" } },
      { event: "keepalive", data: { type: "keepalive" } },
      { event: "response.output_item.added", data: { type: "response.output_item.added", output_index: 4_294_967_295, item: { id: "fc_far", type: "function_call", call_id: "call_far", name: "far", arguments: "" } } },
      { event: "response.output_item.done", data: { type: "response.output_item.done", output_index: 0, item: { id: "fc_never_added", type: "function_call", call_id: "call_x", name: "x", arguments: "{}" } } },
      { event: "response.completed", data: { type: "response.completed", response: { status: "completed", output: null } } },
    ],
    gemini: [
      { data: { candidates: [] } },
      { data: { candidates: [{ content: { parts: [{ futurePart: true }] } }] } },
      { data: { candidates: [{ content: { parts: [{ functionCall: {} }] } }] } },
      { data: { promptFeedback: { blockReason: "OTHER" } } },
      { data: { candidates: [{ content: { parts: [{ functionCall: { name: "paths", willContinue: true } }] } }] } },
      { data: { candidates: [{ content: { parts: [{ functionCall: { partialArgs: [{ jsonPath: "$['__proto__'].polluted", boolValue: true }], willContinue: true } }] } }] } },
      { data: { candidates: [{ content: { parts: [{ functionCall: { partialArgs: [{ jsonPath: "$.a[4294967295]", numberValue: 1 }], willContinue: true } }] } }] } },
      { data: { candidates: [{ content: { parts: [{ functionCall: { partialArgs: [{ jsonPath: "$", stringValue: "x" }, { jsonPath: "$..*", nullValue: null }], willContinue: true } }] } }] } },
    ],
    bedrock: [
      { event: "futureEvent", data: { p: "abc" } },
      { event: "contentBlockDelta", data: { contentBlockIndex: 42, delta: { toolUse: { input: "{" } } } },
      { event: "contentBlockStop", data: { contentBlockIndex: 99 } },
      { event: "contentBlockStart", data: { contentBlockIndex: 4_294_967_295, start: { toolUse: { toolUseId: "tooluse_far", name: "far" } } } },
      { event: "contentBlockDelta", data: { contentBlockIndex: -1, delta: { text: "negative" } } },
      { event: "exception", data: { exceptionType: "throttlingException", message: "slow down" } },
    ],
    ollama: [
      { data: { model: "m", message: { role: "assistant", content: "", tool_calls: [{ function: {} }] }, done: false } },
      { data: { model: "m", message: null, done: false } },
      { data: { model: "m", message: { role: "assistant", content: "", tool_calls: [{ function: { index: 4_294_967_295, name: "far", arguments: {} } }] }, done: false } },
      { data: { model: "m", message: { role: "assistant", content: "", tool_calls: [{ id: "call_dup", function: { name: "a", arguments: "{\"not\":\"an object\"}" } }, { id: "call_dup", function: { name: "b", arguments: {} } }] }, done: false } },
      { data: { error: { nested: true } } },
    ],
  };
  return [...generic, ...specific[provider]];
}

export type ArgumentSiteKind = "text" | "object";

/**
 * Rewrites every place in `event` where a call's arguments live: `replace` gets the kind of site
 * (a JSON text fragment or an object) and returns the new value. Null when the event has none.
 */
export function rewriteArguments(provider: ProviderName, event: ProviderEvent, replace: (kind: ArgumentSiteKind) => unknown): ProviderEvent | null {
  const copy = cloneJson(event);
  const data = obj(copy.data);
  if (!data) return null;
  let changed = false;
  const set = (target: Json, key: string, kind: ArgumentSiteKind): void => {
    Object.defineProperty(target, key, { value: replace(kind), enumerable: true, writable: true, configurable: true });
    changed = true;
  };
  switch (provider) {
    case "anthropic": {
      const delta = obj(data.delta);
      if (delta && typeof delta.partial_json === "string") set(delta, "partial_json", "text");
      const block = obj(data.content_block);
      if (block && (block.type === "tool_use" || block.type === "server_tool_use")) set(block, "input", "object");
      break;
    }
    case "bedrock": {
      const found = bedrockBody(copy);
      const toolUse = obj(obj(found?.body.delta)?.toolUse);
      if (toolUse && typeof toolUse.input === "string") set(toolUse, "input", "text");
      break;
    }
    case "openai-responses": {
      const type = typeOf(copy);
      if (type === "response.function_call_arguments.delta" && typeof data.delta === "string") set(data, "delta", "text");
      if (type === "response.function_call_arguments.done" && typeof data.arguments === "string") set(data, "arguments", "text");
      const item = obj(data.item);
      if (item && item.type === "function_call" && typeof item.arguments === "string") set(item, "arguments", "text");
      break;
    }
    case "openai-chat": {
      for (const choice of Array.isArray(data.choices) ? data.choices : []) {
        const calls = obj(obj(choice)?.delta)?.tool_calls;
        for (const entry of Array.isArray(calls) ? calls : []) {
          const fn = obj(obj(entry)?.function);
          if (fn && fn.arguments !== undefined && fn.arguments !== null) set(fn, "arguments", typeof fn.arguments === "string" ? "text" : "object");
        }
      }
      break;
    }
    case "gemini": {
      for (const candidate of Array.isArray(data.candidates) ? data.candidates : []) {
        const parts = obj(obj(candidate)?.content)?.parts;
        for (const part of Array.isArray(parts) ? parts : []) {
          const call = obj(obj(part)?.functionCall);
          if (call && isPlainObject(call.args)) set(call, "args", "object");
        }
      }
      break;
    }
    case "ollama": {
      const calls = obj(data.message)?.tool_calls;
      for (const entry of Array.isArray(calls) ? calls : []) {
        const fn = obj(obj(entry)?.function);
        if (fn && fn.arguments !== undefined) set(fn, "arguments", typeof fn.arguments === "string" ? "text" : "object");
      }
      break;
    }
  }
  return changed ? copy : null;
}

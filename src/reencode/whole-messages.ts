import { stringifyJson } from "../json/stringify.js";
import { stringField } from "../providers/fields.js";
import type { DecoderOptions, ProviderEvent, ToolCall } from "../types.js";
import { decodedAsSent, isPlainObject } from "./common.js";
import { decodeWhole, picked, settleInto, type WholeDecoding, type WholeResponseRepair } from "./whole-common.js";

/**
 * Whole responses made of content blocks: Anthropic Messages (also Claude on Bedrock `/invoke`)
 * and Bedrock Converse. The body becomes the stream the protocol would have sent (one start, delta
 * and stop per block), decoded by the stream decoder; a length stop (`max_tokens`,
 * `model_context_window_exceeded`) leaves the last block without its stop when it is a call,
 * because that is the block the limit cut.
 */

/** How a call's input reaches the decoder: an object as the block's start input, anything else as its argument text. */
function inputEvents(input: unknown): { start: Record<string, unknown> | undefined; text: string | null } {
  if (input === undefined || input === null) return { start: undefined, text: null };
  if (isPlainObject(input)) return { start: input, text: null };
  // A string is argument text to parse (compatible servers send input as a JSON string); any other
  // value is serialized so that finalize rejects it as not an object rather than reading it as "no arguments".
  return { start: undefined, text: typeof input === "string" ? input : stringifyJson(input) };
}

const CALL_BLOCKS = new Set(["tool_use", "server_tool_use", "mcp_tool_use"]);

/** Stop reasons that mean the output limit cut the message (both protocols map them to `length`). */
const LENGTH_STOPS = new Set(["max_tokens", "model_context_window_exceeded"]);

/** Anthropic Messages JSON (`/v1/messages` without `stream`, Bedrock `/invoke`), or null when `content` is not a list. */
export function repairAnthropicWhole(body: Record<string, unknown>, options: DecoderOptions): WholeResponseRepair | null {
  const content = body.content;
  if (!Array.isArray(content)) return null;
  const stopReason = stringField(body, "stop_reason");
  const { stop_sequence: stopSequence, usage } = body;
  const events: ProviderEvent[] = [{ event: "message_start", data: { type: "message_start", message: { ...picked(body, ["id", "type", "role", "model"]), content: [], stop_reason: null, stop_sequence: null } } }];
  content.forEach((block: unknown, index) => {
    if (!isPlainObject(block)) return;
    const isCall = typeof block.type === "string" && CALL_BLOCKS.has(block.type);
    const input = isCall ? inputEvents(block.input) : { start: undefined, text: null };
    const startBlock = isCall ? { ...block, input: input.start ?? {} } : block;
    events.push({ event: "content_block_start", data: { type: "content_block_start", index, content_block: startBlock } });
    if (input.text !== null) events.push({ event: "content_block_delta", data: { type: "content_block_delta", index, delta: { type: "input_json_delta", partial_json: input.text } } });
    const cut = isCall && index === content.length - 1 && stopReason !== null && LENGTH_STOPS.has(stopReason);
    if (!cut) events.push({ event: "content_block_stop", data: { type: "content_block_stop", index } });
  });
  events.push({ event: "message_delta", data: { type: "message_delta", delta: { stop_reason: stopReason, stop_sequence: stopSequence ?? null }, ...(usage !== undefined ? { usage } : {}) } });
  events.push({ event: "message_stop", data: { type: "message_stop" } });

  const decoding = decodeWhole("anthropic", events, options, (call) => call.providerIndex);
  const { out, changed, delivered, invalid } = settleBlocks(
    decoding,
    content,
    (block) => (isPlainObject(block) && block.type === "tool_use" ? { id: block.id, name: block.name, input: block.input, what: "The tool_use block" } : null),
    (block, call) => ({ ...block, id: call.id, name: call.name, input: call.arguments }),
  );
  if (!changed) return { body, changed: false, turn: decoding.turn, repairs: decoding.tap.repairs };
  let repaired: Record<string, unknown> = { ...body, content: out };
  if (stopReason === "tool_use" && delivered === 0 && invalid > 0) {
    repaired = { ...repaired, stop_reason: "end_turn" };
    decoding.tap.report({ action: "normalized", code: "stop_reason_without_calls", message: "Every tool call of the turn was withheld, so stop_reason tool_use became end_turn." });
  }
  return { body: repaired, changed: true, turn: decoding.turn, repairs: decoding.tap.repairs };
}

/** Bedrock Converse JSON (`/model/{id}/converse`): `output.message.content[].toolUse`, or null when that shape is missing. */
export function repairConverseWhole(body: Record<string, unknown>, options: DecoderOptions): WholeResponseRepair | null {
  const output = isPlainObject(body.output) ? body.output : null;
  const message = output && isPlainObject(output.message) ? output.message : null;
  const content = message && Array.isArray(message.content) ? message.content : null;
  if (!output || !message || !content) return null;
  const stopReason = stringField(body, "stopReason");
  const events: ProviderEvent[] = [{ event: "messageStart", data: { role: typeof message.role === "string" ? message.role : "assistant" } }];
  content.forEach((block: unknown, index) => {
    if (!isPlainObject(block)) return;
    const contentBlockIndex = index;
    if (isPlainObject(block.toolUse)) {
      const { input: sent, ...toolUse } = block.toolUse;
      const input = inputEvents(sent);
      events.push({ event: "contentBlockStart", data: { contentBlockIndex, start: { toolUse: { ...toolUse, ...(input.start !== undefined ? { input: input.start } : {}) } } } });
      if (input.text !== null) events.push({ event: "contentBlockDelta", data: { contentBlockIndex, delta: { toolUse: { input: input.text } } } });
      if (index === content.length - 1 && stopReason !== null && LENGTH_STOPS.has(stopReason)) return;
    } else if (typeof block.text === "string") {
      events.push({ event: "contentBlockDelta", data: { contentBlockIndex, delta: { text: block.text } } });
    } else if (isPlainObject(block.reasoningContent)) {
      const reasoning = block.reasoningContent;
      const text = isPlainObject(reasoning.reasoningText) ? reasoning.reasoningText : null;
      if (text) events.push({ event: "contentBlockDelta", data: { contentBlockIndex, delta: { reasoningContent: { text: text.text ?? "", ...(text.signature !== undefined ? { signature: text.signature } : {}) } } } });
      else if (reasoning.redactedContent !== undefined) events.push({ event: "contentBlockDelta", data: { contentBlockIndex, delta: { reasoningContent: { redactedContent: reasoning.redactedContent } } } });
      else return;
    } else return;
    events.push({ event: "contentBlockStop", data: { contentBlockIndex } });
  });
  events.push({ event: "messageStop", data: { stopReason } });
  if (isPlainObject(body.usage)) events.push({ event: "metadata", data: { usage: body.usage } });

  const decoding = decodeWhole("bedrock", events, options, (call) => call.providerIndex);
  const toolUseOf = (block: unknown): Record<string, unknown> | null => (isPlainObject(block) && isPlainObject(block.toolUse) && block.toolUse.type !== "server_tool_use" ? block.toolUse : null);
  const { out, changed, delivered, withheld } = settleBlocks(
    decoding,
    content,
    (block) => {
      const toolUse = toolUseOf(block);
      return toolUse ? { id: toolUse.toolUseId, name: toolUse.name, input: toolUse.input, what: "The toolUse block" } : null;
    },
    (block, call) => ({ ...block, toolUse: { ...toolUseOf(block), toolUseId: call.id, name: call.name, input: call.arguments } }),
  );
  if (!changed) return { body, changed: false, turn: decoding.turn, repairs: decoding.tap.repairs };
  let repaired: Record<string, unknown> = { ...body, output: { ...output, message: { ...message, content: out } } };
  if (stopReason === "tool_use" && delivered === 0 && withheld > 0) {
    repaired = { ...repaired, stopReason: "malformed_tool_use" };
    decoding.tap.report({
      action: "normalized",
      code: "stop_reason_without_calls",
      message: "Every tool call of the turn was withheld, so stopReason tool_use became malformed_tool_use (the model produced no call that could be read).",
    });
  }
  return { body: repaired, changed: true, turn: decoding.turn, repairs: decoding.tap.repairs };
}

/** A client call block as sent: its id, name and input, and how a report names it. */
interface SentCall {
  id: unknown;
  name: unknown;
  input: unknown;
  what: string;
}

/**
 * Each client call block of `content` settled by the decoder's verdict: kept as it came when its
 * call was decoded as sent, else replaced by one block per runnable call (`write`), or dropped
 * when none is runnable. `read` says which blocks are client calls.
 */
function settleBlocks(
  decoding: WholeDecoding,
  content: readonly unknown[],
  read: (block: unknown) => SentCall | null,
  write: (block: Record<string, unknown>, call: ToolCall) => unknown,
): { out: unknown[]; changed: boolean; delivered: number; withheld: number; invalid: number } {
  let changed = false;
  let delivered = 0;
  let withheld = 0;
  let invalid = 0;
  const out: unknown[] = [];
  content.forEach((block: unknown, index) => {
    const sent = read(block);
    if (!sent || !isPlainObject(block)) {
      out.push(block);
      return;
    }
    const settled = settleInto(
      decoding,
      index,
      () => ({ ...ids(sent.id, sent.name), what: `${sent.what} ${index}` }),
      block,
      out,
      (only) => decodedAsSent(only) && sent.id === only.id && sent.name === only.name && isPlainObject(sent.input),
      (call, n) => ({ entry: write(block, call), codes: n === 0 && !isPlainObject(sent.input) && sent.input !== undefined && sent.input !== null ? ["input_not_object"] : [] }),
    );
    const { calls, runnable } = settled;
    withheld += calls.length - runnable.length;
    invalid += calls.filter((call) => call.arguments === null && call.complete).length;
    delivered += runnable.length;
    if (settled.changed) changed = true;
  });
  return { out, changed, delivered, withheld, invalid };
}

/** The id and name of a wire entry, for a report, when they are strings. */
export function ids(id: unknown, name: unknown): { id?: string; name?: string } {
  return { ...(typeof id === "string" ? { id } : {}), ...(typeof name === "string" ? { name } : {}) };
}

/**
 * Decoded turns → neutral messages, and the reshaping a neutral history needs before it is written
 * in a format it did not come from.
 */
import type { ContentBlock, DecodedTurn, ToolCall } from "../types.js";
import { describeUnrepresentable, findUnrepresentableNumber, holdsSuspectNumber } from "../json/number-range.js";
import {
  calls,
  clone,
  leftovers,
  resultText,
  type HistoryFormat,
  type Message,
  type Part,
  type ToolCallPart,
  type ToolResultPart,
} from "./model.js";

/** Options of `encodeTurn`, chiefly what to send for calls whose arguments are unusable. */
export interface EncodeTurnOptions {
  /**
   * What to send for a call whose arguments are truncated or invalid (`arguments: null`). Its raw
   * text is never sent.
   * - `placeholder` (default): keep the call, with `{"toolwire_invalid_arguments": {code, message}}`
   *   as its arguments, and return an error result for it in `errorResults`.
   * - `drop`: leave the call out and say in the assistant text that it was not sent.
   */
  invalidCalls?: "placeholder" | "drop";
}

/**
 * A decoded turn in a history format: the assistant message(s), and error results for the calls
 * that must not run.
 */
export interface EncodedTurn {
  /** The assistant turn in the target format: one message, or for Responses one item per part. */
  messages: unknown[];
  /**
   * Error results for calls that must not be run (placeholder policy). Send them with the results
   * of the calls you do run, e.g. `encodeToolResults([...errorResults, ...yours], format)`.
   */
  errorResults: ToolResultPart[];
  /** The turn as a neutral message. */
  message: Message;
}

/** A tool result to encode; `name` is required by Gemini. */
export type ToolResultInput = Omit<ToolResultPart, "type">;

type Writer = (messages: readonly Message[]) => unknown[];

export function encodeTurnWith(format: HistoryFormat, write: Writer, turn: DecodedTurn, options: EncodeTurnOptions = {}): EncodedTurn {
  const { message, errorResults } = turnToMessage(turn, format, options);
  const adapted = adaptMessages([message], format, { sameProvider: turn.provider === format }).messages;
  return { messages: write(adapted), errorResults, message };
}

export function encodeResultsWith(format: HistoryFormat, write: Writer, results: readonly ToolResultInput[]): unknown[] {
  if (results.length === 0) return [];
  const separate = format === "openai-chat" || format === "openai-responses";
  const parts: ToolResultPart[] = results.map((result) => (separate ? flagErrorInText({ ...clone(result), type: "tool_result" }) : { ...clone(result), type: "tool_result" }));
  return write([{ role: separate ? "tool" : "user", parts }]);
}

/** OpenAI formats have no error flag on a result: the text has to say it. */
function flagErrorInText(result: ToolResultPart): ToolResultPart {
  if (!result.isError) return result;
  const { isError: _isError, ...plain } = result;
  return { ...plain, content: `Error: ${resultText(result.content)}` };
}

// ---------------------------------------------------------------------------------------------

/** The text of the error result paired with a call that was not run. */
export function invalidCallResultText(call: Pick<ToolCallPart, "error">): string {
  const why = call.error?.message ?? "The call's arguments could not be read, so the call was not run.";
  return `${why} Send the call again with complete, valid JSON arguments.`;
}

export function invalidCallResult(call: ToolCallPart): ToolResultPart {
  return errorResult(call, invalidCallResultText(call));
}

/** An error result answering `call`; a call without a provider id gets a result without one. */
export function errorResult(call: ToolCallPart, text: string): ToolResultPart {
  return { type: "tool_result", callId: call.id, name: call.name, content: text, isError: true, ...(call.syntheticId ? { syntheticId: true as const } : {}) };
}

/** The note left in the assistant message when an unusable call is dropped. */
export function droppedCallNote(call: Pick<ToolCallPart, "name" | "id" | "error">): string {
  const why = call.error?.message ?? "its arguments could not be read";
  return `[A call to ${call.name} (${call.id}) was not sent: ${why}]`;
}

/**
 * A decoded turn as one neutral assistant message, in block order. Empty text blocks are left out
 * (providers reject them on replay); calls that cannot run follow `options.invalidCalls`.
 */
export function turnToMessage(turn: DecodedTurn, format: HistoryFormat, options: EncodeTurnOptions = {}): { message: Message; errorResults: ToolResultPart[] } {
  const same = turn.provider === format;
  const parts: Part[] = [];
  const errorResults: ToolResultPart[] = [];
  const usedCalls = new Set<ToolCall>();
  const addCall = (call: ToolCall | undefined) => {
    if (!call || usedCalls.has(call)) return;
    usedCalls.add(call);
    const part = callPart(call, turn.provider, format);
    if (part.arguments !== null) parts.push(part);
    else if (options.invalidCalls === "drop") parts.push({ type: "text", text: droppedCallNote(part) });
    else {
      parts.push(part);
      errorResults.push(invalidCallResult(part));
    }
  };
  for (const block of turn.blocks.length > 0 ? turn.blocks : fallbackBlocks(turn)) {
    switch (block.type) {
      case "text":
        if (block.text.trim() !== "") parts.push(same && block.citations ? { type: "text", text: block.text, native: { citations: clone(block.citations) } } : { type: "text", text: block.text });
        break;
      case "thinking":
        parts.push({ type: "reasoning", text: block.thinking, ...(block.signature ? { signature: block.signature } : {}) });
        break;
      case "redacted_thinking":
        parts.push({ type: "reasoning", text: "", redacted: block.data });
        break;
      case "reasoning":
        parts.push({
          type: "reasoning",
          text: block.text,
          ...(block.id !== undefined ? { id: block.id } : {}),
          ...(block.encryptedContent !== undefined ? { encryptedContent: block.encryptedContent } : {}),
          ...(block.summary !== undefined ? { summary: [...block.summary] } : {}),
        });
        break;
      case "tool_call":
        addCall(turn.toolCalls.find((call) => call.index === block.callIndex));
        break;
      case "server_tool_call": {
        const call = turn.serverToolCalls.find((item) => item.index === block.callIndex);
        if (call && same && format === "anthropic") {
          const fields = call.providerFields ?? {};
          const type = typeof fields.blockType === "string" ? fields.blockType : "server_tool_use";
          parts.push({ type: "opaque", format, value: { type, id: call.id, name: call.name, input: clone(call.arguments ?? {}), ...leftovers(fields, BOOKKEEPING_FIELDS) } });
        }
        break;
      }
      case "opaque":
        if (same) parts.push({ type: "opaque", format, value: clone(block.value) });
        break;
    }
  }
  for (const call of turn.toolCalls) addCall(call);
  return { message: { role: "assistant", parts }, errorResults };
}

function fallbackBlocks(turn: DecodedTurn): ContentBlock[] {
  const blocks: ContentBlock[] = [];
  if (turn.reasoning !== "") blocks.push({ type: "reasoning", text: turn.reasoning });
  if (turn.text !== "") blocks.push({ type: "text", text: turn.text });
  for (const call of turn.toolCalls) blocks.push({ type: "tool_call", callIndex: call.index });
  return blocks;
}

/** providerFields the decoders use for their own bookkeeping; every other one is a wire field of the call. */
const BOOKKEEPING_FIELDS = ["choice", "legacyFunctionCall", "customToolInput", "thoughtSignature", "itemId", "item_id", "blockType", "parallelWrapper"];

/** Ids the decoders minted for calls the provider sent without one (see src/providers). */
const MINTED_GEMINI_ID = /^gemini_tw_/;

function callPart(call: ToolCall, provider: string, format: HistoryFormat): ToolCallPart {
  const fields = call.providerFields ?? {};
  const part: ToolCallPart = { type: "tool_call", id: call.id, name: call.name, arguments: null };
  const usable = call.arguments !== null && call.complete && call.error === null;
  if (usable) part.arguments = clone(call.arguments);
  else part.error = call.error ? { code: call.error.code, message: call.error.message } : { code: "truncated", message: "The call ended before its arguments were complete, so it was not run." };
  if (typeof fields.thoughtSignature === "string") part.signature = fields.thoughtSignature;
  const itemId = fields.itemId ?? fields.item_id;
  if (typeof itemId === "string") part.itemId = itemId;
  if (fields.customToolInput === true) part.custom = true;
  if (provider === "gemini" && MINTED_GEMINI_ID.test(call.id)) part.syntheticId = true;
  if (provider === format && format !== "gemini" && format !== "openai-responses") {
    const native = leftovers(fields, BOOKKEEPING_FIELDS);
    if (native) part.native = native;
  }
  return part;
}

// ---------------------------------------------------------------------------------------------

export interface AdaptOptions {
  /** The history was produced by the target provider itself: its opaque state (signatures, ids) is valid there. */
  sameProvider: boolean;
}

/**
 * Neutral messages adapted to another format: what was kept, the lifted-out system text, and notes
 * on what was left out.
 */
export interface Adapted {
  messages: Message[];
  /** System text lifted out of the messages, for formats that take it as a separate field. */
  system: string | null;
  /** What was left out or could not be carried as written, for the caller's report. */
  notes: string[];
}

/**
 * Reshapes a neutral history for `format`: where results live (user message vs. tool messages),
 * which messages merge or split, how new text is spelled, and (unless `sameProvider`) which
 * reasoning and provider-specific state is left out because the target cannot verify it.
 */
export function adaptMessages(input: readonly Message[], format: HistoryFormat, options: AdaptOptions): Adapted {
  const notes: string[] = [];
  const systemTexts: string[] = [];
  let messages: Message[] = [];
  for (const original of input) {
    if (original.invalid !== undefined) {
      notes.push(`an unreadable message was left out (${original.invalid})`);
      continue;
    }
    const message = clone(original);
    if (!options.sameProvider) {
      message.parts = message.parts.flatMap((part) => portablePart(part, format, notes));
      delete message.native;
      delete message.form;
    }
    if (message.role === "system" && (format === "anthropic" || format === "bedrock" || format === "gemini")) {
      systemTexts.push(message.parts.flatMap((part) => (part.type === "text" ? [part.text] : [])).join("\n"));
      continue;
    }
    messages.push(message);
  }
  messages = reshape(messages, format).map((message) => spell(message, format));
  return { messages, system: systemTexts.length > 0 ? systemTexts.join("\n\n") : null, notes: [...new Set(notes)] };
}

function portablePart(part: Part, format: HistoryFormat, notes: string[]): Part[] {
  switch (part.type) {
    case "reasoning":
      // Signatures and encrypted reasoning only verify at the provider that issued them, and strict
      // OpenAI-compatible servers reject a foreign `reasoning_content` field.
      notes.push("reasoning that the target cannot verify was left out");
      return [];
    case "opaque":
      if (part.format === format) return [part];
      notes.push(`a ${part.format} block with no ${format} equivalent was left out`);
      return [];
    case "tool_call": {
      const { signature: _signature, itemId: _itemId, native: _native, syntheticId: _synthetic, ...rest } = part;
      if (OBJECT_ARGUMENT_FORMATS.has(format)) noteLostDigits(rest, notes);
      return [rest];
    }
    case "tool_result": {
      const { native: _native, syntheticId: _synthetic, ...rest } = part;
      const content = typeof rest.content === "string" ? rest.content : rest.content.filter((item) => item.type !== "opaque");
      if (content.length !== rest.content.length) notes.push("a block of a tool result (image, document, …) with no equivalent in the target was left out");
      const kept = { ...rest, content };
      return [format === "openai-chat" || format === "openai-responses" ? flagErrorInText(kept) : kept];
    }
    case "text":
      return [{ type: "text", text: part.text }];
  }
}

/** Formats whose calls carry arguments as an object, not as the text the model wrote. */
const OBJECT_ARGUMENT_FORMATS: ReadonlySet<HistoryFormat> = new Set(["anthropic", "bedrock", "gemini"]);

/**
 * Arguments read from text can hold an integer a double gives back with other digits: the text
 * formats keep the text, an object format cannot, so the conversion says so rather than change a
 * past call silently.
 */
function noteLostDigits(call: Extract<Part, { type: "tool_call" }>, notes: string[]): void {
  if (call.arguments === null || call.argumentsText === undefined || !holdsSuspectNumber(call.arguments)) return;
  const problem = findUnrepresentableNumber(call.arguments, call.argumentsText);
  if (problem) notes.push(`the arguments of a call (${call.name}) hold a number an object cannot carry as written: ${describeUnrepresentable(problem)}`);
}

function reshape(messages: Message[], format: HistoryFormat): Message[] {
  const out: Message[] = [];
  const names = new Map<string, string>();
  for (const message of messages) for (const call of calls(message)) names.set(call.id, call.name);
  const isResult = (part: Part) => part.type === "tool_result";
  for (const message of messages) {
    if (format === "openai-chat" || format === "openai-responses") {
      if (message.role === "assistant") {
        const previous = out[out.length - 1];
        if (format === "openai-chat" && previous?.role === "assistant") previous.parts.push(...message.parts);
        else if (format === "openai-chat") out.push(message);
        else out.push(...splitItems(message));
        continue;
      }
      const found = message.parts.filter(isResult);
      for (const result of found) out.push({ role: "tool", parts: [result] });
      const rest = message.parts.filter((part) => !isResult(part));
      if (rest.length > 0 || (found.length === 0 && message.role !== "tool")) out.push({ ...message, role: message.role === "tool" ? "user" : message.role, parts: rest });
      continue;
    }
    // Anthropic, Bedrock, Gemini: alternate turns, results at the start of the user turn.
    const role = message.role === "assistant" ? "assistant" : "user";
    const previous = out[out.length - 1];
    if (previous && previous.role === role) previous.parts.push(...message.parts);
    else out.push({ ...message, role });
  }
  for (const message of out) {
    if (message.role !== "user") continue;
    message.parts = [...message.parts.filter(isResult), ...message.parts.filter((part) => !isResult(part))];
    if (format === "gemini") {
      for (const part of message.parts) if (part.type === "tool_result" && part.name === undefined) part.name = names.get(part.callId) ?? "";
    }
  }
  return out;
}

/** Responses items carry one call or one reasoning each; adjacent text joins one message item. */
function splitItems(message: Message): Message[] {
  const out: Message[] = [];
  for (const part of message.parts) {
    const previous = out[out.length - 1];
    if (part.type === "text" && previous && previous.parts.every((item) => item.type === "text")) previous.parts.push(part);
    else out.push({ role: "assistant", parts: [part] });
  }
  return out;
}

/** New or reshaped text content in the form each format expects. */
function spell(message: Message, format: HistoryFormat): Message {
  if (message.form !== undefined) return message;
  const texts = message.parts.filter((part) => part.type === "text");
  if (message.role !== "assistant") {
    const plain = texts.length === 1 && message.parts.length === 1 && format !== "gemini" && format !== "bedrock";
    return plain ? { ...message, form: "string" } : message;
  }
  if (format === "openai-chat") {
    const text = texts.map((part) => part.text).join("");
    const others = message.parts.filter((part) => part.type !== "text");
    return text === "" ? { ...message, parts: others, form: "null" } : { ...message, parts: [{ type: "text", text }, ...others], form: "string" };
  }
  if (format === "openai-responses" && texts.length > 0 && texts.length === message.parts.length) {
    return { ...message, parts: [{ type: "text", text: texts.map((part) => part.text).join("") }], form: "string" };
  }
  return message;
}

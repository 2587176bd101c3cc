import { isPlaceholderId } from "../assemble/turn.js";
import { stringifyJson } from "../json/stringify.js";
import { stringField } from "../providers/fields.js";
import type { DecoderOptions, ProviderEvent, ToolCall } from "../types.js";
import { decodedAsSent, isPlainObject } from "./common.js";
import { nestsDeeperThan } from "../providers/codec.js";
import { decodeWhole, eventDepthLimit, picked, settleEntry, settleInto, type EntryKey, type WholeDecoding, type WholeResponseRepair } from "./whole-common.js";
import { ids } from "./whole-messages.js";

/**
 * Whole responses of the OpenAI-shaped protocols: Chat Completions (`stream` off), Responses
 * (`stream` off) and Ollama's `/api/chat` with `stream: false`. Each is turned into the chunks its
 * stream would have sent and decoded by that stream's decoder.
 */

/** The codes for what the wire entry lacked beside the call's own repairs: an id toolwire added, arguments sent in another form. */
function entryCodes(sentId: unknown, call: ToolCall, argumentsSent: unknown, expected: "string" | "object"): string[] {
  const codes: string[] = [];
  if ((typeof sentId !== "string" || sentId === "" || isPlaceholderId(sentId)) && call.providerId === undefined) codes.push("call_id_minted");
  if (expected === "string" && isPlainObject(argumentsSent)) codes.push("arguments_object");
  if (expected === "object" && typeof argumentsSent === "string") codes.push("arguments_string");
  return codes;
}

/** Chat Completions JSON (`choices[].message.tool_calls`), or null when `choices` is not a list. */
export function repairChatWhole(body: Record<string, unknown>, options: DecoderOptions): WholeResponseRepair | null {
  const choices = body.choices;
  if (!Array.isArray(choices)) return null;
  const usage = body.usage;
  const envelope = picked(body, ["id", "object", "created", "model", "x_groq"]);
  const events: ProviderEvent[] = [];
  const chunk = (choice: Record<string, unknown>): ProviderEvent => ({ data: { ...envelope, choices: [choice] } });
  choices.forEach((choice: unknown, position) => {
    if (!isPlainObject(choice)) return;
    const index = choiceIndex(choice, position);
    const message = isPlainObject(choice.message) ? choice.message : {};
    const { tool_calls: toolCalls, function_call: legacy, ...rest } = message;
    events.push(chunk({ index, delta: rest }));
    // One chunk per call, in order: a `length` stop then cuts only the last call, as in a stream
    // (a call followed by another one is complete when its arguments are).
    if (Array.isArray(toolCalls)) toolCalls.forEach((entry: unknown, at) => events.push(chunk({ index, delta: { tool_calls: [isPlainObject(entry) ? { ...entry, index: at } : entry] } })));
    if (isPlainObject(legacy)) events.push(chunk({ index, delta: { function_call: legacy } }));
    events.push(chunk({ index, delta: {}, finish_reason: typeof choice.finish_reason === "string" ? choice.finish_reason : null }));
  });
  if (usage !== undefined && usage !== null) events.push({ data: { ...envelope, choices: [], usage } });
  events.push({ data: "[DONE]" });

  const decoding = decodeWhole("openai-chat", events, options, (call) => {
    const choice = typeof call.providerFields?.choice === "number" ? call.providerFields.choice : 0;
    return call.providerFields?.legacyFunctionCall === true ? `${choice}:legacy` : `${choice}:${String(call.providerIndex)}`;
  });
  let changed = false;
  const repairedChoices = choices.map((choice: unknown, position) => {
    if (!isPlainObject(choice) || !isPlainObject(choice.message)) return choice;
    const repaired = repairChatChoice(decoding, choice, choice.message, choiceIndex(choice, position));
    if (repaired !== choice) changed = true;
    return repaired;
  });
  if (!changed) return { body, changed: false, turn: decoding.turn, repairs: decoding.tap.repairs };
  return { body: { ...body, choices: repairedChoices }, changed: true, turn: decoding.turn, repairs: decoding.tap.repairs };
}

function choiceIndex(choice: Record<string, unknown>, position: number): number {
  const index = choice.index;
  return typeof index === "number" && Number.isInteger(index) && index >= 0 ? index : position;
}

/** One choice with its calls as decoded (the same object when every call was decoded as sent). */
function repairChatChoice(decoding: WholeDecoding, choice: Record<string, unknown>, message: Record<string, unknown>, index: number): Record<string, unknown> {
  let touched = false;
  let delivered = 0;
  let entries = 0;
  const toolCalls: unknown[] = [];
  if (Array.isArray(message.tool_calls)) {
    message.tool_calls.forEach((entry: unknown, at) => {
      if (!isPlainObject(entry)) {
        toolCalls.push(entry);
        return;
      }
      entries++;
      const fn = isPlainObject(entry.function) ? entry.function : isPlainObject(entry.custom) ? entry.custom : {};
      const sentText = (call: ToolCall): unknown => (call.providerFields?.customToolInput === true ? (isPlainObject(entry.custom) ? entry.custom.input : undefined) : isPlainObject(entry.function) ? entry.function.arguments : undefined);
      const settled = settleInto(
        decoding,
        `${index}:${at}`,
        () => ({ ...ids(entry.id, fn.name), what: `The tool call ${at} of choice ${index}` }),
        entry,
        toolCalls,
        (only) => {
          const text = sentText(only);
          // The entry alone carried the call (no other entry continued it): its text is the call's.
          const ownText = only.providerFields?.customToolInput === true ? JSON.stringify({ input: text }) : text;
          return typeof text === "string" && only.rawArguments === ownText && fn.name === only.name && entry.id === only.id && decodedAsSent(only) && only.source === "delta";
        },
        (call, n) => ({ entry: chatEntry(entry, call, toolCalls.length), codes: n === 0 ? entryCodes(entry.id, call, sentText(call), "string") : [] }),
      );
      delivered += settled.runnable.length;
      if (settled.changed) touched = true;
    });
  }
  let legacy: Record<string, unknown> | null | undefined;
  if (isPlainObject(message.function_call)) {
    const sent = message.function_call;
    entries++;
    const { calls, runnable, keep } = settleEntry(decoding, `${index}:legacy`, () => ({ ...ids(undefined, sent.name), what: `The function_call of choice ${index}` }));
    const first = runnable[0];
    if (calls.length === 0) {
      if (!keep) legacy = null;
    } else if (!(calls.length === 1 && first && typeof sent.arguments === "string" && sent.name === first.name && decodedAsSent(first) && first.source === "delta")) {
      legacy = first ? { ...sent, name: first.name, arguments: JSON.stringify(first.arguments) } : null;
      if (first) decoding.tap.rewritten(first);
      // The legacy field holds one call: calls split from it cannot be delivered there.
      for (const extra of runnable.slice(1)) {
        decoding.tap.report({
          action: "withheld",
          code: "split_concatenated_calls",
          message: `Call ${extra.index} (${extra.name}) was split from a legacy function_call, which holds one call only; it was not delivered.`,
          callIndex: extra.index,
          id: extra.id,
          name: extra.name,
        });
      }
    }
    if (first) delivered++;
  }
  if (!touched && legacy === undefined) return choice;
  const replace: Record<string, unknown> = {};
  const drop: string[] = [];
  if (Array.isArray(message.tool_calls)) {
    if (toolCalls.length > 0) replace.tool_calls = toolCalls;
    else drop.push("tool_calls");
  }
  if (legacy === null) drop.push("function_call");
  else if (legacy !== undefined) replace.function_call = legacy;
  const ordered = rebuilt(message, replace, drop);
  return { ...choice, message: ordered, ...chatFinish(decoding, choice, delivered, entries) };
}

/** The finish reason made to agree with the calls delivered (as the streamed Chat re-encoder does). */
function chatFinish(decoding: WholeDecoding, choice: Record<string, unknown>, delivered: number, entries: number): Record<string, unknown> {
  const finish = stringField(choice, "finish_reason");
  if (finish === null || entries === 0) return {};
  const fixed = delivered > 0 && (finish === "stop" || finish === "eos" || finish === "end_turn") ? "tool_calls" : delivered === 0 && (finish === "tool_calls" || finish === "function_call") ? "stop" : finish;
  if (fixed === finish) return {};
  decoding.tap.report({
    action: "normalized",
    code: delivered > 0 ? "finish_reason_stop_with_tool_calls" : "stop_reason_without_calls",
    message: `finish_reason '${finish}' became '${fixed}' to match the calls delivered.`,
  });
  return { finish_reason: fixed };
}

/** `object` with the fields of `replace` put in their place and those of `drop` left out, every other field kept in order. */
function rebuilt(object: Record<string, unknown>, replace: Record<string, unknown>, drop: readonly string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const put = (key: string, value: unknown): void => void Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
  for (const [key, value] of Object.entries(object)) if (!drop.includes(key)) put(key, Object.hasOwn(replace, key) ? replace[key] : value);
  for (const [key, value] of Object.entries(replace)) if (!Object.hasOwn(out, key)) put(key, value);
  return out;
}

function chatEntry(entry: Record<string, unknown>, call: ToolCall, position: number): Record<string, unknown> {
  const base = typeof entry.index === "number" ? { ...entry, index: position } : entry;
  const args = call.arguments ?? {};
  if (call.providerFields?.customToolInput === true) {
    return { ...base, id: call.id, type: "custom", custom: { ...(isPlainObject(entry.custom) ? entry.custom : {}), name: call.name, input: typeof args.input === "string" ? args.input : "" } };
  }
  return { ...base, id: call.id, type: "function", function: { ...(isPlainObject(entry.function) ? entry.function : {}), name: call.name, arguments: JSON.stringify(args) } };
}

/** Ollama `/api/chat` JSON (`stream: false`: one line with `done: true`), or null when `message` is not an object. */
export function repairOllamaWhole(body: Record<string, unknown>, options: DecoderOptions): WholeResponseRepair | null {
  const message = body.message;
  if (!isPlainObject(message)) return null;
  const entries = Array.isArray(message.tool_calls) ? message.tool_calls : null;
  const line = picked(body, ["model", "created_at", "message", "done", "done_reason", "error", "prompt_eval_count", "eval_count", "total_duration", "load_duration", "prompt_eval_duration", "eval_duration"]);
  // The decoder takes a call's position from `function.index`: the list position is that index.
  // An entry nesting near the depth at which the decoder refuses the whole line is left out alone.
  const limit = eventDepthLimit(options) - 8;
  const tooDeep = new Set<EntryKey>();
  const said = picked(message, ["role", "content", "thinking"]);
  const synthesized = entries
    ? {
        ...line,
        message: {
          ...said,
          tool_calls: entries.flatMap((entry: unknown, at) => {
            if (!isPlainObject(entry)) return [entry];
            if (nestsDeeperThan(entry, limit)) {
              tooDeep.add(at);
              return [];
            }
            return [{ ...entry, function: { ...(isPlainObject(entry.function) ? entry.function : {}), index: at } }];
          }),
        },
      }
    : { ...line, message: said };
  const decoding = decodeWhole("ollama", [{ data: synthesized }], options, (call) => call.providerIndex, tooDeep);
  if (!entries) return { body, changed: false, turn: decoding.turn, repairs: decoding.tap.repairs };
  let changed = false;
  const out: unknown[] = [];
  entries.forEach((entry: unknown, at) => {
    if (!isPlainObject(entry)) {
      out.push(entry);
      return;
    }
    const fn = isPlainObject(entry.function) ? entry.function : {};
    const settled = settleInto(
      decoding,
      at,
      () => ({ ...ids(entry.id, fn.name), what: `The tool call ${at}` }),
      entry,
      out,
      (only) => entry.id === only.id && fn.name === only.name && isPlainObject(fn.arguments) && decodedAsSent(only),
      (call, n) => ({
        entry: { ...entry, id: call.id, function: { ...fn, ...(typeof fn.index === "number" ? { index: out.length } : {}), name: call.name, arguments: call.arguments } },
        codes: n === 0 ? entryCodes(entry.id, call, fn.arguments, "object") : [],
      }),
    );
    if (settled.changed) changed = true;
  });
  if (!changed) return { body, changed: false, turn: decoding.turn, repairs: decoding.tap.repairs };
  const { tool_calls: _calls, ...rest } = message;
  return { body: { ...body, message: out.length > 0 ? { ...message, tool_calls: out } : rest }, changed: true, turn: decoding.turn, repairs: decoding.tap.repairs };
}

const CALL_ITEMS = new Set(["function_call", "custom_tool_call"]);

/** Responses JSON (`output[]` items of type `function_call` / `custom_tool_call`), or null when `output` is not a list. */
export function repairResponsesWhole(body: Record<string, unknown>, options: DecoderOptions): WholeResponseRepair | null {
  const output = body.output;
  if (!Array.isArray(output)) return null;
  const status = stringField(body, "status");
  const envelope = picked(body, ["id", "object", "model", "created_at"]);
  const events: ProviderEvent[] = [{ event: "response.created", data: { type: "response.created", response: { ...envelope, output: [], status: "in_progress" } } }];
  output.forEach((item: unknown, outputIndex) => {
    if (!isPlainObject(item)) return;
    const added = (value: Record<string, unknown>): void => void events.push({ event: "response.output_item.added", data: { type: "response.output_item.added", output_index: outputIndex, item: value } });
    const done = (value: Record<string, unknown>): void => void events.push({ event: "response.output_item.done", data: { type: "response.output_item.done", output_index: outputIndex, item: value } });
    if (typeof item.type !== "string" || !CALL_ITEMS.has(item.type)) {
      added(item);
      done(item);
      return;
    }
    const custom = item.type === "custom_tool_call";
    const field = custom ? "input" : "arguments";
    const sent = item[field];
    // Without recursion: a hostile body may nest deeper than JSON.stringify follows.
    const text = typeof sent === "string" ? sent : sent === undefined || sent === null ? "" : stringifyJson(sent);
    added({ ...item, [field]: "", status: "in_progress" });
    const kind = custom ? "response.custom_tool_call_input.delta" : "response.function_call_arguments.delta";
    if (text !== "") events.push({ event: kind, data: { type: kind, ...(typeof item.id === "string" ? { item_id: item.id } : {}), output_index: outputIndex, delta: text } });
    // The item the response ended inside has no done: the decoder truncates it, as in a stream.
    const cut = item.status === "incomplete" || (status === "incomplete" && outputIndex === output.length - 1 && item.status !== "completed");
    if (!cut) done({ ...item, [field]: text });
  });
  if (status === "completed" || status === "incomplete" || status === "failed") {
    events.push({ event: `response.${status}`, data: { type: `response.${status}`, response: { ...envelope, ...picked(body, ["status", "usage", "incomplete_details", "error"]), output: [] } } });
  }

  const decoding = decodeWhole("openai-responses", events, options, (call) => call.providerIndex);
  let changed = false;
  const out: unknown[] = [];
  output.forEach((item: unknown, outputIndex) => {
    if (!isPlainObject(item) || typeof item.type !== "string" || !CALL_ITEMS.has(item.type)) {
      out.push(item);
      return;
    }
    const field = item.type === "custom_tool_call" ? "input" : "arguments";
    const ownText = field === "input" ? JSON.stringify({ input: item[field] }) : item[field];
    const itemId = typeof item.id === "string" ? item.id : null;
    const settled = settleInto(
      decoding,
      outputIndex,
      () => ({ ...ids(item.call_id, item.name), what: `The ${String(item.type)} item ${outputIndex}` }),
      item,
      out,
      (only) => item.call_id === only.id && item.name === only.name && typeof item[field] === "string" && only.rawArguments === ownText && decodedAsSent(only),
      (call, n) => {
        const id = n === 0 ? itemId : `${itemId ?? "fc"}_tw${n + 1}`;
        const args = field === "input" ? String(call.arguments?.input ?? "") : JSON.stringify(call.arguments);
        return { entry: { ...item, ...(id !== null ? { id } : {}), call_id: call.id, name: call.name, [field]: args, status: "completed" }, codes: n === 0 ? entryCodes(item.call_id, call, item[field], "string") : [] };
      },
    );
    if (settled.changed) changed = true;
  });
  if (!changed) return { body, changed: false, turn: decoding.turn, repairs: decoding.tap.repairs };
  return { body: { ...body, output: out }, changed: true, turn: decoding.turn, repairs: decoding.tap.repairs };
}

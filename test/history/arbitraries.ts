/**
 * Generators of valid conversations in the native shape of each format, and of the faults agents
 * actually produce (aborted runs, trimmed windows, provider switches, replayed turns).
 */
import fc from "fast-check";
import type { HistoryFormat, Message } from "../../src/history/index.js";
import type { Part, ToolCallPart, ToolResultPart } from "../../src/history/model.js";

export interface CallPlan {
  name: string;
  args: Record<string, unknown>;
  result: string;
  isError: boolean;
}

export interface StepPlan {
  reasoning: string | null;
  text: string | null;
  calls: CallPlan[];
}

export interface TurnPlan {
  user: string;
  steps: StepPlan[];
}

export interface Plan {
  turns: TurnPlan[];
  /** Whether reasoning (with the provider's signatures) is on for the whole conversation. */
  thinking: boolean;
  /** Gemini: calls carry ids (v3) or not (earlier). */
  geminiIds: boolean;
  /** Responses: function_call items carry their `fc_` item id. */
  itemIds: boolean;
  /** The last turn stops after the results, before the assistant's answer. */
  openEnd: boolean;
}

const text = fc.string({ minLength: 1, maxLength: 12 }).filter((value) => value.trim() !== "");
const name = fc.constantFrom("read_file", "shell", "search", "write_file");
// Arguments as they travel: through JSON text, which has no -0 (fc.jsonValue can produce it, and
// JSON.stringify writes it as 0, so the formats that carry arguments as text could not keep it).
const args = fc.dictionary(fc.string({ minLength: 1, maxLength: 6 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 3 }).map((value) => JSON.parse(JSON.stringify(value)) as Record<string, unknown>);
const call: fc.Arbitrary<CallPlan> = fc.record({ name, args, result: text, isError: fc.boolean() });
const step = (withCalls: boolean): fc.Arbitrary<StepPlan> =>
  fc.record({
    reasoning: fc.option(text, { nil: null }),
    text: fc.option(text, { nil: null }),
    calls: withCalls ? fc.array(call, { minLength: 1, maxLength: 3 }) : fc.constant([]),
  });
const turn: fc.Arbitrary<TurnPlan> = fc.record({
  user: text,
  steps: fc.tuple(fc.array(step(true), { maxLength: 2 }), step(false)).map(([tools, answer]) => [...tools, answer]),
});

export const arbPlan: fc.Arbitrary<Plan> = fc.record({
  turns: fc.array(turn, { minLength: 1, maxLength: 3 }),
  thinking: fc.boolean(),
  geminiIds: fc.boolean(),
  itemIds: fc.boolean(),
  openEnd: fc.boolean(),
});

interface Built {
  messages: Message[];
  counter: number;
}

/** The plan as a valid, native-shaped neutral history of `format`. */
export function build(plan: Plan, format: HistoryFormat): Message[] {
  const state: Built = { messages: [], counter: 0 };
  plan.turns.forEach((turnPlan, turnIndex) => {
    const last = turnIndex === plan.turns.length - 1;
    const steps = last && plan.openEnd && turnPlan.steps.length > 1 ? turnPlan.steps.slice(0, -1) : turnPlan.steps;
    userText(state, format, turnPlan.user);
    for (const stepPlan of steps) assistantStep(state, format, plan, stepPlan);
  });
  return state.messages;
}

function userText(state: Built, format: HistoryFormat, value: string): void {
  const previous = state.messages[state.messages.length - 1];
  // Inline formats carry the next user text in the results message (Bedrock requires alternation).
  if (previous && previous.role === "user" && (format === "anthropic" || format === "bedrock" || format === "gemini")) {
    previous.parts.push({ type: "text", text: value });
    return;
  }
  const stringForm = format === "anthropic" || format === "openai-chat" || format === "openai-responses";
  state.messages.push(stringForm ? { role: "user", parts: [{ type: "text", text: value }], form: "string" } : { role: "user", parts: [{ type: "text", text: value }] });
}

function assistantStep(state: Built, format: HistoryFormat, plan: Plan, stepPlan: StepPlan): void {
  const index = state.messages.length;
  const calls: ToolCallPart[] = stepPlan.calls.map((callPlan, position) => {
    const id = format === "gemini" && !plan.geminiIds ? "" : `call_${state.counter}`;
    state.counter++;
    return { type: "tool_call", id, name: callPlan.name, arguments: callPlan.args, ...(position === 0 && plan.thinking && format === "gemini" ? { signature: `sig${index}` } : {}) };
  });
  const reasoningText = stepPlan.reasoning ?? "thinking";
  const results: ToolResultPart[] = [];
  switch (format) {
    case "anthropic":
    case "bedrock": {
      const parts: Part[] = [];
      if (plan.thinking) parts.push({ type: "reasoning", text: reasoningText, signature: `sig${index}` });
      if (stepPlan.text !== null || calls.length === 0) parts.push({ type: "text", text: stepPlan.text ?? "done" });
      parts.push(...calls);
      state.messages.push({ role: "assistant", parts });
      break;
    }
    case "gemini": {
      const parts: Part[] = [];
      if (plan.thinking && stepPlan.reasoning !== null) parts.push({ type: "reasoning", text: stepPlan.reasoning, signature: `thought${index}` });
      if (stepPlan.text !== null || calls.length === 0) parts.push({ type: "text", text: stepPlan.text ?? "done" });
      for (const item of calls) {
        if (!plan.geminiIds) {
          item.id = `gemini_${index}_${parts.length}`;
          item.syntheticId = true;
        }
        parts.push(item);
      }
      state.messages.push({ role: "assistant", parts });
      break;
    }
    case "openai-chat": {
      const parts: Part[] = [];
      if (plan.thinking) parts.push({ type: "reasoning", text: reasoningText });
      if (stepPlan.text !== null) parts.push({ type: "text", text: stepPlan.text });
      parts.push(...calls);
      state.messages.push({ role: "assistant", parts, form: stepPlan.text !== null ? "string" : "null" });
      break;
    }
    case "openai-responses": {
      if (plan.thinking) state.messages.push({ role: "assistant", parts: [{ type: "reasoning", text: "", id: `rs_${index}`, summary: [reasoningText] }] });
      if (stepPlan.text !== null || calls.length === 0) state.messages.push({ role: "assistant", parts: [{ type: "text", text: stepPlan.text ?? "done" }], form: "string" });
      for (const item of calls) state.messages.push({ role: "assistant", parts: [plan.itemIds && plan.thinking ? { ...item, itemId: `fc_${item.id}` } : item] });
      break;
    }
  }
  stepPlan.calls.forEach((callPlan, position) => {
    const item = calls[position] as ToolCallPart;
    results.push(resultFor(format, item, callPlan));
  });
  if (results.length === 0) return;
  if (format === "openai-chat" || format === "openai-responses") {
    for (const result of results) state.messages.push({ role: "tool", parts: [result] });
  } else {
    state.messages.push({ role: "user", parts: results });
  }
}

function resultFor(format: HistoryFormat, item: ToolCallPart, callPlan: CallPlan): ToolResultPart {
  const base: ToolResultPart = { type: "tool_result", callId: item.id, content: callPlan.result };
  switch (format) {
    case "anthropic":
      return callPlan.isError ? { ...base, isError: true } : base;
    case "bedrock":
      return { ...base, content: [{ type: "text", text: callPlan.result }], ...(callPlan.isError ? { isError: true } : {}) };
    case "gemini":
      return { ...base, name: item.name, ...(callPlan.isError ? { isError: true } : {}), ...(item.syntheticId ? { syntheticId: true as const } : {}) };
    default:
      return base;
  }
}

// ---------------------------------------------------------------------------------------------
// Faults

export type FaultKind =
  | "drop_result"
  | "drop_call_message"
  | "trim_window"
  | "truncate"
  | "move_result_later"
  | "text_between"
  | "text_before_results"
  | "duplicate_message"
  | "duplicate_result"
  | "foreign_id"
  | "long_id"
  | "raw_arguments"
  | "empty_text"
  | "swap"
  | "strip_reasoning"
  | "drop_message"
  | "reverse_parts"
  | "merge_neighbours";

export const arbFaults = fc.array(
  fc.record({
    kind: fc.constantFrom<FaultKind>(
      "drop_result",
      "drop_call_message",
      "trim_window",
      "truncate",
      "move_result_later",
      "text_between",
      "text_before_results",
      "duplicate_message",
      "duplicate_result",
      "foreign_id",
      "long_id",
      "raw_arguments",
      "empty_text",
      "swap",
      "strip_reasoning",
      "drop_message",
      "reverse_parts",
      "merge_neighbours",
    ),
    at: fc.nat(),
    salt: fc.nat(),
  }),
  { minLength: 1, maxLength: 4 },
);

function pick<T>(items: readonly T[], at: number): T | undefined {
  return items.length === 0 ? undefined : items[at % items.length];
}

function locate<T extends Part["type"]>(messages: Message[], type: T): Array<{ message: Message; index: number; part: Extract<Part, { type: T }> }> {
  const found: Array<{ message: Message; index: number; part: Extract<Part, { type: T }> }> = [];
  messages.forEach((message, index) => {
    for (const part of message.parts) if (part.type === type) found.push({ message, index, part: part as Extract<Part, { type: T }> });
  });
  return found;
}

/** Applies one fault to a copy of the history. */
export function inject(input: readonly Message[], fault: { kind: FaultKind; at: number; salt: number }): Message[] {
  const messages: Message[] = structuredClone(input as Message[]);
  const { at, salt } = fault;
  switch (fault.kind) {
    case "drop_result": {
      const hit = pick(locate(messages, "tool_result"), at);
      if (hit) hit.message.parts = hit.message.parts.filter((part) => part !== hit.part);
      return messages.filter((message) => message.parts.length > 0 || message.role === "assistant");
    }
    case "drop_call_message": {
      const hit = pick(locate(messages, "tool_call"), at);
      return hit ? messages.filter((_, index) => index !== hit.index) : messages;
    }
    case "trim_window":
      return messages.slice(1 + (at % Math.max(1, messages.length - 1)));
    case "truncate":
      return messages.slice(0, 1 + (at % messages.length));
    case "move_result_later": {
      const hit = pick(locate(messages, "tool_result"), at);
      if (!hit) return messages;
      hit.message.parts = hit.message.parts.filter((part) => part !== hit.part);
      const target = hit.index + 1 + (salt % 3);
      messages.splice(Math.min(target, messages.length), 0, { role: "tool", parts: [hit.part] });
      return messages.filter((message) => message.parts.length > 0 || message.role === "assistant");
    }
    case "text_between": {
      const hit = pick(locate(messages, "tool_call"), at);
      if (hit) messages.splice(hit.index + 1, 0, { role: "user", parts: [{ type: "text", text: "interrupt" }] });
      return messages;
    }
    case "text_before_results": {
      const hit = pick(locate(messages, "tool_result"), at);
      if (hit) hit.message.parts.unshift({ type: "text", text: "note" });
      return messages;
    }
    case "duplicate_message": {
      const hit = pick(locate(messages, "tool_call"), at);
      if (hit) messages.splice(hit.index + 1, 0, structuredClone(hit.message));
      return messages;
    }
    case "duplicate_result": {
      const hit = pick(locate(messages, "tool_result"), at);
      if (hit) hit.message.parts.push(structuredClone(hit.part));
      return messages;
    }
    case "foreign_id":
    case "long_id": {
      const hit = pick(locate(messages, "tool_call"), at);
      if (!hit) return messages;
      const old = hit.part.id;
      const fresh = fault.kind === "foreign_id" ? `functions.${hit.part.name}:${salt % 7}` : `portkey-${"x".repeat(40)}-${salt}`;
      hit.part.id = fresh;
      delete hit.part.syntheticId;
      for (const result of locate(messages, "tool_result")) {
        if (result.part.callId === old) {
          result.part.callId = fresh;
          delete result.part.syntheticId;
        }
      }
      return messages;
    }
    case "raw_arguments": {
      const hit = pick(locate(messages, "tool_call"), at);
      if (hit) {
        hit.part.arguments = null;
        hit.part.rawArguments = salt % 2 === 0 ? '{"path": "a.txt", "content": "hel' : "not json";
        hit.part.error = { code: "invalid_json", message: "The call's arguments were not valid JSON, so the call was not run." };
      }
      return messages;
    }
    case "empty_text": {
      const target = pick(messages, at);
      if (target) target.parts.splice(salt % (target.parts.length + 1), 0, { type: "text", text: salt % 2 === 0 ? "" : " " });
      return messages;
    }
    case "swap": {
      if (messages.length < 2) return messages;
      const i = at % (messages.length - 1);
      const [a, b] = [messages[i] as Message, messages[i + 1] as Message];
      messages[i] = b;
      messages[i + 1] = a;
      return messages;
    }
    case "drop_message":
      return messages.filter((_, index) => index !== at % messages.length);
    case "reverse_parts": {
      const target = pick(messages, at);
      if (target) target.parts.reverse();
      return messages;
    }
    case "merge_neighbours": {
      if (messages.length < 2) return messages;
      const i = at % (messages.length - 1);
      const [a, b] = [messages[i] as Message, messages[i + 1] as Message];
      a.parts.push(...b.parts);
      delete a.form;
      messages.splice(i + 1, 1);
      return messages;
    }
    case "strip_reasoning": {
      const assistants = messages.map((message, index) => ({ message, index })).filter(({ message }) => message.role === "assistant");
      const hit = pick(assistants, at);
      if (hit) hit.message.parts = hit.message.parts.filter((part) => part.type !== "reasoning");
      return messages.filter((message) => message.parts.length > 0);
    }
  }
}

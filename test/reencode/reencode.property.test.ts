import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { decodeEventStream } from "../../src/framing/aws-eventstream.js";
import { encodeEventStreamBytes } from "../../src/testing/wire.js";
import type { ProviderEvent, ProviderName } from "../../src/types.js";
import { a } from "../helpers/anthropic-events.js";
import { bodyOf, check, type Form } from "./gemini-support.js";
import { decodeBytes, reencode, sseBody } from "./support.js";

/**
 * For generated turns with the quirks the re-encoders fix, in any chunking: decoding the
 * re-encoded stream gives exactly the runnable calls toolwire decodes from the original, each
 * one well-formed (complete, no repair), the same text, and an unchanged stream when nothing
 * needed a fix.
 */

const encoder = new TextEncoder();
const args = fc.dictionary(fc.constantFrom("path", "command", "n", "flag", "items"), fc.oneof(fc.string({ maxLength: 12 }), fc.integer(), fc.boolean(), fc.array(fc.integer(), { maxLength: 3 })), { minKeys: 1, maxKeys: 3 });

function split(text: string, cuts: readonly number[]): string[] {
  const points = [...new Set(cuts.map((cut) => cut % (text.length + 1)))].sort((x, y) => x - y);
  const out: string[] = [];
  let last = 0;
  for (const point of points) {
    if (point > last) out.push(text.slice(last, point));
    last = Math.max(last, point);
  }
  out.push(text.slice(last));
  return out.filter((piece) => piece !== "");
}

type Quirk = "plain" | "kimi" | "start_only" | "duplicate_id" | "cut" | "invalid" | "repairable" | "glued";

/** A call's JSON as a model may close it: as sent, not JSON at all, or with a trailing comma (a lossless repair). */
function brokenJson(json: string, quirk: Quirk | "none"): string {
  if (quirk === "invalid") return json.slice(0, -1);
  if (quirk === "repairable") return `${json.slice(0, -1)},}`;
  if (quirk === "glued") return `${json}{"n":2}`;
  return json;
}

const anthropicTurn = fc.record({
  text: fc.option(fc.string({ minLength: 1, maxLength: 20 }), { nil: undefined }),
  calls: fc.array(
    fc.record({ args, quirk: fc.constantFrom<Quirk>("plain", "plain", "kimi", "start_only", "duplicate_id", "invalid", "repairable", "glued"), cuts: fc.array(fc.nat(80), { maxLength: 4 }), textAfter: fc.boolean() }),
    { minLength: 1, maxLength: 3 },
  ),
  cutLast: fc.boolean(),
  pings: fc.boolean(),
});

function anthropicEvents(turn: { text: string | undefined; calls: Array<{ args: Record<string, unknown>; quirk: Quirk; cuts: number[]; textAfter: boolean }>; cutLast: boolean; pings: boolean }): ProviderEvent[] {
  const events: ProviderEvent[] = [a.messageStart()];
  let index = 0;
  if (turn.text !== undefined) {
    events.push(a.textStart(index), a.text(index, turn.text), a.stop(index));
    index++;
  }
  turn.calls.forEach((call, n) => {
    const last = n === turn.calls.length - 1;
    const id = call.quirk === "duplicate_id" && n > 0 ? "toolu_0" : `toolu_${n}`;
    const json = brokenJson(JSON.stringify(call.args), call.quirk);
    const fragments = split(json, call.cuts);
    if (call.quirk === "start_only") events.push(a.toolStart(index, id, "tool", call.args));
    else events.push(a.toolStart(index, id, "tool", call.quirk === "kimi" ? call.args : {}));
    if (call.quirk !== "start_only") {
      const sent = last && turn.cutLast ? fragments.slice(0, Math.max(1, fragments.length - 1)) : fragments;
      for (const fragment of sent) {
        events.push(a.json(index, last && turn.cutLast && sent.length === fragments.length ? fragment.slice(0, -1) : fragment));
        if (turn.pings) events.push(a.ping());
      }
    }
    if (!(last && turn.cutLast)) events.push(a.stop(index));
    index++;
    if (call.textAfter && !(last && turn.cutLast)) {
      events.push(a.textStart(index), a.text(index, `after ${n}`), a.stop(index));
      index++;
    }
  });
  events.push(a.messageDelta(turn.cutLast ? "max_tokens" : "tool_use"), a.messageStop());
  return events;
}

function checkRoundTrip(provider: ProviderName, events: ProviderEvent[], sizes: number[]): void {
  const body = provider === "bedrock" ? encodeEventStreamBytes(events) : encoder.encode(sseBody(provider, events));
  const original = decodeBytes(provider, body);
  const { output, reencoder } = reencode(provider, body, sizes);
  const again = decodeBytes(provider, output);
  const runnable = original.toolCalls.filter((call) => call.arguments !== null);
  // A Chat turn stopped for `length` keeps its finish_reason, so re-decoding it alone takes its last
  // delivered call for the cut one (see reencode.test.ts); accumulators take it as sent.
  const cutBehind = (call: (typeof again.toolCalls)[number]): boolean => again.finishReason === "length" && call.error?.cause === "max_tokens";
  expect(again.toolCalls.map((call) => ({ id: call.id, name: call.name, arguments: cutBehind(call) ? JSON.parse(call.rawArguments) : call.arguments }))).toEqual(
    runnable.map((call) => ({ id: call.id, name: call.name, arguments: call.arguments })),
  );
  for (const call of again.toolCalls) if (!cutBehind(call)) expect(call).toMatchObject({ complete: true, repairs: [], error: null });
  expect(again.text).toBe(original.text);
  if (reencoder.repairs.length === 0) expect(output.length).toBe(body.length);
  if (provider === "bedrock") {
    // Every frame written passes its checksums; a stream that needed no fix is the same bytes.
    const indexes = new Set<number>();
    for (const message of decodeEventStream(output)) {
      const payload = JSON.parse(new TextDecoder().decode(message.payload)) as { contentBlockIndex?: number };
      if (payload.contentBlockIndex !== undefined) indexes.add(payload.contentBlockIndex);
    }
    // Withheld blocks leave no hole: the client's blocks are numbered 0, 1, 2, …
    expect([...indexes].sort((x, y) => x - y)).toEqual([...indexes].map((_, n) => n));
    if (reencoder.repairs.length === 0) expect(output).toEqual(body);
    expect(reencoder.turn).toEqual(original);
  }
  for (const call of original.toolCalls) {
    if (call.arguments === null) expect(reencoder.repairs).toContainEqual(expect.objectContaining({ action: "withheld" }));
  }
}

describe("re-encoding generated quirky turns", () => {
  it("Anthropic: Kimi start input, start-only input, duplicate ids, invalid, repairable and glued calls, text between calls, max_tokens cuts, pings", () => {
    fc.assert(
      fc.property(anthropicTurn, fc.array(fc.integer({ min: 1, max: 64 }), { minLength: 1, maxLength: 4 }), (turn, sizes) => checkRoundTrip("anthropic", anthropicEvents(turn), sizes)),
      { numRuns: 150 },
    );
  });

  type ChatQuirk = "plain" | "index_zero" | "cumulative" | "whole_object" | "no_id" | "object_arguments";
  const chatTurn = fc.record({
    text: fc.option(fc.string({ minLength: 1, maxLength: 20 }), { nil: undefined }),
    quirk: fc.constantFrom<ChatQuirk>("plain", "plain", "index_zero", "cumulative", "whole_object", "no_id", "object_arguments"),
    calls: fc.array(fc.record({ args, cuts: fc.array(fc.nat(80), { maxLength: 4 }), broken: fc.constantFrom<Quirk | "none">("none", "none", "none", "invalid", "repairable") }), { minLength: 1, maxLength: 3 }),
    finish: fc.constantFrom("tool_calls", "stop", "length", null),
    done: fc.boolean(),
  });

  it("Chat: parallel calls at index 0, cumulative resends, whole objects, missing ids, object arguments, invalid and repairable calls, finish reasons", () => {
    fc.assert(
      fc.property(chatTurn, fc.array(fc.integer({ min: 1, max: 64 }), { minLength: 1, maxLength: 4 }), (turn, sizes) => {
        const chunk = (delta: Record<string, unknown>, finish: string | null = null): ProviderEvent => ({ data: { id: "chatcmpl-1", object: "chat.completion.chunk", model: "m", choices: [{ index: 0, delta, finish_reason: finish }] } });
        const events: ProviderEvent[] = [chunk({ role: "assistant", content: turn.text ?? "" })];
        turn.calls.forEach((call, n) => {
          const index = turn.quirk === "index_zero" ? 0 : n;
          const id = turn.quirk === "no_id" ? undefined : `call_${n}`;
          const json = brokenJson(JSON.stringify(call.args), call.broken);
          const head = { index, ...(id ? { id } : {}), type: "function" };
          if (turn.quirk === "object_arguments") {
            events.push(chunk({ tool_calls: [{ ...head, function: { name: "tool", arguments: call.args } }] }));
            return;
          }
          if (turn.quirk === "whole_object") {
            events.push(chunk({ tool_calls: [{ ...head, function: { name: "tool", arguments: "{}" } }] }), chunk({ tool_calls: [{ index, function: { arguments: json } }] }));
            return;
          }
          const fragments = split(json, call.cuts);
          let sofar = "";
          fragments.forEach((fragment, k) => {
            sofar += fragment;
            const text = turn.quirk === "cumulative" ? sofar : fragment;
            events.push(chunk({ tool_calls: [k === 0 ? { ...head, function: { name: "tool", arguments: text } } : { index, function: { arguments: text } }] }));
          });
        });
        if (turn.finish !== null) events.push(chunk({}, turn.finish));
        if (turn.done) events.push({ data: "[DONE]" });
        checkRoundTrip("openai-chat", events, sizes);
      }),
      { numRuns: 200 },
    );
  });

  it("Responses: invalid and repairable calls, duplicate call ids, text between calls, cut by max_output_tokens", () => {
    const responsesTurn = fc.record({
      calls: fc.array(fc.record({ args, broken: fc.constantFrom<Quirk | "none">("none", "none", "invalid", "repairable", "glued"), cuts: fc.array(fc.nat(80), { maxLength: 4 }), textAfter: fc.boolean() }), { minLength: 1, maxLength: 3 }),
      duplicateIds: fc.boolean(),
      cutLast: fc.boolean(),
    });
    fc.assert(
      fc.property(responsesTurn, fc.array(fc.integer({ min: 1, max: 64 }), { minLength: 1, maxLength: 4 }), (turn, sizes) => {
        let sequence = 0;
        const ev = (type: string, fields: Record<string, unknown>): ProviderEvent => ({ event: type, data: { type, sequence_number: sequence++, ...fields } });
        const events: ProviderEvent[] = [ev("response.created", { response: { id: "resp_1", status: "in_progress", output: [] } })];
        const output: unknown[] = [];
        let index = 0;
        turn.calls.forEach((call, n) => {
          const last = n === turn.calls.length - 1;
          const cut = last && turn.cutLast;
          const json = brokenJson(JSON.stringify(call.args), call.broken);
          const itemId = `fc_${n}`;
          const callId = turn.duplicateIds && n > 0 ? "call_0" : `call_${n}`;
          const item = (status: string, text: string) => ({ id: itemId, type: "function_call", status, arguments: text, call_id: callId, name: "tool" });
          events.push(ev("response.output_item.added", { output_index: index, item: item("in_progress", "") }));
          const fragments = split(json, call.cuts);
          const sent = cut ? fragments.slice(0, Math.max(1, fragments.length - 1)) : fragments;
          for (const fragment of sent) events.push(ev("response.function_call_arguments.delta", { item_id: itemId, output_index: index, delta: fragment }));
          if (!cut) {
            events.push(ev("response.function_call_arguments.done", { item_id: itemId, output_index: index, arguments: json }), ev("response.output_item.done", { output_index: index, item: item("completed", json) }));
          }
          output.push(item(cut ? "in_progress" : "completed", cut ? sent.join("") : json));
          index++;
          if (call.textAfter && !cut) {
            const message = { id: `msg_${n}`, type: "message", status: "completed", role: "assistant", content: [{ type: "output_text", text: `after ${n}`, annotations: [] }] };
            events.push(
              ev("response.output_item.added", { output_index: index, item: { ...message, status: "in_progress", content: [] } }),
              ev("response.output_text.delta", { item_id: message.id, output_index: index, content_index: 0, delta: `after ${n}` }),
              ev("response.output_item.done", { output_index: index, item: message }),
            );
            output.push(message);
            index++;
          }
        });
        events.push(
          turn.cutLast
            ? ev("response.incomplete", { response: { id: "resp_1", status: "incomplete", incomplete_details: { reason: "max_output_tokens" }, output } })
            : ev("response.completed", { response: { id: "resp_1", status: "completed", output } }),
        );
        checkRoundTrip("openai-responses", events, sizes);
      }),
      { numRuns: 150 },
    );
  });

  type BedrockQuirk = "plain" | "duplicate_id" | "no_id" | "resent_whole" | "cumulative" | "invalid" | "not_object" | "glued";
  const bedrockTurn = fc.record({
    text: fc.option(fc.string({ minLength: 1, maxLength: 20 }), { nil: undefined }),
    reasoning: fc.boolean(),
    calls: fc.array(
      fc.record({
        args,
        quirk: fc.constantFrom<BedrockQuirk>("plain", "plain", "plain", "duplicate_id", "no_id", "resent_whole", "cumulative", "invalid", "not_object", "glued"),
        cuts: fc.array(fc.nat(80), { maxLength: 4 }),
      }),
      { minLength: 1, maxLength: 3 },
    ),
    textAfter: fc.boolean(),
    cutLast: fc.boolean(),
    metadata: fc.boolean(),
  });

  it("Bedrock: duplicate or missing ids, input resent whole or cumulatively, invalid and non-object input, glued objects, max_tokens cuts", () => {
    fc.assert(
      fc.property(bedrockTurn, fc.array(fc.integer({ min: 1, max: 64 }), { minLength: 1, maxLength: 4 }), (turn, sizes) => {
        const ev = (name: string, body: Record<string, unknown>): ProviderEvent => ({ event: name, data: body });
        const events: ProviderEvent[] = [ev("messageStart", { role: "assistant", p: "abc" })];
        let index = 0;
        if (turn.reasoning) {
          events.push(ev("contentBlockDelta", { contentBlockIndex: index, delta: { reasoningContent: { text: "Thinking." } } }), ev("contentBlockDelta", { contentBlockIndex: index, delta: { reasoningContent: { signature: "sig==" } } }), ev("contentBlockStop", { contentBlockIndex: index }));
          index++;
        }
        if (turn.text !== undefined) {
          events.push(ev("contentBlockDelta", { contentBlockIndex: index, delta: { text: turn.text } }), ev("contentBlockStop", { contentBlockIndex: index }));
          index++;
        }
        turn.calls.forEach((call, n) => {
          const last = n === turn.calls.length - 1;
          const toolUseId = call.quirk === "duplicate_id" && n > 0 ? "tooluse_0" : call.quirk === "no_id" ? undefined : `tooluse_${n}`;
          events.push(ev("contentBlockStart", { contentBlockIndex: index, start: { toolUse: { ...(toolUseId !== undefined ? { toolUseId } : {}), name: "tool" } } }));
          const json = call.quirk === "invalid" ? `${JSON.stringify(call.args)} oops {` : call.quirk === "not_object" ? JSON.stringify(Object.values(call.args)) : JSON.stringify(call.args);
          let fragments = split(json, call.cuts);
          if (call.quirk === "resent_whole") fragments = [...fragments, json];
          if (call.quirk === "glued") fragments = [...fragments, JSON.stringify({ other: n })];
          if (call.quirk === "cumulative") {
            let sofar = "";
            const whole: string[] = [];
            for (const [key, value] of Object.entries(call.args)) {
              sofar = sofar === "" ? `{${JSON.stringify(key)}:${JSON.stringify(value)}` : `${sofar},${JSON.stringify(key)}:${JSON.stringify(value)}`;
              whole.push(`${sofar}}`);
            }
            fragments = whole;
          }
          const cut = last && turn.cutLast;
          const sent = cut ? fragments.slice(0, Math.max(1, fragments.length - 1)) : fragments;
          for (const fragment of sent) events.push(ev("contentBlockDelta", { contentBlockIndex: index, delta: { toolUse: { input: cut && sent.length === fragments.length ? fragment.slice(0, -1) : fragment } } }));
          if (!cut) events.push(ev("contentBlockStop", { contentBlockIndex: index }));
          index++;
        });
        if (turn.textAfter && !turn.cutLast) events.push(ev("contentBlockDelta", { contentBlockIndex: index, delta: { text: "After." } }), ev("contentBlockStop", { contentBlockIndex: index }));
        events.push(ev("messageStop", { stopReason: turn.cutLast ? "max_tokens" : "tool_use" }));
        if (turn.metadata) events.push(ev("metadata", { usage: { inputTokens: 1, outputTokens: 2, totalTokens: 3 }, metrics: { latencyMs: 1 } }));
        checkRoundTrip("bedrock", events, sizes);
      }),
      { numRuns: 200 },
    );
  });
});

type GeminiQuirk = "plain" | "no_id" | "placeholder_id" | "duplicate_id" | "string_args" | "streamed" | "streamed_no_id" | "not_object" | "resent";
const geminiTurn = fc.record({
  text: fc.option(fc.string({ minLength: 1, maxLength: 20 }), { nil: undefined }),
  thought: fc.boolean(),
  calls: fc.array(fc.record({ args, quirk: fc.constantFrom<GeminiQuirk>("plain", "plain", "no_id", "placeholder_id", "duplicate_id", "string_args", "streamed", "streamed", "streamed_no_id", "not_object", "resent"), cuts: fc.array(fc.nat(12), { maxLength: 3 }), signed: fc.boolean() }), {
    minLength: 1,
    maxLength: 3,
  }),
  cutLast: fc.boolean(),
  finish: fc.constantFrom("STOP", "STOP", "MAX_TOKENS", null),
  form: fc.constantFrom<Form>("sse", "json"),
});

/** `partialArgs` leaves for an arguments object, strings cut into `willContinue` pieces. */
function leavesOf(value: Record<string, unknown>, cuts: readonly number[]): Array<Record<string, unknown>> {
  const leaves: Array<Record<string, unknown>> = [];
  for (const [key, item] of Object.entries(value)) {
    const path = `$.${key}`;
    if (typeof item === "string") {
      const pieces = item === "" ? [""] : split(item, cuts);
      pieces.forEach((piece, i) => leaves.push({ jsonPath: path, stringValue: piece, ...(i < pieces.length - 1 ? { willContinue: true } : {}) }));
    } else if (typeof item === "number") leaves.push({ jsonPath: path, numberValue: item });
    else if (typeof item === "boolean") leaves.push({ jsonPath: path, boolValue: item });
    else if (Array.isArray(item)) item.forEach((element, i) => leaves.push({ jsonPath: `${path}[${i}]`, numberValue: element }));
  }
  return leaves;
}

describe("re-encoding generated quirky Gemini turns", () => {
  it("missing, placeholder and duplicate ids, string and non-object args, streamed partialArgs, resent calls, MAX_TOKENS and cut streams, both wire forms", () => {
    fc.assert(
      fc.property(geminiTurn, fc.array(fc.integer({ min: 1, max: 64 }), { minLength: 1, maxLength: 4 }), (turn, sizes) => {
        const chunk = (parts: unknown[]): ProviderEvent => ({ data: { candidates: [{ content: { role: "model", parts }, index: 0 }], responseId: "r1", modelVersion: "gemini-test" } });
        const events: ProviderEvent[] = [];
        if (turn.text !== undefined) events.push(chunk([{ text: turn.text, ...(turn.thought ? { thought: true } : {}) }]));
        let cut = false;
        turn.calls.forEach((call, n) => {
          const last = n === turn.calls.length - 1;
          const id = call.quirk === "no_id" || call.quirk === "streamed_no_id" ? {} : { id: call.quirk === "duplicate_id" ? "fc_0" : call.quirk === "placeholder_id" ? "null" : `fc_${n}` };
          const signature = call.signed ? { thoughtSignature: `sig${n}` } : {};
          if (call.quirk === "streamed" || call.quirk === "streamed_no_id") {
            events.push(chunk([{ functionCall: { name: "tool", ...id, willContinue: true }, ...signature }]));
            for (const leaf of leavesOf(call.args, call.cuts)) events.push(chunk([{ functionCall: { partialArgs: [leaf], willContinue: true } }]));
            if (last && turn.cutLast) cut = true;
            else events.push(chunk([{ functionCall: {} }]));
            return;
          }
          const sent = call.quirk === "string_args" ? JSON.stringify(call.args) : call.quirk === "not_object" ? [call.args] : call.args;
          events.push(chunk([{ functionCall: { name: "tool", ...id, args: sent }, ...signature }]));
          if (call.quirk === "resent") events.push(chunk([{ functionCall: { name: "tool", ...id, args: sent } }]));
        });
        if (turn.finish !== null && !(cut && turn.finish === "STOP")) {
          events.push({ data: { candidates: [{ content: { role: "model", parts: [{ text: "" }] }, finishReason: turn.finish, index: 0 }], usageMetadata: { promptTokenCount: 3, candidatesTokenCount: 4, totalTokenCount: 7 } } });
        }
        check(turn.form, bodyOf(turn.form, events), sizes);
      }),
      { numRuns: 200 },
    );
  });
});

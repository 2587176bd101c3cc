import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { createByteDecoder } from "../../src/adapters/bytes.js";
import { encodeSse } from "../../src/framing/sse.js";
import { isPlainObject } from "../../src/json/shape.js";
import { eventType } from "../../src/providers/fields.js";
import type { DecodedTurn, ProviderEvent, ProviderName, ToolCall } from "../../src/types.js";
import { closedAtStreamEnd, decodeEvents, prefixViolation, runsFor, splitAt } from "../helpers/properties.js";
import { c, r, responsesCall } from "../helpers/openai-events.js";
import { testdataFiles } from "../helpers/testdata.js";

/**
 * The properties of the first issues over every Chat Completions and Responses stream in
 * testdata/ (recorded and hand-written): byte splits of the SSE re-encoding, re-split argument
 * fragments, truncation at every event, previews; plus, on generated streams, that interleaving
 * the chunks of parallel calls in any order gives the same calls.
 */

type Stream = { provider: ProviderName; label: string; events: ProviderEvent[] };
const streams: Stream[] = (["openai-chat", "openai-responses"] as const).flatMap((provider) =>
  testdataFiles(provider).flatMap((file) => file.streams.map((stream) => ({ provider, label: `${provider} ${file.name} ${stream.sequence ?? ""}`.trim(), events: stream.events }))),
);

const minted = (call: ToolCall): boolean => call.id.startsWith("call_tw_");
/** A call without the parts that depend on how its first fragment was cut (a minted id hashes it). */
const stable = (call: ToolCall) => ({ ...call, id: minted(call) ? "minted" : call.id });

// ---- Chat: argument re-splitting --------------------------------------------------------------

interface ChatEntry {
  choice: number;
  entry: Record<string, unknown>;
}

/** The single tool_calls entry of a chunk, when it has exactly one with an index and string-or-absent arguments. */
function singleEntry(event: ProviderEvent): ChatEntry | null | "other" {
  const data = event.data;
  if (!isPlainObject(data) || !Array.isArray(data.choices)) return null;
  let found: ChatEntry | null = null;
  for (const choice of data.choices) {
    if (!isPlainObject(choice) || !isPlainObject(choice.delta) || !Array.isArray(choice.delta.tool_calls) || choice.delta.tool_calls.length === 0) continue;
    const entries = choice.delta.tool_calls;
    if (entries.length !== 1 || found) return "other";
    const entry = entries[0];
    if (!isPlainObject(entry) || typeof entry.index !== "number" || entry.type === "custom") return "other";
    const fn = entry.function;
    if (fn !== undefined && (!isPlainObject(fn) || (fn.arguments !== undefined && fn.arguments !== null && typeof fn.arguments !== "string"))) return "other";
    found = { choice: typeof choice.index === "number" ? choice.index : 0, entry };
  }
  return found;
}

/** Chat streams whose argument text is the plain concatenation of fragments keyed by index (no resends, no shared indexes). */
function chatResplittable(events: ProviderEvent[], reference: DecodedTurn): Map<string, number[]> | null {
  if (reference.toolCalls.some((call) => call.repairs.length > 0) || reference.diagnostics.some((d) => d.code === "parallel_calls_share_index")) return null;
  const groups = new Map<string, number[]>();
  for (const [i, event] of events.entries()) {
    const single = singleEntry(event);
    if (single === "other") return null;
    if (!single) continue;
    const key = `${single.choice}:${String(single.entry.index)}`;
    groups.set(key, [...(groups.get(key) ?? []), i]);
  }
  return groups.size > 0 ? groups : null;
}

function withArguments(event: ProviderEvent, args: string | undefined): ProviderEvent {
  const data = event.data as Record<string, unknown>;
  const choices = (data.choices as Record<string, unknown>[]).map((choice) => {
    const delta = choice.delta as Record<string, unknown> | undefined;
    if (!delta || !Array.isArray(delta.tool_calls) || delta.tool_calls.length === 0) return choice;
    const entry = delta.tool_calls[0] as Record<string, unknown>;
    const fn = { ...((entry.function as Record<string, unknown> | undefined) ?? {}) };
    if (args === undefined) delete fn.arguments;
    else fn.arguments = args;
    return { ...choice, delta: { ...delta, tool_calls: [{ ...entry, function: fn }] } };
  });
  return { ...event, data: { ...data, choices } };
}

function resplitChat(events: ProviderEvent[], groups: Map<string, number[]>, sizes: number[]): ProviderEvent[] {
  const replacement = new Map<number, ProviderEvent[]>();
  for (const positions of groups.values()) {
    const argsOf = (i: number): string => {
      const fn = ((events[i]?.data as { choices: Array<{ delta: { tool_calls: Array<{ function?: { arguments?: unknown } }> } }> }).choices.find((ch) => ch.delta?.tool_calls?.length)?.delta.tool_calls[0]?.function);
      return typeof fn?.arguments === "string" ? fn.arguments : "";
    };
    const text = positions.map(argsOf).join("");
    const first = positions[0] as number;
    const pieces: string[] = [];
    for (let at = 0, k = 0; at < text.length; k++) {
      const size = sizes[k % sizes.length] as number;
      pieces.push(text.slice(at, at + size));
      at += size;
    }
    const single = singleEntry(events[first] as ProviderEvent) as ChatEntry;
    const continuation = (piece: string): ProviderEvent => ({
      data: { ...(events[first]?.data as object), choices: [{ index: single.choice, delta: { tool_calls: [{ index: single.entry.index, function: { arguments: piece } }] }, finish_reason: null }] },
    });
    replacement.set(first, [withArguments(events[first] as ProviderEvent, pieces[0] ?? (argsOf(first) === "" ? undefined : "")), ...pieces.slice(1).map(continuation)]);
    // The other fragments keep whatever else they carry (repeated names, ids, finish reasons), without their text.
    for (const i of positions.slice(1)) replacement.set(i, [withArguments(events[i] as ProviderEvent, undefined)]);
  }
  return events.flatMap((event, i) => replacement.get(i) ?? [event]);
}

// ---- Responses: argument re-splitting ---------------------------------------------------------

const DELTA_TYPES = new Set(["response.function_call_arguments.delta", "response.custom_tool_call_input.delta"]);

function resplitResponses(events: ProviderEvent[], sizes: number[]): ProviderEvent[] {
  const groups = new Map<string, number[]>();
  events.forEach((event, i) => {
    if (!isPlainObject(event.data) || !DELTA_TYPES.has(eventType(event))) return;
    const key = String(event.data.item_id ?? event.data.output_index);
    groups.set(key, [...(groups.get(key) ?? []), i]);
  });
  const replacement = new Map<number, ProviderEvent[]>();
  const dropped = new Set<number>();
  for (const positions of groups.values()) {
    const first = positions[0] as number;
    const template = events[first] as ProviderEvent;
    const text = positions.map((i) => String((events[i]?.data as { delta: string }).delta)).join("");
    const pieces: ProviderEvent[] = [];
    for (let at = 0, k = 0; at < text.length; k++) {
      const size = sizes[k % sizes.length] as number;
      pieces.push({ ...template, data: { ...(template.data as object), delta: text.slice(at, at + size) } });
      at += size;
    }
    replacement.set(first, pieces);
    for (const i of positions) dropped.add(i);
  }
  return events.flatMap((event, i) => replacement.get(i) ?? (dropped.has(i) ? [] : [event]));
}

// ---- the properties over every stream ---------------------------------------------------------

describe.each(streams)("openai properties: $label", ({ provider, events }) => {
  const reference = decodeEvents(provider, events).turn;

  it("(a) splitting the SSE byte stream anywhere never changes the DecodedTurn", () => {
    const bytes = new TextEncoder().encode(encodeSse(events));
    fc.assert(
      fc.property(fc.array(fc.nat(), { maxLength: 40 }), (cuts) => {
        const decoder = createByteDecoder(provider);
        for (const chunk of splitAt(bytes, cuts)) decoder.push(chunk);
        expect(decoder.finish()).toEqual(reference);
      }),
      { numRuns: runsFor(events, 20) },
    );
  });

  it("(b) re-splitting the argument fragments never changes the calls", () => {
    const groups = provider === "openai-chat" ? chatResplittable(events, reference) : null;
    if (provider === "openai-chat" && !groups) return; // text-only turns; resends and shared indexes are not plain concatenations
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 1, max: 48 }), { minLength: 1, maxLength: 6 }), (sizes) => {
        const resplit = provider === "openai-chat" ? resplitChat(events, groups as Map<string, number[]>, sizes) : resplitResponses(events, sizes);
        const turn = decodeEvents(provider, resplit).turn;
        expect(turn.toolCalls.map(stable)).toEqual(reference.toolCalls.map(stable));
        expect([turn.status, turn.finishReason, turn.text, turn.reasoning]).toEqual([reference.status, reference.finishReason, reference.text, reference.reasoning]);
      }),
      { numRuns: runsFor(events, 15) },
    );
  });

  it("(c) cutting the stream at any event never throws and never yields a call complete that was not", () => {
    const check = (cut: number): void => {
      const prefix = events.slice(0, cut);
      const { turn } = decodeEvents(provider, prefix);
      // A clean cut after a whole object keeps it (issue 17, turn incomplete). On a server that
      // resends the whole arguments in every chunk, that object can be an early snapshot: nothing
      // in the prefix can tell, which the incomplete status and the diagnostic say.
      // Likewise where the final snapshot later disagrees with the deltas (final_differs_from_delta).
      const resent = (index: number): boolean =>
        (reference.toolCalls[index]?.repairs ?? []).some((r) => r === "cumulative_resend" || r === "collapsed_duplicate") ||
        reference.diagnostics.some((d) => d.code === "final_differs_from_delta" && d.callIndex === index);
      const judged = turn.toolCalls.filter((call) => !(closedAtStreamEnd(turn, call.index) && resent(call.index)));
      expect(prefixViolation(judged, reference.toolCalls)).toBeNull();
      if (turn.status === "complete") expect(reference.status).toBe("complete");
    };
    if (events.length <= 300) {
      for (let cut = 0; cut <= events.length; cut++) check(cut);
    } else {
      fc.assert(fc.property(fc.integer({ min: 0, max: events.length }), check), { numRuns: 60 });
    }
  });

  it("(d) the last preview equals the final arguments, and previews do not change the turn", () => {
    const { turn, out } = decodeEvents(provider, events, true);
    expect(turn).toEqual(reference);
    const lastPreview = new Map<number, unknown>();
    for (const event of out) if (event.type === "tool_call_delta") lastPreview.set(event.index, event.preview);
    const resentOnArrival = new Set(turn.diagnostics.filter((d) => d.code === "arguments_cumulative" || d.code === "arguments_repeated").map((d) => d.callIndex));
    const finalDiffers = new Set(turn.diagnostics.filter((d) => d.code === "final_differs_from_delta").map((d) => d.callIndex));
    for (const call of turn.toolCalls) {
      if (!call.complete || !lastPreview.has(call.index) || finalDiffers.has(call.index)) continue;
      if (call.source !== "delta" && call.source !== "final") continue;
      if (call.repairs.length > 0 && !resentOnArrival.has(call.index)) continue;
      expect(lastPreview.get(call.index)).toEqual(call.arguments);
    }
  });
});

// ---- interleaving parallel calls ----------------------------------------------------------------

const argumentsArb = fc.dictionary(fc.constantFrom("a", "path", "city", "n", "q"), fc.oneof(fc.string({ maxLength: 12 }), fc.integer(), fc.boolean()), { minKeys: 1, maxKeys: 3 });
const callsArb = fc.array(fc.record({ args: argumentsArb, sizes: fc.array(fc.integer({ min: 1, max: 9 }), { minLength: 1, maxLength: 4 }) }), { minLength: 2, maxLength: 4 });

function fragmentsOf(text: string, sizes: number[]): string[] {
  const out: string[] = [];
  for (let at = 0, k = 0; at < text.length; k++) {
    const size = sizes[k % sizes.length] as number;
    out.push(text.slice(at, at + size));
    at += size;
  }
  return out;
}

/** Merges per-call event lists in the order `picks` selects, keeping each call's own order. */
function interleave(lists: ProviderEvent[][], picks: number[]): ProviderEvent[] {
  const cursors = lists.map(() => 0);
  const out: ProviderEvent[] = [];
  let k = 0;
  while (out.length < lists.reduce((n, list) => n + list.length, 0)) {
    const open = lists.map((list, i) => i).filter((i) => (cursors[i] as number) < (lists[i] as ProviderEvent[]).length);
    const i = open[(picks[k++ % Math.max(1, picks.length)] ?? 0) % open.length] as number;
    out.push((lists[i] as ProviderEvent[])[cursors[i] as number] as ProviderEvent);
    cursors[i] = (cursors[i] as number) + 1;
  }
  return out;
}

const callFacts = (turn: DecodedTurn) =>
  turn.toolCalls.map((call) => ({ id: call.id, name: call.name, arguments: call.arguments, source: call.source, complete: call.complete, repairs: call.repairs, error: call.error })).sort((x, y) => x.id.localeCompare(y.id));

describe("interleaving the chunks of parallel calls (distinct indexes) in any order gives the same calls", () => {
  it("Chat Completions", () => {
    fc.assert(
      fc.property(callsArb, fc.array(fc.nat(), { minLength: 1, maxLength: 30 }), (calls, picks) => {
        const lists = calls.map(({ args, sizes }, i) => [c.open(i, `call_${i}`, `tool_${i}`), ...fragmentsOf(JSON.stringify(args), sizes).map((piece) => c.args(i, piece))]);
        const sequential = decodeEvents("openai-chat", [c.role(), ...lists.flat(), c.finish("tool_calls"), c.done()]).turn;
        const mixed = decodeEvents("openai-chat", [c.role(), ...interleave(lists, picks), c.finish("tool_calls"), c.done()]).turn;
        expect(callFacts(mixed)).toEqual(callFacts(sequential));
        expect(callFacts(sequential).map((call) => call.arguments)).toEqual(calls.map(({ args }) => args));
        expect(mixed.diagnostics).toEqual([]);
      }),
      { numRuns: 150 },
    );
  });

  it("Responses", () => {
    fc.assert(
      fc.property(callsArb, fc.array(fc.nat(), { minLength: 1, maxLength: 30 }), (calls, picks) => {
        const lists = calls.map(({ args, sizes }, i) => responsesCall(i, `fc_${i}`, `call_${i}`, `tool_${i}`, fragmentsOf(JSON.stringify(args), sizes)));
        const sequential = decodeEvents("openai-responses", [r.created(), ...lists.flat(), r.completed()]).turn;
        const mixed = decodeEvents("openai-responses", [r.created(), ...interleave(lists, picks), r.completed()]).turn;
        expect(callFacts(mixed)).toEqual(callFacts(sequential));
        expect(callFacts(sequential).map((call) => call.arguments)).toEqual(calls.map(({ args }) => args));
      }),
      { numRuns: 150 },
    );
  });
});

describe("ids minted for calls without one are deterministic", () => {
  it("the same id-less stream always gives the same ids, whatever the byte split", () => {
    const events = [c.role(), c.tools(c.entry({ index: 0, name: "f", args: '{"a":1}' })), c.tools(c.entry({ index: 1, name: "g", args: "{}" })), c.finish("tool_calls"), c.done()];
    const reference = decodeEvents("openai-chat", events).turn;
    const bytes = new TextEncoder().encode(encodeSse(events));
    fc.assert(
      fc.property(fc.array(fc.nat(), { maxLength: 20 }), (cuts) => {
        const decoder = createByteDecoder("openai-chat");
        for (const chunk of splitAt(bytes, cuts)) decoder.push(chunk);
        expect(decoder.finish().toolCalls.map((call) => call.id)).toEqual(reference.toolCalls.map((call) => call.id));
      }),
      { numRuns: 30 },
    );
  });
});


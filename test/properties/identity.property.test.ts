import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { createDecoder } from "../../src/providers/registry.js";
import { jsonExtends } from "../../src/json/equal.js";
import { argumentsObject, expectedCallId, renderSpec, turnSpec, type TurnSpec } from "../../src/testing/generators.js";
import { checkGenerated } from "../../src/testing/invariants.js";
import { PROVIDERS, type DecodedTurn, type ProviderName } from "../../src/types.js";

/**
 * Issue 17: for any generated turn in any provider, including turns whose calls reuse ids, the
 * decoded call ids are distinct and every id the provider sent is kept (as `id` or `providerId`).
 */

/** The generated turn with ids drawn from a tiny pool, so that calls collide often. */
const collidingSpec: fc.Arbitrary<TurnSpec> = fc
  .tuple(turnSpec({ maxCalls: 5 }), fc.array(fc.option(fc.constantFrom("dup", "dup_tw2", "x"), { nil: undefined, freq: 4 }), { minLength: 5, maxLength: 5 }))
  .map(([spec, ids]) => ({
    ...spec,
    calls: spec.calls.map((call, i) => {
      const id = ids[i];
      if (id === undefined) return call;
      return { ...call, id };
    }),
  }));

function decode(provider: ProviderName, spec: TurnSpec): DecodedTurn {
  const decoder = createDecoder(provider);
  for (const event of renderSpec(provider, spec)) decoder.push(event);
  return decoder.finish();
}

describe.each(PROVIDERS.map((provider) => ({ provider })))("call identity: $provider", ({ provider }) => {
  it("decoded ids are distinct and every sent id is kept", () => {
    fc.assert(
      fc.property(collidingSpec, (spec) => {
        const turn = decode(provider, spec);
        const calls = [...turn.toolCalls, ...turn.serverToolCalls];
        const ids = calls.map((call) => call.id);
        expect(new Set(ids).size, ids.join(" ")).toBe(ids.length);
        const kept = new Set(calls.flatMap((call) => [call.id, ...(call.providerId !== undefined ? [call.providerId] : [])]));
        spec.calls.forEach((call, i) => {
          const sent = expectedCallId(provider, call, i);
          if (sent !== undefined) expect(kept.has(sent), `sent id ${sent}`).toBe(true);
        });
        // A minted replacement never equals an id the provider sent in the turn.
        const sentIds = new Set(spec.calls.map((call, i) => expectedCallId(provider, call, i)));
        for (const call of calls) if (call.providerId !== undefined) expect(sentIds.has(call.id), call.id).toBe(false);
        // Apart from Ollama's repeat rule (the same call sent again in a later chunk), no call is lost.
        const repeats = provider === "ollama" && turn.diagnostics.some((d) => d.code === "duplicate_tool_call");
        if (!repeats) expect(checkGenerated(provider, { turn, events: [], thrown: null }, spec)).toEqual([]);
      }),
      { numRuns: 120 },
    );
  });
});

describe("Chat Completions quirks as properties", () => {
  const chunk = (entry: Record<string, unknown>, finish: string | null = null) => ({
    data: { id: "chatcmpl-q", object: "chat.completion.chunk", created: 1, model: "q", choices: [{ index: 0, delta: { tool_calls: [entry] }, finish_reason: finish }] },
  });
  const end = [{ data: { id: "chatcmpl-q", object: "chat.completion.chunk", created: 1, model: "q", choices: [{ index: 0, delta: {}, finish_reason: "tool_calls" }] } }, { data: "[DONE]" }];

  it("placeholder ids on continuation chunks never change the decoded calls", () => {
    fc.assert(
      fc.property(turnSpec({ maxCalls: 3 }), fc.array(fc.constantFrom("null", "None", "undefined", ""), { minLength: 1, maxLength: 4 }), (spec, placeholders) => {
        const plain = renderSpec("openai-chat", spec);
        let k = 0;
        const withPlaceholders = plain.map((event) => {
          const data = event.data as { choices?: Array<{ delta?: { tool_calls?: Array<Record<string, unknown>> } }> };
          const entry = data.choices?.[0]?.delta?.tool_calls?.[0];
          if (!entry || entry.id !== undefined) return event;
          return { ...event, data: { ...data, choices: [{ ...data.choices?.[0], delta: { tool_calls: [{ ...entry, id: placeholders[k++ % placeholders.length] }] } }] } };
        });
        const expected = decode("openai-chat", { ...spec }).toolCalls;
        const decoder = createDecoder("openai-chat");
        for (const event of withPlaceholders) decoder.push(event);
        const actual = decoder.finish().toolCalls;
        expect(actual).toEqual(expected);
      }),
      { numRuns: 100 },
    );
  });

  it("different complete objects glued at one call become one call each, in order, with distinct ids", () => {
    fc.assert(
      fc.property(fc.uniqueArray(argumentsObject(), { minLength: 2, maxLength: 4, selector: (value) => JSON.stringify(value) }), fc.integer({ min: 1, max: 30 }), (objects, size) => {
        // Objects that extend each other read as a cumulative resend (it takes precedence): not this property.
        fc.pre(!objects.some((value, i) => i > 0 && jsonExtends(objects[i - 1], value)));
        const text = objects.map((value) => JSON.stringify(value)).join("");
        const events = [chunk({ index: 0, id: "call_g", type: "function", function: { name: "read", arguments: "" } })];
        for (let at = 0; at < text.length; at += size) events.push(chunk({ index: 0, function: { arguments: text.slice(at, at + size) } }));
        const decoder = createDecoder("openai-chat");
        for (const event of [...events, ...end]) decoder.push(event);
        const calls = decoder.finish().toolCalls;
        expect(calls.map((call) => call.arguments)).toEqual(objects);
        expect(calls.every((call) => call.name === "read" && call.complete && call.repairs.includes("split_concatenated_calls"))).toBe(true);
        expect(new Set(calls.map((call) => call.id)).size).toBe(objects.length);
        expect(calls.slice(1).every((call) => call.providerId === "call_g")).toBe(true);
      }),
      { numRuns: 100 },
    );
  });
});

import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { createDecoder } from "../../src/providers/registry.js";
import { expectedCallId, renderSpec, turnSpec, type TurnSpec } from "../../src/testing/generators.js";
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

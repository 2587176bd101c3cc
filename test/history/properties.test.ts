import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { checkHistory, fromNeutral, HISTORY_FORMATS, repairHistory, toNeutral, type HistoryFormat, type RepairPolicy } from "../../src/history/index.js";
import { checkMessages } from "../../src/history/pairing.js";
import { arbFaults, arbPlan, build, inject } from "./arbitraries.js";

/** Runs per property; `HISTORY_RUNS=2000 npx vitest run test/history` for a deep run. */
const RUNS = Number(process.env.HISTORY_RUNS ?? 50);

/** The repair choices: they never make a valid history invalid. */
const arbChoices: fc.Arbitrary<RepairPolicy> = fc.record({
  danglingCalls: fc.constantFrom("insert_error_result" as const, "drop_call" as const),
  orphanResults: fc.constantFrom("to_text" as const, "drop" as const),
  invalidCalls: fc.constantFrom("placeholder" as const, "drop" as const),
});

/** Choices plus target options (thinking on/off, another host's id rule), which change what is valid. */
const arbPolicy: fc.Arbitrary<RepairPolicy> = fc
  .tuple(
    arbChoices,
    fc.record({
      thinking: fc.constantFrom("auto" as const, "on" as const, "off" as const),
      stripReasoning: fc.boolean(),
      ids: fc.constantFrom(undefined, "anthropic" as const, "openai" as const, "bedrock" as const, "kimi" as const, "mistral" as const, "none" as const),
    }),
  )
  .map(([choices, options]) => ({ ...choices, ...options }));

describe.each(HISTORY_FORMATS)("%s", (format: HistoryFormat) => {
  it("generated histories are valid (the generator itself is checked)", () => {
    fc.assert(
      fc.property(arbPlan, (plan) => {
        const messages = build(plan, format);
        expect(checkMessages(messages, format)).toEqual([]);
      }),
      { numRuns: RUNS },
    );
  });

  it("neutral → provider → neutral is lossless, and provider → neutral → provider too", () => {
    fc.assert(
      fc.property(arbPlan, (plan) => {
        const neutral = build(plan, format);
        const provider = fromNeutral(neutral, format);
        expect(toNeutral(provider, format)).toEqual(neutral);
        expect(fromNeutral(toNeutral(provider, format), format)).toEqual(provider);
        expect(JSON.parse(JSON.stringify(provider))).toEqual(provider);
      }),
      { numRuns: RUNS },
    );
  });

  it("a valid history comes back unchanged, with no edits", () => {
    fc.assert(
      fc.property(arbPlan, arbChoices, (plan, policy) => {
        const provider = fromNeutral(build(plan, format), format);
        const result = repairHistory(provider, format, policy);
        expect(result.edits).toEqual([]);
        expect(result.messages).toEqual(provider);
      }),
      { numRuns: RUNS },
    );
  });

  it("repair output passes check, and repairing twice equals repairing once", () => {
    fc.assert(
      fc.property(arbPlan, arbFaults, arbPolicy, (plan, faults, policy) => {
        let neutral = build(plan, format);
        for (const fault of faults) neutral = inject(neutral, fault);
        const provider = fromNeutral(neutral, format);
        const frozen = JSON.stringify(provider);
        const once = repairHistory(provider, format, policy);
        expect(JSON.stringify(provider)).toBe(frozen);
        expect(checkHistory(once.messages, format, policy)).toEqual([]);
        expect(once.remaining).toEqual([]);
        const twice = repairHistory(once.messages, format, policy);
        expect(twice.edits).toEqual([]);
        expect(twice.messages).toEqual(once.messages);
      }),
      { numRuns: RUNS * 2 },
    );
  });
});


import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { supportedProviders } from "../../src/providers/registry.js";
import { checkCase, materialize, type FuzzCase } from "../../src/testing/fuzz.js";
import { generatedStream, jsonValue, renderSpec, type TurnSpec } from "../../src/testing/generators.js";
import {
  checkCallsSettled,
  checkEventOrder,
  checkGenerated,
  checkPlainData,
  checkSerializable,
  decodeBytesSafely,
  decodeEventsSafely,
} from "../../src/testing/invariants.js";
import { applyByteMutation, applyEventMutations, refragment, type MutationPlan } from "../../src/testing/mutations.js";
import { mutationPlan } from "../../src/testing/generators.js";
import { formatRegression, parseRegression, regressionFileName, type Regression } from "../../src/testing/regressions.js";
import { argumentDelta } from "../../src/testing/shapes.js";
import { cloneJson, firstDifference, stringifyJson } from "../../src/testing/values.js";
import { encodeWire, framingsFor, multibyteCutPoints, splitBytes, spreadJsonLines } from "../../src/testing/wire.js";
import type { DecodedTurn, ProviderEvent } from "../../src/types.js";
import { corpusSources } from "./support.js";

/** The fuzzer's own parts: if these are wrong, a clean fuzz run means nothing. */

const providers = supportedProviders();
const NO_BYTES: MutationPlan["bytes"] = { framing: 0, lineEnding: "lf", dataFirst: false, keepAlives: [], invalidUtf8: [], corrupt: [], truncate: null, cuts: [], multibyteCuts: false };

describe("values", () => {
  it("stringifyJson writes what JSON.stringify writes", () => {
    fc.assert(
      fc.property(fc.oneof(fc.jsonValue(), jsonValue()), (value) => {
        expect(stringifyJson(value)).toBe(JSON.stringify(value));
      }),
      { numRuns: 300 },
    );
  });

  it("stringifyJson, cloneJson and firstDifference survive nesting JSON.stringify cannot", () => {
    const deep = JSON.parse("[".repeat(100_000) + "]".repeat(100_000)) as unknown;
    expect(() => JSON.stringify(deep)).toThrow(RangeError);
    const text = stringifyJson(deep);
    expect(text.length).toBe(200_000);
    const copy = cloneJson(deep);
    expect(firstDifference(deep, copy)).toBeNull();
    expect(firstDifference(deep, JSON.parse("[".repeat(99_999) + "1" + "]".repeat(99_999)))).toMatch(/\$(\[0\])+: \[array\] vs 1/);
  });

  it("cloneJson keeps key order and prototype-named keys as data", () => {
    const value = JSON.parse('{"b":1,"__proto__":{"polluted":true},"a":[1,{"constructor":2}]}') as Record<string, unknown>;
    const copy = cloneJson(value);
    expect(Object.keys(copy)).toEqual(["b", "__proto__", "a"]);
    expect(Object.getPrototypeOf(copy)).toBe(Object.prototype);
    expect(stringifyJson(copy)).toBe(JSON.stringify(value));
  });
});

describe("wire encoding", () => {
  it("splits bytes inside multi-byte characters", () => {
    const bytes = new TextEncoder().encode('data: {"t":"é€😀"}\n\n');
    const chunks = splitBytes(bytes, multibyteCutPoints(bytes));
    expect(chunks.length).toBeGreaterThan(3);
    const decoder = new TextDecoder();
    expect(chunks.map((chunk) => decoder.decode(chunk, { stream: true })).join("") + decoder.decode()).toBe('data: {"t":"é€😀"}\n\n');
    const splitsACharacter = (chunk: Uint8Array): boolean => {
      try {
        new TextDecoder("utf-8", { fatal: true }).decode(chunk);
        return false;
      } catch {
        return true;
      }
    };
    expect(chunks.some(splitsACharacter)).toBe(true);
  });

  it.each(providers)("%s: a generated stream decodes to its spec through events and through every framing", (provider) => {
    fc.assert(
      fc.property(generatedStream(provider), ({ events, spec }) => {
        expect(checkGenerated(provider, decodeEventsSafely(provider, events), spec)).toEqual([]);
        for (const framing of framingsFor(provider)) {
          const run = decodeBytesSafely(provider, [encodeWire(provider, events, { framing })], { framing });
          expect(checkGenerated(provider, run, spec, framing)).toEqual([]);
        }
      }),
      { numRuns: 40 },
    );
  });

  it("spreading JSON over lines keeps its value, and breaks lines only outside strings", () => {
    fc.assert(
      fc.property(jsonValue(), (value) => {
        const text = stringifyJson(value);
        const spread = spreadJsonLines(text);
        expect(JSON.parse(spread)).toEqual(JSON.parse(text));
        expect(spread.replace(/\n/g, "")).toBe(text);
      }),
      { numRuns: 200 },
    );
    expect(spreadJsonLines('{"a,{":[1,"\\",["]}')).toBe('{\n"a,{":[\n1,\n"\\",["]}');
  });

  it("multi-line SSE data decodes to the same turn as one data line per event", () => {
    fc.assert(
      fc.property(generatedStream("anthropic"), ({ events, spec }) => {
        const run = decodeBytesSafely("anthropic", [encodeWire("anthropic", events, { multilineData: true })], {});
        expect(checkGenerated("anthropic", run, spec, "multi-line data")).toEqual([]);
      }),
      { numRuns: 40 },
    );
  });
});

describe("mutations", () => {
  it.each(providers)("%s: re-fragmenting keeps every call's argument text", (provider) => {
    fc.assert(
      fc.property(generatedStream(provider), fc.array(fc.integer({ min: 1, max: 9 }), { minLength: 1, maxLength: 4 }), ({ events }, sizes) => {
        const text = (list: ProviderEvent[]): string => list.map((event) => argumentDelta(provider, event)?.text ?? "").join("|");
        const cut = refragment(provider, events, sizes);
        expect(text(cut).replace(/\|/g, "")).toBe(text(events).replace(/\|/g, ""));
      }),
      { numRuns: 40 },
    );
  });

  it("plans are plain data and apply deterministically", () => {
    fc.assert(
      fc.property(generatedStream("anthropic"), mutationPlan(), ({ events }, plan) => {
        const copy = JSON.parse(JSON.stringify(plan)) as MutationPlan;
        expect(copy).toEqual(plan);
        const once = applyEventMutations("anthropic", events, plan.events);
        const twice = applyEventMutations("anthropic", events, copy.events);
        expect(firstDifference(once, twice)).toBeNull();
        expect(applyByteMutation("anthropic", once, plan.bytes).bytes).toEqual(applyByteMutation("anthropic", twice, copy.bytes).bytes);
      }),
      { numRuns: 60 },
    );
  });
});

describe("invariants catch what they claim to", () => {
  const turn = (overrides: Partial<DecodedTurn>): DecodedTurn => ({
    sequence: null,
    provider: "anthropic",
    status: "complete",
    finishReason: "tool_calls",
    rawFinishReason: "tool_use",
    text: "",
    reasoning: "",
    toolCalls: [],
    serverToolCalls: [],
    blocks: [],
    usage: null,
    messageId: null,
    model: null,
    error: null,
    diagnostics: [],
    ...overrides,
  });
  const call = { index: 0, id: "toolu_1", name: "t", rawArguments: "{}", repairs: [], kind: "client" as const };

  it("a half-finished call", () => {
    const half = turn({ toolCalls: [{ ...call, arguments: null, source: null, complete: true, error: null }] });
    expect(checkCallsSettled(half).map((v) => v.signature)).toContain("calls_settled:neither");
    const executable = turn({ toolCalls: [{ ...call, arguments: {}, source: "delta", complete: false, error: null }] });
    expect(checkCallsSettled(executable).map((v) => v.signature)).toContain("calls_settled:incomplete_with_arguments");
  });

  it("a replaced prototype and an unserializable turn", () => {
    const args = Object.create({ polluted: true }) as Record<string, unknown>;
    expect(checkPlainData(turn({ toolCalls: [{ ...call, arguments: args, source: "delta", complete: true, error: null }] })).map((v) => v.property)).toEqual(["plain_data"]);
    const deep = JSON.parse("[".repeat(20_000) + "]".repeat(20_000)) as unknown;
    expect(checkSerializable(turn({ diagnostics: [{ code: "internal_error", message: "x", data: deep }] })).map((v) => v.property)).toEqual(["serializable"]);
  });

  it("events out of order", () => {
    const finished = turn({});
    const violations = checkEventOrder([{ type: "tool_call_delta", index: 0, id: "x", delta: "{", kind: "client" }, { type: "finish", turn: finished }, { type: "finish", turn: finished }], finished);
    expect(violations.map((v) => v.signature)).toEqual(expect.arrayContaining(["event_order:delta_outside", "event_order:after_finish", "event_order:finish_count"]));
  });

  it("a generated stream that decodes to something else", () => {
    const spec: TurnSpec = { text: ["hi"], calls: [{ id: "a1", name: "t", arguments: { x: 1 } }], fragmentSizes: [3], streamedArgs: false, callPerChunk: false };
    const events = renderSpec("anthropic", spec);
    expect(checkGenerated("anthropic", decodeEventsSafely("anthropic", events), { ...spec, calls: [{ id: "a1", name: "t", arguments: { x: 2 } }] }).map((v) => v.signature)).toEqual([
      "generated_roundtrip:arguments",
    ]);
  });
});

describe("regression files", () => {
  it("round-trip, and are named by their content", () => {
    fc.assert(
      fc.property(generatedStream("openai-chat", { maxCalls: 2 }), mutationPlan(), fc.boolean(), ({ events, spec }, plan, withSpec) => {
        const fuzzCase: FuzzCase = { provider: "openai-chat", source: { origin: "generated", events, ...(withSpec ? { spec } : {}) }, plan };
        const regression: Regression = { ...materialize(fuzzCase), property: "no_throw", violation: "x\ny", seed: 7, path: "1:2", status: "open" };
        const text = formatRegression(regression);
        const back = parseRegression(text);
        expect(formatRegression(back)).toBe(text);
        expect(regressionFileName(back)).toBe(regressionFileName(regression));
        expect(regressionFileName(back)).toMatch(/^openai-chat-[0-9a-z]{11}\.ndjson$/);
        expect(firstDifference(back.mutated, regression.mutated)).toBeNull();
      }),
      { numRuns: 30 },
    );
  });
});

describe("every recorded stream passes every invariant unmutated", () => {
  // The corpus is the baseline: a failure here is a decoder bug, not a fuzz finding.
  const corpus = corpusSources();
  it.each(providers)("%s", (provider) => {
    for (const source of corpus[provider] ?? []) {
      const fuzzCase: FuzzCase = { provider, source, plan: { events: [], bytes: NO_BYTES, previews: true, limits: "default" } };
      expect(checkCase(fuzzCase).map((v) => `[${v.property}] ${v.message}`), source.origin).toEqual([]);
    }
  });

  it("anthropic, also as Claude on Bedrock sends it (eventstream chunk frames), re-encoded by its own re-encoder", () => {
    const counts: Record<string, number> = {};
    const sources = corpus.anthropic ?? [];
    for (const source of sources) {
      const fuzzCase: FuzzCase = { provider: "anthropic", source, plan: { events: [], bytes: { ...NO_BYTES, framing: 1 }, previews: true, limits: "default" } };
      expect(checkCase(fuzzCase, new Set(), counts).map((v) => `[${v.property}] ${v.message}`), source.origin).toEqual([]);
    }
    expect(framingsFor("anthropic")).toEqual(["sse", "aws-eventstream"]);
    // Every stream ran the round trip through createBedrockInvokeReencoder.
    expect(counts.reencode_roundtrip).toBe(sources.length);
  });
});

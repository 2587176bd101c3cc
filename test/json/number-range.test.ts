import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { collectTurn, createDecoder, type ProviderEvent } from "../../src/index.js";
import { finalizeArguments, type ArgumentSources, type FinalizeContext } from "../../src/json/finalize.js";
import { findUnrepresentableNumber } from "../../src/json/number-range.js";

const complete: FinalizeContext = { toolName: "lookup", complete: true, emptyMeansNoArguments: true, maxDepth: 256 };

function decide(sources: Partial<ArgumentSources>) {
  return finalizeArguments({ deltaText: "", ...sources }, complete);
}

/** SDK chunks, as an SDK stream yields them. */
async function* events(list: readonly object[]): AsyncGenerator<ProviderEvent> {
  for (const event of list) yield event as ProviderEvent;
}

function chatCall(args: string): ProviderEvent[] {
  return [
    { data: { id: "c", choices: [{ index: 0, delta: { tool_calls: [{ index: 0, id: "call_1", type: "function", function: { name: "lookup", arguments: args } }] } }] } },
    { data: { id: "c", choices: [{ index: 0, delta: {}, finish_reason: "tool_calls" }] } },
  ];
}

describe("numbers a double cannot hold as written", () => {
  it("refuses a number beyond the double's range, which JSON.stringify would write as null", () => {
    const result = decide({ deltaText: '{"x": 1e999}' });
    expect(result.arguments).toBeNull();
    expect(result.source).toBeNull();
    expect(result.rawArguments).toBe('{"x": 1e999}');
    expect(result.error?.code).toBe("number_out_of_range");
    expect(result.error?.message).toContain("1e999 at $.x");
    expect(result.error?.message).toContain("Infinity");
  });

  it("refuses an integer literal beyond ±2^53 that the double rounds, and says what it would become", () => {
    const result = decide({ deltaText: '{"order": {"ids": [1, -12345678901234567890]}}' });
    expect(result.error?.code).toBe("number_out_of_range");
    expect(result.error?.message).toContain("-12345678901234567890 at $.order.ids[1]");
    expect(result.error?.message).toContain("would be read as -12345678901234567000");
  });

  it("accepts integers a double holds exactly, beyond 2^53 too, and decimals read to the nearest double", () => {
    const text = '{"a": 9007199254740991, "b": -9007199254740992, "c": 10000000000000000, "pi": 3.14159265358979323846, "max": 1.7976931348623157e308, "tiny": 1e-400, "e": 1E21}';
    const result = decide({ deltaText: text });
    expect(result.error).toBeNull();
    expect(result.arguments).toEqual(JSON.parse(text));
  });

  it("accepts an integer literal the double rounds but writes back with the same digits", () => {
    // 72009706824393210 is held as 72009706824393216, and every JSON writer gives back 72009706824393210.
    expect(decide({ deltaText: '{"a": 72009706824393210}' })).toMatchObject({ error: null, arguments: { a: 72009706824393210 } });
  });

  it("does not read digits inside strings, keys or escapes as numbers", () => {
    const text = '{"1e999": "12345678901234567890", "s": "x\\" 1e999 \\\\", "n": 5}';
    expect(decide({ deltaText: text })).toMatchObject({ error: null, arguments: JSON.parse(text) });
    expect(findUnrepresentableNumber({ n: 1e300 }, '{"n": 1e300}')).toBeUndefined();
  });

  it("checks the snapshot, the start input and repaired text the same way", () => {
    expect(decide({ final: { text: '{"x": -1E+400}' } }).error?.code).toBe("number_out_of_range");
    // An object parsed before toolwire saw it (an SDK's event) already holds Infinity: the path is still named.
    const fromObject = decide({ final: { value: { deep: [{ x: Number.POSITIVE_INFINITY }] } } });
    expect(fromObject.error?.code).toBe("number_out_of_range");
    expect(fromObject.error?.message).toContain("a number at $.deep[0].x is beyond the range of a 64-bit float (about ±1.8e308) and was read as Infinity");
    expect(decide({ start: { x: Number.NEGATIVE_INFINITY } }).error?.code).toBe("number_out_of_range");
    const repaired = decide({ deltaText: "{'id': 12345678901234567890,}" });
    expect(repaired.error?.code).toBe("number_out_of_range");
  });

  it("fails only the glued object that holds the number; its siblings stay runnable", () => {
    const result = decide({ deltaText: '{"a":1}{"a":1e999}{"a":12345678901234567890}{"a":3}' });
    expect(result.arguments).toEqual({ a: 1 });
    expect(result.split?.map((piece) => piece.error?.code ?? null)).toEqual(["number_out_of_range", "number_out_of_range", null]);
  });

  it("is decoded the same on the wire: the call is invalid, its siblings and the turn are not", async () => {
    const turn = await collectTurn(
      "openai-chat",
      events([
        { id: "c", choices: [{ index: 0, delta: { tool_calls: [{ index: 0, id: "call_1", type: "function", function: { name: "lookup", arguments: '{"id": 12345678901234567890}' } }] } }] },
        { id: "c", choices: [{ index: 0, delta: { tool_calls: [{ index: 1, id: "call_2", type: "function", function: { name: "lookup", arguments: '{"id": 42}' } }] } }] },
        { id: "c", choices: [{ index: 0, delta: {}, finish_reason: "tool_calls" }] },
      ]),
    );
    expect(turn.toolCalls.map((call) => [call.arguments, call.error?.code ?? null])).toEqual([
      [null, "number_out_of_range"],
      [{ id: 42 }, null],
    ]);
    expect(turn.toolCalls[0]?.rawArguments).toBe('{"id": 12345678901234567890}');
  });

  it("applies to calls read from text", async () => {
    const turn = await collectTurn(
      "openai-chat",
      events([
        { id: "c", choices: [{ index: 0, delta: { content: '<tool_call>{"name": "lookup", "arguments": {"x": 1e999}}</tool_call>' } }] },
        { id: "c", choices: [{ index: 0, delta: {}, finish_reason: "stop" }] },
      ]),
      { textCalls: "auto" },
    );
    expect(turn.toolCalls.map((call) => call.error?.code)).toEqual(["number_out_of_range"]);
    // No runnable call was read, so the stop reason stays the model's.
    expect(turn.finishReason).toBe("stop");
  });
});

describe("properties", () => {
  const safeLeaf = fc.oneof(
    fc.integer({ min: Number.MIN_SAFE_INTEGER, max: Number.MAX_SAFE_INTEGER }),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    fc.string(),
    fc.boolean(),
    fc.constant(null),
  );
  const safeObject = fc.dictionary(fc.string(), fc.oneof(safeLeaf, fc.array(safeLeaf, { maxLength: 4 }), fc.dictionary(fc.string(), safeLeaf, { maxKeys: 3 })), { maxKeys: 6 });

  it("never refuses arguments whose numbers are finite doubles written as JSON.stringify writes them", () => {
    fc.assert(
      fc.property(safeObject, (value) => {
        const text = JSON.stringify(value);
        const result = decide({ deltaText: text });
        expect(result.error).toBeNull();
        expect(result.arguments).toEqual(JSON.parse(text));
      }),
    );
  });

  const inexactInteger = fc
    .bigInt({ min: 2n ** 53n + 1n, max: 10n ** 30n })
    .filter((n) => BigInt(Number(n)) !== n && String(Number(n)) !== n.toString())
    .chain((n) => fc.constantFrom(n, -n));

  it("refuses every integer literal a double would round, wherever it sits, and keeps the text", () => {
    fc.assert(
      fc.property(safeObject, inexactInteger, fc.boolean(), (value, big, first) => {
        const rest = JSON.stringify(value);
        const text = first ? `{"big":${big.toString()},"rest":${rest}}` : `{"rest":${rest},"big":[${big.toString()}]}`;
        const result = decide({ deltaText: text });
        expect(result.arguments).toBeNull();
        expect(result.error?.code).toBe("number_out_of_range");
        expect(result.error?.message).toContain(big.toString());
        expect(result.rawArguments).toBe(text);
      }),
    );
  });

  it("a decoded call's arguments never hold a number JSON cannot (the serializable invariant)", () => {
    fc.assert(
      fc.property(fc.integer({ min: 309, max: 100_000 }), fc.boolean(), (exponent, negative) => {
        const decoder = createDecoder("openai-chat");
        for (const event of chatCall(`{"x": ${negative ? "-" : ""}1e${exponent}}`)) decoder.push(event);
        const [call] = decoder.finish().toolCalls;
        expect(call?.arguments).toBeNull();
        expect(call?.error?.code).toBe("number_out_of_range");
      }),
    );
  });
});

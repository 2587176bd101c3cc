import { describe, expect, it } from "vitest";
import { createByteDecoder } from "../src/adapters/bytes.js";
import { encodeSse } from "../src/framing/sse.js";
import { repairArguments, looksCutOff } from "../src/json/repair.js";
import { createDecoder } from "../src/providers/registry.js";
import { DEFAULT_LIMITS } from "../src/limits.js";
import type { DecodedTurn, DecoderOptions, ProviderEvent, ProviderName } from "../src/types.js";
import type { ByteDecoderOptions } from "../src/adapters/bytes.js";
import { supportedProviders } from "../src/providers/registry.js";
import { renderSpec, type TurnSpec } from "../src/testing/generators.js";
import { rewriteArguments } from "../src/testing/shapes.js";
import { encodeWire, framingsFor } from "../src/testing/wire.js";
import type { FramingName } from "../src/framing/framer.js";
import { a, toolStream } from "./helpers/anthropic-events.js";

function decode(events: ProviderEvent[], options: DecoderOptions = {}): DecodedTurn {
  const decoder = createDecoder("anthropic", options);
  for (const event of events) decoder.push(event);
  return decoder.finish();
}

describe("hostile-input limits: typed errors and diagnostics, never a crash", () => {
  it("documents its defaults", () => {
    expect(DEFAULT_LIMITS).toEqual({ maxArgumentChars: 16 * 1024 * 1024, maxDepth: 256, maxCallsPerTurn: 1024, maxTurnChars: 256 * 1024 * 1024, maxLineChars: 64 * 1024 * 1024 });
  });

  it("arguments over the size cap fail that call with too_large; siblings are untouched", () => {
    const turn = decode(
      [
        a.messageStart(),
        a.toolStart(0, "toolu_big", "write"),
        a.json(0, '{"content":"'),
        a.json(0, "x".repeat(100)),
        a.json(0, '"}'),
        a.stop(0),
        a.toolStart(1, "toolu_small", "read"),
        a.json(1, '{"path":"a"}'),
        a.stop(1),
        a.messageDelta("tool_use"),
        a.messageStop(),
      ],
      { limits: { maxArgumentChars: 64 } },
    );
    expect(turn.toolCalls[0]).toMatchObject({ id: "toolu_big", arguments: null, complete: true, error: { code: "too_large" } });
    expect(turn.toolCalls[0]?.rawArguments.length).toBeLessThanOrEqual(64);
    expect(turn.toolCalls[1]).toMatchObject({ id: "toolu_small", arguments: { path: "a" }, error: null });
    expect(turn.diagnostics.filter((d) => d.code === "arguments_too_large")).toHaveLength(1);
  });

  it("arguments nested deeper than the cap fail with too_deep (JSON.stringify would overflow the stack)", () => {
    const depth = 10_000;
    const text = '{"a":' + "[".repeat(depth) + "]".repeat(depth) + "}";
    const turn = decode(toolStream(0, "toolu_deep", "nest", [text]));
    expect(turn.toolCalls[0]).toMatchObject({ arguments: null, error: { code: "too_deep" } });
    expect(turn.toolCalls[0]?.error?.message).toContain(`${depth + 1} levels`);
    expect(() => JSON.stringify(turn)).not.toThrow();
  });

  it("previews of deep arguments do not recurse either", () => {
    const depth = 50_000;
    const decoder = createDecoder("anthropic", { previews: true });
    const events = toolStream(0, "toolu_deep", "nest", ["[".repeat(depth), "]".repeat(depth)]);
    for (const event of events) expect(() => decoder.push(event)).not.toThrow();
    expect(decoder.finish().toolCalls[0]?.error?.code).toBe("not_object");
  });

  it("calls beyond the per-turn cap are dropped and counted", () => {
    const events: ProviderEvent[] = [a.messageStart()];
    for (let i = 0; i < 5; i++) events.push(a.toolStart(i, `toolu_${i}`, "t"), a.json(i, `{"i":${i}}`), a.stop(i));
    events.push(a.messageDelta("tool_use"), a.messageStop());
    const turn = decode(events, { limits: { maxCallsPerTurn: 3 } });
    expect(turn.toolCalls.map((c) => c.id)).toEqual(["toolu_0", "toolu_1", "toolu_2"]);
    expect(turn.diagnostics.find((d) => d.code === "too_many_calls")?.data).toEqual({ dropped: 2 });
  });

  it("a turn over its character budget stops keeping content and ends incomplete", () => {
    const turn = decode(
      [a.messageStart(), a.textStart(0), a.text(0, "y".repeat(50)), a.text(0, "z".repeat(100)), a.stop(0), a.toolStart(1, "toolu_1", "t"), a.json(1, "{}"), a.stop(1), a.messageDelta("tool_use"), a.messageStop()],
      { limits: { maxTurnChars: 100 } },
    );
    expect(turn.status).toBe("incomplete");
    expect(turn.text).toBe("y".repeat(50));
    expect(turn.diagnostics.map((d) => d.code)).toContain("turn_too_large");
  });

  it("an SSE line longer than the cap stops framing with a diagnostic", () => {
    const body = encodeSse([a.messageStart(), a.toolStart(0, "toolu_1", "t"), a.json(0, '{"k":"' + "v".repeat(5000) + '"}')]);
    const decoder = createByteDecoder("anthropic", { limits: { maxLineChars: 1000 } });
    // The cap bounds what waits for its line end, so feed the body as a network would.
    for (let i = 0; i < body.length; i += 256) expect(() => decoder.push(body.slice(i, i + 256))).not.toThrow();
    const turn = decoder.finish();
    expect(turn.status).toBe("incomplete");
    expect(turn.diagnostics.map((d) => d.code)).toContain("sse_buffer_exceeded");
    expect(turn.toolCalls[0]).toMatchObject({ complete: false, error: { code: "truncated" } });
  });
});

describe("prototype-looking keys stay plain data", () => {
  const keys = ["__proto__", "constructor", "prototype"];

  it("in arguments, previews and provider fields", () => {
    const args = '{"__proto__":{"polluted":true},"constructor":{"prototype":{"x":1}},"prototype":2}';
    const decoder = createDecoder("anthropic", { previews: true });
    let preview: unknown;
    const events = toolStream(0, "toolu_1", "t", [args.slice(0, 10), args.slice(10)]);
    (events[1]?.data as { content_block: Record<string, unknown> }).content_block = JSON.parse('{"type":"tool_use","id":"toolu_1","name":"t","input":{},"__proto__":{"polluted":true}}');
    for (const event of events) for (const out of decoder.push(event)) if (out.type === "tool_call_delta") preview = out.preview;
    const call = decoder.finish().toolCalls[0];
    for (const value of [call?.arguments, preview]) {
      expect(Object.getPrototypeOf(value)).toBe(Object.prototype);
      expect(Object.keys(value as object).sort()).toEqual([...keys].sort());
      expect((value as { polluted?: unknown }).polluted).toBeUndefined();
    }
    expect(Object.getPrototypeOf(call?.providerFields)).toBe(Object.prototype);
    expect(Object.keys(call?.providerFields ?? {})).toContain("__proto__");
    expect(({} as { polluted?: unknown }).polluted).toBeUndefined();
  });

  it("in repaired values", () => {
    const repaired = repairArguments('{"__proto__": {"polluted": True},}');
    expect(repaired?.repairs).toEqual(["python_literals", "trailing_comma"]);
    expect(Object.getPrototypeOf(repaired?.value)).toBe(Object.prototype);
    expect(Object.keys(repaired?.value ?? {})).toEqual(["__proto__"]);
    expect(({} as { polluted?: unknown }).polluted).toBeUndefined();
  });
});

describe("no super-linear work on adversarial text", () => {
  // Each of these would take minutes with a backtracking pattern; linear code finishes at once.
  const adversarial = [
    "```" + "`".repeat(200_000),
    "{" + '"a":True,'.repeat(50_000),
    '"' + "\\".repeat(200_001),
    "," + " ".repeat(200_000) + "x",
    "<|call|>".repeat(20_000) + "{}",
  ];
  it.each(adversarial.map((text, i) => [i, text] as const))("input %i", (_i, text) => {
    expect(() => repairArguments(text)).not.toThrow();
    expect(typeof looksCutOff(text)).toBe("boolean");
  });
});

describe("limits hold through the byte decoder for every provider", () => {
  const providers = supportedProviders();
  /** Every provider in every framing its bytes may arrive in. */
  const framed = providers.flatMap((p) => framingsFor(p).map((framing) => [p, framing] as const));
  const longCall = (length: number): TurnSpec => ({ text: ["hi"], calls: [{ id: "long1", name: "write", arguments: { s: "x".repeat(length) } }], fragmentSizes: [1_000_000], streamedArgs: false, callPerChunk: true });
  const decodeBytes = (provider: ProviderName, bytes: Uint8Array, chunk: number, options: ByteDecoderOptions): DecodedTurn => {
    const decoder = createByteDecoder(provider, options);
    for (let at = 0; at < bytes.length; at += chunk) decoder.push(bytes.subarray(at, at + chunk));
    return decoder.finish();
  };

  // Event-stream frames (Bedrock, and Claude on Bedrock's chunk frames) are length-prefixed and
  // capped at 16 MiB by the event-stream spec instead.
  it.each(framed.filter((entry): entry is readonly [ProviderName, Exclude<FramingName, "aws-eventstream">] => entry[1] !== "aws-eventstream"))(
    "%s (%s): a line past maxLineChars stops framing, the same however the bytes are chunked",
    (provider, framing) => {
      const bytes = encodeWire(provider, renderSpec(provider, longCall(5000)), { framing });
      const options = { framing, limits: { maxLineChars: 1000 } };
      const whole = decodeBytes(provider, bytes, bytes.length, options);
      expect(whole.status).not.toBe("complete");
      expect(whole.diagnostics.map((d) => d.code)).toContain({ sse: "sse_buffer_exceeded", ndjson: "ndjson_line_too_long", "json-array": "json_array_element_too_long" }[framing]);
      expect(whole.toolCalls.every((call) => call.arguments === null)).toBe(true);
      for (const chunk of [1, 7, 999, 1001]) expect(decodeBytes(provider, bytes, chunk, options), `chunks of ${chunk}`).toEqual(whole);
    },
  );

  it.each(framed)("%s (%s): the argument size cap holds for every argument source, whole objects included", (provider, framing) => {
    const bytes = encodeWire(provider, renderSpec(provider, longCall(5000)), { framing });
    const turn = decodeBytes(provider, bytes, 4096, { framing, limits: { maxArgumentChars: 1000 } });
    expect(turn.toolCalls).toHaveLength(1);
    expect(turn.toolCalls[0]).toMatchObject({ arguments: null, error: { code: "too_large" } });
    expect(turn.toolCalls[0]?.rawArguments.length).toBeLessThanOrEqual(1000);
  });

  it.each(providers)("%s: calls beyond the per-turn cap are dropped with a diagnostic", (provider) => {
    const calls = [0, 1, 2, 3].map((i) => ({ id: `c${i}`, name: "t", arguments: { i } }));
    const bytes = encodeWire(provider, renderSpec(provider, { text: [], calls, fragmentSizes: [4], streamedArgs: false, callPerChunk: true }));
    const turn = decodeBytes(provider, bytes, 100, { limits: { maxCallsPerTurn: 2 } });
    expect(turn.toolCalls.map((call) => call.arguments)).toEqual([{ i: 0 }, { i: 1 }]);
    expect(turn.diagnostics.find((d) => d.code === "too_many_calls")?.data).toEqual({ dropped: 2 });
  });
});

describe("nesting no recursion can follow", () => {
  const deep = (n: number): string => '{"a":' + "[".repeat(n) + "]".repeat(n) + "}";

  it("a start input nested past the cap fails the call; nothing is stringified", () => {
    // Deep enough to pass the cap, shallow enough to reach the decoder (see the event guard below).
    const events = toolStream(0, "toolu_1", "t", [], JSON.parse(deep(900)));
    const turn = decode(events, { previews: true });
    expect(turn.toolCalls[0]).toMatchObject({ arguments: null, complete: true, error: { code: "too_deep" } });
    expect(turn.diagnostics.map((d) => d.code)).toContain("start_input_too_deep");
    expect(() => JSON.stringify(turn)).not.toThrow();
  });

  it("a final snapshot nested past the cap fails the call instead of throwing out of finish", () => {
    const spec: TurnSpec = { text: [], calls: [{ id: "r1", name: "t", arguments: { a: 1 } }], fragmentSizes: [100], streamedArgs: false, callPerChunk: true };
    const events = renderSpec("openai-responses", spec).map((event) => rewriteArguments("openai-responses", event, () => deep(50_000)) ?? event);
    const decoder = createDecoder("openai-responses");
    for (const event of events) decoder.push(event);
    let turn: DecodedTurn | undefined;
    expect(() => (turn = decoder.finish())).not.toThrow();
    expect(turn?.toolCalls[0]).toMatchObject({ arguments: null, error: { code: "too_deep" } });
    expect(() => JSON.stringify(turn)).not.toThrow();
  });

  it("an event nested past any call's reach is ignored before a decoder sees it, with a diagnostic", () => {
    const turn = decode(toolStream(0, "toolu_1", "t", [], JSON.parse(deep(50_000))));
    expect(turn.toolCalls).toEqual([]);
    expect(turn.diagnostics.map((d) => d.code)).toContain("event_too_deep");
    expect(() => JSON.stringify(turn)).not.toThrow();
  });

  it("diagnostic data, opaque blocks and raw usage are cut at a depth JSON.stringify can write", () => {
    const value = JSON.parse(deep(900)) as unknown;
    const turn = decode([
      a.messageStart(),
      { event: "future_event", data: { type: "future_event", value } },
      { event: "content_block_start", data: { type: "content_block_start", index: 0, content_block: { type: "web_search_tool_result", content: value } } },
      a.stop(0),
      { event: "message_delta", data: { type: "message_delta", delta: { stop_reason: "end_turn" }, usage: { output_tokens: 1, nested: value } } },
      a.messageStop(),
    ]);
    expect(() => JSON.stringify(turn)).not.toThrow();
    expect(turn.status).toBe("complete");
    expect(JSON.stringify(turn)).toContain("nested deeper than");
  });

  it("an exception while finalizing a call costs that call, not the stream", () => {
    // SDK objects reach push() as they are: a toJSON that throws is something JSON never holds.
    const input = { a: 1, toJSON: () => { throw new Error("boom"); } };
    const decoder = createDecoder("anthropic");
    for (const event of [a.messageStart(), a.toolStart(0, "toolu_1", "t", input), a.stop(0), a.toolStart(1, "toolu_2", "u"), a.json(1, '{"b":2}'), a.stop(1), a.messageDelta("tool_use"), a.messageStop()]) decoder.push(event);
    let turn: DecodedTurn | undefined;
    expect(() => (turn = decoder.finish())).not.toThrow();
    expect(turn?.toolCalls[0]).toMatchObject({ arguments: null, complete: true, error: { code: "invalid_json" } });
    expect(turn?.toolCalls[1]).toMatchObject({ arguments: { b: 2 }, error: null });
    expect(turn?.diagnostics.map((d) => d.code)).toContain("internal_error");
  });
});

describe("garbage is counted, not kept line by line", () => {
  it("a body of non-JSON lines keeps a bounded number of diagnostics", () => {
    for (const provider of ["anthropic", "ollama"] as const) {
      const decoder = createByteDecoder(provider);
      const line = provider === "ollama" ? "garbage\n" : "data: garbage\n\n";
      for (let i = 0; i < 100; i++) decoder.push(line.repeat(500));
      const turn = decoder.finish();
      expect(turn.diagnostics.length, provider).toBeLessThan(300);
      const suppressed = turn.diagnostics.find((d) => d.code === "diagnostics_suppressed")?.data as { counts: Record<string, number> };
      expect(Object.values(suppressed.counts).reduce((x, y) => x + y, 0)).toBeGreaterThan(49_000);
    }
  });
});

describe("framing stays linear on adversarial line structure", () => {
  const inputs: Array<[string, string]> = [
    ["a million CRs", "\r".repeat(1_000_000)],
    ["CR LF pairs", "\r\n".repeat(500_000)],
    ["one long line", "data: " + "x".repeat(2_000_000)],
    ["alternating short lines", "a\rb\n".repeat(50_000)],
  ];
  it.each(inputs)("%s", (_name, text) => {
    const started = Date.now();
    for (const provider of ["anthropic", "ollama"] as const) {
      const decoder = createByteDecoder(provider, { limits: { maxLineChars: 1_000_000 } });
      for (let at = 0; at < text.length; at += 65_536) expect(() => decoder.push(text.slice(at, at + 65_536))).not.toThrow();
      expect(() => decoder.finish()).not.toThrow();
    }
    // Linear work here takes a second or two; a quadratic pass over these inputs takes minutes.
    expect(Date.now() - started).toBeLessThan(20_000);
  });
});

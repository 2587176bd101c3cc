import { describe, expect, it } from "vitest";
import { createByteDecoder } from "../src/adapters/bytes.js";
import { encodeSse } from "../src/framing/sse.js";
import { repairArguments, looksCutOff } from "../src/json/repair.js";
import { createDecoder } from "../src/providers/registry.js";
import { DEFAULT_LIMITS } from "../src/limits.js";
import type { DecodedTurn, DecoderOptions, ProviderEvent } from "../src/types.js";
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

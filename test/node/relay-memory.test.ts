import { describe, expect, it } from "vitest";
import { createReencoder } from "../../src/reencode/index.js";
import { createDecoder } from "../../src/providers/registry.js";
import { streamsOf } from "../integration/support.js";
import { ndjsonBody, reencodeWith, sseBody } from "../reencode/support.js";

/**
 * The proxy's re-encoders decode with `retainText: false`: the turn's text and reasoning are not
 * kept (memory per stream stays with the calls not yet decided, not the stream's length), and
 * nothing else changes: the same bytes go out, the same calls are decided, the same repairs
 * reported, on every recorded SSE and NDJSON stream of testdata.
 */

const providers = ["anthropic", "openai-chat", "openai-responses", "ollama"] as const;
const cases = providers.flatMap((provider) => streamsOf(provider).map((stream) => [`${provider} ${stream.key}`, provider, stream] as const));

describe("retainText: false in the re-encoder", () => {
  it("covers streams of every SSE/NDJSON protocol", () => {
    for (const provider of providers) expect(cases.some(([, p]) => p === provider)).toBe(true);
  });

  it.each(cases)("%s: same bytes, calls and repairs; no text kept", (_name, provider, stream) => {
    const body = new TextEncoder().encode(provider === "ollama" ? ndjsonBody(stream.events) : sseBody(provider, stream.events));
    for (const sizes of [[body.length || 1], [7, 64, 1]]) {
      const kept = reencodeWith(createReencoder(provider), body, sizes);
      const dropped = reencodeWith(createReencoder(provider, { retainText: false }), body, sizes);
      expect(Buffer.from(dropped.output).equals(Buffer.from(kept.output))).toBe(true);
      expect(dropped.reencoder.repairs).toEqual(kept.reencoder.repairs);
      expect(dropped.reencoder.turn?.toolCalls).toEqual(kept.reencoder.turn?.toolCalls);
      expect(dropped.reencoder.turn?.text ?? "").toBe("");
    }
  });

  it("the decoder still emits every text and reasoning delta, and text no longer counts toward maxTurnChars", () => {
    const limits = { maxTurnChars: 100 };
    const decoder = createDecoder("openai-chat", { retainText: false, limits });
    const events = [];
    for (let i = 0; i < 50; i++) events.push(...decoder.push({ data: { id: "c", choices: [{ index: 0, delta: { content: "0123456789" } }] } }));
    events.push(...decoder.push({ data: { id: "c", choices: [{ index: 0, delta: {}, finish_reason: "stop" }] } }));
    const turn = decoder.finish();
    expect(events.filter((event) => event.type === "text_delta")).toHaveLength(50);
    expect(turn.diagnostics.map((diagnostic) => diagnostic.code)).not.toContain("turn_too_large");
    expect(turn.text).toBe("");
  });
});

import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { isToolwireError } from "../../src/errors.js";
import { parseRecords } from "../../src/framing/records.js";
import { createBedrockInvokeReencoder, createGeminiReencoder, createReencoder } from "../../src/reencode/index.js";
import type { Reencoder } from "../../src/reencode/types.js";
import { encodeInvokeChunkBytes, encodeWire } from "../../src/testing/wire.js";
import type { ProviderName } from "../../src/types.js";
import { reencodeWith } from "./support.js";

/** `createReencoder(provider, options)` is the one public way to get a re-encoder: its options reach the per-provider ones. */

function events(file: string) {
  const [stream] = parseRecords(readFileSync(new URL(`../../testdata/${file}`, import.meta.url), "utf8"));
  if (!stream) throw new Error(`${file}: no stream`);
  return stream.events;
}

function sameOutput(a: Reencoder, b: Reencoder, body: Uint8Array): void {
  const left = reencodeWith(a, body, [7, 300]);
  const right = reencodeWith(b, body, [7, 300]);
  expect(left.output).toEqual(right.output);
  expect(left.reencoder.turn).toEqual(right.reencoder.turn);
  expect(left.reencoder.repairs).toEqual(right.reencoder.repairs);
}

function thrownBy(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  throw new Error("expected a throw");
}

describe("createReencoder", () => {
  it('anthropic with framing "aws-eventstream" re-encodes Claude on Bedrock (InvokeModelWithResponseStream)', () => {
    const body = encodeInvokeChunkBytes(events("anthropic/handwritten__relay-invalid-call-beside-valid.ndjson"));
    sameOutput(createReencoder("anthropic", { framing: "aws-eventstream" }), createBedrockInvokeReencoder(), body);
    const turn = reencodeWith(createReencoder("anthropic", { framing: "aws-eventstream" }), body).reencoder.turn;
    expect(turn?.provider).toBe("anthropic");
    expect(turn?.toolCalls.length).toBeGreaterThan(0);
  });

  it("bedrock takes framing aws-eventstream (its own)", () => {
    expect(createReencoder("bedrock", { framing: "aws-eventstream" }).provider).toBe("bedrock");
  });

  it.each([true, false])("gemini passes addMissingIds: %s", (addMissingIds) => {
    const body = encodeWire("gemini", events("gemini/handwritten__parallel-calls-without-ids.ndjson"));
    sameOutput(createReencoder("gemini", { addMissingIds }), createGeminiReencoder({ addMissingIds }), body);
  });

  it("passes the decoder options on", () => {
    const body = encodeWire("gemini", events("gemini/handwritten__parallel-calls-without-ids.ndjson"));
    const turn = reencodeWith(createReencoder("gemini", { sequence: "named" }), body).reencoder.turn;
    expect(turn?.sequence).toBe("named");
  });

  it.each(["openai-chat", "openai-responses", "gemini", "ollama"] as const)("%s with framing aws-eventstream: unsupported_framing", (provider) => {
    const error = thrownBy(() => createReencoder(provider, { framing: "aws-eventstream" }));
    expect(isToolwireError(error)).toBe(true);
    expect((error as { code: string }).code).toBe("unsupported_framing");
    expect((error as Error).message).toContain(provider);
  });

  it("an unknown framing: unsupported_framing", () => {
    const error = thrownBy(() => createReencoder("anthropic", { framing: "ndjson" as unknown as "aws-eventstream" }));
    expect((error as { code: string }).code).toBe("unsupported_framing");
  });

  it("an unknown provider: unsupported_provider", () => {
    const error = thrownBy(() => createReencoder("cohere" as ProviderName));
    expect(isToolwireError(error)).toBe(true);
    expect((error as { code: string }).code).toBe("unsupported_provider");
  });
});

import { expect } from "vitest";
import { createByteDecoder } from "../../src/adapters/bytes.js";
import { stringifyJson } from "../../src/testing/values.js";
import type { DecodedTurn, ProviderEvent } from "../../src/types.js";
import { reencode } from "./support.js";

/** Gemini re-encoding checks shared by the example tests and the property test. */

const encoder = new TextEncoder();
const decoder = new TextDecoder();
export type Form = "sse" | "json";

/** The body as Gemini sends it (stringifyJson: fuzz regressions nest deeper than JSON.stringify can follow). */
export function bodyOf(form: Form, events: readonly ProviderEvent[]): Uint8Array {
  const payloads = events.map((event) => (typeof event.data === "string" ? event.data : stringifyJson(event.data)));
  return encoder.encode(form === "sse" ? payloads.map((payload) => `data: ${payload}\n\n`).join("") : `[${payloads.join(",\r\n")}]`);
}

export function decode(form: Form, bytes: Uint8Array): DecodedTurn {
  const byteDecoder = createByteDecoder("gemini", form === "json" ? { framing: "json-array" } : {});
  byteDecoder.push(bytes);
  return byteDecoder.finish();
}

function signatures(turn: DecodedTurn): unknown[] {
  return turn.blocks.flatMap((block) => (block.type === "thinking" && block.signature !== null ? [block.signature] : block.type === "opaque" && block.blockType === "thought_signature" ? [block.value] : []));
}

function facts(turn: DecodedTurn, runnableOnly: boolean) {
  return turn.toolCalls
    .filter((call) => !runnableOnly || call.arguments !== null)
    .map((call) => ({ id: call.id, name: call.name, arguments: call.arguments, thoughtSignature: call.providerFields?.thoughtSignature }));
}

/** Re-encodes `body` and checks the contract; returns the output and the repairs. */
export function check(form: Form, body: Uint8Array, sizes: number[] = [body.length || 1]) {
  const original = decode(form, body);
  const { output, reencoder } = reencode("gemini", body, sizes);
  const again = decode(form, output);
  expect(facts(again, false)).toEqual(facts(original, true));
  for (const call of again.toolCalls) expect(call, JSON.stringify(call)).toMatchObject({ complete: true, repairs: [], error: null });
  expect(again.text).toBe(original.text);
  expect(again.reasoning).toBe(original.reasoning);
  // Thought signatures all arrive, in order. (Thought text around a withheld call joins into one
  // thinking block once the call's part is gone: the text is the same, checked above.)
  expect(signatures(again)).toEqual(signatures(original));
  expect(again.usage).toEqual(original.usage);
  for (const call of original.toolCalls) {
    if (call.arguments === null) expect(reencoder.repairs).toContainEqual(expect.objectContaining({ action: "withheld", callIndex: call.index }));
  }
  if (reencoder.repairs.length === 0) expect(decoder.decode(output)).toBe(decoder.decode(body));
  expect(reencoder.turn?.toolCalls).toEqual(original.toolCalls);
  return { output, text: decoder.decode(output), repairs: reencoder.repairs, original, again };
}


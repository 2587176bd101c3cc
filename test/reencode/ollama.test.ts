import { describe, expect, it } from "vitest";
import type { ProviderEvent } from "../../src/types.js";
import { testdataFiles } from "../helpers/testdata.js";
import { decodeBytes, ndjsonBody, reencode } from "./support.js";

/** Ollama's NDJSON re-encoded: recorded streams, and lines whose calls need ids or carry string arguments. */

const encoder = new TextEncoder();

function roundTrip(events: ProviderEvent[]): { body: string; output: string; repairs: number } {
  const body = ndjsonBody(events);
  const original = decodeBytes("ollama", encoder.encode(body));
  const { output, reencoder } = reencode("ollama", encoder.encode(body), [5, 40]);
  const again = decodeBytes("ollama", output);
  expect(again.toolCalls.map((c) => ({ id: c.id, name: c.name, arguments: c.arguments }))).toEqual(original.toolCalls.filter((c) => c.arguments !== null).map((c) => ({ id: c.id, name: c.name, arguments: c.arguments })));
  for (const call of again.toolCalls) expect(call).toMatchObject({ complete: true, error: null });
  expect(again.toolCalls.every((call) => call.repairs.length === 0 && call.providerId === undefined)).toBe(true);
  expect(again.text).toBe(original.text);
  return { body, output: new TextDecoder().decode(output), repairs: reencoder.repairs.length };
}

describe("Ollama re-encoding", () => {
  for (const file of testdataFiles("ollama")) {
    for (const stream of file.streams) {
      it(`${file.name}: toolwire's calls, well-formed`, () => {
        const { body, output, repairs } = roundTrip(stream.events);
        if (repairs === 0) expect(output).toBe(body);
      });
    }
  }

  const line = (message: Record<string, unknown>, done = false): ProviderEvent => ({ data: { model: "qwen3", created_at: "2025-01-01T00:00:00Z", message: { role: "assistant", content: "", ...message }, done, ...(done ? { done_reason: "stop" } : {}) } });

  it("a call whose string arguments do not parse strictly waits for the stop reason, with its line and the lines after it (found by fuzzing)", () => {
    const events = [
      line({ tool_calls: [{ id: "call_r", function: { name: "read", arguments: '{"path": "a.txt",}' } }, { id: "call_l", function: { name: "list", arguments: { dir: "." } } }] }),
      line({ content: "Done." }),
      line({}, true),
    ];
    const original = decodeBytes("ollama", encoder.encode(ndjsonBody(events)));
    expect(original.toolCalls.map((c) => [c.id, c.arguments])).toEqual([
      ["call_r", { path: "a.txt" }],
      ["call_l", { dir: "." }],
    ]);
    const { output } = roundTrip(events);
    // Nothing went out before the verdict, and the lines kept their order.
    expect(output.split("\n").filter(Boolean).map((text) => (JSON.parse(text) as { message: { content: string } }).message.content)).toEqual(["", "Done.", ""]);
    for (const sizes of [[5], [1 << 20]]) {
      const body = encoder.encode(ndjsonBody(events));
      const { output: bytes } = reencode("ollama", body, sizes);
      expect(decodeBytes("ollama", bytes).toolCalls.map((c) => c.id)).toEqual(["call_r", "call_l"]);
    }
  });

  it("calls without ids get toolwire's ids; colliding ids are made unique", () => {
    const { output } = roundTrip([
      line({ tool_calls: [{ function: { name: "add", arguments: { a: 1 } } }] }),
      line({ tool_calls: [{ id: "call_x", function: { name: "add", arguments: { a: 2 } } }, { id: "call_x", function: { name: "add", arguments: { a: 3 } } }] }),
      line({}, true),
    ]);
    const ids = output.split("\n").flatMap((text) => (text ? ((JSON.parse(text) as { message: { tool_calls?: Array<{ id: string }> } }).message.tool_calls ?? []).map((call) => call.id) : []));
    expect(ids).toHaveLength(3);
    expect(new Set(ids).size).toBe(3);
  });

  it("arguments sent as a JSON string become the object", () => {
    const { output } = roundTrip([line({ tool_calls: [{ id: "call_1", function: { name: "add", arguments: '{"a":1}' } }] }), line({}, true)]);
    expect(output).toContain('"arguments":{"a":1}');
  });
});

import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { SseEventSplitter } from "../../src/reencode/sse-events.js";
import type { ProviderName } from "../../src/types.js";
import { testdataFiles } from "../helpers/testdata.js";
import { decodeBytes, reencode, sseBody } from "./support.js";

const encoder = new TextEncoder();

const cases = (["anthropic", "openai-chat", "openai-responses"] as const).flatMap((provider: ProviderName) =>
  testdataFiles(provider).flatMap((file) => file.streams.map((stream) => ({ key: `${provider}/${file.name}#${stream.sequence ?? ""}`, provider, events: stream.events }))),
);

describe("SSE event splitter", () => {
  it("gives back every byte, in events, whatever the chunking and line endings", () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ name: fc.option(fc.constantFrom("a", "message_start"), { nil: undefined }), data: fc.string({ maxLength: 20 }).map((s) => s.replace(/[\r\n]/g, "")) }), { maxLength: 6 }),
        fc.constantFrom("\n", "\r\n", "\r"),
        fc.array(fc.integer({ min: 1, max: 7 }), { minLength: 1, maxLength: 5 }),
        (events, eol, sizes) => {
          const text = events.map((event) => `${event.name !== undefined ? `event: ${event.name}${eol}` : ""}data: ${event.data}${eol}${eol}`).join("");
          const bytes = encoder.encode(text);
          const splitter = new SseEventSplitter();
          const out = [];
          let offset = 0;
          let turn = 0;
          while (offset < bytes.length) {
            const size = sizes[turn++ % sizes.length] as number;
            out.push(...splitter.push(bytes.subarray(offset, offset + size)));
            offset += size;
          }
          out.push(...splitter.finish());
          expect(out.map((event) => event.raw).join("")).toBe(text);
          const dispatched = out.filter((event) => event.event !== null);
          expect(dispatched.map((event) => event.event?.event)).toEqual(events.map((event) => event.name));
          expect(dispatched.map((event) => event.event?.data)).toEqual(events.map((event) => event.data));
        },
      ),
    );
  });
});

describe.each(cases.map((c) => [c.key, c] as const))("re-encoding %s", (_key, { provider, events }) => {
  const body = encoder.encode(sseBody(provider, events));
  const original = decodeBytes(provider, body);
  const { output, reencoder } = reencode(provider, body);
  const again = decodeBytes(provider, output);

  it("delivers exactly the runnable calls toolwire decodes, each one well-formed", () => {
    const runnable = original.toolCalls.filter((call) => call.arguments !== null);
    // A Chat turn cut by `length` keeps its finish_reason: the complete calls before the cut one go
    // out as sent, and a decoder reading the re-encoded stream alone can no longer tell that the
    // last of them was followed by another; accumulators (the SDKs) take the call as sent.
    const cutBehind = (call: (typeof again.toolCalls)[number]): boolean => again.finishReason === "length" && call.error?.cause === "max_tokens";
    const seen = again.toolCalls.map((call) => ({ id: call.id, name: call.name, arguments: cutBehind(call) ? JSON.parse(call.rawArguments) : call.arguments }));
    expect(seen).toEqual(runnable.map((call) => ({ id: call.id, name: call.name, arguments: call.arguments })));
    for (const call of again.toolCalls) if (!cutBehind(call)) expect(call, JSON.stringify(call)).toMatchObject({ complete: true, repairs: [] });
  });

  it("keeps text and thinking", () => {
    expect(again.text).toBe(original.text);
    expect(again.reasoning).toBe(original.reasoning);
    expect(again.blocks.filter((block) => block.type === "thinking")).toEqual(original.blocks.filter((block) => block.type === "thinking"));
  });

  it("forwards the stream byte for byte when nothing needed a fix", () => {
    if (reencoder.repairs.length > 0) return;
    // Pings are forwarded at once, also while a call is held: they keep the connection alive.
    const withoutPings = (bytes: Uint8Array): string => new TextDecoder().decode(bytes).split(/\n\n/).filter((event) => !event.includes("ping")).join("\n\n");
    expect(withoutPings(output)).toBe(withoutPings(body));
    expect(output.length).toBe(body.length);
  });

  it("gives the same bytes however the body is chunked", () => {
    expect(reencode(provider, body, [1, 3, 17]).output).toEqual(output);
  });
});

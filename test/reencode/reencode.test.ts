import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { createReencoder } from "../../src/reencode/index.js";
import { SseEventSplitter, wireBytes } from "../../src/reencode/sse-events.js";
import { concatBytes } from "../../src/util/bytes.js";
import type { ProviderName } from "../../src/types.js";
import { testdataFiles } from "../helpers/testdata.js";
import { decodeBytes, reencode, sseBody } from "./support.js";
import { cyclicPieces } from "../helpers/pieces.js";

const encoder = new TextEncoder();

const cases = (["anthropic", "openai-chat", "openai-responses"] as const).flatMap((provider: ProviderName) =>
  testdataFiles(provider).flatMap((file) => file.streams.map((stream) => ({ key: `${provider}/${file.name}#${stream.sequence ?? ""}`, provider, events: stream.events }))),
);

/** Splits `bytes` after every `sizes[i % n]` bytes and collects the events. */
function split(bytes: Uint8Array, sizes: readonly number[]) {
  const splitter = new SseEventSplitter();
  const out = [];
  for (const piece of cyclicPieces(bytes, sizes)) out.push(...splitter.push(piece));
  out.push(...splitter.flush());
  return out;
}

describe("SSE event splitter", () => {
  it("gives back every byte, in events, whatever the chunking and line endings", () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ name: fc.option(fc.constantFrom("a", "message_start"), { nil: undefined }), data: fc.string({ maxLength: 20 }).map((s) => s.replace(/[\r\n]/g, "")) }), { maxLength: 6 }),
        fc.constantFrom("\n", "\r\n", "\r"),
        fc.array(fc.integer({ min: 1, max: 7 }), { minLength: 1, maxLength: 5 }),
        (events, eol, sizes) => {
          const text = events.map((event) => `${event.name !== undefined ? `event: ${event.name}${eol}` : ""}data: ${event.data}${eol}${eol}`).join("");
          const out = split(encoder.encode(text), sizes);
          expect(out.map((event) => event.raw).join("")).toBe(text);
          const dispatched = out.filter((event) => event.event !== null);
          expect(dispatched.map((event) => event.event?.event)).toEqual(events.map((event) => event.name));
          expect(dispatched.map((event) => event.event?.data)).toEqual(events.map((event) => event.data));
        },
      ),
    );
  });
});

describe("SSE event splitter: the bytes of each event", () => {
  const pieces = fc.oneof(
    fc.constantFrom("data: ", "event: x\n", "\n", "\n\n", "\r\n", "\r", ": ping\n\n", "{\"a\":1}", "é", "✓", "😀", "中文"),
    fc.string({ maxLength: 6 }),
  );
  const badBytes = fc.constantFrom([0x80], [0xc3], [0xe2, 0x82], [0xf0, 0x9f, 0x98], [0xff], [0xef, 0xbb, 0xbf]);

  it("forwards valid UTF-8 as the very bytes that came, wherever the chunks cut characters", () => {
    fc.assert(
      fc.property(fc.array(pieces, { maxLength: 24 }), fc.array(fc.integer({ min: 1, max: 9 }), { minLength: 1, maxLength: 5 }), (parts, sizes) => {
        const bytes = encoder.encode(parts.join(""));
        const out = split(bytes, sizes);
        const forwarded = concatBytes(out.map((event) => wireBytes(event.wire)));
        expect(forwarded).toEqual(bytes);
      }),
    );
  });

  it("gives each event the bytes its text was decoded from, bad bytes included", () => {
    fc.assert(
      fc.property(fc.array(fc.oneof(pieces.map((piece) => [...encoder.encode(piece)]), badBytes), { maxLength: 24 }), fc.array(fc.integer({ min: 1, max: 9 }), { minLength: 1, maxLength: 5 }), (parts, sizes) => {
        const bytes = Uint8Array.from(parts.flat());
        const out = split(bytes, sizes);
        const known = out.filter((event) => typeof event.wire !== "string");
        // The stream's own BOM is not text (the decoder drops it): it belongs to the first event's bytes only.
        const bom = bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf;
        const verbatim = new TextDecoder("utf-8", { ignoreBOM: true });
        for (const event of known) {
          const text = verbatim.decode(wireBytes(event.wire));
          expect(bom && event === out[0] ? text.slice(1) : text).toBe(event.raw);
        }
        // Where every event's bytes are known, they are the body itself (a body of nothing but a BOM has no event).
        if (known.length === out.length && out.length > 0) expect(concatBytes(known.map((event) => wireBytes(event.wire)))).toEqual(bytes);
      }),
    );
  });

  it("knows the bytes of every event, LF, CRLF or CR, even cut inside characters", () => {
    for (const eol of ["\n", "\r\n", "\r"]) {
      const text = `event: a${eol}data: {"t":"é✓😀 中文"}${eol}${eol}`.repeat(5);
      const bytes = encoder.encode(text);
      for (const sizes of [[1, 2, 3], [7], [bytes.length]]) {
        const out = split(bytes, sizes);
        expect(out.every((event) => typeof event.wire !== "string")).toBe(true);
        expect(concatBytes(out.map((event) => wireBytes(event.wire)))).toEqual(bytes);
      }
    }
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

describe("Anthropic: blocks after a withheld call", () => {
  it("move down by one, every held delta of the next call with them, in any chunking", async () => {
    const { a } = await import("../helpers/anthropic-events.js");
    const events = [
      a.messageStart(),
      a.toolStart(0, "toolu_bad", "broken", {}),
      a.json(0, '{"path":'),
      a.stop(0),
      a.toolStart(1, "toolu_good", "read", {}),
      a.json(1, '{"path":"é✓ '),
      a.json(1, 'src/a.ts",'),
      a.json(1, '"n":1}'),
      a.stop(1),
      a.messageDelta("tool_use"),
      a.messageStop(),
    ];
    const body = encoder.encode(sseBody("anthropic", events));
    for (const sizes of [[body.length], [1], [7, 3], [64]]) {
      const { output, reencoder } = reencode("anthropic", body, sizes);
      const again = decodeBytes("anthropic", output);
      expect(again.toolCalls.map((call) => [call.id, call.name, call.arguments, call.providerIndex])).toEqual([["toolu_good", "read", { path: "é✓ src/a.ts", n: 1 }, 0]]);
      expect(again.toolCalls[0]).toMatchObject({ complete: true, repairs: [] });
      expect(reencoder.repairs).toContainEqual(expect.objectContaining({ action: "withheld", id: "toolu_bad" }));
    }
  });

  it("decides a closed call whose arguments need a repair by the stop reason: repaired when the turn ended, withheld when it hit max_tokens", async () => {
    const { a } = await import("../helpers/anthropic-events.js");
    const turn = (stop: string) => [
      a.messageStart(),
      a.toolStart(0, "toolu_1", "read", {}),
      a.json(0, '{"path":"a.ts",'),
      a.json(0, "}"),
      a.stop(0),
      a.textStart(1),
      a.text(1, "done"),
      a.stop(1),
      a.messageDelta(stop),
      a.messageStop(),
    ];
    for (const sizes of [[100000], [5]]) {
      const ended = reencode("anthropic", encoder.encode(sseBody("anthropic", turn("tool_use"))), sizes);
      const delivered = decodeBytes("anthropic", ended.output);
      expect(delivered.toolCalls.map((call) => [call.id, call.arguments, call.repairs])).toEqual([["toolu_1", { path: "a.ts" }, []]]);
      expect(delivered.text).toBe("done");
      expect(ended.reencoder.repairs).toContainEqual(expect.objectContaining({ action: "rewritten", id: "toolu_1" }));

      const cut = reencode("anthropic", encoder.encode(sseBody("anthropic", turn("max_tokens"))), sizes);
      const withheld = decodeBytes("anthropic", cut.output);
      expect(withheld.toolCalls).toEqual([]);
      expect(withheld.text).toBe("done");
      expect(withheld.blocks.map((block) => block.type)).toEqual(["text"]);
      expect(cut.reencoder.repairs).toContainEqual(expect.objectContaining({ action: "withheld", code: "truncated", id: "toolu_1" }));
    }
  });
});

describe("Chat: an error event while calls are held", () => {
  it("withholds every call, even one the decoder saw end, and forwards the error as it came", () => {
    const chunk = (delta: Record<string, unknown>): string =>
      `data: ${JSON.stringify({ id: "c", object: "chat.completion.chunk", created: 1, model: "m", choices: [{ index: 0, delta, finish_reason: null }] })}\n\n`;
    const error = 'event: error\ndata: {"error":{"message":"upstream exploded","type":"server_error"}}\n\n';
    const body =
      chunk({ role: "assistant", content: "" }) +
      chunk({ tool_calls: [{ index: 0, id: "call_a", type: "function", function: { name: "get_weather", arguments: '{"city": "Tokyo"}' } }] }) +
      chunk({ tool_calls: [{ index: 0, id: "call_b", type: "function", function: { name: "get_weather", arguments: '{"city": ' } }] }) +
      error;
    const original = decodeBytes("openai-chat", encoder.encode(body));
    expect(original.toolCalls.map((call) => call.arguments)).toEqual([{ city: "Tokyo" }, null]);
    const { output, reencoder } = reencode("openai-chat", encoder.encode(body), [7, 31]);
    const text = new TextDecoder().decode(output);
    expect(text).toBe(chunk({ role: "assistant", content: "" }) + error);
    expect(reencoder.repairs.map((r) => [r.action, r.id])).toEqual([
      ["withheld", "call_a"],
      ["withheld", "call_b"],
    ]);
    expect(decodeBytes("openai-chat", output).toolCalls).toEqual([]);
  });
});

describe("Anthropic: content_block_start without an index", () => {
  it("is numbered as the decoder numbers it: a cut call is withheld, a whole one delivered with its index", async () => {
    const { a } = await import("../helpers/anthropic-events.js");
    const withoutIndex = (event: ReturnType<typeof a.toolStart>) => {
      const { index: _index, ...data } = event.data as Record<string, unknown>;
      return { ...event, data };
    };
    const whole = [a.messageStart(), a.textStart(0), a.text(0, "Reading."), a.stop(0), withoutIndex(a.toolStart(1, "toolu_r", "read", {})), a.json(1, '{"path":"a"}'), a.stop(1), a.messageDelta("tool_use"), a.messageStop()];
    const cut = [a.messageStart(), withoutIndex(a.toolStart(0, "toolu_c", "read", {})), a.json(0, '{"pa')];
    for (const sizes of [[1 << 20], [5]]) {
      const body = encoder.encode(sseBody("anthropic", whole));
      const { output, reencoder } = reencode("anthropic", body, sizes);
      const again = decodeBytes("anthropic", output);
      expect(again.toolCalls.map((call) => [call.id, call.arguments, call.providerIndex])).toEqual([["toolu_r", { path: "a" }, 1]]);
      expect(again.diagnostics.map((d) => d.code)).not.toContain("block_index_missing");
      expect(reencoder.repairs).toContainEqual(expect.objectContaining({ action: "rewritten", code: "block_index_missing", id: "toolu_r" }));

      const cutOutput = reencode("anthropic", encoder.encode(sseBody("anthropic", cut)), sizes);
      expect(decodeBytes("anthropic", cutOutput.output).toolCalls).toEqual([]);
      expect(cutOutput.reencoder.repairs).toContainEqual(expect.objectContaining({ action: "withheld", id: "toolu_c" }));
    }
  });
});

describe("Anthropic: a block started again at a held call's index", () => {
  it("cuts the held call, as the decoder does, whatever the new block's type (found by fuzzing: the type line was lost)", async () => {
    const { a } = await import("../helpers/anthropic-events.js");
    const start = a.toolStart(0, "toolu_6", "shell", {});
    const content = (start.data as { content_block: Record<string, unknown> }).content_block;
    const { type: _type, ...untyped } = content;
    for (const second of [{ ...start, data: { ...(start.data as object), content_block: untyped } }, a.textStart(0)]) {
      const stream = [a.messageStart(), start, second, a.json(0, '{"command":"echo hi"}'), a.stop(0), a.messageDelta("tool_use"), a.messageStop()];
      const body = encoder.encode(sseBody("anthropic", stream));
      expect(decodeBytes("anthropic", body).toolCalls.map((call) => call.error?.code)).toEqual(["truncated"]);
      for (const sizes of [[1 << 20], [9]]) {
        const { output, reencoder } = reencode("anthropic", body, sizes);
        expect(decodeBytes("anthropic", output).toolCalls.filter((call) => call.arguments !== null)).toEqual([]);
        expect(reencoder.repairs).toContainEqual(expect.objectContaining({ action: "withheld", code: "truncated" }));
      }
    }
  });
});

describe("A body that ends inside an event, after its data", () => {
  it("gets the event terminated, so that calls still held and written after it do not run into it", async () => {
    const { a } = await import("../helpers/anthropic-events.js");
    const events = [a.messageStart(), a.toolStart(0, "toolu_a", "read", {}), a.json(0, '{"path":"a"}'), a.toolStart(1, "toolu_b", "read", {}), a.json(1, '{"path":"b"}'), a.stop(0)];
    const full = sseBody("anthropic", events);
    const body = encoder.encode(full.slice(0, full.length - 2)); // the stop event's blank line is cut
    const original = decodeBytes("anthropic", body);
    expect(original.toolCalls.map((call) => [call.id, call.arguments])).toEqual([
      ["toolu_a", { path: "a" }],
      ["toolu_b", { path: "b" }],
    ]);
    for (const sizes of [[body.length], [3]]) {
      const { output, reencoder } = reencode("anthropic", body, sizes);
      expect(decodeBytes("anthropic", output).toolCalls.map((call) => [call.id, call.arguments])).toEqual([
        ["toolu_a", { path: "a" }],
        ["toolu_b", { path: "b" }],
      ]);
      expect(new TextDecoder().decode(output)).toContain('"index":0}\n\nevent: content_block_start');
      expect(reencoder.repairs).toContainEqual(expect.objectContaining({ action: "normalized", code: "event_unterminated" }));
    }
  });
});

describe("A body with CR line ends that ends inside an event, after its data (found by fuzzing)", () => {
  it("gets a second CR as the event's blank line: an LF would only make its CR a CRLF", async () => {
    const { a } = await import("../helpers/anthropic-events.js");
    const events = [a.toolStart(0, "toolu_6", "shell", {}), a.json(0, '{"command":"echo hi"}'), a.stop(0)];
    const full = sseBody("anthropic", events).replace(/\n/g, "\r");
    const body = encoder.encode(full.slice(0, full.length - 1)); // the stop event's blank line is cut
    const original = decodeBytes("anthropic", body);
    expect(original.toolCalls.map((call) => [call.id, call.arguments])).toEqual([["toolu_6", { command: "echo hi" }]]);
    for (const sizes of [[body.length], [5]]) {
      const { output, reencoder } = reencode("anthropic", body, sizes);
      expect(decodeBytes("anthropic", output).toolCalls.map((call) => [call.id, call.arguments])).toEqual([["toolu_6", { command: "echo hi" }]]);
      expect(new TextDecoder().decode(output)).toContain('"index":0}\r\r');
      expect(reencoder.repairs).toContainEqual(expect.objectContaining({ action: "normalized", code: "event_unterminated" }));
    }
  });
});

describe("Anthropic: a message_delta before the call's content_block_stop", () => {
  it("waits for the stop past other events (an unknown event, a ping, a repeated message_delta), as the decoder keeps the call open", async () => {
    const { a } = await import("../helpers/anthropic-events.js");
    const unknown = { event: "vendor_note", data: { note: "hello" } };
    const events = [a.messageStart(), a.toolStart(0, "toolu_k", "glob", {}), a.json(0, '{"pattern":"*.c"}'), a.messageDelta("tool_use"), unknown, a.messageDelta("tool_use"), a.stop(0), a.messageStop()];
    const body = encoder.encode(sseBody("anthropic", events));
    const original = decodeBytes("anthropic", body);
    expect(original.toolCalls.map((call) => [call.id, call.arguments])).toEqual([["toolu_k", { pattern: "*.c" }]]);
    for (const sizes of [[body.length], [9]]) {
      const { output, reencoder } = reencode("anthropic", body, sizes);
      expect(decodeBytes("anthropic", output).toolCalls.map((call) => [call.id, call.arguments])).toEqual([["toolu_k", { pattern: "*.c" }]]);
      expect(reencoder.repairs.filter((r) => r.action === "withheld")).toEqual([]);
    }
  });
});

describe("Responses: items after a withheld call", () => {
  // An invalid call at output_index 0, a valid call and a message after it. The SDKs index the
  // response's output by output_index, so a gap left by the withheld call breaks them ("missing
  // output at index"): later items move down into its place, their events otherwise as sent.
  const fc = (id: string, name: string, args: string, status = "completed") => ({ id, type: "function_call", status, call_id: `call_${id}`, name, arguments: args });
  const bad = '{"q": "a "b" c"';
  const msg = { id: "msg_1", type: "message", status: "completed", role: "assistant", content: [{ type: "output_text", text: "ok", annotations: [] }] };
  const events = [
    { type: "response.created", response: { id: "resp_1", object: "response", status: "in_progress", output: [] } },
    { type: "response.output_item.added", output_index: 0, item: fc("fc_bad", "search", "", "in_progress") },
    { type: "response.function_call_arguments.delta", item_id: "fc_bad", output_index: 0, delta: bad },
    { type: "response.output_item.done", output_index: 0, item: fc("fc_bad", "search", bad) },
    { type: "response.output_item.added", output_index: 1, item: fc("fc_ok", "read", "", "in_progress") },
    { type: "response.function_call_arguments.delta", item_id: "fc_ok", output_index: 1, delta: '{"path": "a.ts"}' },
    { type: "response.output_item.done", output_index: 1, item: fc("fc_ok", "read", '{"path": "a.ts"}') },
    { type: "response.output_item.added", output_index: 2, item: { ...msg, status: "in_progress", content: [] } },
    { type: "response.output_text.delta", item_id: "msg_1", output_index: 2, content_index: 0, delta: "ok" },
    { type: "response.output_item.done", output_index: 2, item: msg },
    { type: "response.completed", response: { id: "resp_1", object: "response", status: "completed", output: [fc("fc_bad", "search", bad), fc("fc_ok", "read", '{"path": "a.ts"}'), msg] } },
  ].map((data, n) => ({ event: data.type, data: { ...data, sequence_number: n } }));

  it("move down by one in any chunking; the sibling call's arguments pass as sent", () => {
    const body = encoder.encode(sseBody("openai-responses", events));
    for (const sizes of [[body.length], [1], [9, 4], [64]]) {
      const { output, reencoder } = reencode("openai-responses", body, sizes);
      const text = new TextDecoder().decode(output);
      const indexes = [...text.matchAll(/"output_index":(\d+)/g)].map((m) => Number(m[1]));
      expect(new Set(indexes)).toEqual(new Set([0, 1]));
      expect(text).toContain('"delta":"{\\"path\\": \\"a.ts\\"}"');
      const again = decodeBytes("openai-responses", output);
      expect(again.toolCalls.map((call) => [call.id, call.arguments])).toEqual([["call_fc_ok", { path: "a.ts" }]]);
      expect(again.text).toBe("ok");
      expect(reencoder.repairs).toContainEqual(expect.objectContaining({ action: "withheld", id: "call_fc_bad" }));
    }
  });
});

describe("A long held call", () => {
  it("is released byte for byte as a few blocks of its own, keeping none of the chunks it came in", () => {
    const fragments = Array.from({ length: 160 }, (_, i) => `"k${i}":"${"v".repeat(200 + (i % 23))}",`);
    const argumentsText = `{${fragments.join("")}"end":1}`;
    const chunk = (choices: unknown[]): string => `data: ${JSON.stringify({ id: "c", object: "chat.completion.chunk", created: 1, model: "m", choices })}\n\n`;
    let body = chunk([{ index: 0, delta: { role: "assistant", content: null }, finish_reason: null }]);
    body += chunk([{ index: 0, delta: { tool_calls: [{ index: 0, id: "call_1", type: "function", function: { name: "f", arguments: "" } }] }, finish_reason: null }]);
    for (let at = 0; at < argumentsText.length; at += 16) body += chunk([{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: argumentsText.slice(at, at + 16) } }] }, finish_reason: null }]);
    body += `${chunk([{ index: 0, delta: {}, finish_reason: "tool_calls" }])}data: [DONE]\n\n`;
    const bytes = encoder.encode(body);
    const reencoder = createReencoder("openai-chat", { retainText: false });
    const inputs = new Set<ArrayBufferLike>();
    const released: Uint8Array[] = [];
    for (const piece of cyclicPieces(bytes, [5000, 7001])) {
      const own = piece.slice();
      inputs.add(own.buffer);
      released.push(...reencoder.push(own));
    }
    released.push(...reencoder.flush());
    expect(concatBytes(released)).toEqual(bytes);
    // Not one more copy of the whole call: the blocks it was held in, each as it is.
    const large = released.filter((piece) => piece.length >= 64 * 1024);
    expect(large.length).toBeGreaterThan(1);
    expect(large.every((piece) => !inputs.has(piece.buffer))).toBe(true);
    expect(released.length).toBeLessThan(12);
  });
});

import { describe, expect, it } from "vitest";
import { record } from "../../src/adapters/record.js";
import { collectTurn, decodeStream } from "../../src/adapters/web.js";
import { encodeSse } from "../../src/framing/sse.js";
import { parseRecords } from "../../src/framing/records.js";
import { createDecoder } from "../../src/providers/registry.js";
import { replayEvents } from "../../src/replay.js";
import type { CodecEvent, ProviderEvent } from "../../src/types.js";
import { c, chatStream } from "../helpers/openai-events.js";
import { TextCallOptionsError } from "../../src/text-calls/options.js";

const HERMES = '<tool_call>\n{"name": "shell", "arguments": {"command": "ls -la"}}\n</tool_call>';

function textStream(text: string, size = 4, finish = "stop"): ProviderEvent[] {
  const pieces: ProviderEvent[] = [];
  for (let i = 0; i < text.length; i += size) pieces.push(c.text(text.slice(i, i + size)));
  return chatStream(pieces, finish);
}

function decode(events: ProviderEvent[], options = {}) {
  const decoder = createDecoder("openai-chat", options);
  const out: CodecEvent[] = [];
  for (const event of events) out.push(...decoder.push(event));
  const turn = decoder.finish();
  return { turn, events: out };
}

describe("text calls through a decoder", () => {
  it("are off by default", () => {
    const { turn } = decode(textStream(`Sure.\n${HERMES}`));
    expect(turn.toolCalls).toEqual([]);
    expect(turn.text).toBe(`Sure.\n${HERMES}`);
  });

  it("stream like wire calls: start, deltas with previews, end; source text, syntax, minted id", () => {
    // thinking "closed": the prompt opened no think block, so the call goes on when its markup closes.
    const { turn, events } = decode(textStream(`Sure.\n${HERMES}\nDone.`), { textCalls: { thinking: "closed" }, previews: true });
    const kinds = events.filter((e) => e.type.startsWith("tool_call")).map((e) => e.type);
    expect(kinds[0]).toBe("tool_call_start");
    expect(kinds.at(-1)).toBe("tool_call_end");
    const deltas = events.filter((e): e is Extract<CodecEvent, { type: "tool_call_delta" }> => e.type === "tool_call_delta");
    expect(deltas.length).toBeGreaterThan(3);
    expect(deltas.map((d) => d.delta).join("")).toBe('{"command": "ls -la"}');
    expect(deltas.at(-1)?.preview).toEqual({ command: "ls -la" });
    // The call ends as soon as its markup closes, before the stream does.
    const endAt = events.findIndex((e) => e.type === "tool_call_end");
    const lastText = events.map((e) => e.type).lastIndexOf("text_delta");
    expect(endAt).toBeLessThan(lastText);
    expect(turn.toolCalls).toEqual([
      { index: 0, id: "tw_text_0", name: "shell", arguments: { command: "ls -la" }, rawArguments: '{"command": "ls -la"}', source: "text", textSyntax: "hermes", complete: true, repairs: [], error: null, kind: "client" },
    ]);
    expect(turn.text).toBe("Sure.\n\nDone.");
    expect(turn.finishReason).toBe("tool_calls");
    expect(turn.rawFinishReason).toBe("stop");
    expect(turn.blocks.map((b) => b.type)).toEqual(["text", "tool_call"]);
  });

  it("minted ids never equal an id the provider sent, and indexes follow the wire calls", () => {
    const events = chatStream([c.open(0, "tw_text_1", "first", '{"a":1}'), c.text("then "), c.text(HERMES)], "tool_calls");
    const { turn } = decode(events, { textCalls: "auto" });
    expect(turn.toolCalls.map((call) => [call.index, call.id, call.source])).toEqual([
      [0, "tw_text_1", "delta"],
      [1, "tw_text_1_1", "text"],
    ]);
  });

  it("a call cut by a length stop is truncated (max_tokens), never runnable", () => {
    const { turn } = decode(textStream('<tool_call>{"name": "shell", "arguments": {"command": "rm', 4, "length"));
    expect(turn.toolCalls).toEqual([]);
    const cut = decode(textStream('<tool_call>{"name": "shell", "arguments": {"command": "rm', 4, "length"), { textCalls: "auto" }).turn;
    expect(cut.toolCalls[0]).toMatchObject({ name: "shell", arguments: null, complete: false, source: null, error: { code: "truncated", cause: "max_tokens" } });
    expect(cut.finishReason).toBe("length");
  });

  it("a stream that ends without [DONE] mid-call leaves the call truncated and the turn incomplete", () => {
    const events = [c.role(), c.text('<tool_call>{"name": "shell", "arguments": {"command": "l')];
    const { turn } = decode(events, { textCalls: "auto" });
    expect(turn.status).toBe("incomplete");
    expect(turn.toolCalls[0]).toMatchObject({ complete: false, error: { code: "truncated", cause: "stream_ended" } });
  });

  it("reads reasoning only when asked", () => {
    const events = chatStream([c.reasoning(`thinking ${HERMES}`), c.text("answer")], "stop");
    expect(decode(events, { textCalls: "auto" }).turn.toolCalls).toEqual([]);
    const { turn } = decode(events, { textCalls: { reasoning: true } });
    expect(turn.toolCalls.map((call) => call.name)).toEqual(["shell"]);
    expect(turn.reasoning).toBe("thinking ");
  });

  it("unknown tool names stay text with a diagnostic", () => {
    const { turn } = decode(textStream(HERMES), { textCalls: { toolNames: ["read_file"] } });
    expect(turn.toolCalls).toEqual([]);
    expect(turn.text).toBe(HERMES);
    expect(turn.diagnostics.map((d) => d.code)).toContain("text_call_unknown_tool");
  });

  it("bad options fail when the decoder is created, with a typed error", () => {
    expect(() => createDecoder("openai-chat", { textCalls: ["klingon" as never] })).toThrow(TextCallOptionsError);
  });

  it("collectTurn and decodeStream pass the option through", async () => {
    const body = () => new Response(encodeSse(textStream(`x${HERMES}`)));
    const turn = await collectTurn("openai-chat", body(), { textCalls: "auto" });
    expect(turn.toolCalls.map((call) => call.source)).toEqual(["text"]);
    const seen: string[] = [];
    for await (const event of decodeStream("openai-chat", body(), { textCalls: "auto" })) seen.push(event.type);
    expect(seen).toContain("tool_call_start");
  });

  it("record then replay with the option gives the same turn (idempotent on replay)", async () => {
    const lines: string[] = [];
    const events = textStream(`Sure.\n${HERMES}`, 3);
    const recording = record(new Response(encodeSse(events)), (line) => {
      lines.push(line);
    });
    const live = await collectTurn("openai-chat", recording, { textCalls: "auto" });
    const [stream] = parseRecords(lines.join(""));
    const replayed = replayEvents(stream!, { textCalls: "auto" });
    expect(replayed.toolCalls).toEqual(live.toolCalls);
    expect(replayed.text).toBe(live.text);
  });
});

import { describe, expect, it } from "vitest";
import { record } from "../../src/adapters/record.js";
import { collectTurn, decodeStream } from "../../src/adapters/web.js";
import { parseRecords } from "../../src/framing/records.js";
import { replayEvents } from "../../src/replay.js";
import { a, toolStream } from "../helpers/anthropic-events.js";
import { b, encodeFrames, unwrapped } from "../helpers/bedrock-events.js";
import { c, chatCall, chatStream } from "../helpers/openai-events.js";
import { drain, plain, pushable, readUntil, sse } from "./support.js";

function textSink(): { sink: WritableStream<string>; text: () => string; closed: () => boolean } {
  let text = "";
  let closed = false;
  const sink = new WritableStream<string>({
    write(chunk) {
      text += chunk;
    },
    close() {
      closed = true;
    },
  });
  return { sink, text: () => text, closed: () => closed };
}

async function* chunks<T>(items: T[]): AsyncGenerator<T> {
  for (const item of items) yield item;
}

const events = toolStream(0, "toolu_1", "shell", ['{"command":', '"ls"}']);

describe("record", () => {
  it("writes every provider event of a byte stream as a record, and the file replays to the same turn", async () => {
    const out = textSink();
    const turn = await collectTurn("anthropic", record(new Response(sse(events)), out.sink));
    expect(out.closed()).toBe(true);
    const lines = out.text().trimEnd().split("\n").map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(lines).toHaveLength(events.length);
    for (const [i, line] of lines.entries()) {
      expect(Object.keys(line)).toEqual(["provider", "event", "t", "data"]);
      expect(line).toMatchObject({ provider: "anthropic", event: events[i]?.event, data: events[i]?.data });
      expect(Number.isInteger(line.t)).toBe(true);
    }
    const [stream] = parseRecords(out.text());
    expect(stream?.events).toEqual(events);
    expect(plain(replayEvents(stream!))).toEqual(plain(turn));
  });

  it("redact rewrites or leaves out events in the file only; decoding sees them as sent", async () => {
    const out = textSink();
    const withPing = [events[0]!, { event: "ping", data: { type: "ping" } }, ...events.slice(1)];
    const turn = await collectTurn(
      "anthropic",
      record(new Response(sse(withPing)), out.sink, {
        redact(event) {
          if (event.event === "ping") return null;
          const delta = (event.data as { delta?: { partial_json?: string } }).delta;
          // Changing the copy in place is allowed: decoding has its own.
          if (delta?.partial_json !== undefined) delta.partial_json = delta.partial_json.replace("ls", "XX");
          return event;
        },
      }),
    );
    expect(turn.toolCalls[0]?.arguments).toEqual({ command: "ls" });
    const [stream] = parseRecords(out.text());
    expect(stream?.events.map((e) => e.event)).toEqual(events.map((e) => e.event));
    expect(replayEvents(stream!).toolCalls[0]?.arguments).toEqual({ command: "XX" });
  });

  it("a redact function that throws stops the recording, reported on the turn, and decoding goes on", async () => {
    const out = textSink();
    const turn = await collectTurn(
      "anthropic",
      record(new Response(sse(events)), out.sink, {
        redact() {
          throw new Error("no secrets here");
        },
      }),
    );
    expect(turn.toolCalls[0]?.arguments).toEqual({ command: "ls" });
    expect(turn.diagnostics.find((d) => d.code === "record_failed")?.message).toContain("no secrets here");
    expect(out.text()).toBe("");
  });

  it("stamps t as milliseconds since decoding started", async () => {
    const out = textSink();
    const feed = pushable();
    feed.push(sse(events.slice(0, 2)));
    const decoding = decodeStream("anthropic", record(feed.stream, out.sink));
    await readUntil(decoding, (event) => event.type === "tool_call_start");
    await new Promise((resolve) => setTimeout(resolve, 60));
    feed.push(sse(events.slice(2)));
    feed.close();
    await drain(decoding);
    const [stream] = parseRecords(out.text());
    const times = stream?.times as number[];
    expect(times.slice(0, 2).every((t) => t < 50)).toBe(true);
    expect(times.slice(2).every((t) => t >= 55)).toBe(true);
    expect([...times].sort((x, y) => x - y)).toEqual(times);
  });

  it("records SDK payloads with their type as the event name, so they replay like the wire", async () => {
    const out = textSink();
    const turn = await collectTurn("anthropic", record(chunks(events.map((event) => event.data as { type: string })), out.sink));
    const [stream] = parseRecords(out.text());
    expect(stream?.events).toEqual(events);
    expect(plain(replayEvents(stream!))).toEqual(plain(turn));
  });

  it("records Chat chunks and [DONE] as the wire had them", async () => {
    const out = textSink();
    const wire = chatStream(chatCall(0, "call_1", "search", ['{"q":"x"}']));
    await collectTurn("openai-chat", record(new Response(sse(wire)), out.sink));
    const [stream] = parseRecords(out.text());
    expect(stream?.events).toEqual(wire);
    expect(stream?.events.at(-1)).toEqual(c.done());
  });

  it("records Bedrock's binary frames as named events", async () => {
    const out = textSink();
    const wire = [b.messageStart(), b.toolStart(0, "tooluse_1", "read"), b.input(0, '{"path":"a"}'), b.stop(0), b.messageStop("tool_use"), b.metadata()];
    const turn = await collectTurn("bedrock", record(new Response(encodeFrames(wire) as Uint8Array<ArrayBuffer>), out.sink));
    const [stream] = parseRecords(out.text());
    expect(stream?.events).toEqual(unwrapped(wire));
    expect(plain(replayEvents(stream!))).toEqual(plain(turn));
  });

  it("writes the header and the sequence name, and can append several turns to one sink", async () => {
    const out = textSink();
    await collectTurn("anthropic", record(new Response(sse(events)), out.sink, { sequence: "first", header: "recorded by a test\nsecond line", preventClose: true }));
    expect(out.closed()).toBe(false);
    await collectTurn("anthropic", record(new Response(sse(events)), out.sink, { sequence: "second" }));
    expect(out.closed()).toBe(true);
    expect(out.text().startsWith("# recorded by a test\n# second line\n")).toBe(true);
    const streams = parseRecords(out.text());
    expect(streams.map((stream) => [stream.sequence, stream.provider, stream.events.length])).toEqual([
      ["first", "anthropic", events.length],
      ["second", "anthropic", events.length],
    ]);
  });

  it("calls a callback sink once per batch of lines, in order, awaiting it", async () => {
    const lines: string[] = [];
    let busy = false;
    const turn = await collectTurn(
      "anthropic",
      record(new Response(sse(events)), async (text) => {
        expect(busy).toBe(false);
        busy = true;
        await new Promise((resolve) => setTimeout(resolve, 1));
        lines.push(...text.trimEnd().split("\n"));
        busy = false;
      }),
    );
    expect(turn.status).toBe("complete");
    expect(lines.map((line) => (JSON.parse(line) as { event: string }).event)).toEqual(events.map((event) => event.event));
  });

  it("reports a failing sink on the turn and never disturbs decoding", async () => {
    const sink = new WritableStream<string>({
      write() {
        throw new Error("disk full");
      },
    });
    const turn = await collectTurn("anthropic", record(new Response(sse(events)), sink));
    expect(turn.status).toBe("complete");
    expect(turn.toolCalls[0]?.arguments).toEqual({ command: "ls" });
    expect(turn.diagnostics.find((d) => d.code === "record_failed")?.message).toContain("disk full");
  });

  it("keeps what arrived when the stream is aborted, as a file that replays as cut off", async () => {
    const out = textSink();
    const feed = pushable();
    feed.push(sse([a.messageStart(), a.toolStart(0, "toolu_1", "shell"), a.json(0, '{"comm')]));
    const turn = await collectTurn("anthropic", record(feed.stream, out.sink), { idleTimeoutMs: 40 });
    expect(turn.status).toBe("incomplete");
    expect(out.closed()).toBe(true);
    const [stream] = parseRecords(out.text());
    expect(stream?.events).toHaveLength(3);
    expect(replayEvents(stream!).toolCalls[0]?.error?.code).toBe("truncated");
  });

  it("closes the sink when the consumer stops reading", async () => {
    const out = textSink();
    for await (const event of decodeStream("anthropic", record(new Response(sse(events)), out.sink))) {
      if (event.type === "tool_call_start") break;
    }
    expect(out.closed()).toBe(true);
  });

  it("rejects a sink that is neither a WritableStream nor a function", () => {
    expect(() => record(new Response(""), {} as WritableStream<string>)).toThrow(expect.objectContaining({ code: "invalid_sink" }));
  });
});

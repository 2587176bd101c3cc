import { describe, expect, it } from "vitest";
import { collectTurn, decodeStream, decodeStreamBatches } from "../../src/adapters/web.js";
import { replayEvents } from "../../src/replay.js";
import { encodeJsonArray } from "../../src/framing/json-array.js";
import { a, toolStream } from "../helpers/anthropic-events.js";
import { c, chatCall, chatStream } from "../helpers/openai-events.js";
import { g } from "../helpers/gemini-events.js";
import type { CodecEvent } from "../../src/types.js";
import { drain, plain, pushable, sdkLikeStream, sse } from "./support.js";

const events = toolStream(0, "toolu_1", "shell", ['{"command":', '"ls"}']);
const expected = plain(replayEvents({ sequence: null, provider: "anthropic", events }));

async function* chunks<T>(items: T[]): AsyncGenerator<T> {
  for (const item of items) yield item;
}

describe("decodeStream sources", () => {
  it("decodes a Response, a ReadableStream, text chunks and parsed events to the same turn", async () => {
    const body = sse(events);
    const bytes = new TextEncoder().encode(body);
    const split = [bytes.slice(0, 7), bytes.slice(7, 200), bytes.slice(200)];
    const fromResponse = await collectTurn("anthropic", new Response(body, { headers: { "content-type": "text/event-stream" } }));
    const fromStream = await collectTurn("anthropic", new Response(new Blob(split)).body as ReadableStream<Uint8Array>);
    const fromText = await collectTurn("anthropic", chunks([body.slice(0, 33), body.slice(33)]));
    const fromBytes = await collectTurn("anthropic", chunks(split));
    // What the SDKs yield: the payloads, without the SSE event names.
    const fromSdk = await collectTurn("anthropic", chunks(events.map((event) => event.data as { type: string })));
    const fromEvents = await collectTurn("anthropic", chunks(events));
    for (const turn of [fromResponse, fromStream, fromText, fromBytes, fromSdk, fromEvents]) expect(plain(turn)).toEqual(expected);
  });

  it("ends with finish as the last event, every time", async () => {
    const { events: out } = await drain(decodeStream("anthropic", chunks([sse(events)])));
    expect(out.at(-1)?.type).toBe("finish");
    expect(out.filter((event) => event.type === "finish")).toHaveLength(1);
  });

  it("rejects a source that mixes bytes and parsed events", async () => {
    await expect(collectTurn("anthropic", chunks<string | object>([sse(events.slice(0, 1)), { type: "ping" }]) as AsyncIterable<string>)).rejects.toThrow(/not both/);
  });

  it("rejects what is not a source", async () => {
    await expect(collectTurn("anthropic", 42 as unknown as Response)).rejects.toThrow(/async iterable/);
  });

  it("decodes an empty Response body as an empty stream", async () => {
    const turn = await collectTurn("anthropic", new Response(null));
    expect(turn.status).toBe("incomplete");
    expect(turn.diagnostics.map((d) => d.code)).toContain("empty_stream");
  });

  it("reads Gemini's JSON-array body by its content type, and SSE by its own", async () => {
    const chunksOut = [g.chunk([g.call("add", { a: 1, b: 2 })], { finishReason: "STOP" })];
    const asArray = await collectTurn("gemini", new Response(encodeJsonArray(chunksOut.map((e) => e.data)), { headers: { "content-type": "application/json; charset=UTF-8" } }));
    const asSse = await collectTurn("gemini", new Response(sse(chunksOut), { headers: { "content-type": "text/event-stream" } }));
    expect(asArray.toolCalls[0]?.arguments).toEqual({ a: 1, b: 2 });
    expect(plain(asArray)).toEqual(plain(asSse));
  });

  it("keeps an explicit framing over the content type", async () => {
    const body = encodeJsonArray([g.chunk([g.text("hi")], { finishReason: "STOP" }).data]);
    const turn = await collectTurn("gemini", new Response(body, { headers: { "content-type": "text/event-stream" } }), { framing: "json-array" });
    expect(turn.text).toBe("hi");
  });

  it("decodes an HTTP error body as the provider's error, with the status in a diagnostic", async () => {
    const body = JSON.stringify({ type: "error", error: { type: "overloaded_error", message: "Overloaded" } });
    const turn = await collectTurn("anthropic", new Response(body, { status: 529, headers: { "content-type": "application/json" } }));
    expect(turn.status).toBe("error");
    expect(turn.error?.message).toContain("Overloaded");
    expect(turn.diagnostics.find((d) => d.code === "http_error")?.data).toEqual({ status: 529 });
  });

  it("decodes OpenAI chat chunks from an SDK-like iterable", async () => {
    const stream = chatStream(chatCall(0, "call_1", "search", ['{"q":', '"x"}']));
    const turn = await collectTurn("openai-chat", chunks(stream.filter((event) => typeof event.data !== "string").map((event) => event.data as { choices: unknown[] })));
    expect(turn.status).toBe("complete");
    expect(turn.toolCalls[0]?.arguments).toEqual({ q: "x" });
  });
});

describe("decodeStream failures", () => {
  it("ends the turn incomplete when the source fails, truncating open calls, without throwing", async () => {
    const feed = pushable();
    feed.push(sse(events.slice(0, 3)));
    const pending = collectTurn("anthropic", feed.stream);
    await new Promise((resolve) => setTimeout(resolve, 5));
    feed.fail(new TypeError("terminated"));
    const turn = await pending;
    expect(turn.status).toBe("incomplete");
    expect(turn.toolCalls[0]).toMatchObject({ complete: false, arguments: null, error: { code: "truncated", cause: "stream_ended" } });
    const failure = turn.diagnostics.find((d) => d.code === "source_error");
    expect(failure?.message).toContain("TypeError: terminated");
  });

  it("decodes an in-stream error that an SDK threw as the provider's error event", async () => {
    // The Anthropic SDK throws APIError(status undefined, body) for `event: error`.
    const body = { type: "error", error: { type: "overloaded_error", message: "Overloaded" } };
    const apiError = Object.assign(new Error("Overloaded"), { status: undefined, error: body });
    const turn = await collectTurn("anthropic", sdkLikeStream(events.map((event) => event.data), { throwAfter: { index: 3, error: apiError } }) as AsyncIterable<{ type: string }>);
    const fromWire = replayEvents({ sequence: null, provider: "anthropic", events: [...events.slice(0, 3), { event: "error", data: body }] });
    expect(plain(turn)).toEqual(plain(fromWire));
    expect(turn.status).toBe("error");
  });

  it("does the same for an OpenAI chat chunk carrying `error`", async () => {
    const inner = { message: "The server had an error", type: "server_error" };
    const apiError = Object.assign(new Error(inner.message), { status: undefined, error: inner });
    const stream = [c.role(), ...chatCall(0, "call_1", "search", ['{"q":'])];
    const turn = await collectTurn("openai-chat", sdkLikeStream(stream.map((event) => event.data), { throwAfter: { index: stream.length, error: apiError } }) as AsyncIterable<{ choices: unknown[] }>);
    const fromWire = replayEvents({ sequence: null, provider: "openai-chat", events: [...stream, { data: { error: inner } }] });
    expect(plain(turn)).toEqual(plain(fromWire));
  });

  it("cancels the source when the consumer stops reading", async () => {
    const feed = pushable();
    feed.push(sse([a.messageStart(), a.toolStart(0, "toolu_1", "shell")]));
    for await (const event of decodeStream("anthropic", feed.stream)) {
      if (event.type === "tool_call_start") break;
    }
    await expect(feed.cancelled).resolves.toBeInstanceOf(Error);
  });

  it("aborts an SDK stream's controller when the consumer stops reading", async () => {
    const stream = sdkLikeStream(events.map((event) => event.data), { stallAfter: 2 });
    for await (const event of decodeStream("anthropic", stream as AsyncIterable<{ type: string }>)) {
      if (event.type === "tool_call_start") break;
    }
    expect(stream.controller.signal.aborted).toBe(true);
  });

  it("serves next() calls made without waiting in order, as a generator queues them", async () => {
    const { events: sequential } = await drain(decodeStream("anthropic", chunks([sse(events.slice(0, 3)), sse(events.slice(3))])));
    const iterator = decodeStream("anthropic", chunks([sse(events.slice(0, 3)), sse(events.slice(3))]));
    const results = await Promise.all(Array.from({ length: sequential.length + 2 }, () => iterator.next()));
    expect(results.map((result) => (result.done ? null : result.value))).toEqual([...sequential, null, null]);
    expect(results.at(-1)?.done).toBe(true);
  });

  it("throws misuse at the first next(), not when called, and stays done after return()", async () => {
    const iterator = decodeStream("anthropic", 42 as unknown as Response);
    await expect(iterator.next()).rejects.toThrow(/async iterable/);
    await expect(iterator.next()).resolves.toEqual({ done: true, value: undefined });
    const feed = pushable();
    feed.push(sse([a.messageStart(), a.toolStart(0, "toolu_1", "shell")]));
    const open = decodeStream("anthropic", feed.stream);
    await open.next();
    // A return() queued behind a pending read still cancels the source once that read settles.
    const pendingRead = open.next();
    await expect(open.return()).resolves.toEqual({ done: true, value: undefined });
    await pendingRead;
    await expect(feed.cancelled).resolves.toBeInstanceOf(Error);
    await expect(open.next()).resolves.toEqual({ done: true, value: undefined });
  });

  it("hands out the same events in per-chunk arrays through decodeStreamBatches", async () => {
    const pieces = [sse(events.slice(0, 2)), "", sse(events.slice(2, 4)), sse(events.slice(4))];
    const { events: one } = await drain(decodeStream("anthropic", chunks(pieces), { previews: true }));
    const batches: CodecEvent[][] = [];
    for await (const batch of decodeStreamBatches("anthropic", chunks(pieces), { previews: true })) batches.push(batch);
    expect(batches.every((batch) => batch.length > 0)).toBe(true);
    expect(batches.length).toBeGreaterThan(1);
    expect(plain(batches.flat())).toEqual(plain(one));
    expect(batches.at(-1)?.at(-1)?.type).toBe("finish");
  });

  it("cancels the source when a batch consumer stops reading", async () => {
    const feed = pushable();
    feed.push(sse([a.messageStart(), a.toolStart(0, "toolu_1", "shell")]));
    for await (const batch of decodeStreamBatches("anthropic", feed.stream)) {
      if (batch.some((event) => event.type === "tool_call_start")) break;
    }
    await expect(feed.cancelled).resolves.toBeInstanceOf(Error);
  });
});

import { describe, expect, it } from "vitest";
import { reencodedBody, takeReencodedSource } from "../../src/fetch/reencoded-body.js";
import { createReencoder, createReencodingStream } from "../../src/reencode/index.js";
import type { Reencoder } from "../../src/reencode/types.js";

/** The repairing fetch's re-encoded body behaves as the body piped through createReencodingStream. */

const encoder = new TextEncoder();
const TEXT_TURN = [
  'event: message_start\ndata: {"type":"message_start","message":{"id":"m","type":"message","role":"assistant","model":"x","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":1,"output_tokens":1}}}\n\n',
  'event: content_block_start\ndata: {"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_1","name":"f","input":{}}}\n\n',
  'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\\"a\\":"}}\n\n',
  'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"1}"}}\n\n',
  'event: content_block_stop\ndata: {"type":"content_block_stop","index":0}\n\n',
  'event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":1}}\n\n',
  'event: message_stop\ndata: {"type":"message_stop"}\n\n',
];

function body(chunks: string[], failWith?: Error): { stream: ReadableStream<Uint8Array>; cancelled: () => unknown } {
  let i = 0;
  let reason: unknown;
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (i < chunks.length) controller.enqueue(encoder.encode(chunks[i++] as string));
      else if (failWith) controller.error(failWith);
      else controller.close();
    },
    cancel(why) {
      reason = why ?? "cancelled";
    },
  });
  return { stream, cancelled: () => reason };
}

async function readAll(stream: ReadableStream<Uint8Array>): Promise<string> {
  let out = "";
  const decoder = new TextDecoder();
  const reader = stream.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return out + decoder.decode();
    out += decoder.decode(value, { stream: true });
  }
}

describe("reencodedBody", () => {
  it("gives the bytes and the end report that createReencodingStream gives", async () => {
    const piped: Reencoder[] = [];
    const pulled: Reencoder[] = [];
    const expected = await readAll(body(TEXT_TURN).stream.pipeThrough(createReencodingStream(createReencoder("anthropic"), (r) => piped.push(r))));
    const got = await readAll(reencodedBody(body(TEXT_TURN).stream, createReencoder("anthropic"), (r) => pulled.push(r)));
    expect(got).toBe(expected);
    expect(got).toBe(TEXT_TURN.join(""));
    expect(pulled).toHaveLength(1);
    expect(pulled[0]?.turn?.toolCalls[0]?.arguments).toEqual({ a: 1 });
  });

  it("errors with the body's error, without an end report", async () => {
    const failure = new Error("upstream cut");
    let ended = false;
    await expect(readAll(reencodedBody(body(TEXT_TURN.slice(0, 3), failure).stream, createReencoder("anthropic"), () => (ended = true)))).rejects.toBe(failure);
    expect(ended).toBe(false);
  });

  it("cancels the body when it is cancelled", async () => {
    const source = body(TEXT_TURN);
    const stream = reencodedBody(source.stream, createReencoder("anthropic"), () => {});
    const reader = stream.getReader();
    await reader.read();
    await reader.cancel("client gone");
    expect(source.cancelled()).toBe("client gone");
  });

  it("errors with what the re-encoder throws, and cancels the body", async () => {
    const failure = new Error("re-encoder bug");
    const throwing: Reencoder = { ...createReencoder("anthropic"), push: () => { throw failure; } };
    const source = body(TEXT_TURN);
    await expect(readAll(reencodedBody(source.stream, throwing, () => {}))).rejects.toBe(failure);
    expect(source.cancelled()).toBe(failure);
  });

  it("can be taken over, unread, by a caller that feeds the re-encoder itself; the stream is then spent", async () => {
    const source = body(TEXT_TURN);
    const reencoder = createReencoder("anthropic");
    const ends: Reencoder[] = [];
    const stream = reencodedBody(source.stream, reencoder, (done) => ends.push(done));
    const taken = takeReencodedSource(stream, (inner) => (inner === source.stream ? "mine" : null));
    expect(taken?.taker).toBe("mine");
    // Fed by the taker: the same bytes as the stream would give, the end reported after the flush.
    const decoder = new TextDecoder();
    let fed = "";
    for (const chunk of TEXT_TURN) for (const piece of taken?.next(encoder.encode(chunk)) ?? []) fed += decoder.decode(piece);
    expect(ends).toEqual([]);
    for (const piece of taken?.next(null) ?? []) fed += decoder.decode(piece);
    expect(fed).toBe(TEXT_TURN.join(""));
    expect(ends).toEqual([reencoder]);
    expect(ends[0]?.turn?.toolCalls[0]?.arguments).toEqual({ a: 1 });
    expect(takeReencodedSource(stream, () => "again")).toBeNull();
    await expect(readAll(stream)).rejects.toThrow(/taken/);
  });

  it("stays readable when the taker cannot read its source, and cannot be taken once read", async () => {
    const stream = reencodedBody(body(TEXT_TURN).stream, createReencoder("anthropic"), () => {});
    expect(takeReencodedSource(stream, () => null)).toBeNull();
    const reader = stream.getReader();
    await reader.read();
    expect(takeReencodedSource(stream, () => "late")).toBeNull();
    reader.releaseLock();
    expect(await readAll(stream)).toBe(TEXT_TURN.slice(1).join(""));
    expect(takeReencodedSource(new ReadableStream<Uint8Array>(), () => "other")).toBeNull();
  });
});

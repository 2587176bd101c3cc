import { describe, expect, it } from "vitest";
import { decodeStream } from "../../src/adapters/web.js";
import type { CodecEvent, ProviderEvent, ProviderName } from "../../src/types.js";
import { a } from "../helpers/anthropic-events.js";
import { b, encodeFrames } from "../helpers/bedrock-events.js";
import { g } from "../helpers/gemini-events.js";
import { c, chatCall, r } from "../helpers/openai-events.js";
import { drain, pushable, readUntil, sse } from "./support.js";

/**
 * Early finalization: a call comes out final (`tool_call_end`, complete, with its arguments) as
 * soon as its provider marks its end, while the stream is still open, so an agent can start it
 * before the turn ends. Each case holds the stream open right after that marker.
 */

const ollamaLine = (message: Record<string, unknown>, extra: Record<string, unknown> = {}): ProviderEvent => ({
  data: { model: "qwen3", created_at: "2025-06-23T11:09:03Z", message: { role: "assistant", content: "", ...message }, done: false, ...extra },
});

interface Case {
  provider: ProviderName;
  marker: string;
  /** The stream up to and including the end marker of the first call. */
  head: string | Uint8Array;
  /** The rest, after which the turn ends normally. */
  tail: string | Uint8Array;
  id: string;
  args: Record<string, unknown>;
}

const cases: Case[] = [
  {
    provider: "anthropic",
    marker: "content_block_stop",
    head: sse([a.messageStart(), a.toolStart(0, "toolu_1", "read"), a.json(0, '{"path":'), a.json(0, '"a.txt"}'), a.stop(0)]),
    tail: sse([a.messageDelta("tool_use"), a.messageStop()]),
    id: "toolu_1",
    args: { path: "a.txt" },
  },
  {
    provider: "openai-responses",
    marker: "response.function_call_arguments.done",
    head: sse([r.created(), r.callAdded(0, "fc_1", "call_1", "read"), r.argsDelta(0, "fc_1", '{"path":"a.txt"}'), r.argsDone(0, "fc_1", '{"path":"a.txt"}')]),
    tail: sse([r.callDone(0, "fc_1", "call_1", "read", '{"path":"a.txt"}'), r.completed()]),
    id: "call_1",
    args: { path: "a.txt" },
  },
  {
    provider: "gemini",
    marker: "a functionCall part",
    head: sse([g.chunk([g.call("read", { path: "a.txt" })])]),
    tail: sse([g.chunk([g.text("")], { finishReason: "STOP" })]),
    id: "",
    args: { path: "a.txt" },
  },
  {
    provider: "bedrock",
    marker: "contentBlockStop",
    head: encodeFrames([b.messageStart(), b.toolStart(0, "tooluse_1", "read"), b.input(0, '{"path":"a.txt"}'), b.stop(0)]),
    tail: encodeFrames([b.messageStop("tool_use"), b.metadata()]),
    id: "tooluse_1",
    args: { path: "a.txt" },
  },
  {
    provider: "ollama",
    marker: "a message with tool_calls",
    head: JSON.stringify(ollamaLine({ tool_calls: [{ function: { name: "read", arguments: { path: "a.txt" } } }] }).data) + "\n",
    tail: JSON.stringify(ollamaLine({}, { done: true, done_reason: "stop" }).data) + "\n",
    id: "",
    args: { path: "a.txt" },
  },
  {
    // Chat Completions has no end marker per call, and some proxies send finish_reason with every
    // chunk, so the decoder takes [DONE] as the end of every call; the connection may stay open.
    provider: "openai-chat",
    marker: "[DONE]",
    head: sse([c.role(), ...chatCall(0, "call_1", "read", ['{"path":', '"a.txt"}']), c.finish("tool_calls"), c.usage(), c.done()]),
    tail: "",
    id: "call_1",
    args: { path: "a.txt" },
  },
];

function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  return Promise.race([
    promise,
    new Promise<T>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what} did not arrive within ${ms} ms while the stream was held open`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

describe("early finalization", () => {
  for (const testCase of cases) {
    it(`${testCase.provider}: a call is final at ${testCase.marker}, before the stream ends`, async () => {
      const feed = pushable();
      feed.push(testCase.head);
      const events = decodeStream(testCase.provider, feed.stream);
      const seen = await within(readUntil(events, (event) => event.type === "tool_call_end"), 2_000, "tool_call_end");
      const end = seen.at(-1) as Extract<CodecEvent, { type: "tool_call_end" }>;
      expect(end.call).toMatchObject({ name: "read", arguments: testCase.args, complete: true, error: null });
      if (testCase.id) expect(end.call.id).toBe(testCase.id);
      // Nothing claims the turn is over yet.
      expect(seen.some((event) => event.type === "finish")).toBe(false);
      if (testCase.tail.length > 0) feed.push(testCase.tail);
      feed.close();
      const { events: rest, turn } = await drain(events);
      expect(turn.status).toBe("complete");
      // The call handed out early is the call of the finished turn, and is not ended twice.
      expect(turn.toolCalls[0]).toEqual(end.call);
      expect(rest.filter((event) => event.type === "tool_call_end")).toHaveLength(0);
    });
  }
});

import { afterEach, describe, expect, it, vi } from "vitest";
import { collectTurn, decodeStream } from "../../src/adapters/web.js";
import { DEFAULT_IDLE_TIMEOUT_MS, Watchdog } from "../../src/adapters/watchdog.js";
import type { DecodedTurn } from "../../src/types.js";
import { a, toolStream } from "../helpers/anthropic-events.js";
import { c, chatCall } from "../helpers/openai-events.js";
import { drain, pushable, readUntil, sdkLikeStream, sse } from "./support.js";

/** The Anthropic stream cut inside the arguments of its second call, after the first call closed. */
const head = [
  a.messageStart(),
  a.toolStart(0, "toolu_1", "read", {}),
  a.json(0, '{"path":"a.txt"}'),
  a.stop(0),
  a.toolStart(1, "toolu_2", "write", {}),
  a.json(1, '{"path":"b.txt","content":"hel'),
];

function expectCutTurn(turn: DecodedTurn, code: string): void {
  expect(turn.status).toBe("incomplete");
  // The call the provider closed stays final and executable; the open one is truncated.
  expect(turn.toolCalls[0]).toMatchObject({ complete: true, arguments: { path: "a.txt" }, error: null });
  expect(turn.toolCalls[1]).toMatchObject({ complete: false, arguments: null, error: { code: "truncated", cause: "aborted" } });
  const diagnostic = turn.diagnostics.find((d) => d.code === code);
  expect(diagnostic?.severity).toBe("error");
}

describe("stream watchdog", () => {
  it("ends a stalled stream after the idle timeout and cancels the source", async () => {
    const feed = pushable();
    feed.push(sse(head));
    const started = performance.now();
    const turn = await collectTurn("anthropic", feed.stream, { idleTimeoutMs: 60 });
    expect(performance.now() - started).toBeLessThan(2_000);
    expectCutTurn(turn, "idle_timeout");
    expect(turn.diagnostics.find((d) => d.code === "idle_timeout")?.message).toMatch(/60 ms/);
    await expect(feed.cancelled).resolves.toBeInstanceOf(Error);
  });

  it("does not count the consumer's own time against the idle timeout", async () => {
    const feed = pushable();
    feed.push(sse(head));
    const events = decodeStream("anthropic", feed.stream, { idleTimeoutMs: 80 });
    await readUntil(events, (event) => event.type === "tool_call_end");
    // The consumer runs the first call for longer than the idle timeout, then the stream goes on.
    await new Promise((resolve) => setTimeout(resolve, 150));
    feed.push(sse([a.json(1, 'lo"}'), a.stop(1), a.messageDelta("tool_use"), a.messageStop()]));
    feed.close();
    const { turn } = await drain(events);
    expect(turn.status).toBe("complete");
    expect(turn.toolCalls[1]?.arguments).toEqual({ path: "b.txt", content: "hello" });
  });

  it("ends a trickling stream at its deadline even though data keeps arriving", async () => {
    const feed = pushable();
    feed.push(sse(head));
    const timer = setInterval(() => feed.push(sse([a.ping()])), 10);
    try {
      const turn = await collectTurn("anthropic", feed.stream, { idleTimeoutMs: 1_000, deadlineMs: 120 });
      expectCutTurn(turn, "deadline_exceeded");
      expect(turn.diagnostics.some((d) => d.code === "idle_timeout")).toBe(false);
    } finally {
      clearInterval(timer);
    }
  });

  it("counts the deadline while the consumer holds the stream, and ends at the next read", async () => {
    const feed = pushable();
    feed.push(sse(head));
    const events = decodeStream("anthropic", feed.stream, { deadlineMs: 50 });
    await readUntil(events, (event) => event.type === "tool_call_end");
    await new Promise((resolve) => setTimeout(resolve, 100));
    const { turn } = await drain(events);
    expect(turn.diagnostics.some((d) => d.code === "deadline_exceeded")).toBe(true);
    expect(turn.toolCalls[0]?.complete).toBe(true);
  });

  it("ends the turn the same way when its AbortSignal fires, naming the reason", async () => {
    const feed = pushable();
    feed.push(sse(head));
    const controller = new AbortController();
    const events = decodeStream("anthropic", feed.stream, { signal: controller.signal });
    const seen = await readUntil(events, (event) => event.type === "tool_call_delta" && event.index === 1);
    controller.abort(new Error("user pressed stop"));
    const { turn } = await drain(events);
    expectCutTurn(turn, "aborted");
    expect(turn.diagnostics.find((d) => d.code === "aborted")?.message).toContain("user pressed stop");
    // The first call was already handed out as final before the abort.
    expect(seen.some((event) => event.type === "tool_call_end" && event.call.id === "toolu_1")).toBe(true);
    await expect(feed.cancelled).resolves.toBeInstanceOf(Error);
  });

  it("ends at once for a signal aborted before the stream started", async () => {
    const feed = pushable();
    const turn = await collectTurn("anthropic", feed.stream, { signal: AbortSignal.abort("gone") });
    expect(turn.status).toBe("incomplete");
    expect(turn.diagnostics.find((d) => d.code === "aborted")?.message).toContain("gone");
  });

  it("keeps a turn complete when the provider had ended it before the timeout", async () => {
    // A proxy that holds the connection open after message_stop: nothing is missing.
    const feed = pushable();
    feed.push(sse(toolStream(0, "toolu_1", "shell", ['{"command":"ls"}'])));
    const turn = await collectTurn("anthropic", feed.stream, { idleTimeoutMs: 40 });
    expect(turn.status).toBe("complete");
    expect(turn.toolCalls[0]).toMatchObject({ complete: true, arguments: { command: "ls" } });
    expect(turn.diagnostics.some((d) => d.code === "idle_timeout")).toBe(true);
  });

  it("aborts an SDK stream's own request on timeout", async () => {
    const stream = sdkLikeStream(head.map((event) => event.data), { stallAfter: head.length });
    const turn = await collectTurn("anthropic", stream as AsyncIterable<{ type: string }>, { idleTimeoutMs: 40 });
    expectCutTurn(turn, "idle_timeout");
    expect(stream.controller.signal.aborted).toBe(true);
  });

  it("truncates every open OpenAI chat call on abort (no end marker per call)", async () => {
    const feed = pushable();
    feed.push(sse([c.role(), ...chatCall(0, "call_1", "read", ['{"path":"a"}']), ...chatCall(1, "call_2", "read", ['{"pa'])]));
    const turn = await collectTurn("openai-chat", feed.stream, { idleTimeoutMs: 40 });
    expect(turn.status).toBe("incomplete");
    for (const call of turn.toolCalls) expect(call).toMatchObject({ complete: false, error: { code: "truncated" } });
  });

  it("rejects nonsense durations", () => {
    expect(() => new Watchdog({ idleTimeoutMs: -1 }, () => {})).toThrow(expect.objectContaining({ code: "invalid_option" }));
    expect(() => new Watchdog({ deadlineMs: Number.NaN }, () => {})).toThrow(expect.objectContaining({ code: "invalid_option" }));
  });

  it("clears its timers: a long deadline does not outlive a finished stream", async () => {
    const feed = pushable();
    feed.push(sse(toolStream(0, "toolu_1", "shell", ['{"command":"ls"}'])));
    feed.close();
    const controller = new AbortController();
    const turn = await collectTurn("anthropic", feed.stream, { deadlineMs: 3_600_000, idleTimeoutMs: 3_600_000, signal: controller.signal });
    expect(turn.status).toBe("complete");
    // After the stream, aborting changes nothing: the listener is gone and the turn is settled.
    controller.abort();
    expect(turn.diagnostics.some((d) => d.code === "aborted")).toBe(false);
  });

  describe("by default", () => {
    afterEach(() => {
      vi.useRealTimers();
    });

    it("ends a hung stream after 120 s without data, though no bound was set", async () => {
      expect(DEFAULT_IDLE_TIMEOUT_MS).toBe(120_000);
      vi.useFakeTimers();
      const feed = pushable();
      feed.push(sse(head));
      let turn: DecodedTurn | null = null;
      const pending = collectTurn("anthropic", feed.stream).then((done) => (turn = done));
      // Just short of the default: still waiting.
      await vi.advanceTimersByTimeAsync(DEFAULT_IDLE_TIMEOUT_MS - 1_000);
      expect(turn).toBeNull();
      await vi.advanceTimersByTimeAsync(1_000);
      await pending;
      expectCutTurn(turn as unknown as DecodedTurn, "idle_timeout");
      expect((turn as unknown as DecodedTurn).diagnostics.find((d) => d.code === "idle_timeout")?.data).toEqual({ idleTimeoutMs: DEFAULT_IDLE_TIMEOUT_MS });
      await expect(feed.cancelled).resolves.toBeInstanceOf(Error);
    });

    it("does the same for decodeStream, where data arriving in time resets the wait", async () => {
      vi.useFakeTimers();
      const feed = pushable();
      feed.push(sse(head.slice(0, 2)));
      const events = decodeStream("anthropic", feed.stream);
      const seen = readUntil(events, (event) => event.type === "tool_call_start");
      await vi.advanceTimersByTimeAsync(0);
      await seen;
      let finished = false;
      const rest = drain(events).then((result) => {
        finished = true;
        return result;
      });
      await vi.advanceTimersByTimeAsync(DEFAULT_IDLE_TIMEOUT_MS - 1);
      feed.push(sse(head.slice(2)));
      await vi.advanceTimersByTimeAsync(DEFAULT_IDLE_TIMEOUT_MS - 1);
      expect(finished).toBe(false);
      await vi.advanceTimersByTimeAsync(1);
      const { turn } = await rest;
      expectCutTurn(turn, "idle_timeout");
    });

    it("is off with idleTimeoutMs: 0", async () => {
      vi.useFakeTimers();
      const feed = pushable();
      feed.push(sse(head));
      let turn: DecodedTurn | null = null;
      const pending = collectTurn("anthropic", feed.stream, { idleTimeoutMs: 0 }).then((done) => (turn = done));
      await vi.advanceTimersByTimeAsync(10 * DEFAULT_IDLE_TIMEOUT_MS);
      expect(turn).toBeNull();
      expect(vi.getTimerCount()).toBe(0);
      feed.push(sse([a.json(1, 'lo"}'), a.stop(1), a.messageDelta("tool_use"), a.messageStop()]));
      feed.close();
      await pending;
      expect((turn as unknown as DecodedTurn).status).toBe("complete");
    });

    it("leaves no timer behind once the stream ended", async () => {
      vi.useFakeTimers();
      const feed = pushable();
      feed.push(sse(toolStream(0, "toolu_1", "shell", ['{"command":"ls"}'])));
      feed.close();
      const turn = await collectTurn("anthropic", feed.stream);
      expect(turn.status).toBe("complete");
      expect(vi.getTimerCount()).toBe(0);
    });
  });
});

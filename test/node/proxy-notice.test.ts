import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ProxyServer } from "../../src/node/proxy.js";
import { noticeRig, type NoticeRig, type RecordingUpstream } from "./http-support.js";

/**
 * The opt-in withheld-call notice: a call toolwire withholds does not vanish for an unchanged
 * client, whose assistant message gains a text part naming the call and why (the model reads it on
 * its next turn). Real SDKs, streamed and whole, Anthropic and Chat; off by default.
 */

const sse = (events: Array<[string, unknown]>): string => events.map(([name, data]) => `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`).join("");

/** Anthropic: a text block, then a write call cut by max_tokens. */
const ANTHROPIC_CUT = sse([
  ["message_start", { type: "message_start", message: { id: "msg_1", type: "message", role: "assistant", model: "m", content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 1, output_tokens: 1 } } }],
  ["content_block_start", { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } }],
  ["content_block_delta", { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "Writing the file." } }],
  ["content_block_stop", { type: "content_block_stop", index: 0 }],
  ["content_block_start", { type: "content_block_start", index: 1, content_block: { type: "tool_use", id: "toolu_cut", name: "write", input: {} } }],
  ["content_block_delta", { type: "content_block_delta", index: 1, delta: { type: "input_json_delta", partial_json: '{"path": "a.md", "text": "ab' } }],
  ["message_delta", { type: "message_delta", delta: { stop_reason: "max_tokens", stop_sequence: null }, usage: { output_tokens: 10 } }],
  ["message_stop", { type: "message_stop" }],
]);
/** Anthropic: one good call. */
const ANTHROPIC_GOOD = sse([
  ["message_start", { type: "message_start", message: { id: "msg_2", type: "message", role: "assistant", model: "m", content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 1, output_tokens: 1 } } }],
  ["content_block_start", { type: "content_block_start", index: 0, content_block: { type: "tool_use", id: "toolu_ok", name: "read", input: {} } }],
  ["content_block_delta", { type: "content_block_delta", index: 0, delta: { type: "input_json_delta", partial_json: '{"path": "a.md"}' } }],
  ["content_block_stop", { type: "content_block_stop", index: 0 }],
  ["message_delta", { type: "message_delta", delta: { stop_reason: "tool_use", stop_sequence: null }, usage: { output_tokens: 10 } }],
  ["message_stop", { type: "message_stop" }],
]);
const chunk = (delta: unknown, finish: string | null = null): string => `data: ${JSON.stringify({ id: "chatcmpl-1", object: "chat.completion.chunk", created: 1, model: "m", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
const CHAT_CUT = `${chunk({ role: "assistant", content: "Writing." })}${chunk({ tool_calls: [{ index: 0, id: "call_cut", type: "function", function: { name: "write", arguments: '{"path": "a.md", "text": "ab' } }] })}${chunk({}, "length")}data: [DONE]\n\n`;

const WHOLE_ANTHROPIC = { id: "msg_3", type: "message", role: "assistant", model: "m", content: [{ type: "text", text: "Writing." }, { type: "tool_use", id: "toolu_bad", name: "write", input: '{"path": "a.md", "text": ' }], stop_reason: "max_tokens", stop_sequence: null, usage: { input_tokens: 1, output_tokens: 1 } };
const WHOLE_CHAT = { id: "chatcmpl-2", object: "chat.completion", created: 1, model: "m", choices: [{ index: 0, message: { role: "assistant", content: null, tool_calls: [{ id: "call_bad", type: "function", function: { name: "write", arguments: '{"path": "a.md", "text": ' } }] }, finish_reason: "length" }], usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } };

let rig: NoticeRig;
let upstream: RecordingUpstream;
let withNotice: ProxyServer;
let without: ProxyServer;

beforeAll(async () => {
  rig = await noticeRig((seen, res) => {
    const body = JSON.parse(seen.body.toString() || "{}") as { stream?: boolean; metadata?: { case?: string } };
    const which = body.metadata?.case ?? "";
    if (body.stream) {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.end(seen.url.includes("/chat/completions") ? CHAT_CUT : which === "good" ? ANTHROPIC_GOOD : ANTHROPIC_CUT);
      return;
    }
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify(seen.url.includes("/chat/completions") ? WHOLE_CHAT : WHOLE_ANTHROPIC));
  });
  ({ upstream, withNotice, without } = rig);
});
afterAll(async () => {
  await rig?.close();
});

const anthropic = (proxy: ProxyServer) => new Anthropic({ apiKey: "k", baseURL: proxy.url, maxRetries: 0, logLevel: "off" });
const openai = (proxy: ProxyServer) => new OpenAI({ apiKey: "k", baseURL: `${proxy.url}/v1`, maxRetries: 0, logLevel: "off" });
const request = (which = "cut") => ({ model: "m", max_tokens: 100, messages: [{ role: "user" as const, content: "go" }], metadata: { case: which } as unknown as Anthropic.Metadata });

describe("Anthropic Messages", () => {
  it("streamed: the cut call is withheld, and a text block after the last one says so", async () => {
    const message = await anthropic(withNotice).messages.stream(request()).finalMessage();
    expect(message.content.map((block) => block.type)).toEqual(["text", "text"]);
    const notice = (message.content[1] as { text: string }).text;
    expect(notice).toContain("[toolwire:");
    expect(notice).toContain("write (id toolu_cut)");
    expect(notice).toContain("cut off");
    expect(message.stop_reason).toBe("max_tokens");
  });

  it("streamed, without the option: the call is gone, no text added", async () => {
    const message = await anthropic(without).messages.stream(request()).finalMessage();
    expect(message.content.map((block) => block.type)).toEqual(["text"]);
  });

  it("streamed, nothing withheld: the bytes are those without the option", async () => {
    const body = JSON.stringify({ ...request("good"), stream: true });
    const read = async (proxy: ProxyServer) => (await fetch(`${proxy.url}/v1/messages`, { method: "POST", headers: { "content-type": "application/json" }, body })).text();
    expect(await read(withNotice)).toBe(await read(without));
  });

  it("whole: the invalid call is removed and a text block says so", async () => {
    const message = await anthropic(withNotice).messages.create(request());
    expect(message.content.map((block) => block.type)).toEqual(["text", "text"]);
    expect((message.content[1] as { text: string }).text).toContain("write (id toolu_bad)");
  });
});

describe("OpenAI Chat Completions", () => {
  it("streamed: the notice is in the message content", async () => {
    const completion = await openai(withNotice).chat.completions.stream({ model: "m", messages: [{ role: "user", content: "go" }] }).finalChatCompletion();
    const message = completion.choices[0]?.message;
    expect(message?.tool_calls ?? []).toEqual([]);
    expect(message?.content).toMatch(/^Writing\.\n\n\[toolwire: a tool call from this turn was not run.*\n- write \(id call_cut\)/s);
  });

  it("whole: the notice is the message content", async () => {
    const completion = await openai(withNotice).chat.completions.create({ model: "m", messages: [{ role: "user", content: "go" }] });
    expect(completion.choices[0]?.message.content).toMatch(/^\[toolwire: .*write \(id call_bad\)/s);
  });

  it("without the option: no content added", async () => {
    const completion = await openai(without).chat.completions.create({ model: "m", messages: [{ role: "user", content: "go" }] });
    expect(completion.choices[0]?.message.content ?? "").not.toContain("toolwire");
  });
});

describe("the CLI flag", () => {
  it("--withheld-notice turns the notice on", async () => {
    const { startProxyCommand } = await import("../../src/cli/commands/proxy.js");
    const proxy = await startProxyCommand(["--upstream", upstream.url, "--withheld-notice"], { out: () => {}, err: () => {}, cwd: process.cwd() });
    try {
      const completion = await openai(proxy).chat.completions.create({ model: "m", messages: [{ role: "user", content: "go" }] });
      expect(completion.choices[0]?.message.content).toContain("[toolwire:");
    } finally {
      await proxy.close();
    }
  });
});

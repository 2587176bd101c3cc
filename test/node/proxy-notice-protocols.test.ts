import { createAmazonBedrock } from "@ai-sdk/amazon-bedrock";
import { createGoogleGenerativeAI } from "@ai-sdk/google";
import { generateText, streamText, type LanguageModel } from "ai";
import OpenAI from "openai";
import type { ServerResponse } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createByteDecoder } from "../../src/adapters/bytes.js";
import type { FramingName } from "../../src/framing/framer.js";
import { startProxy, type ProxyServer } from "../../src/node/proxy.js";
import type { DecodedTurn, ProviderName } from "../../src/types.js";
import { decodeEventStream } from "../../src/framing/aws-eventstream.js";
import { encodeJsonEventFrame } from "../../src/framing/aws-eventstream-encode.js";
import { b, encodeFrames } from "../helpers/bedrock-events.js";
import { createClaudeOnBedrock } from "../helpers/ai-sdk-versions.js";
import { noticeRig, type NoticeRig, type RecordingUpstream } from "./http-support.js";

/**
 * The withheld-call notice for OpenAI Responses, Gemini (SSE and the JSON-array stream, and
 * `:generateContent`), Bedrock Converse (binary event stream, and whole) and Ollama (NDJSON, and
 * `stream: false`). A scripted upstream sends, per request (`x-case`), a call cut by the output
 * limit, an invalid call, or text alone. The proxy's output is decoded with toolwire's own decoder
 * and, where an SDK is installed, read by it (openai for Responses; the AI SDK for Gemini and
 * Bedrock): the notice arrives as text, the stream stays valid for the client, and the withheld
 * calls are counted in /metrics.
 */

type Case = "cut" | "invalid" | "good";

// ---- OpenAI Responses ----------------------------------------------------------------------

const sse = (events: Array<Record<string, unknown>>): string => events.map((event, i) => `event: ${String(event.type)}\ndata: ${JSON.stringify({ ...event, sequence_number: i })}\n\n`).join("");
const RESPONSE = { id: "resp_1", object: "response", created_at: 1, model: "m", usage: null };
const TEXT_ITEM = { id: "msg_1", type: "message", status: "completed", role: "assistant", content: [{ type: "output_text", text: "Writing.", annotations: [] }] };
const CALL_ARGS: Record<Case, string> = { cut: '{"path": "a.md", "text": "ab', invalid: "not json at all", good: "" };

function responsesStream(which: Case): string {
  const text = [
    { type: "response.created", response: { ...RESPONSE, status: "in_progress", output: [] } },
    { type: "response.output_item.added", output_index: 0, item: { ...TEXT_ITEM, status: "in_progress", content: [] } },
    { type: "response.content_part.added", item_id: "msg_1", output_index: 0, content_index: 0, part: { type: "output_text", text: "", annotations: [] } },
    { type: "response.output_text.delta", item_id: "msg_1", output_index: 0, content_index: 0, delta: "Writing." },
    { type: "response.output_text.done", item_id: "msg_1", output_index: 0, content_index: 0, text: "Writing." },
    { type: "response.content_part.done", item_id: "msg_1", output_index: 0, content_index: 0, part: TEXT_ITEM.content[0] },
    { type: "response.output_item.done", output_index: 0, item: TEXT_ITEM },
  ];
  if (which === "good") return sse([...text, { type: "response.completed", response: { ...RESPONSE, status: "completed", output: [TEXT_ITEM] } }]);
  const call = { id: "fc_1", type: "function_call", call_id: `call_${which}`, name: "write", arguments: "" };
  const args = CALL_ARGS[which];
  const events: Array<Record<string, unknown>> = [
    ...text,
    { type: "response.output_item.added", output_index: 1, item: { ...call, status: "in_progress" } },
    { type: "response.function_call_arguments.delta", item_id: "fc_1", output_index: 1, delta: args },
  ];
  if (which === "cut") events.push({ type: "response.incomplete", response: { ...RESPONSE, status: "incomplete", incomplete_details: { reason: "max_output_tokens" }, output: [TEXT_ITEM, { ...call, arguments: args, status: "incomplete" }] } });
  else {
    const done = { ...call, arguments: args, status: "completed" };
    events.push({ type: "response.function_call_arguments.done", item_id: "fc_1", output_index: 1, arguments: args }, { type: "response.output_item.done", output_index: 1, item: done }, { type: "response.completed", response: { ...RESPONSE, status: "completed", output: [TEXT_ITEM, done] } });
  }
  return sse(events);
}

function responsesWhole(which: Case): unknown {
  const output: unknown[] = [TEXT_ITEM];
  if (which !== "good") output.push({ id: "fc_1", type: "function_call", status: "completed", call_id: `call_${which}`, name: "write", arguments: CALL_ARGS[which] });
  return { ...RESPONSE, status: which === "cut" ? "incomplete" : "completed", ...(which === "cut" ? { incomplete_details: { reason: "max_output_tokens" } } : {}), output };
}

// ---- Gemini --------------------------------------------------------------------------------

const GEMINI_ARGS: Record<Case, unknown> = { cut: '{"path": "a.md", "text": "ab', invalid: "[1]", good: null };

function geminiChunks(which: Case): unknown[] {
  const first = { candidates: [{ content: { role: "model", parts: [{ text: "Writing." }] }, index: 0 }], modelVersion: "gemini-test", responseId: "r-1" };
  const parts = which === "good" ? [{ text: " Done." }] : [{ functionCall: { name: "write", args: GEMINI_ARGS[which] } }];
  const last = { candidates: [{ content: { role: "model", parts }, finishReason: which === "cut" ? "MAX_TOKENS" : "STOP", index: 0 }], usageMetadata: { promptTokenCount: 1, candidatesTokenCount: 2, totalTokenCount: 3 }, modelVersion: "gemini-test", responseId: "r-1" };
  return [first, last];
}

const geminiSse = (which: Case): string => geminiChunks(which).map((chunk) => `data: ${JSON.stringify(chunk)}\r\n\r\n`).join("");
const geminiArray = (which: Case): string => `[${geminiChunks(which).map((chunk) => JSON.stringify(chunk, null, 2)).join(",\r\n")}]`;

function geminiWhole(which: Case): unknown {
  const [first, last] = geminiChunks(which) as Array<{ candidates: Array<{ content: { parts: unknown[] } }> }>;
  const merged = structuredClone(last) as { candidates: Array<{ content: { parts: unknown[] } }> };
  (merged.candidates[0] as { content: { parts: unknown[] } }).content.parts.unshift(...(first?.candidates[0]?.content.parts ?? []));
  return merged;
}

// ---- Bedrock Converse ----------------------------------------------------------------------

const BEDROCK_INPUT: Record<Case, string> = { cut: '{"path": "a.md", "text": "ab', invalid: "not json at all", good: "" };

function bedrockStream(which: Case): Uint8Array {
  const events = [b.messageStart(), b.text(0, "Writing."), b.stop(0)];
  if (which !== "good") events.push(b.toolStart(1, `tooluse_${which}`, "write"), b.input(1, BEDROCK_INPUT[which]));
  if (which === "invalid") events.push(b.stop(1));
  events.push(b.messageStop(which === "cut" ? "max_tokens" : which === "invalid" ? "tool_use" : "end_turn"), b.metadata());
  return encodeFrames(events);
}

function bedrockWhole(which: Case): unknown {
  const content: unknown[] = [{ text: "Writing." }];
  if (which !== "good") content.push({ toolUse: { toolUseId: `tooluse_${which}`, name: "write", input: BEDROCK_INPUT[which] } });
  return { output: { message: { role: "assistant", content } }, stopReason: which === "cut" ? "max_tokens" : which === "invalid" ? "tool_use" : "end_turn", usage: { inputTokens: 1, outputTokens: 2, totalTokens: 3 }, metrics: { latencyMs: 1 } };
}

// ---- Claude on Bedrock (invoke-with-response-stream) ---------------------------------------

function claudeEvents(which: Case): Array<Record<string, unknown>> {
  const events: Array<Record<string, unknown>> = [
    { type: "message_start", message: { id: "msg_1", type: "message", role: "assistant", model: "m", content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 1, output_tokens: 1 } } },
    { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } },
    { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "Writing." } },
    { type: "content_block_stop", index: 0 },
  ];
  if (which !== "good") {
    events.push({ type: "content_block_start", index: 1, content_block: { type: "tool_use", id: `toolu_${which}`, name: "write", input: {} } }, { type: "content_block_delta", index: 1, delta: { type: "input_json_delta", partial_json: CALL_ARGS[which] } });
    if (which === "invalid") events.push({ type: "content_block_stop", index: 1 });
  }
  events.push({ type: "message_delta", delta: { stop_reason: which === "cut" ? "max_tokens" : which === "invalid" ? "tool_use" : "end_turn", stop_sequence: null }, usage: { output_tokens: 5 } }, { type: "message_stop" });
  return events;
}

const claudeStream = (which: Case): Buffer => Buffer.concat(claudeEvents(which).map((event) => encodeJsonEventFrame("chunk", { bytes: Buffer.from(JSON.stringify(event)).toString("base64") })));

// ---- Ollama --------------------------------------------------------------------------------

const OLLAMA_ARGS: Record<Case, string> = { cut: '{"path": "a.md", "text": "ab', invalid: "not json at all", good: "" };
const ollamaLine = (message: Record<string, unknown>, done: boolean, extra: Record<string, unknown> = {}): Record<string, unknown> => ({ model: "qwen3", created_at: "2026-01-01T00:00:00Z", message: { role: "assistant", content: "", ...message }, done, ...extra });

function ollamaLines(which: Case): Array<Record<string, unknown>> {
  const lines = [ollamaLine({ content: "Writing." }, false)];
  if (which !== "good") lines.push(ollamaLine({ tool_calls: [{ function: { name: "write", arguments: OLLAMA_ARGS[which] } }] }, false));
  lines.push(ollamaLine({}, true, { done_reason: which === "cut" ? "length" : "stop", eval_count: 2 }));
  return lines;
}

function ollamaWhole(which: Case): unknown {
  return ollamaLine({ content: "Writing.", ...(which !== "good" ? { tool_calls: [{ function: { name: "write", arguments: OLLAMA_ARGS[which] } }] } : {}) }, true, { done_reason: which === "cut" ? "length" : "stop" });
}

// ---- the upstream and the proxies ----------------------------------------------------------

/** `res` whose `end(body)` writes the body 7 bytes at a time. */
function dribbling(res: ServerResponse): ServerResponse {
  const end = (body: string | Buffer): void => {
    const bytes = typeof body === "string" ? Buffer.from(body) : body;
    let at = 0;
    const next = (): void => {
      if (at >= bytes.length) return void res.end();
      res.write(bytes.subarray(at, (at += 7)));
      setImmediate(next);
    };
    next();
  };
  return new Proxy(res, { get: (target, name) => (name === "end" ? end : (Reflect.get(target, name) as unknown)) }) as ServerResponse;
}

let rig: NoticeRig;
let upstream: RecordingUpstream;
let withNotice: ProxyServer;
let without: ProxyServer;

beforeAll(async () => {
  rig = await noticeRig((seen, plain) => {
    // x-dribble: the body goes out in 7-byte writes, each in its own turn of the event loop.
    const res = seen.headers["x-dribble"] ? dribbling(plain) : plain;
    const which = (seen.headers["x-case"] ?? "cut") as Case;
    const body = JSON.parse(seen.body.toString() || "{}") as { stream?: boolean };
    const path = seen.url.split("?")[0] ?? "";
    const json = (value: unknown): void => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify(value));
    };
    if (path.endsWith("/responses")) {
      if (!body.stream) return json(responsesWhole(which));
      res.writeHead(200, { "content-type": "text/event-stream" });
      return res.end(responsesStream(which));
    }
    if (path.endsWith(":streamGenerateContent")) {
      const alt = seen.url.includes("alt=sse");
      res.writeHead(200, { "content-type": alt ? "text/event-stream" : "application/json" });
      return res.end(alt ? geminiSse(which) : geminiArray(which));
    }
    if (path.endsWith(":generateContent")) return json(geminiWhole(which));
    if (path.endsWith("/converse-stream")) {
      res.writeHead(200, { "content-type": "application/vnd.amazon.eventstream" });
      return res.end(Buffer.from(bedrockStream(which)));
    }
    if (path.endsWith("/converse")) return json(bedrockWhole(which));
    if (path.endsWith("/invoke-with-response-stream")) {
      res.writeHead(200, { "content-type": "application/vnd.amazon.eventstream" });
      return res.end(claudeStream(which));
    }
    if (path.endsWith("/api/chat")) {
      if (body.stream === false) return json(ollamaWhole(which));
      res.writeHead(200, { "content-type": "application/x-ndjson" });
      return res.end(ollamaLines(which).map((line) => `${JSON.stringify(line)}\n`).join(""));
    }
    res.writeHead(404, { "content-type": "application/json" });
    res.end("{}");
  });
  ({ upstream, withNotice, without } = rig);
});
afterAll(async () => {
  await rig?.close();
});

/** The raw response of a POST through `proxy`. */
async function post(proxy: ProxyServer, path: string, which: Case, body: Record<string, unknown>, dribble = false): Promise<{ bytes: Uint8Array; contentType: string; status: number }> {
  const response = await fetch(`${proxy.url}${path}`, { method: "POST", headers: { "content-type": "application/json", "x-case": which, ...(dribble ? { "x-dribble": "1" } : {}) }, body: JSON.stringify({ model: "m", ...body }) });
  return { bytes: new Uint8Array(await response.arrayBuffer()), contentType: response.headers.get("content-type") ?? "", status: response.status };
}

/** The proxy's output as toolwire's own decoder reads it. */
function decoded(provider: ProviderName, bytes: Uint8Array, framing?: FramingName): DecodedTurn {
  const decoder = createByteDecoder(provider, framing ? { framing } : {});
  decoder.push(bytes);
  return decoder.finish();
}

const NOTICE = /\[toolwire: a tool call from this turn was not run, because it did not arrive complete and valid:\n- write \(id [^)]+\): /;

/** The notice says why: cut, or invalid with a code. */
function expectNotice(text: string, which: Exclude<Case, "good">): void {
  expect(text).toMatch(NOTICE);
  if (which === "cut") expect(text).toContain("its arguments were cut off before they were complete");
  else expect(text).toMatch(/its arguments were not valid \([a-z_]+\)/);
  expect(text).toContain("Call it again, with complete arguments, if still needed.]");
}

interface StreamForm {
  name: string;
  provider: ProviderName;
  path: string;
  body: Record<string, unknown>;
  framing?: FramingName;
  /** What the unit that closes the message holds: the notice must come before it. */
  terminal: RegExp;
  /** The body as text to look for the notice and the terminal unit in (default: its bytes as latin1). */
  view?: (bytes: Uint8Array) => string;
}

/** Claude's invoke stream: the Messages events inside its chunk frames, one per line. */
function chunkEvents(bytes: Uint8Array): string {
  return decodeEventStream(bytes)
    .map((message) => Buffer.from((JSON.parse(Buffer.from(message.payload).toString()) as { bytes: string }).bytes, "base64").toString())
    .join("\n");
}

const STREAMS: StreamForm[] = [
  { name: "OpenAI Responses (SSE)", provider: "openai-responses", path: "/v1/responses", body: { stream: true, input: "go" }, terminal: /"type":"response\.(?:completed|incomplete)"/ },
  { name: "Gemini streamGenerateContent (alt=sse)", provider: "gemini", path: "/v1beta/models/m:streamGenerateContent?alt=sse", body: { contents: [] }, terminal: /"finishReason":/ },
  { name: "Gemini streamGenerateContent (JSON array)", provider: "gemini", path: "/v1beta/models/m:streamGenerateContent", body: { contents: [] }, framing: "json-array", terminal: /"finishReason":/ },
  { name: "Bedrock ConverseStream (event stream)", provider: "bedrock", path: "/model/m/converse-stream", body: { messages: [] }, terminal: /messageStop/ },
  { name: "Claude on Bedrock invoke-with-response-stream", provider: "anthropic", path: "/model/m/invoke-with-response-stream", body: { messages: [] }, framing: "aws-eventstream", terminal: /"type":"message_delta"/, view: chunkEvents },
  { name: "Ollama /api/chat (NDJSON)", provider: "ollama", path: "/api/chat", body: { stream: true, messages: [] }, terminal: /"done":true/ },
];

const WHOLES: Array<{ name: string; provider: ProviderName; path: string; body: Record<string, unknown>; text: (body: Record<string, unknown>) => string; calls: (body: Record<string, unknown>) => number }> = [
  {
    name: "OpenAI Responses (whole)",
    provider: "openai-responses",
    path: "/v1/responses",
    body: { stream: false, input: "go" },
    text: (body) => (body.output as Array<{ type: string; content?: Array<{ text: string }> }>).flatMap((item) => (item.type === "message" ? (item.content ?? []).map((part) => part.text) : [])).join(""),
    calls: (body) => (body.output as Array<{ type: string }>).filter((item) => item.type === "function_call").length,
  },
  {
    name: "Gemini generateContent",
    provider: "gemini",
    path: "/v1beta/models/m:generateContent",
    body: { contents: [] },
    text: (body) => ((body.candidates as Array<{ content: { parts: Array<{ text?: string }> } }>)[0]?.content.parts ?? []).map((part) => part.text ?? "").join(""),
    calls: (body) => ((body.candidates as Array<{ content: { parts: Array<{ functionCall?: unknown }> } }>)[0]?.content.parts ?? []).filter((part) => part.functionCall).length,
  },
  {
    name: "Bedrock Converse",
    provider: "bedrock",
    path: "/model/m/converse",
    body: { messages: [] },
    text: (body) => ((body.output as { message: { content: Array<{ text?: string }> } }).message.content ?? []).map((block) => block.text ?? "").join(""),
    calls: (body) => (body.output as { message: { content: Array<{ toolUse?: unknown }> } }).message.content.filter((block) => block.toolUse).length,
  },
  {
    name: "Ollama /api/chat (stream: false)",
    provider: "ollama",
    path: "/api/chat",
    body: { stream: false, messages: [] },
    text: (body) => (body.message as { content: string }).content,
    calls: (body) => ((body.message as { tool_calls?: unknown[] }).tool_calls ?? []).length,
  },
];

describe.each(STREAMS)("$name, streamed", ({ provider, path, body, framing, terminal, view }) => {
  it.each(["cut", "invalid", "cut, the upstream's body in 7-byte writes"] as const)("a %s call: withheld, and the notice is text of the turn (toolwire's decoder), before the message's end", async (label) => {
    const which = label.startsWith("cut") ? "cut" : "invalid";
    const out = await post(withNotice, path, which, body, label.includes("7-byte"));
    expect(out.status).toBe(200);
    const raw = view ? view(out.bytes) : Buffer.from(out.bytes).toString("latin1");
    expect(raw.indexOf("[toolwire:")).toBeGreaterThan(0);
    expect(raw.indexOf("[toolwire:")).toBeLessThan(raw.search(terminal));
    const turn = decoded(provider, out.bytes, framing);
    expect(turn.toolCalls.filter((call) => call.arguments !== null)).toEqual([]);
    expect(turn.text.startsWith("Writing.")).toBe(true);
    expectNotice(turn.text, which);
    // The only error is the re-encoder's own stop reason for a turn whose every call was withheld (Gemini, Bedrock).
    expect(turn.diagnostics.filter((diagnostic) => diagnostic.severity === "error" && !diagnostic.code.startsWith("malformed_"))).toEqual([]);
  });

  it("without the option: the call is gone, no text added", async () => {
    const turn = decoded(provider, (await post(without, path, "cut", body)).bytes, framing);
    expect(turn.text).toBe("Writing.");
  });

  it("nothing withheld: the bytes are those without the option", async () => {
    const a = await post(withNotice, path, "good", body);
    const b2 = await post(without, path, "good", body);
    expect(Buffer.from(a.bytes).equals(Buffer.from(b2.bytes))).toBe(true);
  });
});

describe.each(WHOLES)("$name", ({ path, body, text, calls }) => {
  it.each(["cut", "invalid"] as const)("a %s call: removed, and the notice is appended as text", async (which) => {
    const out = await post(withNotice, path, which, body);
    const parsed = JSON.parse(Buffer.from(out.bytes).toString()) as Record<string, unknown>;
    expect(calls(parsed)).toBe(0);
    const all = text(parsed);
    expect(all.startsWith("Writing.")).toBe(true);
    expectNotice(all, which);
  });

  it("nothing withheld: the body is the one without the option", async () => {
    expect(Buffer.from((await post(withNotice, path, "good", body)).bytes).toString()).toBe(Buffer.from((await post(without, path, "good", body)).bytes).toString());
  });
});

/** An AI SDK model's streamed turn: no error, the text then the notice, no tool call; its finish reason. */
async function streamedTurn(model: LanguageModel, which: Exclude<Case, "good">): Promise<string> {
  const errors: unknown[] = [];
  const result = streamText({ model, prompt: "go", maxRetries: 0, onError: ({ error }) => void errors.push(error) });
  const text = await result.text;
  expect(errors).toEqual([]);
  expect(text.startsWith("Writing.")).toBe(true);
  expectNotice(text, which);
  expect(await result.toolCalls).toEqual([]);
  return result.finishReason;
}

describe("the SDKs read the notice as text, and the stream stays valid for them", () => {
  const openai = (proxy: ProxyServer, which: Case) => new OpenAI({ apiKey: "k", baseURL: `${proxy.url}/v1`, maxRetries: 0, logLevel: "off", defaultHeaders: { "x-case": which } });

  it.each(["cut", "invalid"] as const)("openai Responses, streamed (%s): finalResponse() has the notice as a message item, every event in order", async (which) => {
    const stream = openai(withNotice, which).responses.stream({ model: "m", input: "go" });
    const events: Array<{ type: string; sequence_number: number }> = [];
    for await (const event of stream) events.push(event);
    const response = await stream.finalResponse();
    expect(response.output.map((item) => item.type)).toEqual(["message", "message"]);
    expect(response.output_text.startsWith("Writing.")).toBe(true);
    expectNotice(response.output_text, which);
    const numbers = events.map((event) => event.sequence_number);
    expect(numbers).toEqual([...numbers].sort((x, y) => x - y));
    expect(new Set(numbers).size).toBe(numbers.length);
    const added = events.filter((event) => event.type === "response.output_item.added") as unknown as Array<{ output_index: number }>;
    expect(added.map((event) => event.output_index)).toEqual([0, 1]);
  });

  it("openai Responses, whole: output_text has the notice", async () => {
    const response = await openai(withNotice, "cut").responses.create({ model: "m", input: "go", stream: false });
    expect(response.output.map((item) => item.type)).toEqual(["message", "message"]);
    expectNotice(response.output_text, "cut");
  });

  const google = (which: Case) => createGoogleGenerativeAI({ apiKey: "k", baseURL: `${withNotice.url}/v1beta`, headers: { "x-case": which } });

  it.each(["cut", "invalid"] as const)("AI SDK @ai-sdk/google, streamed (%s): the notice is text, no tool call", async (which) => {
    await streamedTurn(google(which)("m"), which);
  });

  it("AI SDK @ai-sdk/google, generateText: the notice is text", async () => {
    const result = await generateText({ model: google("invalid")("m"), prompt: "go", maxRetries: 0 });
    expectNotice(result.text, "invalid");
    expect(result.toolCalls).toEqual([]);
  });

  const bedrock = (which: Case) => createAmazonBedrock({ region: "us-east-1", accessKeyId: "AKIDTOOLWIRETEST", secretAccessKey: "toolwire-test-secret", baseURL: withNotice.url, headers: { "x-case": which } });

  it.each(["cut", "invalid"] as const)("AI SDK @ai-sdk/amazon-bedrock, streamed (%s): the notice is text, the stream ends normally", async (which) => {
    // A turn whose every call was withheld stops with malformed_tool_use, which the SDK reads as "other".
    expect(await streamedTurn(bedrock(which)("m"), which)).toBe(which === "cut" ? "length" : "other");
  });

  it.each(["cut", "invalid"] as const)("AI SDK @ai-sdk/amazon-bedrock/anthropic (Claude, invoke stream, %s): the notice is text", async (which) => {
    const claude = createClaudeOnBedrock({ region: "us-east-1", accessKeyId: "AKIDTOOLWIRETEST", secretAccessKey: "toolwire-test-secret", baseURL: withNotice.url, headers: { "x-case": which } });
    await streamedTurn(claude("m"), which);
  });

  it("AI SDK @ai-sdk/amazon-bedrock, generateText (Converse): the notice is text", async () => {
    const result = await generateText({ model: bedrock("cut")("m"), prompt: "go", maxRetries: 0 });
    expectNotice(result.text, "cut");
  });
});

describe("/metrics counts the withheld calls of every protocol", () => {
  it("toolwire_proxy_withheld_calls_total by provider, streamed and whole", async () => {
    const counting = await startProxy({ upstream: upstream.url });
    try {
      for (const form of [...STREAMS, ...WHOLES]) for (const which of ["cut", "invalid"] as const) await post(counting, form.path, which, form.body);
      const metrics = counting.metrics();
      const total = (provider: string): number => [...metrics.matchAll(new RegExp(`^toolwire_proxy_withheld_calls_total\\{route="default",provider="${provider}",code="[a-z_]+"\\} (\\d+)$`, "gm"))].reduce((sum, match) => sum + Number(match[1]), 0);
      // Per protocol: its stream forms and its whole form, one cut and one invalid call each.
      expect(total("openai-responses")).toBe(4);
      expect(total("gemini")).toBe(6);
      expect(total("bedrock")).toBe(4);
      expect(total("anthropic")).toBe(2);
      expect(total("ollama")).toBe(4);
      expect(metrics).toMatch(/^toolwire_proxy_withheld_calls_total\{route="default",provider="gemini",code="truncated"\} [1-9]/m);
    } finally {
      await counting.close();
    }
  });
});

import { describe, expect, it } from "vitest";
import { repairWholeResponse } from "../../src/reencode/whole.js";
import type { ProviderName } from "../../src/types.js";
import { codes, expectSoundRepair, runnable, wholeRecords } from "./whole-support.js";

/**
 * `repairWholeResponse`: non-streamed bodies of the six protocols, decoded by the stream decoders
 * and rewritten only where a call was not decoded as sent. Well-formed bodies of each protocol's
 * documented shape (testdata/whole, hand-written; Ollama's inline) come first, then quirk bodies.
 */

describe("non-streamed bodies of testdata/whole", () => {
  const records = wholeRecords();

  it("the files are there (one per protocol at least)", () => {
    expect(new Set(records.map((record) => record.provider))).toEqual(new Set(["anthropic", "openai-chat", "openai-responses", "gemini"]));
  });

  for (const record of records) {
    const vertex = record.url.includes("aiplatform.googleapis.com");
    // The Gemini API sends calls without ids: toolwire adds its own (as for streams), except on Vertex.
    const idless = record.provider === "gemini" && !vertex && record.body.includes("functionCall");
    it(`${record.file} ${record.sequence}: ${idless ? "calls without ids get toolwire's ids, nothing else changes" : "well-formed: the very same object comes back"}`, () => {
      const body = JSON.parse(record.body) as Record<string, unknown>;
      const repair = expectSoundRepair(record.provider, body, { addMissingIds: !vertex });
      if (!idless) {
        expect(repair.changed).toBe(false);
        expect(repair.body).toBe(body);
        expect(repair.repairs).toEqual([]);
        return;
      }
      expect(repair.changed).toBe(true);
      expect(codes(repair)).toEqual([
        ["rewritten", "call_id_minted"],
        ["rewritten", "call_id_minted"],
      ]);
      const parts = (repair.body as { candidates: Array<{ content: { parts: Array<Record<string, unknown>> } }> }).candidates[0]?.content.parts ?? [];
      const sentParts = (body as { candidates: Array<{ content: { parts: Array<Record<string, unknown>> } }> }).candidates[0]?.content.parts ?? [];
      // Only the ids were added: every other field (thoughtSignature, args) is as sent.
      expect(parts.map(({ functionCall, ...rest }) => [rest, { ...(functionCall as object), id: undefined }])).toEqual(sentParts.map(({ functionCall, ...rest }) => [rest, { ...(functionCall as object), id: undefined }]));
      expect(parts.map((part) => (part.functionCall as { id: string }).id)).toEqual(repair.turn?.toolCalls.map((call) => call.id));
    });
  }

  it("Claude on Bedrock /invoke is read as Messages JSON", () => {
    const record = records.find((candidate) => candidate.url.endsWith("/invoke") && candidate.body.includes("tool_use"));
    const repair = repairWholeResponse("anthropic", JSON.parse(record?.body ?? "null"));
    expect(runnable(repair.turn)).toEqual([{ id: "toolu_bdrk_01b6UtfjOYdOuDDqVCGeG71D", name: "tide_times", arguments: { harbour: "Bergen,Norway" } }]);
  });

  it("Ollama stream:false (a qwen3 reply, hand-written): the call sent without an id gets toolwire's, as the stream re-encoder gives it", () => {
    // Ollama's /api/chat answer with stream:false: a thinking model's <think> text leaks into
    // content, and the call comes without an id and with arguments {} (a tool without parameters).
    const body = {
      model: "qwen3:8b",
      created_at: "2026-04-17T08:21:54.309512Z",
      message: {
        role: "assistant",
        content: "<think>\nThe user wants to know which moon phase it is tonight. There is a tool for that, moonPhase, and it takes no arguments, so I can call it right away.\n</think>\n\n",
        tool_calls: [{ function: { name: "moonPhase", arguments: {} } }],
      },
      done_reason: "stop",
      done: true,
      total_duration: 2718403250,
      load_duration: 31877125,
      prompt_eval_count: 118,
      prompt_eval_duration: 402117875,
      eval_count: 94,
      eval_duration: 2270061958,
    };
    const repair = expectSoundRepair("ollama", body);
    expect(codes(repair)).toEqual([["rewritten", "call_id_minted"]]);
    const repaired = repair.body as typeof body;
    expect(repaired.message.tool_calls).toEqual([{ ...body.message.tool_calls[0], id: repair.turn?.toolCalls[0]?.id }]);
    // The <think> text leaking into content is the model's; it stays as sent.
    expect(repaired.message.content).toBe(body.message.content);
  });
});

describe("Anthropic Messages (and Bedrock /invoke)", () => {
  const message = (content: unknown[], stopReason = "tool_use"): Record<string, unknown> => ({
    id: "msg_01",
    type: "message",
    role: "assistant",
    model: "claude-sonnet-4-5",
    content,
    stop_reason: stopReason,
    stop_sequence: null,
    usage: { input_tokens: 120, output_tokens: 80 },
  });
  const text = { type: "text", text: "Let me check both." };
  const call = (id: string, name: string, input: unknown): Record<string, unknown> => ({ type: "tool_use", id, name, input });

  it("a duplicate id (a compatible server numbering per tool) gets a minted id; the first keeps its own", () => {
    const body = message([text, call("toolu_1", "read_file", { path: "a.ts" }), call("toolu_1", "read_file", { path: "b.ts" })]);
    const repair = expectSoundRepair("anthropic", body);
    expect(codes(repair)).toEqual([["rewritten", "minted_id"]]);
    const content = (repair.body as { content: Array<Record<string, unknown>> }).content;
    expect(content[0]).toBe(text);
    expect(content[1]).toBe((body.content as unknown[])[1]);
    expect(content[2]).toEqual({ type: "tool_use", id: "toolu_1_tw2", name: "read_file", input: { path: "b.ts" } });
    expect(repair.repairs[0]).toMatchObject({ stage: "response", provider: "anthropic", id: "toolu_1_tw2", providerId: "toolu_1", callIndex: 1 });
  });

  it("stop_reason max_tokens with a tool_use last: the cut call is withheld, the stop reason stays max_tokens", () => {
    const body = message([text, call("toolu_1", "write_file", { path: "notes.md", content: "# Plan\n\n1. Read the" })], "max_tokens");
    const repair = expectSoundRepair("anthropic", body);
    expect(codes(repair)).toEqual([["withheld", "truncated"]]);
    expect(repair.body).toEqual({ ...body, content: [text] });
    expect(repair.turn?.toolCalls[0]?.error?.cause).toBe("max_tokens");
  });

  it("stop_reason model_context_window_exceeded cuts the last call as max_tokens does", () => {
    const body = message([call("toolu_1", "read", { path: "a" }), call("toolu_2", "read", { path: "b" })], "model_context_window_exceeded");
    const repair = expectSoundRepair("anthropic", body);
    expect(codes(repair)).toEqual([["withheld", "truncated"]]);
    expect(runnable(repair.turn)).toEqual([{ id: "toolu_1", name: "read", arguments: { path: "a" } }]);
  });

  it("input sent as a JSON string (compatible servers): decoded and sent back as an object; glued objects become two calls", () => {
    const body = message([call("toolu_9", "search", '{"q":"rust"}{"q":"zig"}')]);
    const repair = expectSoundRepair("anthropic", body);
    expect((repair.body as { content: unknown[] }).content).toEqual([
      { type: "tool_use", id: "toolu_9", name: "search", input: { q: "rust" } },
      { type: "tool_use", id: "toolu_9_tw2", name: "search", input: { q: "zig" } },
    ]);
    expect(codes(repair)).toEqual([
      ["rewritten", "split_concatenated_calls"],
      ["rewritten", "input_not_object"],
      ["rewritten", "split_concatenated_calls"],
      ["rewritten", "minted_id"],
    ]);
  });

  it("the only call invalid: withheld, and stop_reason tool_use becomes end_turn", () => {
    const body = message([text, call("toolu_2", "run", "{command: ls -la")]);
    const repair = expectSoundRepair("anthropic", body);
    expect(codes(repair)).toEqual([
      ["withheld", "invalid_json"],
      ["normalized", "stop_reason_without_calls"],
    ]);
    expect(repair.body).toEqual({ ...body, content: [text], stop_reason: "end_turn" });
  });

  it("thinking, server tool blocks and unknown fields pass untouched", () => {
    const thinking = { type: "thinking", thinking: "The user wants…", signature: "EqQBCgIYAh…" };
    const server = { type: "server_tool_use", id: "srvtoolu_1", name: "web_search", input: { query: "x" } };
    const result = { type: "web_search_tool_result", tool_use_id: "srvtoolu_1", content: [] };
    const body: Record<string, unknown> = { ...message([thinking, server, result, call("toolu_3", "f", { a: 1 }), call("toolu_3", "f", { a: 2 })]), container: { id: "c1" } };
    const repaired = expectSoundRepair("anthropic", body).body as { content: unknown[]; container: unknown };
    expect(repaired.content.slice(0, 4)).toEqual((body.content as unknown[]).slice(0, 4));
    expect(repaired.container).toBe(body.container);
  });
});

describe("OpenAI Chat Completions", () => {
  const completion = (toolCalls: unknown[], finish = "tool_calls", content: string | null = null): Record<string, unknown> => ({
    id: "chatcmpl-9x",
    object: "chat.completion",
    created: 1760000000,
    model: "Qwen/Qwen3-32B",
    choices: [{ index: 0, message: { role: "assistant", content, tool_calls: toolCalls }, logprobs: null, finish_reason: finish }],
    usage: { prompt_tokens: 310, completion_tokens: 42, total_tokens: 352 },
  });
  const entry = (id: string | undefined, name: string, args: unknown): Record<string, unknown> => ({ ...(id !== undefined ? { id } : {}), type: "function", function: { name, arguments: args } });

  it("vLLM's Python-literal arguments (hermes parser) are repaired losslessly and re-sent as JSON", () => {
    const body = completion([entry("chatcmpl-tool-1", "get_weather", "{'city': 'Paris', 'metric': True}")]);
    const repair = expectSoundRepair("openai-chat", body);
    expect(codes(repair)).toEqual([
      ["rewritten", "single_quotes"],
      ["rewritten", "python_literals"],
    ]);
    const calls = (repair.body as { choices: Array<{ message: { tool_calls: Array<{ function: { arguments: string } }> } }> }).choices[0]?.message.tool_calls;
    expect(JSON.parse(calls?.[0]?.function.arguments ?? "")).toEqual({ city: "Paris", metric: true });
  });

  it("invalid JSON arguments (an Ollama /v1 model): withheld, finish_reason tool_calls becomes stop", () => {
    const body = completion([entry("call_a1", "get_weather", '{"city": "Paris", "unit": }')]);
    const repair = expectSoundRepair("openai-chat", body);
    expect(codes(repair)).toEqual([
      ["withheld", "invalid_json"],
      ["normalized", "stop_reason_without_calls"],
    ]);
    const choice = (repair.body as { choices: Array<Record<string, unknown>> }).choices[0] as { message: Record<string, unknown>; finish_reason: string };
    expect(choice.message).toEqual({ role: "assistant", content: null });
    expect(choice.finish_reason).toBe("stop");
  });

  it("glued `{..}{..}` arguments (a server that flattened two parallel calls) become two calls", () => {
    const body = completion([entry("call_q", "search", '{"query": "rust"}{"query": "zig"}')]);
    const repair = expectSoundRepair("openai-chat", body);
    expect(runnable(repair.turn)).toEqual([
      { id: "call_q", name: "search", arguments: { query: "rust" } },
      { id: "call_q_tw2", name: "search", arguments: { query: "zig" } },
    ]);
    expect((repair.body as { choices: Array<{ message: { tool_calls: unknown[] } }> }).choices[0]?.message.tool_calls).toHaveLength(2);
  });

  it("duplicate ids (a server counting per tool) and missing ids (SiliconFlow) get toolwire's ids", () => {
    const body = completion([entry("call_0", "add", '{"a":2,"b":3}'), entry("call_0", "multiply", '{"a":2,"b":3}'), entry(undefined, "subtract", '{"a":2,"b":3}')]);
    const repair = expectSoundRepair("openai-chat", body);
    expect(codes(repair)).toEqual([
      ["rewritten", "minted_id"],
      ["rewritten", "call_id_minted"],
    ]);
    const ids = (repair.body as { choices: Array<{ message: { tool_calls: Array<{ id: string }> } }> }).choices[0]?.message.tool_calls.map((call) => call.id);
    expect(ids?.[0]).toBe("call_0");
    expect(new Set(ids).size).toBe(3);
    // The first call was decoded as sent: its entry is the very object that came.
    expect((repair.body as { choices: Array<{ message: { tool_calls: unknown[] } }> }).choices[0]?.message.tool_calls[0]).toBe(((body.choices as Array<{ message: { tool_calls: unknown[] } }>)[0]?.message.tool_calls[0]));
  });

  it('finish_reason "length" with the last call cut: earlier complete calls are kept, the cut one is withheld', () => {
    const body = completion([entry("call_1", "read_file", '{"path": "src/a.ts"}'), entry("call_2", "write_file", '{"path": "src/b.ts", "content": "export const')], "length");
    const repair = expectSoundRepair("openai-chat", body);
    expect(codes(repair)).toEqual([["withheld", "truncated"]]);
    const choice = (repair.body as { choices: Array<{ message: { tool_calls: unknown[] }; finish_reason: string }> }).choices[0];
    expect(choice?.message.tool_calls).toEqual([entry("call_1", "read_file", '{"path": "src/a.ts"}')]);
    expect(choice?.finish_reason).toBe("length");
  });

  it("finish_reason stop with calls (Gemini's compat endpoint) says tool_calls once the calls are rewritten", () => {
    const body = completion([entry(undefined, "lookup", '{"id": 7}')], "stop");
    const repair = expectSoundRepair("openai-chat", body);
    expect(codes(repair)).toEqual([
      ["rewritten", "call_id_minted"],
      ["normalized", "finish_reason_stop_with_tool_calls"],
    ]);
  });
});

describe("OpenAI Responses", () => {
  const response = (output: unknown[], status = "completed", extra: Record<string, unknown> = {}): Record<string, unknown> => ({
    id: "resp_1",
    object: "response",
    created_at: 1760000000,
    status,
    model: "gpt-4.1",
    output,
    usage: { input_tokens: 50, output_tokens: 20, total_tokens: 70 },
    ...extra,
  });
  const item = (id: string, callId: string, name: string, args: string, status = "completed"): Record<string, unknown> => ({ id, type: "function_call", status, arguments: args, call_id: callId, name });

  it("glued arguments become two items, the second with its own item id and call id", () => {
    const body = response([{ id: "rs_1", type: "reasoning", summary: [] }, item("fc_1", "call_1", "lookup", '{"id":1}{"id":2}')]);
    const repair = expectSoundRepair("openai-responses", body);
    const output = (repair.body as { output: Array<Record<string, unknown>> }).output;
    expect(output[0]).toBe((body.output as unknown[])[0]);
    expect(output.slice(1)).toEqual([item("fc_1", "call_1", "lookup", '{"id":1}'), item("fc_1_tw2", "call_1_tw2", "lookup", '{"id":2}')]);
  });

  it("incomplete (max_output_tokens) with the last call cut: withheld", () => {
    const body = response([item("fc_1", "call_1", "write", '{"text": "Once upon', "incomplete")], "incomplete", { incomplete_details: { reason: "max_output_tokens" } });
    const repair = expectSoundRepair("openai-responses", body);
    expect(codes(repair)).toEqual([["withheld", "truncated"]]);
    expect((repair.body as { output: unknown[] }).output).toEqual([]);
  });

  it("a duplicate call_id gets a minted one", () => {
    const body = response([item("fc_1", "call_1", "a", "{}"), item("fc_2", "call_1", "b", "{}")]);
    const repair = expectSoundRepair("openai-responses", body);
    expect(codes(repair)).toEqual([["rewritten", "minted_id"]]);
  });
});

describe("Gemini generateContent", () => {
  const generate = (parts: unknown[], finishReason = "STOP"): Record<string, unknown> => ({
    candidates: [{ content: { role: "model", parts }, finishReason, index: 0 }],
    usageMetadata: { promptTokenCount: 40, candidatesTokenCount: 12, totalTokenCount: 52 },
    modelVersion: "gemini-2.5-flash",
    responseId: "abc123",
  });

  it("args sent as a string that is not JSON (a relay): withheld, and STOP becomes MALFORMED_FUNCTION_CALL", () => {
    const body = generate([{ functionCall: { id: "fc1", name: "get_time", args: 'get_time(tz="UTC")' } }]);
    const repair = expectSoundRepair("gemini", body);
    expect(codes(repair)).toEqual([
      ["withheld", "invalid_json"],
      ["normalized", "finish_reason_without_calls"],
    ]);
    expect((repair.body as { candidates: Array<Record<string, unknown>> }).candidates[0]).toMatchObject({ content: { role: "model", parts: [] }, finishReason: "MALFORMED_FUNCTION_CALL" });
  });

  it("on Vertex (addMissingIds: false) calls without ids stay without; a repaired call keeps its thoughtSignature", () => {
    const body = generate([{ functionCall: { name: "lookup", args: '{"id": 7}' }, thoughtSignature: "c2ln" }, { text: "Checking." }]);
    const repair = expectSoundRepair("gemini", body, { addMissingIds: false });
    expect((repair.body as { candidates: Array<{ content: { parts: unknown[] } }> }).candidates[0]?.content.parts).toEqual([{ functionCall: { name: "lookup", args: { id: 7 } }, thoughtSignature: "c2ln" }, { text: "Checking." }]);
  });

  it("a body without candidates (a blocked prompt) is read and left alone", () => {
    const body = { promptFeedback: { blockReason: "SAFETY" }, usageMetadata: { promptTokenCount: 4 } };
    const repair = repairWholeResponse("gemini", body);
    expect(repair.changed).toBe(false);
    expect(repair.turn?.finishReason).toBe("content_filter");
  });
});

describe("Bedrock Converse", () => {
  const converse = (content: unknown[], stopReason = "tool_use"): Record<string, unknown> => ({
    output: { message: { role: "assistant", content } },
    stopReason,
    usage: { inputTokens: 400, outputTokens: 90, totalTokens: 490 },
    metrics: { latencyMs: 1200 },
  });
  const toolUse = (toolUseId: string, name: string, input: unknown): Record<string, unknown> => ({ toolUse: { toolUseId, name, input } });

  it("a well-formed body comes back as the same object", () => {
    const body = converse([{ text: "Checking." }, toolUse("tooluse_1", "get_weather", { city: "Oslo" })]);
    const repair = expectSoundRepair("bedrock", body);
    expect(repair.body).toBe(body);
  });

  it("max_tokens inside the last toolUse: withheld, the stop reason stays", () => {
    const body = converse([toolUse("tooluse_1", "get_weather", { city: "Oslo" }), toolUse("tooluse_2", "get_weather", { ci: "Ber" })], "max_tokens");
    const repair = expectSoundRepair("bedrock", body);
    expect(codes(repair)).toEqual([["withheld", "truncated"]]);
    expect(repair.body).toEqual(converse([toolUse("tooluse_1", "get_weather", { city: "Oslo" })], "max_tokens"));
  });

  it("every call withheld under tool_use: stopReason becomes malformed_tool_use", () => {
    const body = converse([toolUse("tooluse_1", "run", "not json at all")]);
    const repair = expectSoundRepair("bedrock", body);
    expect((repair.body as { stopReason: string }).stopReason).toBe("malformed_tool_use");
    expect(codes(repair).at(-1)).toEqual(["normalized", "stop_reason_without_calls"]);
  });

  it("a duplicate toolUseId (Kimi on Bedrock numbers per tool) gets a minted id", () => {
    const body = converse([toolUse("functions.glob:0", "glob", { pattern: "*.ts" }), toolUse("functions.glob:0", "glob", { pattern: "*.md" })]);
    const repair = expectSoundRepair("bedrock", body);
    expect(codes(repair)).toEqual([["rewritten", "minted_id"]]);
  });
});

describe("Ollama /api/chat with stream:false", () => {
  const chat = (toolCalls: unknown[]): Record<string, unknown> => ({
    model: "qwen3:8b",
    created_at: "2025-06-23T11:09:03.646108Z",
    message: { role: "assistant", content: "", tool_calls: toolCalls },
    done_reason: "stop",
    done: true,
    eval_count: 30,
    prompt_eval_count: 100,
  });

  it("arguments sent as a string with Python literals: repaired and sent back as an object", () => {
    const body = chat([{ id: "call_x1", function: { index: 0, name: "search", arguments: "{'q': 'ollama', 'exact': False}" } }]);
    const repair = expectSoundRepair("ollama", body);
    expect((repair.body as { message: { tool_calls: unknown[] } }).message.tool_calls).toEqual([{ id: "call_x1", function: { index: 0, name: "search", arguments: { q: "ollama", exact: false } } }]);
    expect(codes(repair).map(([, code]) => code)).toEqual(["single_quotes", "python_literals", "arguments_string"]);
  });

  it("arguments sent as a string that does not parse: withheld, tool_calls left out", () => {
    const body = chat([{ id: "call_x1", function: { index: 0, name: "search", arguments: '{"q": ' } }]);
    const repair = expectSoundRepair("ollama", body);
    expect(codes(repair)).toEqual([["withheld", "invalid_json"]]);
    expect((repair.body as { message: Record<string, unknown> }).message).toEqual({ role: "assistant", content: "" });
  });
});

describe("bodies that are not the protocol's shape", () => {
  it("come back unchanged, reported as classified, never thrown", () => {
    for (const [provider, body] of [
      ["openai-chat", { error: { message: "overloaded" } }],
      ["anthropic", "just text"],
      ["bedrock", { output: { message: null } }],
      ["openai-responses", [1, 2]],
      ["ollama", null],
      ["gemini", 42],
    ] as const) {
      const repair = repairWholeResponse(provider, body);
      expect(repair.body).toBe(body);
      expect(repair.changed).toBe(false);
      expect(repair.turn).toBeNull();
      expect(codes(repair)).toEqual([["classified", "whole_response_unexpected_shape"]]);
    }
  });
});

describe("less common shapes", () => {
  const chat = (choices: unknown[]): Record<string, unknown> => ({ id: "chatcmpl-n", object: "chat.completion", model: "m", choices });
  const fn = (id: string, name: string, args: string): Record<string, unknown> => ({ id, type: "function", function: { name, arguments: args } });

  it("Chat with n > 1: each choice keeps its calls; ids are unique across the turn", () => {
    const body = chat([
      { index: 0, message: { role: "assistant", content: null, tool_calls: [fn("call_a", "f", "{}")] }, finish_reason: "tool_calls" },
      { index: 1, message: { role: "assistant", content: null, tool_calls: [fn("call_a", "f", "{'x': 1}")] }, finish_reason: "tool_calls" },
    ]);
    const repair = expectSoundRepair("openai-chat", body);
    const choices = (repair.body as { choices: unknown[] }).choices;
    expect(choices[0]).toBe((body.choices as unknown[])[0]);
    expect(choices[1]).toMatchObject({ index: 1, message: { tool_calls: [{ id: "call_a_tw2", function: { name: "f", arguments: '{"x":1}' } }] } });
  });

  it("Chat's legacy function_call is repaired in place; a well-formed one passes", () => {
    const legacy = (args: string): Record<string, unknown> => chat([{ index: 0, message: { role: "assistant", content: null, function_call: { name: "f", arguments: args } }, finish_reason: "function_call" }]);
    // The legacy field has no id: the id toolwire mints hashes the text as sent, so it is compared apart.
    expect(expectSoundRepair("openai-chat", legacy('{"x":1}')).changed).toBe(false);
    const repair = expectSoundRepair("openai-chat", legacy("{'x': 1}"), {}, { ids: false });
    expect((repair.body as { choices: Array<{ message: unknown }> }).choices[0]?.message).toEqual({ role: "assistant", content: null, function_call: { name: "f", arguments: '{"x":1}' } });
  });

  it("custom (free-text) tools pass as sent in Chat and Responses", () => {
    const chatBody = chat([{ index: 0, message: { role: "assistant", content: null, tool_calls: [{ id: "ct_1", type: "custom", custom: { name: "apply_patch", input: "*** Begin Patch\n*** End Patch" } }] }, finish_reason: "tool_calls" }]);
    expect(expectSoundRepair("openai-chat", chatBody).body).toBe(chatBody);
    const responsesBody = { id: "r", object: "response", status: "completed", output: [{ id: "ctc_1", type: "custom_tool_call", call_id: "call_c", name: "apply_patch", input: "*** Begin Patch", status: "completed" }] };
    const repair = expectSoundRepair("openai-responses", responsesBody);
    expect(repair.body).toBe(responsesBody);
    expect(runnable(repair.turn)).toEqual([{ id: "call_c", name: "apply_patch", arguments: { input: "*** Begin Patch" } }]);
  });

  it("a Responses `multi_tool_use.parallel` wrapper becomes the items of the calls it wraps", () => {
    const wrapper = { id: "fc_1", type: "function_call", call_id: "call_w", name: "multi_tool_use.parallel", arguments: JSON.stringify({ tool_uses: [{ recipient_name: "functions.a", parameters: { x: 1 } }, { recipient_name: "functions.b", parameters: { y: 2 } }] }), status: "completed" };
    const repair = expectSoundRepair("openai-responses", { id: "r", object: "response", status: "completed", output: [wrapper] });
    expect((repair.body as { output: unknown[] }).output).toEqual([
      { ...wrapper, call_id: "call_w_0", name: "a", arguments: '{"x":1}' },
      { ...wrapper, id: "fc_1_tw2", call_id: "call_w_1", name: "b", arguments: '{"y":2}' },
    ]);
  });

  it("calls over limits.maxCallsPerTurn are passed on as sent, as streams do", () => {
    const body = chat([{ index: 0, message: { role: "assistant", content: null, tool_calls: [fn("a", "f", "{'x': 1}"), fn("b", "g", "{}"), fn("c", "h", "{'bad'")] }, finish_reason: "tool_calls" }]);
    const repair = repairWholeResponse("openai-chat", body, { limits: { maxCallsPerTurn: 2 } });
    const calls = (repair.body as { choices: Array<{ message: { tool_calls: unknown[] } }> }).choices[0]?.message.tool_calls;
    expect(calls?.[2]).toBe((body.choices as Array<{ message: { tool_calls: unknown[] } }>)[0]?.message.tool_calls[2]);
    expect(repair.turn?.diagnostics.map((diagnostic) => diagnostic.code)).toContain("too_many_calls");
  });

  it("a call nested deeper than any call may is withheld alone, in any protocol, and nothing throws", () => {
    let deep: Record<string, unknown> = {};
    for (let i = 0; i < 20_000; i++) deep = { x: deep };
    const fine = { ok: true };
    const bodies: Array<[ProviderName, Record<string, unknown>]> = [
      ["anthropic", { type: "message", content: [{ type: "tool_use", id: "a", name: "f", input: deep }, { type: "tool_use", id: "b", name: "g", input: fine }], stop_reason: "tool_use" }],
      ["openai-chat", chat([{ index: 0, message: { role: "assistant", tool_calls: [{ id: "a", type: "function", function: { name: "f", arguments: deep } }, fn("b", "g", '{"ok":true}')] }, finish_reason: "tool_calls" }])],
      ["openai-responses", { status: "completed", output: [{ type: "function_call", id: "fa", call_id: "a", name: "f", arguments: deep }, { type: "function_call", id: "fb", call_id: "b", name: "g", arguments: '{"ok":true}' }] }],
      ["bedrock", { output: { message: { role: "assistant", content: [{ toolUse: { toolUseId: "a", name: "f", input: deep } }, { toolUse: { toolUseId: "b", name: "g", input: fine } }] } }, stopReason: "tool_use" }],
      ["gemini", { candidates: [{ content: { parts: [{ functionCall: { id: "a", name: "f", args: deep } }, { functionCall: { id: "b", name: "g", args: fine } }] }, finishReason: "STOP" }] }],
      ["ollama", { model: "m", message: { role: "assistant", content: "", tool_calls: [{ id: "a", function: { name: "f", arguments: deep } }, { id: "b", function: { name: "g", arguments: fine } }] }, done: true }],
    ];
    for (const [provider, body] of bodies) {
      const repair = repairWholeResponse(provider, body);
      expect(repair.changed).toBe(true);
      // Its sibling is still checked and delivered.
      expect(runnable(repair.turn).map((call) => call.id)).toEqual(["b"]);
      expect(repair.repairs.some((report) => report.action === "withheld" && (report.code === "event_too_deep" || report.code === "too_deep"))).toBe(true);
    }
  });
});

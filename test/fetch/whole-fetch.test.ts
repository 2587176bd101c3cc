import { describe, expect, it } from "vitest";
import { createRepairingFetch } from "../../src/fetch/index.js";
import { routeOf } from "../../src/fetch/routes.js";
import { type RepairReport } from "../../src/reencode/types.js";
import { repairWholeResponse } from "../../src/reencode/whole.js";
import type { DecodedTurn, ProviderName } from "../../src/types.js";
import { anthropicDuplicateIds, runnable, wholeRecords } from "../reencode/whole-support.js";

/**
 * Non-streamed JSON responses through `createRepairingFetch`: read whole, repaired by
 * `repairWholeResponse`, delivered as a new response, or as the very response that came when
 * nothing changed.
 */

function answering(body: string, contentType = "application/json", headers: Record<string, string> = {}): { fetch: (input: RequestInfo | URL, init?: RequestInit) => Promise<Response>; responses: Response[] } {
  const responses: Response[] = [];
  return {
    responses,
    fetch: async () => {
      const response = new Response(body, { status: 200, statusText: "OK", headers: { "content-type": contentType, "content-length": String(new TextEncoder().encode(body).length), ...headers } });
      responses.push(response);
      return response;
    },
  };
}

function observed(fetchOptions: { fetch: (input: RequestInfo | URL, init?: RequestInit) => Promise<Response> }, repairs?: { responses?: boolean }) {
  const reports: RepairReport[] = [];
  const turns: Array<{ turn: DecodedTurn; provider: ProviderName; repairs: readonly RepairReport[] }> = [];
  const repairing = createRepairingFetch({
    ...fetchOptions,
    ...(repairs ? { repairs } : {}),
    onRepair: (report) => reports.push(report),
    onTurn: (turn, info) => turns.push({ turn, ...info }),
  });
  return { repairing, reports, turns };
}

const post = (body: unknown): RequestInit => ({ method: "POST", headers: { "content-type": "application/json", authorization: "Bearer sk-test" }, body: JSON.stringify(body) });

describe("routes: what the URL says about the response", () => {
  it("stream, whole, or either (the request's stream field and the content type decide)", () => {
    const form = (url: string): string | undefined => routeOf(url)?.response;
    expect(form("https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:generateContent")).toBe("whole");
    expect(form("https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse")).toBe("stream");
    expect(form("https://bedrock-runtime.us-east-1.amazonaws.com/model/amazon.nova-pro-v1:0/converse")).toBe("whole");
    expect(form("https://bedrock-runtime.us-east-1.amazonaws.com/model/amazon.nova-pro-v1:0/converse-stream")).toBe("stream");
    expect(routeOf("https://bedrock-runtime.us-east-1.amazonaws.com/model/us.anthropic.claude-sonnet-4-5-20250929-v1%3A0/invoke")).toMatchObject({ provider: "anthropic", response: "whole", reencode: true });
    expect(form("https://bedrock-runtime.us-east-1.amazonaws.com/model/x/invoke-with-response-stream")).toBe("stream");
    for (const url of ["https://api.anthropic.com/v1/messages", "https://api.openai.com/v1/chat/completions", "https://api.openai.com/v1/responses", "http://localhost:11434/api/chat"]) expect(form(url)).toBe("either");
  });
});

describe("non-streamed bodies of testdata/whole through the repairing fetch", () => {
  for (const record of wholeRecords()) {
    it(`${record.file} ${record.sequence}`, async () => {
      const base = answering(record.body, record.contentType);
      const { repairing, reports, turns } = observed(base);
      const response = await repairing(record.url, post({ model: "m", messages: [] }));
      const expected = repairWholeResponse(record.provider, JSON.parse(record.body), { addMissingIds: !record.url.includes("aiplatform.googleapis.com") });
      expect(turns).toHaveLength(1);
      expect(runnable(turns[0]?.turn ?? null)).toEqual(runnable(expected.turn));
      if (!expected.changed) {
        // Nothing to fix: the response that came, its bytes untouched.
        expect(response).toBe(base.responses[0]);
        expect(await response.text()).toBe(record.body);
        expect(reports.filter((report) => report.stage === "response")).toEqual([]);
        return;
      }
      expect(await response.json()).toEqual(expected.body);
      expect(response.headers.get("content-length")).toBeNull();
      expect(reports.filter((report) => report.stage === "response")).toEqual(expected.repairs);
    });
  }
});

describe("well-formed bodies of every protocol pass byte for byte", () => {
  // Pretty-printed, with escapes a re-serialization would change: only the original bytes pass this.
  const bodies: Array<[string, string, unknown]> = [
    ["anthropic", "https://api.anthropic.com/v1/messages", { id: "msg_1", type: "message", role: "assistant", content: [{ type: "text", text: "caf\u00e9" }, { type: "tool_use", id: "toolu_1", name: "f", input: { a: 1.0 } }], stop_reason: "tool_use", stop_sequence: null, usage: { input_tokens: 1, output_tokens: 1 } }],
    ["openai-chat", "https://api.openai.com/v1/chat/completions", { id: "c", object: "chat.completion", choices: [{ index: 0, message: { role: "assistant", content: null, tool_calls: [{ id: "call_1", type: "function", function: { name: "f", arguments: '{"a": 1.0}' } }] }, finish_reason: "tool_calls" }] }],
    ["openai-responses", "https://api.openai.com/v1/responses", { id: "r", object: "response", status: "completed", output: [{ id: "fc_1", type: "function_call", status: "completed", call_id: "call_1", name: "f", arguments: '{"a": 1.0}' }] }],
    ["gemini", "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:generateContent", { candidates: [{ content: { role: "model", parts: [{ functionCall: { id: "fc_1", name: "f", args: { a: 1.0 } } }] }, finishReason: "STOP" }] }],
    ["bedrock", "https://bedrock-runtime.us-east-1.amazonaws.com/model/amazon.nova-pro-v1:0/converse", { output: { message: { role: "assistant", content: [{ text: "caf\u00e9" }, { toolUse: { toolUseId: "tooluse_1", name: "f", input: { a: 1.0 } } }] } }, stopReason: "tool_use", usage: { inputTokens: 1, outputTokens: 1, totalTokens: 2 }, metrics: { latencyMs: 9 } }],
    ["ollama", "http://localhost:11434/api/chat", { model: "qwen3", created_at: "2025-01-01T00:00:00Z", message: { role: "assistant", content: "", tool_calls: [{ id: "call_1", function: { index: 0, name: "f", arguments: { a: 1.0 } } }] }, done: true, done_reason: "stop" }],
  ];
  for (const [protocol, url, value] of bodies) {
    it(protocol, async () => {
      const text = JSON.stringify(value, null, 2).replace(/\\\\u00e9/g, "\\u00e9").replace(/: 1(?=[,\n }])/g, ": 1.0");
      expect(text).toMatch(/: 1\.0/);
      const base = answering(text);
      const { repairing, turns } = observed(base);
      const response = await repairing(url, post({ model: "m" }));
      expect(response).toBe(base.responses[0]);
      expect(await response.text()).toBe(text);
      expect(runnable(turns[0]?.turn ?? null)).toEqual([{ id: expect.any(String), name: "f", arguments: { a: 1 } }]);
    });
  }
});

describe("a quirk per protocol, repaired through the repairing fetch", () => {
  const cases: Array<{ protocol: string; url: string; body: Record<string, unknown>; contentType?: string; expectCodes: string[]; check: (body: Record<string, unknown>) => void }> = [
    {
      protocol: "Anthropic Messages (stream off): a duplicate tool_use id",
      url: "https://api.anthropic.com/v1/messages",
      body: anthropicDuplicateIds("msg_1"),
      expectCodes: ["minted_id"],
      check: (body) => expect((body.content as Array<{ id: string }>).map((block) => block.id)).toEqual(["toolu_1", "toolu_1_tw2"]),
    },
    {
      protocol: "Claude on Bedrock /invoke: max_tokens inside the tool_use",
      url: "https://bedrock-runtime.us-east-1.amazonaws.com/model/us.anthropic.claude-sonnet-4-5-20250929-v1%3A0/invoke",
      body: { id: "msg_bdrk_1", type: "message", role: "assistant", model: "claude-sonnet-4-5", content: [{ type: "text", text: "Writing." }, { type: "tool_use", id: "toolu_bdrk_1", name: "write", input: { text: "Once" } }], stop_reason: "max_tokens", stop_sequence: null, usage: { input_tokens: 1, output_tokens: 1 } },
      expectCodes: ["truncated"],
      check: (body) => expect(body.content).toEqual([{ type: "text", text: "Writing." }]),
    },
    {
      protocol: "Chat Completions (stream off): vLLM arguments that are not JSON",
      url: "http://localhost:8000/v1/chat/completions",
      body: { id: "chatcmpl-1", object: "chat.completion", model: "Qwen/Qwen3-8B", choices: [{ index: 0, message: { role: "assistant", content: null, tool_calls: [{ id: "chatcmpl-tool-1", type: "function", function: { name: "get_weather", arguments: '{"city": "Paris", "unit": }' } }] }, finish_reason: "tool_calls" }] },
      expectCodes: ["invalid_json", "stop_reason_without_calls"],
      check: (body) => expect((body.choices as Array<Record<string, unknown>>)[0]).toMatchObject({ message: { role: "assistant", content: null }, finish_reason: "stop" }),
    },
    {
      protocol: "Responses (stream off): glued arguments",
      url: "https://api.openai.com/v1/responses",
      body: { id: "resp_1", object: "response", status: "completed", output: [{ id: "fc_1", type: "function_call", status: "completed", call_id: "call_1", name: "lookup", arguments: '{"id":1}{"id":2}' }] },
      expectCodes: ["split_concatenated_calls", "split_concatenated_calls", "minted_id"],
      check: (body) => expect((body.output as Array<{ call_id: string }>).map((item) => item.call_id)).toEqual(["call_1", "call_1_tw2"]),
    },
    {
      protocol: "Gemini :generateContent: calls without ids",
      url: "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:generateContent",
      contentType: "application/json; charset=UTF-8",
      body: { candidates: [{ content: { role: "model", parts: [{ functionCall: { name: "add", args: { a: 2, b: 3 } } }] }, finishReason: "STOP" }], responseId: "r1" },
      expectCodes: ["call_id_minted"],
      check: (body) => expect(JSON.stringify(body)).toMatch(/"id":"gemini_tw_/),
    },
    {
      protocol: "Bedrock /converse: the only toolUse invalid",
      url: "https://bedrock-runtime.us-east-1.amazonaws.com/model/amazon.nova-pro-v1:0/converse",
      body: { output: { message: { role: "assistant", content: [{ toolUse: { toolUseId: "tooluse_1", name: "run", input: "rm -rf {" } }] } }, stopReason: "tool_use", usage: { inputTokens: 1, outputTokens: 1, totalTokens: 2 } },
      expectCodes: ["invalid_json", "stop_reason_without_calls"],
      check: (body) => expect(body.stopReason).toBe("malformed_tool_use"),
    },
    {
      protocol: "Ollama /api/chat stream:false: a call without an id, arguments as a string",
      url: "http://localhost:11434/api/chat",
      contentType: "application/json; charset=utf-8",
      body: { model: "llama3.2", created_at: "2025-01-01T00:00:00Z", message: { role: "assistant", content: "", tool_calls: [{ function: { name: "getTime", arguments: '{"tz": "UTC"}' } }] }, done: true, done_reason: "stop" },
      expectCodes: ["call_id_minted", "arguments_string"],
      check: (body) => expect((body.message as { tool_calls: Array<{ function: { arguments: unknown } }> }).tool_calls[0]?.function.arguments).toEqual({ tz: "UTC" }),
    },
  ];

  for (const { protocol, url, body, contentType, expectCodes, check } of cases) {
    it(protocol, async () => {
      const { repairing, reports, turns } = observed(answering(JSON.stringify(body), contentType, { "content-encoding": "identity" }));
      const response = await repairing(url, post({ model: "m", stream: false, messages: [{ role: "user", content: "go" }] }));
      expect(response.status).toBe(200);
      expect(response.statusText).toBe("OK");
      expect(response.headers.get("content-type")).toBe(contentType ?? "application/json");
      expect(response.headers.get("content-length")).toBeNull();
      expect(response.headers.get("content-encoding")).toBeNull();
      const repaired = (await response.json()) as Record<string, unknown>;
      check(repaired);
      const responseReports = reports.filter((report) => report.stage === "response");
      expect(responseReports.map((report) => report.code)).toEqual(expectCodes);
      expect(turns).toHaveLength(1);
      expect(turns[0]?.repairs).toEqual(reports);
      // The client gets the calls toolwire decoded from the original.
      expect(runnable(repairWholeResponse(turns[0]?.provider as ProviderName, repaired).turn)).toEqual(runnable(turns[0]?.turn ?? null));
    });
  }

  it("a Vertex URL: no id is added to a call sent without one (the body passes as it came)", async () => {
    const body = JSON.stringify({ candidates: [{ content: { role: "model", parts: [{ functionCall: { name: "add", args: { a: 2 } } }] }, finishReason: "STOP" }] });
    const base = answering(body);
    const { repairing } = observed(base);
    const response = await repairing("https://us-east5-aiplatform.googleapis.com/v1/projects/p/locations/us-east5/publishers/google/models/gemini-2.5-flash:generateContent", post({}));
    expect(response).toBe(base.responses[0]);
    expect(await response.text()).toBe(body);
  });
});

describe("what the whole path leaves alone", () => {
  const quirky = JSON.stringify({ id: "c", object: "chat.completion", choices: [{ index: 0, message: { role: "assistant", tool_calls: [{ id: "a", type: "function", function: { name: "f", arguments: "{bad" } }] }, finish_reason: "tool_calls" }] });

  it("repairs.responses: false turns it off", async () => {
    const base = answering(quirky);
    const { repairing, turns } = observed(base, { responses: false });
    const response = await repairing("https://api.openai.com/v1/chat/completions", post({ model: "m" }));
    expect(response).toBe(base.responses[0]);
    expect(await response.text()).toBe(quirky);
    expect(turns).toEqual([]);
  });

  it("a body that says JSON but does not parse passes as it came, reported as classified", async () => {
    const base = answering('{"choices": [ cut');
    const { repairing, reports, turns } = observed(base);
    const response = await repairing("https://api.openai.com/v1/chat/completions", post({ model: "m" }));
    expect(response).toBe(base.responses[0]);
    expect(await response.text()).toBe('{"choices": [ cut');
    expect(reports.map((report) => [report.stage, report.action, report.code])).toEqual([["response", "classified", "whole_response_not_json"]]);
    expect(turns).toEqual([]);
  });

  it("JSON of another shape (an error object sent with 200) passes as it came, reported as classified", async () => {
    const base = answering('{"error":{"message":"upstream overloaded"}}');
    const { repairing, reports } = observed(base);
    const response = await repairing("https://api.anthropic.com/v1/messages", post({ model: "m" }));
    expect(response).toBe(base.responses[0]);
    expect(reports.map((report) => report.code)).toEqual(["whole_response_unexpected_shape"]);
  });

  it("a body nesting deeper than JSON.stringify follows is still written out once repaired (no throw)", async () => {
    const deep = `${'{"x":'.repeat(20_000)}{}${"}".repeat(20_000)}`;
    const text = `{"id":"c","object":"chat.completion","metadata":${deep},"choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[{"id":"a","type":"function","function":{"name":"f","arguments":"{'x': 1}"}}]},"finish_reason":"tool_calls"}]}`;
    const { repairing, reports } = observed(answering(text));
    const response = await repairing("https://api.openai.com/v1/chat/completions", post({ model: "m" }));
    const out = await response.text();
    expect(out.startsWith('{"id":"c","object":"chat.completion","metadata":{"x":')).toBe(true);
    expect(out.slice(-200)).toContain('"arguments":"{\\"x\\":1}"');
    expect(reports.map((report) => report.code)).toEqual(["single_quotes"]);
  });

  it("a body that fails while it is read is returned as it came: the client sees the failure itself", async () => {
    const failing = async (): Promise<Response> =>
      new Response(
        new ReadableStream({
          start(controller) {
            controller.enqueue(new TextEncoder().encode('{"choices":'));
            controller.error(new Error("connection reset"));
          },
        }),
        { status: 200, headers: { "content-type": "application/json" } },
      );
    const { repairing, turns } = observed({ fetch: failing });
    const response = await repairing("https://api.openai.com/v1/chat/completions", post({ model: "m" }));
    await expect(response.text()).rejects.toThrow("connection reset");
    expect(turns).toEqual([]);
  });

  it("other content types (plain text) are not read", async () => {
    const base = answering("hello", "text/plain");
    const { repairing, reports } = observed(base);
    expect(await repairing("https://api.openai.com/v1/chat/completions", post({ model: "m" }))).toBe(base.responses[0]);
    expect(reports).toEqual([]);
  });
});

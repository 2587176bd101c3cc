import { describe, expect, it } from "vitest";
import { isToolwireError } from "../../src/errors.js";
import { createRepairingFetch } from "../../src/fetch/index.js";
import { routeOf, targetOf } from "../../src/fetch/routes.js";
import { type RepairReport } from "../../src/reencode/types.js";
import { startProxy } from "../../src/node/proxy.js";

/** The request side of the repairing fetch against a scripted base fetch: what is sent, what is reported, when it retries. */

interface Sent {
  url: string;
  body: Record<string, unknown> | null;
  headers: Headers;
}

function scripted(...answers: Array<() => Response>): { fetch: (input: RequestInfo | URL, init?: RequestInit) => Promise<Response>; sent: Sent[] } {
  const sent: Sent[] = [];
  return {
    sent,
    fetch: async (input, init) => {
      const url = typeof input === "string" ? input : input instanceof URL ? input.href : input.url;
      const text = typeof init?.body === "string" ? init.body : input instanceof Request ? await input.text() : null;
      let body: Record<string, unknown> | null = null;
      try {
        body = text ? (JSON.parse(text) as Record<string, unknown>) : null;
      } catch {
        // sent as it came
      }
      sent.push({ url, body, headers: new Headers(init?.headers ?? (input instanceof Request ? input.headers : undefined)) });
      const answer = answers[Math.min(sent.length - 1, answers.length - 1)] as () => Response;
      return answer();
    },
  };
}

const ok = (): Response => new Response(JSON.stringify({ ok: true }), { status: 200, headers: { "content-type": "application/json" } });
const json = (status: number, body: unknown): (() => Response) => () => new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });

const LLAMA_GRAMMAR = json(400, { error: { code: 400, message: "parse: error parsing grammar: unknown escape at \\d+$\"", type: "invalid_request_error" } });

describe("routes and targets", () => {
  it("knows the six protocols from the path, and the target from the host", () => {
    expect(routeOf("https://api.anthropic.com/v1/messages")?.provider).toBe("anthropic");
    expect(routeOf("http://localhost:8080/v1/chat/completions")?.provider).toBe("openai-chat");
    expect(routeOf("https://api.openai.com/v1/responses")?.provider).toBe("openai-responses");
    expect(routeOf("https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse")?.provider).toBe("gemini");
    expect(routeOf("https://bedrock-runtime.us-east-1.amazonaws.com/model/anthropic.claude/converse-stream")?.provider).toBe("bedrock");
    expect(routeOf("http://localhost:11434/api/chat")?.provider).toBe("ollama");
    expect(routeOf("https://api.openai.com/v1/models")).toBeNull();
    expect(targetOf("https://api.x.ai/v1/chat/completions", "openai-chat")).toBe("xai");
    expect(targetOf("https://api.moonshot.ai/anthropic/v1/messages", "anthropic")).toBe("kimi");
    expect(targetOf("http://localhost:8080/v1/chat/completions", "openai-chat")).toBe("openai");
  });
});

describe("the request side", () => {
  it("sanitizes tool schemas for the target and reports each change", async () => {
    const base = scripted(ok);
    const reports: RepairReport[] = [];
    const repairing = createRepairingFetch({ fetch: base.fetch, target: "gemini", onRepair: (report) => reports.push(report) });
    await repairing("https://example.test/v1/chat/completions", {
      method: "POST",
      headers: { authorization: "Bearer sk-x", "content-type": "application/json" },
      body: JSON.stringify({ model: "m", messages: [], tools: [{ type: "function", function: { name: "f", parameters: { type: "object", properties: { a: { const: "x" } }, required: null } } }] }),
    });
    const tools = base.sent[0]?.body?.tools as Array<{ function: { parameters: Record<string, unknown> } }>;
    expect(tools[0]?.function.parameters).not.toHaveProperty("required");
    expect((tools[0]?.function.parameters.properties as Record<string, unknown>).a).toEqual({ enum: ["x"], type: "string" });
    const requestReports = reports.filter((report) => report.stage === "request");
    expect(requestReports.every((report) => report.action === "sanitized" && report.tool === "f")).toBe(true);
    expect(requestReports.length).toBeGreaterThanOrEqual(2);
    expect(base.sent[0]?.headers.get("authorization")).toBe("Bearer sk-x");
  });

  it("repairs history pairing in the provider's own format", async () => {
    const base = scripted(ok);
    const reports: RepairReport[] = [];
    const repairing = createRepairingFetch({ fetch: base.fetch, onRepair: (report) => reports.push(report) });
    await repairing(
      new Request("https://api.openai.com/v1/chat/completions", {
        method: "POST",
        body: JSON.stringify({ model: "m", messages: [{ role: "user", content: "hi" }, { role: "assistant", content: null, tool_calls: [{ id: "call_1", type: "function", function: { name: "f", arguments: "{}" } }] }, { role: "user", content: "go on" }] }),
      }),
    );
    const messages = base.sent[0]?.body?.messages as Array<{ role: string; tool_call_id?: string }>;
    expect(messages.map((message) => message.role)).toEqual(["user", "assistant", "tool", "user"]);
    expect(messages[2]?.tool_call_id).toBe("call_1");
    expect(reports).toContainEqual(expect.objectContaining({ stage: "request", action: "edited", code: "result_inserted" }));
  });

  it("leaves bodies it does not understand, and routes it does not know, alone", async () => {
    const base = scripted(ok);
    const repairing = createRepairingFetch({ fetch: base.fetch });
    await repairing("https://api.openai.com/v1/chat/completions", { method: "POST", body: "not json" });
    await repairing("https://api.openai.com/v1/models");
    expect(base.sent.map((sent) => sent.body)).toEqual([null, null]);
    expect(base.sent).toHaveLength(2);
  });

  it("rejects an unknown target with a ToolwireError", () => {
    let thrown: unknown;
    try {
      createRepairingFetch({ target: "nope" });
    } catch (error) {
      thrown = error;
    }
    expect(isToolwireError(thrown) && thrown.code === "unknown_target").toBe(true);
  });
});

describe("recovery, once per request", () => {
  const tools = [{ type: "function", function: { name: "count", parameters: { type: "object", properties: { n: { type: "string", pattern: "^\\d+$", format: "uint" } } } } }];

  it("a llama.cpp grammar error: the offending keywords are stripped and the request sent again", async () => {
    const base = scripted(LLAMA_GRAMMAR, ok);
    const reports: RepairReport[] = [];
    const repairing = createRepairingFetch({ fetch: base.fetch, repairs: { schemas: false }, onRepair: (report) => reports.push(report) });
    const response = await repairing("http://localhost:8080/v1/chat/completions", { method: "POST", body: JSON.stringify({ model: "m", messages: [{ role: "user", content: "hi" }], tools }) });
    expect(response.status).toBe(200);
    expect(base.sent).toHaveLength(2);
    const retried = JSON.stringify(base.sent[1]?.body?.tools);
    // That error text names the pattern alone (LLAMACPP_SCHEMA_ERRORS): only it is stripped, into the description.
    expect(retried).not.toMatch(/"pattern"/);
    expect(retried).toContain("pattern: ^\\\\d+$");
    const codes = reports.map((report) => `${report.stage}:${report.action}:${report.code}`);
    expect(codes).toEqual(expect.arrayContaining(["recovery:sanitized:strip_pattern", "recovery:retried:schema_rejected"]));
    expect(codes).not.toContain("recovery:sanitized:strip_type");
  });

  it("an Anthropic orphan tool_use 400 with the history repair off: repaired and sent again", async () => {
    const orphan = json(400, { type: "error", error: { type: "invalid_request_error", message: "messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_1. Each `tool_use` block must have a corresponding `tool_result` block in the next message." } });
    const base = scripted(orphan, ok);
    const repairing = createRepairingFetch({ fetch: base.fetch, repairs: { history: false } });
    const messages = [{ role: "user", content: "hi" }, { role: "assistant", content: [{ type: "tool_use", id: "toolu_1", name: "f", input: {} }] }, { role: "user", content: "next" }];
    const response = await repairing("https://api.anthropic.com/v1/messages", { method: "POST", body: JSON.stringify({ model: "m", max_tokens: 5, messages }) });
    expect(response.status).toBe(200);
    expect(JSON.stringify(base.sent[1]?.body?.messages)).toContain('"tool_use_id":"toolu_1"');
  });

  it("only once: a second failure is returned as it came, classified", async () => {
    const base = scripted(LLAMA_GRAMMAR);
    const errors: string[] = [];
    const repairing = createRepairingFetch({ fetch: base.fetch, onError: ({ classification }) => errors.push(classification.reason) });
    const response = await repairing("http://localhost:8080/v1/chat/completions", { method: "POST", body: JSON.stringify({ model: "m", messages: [], tools }) });
    expect(response.status).toBe(400);
    expect(base.sent).toHaveLength(2);
    expect(errors).toEqual(["schema_rejected"]);
    expect(await response.text()).toContain("error parsing grammar");
  });

  it("other errors pass through untouched, with their classification", async () => {
    const base = scripted(() => new Response(JSON.stringify({ error: { type: "rate_limit_error", message: "Rate limited" } }), { status: 429, headers: { "retry-after": "7" } }));
    const reports: RepairReport[] = [];
    const repairing = createRepairingFetch({ fetch: base.fetch, onRepair: (report) => reports.push(report) });
    const response = await repairing("https://api.anthropic.com/v1/messages", { method: "POST", body: JSON.stringify({ model: "m", messages: [] }) });
    expect(response.status).toBe(429);
    expect(base.sent).toHaveLength(1);
    expect(reports).toContainEqual(expect.objectContaining({ stage: "recovery", action: "classified", code: "rate_limit" }));
  });
});

describe("the proxy's options", () => {
  it("rejects an upstream that is not a URL with a ToolwireError", async () => {
    await expect(startProxy({ upstream: "nope" })).rejects.toSatisfy((error: unknown) => isToolwireError(error) && error.code === "invalid_upstream");
  });
});

describe("a Gemini route through the repairing fetch", () => {
  const chunks = [
    { candidates: [{ content: { role: "model", parts: [{ text: "Adding." }] }, index: 0 }], responseId: "r1" },
    { candidates: [{ content: { role: "model", parts: [{ functionCall: { name: "add", args: '{"a":1}' }, thoughtSignature: "c2ln" }, { functionCall: { name: "add", args: [2] } }] }, finishReason: "STOP", index: 0 }], responseId: "r1" },
  ];
  const streamed = (body: string, type: string): (() => Response) => () => new Response(body, { status: 200, headers: { "content-type": type } });
  const sse = chunks.map((chunk) => `data: ${JSON.stringify(chunk)}\r\n\r\n`).join("");
  const array = `[${chunks.map((chunk) => JSON.stringify(chunk)).join(",\r\n")}]`;
  const url = "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:streamGenerateContent";

  for (const [form, body, type, query] of [
    ["SSE (alt=sse)", sse, "text/event-stream", "?alt=sse"],
    ["the streamed JSON array", array, "application/json; charset=UTF-8", ""],
  ] as const) {
    it(`${form}: the client reads toolwire's calls; every change is reported with the turn's codes`, async () => {
      const reports: RepairReport[] = [];
      const turns: Array<{ calls: number; repairs: number }> = [];
      const repairing = createRepairingFetch({
        fetch: scripted(streamed(body, type)).fetch,
        onRepair: (report) => reports.push(report),
        onTurn: (turn, info) => turns.push({ calls: turn.toolCalls.length, repairs: info.repairs.length }),
      });
      const response = await repairing(`${url}${query}`, { method: "POST", body: JSON.stringify({ contents: [{ role: "user", parts: [{ text: "add" }] }] }) });
      const text = await response.text();
      expect(response.headers.get("content-type")).toBe(type);
      const payloads = (type === "text/event-stream" ? text.split("\r\n\r\n").filter(Boolean).map((event) => JSON.parse(event.slice(6)) as unknown) : (JSON.parse(text) as unknown[])) as Array<{
        candidates: Array<{ content: { parts: Array<Record<string, unknown>> }; finishReason?: string }>;
      }>;
      expect(payloads[0]).toEqual(chunks[0]);
      const parts = payloads[1]?.candidates[0]?.content.parts;
      expect(parts).toEqual([{ functionCall: { id: expect.stringMatching(/^gemini_tw_/), name: "add", args: { a: 1 } }, thoughtSignature: "c2ln" }]);
      expect(payloads[1]?.candidates[0]?.finishReason).toBe("STOP");
      expect(reports.map((report) => [report.stage, report.action, report.code])).toEqual([
        ["response", "rewritten", "call_id_minted"],
        ["response", "withheld", "not_object"],
      ]);
      expect(turns).toEqual([{ calls: 2, repairs: 2 }]);
    });
  }

  it("a Vertex URL: a call sent without an id gets none (Vertex rejects ids in a history); the others are still fixed", async () => {
    const reports: RepairReport[] = [];
    const repairing = createRepairingFetch({ fetch: scripted(streamed(sse, "text/event-stream")).fetch, onRepair: (report) => reports.push(report) });
    const vertexUrl = "https://us-central1-aiplatform.googleapis.com/v1/projects/p/locations/us-central1/publishers/google/models/gemini-2.5-pro:streamGenerateContent?alt=sse";
    const text = await (await repairing(vertexUrl, { method: "POST", body: "{}" })).text();
    const parts = text
      .split("\r\n\r\n")
      .filter(Boolean)
      .flatMap((event) => (JSON.parse(event.slice(6)) as { candidates: Array<{ content: { parts: Array<Record<string, unknown>> } }> }).candidates[0]?.content.parts ?? []);
    expect(parts.filter((part) => part.functionCall)).toEqual([{ functionCall: { name: "add", args: { a: 1 } }, thoughtSignature: "c2ln" }]);
    expect(reports.map((report) => [report.action, report.code])).toEqual([
      ["rewritten", "source_final"],
      ["withheld", "not_object"],
    ]);
  });

  it(":generateContent (one JSON object) is repaired whole, under the same rules", async () => {
    const whole = JSON.stringify(chunks[1]);
    const repairing = createRepairingFetch({ fetch: scripted(streamed(whole, "application/json")).fetch });
    const response = await repairing(url.replace(":streamGenerateContent", ":generateContent"), { method: "POST", body: "{}" });
    const body = (await response.json()) as { candidates: Array<{ content: { parts: unknown[] } }> };
    expect(body.candidates[0]?.content.parts).toEqual([{ functionCall: { id: expect.stringMatching(/^gemini_tw_/), name: "add", args: { a: 1 } }, thoughtSignature: "c2ln" }]);
  });
});

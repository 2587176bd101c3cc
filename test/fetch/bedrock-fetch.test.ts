import { describe, expect, it } from "vitest";
import { createByteDecoder } from "../../src/adapters/bytes.js";
import { decodeEventStream } from "../../src/framing/aws-eventstream.js";
import { encodeJsonEventFrame } from "../../src/framing/aws-eventstream-encode.js";
import { createRepairingFetch } from "../../src/fetch/index.js";
import { type RepairReport } from "../../src/reencode/types.js";
import { startProxy } from "../../src/node/proxy.js";
import { createReencoder } from "../../src/reencode/index.js";
import { concatBytes, encodeEventStreamBytes } from "../../src/testing/wire.js";
import type { DecodedTurn, ProviderEvent } from "../../src/types.js";
import { decodeBytes } from "../reencode/support.js";

/**
 * Bedrock `converse-stream` through the repairing fetch and the proxy: the binary body is
 * re-encoded as it streams (the fixed call rewritten, the cut one withheld), reported, and its
 * headers kept but for the length.
 */

const ev = (name: string, body: Record<string, unknown>): ProviderEvent => ({ event: name, data: body });
const events: ProviderEvent[] = [
  ev("messageStart", { role: "assistant" }),
  ev("contentBlockDelta", { contentBlockIndex: 0, delta: { text: "Reading." } }),
  ev("contentBlockStop", { contentBlockIndex: 0 }),
  ev("contentBlockStart", { contentBlockIndex: 1, start: { toolUse: { toolUseId: "tooluse_a", name: "read" } } }),
  ev("contentBlockDelta", { contentBlockIndex: 1, delta: { toolUse: { input: '{"path":"a"}' } } }),
  ev("contentBlockDelta", { contentBlockIndex: 1, delta: { toolUse: { input: '{"path":"a"}' } } }),
  ev("contentBlockStop", { contentBlockIndex: 1 }),
  ev("contentBlockStart", { contentBlockIndex: 2, start: { toolUse: { toolUseId: "tooluse_b", name: "read" } } }),
  ev("contentBlockDelta", { contentBlockIndex: 2, delta: { toolUse: { input: '{"path":"b' } } }),
  ev("messageStop", { stopReason: "max_tokens" }),
  ev("metadata", { usage: { inputTokens: 3, outputTokens: 4, totalTokens: 7 } }),
];
const body = encodeEventStreamBytes(events);
const URL_CONVERSE = "https://bedrock-runtime.us-east-1.amazonaws.com/model/amazon.nova-pro-v1%3A0/converse-stream";

/** The upstream: the body in small pieces, as a network delivers it. */
function upstream(seen: string[] = []): (input: RequestInfo | URL, init?: RequestInit) => Promise<Response> {
  return async (input) => {
    seen.push(typeof input === "string" ? input : input instanceof URL ? input.href : input.url);
    let offset = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (offset >= body.length) return controller.close();
        controller.enqueue(body.slice(offset, offset + 23));
        offset += 23;
      },
    });
    return new Response(stream, { status: 200, headers: { "content-type": "application/vnd.amazon.eventstream", "content-length": String(body.length), "x-amzn-requestid": "req-1" } });
  };
}

const request = { method: "POST", headers: { "content-type": "application/json", authorization: "AWS4-HMAC-SHA256 Credential=AKIDTEST/x" }, body: JSON.stringify({ messages: [{ role: "user", content: [{ text: "hi" }] }] }) };

describe("Bedrock converse-stream through the repairing fetch", () => {
  it("re-encodes the binary body: the client decodes the calls toolwire decodes, every repair reported", async () => {
    const reports: RepairReport[] = [];
    let turn: DecodedTurn | null = null;
    const repairing = createRepairingFetch({ fetch: upstream(), onRepair: (report) => reports.push(report), onTurn: (decoded) => (turn = decoded) });
    const response = await repairing(URL_CONVERSE, request);
    expect(response.headers.get("content-type")).toBe("application/vnd.amazon.eventstream");
    expect(response.headers.get("content-length")).toBeNull();
    expect(response.headers.get("x-amzn-requestid")).toBe("req-1");
    const bytes = new Uint8Array(await response.arrayBuffer());
    expect(() => decodeEventStream(bytes)).not.toThrow();
    const original = decodeBytes("bedrock", body);
    const seen = decodeBytes("bedrock", bytes);
    expect(seen.toolCalls.map((call) => ({ id: call.id, arguments: call.arguments, repairs: call.repairs }))).toEqual([{ id: "tooluse_a", arguments: { path: "a" }, repairs: [] }]);
    expect(seen.text).toBe("Reading.");
    expect(turn).toEqual(original);
    expect(reports.map((report) => [report.stage, report.action, report.code])).toEqual([
      ["response", "rewritten", "collapsed_duplicate"],
      ["response", "withheld", "truncated"],
    ]);
    // The same bytes as the re-encoder gives on the whole body.
    const reencoder = createReencoder("bedrock");
    expect(bytes).toEqual(concatBytes([...reencoder.push(body), ...reencoder.end()]));
  });

  it("passes the body through untouched with response repairs off", async () => {
    const repairing = createRepairingFetch({ fetch: upstream(), repairs: { responses: false } });
    const response = await repairing(URL_CONVERSE, request);
    expect(new Uint8Array(await response.arrayBuffer())).toEqual(body);
  });

  it("through toolwire proxy: the same bytes reach a client in another process' place", async () => {
    const seen: string[] = [];
    const proxy = await startProxy({ upstream: "https://bedrock-runtime.us-east-1.amazonaws.com", fetch: upstream(seen) });
    try {
      const response = await fetch(`${proxy.url}/model/amazon.nova-pro-v1%3A0/converse-stream`, request);
      expect(response.status).toBe(200);
      const bytes = new Uint8Array(await response.arrayBuffer());
      expect(decodeBytes("bedrock", bytes).toolCalls.map((call) => call.id)).toEqual(["tooluse_a"]);
      const reencoder = createReencoder("bedrock");
      expect(bytes).toEqual(concatBytes([...reencoder.push(body), ...reencoder.end()]));
      expect(seen).toEqual([URL_CONVERSE]);
    } finally {
      await proxy.close();
    }
  });

  it("a SigV4-signed request goes out as it was signed (an edit would break the signature), with the repairs it would need reported", async () => {
    const history = {
      messages: [
        { role: "user", content: [{ text: "list" }] },
        { role: "assistant", content: [{ toolUse: { toolUseId: "tooluse_1", name: "shell", input: { command: "ls" } } }] },
        { role: "user", content: [{ text: "and now?" }] },
      ],
    };
    const sent: Array<string | null> = [];
    const capture = async (_input: RequestInfo | URL, init?: RequestInit): Promise<Response> => {
      sent.push(typeof init?.body === "string" ? init.body : null);
      return upstream()(URL_CONVERSE);
    };
    const unsignedReports: RepairReport[] = [];
    await (await createRepairingFetch({ fetch: capture, onRepair: (report) => unsignedReports.push(report) })(URL_CONVERSE, { ...request, headers: { "content-type": "application/json" }, body: JSON.stringify(history) })).arrayBuffer();
    expect(sent[0]).not.toBe(JSON.stringify(history));
    const edits = [...new Set(unsignedReports.filter((report) => report.stage === "request").map((report) => report.code))];
    expect(edits.length).toBeGreaterThan(0);

    const reports: RepairReport[] = [];
    const signed = { ...request, headers: { "content-type": "application/json", authorization: "AWS4-HMAC-SHA256 Credential=AKIDTEST/20260101/us-east-1/bedrock/aws4_request, SignedHeaders=host;x-amz-date, Signature=abc" }, body: JSON.stringify(history) };
    const response = await createRepairingFetch({ fetch: capture, onRepair: (report) => reports.push(report) })(URL_CONVERSE, signed);
    expect(sent[1]).toBe(JSON.stringify(history));
    const requestSide = reports.filter((report) => report.stage === "request");
    expect(requestSide).toEqual([expect.objectContaining({ action: "classified", code: "signed_request", provider: "bedrock" })]);
    for (const code of edits) expect(requestSide[0]?.message).toContain(code);
    // The response is still re-encoded: it is not signed.
    expect(decodeBytes("bedrock", new Uint8Array(await response.arrayBuffer())).toolCalls.map((call) => call.id)).toEqual(["tooluse_a"]);
  });
});

describe("Claude on Bedrock (invoke-with-response-stream) through the repairing fetch", () => {
  it("re-encodes the Anthropic events inside the chunk frames", async () => {
    const chunk = (data: Record<string, unknown>): Uint8Array => encodeJsonEventFrame("chunk", { bytes: btoa(JSON.stringify(data)), p: "abc" });
    const invokeBody = concatBytes([
      chunk({ type: "message_start", message: { id: "msg_1", type: "message", role: "assistant", model: "claude", content: [], usage: { input_tokens: 1, output_tokens: 1 } } }),
      chunk({ type: "content_block_start", index: 0, content_block: { type: "tool_use", id: "toolu_1", name: "shell", input: { command: "ls" } } }),
      chunk({ type: "content_block_delta", index: 0, delta: { type: "input_json_delta", partial_json: '{"command":"ls"}' } }),
      chunk({ type: "content_block_stop", index: 0 }),
      chunk({ type: "message_delta", delta: { stop_reason: "tool_use", stop_sequence: null }, usage: { output_tokens: 5 } }),
      chunk({ type: "message_stop" }),
    ]);
    const reports: RepairReport[] = [];
    const base = async (): Promise<Response> => new Response(invokeBody as Uint8Array<ArrayBuffer>, { status: 200, headers: { "content-type": "application/vnd.amazon.eventstream" } });
    const response = await createRepairingFetch({ fetch: base, onRepair: (report) => reports.push(report) })("https://bedrock-runtime.us-east-1.amazonaws.com/model/anthropic.claude-sonnet-4-5/invoke-with-response-stream", request);
    const bytes = new Uint8Array(await response.arrayBuffer());
    const decoder = createByteDecoder("anthropic", { framing: "aws-eventstream" });
    decoder.push(bytes);
    const turn = decoder.finish();
    expect(turn.toolCalls.map((call) => ({ id: call.id, arguments: call.arguments, repairs: call.repairs, source: call.source }))).toEqual([{ id: "toolu_1", arguments: { command: "ls" }, repairs: [], source: "delta" }]);
    expect(reports.filter((report) => report.stage === "response").map((report) => report.action)).toContain("rewritten");
  });
});

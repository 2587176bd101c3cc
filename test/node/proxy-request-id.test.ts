import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startProxy, type ProxyServer } from "../../src/node/proxy.js";
import type { RepairReport } from "../../src/reencode/types.js";
import { head, rawRequest, recordingUpstream, type RecordingUpstream } from "./http-support.js";

/**
 * A repair traced to its request: the request id (the client's `x-request-id`, or one minted) is
 * the last member of `x-toolwire-repairs` (`…,request_id=<id>`, header and trailer), in the log
 * line, and on every report `onRepair` receives (`report.requestId`). Over real sockets.
 */

const chunk = (delta: unknown, finish: string | null = null): string => `data: ${JSON.stringify({ id: "c", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
/** A Chat stream whose call arguments came twice (cumulative): repaired in the stream, so the codes come in the trailer. */
const RESENT = `${chunk({ role: "assistant", tool_calls: [{ index: 0, id: "call_1", type: "function", function: { name: "f", arguments: '{"a"' } }] })}${chunk({ tool_calls: [{ index: 0, function: { arguments: '{"a":1}' } }] })}${chunk({}, "tool_calls")}data: [DONE]\n\n`;
/** A whole chat.completion with a call sent without an id: repaired before the headers go out. */
const WHOLE = { id: "x", object: "chat.completion", created: 1, model: "m", choices: [{ index: 0, message: { role: "assistant", content: null, tool_calls: [{ type: "function", function: { name: "f", arguments: '{"a":1}' } }] }, finish_reason: "tool_calls" }] };

let upstream: RecordingUpstream;
let proxy: ProxyServer;
const lines: string[] = [];
const reports: Array<{ report: RepairReport; requestId: string }> = [];

beforeAll(async () => {
  upstream = await recordingUpstream((seen, res) => {
    const body = JSON.parse(seen.body.toString() || "{}") as { stream?: boolean };
    if (body.stream) {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.end(RESENT);
    } else {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify(WHOLE));
    }
  });
  proxy = await startProxy({ upstream: upstream.url, log: (line) => lines.push(line), onRepair: (report, request) => reports.push({ report, requestId: request.requestId }) });
});
afterAll(async () => {
  await proxy?.close();
  await upstream?.close();
});

/** A POST over a raw socket, so that the trailer can be read. */
function post(body: Record<string, unknown>, headers: Record<string, string> = {}) {
  const text = JSON.stringify({ model: "m", messages: [], ...body });
  return rawRequest(proxy.port, [head("POST /v1/chat/completions HTTP/1.1", { "content-type": "application/json", "content-length": Buffer.byteLength(text), ...headers }) + text]);
}

/** The id in an `x-toolwire-repairs` value: everything after the first ",request_id=". */
function idIn(value: string | undefined): string | null {
  const at = value?.indexOf(",request_id=") ?? -1;
  return value !== undefined && at >= 0 ? value.slice(at + ",request_id=".length) : null;
}

/** The reports given to `onRepair` since `from`. */
const since = (from: number) => reports.slice(from);

describe("x-request-id in x-toolwire-repairs, the log line and onRepair", () => {
  it("the client's id: in the streamed response's trailer, the log line and every report", async () => {
    const from = reports.length;
    const response = await post({ stream: true }, { "x-request-id": "req-trace-1" });
    expect(response.status).toBe(200);
    expect(response.headers["x-request-id"]).toBe("req-trace-1");
    const trailer = response.trailers["x-toolwire-repairs"];
    expect(trailer?.split(",")).toContain("cumulative_resend");
    expect(trailer).toMatch(/,request_id=req-trace-1$/);
    expect(idIn(trailer)).toBe("req-trace-1");
    expect(lines.at(-1)).toMatch(/ repairs=\S*cumulative_resend\S* id=req-trace-1$/);
    const mine = since(from);
    expect(mine.map((entry) => entry.report.code)).toContain("cumulative_resend");
    for (const entry of mine) {
      expect(entry.report.requestId).toBe("req-trace-1");
      expect(entry.requestId).toBe("req-trace-1");
    }
  });

  it("the client's id: in the whole response's header (the codes before it unchanged)", async () => {
    const from = reports.length;
    const response = await post({}, { "x-request-id": "req-trace-2" });
    const value = response.headers["x-toolwire-repairs"];
    expect(value).toBe("call_id_minted,request_id=req-trace-2");
    expect(lines.at(-1)).toMatch(/ repairs=call_id_minted id=req-trace-2$/);
    expect(since(from).map((entry) => entry.report)).toEqual([expect.objectContaining({ code: "call_id_minted", requestId: "req-trace-2" })]);
  });

  it("a minted id: in the response's x-request-id, the trailer, the log line and every report", async () => {
    const from = reports.length;
    const response = await post({ stream: true });
    const id = response.headers["x-request-id"] as string;
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect(idIn(response.trailers["x-toolwire-repairs"])).toBe(id);
    expect(lines.at(-1)).toMatch(new RegExp(` id=${id}$`));
    const mine = since(from);
    expect(mine.length).toBeGreaterThan(0);
    for (const entry of mine) expect(entry.report.requestId).toBe(id);
  });

  it("a minted id: in the whole response's header too", async () => {
    const response = await post({});
    const id = response.headers["x-request-id"] as string;
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    expect(response.headers["x-toolwire-repairs"]).toBe(`call_id_minted,request_id=${id}`);
  });

  it("an id with a comma stays whole after the first ',request_id='", async () => {
    const response = await post({}, { "x-request-id": "a,request_id=b" });
    expect(idIn(response.headers["x-toolwire-repairs"])).toBe("a,request_id=b");
  });

  it("no repair: no x-toolwire-repairs (the id is still in x-request-id)", async () => {
    const response = await rawRequest(proxy.port, [head("GET /v1/models HTTP/1.1", { "x-request-id": "plain-1" })]);
    expect(response.headers["x-request-id"]).toBe("plain-1");
    expect(response.headers["x-toolwire-repairs"]).toBeUndefined();
    expect(response.trailers["x-toolwire-repairs"]).toBeUndefined();
  });
});

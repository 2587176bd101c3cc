import { describe, expect, it } from "vitest";
import { dechunk, ImportError, importFile } from "../../src/import/index.js";
import { describeCorpus } from "../helpers/corpus.js";
import { corpusFile, utf8 } from "./corpus.js";

function trace(exchanges: Array<{ request: string; response: Uint8Array | string }>): Uint8Array {
  const parts: Uint8Array[] = [utf8("httprr trace v1\n")];
  for (const { request, response } of exchanges) {
    const req = utf8(request);
    const res = typeof response === "string" ? utf8(response) : response;
    parts.push(utf8(`${req.length} ${res.length}\n`), req, res);
  }
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.length;
  }
  return out;
}

const request = (url: string, body = '{"stream":true}') =>
  `POST ${url} HTTP/1.1\r\nHost: localhost\r\nContent-Length: ${utf8(body).length}\r\n\r\n${body}`;

describeCorpus("upstream", "httprr v1 (corpus)", () => {
  it("imports the langchaingo Ollama trace: non-streamed /api/chat answers become one-record streams", () => {
    const { name, bytes } = corpusFile("vxcontrol__langchaingo/llms__ollama__testdata__TestToolCall.httprr");
    const result = importFile(name, bytes);
    expect(result.format).toBe("httprr-v1");
    expect(result.streams.map((s) => [s.sequence, s.provider, s.events.length])).toEqual([
      ["interaction-0", "ollama", 1],
      ["interaction-1", "ollama", 1],
    ]);
    const first = result.streams[0]!.events[0]!.data as { done: boolean; message: { tool_calls: unknown[] } };
    expect(first.done).toBe(true);
    expect(first.message.tool_calls).toEqual([{ function: { name: "getTime", arguments: {} } }]);
    expect(result.notes[0]).toMatch(/^interaction-0: non-streamed Ollama response \(stream:false\) kept as a one-record stream/);
  });
});

describe("httprr v1 (synthetic)", () => {
  const lines = [
    '{"model":"qwen3","created_at":"t","message":{"role":"assistant","content":"","tool_calls":[{"function":{"name":"add","arguments":{"a":2,"b":3}}}]},"done":false}',
    '{"model":"qwen3","created_at":"t","message":{"role":"assistant","content":"é"},"done":true,"done_reason":"stop"}',
  ];
  const body = utf8(lines.join("\n") + "\n");

  function chunked(bytes: Uint8Array, sizes: number[]): Uint8Array {
    const parts: number[] = [];
    let pos = 0;
    for (const size of [...sizes, bytes.length]) {
      const piece = bytes.subarray(pos, Math.min(pos + size, bytes.length));
      if (piece.length === 0) break;
      parts.push(...utf8(`${piece.length.toString(16)};ext=1\r\n`), ...piece, 13, 10);
      pos += piece.length;
    }
    parts.push(...utf8("0\r\nX-Trailer: y\r\n\r\n"));
    return new Uint8Array(parts);
  }

  it("de-chunks a chunked NDJSON stream, even with a chunk boundary inside a UTF-8 character", () => {
    const cut = body.indexOf(0xc3) + 1; // splits the two bytes of "é"
    const response = new Uint8Array([
      ...utf8("HTTP/1.1 200 OK\r\nContent-Type: application/x-ndjson\r\nTransfer-Encoding: chunked\r\n\r\n"),
      ...chunked(body, [17, cut - 17]),
    ]);
    const result = importFile("ollama.httprr", trace([{ request: request("http://localhost:11434/api/chat"), response }]));
    expect(result.streams).toEqual([{ sequence: "interaction-0", provider: "ollama", events: lines.map((line) => ({ data: JSON.parse(line) })) }]);
    expect(result.notes).toEqual(["interaction-0: chunked transfer coding removed"]);
  });

  it("frames SSE responses and skips non-streamed ones with a note", () => {
    const sse = 'event: message_stop\ndata: {"type":"message_stop"}\n\n';
    const result = importFile(
      "t.httprr",
      trace([
        { request: request("https://api.anthropic.com/v1/messages"), response: `HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Length: ${sse.length}\r\n\r\n${sse}` },
        { request: request("https://api.anthropic.com/v1/messages"), response: 'HTTP/1.1 400 Bad Request\r\nContent-Type: application/json\r\n\r\n{"type":"error"}' },
      ]),
    );
    expect(result.streams).toEqual([{ sequence: "interaction-0", provider: "anthropic", events: [{ event: "message_stop", data: { type: "message_stop" } }] }]);
    expect(result.notes).toEqual(["interaction-1: skipped: HTTP 400 application/json response to POST https://api.anthropic.com/v1/messages is not a stream"]);
  });

  it("reports lengths that run past the end of the trace", () => {
    const bytes = trace([{ request: request("http://x/api/chat"), response: "HTTP/1.1 200 OK\r\n\r\n{}" }]);
    const truncated = bytes.subarray(0, bytes.length - 1);
    expect(() => importFile("t.httprr", truncated)).toThrow(ImportError);
    expect(() => importFile("t.httprr", truncated)).toThrow(/exchange 0 at byte 16: lengths \d+\+\d+ run past the end of the file/);
  });

  it("rejects broken chunked bodies", () => {
    expect(() => dechunk(utf8("zz\r\nabc\r\n0\r\n\r\n"), "body", "f")).toThrow(/invalid chunk size "zz"/);
    expect(() => dechunk(utf8("5\r\nab"), "body", "f")).toThrow(/runs past the end/);
    expect(dechunk(utf8("3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n"), "body", "f")).toEqual(utf8("abcde"));
  });
});

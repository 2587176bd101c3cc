import { readFileSync } from "node:fs";
import { join } from "node:path";
import { deflateSync, gzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { parseRecords } from "../../src/framing/records.js";
import { ImportError, importFile, importRecording } from "../../src/import/index.js";
import { replayEvents } from "../../src/replay.js";
import { TESTDATA } from "../helpers/testdata.js";
import { utf8 } from "./corpus.js";

/** A Gemini stream of the project's (two id-less calls, then the finish) and its payloads. */
const GEMINI = parseRecords(readFileSync(join(TESTDATA, "gemini", "handwritten__parallel-calls-without-ids.ndjson"), "utf8"))[0]!;
const PAYLOADS = GEMINI.events.map((event) => event.data);

/** streamGenerateContent without alt=sse, as Gemini sends it: a pretty-printed array, elements separated by ",\r\n". */
function jsonArrayBody(payloads: readonly unknown[]): string {
  return "[" + payloads.map((payload) => JSON.stringify(payload, null, 2)).join("\n,\r\n") + "]";
}

function base64(bytes: Uint8Array): string {
  return Buffer.from(bytes).toString("base64");
}

function goVcr(interactions: Array<{ url: string; headers: Record<string, string>; body: string | Uint8Array }>): string {
  const lines = ["---", "version: 2", "interactions:"];
  for (const interaction of interactions) {
    lines.push(`- request:`, `    url: ${interaction.url}`, `    method: POST`, `  response:`, `    code: 200`, `    headers:`);
    for (const [name, value] of Object.entries(interaction.headers)) lines.push(`      ${name}:`, `      - ${value}`);
    lines.push(typeof interaction.body === "string" ? `    body: ${JSON.stringify(interaction.body)}` : `    body: !!binary ${base64(interaction.body)}`);
  }
  return lines.join("\n") + "\n";
}

describe("Gemini streamGenerateContent without alt=sse (a JSON array body)", () => {
  const url = "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:streamGenerateContent";

  it("as a bare file, pretty-printed: one record per element, decoding like the SSE recording", () => {
    const result = importFile("gemini-body.json", utf8(jsonArrayBody(PAYLOADS)));
    expect(result.format).toBe("json-array");
    expect(result.streams).toHaveLength(1);
    expect(result.streams[0]?.events).toEqual(PAYLOADS.map((data) => ({ data })));
    expect(replayEvents({ ...result.streams[0]!, sequence: GEMINI.sequence })).toEqual(replayEvents(GEMINI));
  });

  it("as a bare file on one line", () => {
    const result = importFile("gemini-body.txt", utf8(JSON.stringify(PAYLOADS)));
    expect(result.format).toBe("json-array");
    expect(result.streams[0]?.events.map((event) => event.data)).toEqual(PAYLOADS);
  });

  it("in a cassette: the request URL makes it a gemini stream", () => {
    const yaml = goVcr([{ url, headers: { "Content-Type": "application/json; charset=UTF-8" }, body: jsonArrayBody(PAYLOADS) }]);
    const result = importFile("gemini.yaml", utf8(yaml));
    expect(result.streams).toEqual([{ sequence: "interaction-0", provider: "gemini", events: PAYLOADS.map((data) => ({ data })) }]);
  });

  it("a body cut inside an element keeps the complete elements and says so", () => {
    const body = jsonArrayBody(PAYLOADS);
    const result = importFile("cut.json", utf8(body.slice(0, body.length - 40)));
    expect(result.streams[0]?.events.length).toBe(PAYLOADS.length - 1);
    expect(result.notes.join("\n")).toMatch(/ended inside an array element/);
  });
});

describe("gzip-compressed recordings (importRecording, DecompressionStream)", () => {
  // A hand-written Anthropic stream: text, then one tool_use whose input arrives in two fragments.
  const events: Array<[string, unknown]> = [
    ["message_start", { type: "message_start", message: { id: "msg_tw1", type: "message", role: "assistant", model: "claude-test", content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 12, output_tokens: 1 } } }],
    ["content_block_start", { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } }],
    ["content_block_delta", { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "Looking it up." } }],
    ["content_block_stop", { type: "content_block_stop", index: 0 }],
    ["content_block_start", { type: "content_block_start", index: 1, content_block: { type: "tool_use", id: "toolu_tw1", name: "get_weather", input: {} } }],
    ["content_block_delta", { type: "content_block_delta", index: 1, delta: { type: "input_json_delta", partial_json: '{"locat' } }],
    ["content_block_delta", { type: "content_block_delta", index: 1, delta: { type: "input_json_delta", partial_json: 'ion": "Paris"}' } }],
    ["content_block_stop", { type: "content_block_stop", index: 1 }],
    ["message_delta", { type: "message_delta", delta: { stop_reason: "tool_use", stop_sequence: null }, usage: { output_tokens: 20 } }],
    ["message_stop", { type: "message_stop" }],
  ];
  const sse = { name: "weather.txt", bytes: utf8(events.map(([event, data]) => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`).join("")) };

  it("a .gz file imports like the file it holds", async () => {
    const plain = importFile(sse.name, sse.bytes);
    const result = await importRecording(`${sse.name}.gz`, new Uint8Array(gzipSync(sse.bytes)));
    expect(result.format).toBe(plain.format);
    expect(result.streams).toEqual(plain.streams);
    expect(result.notes[0]).toMatch(/^gzip file decompressed/);
    expect(() => importFile(`${sse.name}.gz`, new Uint8Array(gzipSync(sse.bytes)))).toThrow(/use importRecording/);
  });

  it("Content-Encoding: gzip and deflate bodies in a cassette, in order, beside a plain one", async () => {
    const text = new TextDecoder().decode(sse.bytes);
    const messages = "https://api.anthropic.com/v1/messages";
    const yaml = goVcr([
      { url: messages, headers: { "Content-Type": "text/event-stream", "Content-Encoding": "gzip" }, body: new Uint8Array(gzipSync(sse.bytes)) },
      { url: messages, headers: { "Content-Type": "text/event-stream" }, body: text },
      { url: messages, headers: { "Content-Type": "text/event-stream", "Content-Encoding": "deflate" }, body: new Uint8Array(deflateSync(sse.bytes)) },
    ]);
    expect(() => importFile("c.yaml", utf8(yaml))).toThrow(ImportError);
    const result = await importRecording("c.yaml", utf8(yaml));
    expect(result.streams.map((stream) => stream.sequence)).toEqual(["interaction-0", "interaction-1", "interaction-2"]);
    expect(result.streams[0]?.events).toEqual(result.streams[1]?.events);
    expect(result.streams[2]?.events).toEqual(result.streams[1]?.events);
    expect(replayEvents(result.streams[0]!).toolCalls[0]?.arguments).toEqual({ location: "Paris" });
    expect(result.notes).toContain("interaction-0: gzip body decompressed");
  });

  it("a gzip Gemini JSON array body in an httprr trace", async () => {
    const body = new Uint8Array(gzipSync(utf8(jsonArrayBody(PAYLOADS))));
    const request = "POST /v1beta/models/gemini-2.5-flash:streamGenerateContent HTTP/1.1\r\nHost: generativelanguage.googleapis.com\r\n\r\n";
    const head = `HTTP/1.1 200 OK\r\nContent-Type: application/json; charset=UTF-8\r\nContent-Encoding: gzip\r\nContent-Length: ${body.length}\r\n\r\n`;
    const response = new Uint8Array([...utf8(head), ...body]);
    const trace = new Uint8Array([...utf8(`httprr trace v1\n${utf8(request).length} ${response.length}\n${request}`), ...response]);
    const result = await importRecording("trace.httprr", trace);
    expect(result.streams).toEqual([{ sequence: "interaction-0", provider: "gemini", events: PAYLOADS.map((data) => ({ data })) }]);
  });

  it("a corrupt gzip body is a malformed-input ImportError, not a crash", async () => {
    const broken = new Uint8Array(gzipSync(sse.bytes)).slice(0, 30);
    await expect(importRecording("x.sse.gz", broken)).rejects.toMatchObject({ name: "ImportError", code: "malformed" });
  });
});

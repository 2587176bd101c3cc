import { describe, expect, it } from "vitest";
import { decodeEventStream } from "../../src/framing/aws-eventstream.js";
import { createNoticeStream, type NoticeStreamForm } from "../../src/node/notice-stream.js";
import type { ProviderName } from "../../src/types.js";
import { b, encodeFrames } from "../helpers/bedrock-events.js";

/**
 * The notice stream on its own, on bodies the proxy tests do not make: pieces that cut units,
 * streams cut before their terminal unit, JSON whose strings hold brackets and escaped quotes.
 */

const NOTICE = "\n\n[toolwire: notice]";

async function run(provider: ProviderName, form: NoticeStreamForm, pieces: Uint8Array[], notice: string | null = NOTICE): Promise<Uint8Array> {
  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      for (const piece of pieces) controller.enqueue(piece);
      controller.close();
    },
  }).pipeThrough(createNoticeStream(provider, form, () => notice));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

const text = (value: string): Uint8Array => new TextEncoder().encode(value);
const asText = (bytes: Uint8Array): string => new TextDecoder().decode(bytes);

function splitEvery(bytes: Uint8Array, size: number): Uint8Array[] {
  const out: Uint8Array[] = [];
  for (let at = 0; at < bytes.length; at += size) out.push(bytes.subarray(at, at + size));
  return out;
}

function frameNames(bytes: Uint8Array): string[] {
  return decodeEventStream(bytes).map((message) => String(message.headers[":event-type"]));
}

describe("Bedrock event stream", () => {
  const body = encodeFrames([b.messageStart(), b.text(0, "Hi."), b.stop(0), b.toolStart(2, "t", "write"), b.stop(2), b.messageStop("end_turn"), b.metadata()]);

  it("whole frames: a text block at the next free index, before messageStop", async () => {
    const out = await run("bedrock", "eventstream", [body]);
    expect(frameNames(out)).toEqual(["messageStart", "contentBlockDelta", "contentBlockStop", "contentBlockStart", "contentBlockStop", "contentBlockDelta", "contentBlockStop", "messageStop", "metadata"]);
    const delta = JSON.parse(new TextDecoder().decode(decodeEventStream(out)[5]?.payload)) as { contentBlockIndex: number; delta: { text: string } };
    expect(delta).toEqual({ contentBlockIndex: 3, delta: { text: NOTICE } });
  });

  it("pieces that cut frames: the frames stay whole and the notice is in (after messageStop when that frame began in an earlier piece)", async () => {
    for (const size of [1, 5, 13, 64]) {
      const names = frameNames(await run("bedrock", "eventstream", splitEvery(body, size)));
      expect(names.filter((name) => name === "contentBlockDelta")).toHaveLength(2);
      expect(names.at(-1) === "metadata" || names.at(-1) === "contentBlockStop").toBe(true);
    }
  });

  it("nothing withheld: the bytes as they came, however cut", async () => {
    expect(Buffer.from(await run("bedrock", "eventstream", splitEvery(body, 5), null)).equals(Buffer.from(body))).toBe(true);
  });

  it("a frame that fails its message CRC is passed over; after one whose prelude fails nothing is read, and the notice goes at the end", async () => {
    const starts: number[] = [];
    for (let at = 0; at < body.length; at += new DataView(body.buffer, body.byteOffset + at).getUint32(0)) starts.push(at);
    const [second, stop, metadata] = [starts[1] as number, starts[5] as number, starts[6] as number];
    // Cut in one-byte pieces, messageStop began in an earlier piece: the notice follows it.
    for (const [at, size, noticeAt] of [
      [second + 20, body.length, stop],
      [second + 20, 1, metadata],
      [second + 9, body.length, body.length],
      [second + 9, 1, body.length],
    ] as const) {
      const broken = body.slice();
      broken[at] = (broken[at] as number) ^ 0xff;
      const out = await run("bedrock", "eventstream", splitEvery(broken, size));
      const added = out.length - broken.length;
      expect(Buffer.from(out.subarray(0, noticeAt)).equals(Buffer.from(broken.subarray(0, noticeAt)))).toBe(true);
      expect(Buffer.from(out.subarray(noticeAt + added)).equals(Buffer.from(broken.subarray(noticeAt)))).toBe(true);
      expect(frameNames(out.subarray(noticeAt, noticeAt + added))).toEqual(["contentBlockDelta", "contentBlockStop"]);
    }
  });
});

describe("Gemini JSON array", () => {
  const first = { candidates: [{ content: { role: "model", parts: [{ text: 'a ] } [ { "x" \\ b' }] }, index: 0 }], responseId: "r" };
  const last = { candidates: [{ content: { role: "model", parts: [{ text: "]" }] }, finishReason: "STOP", index: 0 }] };

  it("strings with brackets, braces and escaped quotes do not move the element's start", async () => {
    const body = `[${JSON.stringify(first, null, 2)}\r\n,\r\n${JSON.stringify(last)}]`;
    const parsed = JSON.parse(asText(await run("gemini", "json-array", [text(body)]))) as Array<{ candidates: Array<{ content: { parts: Array<{ text: string }> }; finishReason?: string }>; responseId?: string }>;
    expect(parsed).toHaveLength(3);
    expect(parsed[1]).toEqual({ candidates: [{ content: { parts: [{ text: NOTICE }], role: "model" }, index: 0 }], responseId: "r" });
    expect(parsed[2]?.candidates[0]?.finishReason).toBe("STOP");
  });

  it("a stream without finishReason: the element goes before the closing bracket", async () => {
    const body = `[${JSON.stringify(first)}]`;
    const parsed = JSON.parse(asText(await run("gemini", "json-array", [text(body.slice(0, 10)), text(body.slice(10))]))) as unknown[];
    expect(parsed).toHaveLength(2);
    expect(JSON.stringify(parsed[1])).toContain("[toolwire: notice]");
  });

  it("the finishing element first: the notice right after the opening bracket", async () => {
    const parsed = JSON.parse(asText(await run("gemini", "json-array", [text(`[${JSON.stringify(last)}]`)]))) as unknown[];
    expect(parsed).toHaveLength(2);
    expect(JSON.stringify(parsed[0])).toContain("[toolwire: notice]");
  });
});

describe("Ollama NDJSON and Responses SSE", () => {
  it("Ollama without a done line: the notice line at the end, every line JSON", async () => {
    const out = asText(await run("ollama", "ndjson", [text('{"model":"q","created_at":"t","message":{"role":"assistant","content":"a"},"done":false}\n')]));
    const lines = out.trimEnd().split("\n").map((line) => JSON.parse(line) as { message: { content: string }; model?: string });
    expect(lines.map((line) => line.message.content)).toEqual(["a", NOTICE]);
    expect(lines[1]?.model).toBe("q");
  });

  it("Responses without sequence numbers: none on the notice's events either", async () => {
    const body = [
      { type: "response.created", response: { id: "r", output: [] } },
      { type: "response.completed", response: { id: "r", status: "completed", output: [] } },
    ]
      .map((event) => `data: ${JSON.stringify(event)}\n\n`)
      .join("");
    const events = asText(await run("openai-responses", "sse", [text(body)]))
      .split("\n\n")
      .filter((event) => event !== "")
      .map((event) => JSON.parse(event.slice(event.indexOf("data: ") + 6)) as { type: string; output_index?: number; sequence_number?: number; response?: { output: Array<{ id: string }> } });
    expect(events.map((event) => event.type)).toEqual(["response.created", "response.output_item.added", "response.content_part.added", "response.output_text.delta", "response.output_text.done", "response.content_part.done", "response.output_item.done", "response.completed"]);
    expect(events.every((event) => event.sequence_number === undefined)).toBe(true);
    expect(events[1]?.output_index).toBe(0);
    expect(events.at(-1)?.response?.output.map((item) => item.id)).toEqual(["msg_toolwire_notice"]);
  });
});

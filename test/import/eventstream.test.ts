import { describe, expect, it } from "vitest";
import { encodeEventStreamMessage } from "../../src/framing/aws-eventstream.js";
import { ImportError, importFile } from "../../src/import/index.js";
import { describeCorpus } from "../helpers/corpus.js";
import { corpusFile } from "./corpus.js";

function frame(eventType: string, payload: unknown): Uint8Array {
  return encodeEventStreamMessage({ ":event-type": eventType, ":content-type": "application/json", ":message-type": "event" }, JSON.stringify(payload));
}

describeCorpus("upstream", "AWS event stream (corpus)", () => {
  it("imports the base64 exception fixture as one Bedrock exception event", () => {
    const { name, bytes } = corpusFile("vercel__ai/packages__amazon-bedrock__src____fixtures____model-stream-error-exception.eventstream.base64.txt");
    const result = importFile(name, bytes);
    expect(result.format).toBe("eventstream-base64");
    expect(result.streams).toEqual([
      {
        sequence: null,
        provider: "bedrock",
        events: [
          {
            event: "exception",
            data: { exceptionType: "modelStreamErrorException", message: "Model Stream Error", originalStatusCode: 500, originalMessage: "The model stream failed." },
          },
        ],
      },
    ]);
  });

  it("unwraps the InvokeModel Claude cassette into Anthropic events", () => {
    const { name, bytes } = corpusFile(
      "charmbracelet__fantasy/providertests__testdata__TestBedrockCommon__bedrock-anthropic-claude-sonnet-4-5__tool_streaming.yaml",
    );
    const result = importFile(name, bytes);
    expect(result.format).toBe("go-vcr-v2");
    expect(result.streams.map((s) => [s.sequence, s.provider, s.events.length])).toEqual([
      ["interaction-0", "anthropic", 11],
      ["interaction-1", "anthropic", 23],
    ]);
    const [first] = result.streams;
    expect(first?.events[0]?.event).toBe("message_start");
    expect(first?.events.at(-1)?.event).toBe("message_stop");
    expect(first?.events.at(-1)?.data).toHaveProperty("amazon-bedrock-invocationMetrics");
    const toolStart = first!.events.find((e) => (e.data as { content_block?: { type: string } }).content_block?.type === "tool_use");
    expect((toolStart?.data as { content_block: { id: string } }).content_block.id).toMatch(/^toolu_bdrk_/);
    expect(result.notes).toContain('interaction-0: 11 InvokeModel chunk frames unwrapped (base64 bytes decoded; the envelope\'s "p" padding dropped)');
  });
});

describe("AWS event stream (synthetic)", () => {
  const body = new Uint8Array([
    ...frame("messageStart", { role: "assistant", p: "abc" }),
    ...frame("contentBlockStart", { contentBlockIndex: 0, start: { toolUse: { toolUseId: "t1", name: "add" } } }),
    ...frame("messageStop", { stopReason: "tool_use" }),
  ]);

  it("detects a raw binary body and keeps :event-type as the event name", () => {
    const result = importFile("capture.bin", body);
    expect(result.format).toBe("eventstream");
    expect(result.streams[0]?.provider).toBe("bedrock");
    expect(result.streams[0]?.events.map((e) => e.event)).toEqual(["messageStart", "contentBlockStart", "messageStop"]);
    expect(result.streams[0]?.events[0]?.data).toEqual({ role: "assistant", p: "abc" });
  });

  it("turns a corrupt frame into a malformed ImportError naming the offset", () => {
    const corrupt = body.slice();
    const second = frame("messageStart", { role: "assistant", p: "abc" }).length;
    corrupt[second + 30]! ^= 0x40;
    try {
      importFile("capture.bin", corrupt);
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(ImportError);
      expect((error as ImportError).code).toBe("malformed");
      expect((error as ImportError).message).toContain(`byte offset ${second}`);
      expect((error as ImportError).message).toContain("message CRC32 mismatch");
    }
  });

  it("reports a truncated body", () => {
    expect(() => importFile("capture.bin", body.subarray(0, body.length - 3))).toThrow(/truncated: .* trailing bytes/);
  });
});

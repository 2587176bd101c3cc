import { describe, expect, it } from "vitest";
import { decodeBytes, reencode } from "./support.js";

/**
 * The stream's last event held until the end of the body (Chat's `[DONE]`, Responses' terminal
 * event, while a call waits for the verdict the decoder gives only then): it goes out after the
 * calls are decided, and what came after it follows in the order it came, comments included.
 */

const utf8 = new TextEncoder();
const text = (bytes: Uint8Array): string => new TextDecoder().decode(bytes);

describe("Chat: [DONE] held behind a call decided at the end", () => {
  const chunk = (delta: Record<string, unknown>, finish: string | null = null): string =>
    `data: ${JSON.stringify({ id: "c", object: "chat.completion.chunk", created: 1, model: "m", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
  // A trailing comma: the arguments do not parse strictly, so the decoder decides the call with the end of the stream.
  const body =
    chunk({ role: "assistant", content: "" }) +
    chunk({ tool_calls: [{ index: 0, id: "call_a", type: "function", function: { name: "get_weather", arguments: '{"city": "Tokyo",}' } }] }) +
    chunk({}, "tool_calls") +
    "data: [DONE]\n\n: keep-alive\n\n";

  it("writes the repaired call, then [DONE], then the comment that followed it", () => {
    for (const sizes of [[1 << 20], [5]]) {
      const { output, reencoder } = reencode("openai-chat", utf8.encode(body), sizes);
      expect(reencoder.repairs).toContainEqual(expect.objectContaining({ action: "rewritten", id: "call_a" }));
      expect(text(output).endsWith("data: [DONE]\n\n: keep-alive\n\n")).toBe(true);
      expect(decodeBytes("openai-chat", output).toolCalls.map((call) => [call.id, call.arguments, call.repairs])).toEqual([["call_a", { city: "Tokyo" }, []]]);
    }
  });
});

/**
 * Provider messages as real clients send them (extra fields, images, cache markers, every content
 * spelling) read to neutral and written back unchanged; a repair elsewhere in the history leaves
 * them as they were.
 */
import { describe, expect, it } from "vitest";
import { checkHistory, fromNeutral, repairHistory, toNeutral, type HistoryFormat } from "../../src/history/index.js";

const HISTORIES: Record<HistoryFormat, unknown[]> = {
  anthropic: [
    { role: "user", content: [{ type: "text", text: "Look:", cache_control: { type: "ephemeral" } }, { type: "image", source: { type: "base64", media_type: "image/png", data: "iVBOR" } }] },
    {
      role: "assistant",
      content: [
        { type: "thinking", thinking: "An image of a chart.", signature: "EqQB" },
        { type: "redacted_thinking", data: "EmwKAhgBEgy" },
        { type: "text", text: "Per the docs", citations: [{ type: "char_location", cited_text: "x", document_index: 0, start_char_index: 0, end_char_index: 1 }] },
        { type: "server_tool_use", id: "srvtoolu_1", name: "web_search", input: { query: "chart" } },
        { type: "web_search_tool_result", tool_use_id: "srvtoolu_1", content: [] },
        { type: "tool_use", id: "toolu_1", name: "zoom", input: { factor: 2 }, caller: { type: "direct" } },
      ],
    },
    {
      role: "user",
      content: [
        { type: "tool_result", tool_use_id: "toolu_1", content: [{ type: "text", text: "zoomed" }, { type: "image", source: { type: "base64", media_type: "image/png", data: "AAAA" } }], is_error: false },
        { type: "text", text: "thanks" },
      ],
    },
    { role: "assistant", content: "Done." },
  ],
  "openai-chat": [
    { role: "developer", content: "Be terse." },
    { role: "user", name: "alice", content: [{ type: "text", text: "What is this?" }, { type: "image_url", image_url: { url: "data:image/png;base64,AAA" } }] },
    {
      role: "assistant",
      reasoning: "Zoom first.",
      content: "",
      refusal: null,
      tool_calls: [
        { id: "call_1", type: "function", function: { name: "zoom", arguments: '{"factor": 2}' }, extra_content: { google: { thought_signature: "CiQB" } } },
        { id: "call_2", type: "custom", custom: { name: "run_python", input: "print(1)" } },
      ],
    },
    { role: "tool", tool_call_id: "call_1", content: [{ type: "text", text: "zoomed" }] },
    { role: "tool", tool_call_id: "call_2", content: "1" },
    { role: "assistant", content: null, tool_calls: [] },
  ],
  "openai-responses": [
    { type: "message", role: "user", content: [{ type: "input_text", text: "Check both." }, { type: "input_image", image_url: "data:image/png;base64,AAA", detail: "auto" }] },
    { type: "reasoning", id: "rs_1", summary: [{ type: "summary_text", text: "Plan" }], encrypted_content: "gAAA", status: "completed" },
    { type: "message", id: "msg_1", role: "assistant", status: "completed", content: [{ type: "output_text", text: "Checking.", annotations: [] }] },
    { type: "function_call", id: "fc_1", call_id: "call_1", name: "add", arguments: "", status: "completed" },
    { type: "custom_tool_call", id: "ctc_1", call_id: "call_2", name: "run_python", input: "print(1)" },
    { type: "web_search_call", id: "ws_1", status: "completed", action: { type: "search", query: "x" } },
    { type: "function_call_output", call_id: "call_1", output: [{ type: "input_text", text: "5" }] },
    { type: "custom_tool_call_output", call_id: "call_2", output: "1" },
  ],
  gemini: [
    { role: "user", parts: [{ text: "Weather?" }, { inlineData: { mimeType: "image/png", data: "AAA" } }] },
    {
      role: "model",
      parts: [
        { text: "Thinking about it", thought: true, thoughtSignature: "CtYB" },
        { text: "Checking.", thoughtSignature: "CiQB" },
        { functionCall: { name: "weather", args: { city: "Paris" } }, thoughtSignature: "CloB" },
        { functionCall: { name: "weather", args: { city: "Rome" } } },
      ],
    },
    {
      role: "user",
      parts: [{ functionResponse: { name: "weather", response: { temp: 18 } } }, { functionResponse: { name: "weather", response: { error: { code: 404 } } } }],
    },
    { role: "model", parts: [{ text: "Paris is 18C." }] },
  ],
  bedrock: [
    { role: "user", content: [{ text: "Describe" }, { image: { format: "png", source: { bytes: "AAA" } } }, { cachePoint: { type: "default" } }] },
    {
      role: "assistant",
      content: [
        { reasoningContent: { reasoningText: { text: "Look closer.", signature: "sig" } } },
        { reasoningContent: { redactedContent: "AAAA" } },
        { toolUse: { toolUseId: "tooluse_1", name: "zoom", input: { factor: 2 } } },
      ],
    },
    { role: "user", content: [{ toolResult: { toolUseId: "tooluse_1", content: [{ json: { ok: true } }, { text: "zoomed" }], status: "success" } }] },
    { role: "assistant", content: [{ text: "A chart." }] },
  ],
};

describe.each(Object.entries(HISTORIES) as Array<[HistoryFormat, unknown[]]>)("%s", (format, history) => {
  it("is valid and converts to neutral and back unchanged", () => {
    expect(checkHistory(history, format)).toEqual([]);
    expect(fromNeutral(toNeutral(history, format), format)).toEqual(history);
  });

  it("a repair elsewhere leaves these messages exactly as they were", () => {
    const broken = [...history, ...(tail[format] as unknown[])];
    const repaired = repairHistory(broken, format);
    expect(repaired.edits.length).toBeGreaterThan(0);
    expect(repaired.messages.slice(0, history.length)).toEqual(history);
    expect(checkHistory(repaired.messages, format)).toEqual([]);
  });
});

/** A dangling call appended to each history. */
const tail: Record<HistoryFormat, unknown[]> = {
  anthropic: [{ role: "user", content: "again" }, { role: "assistant", content: [{ type: "tool_use", id: "toolu_9", name: "zoom", input: {} }] }],
  "openai-chat": [{ role: "user", content: "again" }, { role: "assistant", content: null, tool_calls: [{ id: "call_9", type: "function", function: { name: "zoom", arguments: "{}" } }] }],
  "openai-responses": [{ role: "user", content: "again" }, { type: "function_call", call_id: "call_9", name: "zoom", arguments: "{}" }],
  gemini: [{ role: "user", parts: [{ text: "again" }] }, { role: "model", parts: [{ functionCall: { name: "zoom", args: {} } }] }],
  bedrock: [{ role: "user", content: [{ text: "again" }] }, { role: "assistant", content: [{ toolUse: { toolUseId: "tooluse_9", name: "zoom", input: {} } }] }],
};

describe("touched messages keep their own extra fields", () => {
  it("a moved Anthropic result keeps cache_control; the message it moved into keeps its blocks", () => {
    const history = [
      { role: "user", content: "go" },
      { role: "assistant", content: [{ type: "tool_use", id: "toolu_1", name: "ls", input: {} }] },
      { role: "user", content: [{ type: "text", text: "env", cache_control: { type: "ephemeral" } }, { type: "tool_result", tool_use_id: "toolu_1", content: "a b", cache_control: { type: "ephemeral" } }] },
    ];
    const repaired = repairHistory(history, "anthropic");
    expect(repaired.messages[2]).toEqual({
      role: "user",
      content: [
        { type: "tool_result", tool_use_id: "toolu_1", content: "a b", cache_control: { type: "ephemeral" } },
        { type: "text", text: "env", cache_control: { type: "ephemeral" } },
      ],
    });
  });

  it("unreadable messages are reported, not guessed at", () => {
    expect(checkHistory([{ role: "user", content: 42 }, "junk", null], "anthropic").map((fault) => [fault.code, fault.index])).toEqual([
      ["malformed_message", 0],
      ["malformed_message", 1],
      ["malformed_message", 2],
    ]);
    expect(() => checkHistory({ messages: [] } as unknown as unknown[], "anthropic")).toThrow(expect.objectContaining({ name: "ToolwireError", code: "invalid_history" }));
  });
});

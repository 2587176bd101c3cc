/**
 * Decoded turns → provider messages. Expected values are typed with the official SDK param types
 * (Anthropic, OpenAI Chat, OpenAI Responses), so an encoding that drifts from what the SDKs accept
 * fails either the type check or the equality.
 */
import type { MessageParam } from "@anthropic-ai/sdk/resources/messages/messages";
import type { ChatCompletionMessageParam } from "openai/resources/chat/completions/completions";
import type { ResponseInputItem } from "openai/resources/responses/responses";
import { describe, expect, it } from "vitest";
import { checkHistory, encodeToolResults, encodeTurn, type HistoryFormat } from "../../src/history/index.js";
import { INVALID_ARGUMENTS_KEY, invalidArgumentsPlaceholder, readArguments } from "../../src/history/model.js";
import type { ContentBlock, DecodedTurn, ProviderName, ToolCall } from "../../src/types.js";

function call(index: number, id: string, name: string, args: Record<string, unknown> | null, extra: Partial<ToolCall> = {}): ToolCall {
  const valid = args !== null;
  return {
    index,
    id,
    name,
    arguments: args,
    rawArguments: valid ? JSON.stringify(args) : '{"path": "notes.md", "content": "first li',
    source: valid ? "delta" : null,
    complete: valid,
    repairs: [],
    error: valid ? null : { code: "truncated", message: "The arguments were cut off by the output limit (max_tokens) before the JSON was complete.", cause: "max_tokens" },
    ...extra,
  };
}

function turn(provider: ProviderName, blocks: ContentBlock[], toolCalls: ToolCall[], extra: Partial<DecodedTurn> = {}): DecodedTurn {
  return {
    sequence: null,
    provider,
    status: "complete",
    finishReason: toolCalls.length > 0 ? "tool_calls" : "stop",
    rawFinishReason: null,
    text: blocks.flatMap((block) => (block.type === "text" ? [block.text] : [])).join(""),
    reasoning: "",
    toolCalls,
    serverToolCalls: [],
    blocks,
    usage: null,
    messageId: null,
    model: null,
    error: null,
    diagnostics: [],
    ...extra,
  };
}

const USER: Record<HistoryFormat, unknown> = {
  anthropic: { role: "user", content: "go" },
  "openai-chat": { role: "user", content: "go" },
  "openai-responses": { role: "user", content: "go" },
  gemini: { role: "user", parts: [{ text: "go" }] },
  bedrock: { role: "user", content: [{ text: "go" }] },
};

describe("encodeTurn: Anthropic", () => {
  const decoded = turn(
    "anthropic",
    [
      { type: "thinking", thinking: "Read both files.", signature: "EqQBCkgIARABGAIiQL" },
      { type: "text", text: "" },
      { type: "text", text: "Reading." },
      { type: "tool_call", callIndex: 0 },
      { type: "tool_call", callIndex: 1 },
    ],
    [call(0, "toolu_01A", "read_file", { path: "a.txt" }, { providerFields: { caller: { type: "direct" } } }), call(1, "toolu_01B", "write_file", null)],
  );

  it("keeps thinking with its signature, drops empty text, sends arguments as objects", () => {
    const encoded = encodeTurn(decoded, "anthropic");
    const expected: MessageParam = {
      role: "assistant",
      content: [
        { type: "thinking", thinking: "Read both files.", signature: "EqQBCkgIARABGAIiQL" },
        { type: "text", text: "Reading." },
        { type: "tool_use", id: "toolu_01A", name: "read_file", input: { path: "a.txt" }, caller: { type: "direct" } },
        {
          type: "tool_use",
          id: "toolu_01B",
          name: "write_file",
          input: { [INVALID_ARGUMENTS_KEY]: { code: "truncated", message: "The arguments were cut off by the output limit (max_tokens) before the JSON was complete." } },
        },
      ],
    };
    expect(encoded.messages).toEqual([expected]);
  });

  it("never sends the raw text of a truncated call, and pairs it with an error result", () => {
    const encoded = encodeTurn(decoded, "anthropic");
    expect(JSON.stringify(encoded.messages)).not.toContain("first li");
    expect(encoded.errorResults).toEqual([
      {
        type: "tool_result",
        callId: "toolu_01B",
        name: "write_file",
        isError: true,
        content: "The arguments were cut off by the output limit (max_tokens) before the JSON was complete. Send the call again with complete, valid JSON arguments.",
      },
    ]);
    const results = encodeToolResults([{ callId: "toolu_01A", content: "contents of a" }, ...encoded.errorResults], "anthropic");
    const expected: MessageParam[] = [
      {
        role: "user",
        content: [
          { type: "tool_result", tool_use_id: "toolu_01A", content: "contents of a" },
          { type: "tool_result", tool_use_id: "toolu_01B", content: expect.stringContaining("Send the call again") as unknown as string, is_error: true },
        ],
      },
    ];
    expect(results).toEqual(expected);
    expect(checkHistory([USER.anthropic, ...encoded.messages, ...results], "anthropic")).toEqual([]);
  });

  it("with invalidCalls: drop, leaves the call out and says so in the text", () => {
    const encoded = encodeTurn(decoded, "anthropic", { invalidCalls: "drop" });
    expect(encoded.errorResults).toEqual([]);
    expect(encoded.messages).toEqual([
      {
        role: "assistant",
        content: [
          { type: "thinking", thinking: "Read both files.", signature: "EqQBCkgIARABGAIiQL" },
          { type: "text", text: "Reading." },
          { type: "tool_use", id: "toolu_01A", name: "read_file", input: { path: "a.txt" }, caller: { type: "direct" } },
          { type: "text", text: expect.stringContaining("A call to write_file (toolu_01B) was not sent") },
        ],
      },
    ]);
  });

  it("keeps server tool blocks in order, and drops all Anthropic state for another provider", () => {
    const search = turn(
      "anthropic",
      [
        { type: "server_tool_call", callIndex: 0 },
        { type: "opaque", blockType: "web_search_tool_result", value: { type: "web_search_tool_result", tool_use_id: "srvtoolu_1", content: [] } },
        { type: "text", text: "Found it." },
      ],
      [],
      { serverToolCalls: [call(0, "srvtoolu_1", "web_search", { query: "x" }, { kind: "server", providerFields: { blockType: "server_tool_use" } })] },
    );
    expect(encodeTurn(search, "anthropic").messages).toEqual([
      {
        role: "assistant",
        content: [
          { type: "server_tool_use", id: "srvtoolu_1", name: "web_search", input: { query: "x" } },
          { type: "web_search_tool_result", tool_use_id: "srvtoolu_1", content: [] },
          { type: "text", text: "Found it." },
        ],
      },
    ]);
    expect(encodeTurn(search, "openai-chat").messages).toEqual([{ role: "assistant", content: "Found it." }]);
  });
});

describe("encodeTurn: OpenAI Chat", () => {
  it("arguments as a JSON string, reasoning_content kept for the provider that sent it", () => {
    const decoded = turn(
      "openai-chat",
      [{ type: "reasoning", text: "The user wants the weather." }, { type: "text", text: "" }, { type: "tool_call", callIndex: 0 }],
      [call(0, "call_00_x", "weather", { city: "Paris" })],
    );
    const encoded = encodeTurn(decoded, "openai-chat");
    const expected: ChatCompletionMessageParam & { reasoning_content: string } = {
      role: "assistant",
      reasoning_content: "The user wants the weather.",
      content: null,
      tool_calls: [{ id: "call_00_x", type: "function", function: { name: "weather", arguments: '{"city":"Paris"}' } }],
    };
    expect(encoded.messages).toEqual([expected]);
    const results = encodeToolResults([{ callId: "call_00_x", content: "18C" }], "openai-chat");
    const expectedResults: ChatCompletionMessageParam[] = [{ role: "tool", tool_call_id: "call_00_x", content: "18C" }];
    expect(results).toEqual(expectedResults);
    expect(checkHistory([USER["openai-chat"], ...encoded.messages, ...results], "openai-chat")).toEqual([]);
  });

  it("says an error in the text, since Chat and Responses results have no error flag", () => {
    const expected: ChatCompletionMessageParam[] = [{ role: "tool", tool_call_id: "call_1", content: "Error: ENOENT: no such file" }];
    expect(encodeToolResults([{ callId: "call_1", content: "ENOENT: no such file", isError: true }], "openai-chat")).toEqual(expected);
    const items: ResponseInputItem[] = [{ type: "function_call_output", call_id: "call_1", output: "Error: ENOENT: no such file" }];
    expect(encodeToolResults([{ callId: "call_1", content: [{ type: "text", text: "ENOENT: no such file" }], isError: true }], "openai-responses")).toEqual(items);
  });

  it("keeps the tool call's extra wire fields (Gemini's OpenAI endpoint thought signature)", () => {
    const extra = { extra_content: { google: { thought_signature: "CiQB" } } };
    const decoded = turn("openai-chat", [{ type: "tool_call", callIndex: 0 }], [call(0, "call_1", "ls", {}, { providerFields: { ...extra, thoughtSignature: "CiQB", choice: 0 } })]);
    const [message] = encodeTurn(decoded, "openai-chat").messages as Array<{ tool_calls: unknown[] }>;
    expect(message?.tool_calls).toEqual([{ id: "call_1", type: "function", function: { name: "ls", arguments: "{}" }, ...extra }]);
  });
});

describe("encodeTurn: OpenAI Responses", () => {
  it("reasoning item, message and function calls as separate items, with their ids", () => {
    const decoded = turn(
      "openai-responses",
      [
        { type: "reasoning", text: "", id: "rs_1", encryptedContent: "gAAAA", summary: ["Plan: read"] },
        { type: "text", text: "Checking both." },
        { type: "tool_call", callIndex: 0 },
        { type: "tool_call", callIndex: 1 },
      ],
      [call(0, "call_A", "add", { a: 2, b: 3 }, { providerFields: { itemId: "fc_A" } }), call(1, "call_B", "multiply", { a: 2, b: 3 }, { providerFields: { itemId: "fc_B" } })],
    );
    const encoded = encodeTurn(decoded, "openai-responses");
    const expected: ResponseInputItem[] = [
      { type: "reasoning", id: "rs_1", summary: [{ type: "summary_text", text: "Plan: read" }], encrypted_content: "gAAAA" },
      { role: "assistant", content: "Checking both." },
      { type: "function_call", call_id: "call_A", name: "add", arguments: '{"a":2,"b":3}', id: "fc_A" },
      { type: "function_call", call_id: "call_B", name: "multiply", arguments: '{"a":2,"b":3}', id: "fc_B" },
    ];
    expect(encoded.messages).toEqual(expected);
    const outputs = encodeToolResults(
      [
        { callId: "call_A", content: "5" },
        { callId: "call_B", content: "6" },
      ],
      "openai-responses",
    );
    const expectedOutputs: ResponseInputItem[] = [
      { type: "function_call_output", call_id: "call_A", output: "5" },
      { type: "function_call_output", call_id: "call_B", output: "6" },
    ];
    expect(outputs).toEqual(expectedOutputs);
    expect(checkHistory([USER["openai-responses"], ...encoded.messages, ...outputs], "openai-responses")).toEqual([]);
  });

  it("custom tools go back as custom_tool_call with their text input", () => {
    const decoded = turn("openai-responses", [{ type: "tool_call", callIndex: 0 }], [call(0, "call_C", "code_exec", { input: "print(1)" }, { providerFields: { itemId: "ctc_1", customToolInput: true } })]);
    const expected: ResponseInputItem[] = [{ type: "custom_tool_call", call_id: "call_C", name: "code_exec", input: "print(1)", id: "ctc_1" }];
    expect(encodeTurn(decoded, "openai-responses").messages).toEqual(expected);
  });
});

describe("encodeTurn: Gemini and Bedrock", () => {
  it("Gemini: thoughtSignature stays on its functionCall part; minted ids are not sent", () => {
    const decoded = turn(
      "gemini",
      [{ type: "text", text: "Let me compute both." }, { type: "tool_call", callIndex: 0 }, { type: "tool_call", callIndex: 1 }],
      [call(0, "gemini_tw_0abc", "add", { a: 2, b: 3 }, { providerFields: { thoughtSignature: "CloBvj7" } }), call(1, "call_v3_id", "multiply", { a: 2, b: 3 })],
    );
    const encoded = encodeTurn(decoded, "gemini");
    expect(encoded.messages).toEqual([
      {
        role: "model",
        parts: [
          { text: "Let me compute both." },
          { functionCall: { name: "add", args: { a: 2, b: 3 } }, thoughtSignature: "CloBvj7" },
          { functionCall: { name: "multiply", args: { a: 2, b: 3 }, id: "call_v3_id" } },
        ],
      },
    ]);
    const results = encodeToolResults(
      [
        { callId: "gemini_tw_0abc", name: "add", content: "5", syntheticId: true },
        { callId: "call_v3_id", name: "multiply", content: "6" },
      ],
      "gemini",
    );
    expect(results).toEqual([
      {
        role: "user",
        parts: [{ functionResponse: { name: "add", response: { output: "5" } } }, { functionResponse: { name: "multiply", response: { output: "6" }, id: "call_v3_id" } }],
      },
    ]);
    expect(checkHistory([USER.gemini, ...encoded.messages, ...results], "gemini")).toEqual([]);
  });

  it("Bedrock: reasoningContent with signature, toolUse input object, error results with status", () => {
    const decoded = turn(
      "bedrock",
      [{ type: "thinking", thinking: "need the file", signature: "sig" }, { type: "tool_call", callIndex: 0 }],
      [call(0, "tooluse_A", "read_file", { path: "a" })],
    );
    const encoded = encodeTurn(decoded, "bedrock");
    expect(encoded.messages).toEqual([
      {
        role: "assistant",
        content: [{ reasoningContent: { reasoningText: { text: "need the file", signature: "sig" } } }, { toolUse: { toolUseId: "tooluse_A", name: "read_file", input: { path: "a" } } }],
      },
    ]);
    const results = encodeToolResults([{ callId: "tooluse_A", content: "no such file", isError: true }], "bedrock");
    expect(results).toEqual([{ role: "user", content: [{ toolResult: { toolUseId: "tooluse_A", content: [{ text: "no such file" }], status: "error" } }] }]);
    expect(checkHistory([USER.bedrock, ...encoded.messages, ...results], "bedrock")).toEqual([]);
  });
});

describe("an invalid call's placeholder reads back as the same error, for every call error code", () => {
  it.each(["invalid_json", "truncated", "not_object", "too_large", "too_deep", "number_out_of_range"] as const)("%s", (code) => {
    const error = { code, message: `The call was not executed (${code}).` };
    expect(readArguments(invalidArgumentsPlaceholder(error))).toEqual({ arguments: null, error });
  });
});

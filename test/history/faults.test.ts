/**
 * One case per fault code, each built from a real error report: the history shape that caused it
 * and the provider's error text. For each case: the check finds the fault where the provider does,
 * the classifier maps the provider's text to a history repair naming that fault, and the repair
 * (with the policy the classifier suggests) leaves a history that passes the check.
 */
import { describe, expect, it } from "vitest";
import { classifyProviderError } from "../../src/guard/provider-errors.js";
import { checkHistory, repairHistory, type HistoryFormat, type HistoryOptions } from "../../src/history/index.js";
import { FAULT_CODES, type FaultCode } from "../../src/history/pairing.js";

interface Case {
  code: FaultCode;
  format: HistoryFormat;
  /** Where the report comes from. */
  source: string;
  history: unknown[];
  options?: HistoryOptions;
  /** Message index and ids the check must report. */
  index: number;
  ids?: string[];
  /**
   * The provider's error response. The classifier must map it to a history repair naming the
   * fault, unless `fails` says why resending a repaired history is not the recovery.
   */
  error: { status: number | null; body: unknown; messageIndex?: number; fails?: string };
}

const anthropicError = (message: string) => ({ type: "error", error: { type: "invalid_request_error", message }, request_id: "req_011CX" });
const openaiError = (message: string, param: string | null = null, code: string | null = null) => ({ error: { message, type: "invalid_request_error", param, code } });
const geminiError = (message: string) => ({ error: { code: 400, message, status: "INVALID_ARGUMENT" } });
const bedrockError = (message: string) => ({ name: "ValidationException", $fault: "client", $metadata: { httpStatusCode: 400 }, message });

const use = (id: string, name = "read_file", input: unknown = { path: "a.txt" }) => ({ type: "tool_use", id, name, input });
const result = (id: string, content = "ok") => ({ type: "tool_result", tool_use_id: id, content });
const thinking = (text = "plan", signature = "EqQBCkgIARABGAIiQL") => ({ type: "thinking", thinking: text, signature });
const chatCall = (id: string, name = "read_file", args = '{"path":"a.txt"}') => ({ id, type: "function", function: { name, arguments: args } });

const CASES: Case[] = [
  {
    code: "malformed_message",
    format: "anthropic",
    source: "ianarawjo/ChainForge#271: a system prompt sent as a message",
    history: [{ role: "system", content: "Be brief." }, { role: "user", content: "How to grow okra?" }],
    index: 0,
    error: {
      status: 400,
      body: anthropicError('messages: Unexpected role "system". The Messages API accepts a top-level `system` parameter, not "system" as an input message role.'),
      fails: "the repair drops the message; the system prompt belongs in the request's `system` field (convertHistory lifts it there)",
    },
  },
  {
    code: "missing_result",
    format: "anthropic",
    source: "anthropics/claude-code#1237: run aborted while the tool ran, user typed again",
    history: [
      { role: "user", content: "Update the notes file" },
      { role: "assistant", content: [{ type: "text", text: "Updating." }, use("toolu_01Gho1LhNQt7FjqEiiHkrVMK", "edit_file")] },
      { role: "user", content: "why did it stop?" },
    ],
    index: 1,
    ids: ["toolu_01Gho1LhNQt7FjqEiiHkrVMK"],
    error: {
      status: 400,
      body: anthropicError(
        "messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_01Gho1LhNQt7FjqEiiHkrVMK. Each `tool_use` block must have a corresponding `tool_result` block in the next message.",
      ),
      messageIndex: 1,
    },
  },
  {
    code: "result_not_adjacent",
    format: "openai-chat",
    source: "farhan0167/otto-m8#30: a user message landed between the call and its tool message",
    history: [
      { role: "user", content: "weather in Paris?" },
      { role: "assistant", content: null, tool_calls: [chatCall("call_sS3HejVTEiGEJGwTW7bxHKh8", "get_weather", '{"city":"Paris"}')] },
      { role: "user", content: "and Rome?" },
      { role: "tool", tool_call_id: "call_sS3HejVTEiGEJGwTW7bxHKh8", content: "18C" },
    ],
    index: 3,
    ids: ["call_sS3HejVTEiGEJGwTW7bxHKh8"],
    error: {
      status: 400,
      body: openaiError(
        "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: call_sS3HejVTEiGEJGwTW7bxHKh8",
        "messages.[1].role",
      ),
      messageIndex: 1,
    },
  },
  {
    code: "result_not_leading",
    format: "anthropic",
    source: "Zoo-Code-Org/Zoo-Code#1705: environment text placed before the tool_result blocks",
    history: [
      { role: "user", content: "list files" },
      { role: "assistant", content: [use("toolu_01A", "list_files", { path: "." })] },
      { role: "user", content: [{ type: "text", text: "<environment_details>cwd=/repo</environment_details>" }, result("toolu_01A", "a.txt\nb.txt")] },
    ],
    index: 2,
    ids: ["toolu_01A"],
    error: {
      status: 400,
      body: anthropicError(
        "messages.2: Did not find 1 `tool_result` block(s) at the beginning of this message. Messages following `tool_use` blocks must begin with a matching number of `tool_result` blocks.",
      ),
      messageIndex: 2,
    },
  },
  {
    code: "orphan_result",
    format: "anthropic",
    source: "anthropics/claude-code#18947: history trimmed so that it starts with a tool_result",
    history: [
      { role: "user", content: [result("toolu_01FfCGddPyWsq3gCLqXtsJki", "file contents")] },
      { role: "assistant", content: "Here is the summary." },
      { role: "user", content: "thanks, continue" },
    ],
    index: 0,
    ids: ["toolu_01FfCGddPyWsq3gCLqXtsJki"],
    error: {
      status: 400,
      body: anthropicError(
        "messages.0.content.0: unexpected `tool_use_id` found in `tool_result` blocks: toolu_01FfCGddPyWsq3gCLqXtsJki. Each `tool_result` block must have a corresponding `tool_use` block in the previous message.",
      ),
      messageIndex: 0,
    },
  },
  {
    code: "orphan_server_result",
    format: "anthropic",
    source: "anthropics/claude-code#64383: advisor result replayed without its server_tool_use",
    history: [
      { role: "user", content: "review this plan" },
      {
        role: "assistant",
        content: [
          { type: "advisor_tool_result", tool_use_id: "srvtoolu_01JjfQsdhSJkT7qLCL7Pj9jc", content: { type: "advisor_result", text: "looks fine" } },
          { type: "text", text: "The advisor agrees." },
        ],
      },
      { role: "user", content: "go on" },
    ],
    index: 1,
    ids: ["srvtoolu_01JjfQsdhSJkT7qLCL7Pj9jc"],
    error: {
      status: 400,
      body: anthropicError(
        "messages.1.content.0: unexpected `tool_use_id` found in `advisor_tool_result` blocks: srvtoolu_01JjfQsdhSJkT7qLCL7Pj9jc. Each `advisor_tool_result` block must have a corresponding `server_tool_use` block before it.",
      ),
      messageIndex: 1,
    },
  },
  {
    code: "duplicate_call_id",
    format: "anthropic",
    source: "anthropics/claude-code#20901: a turn replayed twice after resuming a session",
    history: [
      { role: "user", content: "read a.txt" },
      { role: "assistant", content: [use("toolu_01Dup")] },
      { role: "user", content: [result("toolu_01Dup", "A")] },
      { role: "assistant", content: [use("toolu_01Dup")] },
      { role: "user", content: [result("toolu_01Dup", "A")] },
    ],
    index: 3,
    ids: ["toolu_01Dup"],
    error: { status: 400, body: anthropicError("messages.3.content.0: `tool_use` ids must be unique"), messageIndex: 3 },
  },
  {
    code: "duplicate_result",
    format: "openai-chat",
    options: { ids: "none" },
    source: "mistralai/client-python#234: the tool result appended twice to the history",
    history: [
      { role: "user", content: "I found a stray dog" },
      { role: "assistant", content: "", tool_calls: [chatCall("eKp7ETcvQ", "submit_report", '{"animal":"dog"}')] },
      { role: "tool", tool_call_id: "eKp7ETcvQ", content: "report 17 created" },
      { role: "tool", tool_call_id: "eKp7ETcvQ", content: "report 17 created" },
    ],
    index: 3,
    ids: ["eKp7ETcvQ"],
    error: {
      status: 400,
      body: { object: "error", message: "Not the same number of function calls and responses", type: "invalid_request_error", param: null, code: 3230 },
    },
  },
  {
    code: "invalid_call_id",
    format: "anthropic",
    source: "anomalyco/opencode#1279: a Kimi-style id replayed to Anthropic after a provider switch",
    history: [
      { role: "user", content: "find the config" },
      { role: "assistant", content: [use("functions.glob_search:0", "glob_search", { pattern: "*.toml" })] },
      { role: "user", content: [result("functions.glob_search:0", "pyproject.toml")] },
    ],
    index: 1,
    ids: ["functions.glob_search:0"],
    error: { status: 400, body: anthropicError("messages.1.content.0.tool_use.id: String should match pattern '^[a-zA-Z0-9_-]+$'"), messageIndex: 1 },
  },
  {
    code: "invalid_call_id",
    format: "openai-chat",
    source: "agno-agi/agno#5382: a proxy-minted 53-character id replayed to OpenAI",
    history: [
      { role: "user", content: "search" },
      { role: "assistant", content: null, tool_calls: [chatCall("fc_68b14140a1c88193a6417aabd97428b40b003345362caed7ab", "search", '{"q":"x"}')] },
      { role: "tool", tool_call_id: "fc_68b14140a1c88193a6417aabd97428b40b003345362caed7ab", content: "3 hits" },
    ],
    index: 1,
    ids: ["fc_68b14140a1c88193a6417aabd97428b40b003345362caed7ab"],
    error: {
      status: 400,
      body: openaiError(
        "Invalid 'messages[1].tool_calls[0].id': string too long. Expected a string with maximum length 40, but got a string with length 53 instead.",
        "messages[1].tool_calls[0].id",
        "string_above_max_length",
      ),
      messageIndex: 1,
    },
  },
  {
    code: "invalid_item_id",
    format: "openai-responses",
    source: "continuedev/continue#11785: a message item id reused on a function_call item",
    history: [
      { role: "user", content: "run the tests" },
      { type: "function_call", id: "msg_0a4d512680f81369006a", call_id: "call_1", name: "shell", arguments: '{"cmd":"npm test"}' },
      { type: "function_call_output", call_id: "call_1", output: "ok" },
    ],
    index: 1,
    ids: ["call_1"],
    error: { status: 400, body: openaiError("Invalid 'input[1].id': 'msg_0a4d512680f81369006a'. Expected an ID that begins with 'fc'.", "input[1].id"), messageIndex: 1 },
  },
  {
    code: "invalid_call",
    format: "anthropic",
    source: "prism-php/prism#659: a failed call stored with arguments [] and replayed",
    history: [
      { role: "user", content: "storm damage reports?" },
      { role: "assistant", content: [use("toolu_015WBj6jr633pH6hVsLHSzXu", "search_archive", { search: "storm" }), use("toolu_01Cyurqq4x6RVz7RzAEmCC6W", "search_archive", [])] },
      { role: "user", content: [result("toolu_015WBj6jr633pH6hVsLHSzXu", "2 hits"), result("toolu_01Cyurqq4x6RVz7RzAEmCC6W", "error: bad input")] },
    ],
    index: 1,
    ids: ["toolu_01Cyurqq4x6RVz7RzAEmCC6W"],
    error: { status: 400, body: anthropicError("messages.1.content.1.tool_use.input: Input should be a valid dictionary"), messageIndex: 1 },
  },
  {
    code: "empty_text",
    format: "anthropic",
    source: "anthropics/anthropic-sdk-python#461: an empty text block kept beside a tool_use on replay",
    history: [
      { role: "user", content: "what time is it?" },
      { role: "assistant", content: [{ type: "text", text: "" }, use("toolu_01Clock", "clock", {})] },
      { role: "user", content: [result("toolu_01Clock", "12:00")] },
    ],
    index: 1,
    error: { status: 400, body: anthropicError("messages: text content blocks must be non-empty") },
  },
  {
    code: "empty_message",
    format: "anthropic",
    source: "Anthropic 400 'all messages must have non-empty content' (a user turn emptied by compaction)",
    history: [
      { role: "user", content: "hi" },
      { role: "assistant", content: "hello" },
      { role: "user", content: [] },
    ],
    index: 2,
    error: { status: 400, body: anthropicError("messages.2: all messages must have non-empty content except for the optional final assistant message") },
  },
  {
    code: "empty_error_result",
    format: "bedrock",
    source: "aws-samples/sample-multi-agent-orchestration-chat-on-agentcore#15: a failed tool stored with status error and no content",
    history: [
      { role: "user", content: [{ text: "deploy" }] },
      { role: "assistant", content: [{ toolUse: { toolUseId: "tooluse_lAG_zP8QRHmSYOwZzzaCqA", name: "deploy", input: {} } }] },
      { role: "user", content: [{ toolResult: { toolUseId: "tooluse_lAG_zP8QRHmSYOwZzzaCqA", content: [], status: "error" } }] },
    ],
    index: 2,
    ids: ["tooluse_lAG_zP8QRHmSYOwZzzaCqA"],
    error: { status: 400, body: bedrockError("The content field at messages.2.content.0.toolResult cannot be empty when status value is error.") },
  },
  {
    code: "missing_thinking",
    format: "anthropic",
    source: "anomalyco/opencode#3077: thinking blocks stripped from the turn holding the tool call",
    history: [
      { role: "user", content: "fix the bug" },
      { role: "assistant", content: [thinking("look first"), use("toolu_01R", "read_file")] },
      { role: "user", content: [result("toolu_01R", "code")] },
      { role: "assistant", content: [use("toolu_01W", "write_file", { path: "a.ts", content: "fixed" })] },
      { role: "user", content: [result("toolu_01W", "written")] },
    ],
    index: 3,
    ids: ["toolu_01W"],
    error: {
      status: 400,
      body: anthropicError(
        "messages.3.content.0.type: Expected `thinking` or `redacted_thinking`, but found `tool_use`. When `thinking` is enabled, a final `assistant` message must start with a thinking block (preceeding the lastmost set of `tool_use` and `tool_result` blocks). We recommend you include thinking blocks from previous turns.",
      ),
      messageIndex: 3,
    },
  },
  {
    code: "thinking_not_first",
    format: "anthropic",
    source: "anthropics/claude-code#20691: text block reordered before the thinking block",
    history: [
      { role: "user", content: "plan it" },
      { role: "assistant", content: [{ type: "text", text: "Let me check." }, thinking(), use("toolu_01T", "read_file")] },
      { role: "user", content: [result("toolu_01T")] },
    ],
    index: 1,
    error: {
      status: 400,
      body: anthropicError("messages.1.content.0.type: If an assistant message contains any thinking blocks, the first block must be `thinking` or `redacted_thinking`. Found `text`."),
      messageIndex: 1,
    },
  },
  {
    code: "thinking_not_allowed",
    format: "anthropic",
    options: { thinking: "off" },
    source: "tailcallhq/forgecode#1853: a thinking turn used as prefill with thinking disabled",
    history: [
      { role: "user", content: "continue" },
      { role: "assistant", content: [thinking(), { type: "text", text: "Continuing from" }] },
    ],
    index: 1,
    error: {
      status: 400,
      body: anthropicError("messages.1.content.0.type: When thinking is disabled, an `assistant` message in the final position cannot contain `thinking`. To use thinking blocks, enable `thinking` in your request."),
      messageIndex: 1,
    },
  },
  {
    code: "missing_reasoning_content",
    format: "openai-chat",
    source: "hotovo/aider-desk#529: DeepSeek thinking mode, reasoning_content dropped from a tool-call turn",
    history: [
      { role: "user", content: "check the logs" },
      { role: "assistant", reasoning_content: "need the log", content: null, tool_calls: [chatCall("call_00_a1", "read_log", "{}")] },
      { role: "tool", tool_call_id: "call_00_a1", content: "error at line 3" },
      { role: "assistant", content: null, tool_calls: [chatCall("call_00_b2", "read_file", '{"path":"main.py"}')] },
      { role: "tool", tool_call_id: "call_00_b2", content: "code" },
    ],
    index: 3,
    ids: ["call_00_b2"],
    error: { status: 400, body: openaiError("Missing `reasoning_content` field in the assistant message at message index 3."), messageIndex: 3 },
  },
  {
    code: "missing_thought_signature",
    format: "gemini",
    source: "lbjlaq/Antigravity-Manager#3202: thought_signature lost between the first and second request",
    history: [
      { role: "user", parts: [{ text: "list the repo" }] },
      { role: "model", parts: [{ functionCall: { name: "Bash", args: { command: "ls" } }, thoughtSignature: "CiQBjz1rX9" }] },
      { role: "user", parts: [{ functionResponse: { name: "Bash", response: { output: "src\ntest" } } }] },
      { role: "model", parts: [{ functionCall: { name: "Bash", args: { command: "ls src" } } }] },
      { role: "user", parts: [{ functionResponse: { name: "Bash", response: { output: "index.ts" } } }] },
    ],
    index: 3,
    error: {
      status: 400,
      body: geminiError(
        "Function call is missing a thought_signature in functionCall parts. This is required for tools to work correctly, and missing thought_signature may lead to degraded model performance. Additional data, function call `default_api:Bash` , position 4. Please refer to https://ai.google.dev/gemini-api/docs/thought-signatures for more details.",
      ),
    },
  },
  {
    code: "missing_reasoning_item",
    format: "openai-responses",
    source: "cline/cline#12242: function_call items replayed by id without their reasoning item",
    history: [
      { role: "user", content: "what changed?" },
      { type: "reasoning", id: "rs_0a4d5126", summary: [] },
      { type: "function_call", id: "fc_01aa", call_id: "call_a", name: "git_diff", arguments: "{}" },
      { type: "function_call_output", call_id: "call_a", output: "diff" },
      { role: "user", content: "and before that?" },
      { type: "function_call", id: "fc_0a4d512680f81369006a5364c645f481a1a979134e6d548de1", call_id: "call_b", name: "git_log", arguments: "{}" },
      { type: "function_call_output", call_id: "call_b", output: "log" },
    ],
    index: 5,
    ids: ["call_b"],
    error: {
      status: 400,
      body: openaiError(
        "Item 'fc_0a4d512680f81369006a5364c645f481a1a979134e6d548de1' of type 'function_call' was provided without its required 'reasoning' item: 'rs_0a4d512680f81369006a5364c4142481a1803037dcae023e29'.",
        "input",
      ),
    },
  },
  {
    code: "orphan_reasoning",
    format: "openai-responses",
    source: "continuedev/continue#8933: a reasoning item kept while the message after it was dropped",
    history: [
      { role: "user", content: "hi" },
      { type: "reasoning", id: "rs_0c3876fcd4da19ef00692a14046bc8819eba6941c05c5ab7e7", summary: [], encrypted_content: "gAAAA" },
      { role: "user", content: "still there?" },
    ],
    index: 1,
    error: {
      status: 400,
      body: openaiError("Item 'rs_0c3876fcd4da19ef00692a14046bc8819eba6941c05c5ab7e7' of type 'reasoning' was provided without its required following item.", "input"),
    },
  },
  {
    code: "response_count_mismatch",
    format: "gemini",
    source: "google-gemini/gemini-cli#16784: one of two parallel function responses lost",
    history: [
      { role: "user", parts: [{ text: "weather in Paris and Rome" }] },
      { role: "model", parts: [{ functionCall: { name: "weather", args: { city: "Paris" } } }, { functionCall: { name: "weather", args: { city: "Rome" } } }] },
      { role: "user", parts: [{ functionResponse: { name: "weather", response: { output: "18C" } } }] },
    ],
    index: 2,
    error: {
      status: 400,
      body: geminiError("Please ensure that the number of function response parts is equal to the number of function call parts of the function call turn."),
    },
  },
  {
    code: "call_turn_order",
    format: "gemini",
    source: "google-gemini/gemini-cli#11814: a sliding window that starts with a function call",
    history: [
      { role: "model", parts: [{ functionCall: { name: "read_file", args: { path: "a" } } }] },
      { role: "user", parts: [{ functionResponse: { name: "read_file", response: { output: "A" } } }] },
      { role: "model", parts: [{ text: "Done." }] },
      { role: "user", parts: [{ text: "thanks" }] },
    ],
    index: 0,
    error: { status: 400, body: geminiError("Please ensure that function call turn comes immediately after a user turn or after a function response turn.") },
  },
  {
    code: "roles_not_alternating",
    format: "bedrock",
    source: "langchain-ai/langchain-aws#130: consecutive user messages sent to Converse",
    history: [
      { role: "user", content: [{ text: "context: repo is toolwire" }] },
      { role: "user", content: [{ text: "what does it do?" }] },
    ],
    index: 1,
    error: {
      status: 400,
      body: bedrockError("A conversation must alternate between user and assistant roles. Make sure the conversation alternates between user and assistant roles and try again."),
    },
  },
  {
    code: "first_message_not_user",
    format: "bedrock",
    source: "strands-agents/sdk-typescript#727: a sliding window starting on an assistant message",
    history: [
      { role: "assistant", content: [{ text: "Earlier answer." }] },
      { role: "user", content: [{ text: "and then?" }] },
    ],
    index: 0,
    error: { status: 400, body: bedrockError("A conversation must start with a user message. Try again with a conversation that starts with a user message.") },
  },
];

describe("fault codes from real error cases", () => {
  it("covers every fault code", () => {
    expect(new Set(CASES.map((item) => item.code))).toEqual(new Set(FAULT_CODES));
  });

  describe.each(CASES.map((item) => [`${item.code} (${item.format})`, item] as const))("%s", (_, item) => {
    it("check finds it where the provider does", () => {
      const faults = checkHistory(item.history, item.format, item.options);
      const found = faults.find((fault) => fault.code === item.code && fault.index === item.index);
      expect(found, JSON.stringify(faults)).toBeDefined();
      if (item.ids) expect(found?.ids).toEqual(expect.arrayContaining(item.ids));
    });

    it("the classifier maps the provider's text to a history repair for it", () => {
      const { error } = item;
      const classified = classifyProviderError(error.status, error.body);
      if (error.fails !== undefined) {
        expect(classified.recovery.action).toBe("fail");
        return;
      }
      expect(classified.recovery.action).toBe("repair_history");
      if (classified.recovery.action === "repair_history") expect(classified.recovery.faults).toContain(item.code);
      if (error.messageIndex !== undefined) expect(classified.messageIndex).toBe(error.messageIndex);
    });

    it("repair fixes it, and only touches what it names", () => {
      const before = JSON.stringify(item.history);
      const classified = classifyProviderError(item.error.status, item.error.body);
      const policy = { ...item.options, ...(classified.recovery.action === "repair_history" ? classified.recovery.policy : {}) };
      const repaired = repairHistory(item.history, item.format, policy);
      expect(JSON.stringify(item.history)).toBe(before);
      expect(repaired.edits.length).toBeGreaterThan(0);
      expect(checkHistory(repaired.messages, item.format, policy)).toEqual([]);
      for (const edit of repaired.edits) expect(edit.index).toBeGreaterThanOrEqual(0);
    });
  });
});

describe("a rejected thinking signature (the check cannot see it)", () => {
  it("the classifier asks for stripReasoning; the repair removes reasoning and keeps the history valid", () => {
    const history = [
      { role: "user", content: "fix the bug" },
      { role: "assistant", content: [thinking("read first", "tampered"), use("toolu_01R", "read_file")] },
      { role: "user", content: [result("toolu_01R", "code")] },
    ];
    expect(checkHistory(history, "anthropic")).toEqual([]);
    const classified = classifyProviderError(400, anthropicError("messages.1.content.0: Invalid `signature` in `thinking` block"));
    expect(classified.recovery).toEqual({ action: "repair_history", faults: [], policy: { stripReasoning: true } });
    const policy = classified.recovery.action === "repair_history" ? classified.recovery.policy : {};
    const repaired = repairHistory(history, "anthropic", policy);
    expect(JSON.stringify(repaired.messages)).not.toContain("tampered");
    expect(repaired.edits.map((edit) => edit.code)).toEqual(["reasoning_dropped", "tool_exchange_to_text"]);
    expect(checkHistory(repaired.messages, "anthropic", { thinking: "on" })).toEqual([]);
  });
});

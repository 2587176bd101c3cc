import { describe, expect, it } from "vitest";
import { classifyProviderError, LLAMACPP_SCHEMA_ERRORS, llamacppSchemaError, llamacppStrip, providerErrorRules, type ProviderErrorReason, type Recovery } from "../../src/guard/provider-errors.js";

interface Case {
  name: string;
  status: number | null;
  body: unknown;
  reason: ProviderErrorReason;
  recovery: Recovery | Recovery["action"];
  rule?: string;
  ids?: string[];
  messageIndex?: number | null;
  headers?: Record<string, string>;
}

const anthropic = (type: string, message: string) => ({ type: "error", error: { type, message }, request_id: "req_011CV" });
const openai = (message: string, type = "invalid_request_error", code: string | null = null, param: string | null = null) => ({ error: { message, type, param, code } });

/** Texts as reported in the sources named on each rule of the classifier. */
const CASES: Case[] = [
  // --- History pairing
  {
    name: "Anthropic, several ids missing their results",
    status: 400,
    body: anthropic(
      "invalid_request_error",
      "messages.22: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_01HqfLWiAKQLsniF2fBGF2KD, toolu_01SJzDkeAZER935cpGFptTNk. Each `tool_use` block must have a corresponding `tool_result` block in the next message.",
    ),
    reason: "tool_result_missing",
    recovery: { action: "repair_history", faults: ["missing_result", "result_not_adjacent"] },
    ids: ["toolu_01HqfLWiAKQLsniF2fBGF2KD", "toolu_01SJzDkeAZER935cpGFptTNk"],
    messageIndex: 22,
  },
  {
    name: "Anthropic behind Vertex and a gateway: the upstream body is a JSON string inside the message",
    status: 400,
    body: {
      error: {
        code: 400,
        message:
          '{"type":"error","error":{"type":"invalid_request_error","message":"messages.243: `tool_use` ids were found without `tool_result` blocks immediately after: bash-uOQIdN0O. Each `tool_use` block must have a corresponding `tool_result` block in the next message."},"request_id":"req_vrtx_011CX8LKNqFusFUVvygN5vEH"}',
        status: "INVALID_ARGUMENT",
      },
    },
    reason: "tool_result_missing",
    recovery: "repair_history",
    ids: ["bash-uOQIdN0O"],
    messageIndex: 243,
  },
  {
    name: "Anthropic through LiteLLM without backticks",
    status: 400,
    body: "litellm.BadRequestError: AnthropicException - {\"type\":\"error\",\"error\":{\"type\":\"invalid_request_error\",\"message\":\"messages.66: tool_use ids were found without tool_result blocks immediately after: toolu_01Me5LTc9g2gH3yKQCtqGd7W. Each tool_use block must have a corresponding tool_result block in the next message.\"}}",
    reason: "tool_result_missing",
    recovery: "repair_history",
    ids: ["toolu_01Me5LTc9g2gH3yKQCtqGd7W"],
    messageIndex: 66,
  },
  {
    name: "Anthropic orphan result",
    status: 400,
    body: anthropic(
      "invalid_request_error",
      "messages.48.content.1: unexpected `tool_use_id` found in `tool_result` blocks: toolu_019ETtGZEhTBXgWPVsdVnXMh. Each `tool_result` block must have a corresponding `tool_use` block in the previous message.",
    ),
    reason: "tool_result_orphan",
    recovery: { action: "repair_history", faults: ["orphan_result", "result_not_adjacent", "duplicate_result"] },
    ids: ["toolu_019ETtGZEhTBXgWPVsdVnXMh"],
    messageIndex: 48,
  },
  {
    name: "Anthropic advisor result without its server_tool_use",
    status: 400,
    body: anthropic(
      "invalid_request_error",
      "messages.7.content.0: unexpected `tool_use_id` found in `advisor_tool_result` blocks: srvtoolu_01JjfQsdhSJkT7qLCL7Pj9jc. Each `advisor_tool_result` block must have a corresponding `server_tool_use` block before it.",
    ),
    reason: "server_tool_result_orphan",
    recovery: { action: "repair_history", faults: ["orphan_server_result"] },
    ids: ["srvtoolu_01JjfQsdhSJkT7qLCL7Pj9jc"],
  },
  {
    name: "Anthropic results not first",
    status: 400,
    body: anthropic("invalid_request_error", "messages.5: Did not find 1 `tool_result` block(s) at the beginning of this message. Messages following `tool_use` blocks must begin with a matching number of `tool_result` blocks."),
    reason: "tool_result_not_first",
    recovery: "repair_history",
    messageIndex: 5,
  },
  { name: "Anthropic duplicate ids", status: 400, body: anthropic("invalid_request_error", "messages.9.content.2: `tool_use` ids must be unique"), reason: "tool_id_duplicate", recovery: "repair_history" },
  {
    name: "Anthropic id pattern",
    status: 400,
    body: anthropic("invalid_request_error", "messages.3.content.1.tool_use.id: String should match pattern '^[a-zA-Z0-9_-]+$'"),
    reason: "tool_id_invalid",
    recovery: { action: "repair_history", faults: ["invalid_call_id"], policy: { ids: "anthropic" } },
  },
  {
    name: "Anthropic non-object input",
    status: 400,
    body: anthropic("invalid_request_error", "messages.61.content.0.tool_use.input: Input should be a valid dictionary"),
    reason: "tool_arguments_invalid",
    recovery: { action: "repair_history", faults: ["invalid_call"] },
    messageIndex: 61,
  },
  {
    name: "Anthropic thinking missing",
    status: 400,
    body: anthropic(
      "invalid_request_error",
      "messages.1.content.0.type: Expected `thinking` or `redacted_thinking`, but found `tool_use`. When `thinking` is enabled, a final `assistant` message must start with a thinking block (preceeding the lastmost set of `tool_use` and `tool_result` blocks). We recommend you include thinking blocks from previous turns. To avoid this requirement, disable `thinking`.",
    ),
    reason: "thinking_missing",
    recovery: { action: "repair_history", faults: ["missing_thinking", "thinking_not_first"], policy: { thinking: "on" } },
  },
  {
    name: "Anthropic thinking not first",
    status: 400,
    body: anthropic("invalid_request_error", "messages.3.content.0.type: If an assistant message contains any thinking blocks, the first block must be `thinking` or `redacted_thinking`. Found `text`."),
    reason: "thinking_missing",
    recovery: "repair_history",
  },
  {
    name: "Anthropic thinking disabled",
    status: 400,
    body: anthropic("invalid_request_error", "messages.1.content.0.type: When thinking is disabled, an `assistant` message in the final position cannot contain `thinking`. To use thinking blocks, enable `thinking` in your request."),
    reason: "thinking_not_allowed",
    recovery: { action: "repair_history", faults: ["thinking_not_allowed"], policy: { thinking: "off" } },
  },
  {
    name: "Anthropic thinking signature rejected",
    status: 400,
    body: anthropic("invalid_request_error", "messages.1.content.0: Invalid `signature` in `thinking` block"),
    reason: "thinking_signature_invalid",
    recovery: { action: "repair_history", faults: [], policy: { stripReasoning: true } },
  },
  { name: "Anthropic empty text", status: 400, body: anthropic("invalid_request_error", "messages: text content blocks must be non-empty"), reason: "empty_content", recovery: "repair_history" },
  {
    name: "OpenAI missing tool messages, index in param",
    status: 400,
    body: openai(
      "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: call_HYF8bVVLMv4yZfXWwfqvO6ya",
      "invalid_request_error",
      null,
      "messages.[3].role",
    ),
    reason: "tool_result_missing",
    recovery: "repair_history",
    ids: ["call_HYF8bVVLMv4yZfXWwfqvO6ya"],
    messageIndex: 3,
  },
  {
    name: "DashScope prefix on the OpenAI text",
    status: 400,
    body: "<400> InternalError.Algo.InvalidParameter: An assistant message with \"tool_calls\" must be followed by tool messages responding to each \"tool_call_id\". The following tool_call_ids did not have response messages: message[4].role",
    reason: "tool_result_missing",
    recovery: "repair_history",
    messageIndex: 4,
  },
  {
    name: "OpenAI orphan tool message (typo preceeding)",
    status: 400,
    body: openai("Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.", "invalid_request_error", null, "messages.[2].role"),
    reason: "tool_result_orphan",
    recovery: "repair_history",
    messageIndex: 2,
  },
  {
    name: "DeepSeek orphan tool message",
    status: 400,
    body: openai("Messages with role 'tool' must be a response to a preceding message with 'tool_calls'"),
    reason: "tool_result_orphan",
    recovery: "repair_history",
  },
  {
    name: "OpenAI id too long",
    status: 400,
    body: openai("Invalid 'messages[2].tool_calls[0].id': string too long. Expected a string with maximum length 40, but got a string with length 53 instead.", "invalid_request_error", "string_above_max_length", "messages[2].tool_calls[0].id"),
    reason: "tool_id_invalid",
    recovery: { action: "repair_history", faults: ["invalid_call_id"], policy: { ids: "openai" } },
    messageIndex: 2,
  },
  {
    name: "Mistral id format",
    status: 400,
    body: { object: "error", message: "Tool call id was call_search but must be a-z, A-Z, 0-9, with a length of 9.", type: "invalid_request_error", param: null, code: null },
    reason: "tool_id_invalid",
    recovery: { action: "repair_history", faults: ["invalid_call_id"], policy: { ids: "mistral" } },
  },
  {
    name: "Mistral call/response count",
    status: 400,
    body: '{"object":"error","message":"Not the same number of function calls and responses","type":"invalid_request_error","param":null,"code":null}',
    reason: "tool_result_missing",
    recovery: "repair_history",
  },
  {
    name: "DeepSeek reasoning_content",
    status: 400,
    body: openai("Missing `reasoning_content` field in the assistant message at message index 2."),
    reason: "reasoning_content_missing",
    recovery: { action: "repair_history", faults: ["missing_reasoning_content"], policy: { thinking: "on" } },
    messageIndex: 2,
  },
  {
    name: "Moonshot reasoning_content",
    status: 400,
    body: openai("thinking is enabled but reasoning_content is missing in assistant tool call message at index 5"),
    reason: "reasoning_content_missing",
    recovery: "repair_history",
  },
  { name: "Kimi empty content", status: 400, body: openai("Invalid request: text content is empty"), reason: "empty_content", recovery: "repair_history" },
  {
    name: "Responses missing output",
    status: 400,
    body: openai("No tool output found for function call call_qG2Ob1YwJ3o1yI0EqjBfK6f8.", "invalid_request_error", null, "input"),
    reason: "tool_result_missing",
    recovery: "repair_history",
    ids: ["call_qG2Ob1YwJ3o1yI0EqjBfK6f8"],
  },
  {
    name: "Responses orphan output, wrapped by a gateway",
    status: 400,
    body: {
      error: {
        code: "upstream_400",
        message:
          '上游返回错误 (status 400): {\n  "error": {\n    "message": "No tool call found for function call output with call_id call_uqaym698xduZM7eXCT0SUABW.",\n    "type": "invalid_request_error",\n    "param": "input",\n    "code": null\n  }\n}',
      },
    },
    reason: "tool_result_orphan",
    recovery: "repair_history",
    ids: ["call_uqaym698xduZM7eXCT0SUABW"],
  },
  {
    name: "Responses reasoning item",
    status: 400,
    body: openai("Item 'fc_07b27acff2b3b34800697bc13c9a408195a3a79b346cfc2714' of type 'function_call' was provided without its required 'reasoning' item: 'rs_07b27acff2b3b34800697bc10b56608195bfcb7755c43d483c'.", "invalid_request_error", null, "input"),
    reason: "reasoning_item_missing",
    recovery: { action: "repair_history", faults: ["missing_reasoning_item", "orphan_reasoning"], policy: { thinking: "on" } },
  },
  {
    name: "Responses dangling reasoning",
    status: 400,
    body: openai("Item 'rs_0c3876fcd4da19ef00692a14046bc8819eba6941c05c5ab7e7' of type 'reasoning' was provided without its required following item."),
    reason: "reasoning_item_missing",
    recovery: "repair_history",
  },
  { name: "Responses item id prefix", status: 400, body: openai("Invalid 'input[3].id': 'msg_123'. Expected an ID that begins with 'fc'."), reason: "item_id_invalid", recovery: "repair_history", messageIndex: 3 },
  {
    name: "Gemini count, nested in the gemini-cli wrapper",
    status: null,
    body: {
      error: {
        message:
          '{\n  "error": {\n    "code": 400,\n    "message": "Please ensure that the number of function response parts is equal to the number of function call parts of the function call turn.",\n    "status": "INVALID_ARGUMENT"\n  }\n}\n',
        code: 400,
        status: "Bad Request",
      },
    },
    reason: "function_response_count",
    recovery: "repair_history",
  },
  {
    name: "Gemini turn order",
    status: 400,
    body: { error: { code: 400, message: "Please ensure that function call turn comes immediately after a user turn or after a function response turn.", status: "INVALID_ARGUMENT" } },
    reason: "function_turn_order",
    recovery: "repair_history",
  },
  {
    name: "Gemini response turn order (Python client text)",
    status: 400,
    body: "InvalidArgument: 400 Please ensure that function response turn comes immediately after a function call turn.",
    reason: "function_turn_order",
    recovery: "repair_history",
  },
  {
    name: "Gemini 3 thought signature",
    status: 400,
    body: [
      {
        error: {
          code: 400,
          message:
            "Function call is missing a thought_signature in functionCall parts. This is required for tools to work correctly, and missing thought_signature may lead to degraded model performance. Additional data, function call `default_api:shell_command` , position 3. Please refer to https://ai.google.dev/gemini-api/docs/thought-signatures for more details.",
          status: "INVALID_ARGUMENT",
        },
      },
    ],
    reason: "thought_signature_missing",
    recovery: { action: "repair_history", faults: ["missing_thought_signature"], policy: { thinking: "on" } },
  },
  {
    name: "Vertex empty text part",
    status: 400,
    body: { error: { code: 400, message: "Unable to submit request because it has an empty text parameter. Add a value to the parameter and try again.", status: "INVALID_ARGUMENT" } },
    reason: "empty_content",
    recovery: { action: "repair_history", faults: ["empty_text", "empty_message"] },
  },
  {
    name: "Bedrock too many results (SDK error object)",
    status: null,
    body: {
      name: "ValidationException",
      $fault: "client",
      $metadata: { httpStatusCode: 400 },
      message: "The number of toolResult blocks at messages.2.content exceeds the number of toolUse blocks of previous turn.",
    },
    reason: "tool_result_orphan",
    recovery: "repair_history",
    messageIndex: 2,
  },
  {
    name: "Bedrock expected results",
    status: 400,
    body: { message: "Expected toolResult blocks at messages.4.content for the following Ids: tooluse_kZJMlvQmRJ6eAyJE5GIl7Q, tooluse_9h0lE0wORMqHo3wT5lAGsw" },
    reason: "tool_result_missing",
    recovery: "repair_history",
    ids: ["tooluse_kZJMlvQmRJ6eAyJE5GIl7Q", "tooluse_9h0lE0wORMqHo3wT5lAGsw"],
    messageIndex: 4,
  },
  {
    name: "Bedrock mixed blocks (Llama 4)",
    status: 400,
    body: "An error occurred (ValidationException) when calling the Converse operation: messages.4.content: Conversation blocks and tool result blocks cannot be provided in the same turn.",
    reason: "tool_result_mixed_content",
    recovery: "fail",
  },
  {
    name: "Bedrock empty error result",
    status: 400,
    body: { message: "The content field at messages.2.content.0.toolResult cannot be empty when status value is error." },
    reason: "empty_content",
    recovery: { action: "repair_history", faults: ["empty_error_result"] },
  },
  { name: "Bedrock blank text", status: 400, body: { message: "The text field in the ContentBlock object at messages.15.content.0 is blank. Add text to the text field, and try again." }, reason: "empty_content", recovery: "repair_history" },
  {
    name: "Bedrock alternation through an OpenAI-style gateway",
    status: 400,
    body: openai("operation error Bedrock Runtime: Converse, https response error StatusCode: 400, ValidationException: A conversation must alternate between user and assistant roles. Make sure the conversation alternates between user and assistant roles and try again.", "invalid_request_error", "-4003"),
    reason: "roles_not_alternating",
    recovery: "repair_history",
  },
  { name: "Bedrock first message", status: 400, body: { message: "A conversation must start with a user message. Try again with a conversation that starts with a user message." }, reason: "roles_not_alternating", recovery: "repair_history" },
  {
    name: "Bedrock id constraint",
    status: 400,
    body: { message: "1 validation error detected: Value 'functions.read:0' at 'messages.1.member.content.1.member.toolUse.toolUseId' failed to satisfy constraint: Member must satisfy regular expression pattern: [a-zA-Z0-9_-]+" },
    reason: "tool_id_invalid",
    recovery: { action: "repair_history", faults: ["invalid_call_id"], policy: { ids: "bedrock" } },
  },
  // --- Schemas
  {
    name: "llama.cpp unanchored pattern",
    status: 400,
    body: { error: { code: 400, message: "Unable to generate parser for this template. Automatic parser generation failed: JSON schema conversion failed:\nPattern must start with '^' and end with '$'", type: "invalid_request_error" } },
    reason: "schema_rejected",
    recovery: { action: "sanitize_schema", target: "llamacpp", strip: ["pattern"] },
  },
  {
    name: "llama.cpp grammar parse error on a \\d copied from a pattern",
    status: 400,
    body: { error: { code: 400, message: "Unable to generate parser for this template. Automatic parser generation failed: parse: error parsing grammar: unknown escape at \\d{4}\" \"-\" space", type: "invalid_request_error" } },
    reason: "schema_rejected",
    recovery: { action: "sanitize_schema", target: "llamacpp", strip: ["pattern"] },
  },
  {
    name: "llama.cpp unresolvable ref",
    status: 400,
    body: { error: { code: 400, message: "Unable to generate parser for this template. Automatic parser generation failed: JSON schema conversion failed:\nError resolving ref #/$defs/a: a not in {}", type: "invalid_request_error" } },
    reason: "schema_rejected",
    recovery: { action: "sanitize_schema", target: "llamacpp", strip: ["$ref"] },
  },
  {
    name: "llama.cpp conversion text on the response_format path (500) is not claimed as a schema 400",
    status: 500,
    body: { error: { code: 500, message: "\"json_schema\": JSON schema conversion failed:\nPattern must start with '^' and end with '$'", type: "server_error" } },
    reason: "server_error",
    recovery: "retry_after",
  },
  {
    name: "llama.cpp unrecognized schema (through Ollama)",
    status: 400,
    body: 'Ollama /api/chat failed with HTTP 400: {"error":{"code":400,"message":"Unable to generate parser for this template. Automatic parser generation failed: JSON schema conversion failed:\\nUnrecognized schema: {\\"type\\":\\"\\",\\"properties\\":null}","type":"invalid_request_error"}}',
    reason: "schema_rejected",
    recovery: { action: "sanitize_schema", target: "llamacpp", strip: ["pattern", "format"] },
  },
  {
    name: "Qwen template error inside the llama.cpp wrapper is not a schema problem",
    status: 400,
    body: { error: { code: 400, message: "Unable to generate parser for this template. Automatic parser generation failed: No user query found in messages.", type: "invalid_request_error" } },
    reason: "invalid_request",
    recovery: "fail",
  },
  {
    name: "xAI opaque grammar error in a stream frame (no status)",
    status: null,
    body: { type: "error", message: "Invalid arguments passed to the model." },
    reason: "schema_rejected",
    recovery: { action: "sanitize_schema", target: "xai", strip: ["pattern", "format", "enum"] },
  },
  {
    name: "Anthropic top-level combinator",
    status: 400,
    body: anthropic("invalid_request_error", "tools.3.custom.input_schema: input_schema does not support oneOf, allOf, or anyOf at the top level"),
    reason: "schema_rejected",
    recovery: { action: "sanitize_schema", target: "anthropic" },
  },
  {
    name: "OpenAI strict schema",
    status: 400,
    body: openai("Invalid schema for function 'read_file': In context=(), 'required' is required to be supplied and to be an array including every key in properties. Missing 'limit'.", "invalid_request_error", "invalid_function_parameters", "tools[0].function.parameters"),
    reason: "schema_rejected",
    recovery: { action: "sanitize_schema", target: "openai-strict" },
  },
  {
    name: "Gemini unknown schema field",
    status: 400,
    body: { error: { code: 400, message: 'Invalid JSON payload received. Unknown name "additionalProperties" at \'tools[0].function_declarations[1].parameters\': Cannot find field.', status: "INVALID_ARGUMENT" } },
    reason: "schema_rejected",
    recovery: { action: "sanitize_schema", target: "gemini" },
  },
  {
    name: "Fireworks default beside $ref",
    status: 400,
    body: openai("JSON Schema not supported: keyword(s) ['default'] not allowed at the same level as $ref"),
    reason: "schema_rejected",
    recovery: { action: "sanitize_schema", target: "fireworks" },
  },
  {
    name: "Kimi schema",
    status: 400,
    body: openai("Invalid request: tools.function.parameters is not a valid moonshot flavored json schema, details: <At path 'properties.query': type is not defined>"),
    reason: "schema_rejected",
    recovery: { action: "sanitize_schema", target: "kimi" },
  },
  {
    name: "Groq tool call validation (stream error event)",
    status: null,
    body: { error: { message: "Tool call validation failed: tool call validation failed: parameters for tool get_something_by_name did not match schema", type: "invalid_request_error", code: "tool_use_failed", failed_generation: '{"name": "get_something_by_name"}', status_code: 400 } },
    reason: "tool_call_rejected",
    recovery: { action: "retry_after", seconds: null },
  },
  // --- Quota, load, size, access
  {
    name: "OpenAI rate limit with a delay in the text",
    status: 429,
    body: openai("Rate limit reached for gpt-4o in organization org-XXXX on tokens per min (TPM): Limit 30000, Used 14567, Requested 24754. Please try again in 18.642s. Visit https://platform.openai.com/account/rate-limits to learn more.", "tokens", "rate_limit_exceeded"),
    reason: "rate_limit",
    recovery: { action: "retry_after", seconds: 18.642 },
  },
  {
    name: "OpenAI rate limit in milliseconds",
    status: 429,
    body: openai("Rate limit reached for 10KTPM-200RPM in organization org-x on tokens per min. Limit: 10000 / min. Please try again in 6ms.", "tokens", "rate_limit_exceeded"),
    reason: "rate_limit",
    recovery: { action: "retry_after", seconds: 0.006 },
  },
  {
    name: "Anthropic rate limit with retry-after header",
    status: 429,
    body: anthropic("rate_limit_error", "This request would exceed the rate limit for your organization of 20,000 input tokens per minute."),
    headers: { "retry-after": "12" },
    reason: "rate_limit",
    recovery: { action: "retry_after", seconds: 12 },
  },
  {
    name: "retry-after-ms wins over retry-after",
    status: 429,
    body: anthropic("rate_limit_error", "Number of request tokens has exceeded your per-minute rate limit"),
    headers: { "Retry-After": "2", "retry-after-ms": "1500" },
    reason: "rate_limit",
    recovery: { action: "retry_after", seconds: 1.5 },
  },
  {
    name: "Gemini quota with RetryInfo",
    status: 429,
    body: {
      error: {
        code: 429,
        message: "You exceeded your current quota, please check your plan and billing details. For more information on this error, head to: https://ai.google.dev/gemini-api/docs/rate-limits.",
        status: "RESOURCE_EXHAUSTED",
        details: [{ "@type": "type.googleapis.com/google.rpc.RetryInfo", retryDelay: "37s" }],
      },
    },
    reason: "rate_limit",
    recovery: { action: "retry_after", seconds: 37 },
  },
  {
    name: "OpenAI quota exhausted is billing, not a rate limit",
    status: 429,
    body: openai("You exceeded your current quota, please check your plan and billing details.", "insufficient_quota", "insufficient_quota"),
    reason: "billing",
    recovery: "fail",
  },
  {
    name: "Bedrock throttling on tokens is not a context overflow",
    status: null,
    body: { name: "ThrottlingException", message: "Too many tokens, please wait before trying again.", $metadata: { httpStatusCode: 429 } },
    reason: "rate_limit",
    recovery: { action: "retry_after", seconds: null },
  },
  { name: "Anthropic overloaded", status: 529, body: anthropic("overloaded_error", "Overloaded"), reason: "overloaded", recovery: { action: "retry_after", seconds: null } },
  { name: "Anthropic overloaded reported as 500 api_error", status: 500, body: anthropic("api_error", "Overloaded"), reason: "overloaded", recovery: "retry_after" },
  {
    name: "Anthropic overloaded in a stream (no status)",
    status: null,
    body: { type: "error", error: { details: null, type: "overloaded_error", message: "Overloaded" }, request_id: "req_011" },
    reason: "overloaded",
    recovery: "retry_after",
    messageIndex: null,
  },
  { name: "Gemini unavailable", status: 503, body: { error: { code: 503, message: "The model is overloaded. Please try again later.", status: "UNAVAILABLE" } }, reason: "overloaded", recovery: "retry_after" },
  { name: "Anthropic prompt too long", status: 400, body: anthropic("invalid_request_error", "prompt is too long: 219898 tokens > 200000 maximum"), reason: "context_overflow", recovery: "reduce_context" },
  {
    name: "Anthropic input plus max_tokens over the limit",
    status: 400,
    body: anthropic("invalid_request_error", "input length and `max_tokens` exceed context limit: 199759 + 8192 > 200000, decrease input length or `max_tokens` and try again"),
    reason: "context_overflow",
    recovery: "reduce_context",
  },
  {
    name: "Anthropic max_tokens too large is not an overflow",
    status: 400,
    body: anthropic("invalid_request_error", "max_tokens: 10000 > 4096, which is the maximum allowed number of output tokens for claude-3-5-sonnet-20240620"),
    reason: "output_limit_invalid",
    recovery: "fail",
  },
  {
    name: "OpenAI context length",
    status: 400,
    body: openai("This model's maximum context length is 8192 tokens. However, your messages resulted in 8227 tokens. Please reduce the length of the messages.", "invalid_request_error", "context_length_exceeded", "messages"),
    reason: "context_overflow",
    recovery: "reduce_context",
  },
  {
    name: "Responses context window (stream error event)",
    status: null,
    body: { type: "error", sequence_number: 2, error: { type: "invalid_request_error", code: "context_length_exceeded", message: "Your input exceeds the context window of this model. Please adjust your input and try again.", param: "input" } },
    reason: "context_overflow",
    recovery: "reduce_context",
  },
  {
    name: "Gemini input token count",
    status: 400,
    body: { error: { code: 400, message: "The input token count (1200293) exceeds the maximum number of tokens allowed (1048576).", status: "INVALID_ARGUMENT" } },
    reason: "context_overflow",
    recovery: "reduce_context",
  },
  { name: "Bedrock input too long", status: 400, body: { name: "ValidationException", message: "Input is too long for requested model." }, reason: "context_overflow", recovery: "reduce_context" },
  { name: "Anthropic auth", status: 401, body: anthropic("authentication_error", "invalid x-api-key"), reason: "auth", recovery: "fail" },
  { name: "OpenAI auth", status: 401, body: openai("Incorrect API key provided: sk-abc. You can find your API key at https://platform.openai.com/account/api-keys.", "invalid_request_error", "invalid_api_key"), reason: "auth", recovery: "fail" },
  { name: "Gemini auth", status: 400, body: { error: { code: 400, message: "API key not valid. Please pass a valid API key.", status: "INVALID_ARGUMENT" } }, reason: "auth", recovery: "fail" },
  { name: "AWS credentials", status: 403, body: { name: "UnrecognizedClientException", message: "The security token included in the request is invalid." }, reason: "auth", recovery: "fail" },
  { name: "Anthropic credit balance", status: 400, body: anthropic("invalid_request_error", "Your credit balance is too low to access the Anthropic API."), reason: "billing", recovery: "fail" },
  { name: "OpenAI content policy", status: 400, body: openai("Your request was rejected as a result of our safety system. It violates our usage policies.", "invalid_request_error", "content_policy_violation"), reason: "content_policy", recovery: "fail" },
  { name: "OpenAI unknown model", status: 404, body: openai("The model `gpt-9` does not exist or you do not have access to it.", "invalid_request_error", "model_not_found"), reason: "model_not_found", recovery: "fail" },
  // --- Status only
  { name: "bare 502", status: 502, body: "<html>Bad Gateway</html>", reason: "server_error", recovery: { action: "retry_after", seconds: null } },
  { name: "504", status: 504, body: null, reason: "timeout", recovery: "retry_after" },
  { name: "generic 400", status: 400, body: openai("Unrecognized request argument supplied: foo"), reason: "invalid_request", recovery: "fail" },
  { name: "nothing at all", status: null, body: undefined, reason: "unknown", recovery: "fail" },
];

describe("classifyProviderError", () => {
  it.each(CASES.map((item) => [item.name, item] as const))("%s", (_, item) => {
    const classified = classifyProviderError(item.status, item.body, item.headers ? { headers: item.headers } : {});
    expect(classified.reason).toBe(item.reason);
    if (typeof item.recovery === "string") expect(classified.recovery.action).toBe(item.recovery);
    else expect(classified.recovery).toEqual(item.recovery);
    expect(classified.retryable).toBe(classified.recovery.action !== "fail");
    if (item.ids) expect(classified.ids).toEqual(item.ids);
    if (item.messageIndex !== undefined) expect(classified.messageIndex).toBe(item.messageIndex);
  });

  it("every rule is exercised by a case above", () => {
    const used = new Set(CASES.map((item) => classifyProviderError(item.status, item.body, item.headers ? { headers: item.headers } : {}).rule));
    const unused = providerErrorRules().filter((rule) => !used.has(rule.name));
    expect(unused).toEqual([]);
  });

  it("reads SDK error objects (status on the error, body under .error)", () => {
    const error = Object.assign(new Error("400 messages.3: `tool_use` ids must be unique"), { status: 400, error: anthropic("invalid_request_error", "messages.3: `tool_use` ids must be unique") });
    const classified = classifyProviderError(undefined, error);
    expect(classified.status).toBe(400);
    expect(classified.reason).toBe("tool_id_duplicate");
  });

  it("takes retry-after as an HTTP date relative to `now`, and Headers objects", () => {
    const headers = new Headers({ "retry-after": "Wed, 21 Oct 2015 07:28:30 GMT" });
    const classified = classifyProviderError(429, null, { headers, now: Date.parse("Wed, 21 Oct 2015 07:28:00 GMT") });
    expect(classified.recovery).toEqual({ action: "retry_after", seconds: 30 });
  });

  it("names what to strip for every documented llama.cpp error text", () => {
    const texts: Array<[string, string[]]> = [
      ["JSON schema conversion failed:\nPattern must start with '^' and end with '$'", ["pattern"]],
      ["parse: error parsing grammar: unknown escape at \\d{4}", ["pattern"]],
      ["parse: error parsing grammar: unknown escape at \\w+", ["pattern"]],
      ["JSON schema conversion failed:\nUnbalanced square brackets", ["pattern"]],
      ["JSON schema conversion failed:\nInvalid number in curly brackets", ["pattern"]],
      ["JSON schema conversion failed:\nUnsupported ref: definitions.json#/a", ["$ref"]],
      ['JSON schema conversion failed:\nUnrecognized schema: {"type":"file"}', ["pattern", "format"]],
      ["JSON schema conversion failed:\nPattern must start with '^' and end with '$'\nError resolving ref #/$defs/a: a not in {}", ["pattern", "$ref"]],
      ["JSON schema conversion failed:\nRule email-string not known", ["format"]],
      ["failed to parse grammar", ["pattern", "format"]],
    ];
    for (const [text, strip] of texts) {
      expect(llamacppStrip(text), text).toEqual(strip);
      expect(classifyProviderError(400, { error: { code: 400, message: text } }).recovery, text).toEqual({ action: "sanitize_schema", target: "llamacpp", strip });
    }
    for (const entry of LLAMACPP_SCHEMA_ERRORS) {
      expect(entry.strip.length, entry.text).toBeGreaterThan(0);
      // `type` is never named: a consumer deleting every listed keyword must not erase the types.
      expect(entry.strip, entry.text).not.toContain("type");
    }
    expect(llamacppSchemaError("Pattern must start with '^' and end with '$'").strip).toEqual(["pattern"]);
  });

  it("does not mutate the body", () => {
    const body = anthropic("invalid_request_error", "prompt is too long: 219898 tokens > 200000 maximum");
    const before = JSON.stringify(body);
    classifyProviderError(400, body);
    expect(JSON.stringify(body)).toBe(before);
  });
});

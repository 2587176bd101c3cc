import { expect } from "vitest";
import type { DecodedTurn } from "../../src/types.js";
import type { SdkCalls } from "./accumulate.js";
import { sourceError, withoutSourceError } from "./support.js";

/**
 * Where the official SDKs and toolwire part ways on the recorded corpus, stream by stream.
 *
 * RAW: toolwire fed with an SDK's raw event iterable should give the turn of the recorded file.
 * It cannot when the SDK withholds or refuses part of the stream; each such stream is listed with
 * the reason, and the test asserts what toolwire makes of it instead. `.asResponse()` (the raw
 * body) or plain fetch always give the file's turn: the integration tests check that too.
 *
 * ACCUMULATION: what the SDK's own accumulation (`finalMessage()`, `finalChatCompletion()`,
 * `finalResponse()`) hands an agent, against toolwire's calls. Every disagreement is listed with
 * the SDK's exact result, so a change in either shows up as a failing test.
 */

export type RawDifference =
  /** The SDK yielded every event, then raised: toolwire's turn is the file's plus a `source_error`. */
  | { kind: "throws_after_all_events"; why: string; error: RegExp }
  /** The SDK raised before the end: the turn stops there, incomplete, and never invents a call. */
  | { kind: "throws_early"; why: string; error: RegExp }
  /** The SDK swallows `[DONE]`; for a stream that only `[DONE]` ends, the turn must stay incomplete. */
  | { kind: "hides_done"; why: string }
  /** The SDK raised the provider's error event itself, keeping only part of it. */
  | { kind: "error_event_reduced"; why: string };

const HIDES_DONE =
  "The SDK consumes `data: [DONE]` and never yields it. This stream has no final finish_reason (or one on every chunk), so only [DONE] says it ended: " +
  "from the SDK's events toolwire cannot tell a finished turn from a cut connection, and reports it incomplete rather than guess: a call whose arguments " +
  "already form one closed object keeps them (call_closed_at_stream_end), any other is truncated. " +
  "Decode `.asResponse()` or a fetch Response to keep [DONE].";

const KIMI_NO_MESSAGE_START =
  "kilroy's hand-written Kimi sequences have no message_start. MessageStream yields every event, then rejects at the end " +
  "('request ended without sending any chunks'); toolwire had decoded every event, so its turn is the file's plus a source_error diagnostic.";

export const RAW_DIFFERENCES: Record<"messages.stream" | "chat.completions.create" | "responses.create", Record<string, RawDifference>> = {
  "messages.stream": {
    "anthropic/danshapiro__kilroy__kimi_tool_call_sequences#start_input_plus_delta_duplicate": { kind: "throws_after_all_events", why: KIMI_NO_MESSAGE_START, error: /request ended without sending any chunks/ },
    "anthropic/danshapiro__kilroy__kimi_tool_call_sequences#delta_only_valid_json": { kind: "throws_after_all_events", why: KIMI_NO_MESSAGE_START, error: /request ended without sending any chunks/ },
    "anthropic/danshapiro__kilroy__kimi_tool_call_sequences#start_input_only_valid_json": { kind: "throws_after_all_events", why: KIMI_NO_MESSAGE_START, error: /request ended without sending any chunks/ },
    "anthropic/danshapiro__kilroy__kimi_tool_call_sequences#start_input_null_plus_delta_valid_json": { kind: "throws_after_all_events", why: KIMI_NO_MESSAGE_START, error: /request ended without sending any chunks/ },
    "anthropic/danshapiro__kilroy__kimi_tool_call_sequences#start_input_plus_delta_continuation_invalid_json": { kind: "throws_after_all_events", why: KIMI_NO_MESSAGE_START, error: /request ended without sending any chunks/ },
    "anthropic/danshapiro__kilroy__kimi_tool_call_sequences#start_input_empty_object_plus_delta_valid_json": { kind: "throws_after_all_events", why: KIMI_NO_MESSAGE_START, error: /request ended without sending any chunks/ },
    "anthropic/handwritten__gateway-without-message-start": {
      kind: "throws_after_all_events",
      why: "A gateway that sends no message_start. MessageStream yields every event, then rejects at the end ('request ended without sending any chunks'); toolwire had decoded every event, so its turn is the file's plus a source_error diagnostic. Through the repairing fetch a message_start is added.",
      error: /request ended without sending any chunks/,
    },
    "anthropic/handwritten__kimi-start-input-quirks#kimi_start_input_continued_by_delta": {
      kind: "throws_early",
      why: "Kimi's delta continues the start input. MessageStream parses the delta alone (`,\"path\":…}`) at content_block_stop and raises before yielding it; toolwire merges start and delta (start_continuation).",
      error: /not valid JSON/,
    },
    "anthropic/handwritten__relay-invalid-call-beside-valid#relay_invalid_call_beside_valid": {
      kind: "throws_early",
      why: "A relay garbled the first call's input. MessageStream JSON-parses it at content_block_stop and raises, so the intact second call never reaches toolwire through the SDK; the raw body gives the file's turn (first call invalid_json, second runnable).",
      error: /JSON/,
    },
    "anthropic/vercel__ai__spliced-message-start": {
      kind: "throws_early",
      why: "A relay spliced a second message_start into the stream. MessageStream raises before yielding it, so the restarted message never reaches toolwire; messages.create({stream: true}) and fetch give the file's turn (the restart decoded).",
      error: /Unexpected event order/,
    },
  },
  "chat.completions.create": {
    "openai-chat/handwritten__nebius-deepseek-no-finish-reason#nebius-deepseek-no-finish-reason": { kind: "hides_done", why: HIDES_DONE },
    "openai-chat/handwritten__openwebui-finish-reason-after-every-chunk#openwebui-finish-reason-after-every-chunk": { kind: "hides_done", why: HIDES_DONE },
    "openai-chat/simonw__llm__test_tools_streaming_variant_a#interaction-0": { kind: "hides_done", why: HIDES_DONE },
    "openai-chat/handwritten__openrouter-keepalive-as-data#openrouter-keepalive-as-data": {
      kind: "throws_early",
      why: "OpenRouter sends its keep-alive as `data: : OPENROUTER PROCESSING`. The SDK JSON-parses every data line and raises on it before the first chunk; toolwire, reading the bytes, skips it with a diagnostic.",
      error: /not valid JSON/,
    },
  },
  "responses.create": {
    "openai-responses/vercel__ai__openai-error.1": {
      kind: "error_event_reduced",
      why: "The SDK raises the `error` event's inner `error` object as an APIError. toolwire decodes it as the error event (status error, same message), but its sequence_number and the response.failed event after it are lost to the SDK.",
    },
    "openai-responses/vercel__ai__parallel-tool-call-wrapper.1": {
      kind: "throws_early",
      why: "The first event's data is not valid JSON. The SDK raises on it; toolwire, reading the bytes, skips it with a diagnostic and decodes the rest.",
      error: /JSON/,
    },
  },
};

export function checkRawDifference(difference: RawDifference, turn: DecodedTurn, file: DecodedTurn): void {
  expect(turn, "the documented difference no longer occurs: remove it from RAW_DIFFERENCES").not.toEqual(file);
  switch (difference.kind) {
    case "throws_after_all_events":
      expect(sourceError(turn)).toMatch(difference.error);
      expect(withoutSourceError(turn)).toEqual(file);
      break;
    case "throws_early":
      expect(sourceError(turn)).toMatch(difference.error);
      expect(turn.status).toBe("incomplete");
      // Whatever came before the failure: every call offered as executable is one the file has too.
      for (const call of turn.toolCalls) {
        if (call.error === null) expect(file.toolCalls.find((other) => other.id === call.id)?.arguments).toEqual(call.arguments);
      }
      break;
    case "hides_done":
      expect(file.status).toBe("complete");
      expect(turn.status).toBe("incomplete");
      expect(turn.toolCalls.length).toBe(file.toolCalls.length);
      for (const call of turn.toolCalls) {
        if (call.complete) {
          expect(turn.diagnostics.some((d) => d.code === "call_closed_at_stream_end" && d.callIndex === call.index)).toBe(true);
          expect(call.arguments).toEqual(file.toolCalls[call.index]?.arguments);
        } else expect(call).toMatchObject({ arguments: null, error: { code: "truncated", cause: "stream_ended" } });
      }
      break;
    case "error_event_reduced":
      expect(turn.status).toBe("error");
      expect(turn.status).toBe(file.status);
      expect(turn.error?.message).toBe(file.error?.message);
      expect(turn.toolCalls).toEqual(file.toolCalls);
      expect(turn.text).toBe(file.text);
      break;
  }
}

export interface AccumulationDifference {
  why: string;
  /** The SDK's calls exactly as its accumulation returns them (or what it threw). */
  sdk: SdkCalls;
}

const thrown = (pattern: RegExp): SdkCalls => ({ threw: expectStringMatching(pattern) });
// `expect.stringMatching` is typed `any`; keeping it behind a string-typed helper keeps the table typed.
function expectStringMatching(pattern: RegExp): string {
  return expect.stringMatching(pattern) as unknown as string;
}

const CONCATENATED =
  "The server sends several calls at one index (each with its own id). The SDK appends their arguments into one call with two JSON objects back to back; toolwire splits them into separate calls.";

export const ACCUMULATION_DIFFERENCES: Record<string, AccumulationDifference> = {
  // Anthropic: messages.stream().finalMessage()
  "anthropic/anthropics__anthropic-sdk-typescript__incomplete_partial_json_response": {
    why: "The model hit max_tokens inside the call's arguments. The SDK's partial-JSON parser closes the open string, array and object, and finalMessage() hands back an input the model never finished. toolwire marks the call truncated (cause max_tokens): never executable.",
    sdk: [{ name: "make_file", arguments: { filename: "taxes.txt", lines_of_text: ["# COMPREHENSIVE TAX GUIDE FOR INDIVIDUALS WITH MULTIPLE W-2s", "", "## INTRODUCTION", ""] } }],
  },
  ...Object.fromEntries(
    ["start_input_plus_delta_duplicate", "delta_only_valid_json", "start_input_only_valid_json", "start_input_null_plus_delta_valid_json", "start_input_plus_delta_continuation_invalid_json", "start_input_empty_object_plus_delta_valid_json"].map((sequence) => [
      `anthropic/danshapiro__kilroy__kimi_tool_call_sequences#${sequence}`,
      { why: "No message_start: finalMessage() has no message to return and rejects. toolwire decodes the call (see the Kimi stream tests for the same sequences as a well-formed stream).", sdk: thrown(/request ended without sending any chunks/) },
    ]),
  ),
  "anthropic/handwritten__claude-max-tokens-mid-call#claude_max_tokens_mid_call": {
    why: "max_tokens stopped the model inside the second call's input. The SDK's partial-JSON parser drops the unfinished string and hands back an input the model never finished; toolwire marks that call truncated (cause max_tokens): never executable.",
    sdk: [
      { name: "read_file", arguments: { path: "src/index.ts" } },
      { name: "write_file", arguments: { path: "notes/plan.md" } },
    ],
  },
  "anthropic/handwritten__claude-max-tokens-mid-call#claude_max_tokens_only_call": {
    why: "max_tokens stopped the model inside the call's input. The SDK's partial-JSON parser closes the open array and object and hands back an input the model never finished; toolwire marks the call truncated (cause max_tokens): never executable.",
    sdk: [{ name: "make_file", arguments: { filename: "guide.md", lines_of_text: ["# Guide", ""] } }],
  },
  "anthropic/handwritten__gateway-without-message-start": {
    why: "No message_start: finalMessage() has no message to return and rejects. toolwire decodes the call.",
    sdk: thrown(/request ended without sending any chunks/),
  },
  "anthropic/handwritten__kimi-start-input-quirks#kimi_start_input_continued_by_delta": {
    why: "The SDK parses the delta that continues the start input alone, which is not JSON: finalMessage() rejects. toolwire merges them (start_continuation).",
    sdk: thrown(/not valid JSON/),
  },
  "anthropic/handwritten__relay-invalid-call-beside-valid#relay_invalid_call_beside_valid": {
    why: "The first call's input is not JSON: finalMessage() rejects the whole message, and the intact second call is lost with it. toolwire reports the first invalid_json and keeps the second runnable.",
    sdk: thrown(/Expected ',' or '}'/),
  },
  "openai-chat/handwritten__invalid-arguments-beside-valid#invalid_arguments_beside_valid": {
    why: "The SDK hands back argument strings as sent, the broken one included, for the agent to parse; toolwire marks it invalid_json (never runnable) and parses the other.",
    sdk: [
      { name: "search_code", arguments: '{"pattern": "grep -n "TODO" src", "max": 3' },
      { name: "read_file", arguments: '{"path": "README.md"}' },
    ],
  },
  "openai-chat/handwritten__numbers-beyond-a-double#integer_id_beyond_2_53": {
    why: "The SDK hands back the argument string as sent; an agent's JSON.parse reads post_id as 1858000000000000000, another post. toolwire marks the call number_out_of_range (never runnable) and keeps its sibling.",
    sdk: [
      { name: "get_post", arguments: '{"post_id": 1858000000000000001}' },
      { name: "get_post", arguments: '{"post_id": 42}' },
    ],
  },
  "openai-chat/handwritten__numbers-beyond-a-double#exponent_beyond_range_split_across_deltas": {
    why: "The SDK hands back the argument string as sent; JSON.parse reads factor as Infinity, which JSON.stringify writes as null. toolwire marks the call number_out_of_range.",
    sdk: [{ name: "scale_image", arguments: '{"path": "a.png", "factor": 1e999}' }],
  },
  "openai-responses/handwritten__non-json-arguments#python_literals": {
    why: "The SDK hands back the argument string as sent (Python's True and None); toolwire repairs it losslessly (python_literals) and reports the repair.",
    sdk: [{ name: "list_dir", arguments: '{"path": "src", "recursive": True, "filter": None}' }],
  },
  "openai-responses/handwritten__non-json-arguments#invalid_beside_valid": {
    why: "The SDK hands back argument strings as sent, the broken one included; toolwire marks it invalid_json and keeps the sibling runnable.",
    sdk: [
      { name: "search_code", arguments: '{"pattern": "grep -n "TODO" src", "max": 3' },
      { name: "read_file", arguments: '{"path": "README.md"}' },
    ],
  },
  "openai-responses/handwritten__responses-quirks#length_mid_call": {
    why: "max_output_tokens cut the call's arguments; the SDK hands back the cut string. toolwire marks the call truncated: never executable.",
    sdk: [{ name: "write_file", arguments: '{"path":"CHANGELOG.md","content":"## 0.2.0\\n- proxy: request ids and metri' }],
  },
  "anthropic/vercel__ai__spliced-message-start": {
    why: "A second message_start mid-stream: MessageStream rejects the stream. toolwire drops the abandoned message (its call truncated, cause message_restarted, with a diagnostic) and decodes the restarted one.",
    sdk: thrown(/Unexpected event order/),
  },

  // OpenAI Chat: chat.completions.stream().finalChatCompletion()
  "openai-chat/handwritten__gemini-openai-compat-missing-index#gemini-openai-compat-missing-index": {
    why: "Gemini's OpenAI-compatible endpoint leaves out tool_calls[].index. The SDK keys calls by index and keeps none; toolwire assigns them in order.",
    sdk: [],
  },
  "openai-chat/handwritten__gemini-openai-compat-signature-only-delta#gemini-openai-compat-signature-only-delta": {
    why: "Gemini's compat endpoint sends the call whole without an index, then a delta holding only its thought signature. The SDK keeps no call; toolwire decodes it and keeps the signature.",
    sdk: [],
  },
  "openai-chat/handwritten__gemini-openai-compat-whole-object-per-chunk#gemini-openai-compat-whole-object-per-chunk": {
    why: "Gemini's compat endpoint opens the call with arguments `{}`, then sends the whole arguments object. The SDK concatenates them into `{}{…}`, which does not parse; toolwire takes the object.",
    sdk: [{ name: "get_stock_price", arguments: '{}{"stock":"MSFT"}' }],
  },
  "openai-chat/handwritten__litellm-bedrock-index-starts-at-1#litellm-bedrock-index-starts-at-1": {
    why: "LiteLLM's Bedrock bridge numbers calls from 1. The SDK crashes on the gap at index 0; toolwire decodes the call.",
    sdk: thrown(/Cannot read properties of undefined/),
  },
  "openai-chat/handwritten__litellm-ollama-chat-arguments-object#litellm-ollama-chat-arguments-object": {
    why: "The arguments arrive as a JSON object instead of a string. The SDK string-concatenates it into `[object Object]`; toolwire takes the object.",
    sdk: [{ name: "get_weather", arguments: "[object Object]" }],
  },
  "openai-chat/handwritten__llamacpp-no-arguments-key#llamacpp-no-arguments-key": {
    why: "A call without arguments has no `arguments` key. The SDK leaves an empty string, which is not JSON; toolwire gives `{}` (source empty).",
    sdk: [{ name: "get_current_time", arguments: "" }],
  },
  "openai-chat/handwritten__vllm-hermes-arguments-null#vllm-hermes-arguments-null": {
    why: "vLLM's hermes parser sends `arguments: null` for a call without arguments. The SDK leaves an empty string; toolwire gives `{}`.",
    sdk: [{ name: "get_weather", arguments: "" }],
  },
  "openai-chat/simonw__llm__test_tools_streaming_variant_d#interaction-0": {
    why: "A call without arguments: the SDK leaves an empty string; toolwire gives `{}`.",
    sdk: [{ name: "llm_version", arguments: "" }],
  },
  "openai-chat/handwritten__nebius-deepseek-connection-dropped#nebius-deepseek-connection-dropped": {
    why: "The connection dropped inside the call. The SDK rejects the stream (no finish_reason); toolwire returns the turn incomplete with the call truncated.",
    sdk: thrown(/missing finish_reason/),
  },
  "openai-chat/handwritten__nebius-deepseek-no-finish-reason#nebius-deepseek-no-finish-reason": {
    why: "The server never sends finish_reason, only [DONE]. The SDK rejects the stream; toolwire takes [DONE] as the end and the call as complete.",
    sdk: thrown(/missing finish_reason/),
  },
  "openai-chat/simonw__llm__test_tools_streaming_variant_a#interaction-0": {
    why: "No finish_reason, only [DONE]: the SDK rejects the stream; toolwire decodes the call.",
    sdk: thrown(/missing finish_reason/),
  },
  "openai-chat/handwritten__new-api-gemini-parallel-calls-index-zero#new-api-gemini-parallel-calls-index-zero": { why: CONCATENATED, sdk: [{ name: "get_weather", arguments: '{"city":"Paris"}{"city":"Rome"}' }] },
  "openai-chat/handwritten__ollama-parallel-calls-index-zero#ollama-parallel-calls-index-zero": {
    why: CONCATENATED,
    sdk: [{ name: "write_file", arguments: '{"path":"a.txt","content":"A"}{"path":"b.txt","content":"B"}' }],
  },
  "openai-chat/handwritten__sglang-parallel-calls-index-zero#sglang-parallel-calls-index-zero": { why: CONCATENATED, sdk: [{ name: "get_weather", arguments: '{"city": "Tokyo"}{"city": "Osaka"}' }] },
  "openai-chat/handwritten__openai-length-mid-call#openai-length-mid-call": {
    why: "finish_reason length inside the second call. The SDK returns its cut-off argument text like any other; toolwire marks that call truncated (cause max_tokens) and keeps the first.",
    sdk: [
      { name: "make_file", arguments: '{"filename": "a.txt", "lines": ["one"]}' },
      { name: "make_file", arguments: '{"filename": "b.txt", "lines": ["# GUIDE", "Step 1: col' },
    ],
  },
  "openai-chat/handwritten__openai-midstream-error#openai-midstream-error": {
    why: "The server sends an error chunk mid-call. The SDK raises it; toolwire returns status error with the call truncated (cause stream_error).",
    sdk: thrown(/The server had an error/),
  },
  "openai-chat/pydantic__pydantic-ai__test_groq__test_tool_use_failed_error_streaming#interaction-0": {
    why: "Groq reports a failed tool call as an error chunk. The SDK raises it; toolwire returns status error with the error's message and no call.",
    sdk: thrown(/Tool call validation failed/),
  },
  "openai-chat/handwritten__opencodex-proxy-duplicated-argument-chunks#opencodex-proxy-duplicated-argument-chunks": {
    why: "A proxy sends every call's arguments twice. The SDK keeps both copies back to back; toolwire collapses the identical repeat (repair collapsed_duplicate).",
    sdk: [
      { name: "read_file", arguments: '{"path":"src/a.ts"}{"path":"src/a.ts"}' },
      { name: "read_file", arguments: '{"path":"src/b.ts"}{"path":"src/b.ts"}' },
    ],
  },
  "openai-chat/handwritten__vllm-glm-final-flush-with-finish-reason#vllm-glm-final-flush-with-finish-reason": {
    why: "vLLM flushes the whole arguments again with finish_reason. The SDK keeps both copies; toolwire collapses the repeat.",
    sdk: [{ name: "write_file", arguments: '{"file_path": "/tmp/notes.md", "content": "# Notes\\n- item"}{"file_path": "/tmp/notes.md", "content": "# Notes\\n- item"}' }],
  },
  "openai-chat/handwritten__vllm-xlam-final-flush-duplicate#vllm-xlam-final-flush-duplicate": {
    why: "vLLM's xlam parser flushes the whole arguments again at the end. The SDK keeps both copies; toolwire collapses the repeat.",
    sdk: [{ name: "web_search", arguments: '{"query": "weather in Oslo", "limit": 3}{"query": "weather in Oslo", "limit": 3}' }],
  },
  "openai-chat/handwritten__vllm-xlam-final-flush-misaligned#vllm-xlam-final-flush-misaligned": {
    why: "vLLM streams `{` and then flushes the whole arguments, so the text starts with two braces. The SDK's string does not parse; toolwire recognizes the resend.",
    sdk: [{ name: "web_search", arguments: '{{"query": "weather in Oslo", "limit": 3}' }],
  },
  "openai-chat/handwritten__qianfan-cumulative-arguments#qianfan-cumulative-arguments": {
    why: "Qianfan resends the arguments so far in every chunk. The SDK concatenates the resends; toolwire takes the last (repair cumulative_resend).",
    sdk: [{ name: "get_forecast", arguments: '{"city": "{"city": "Shenzhen",{"city": "Shenzhen", "days": 3}' }],
  },
  "openai-chat/handwritten__venice-mistral-string-and-object-arguments#venice-mistral-string-and-object-arguments": {
    why: "One call's arguments are a string, the next one's an object. The SDK turns the object into `[object Object]`; toolwire takes it.",
    sdk: [
      { name: "get_weather", arguments: '{"city": "Nice"}' },
      { name: "get_forecast", arguments: "[object Object]" },
    ],
  },
  "openai-chat/handwritten__vllm-named-tool-choice-missing-type#vllm-named-tool-choice-missing-type": {
    why: "vLLM's named tool choice omits `type: function`. The SDK rejects the stream; toolwire decodes the call.",
    sdk: thrown(/missing `type`/),
  },
  "openai-chat/vercel__ai__anthropic-fallback-tool-call": {
    why: "Claude through the OpenAI-compatible API numbers its only call 1. The SDK crashes on the gap at index 0; toolwire decodes the call.",
    sdk: thrown(/Cannot read properties of undefined/),
  },
  "openai-chat/vercel__ai__mistral-incremental-tool-call": {
    why: "Mistral's chunks carry no role. The SDK rejects the stream; toolwire decodes the call.",
    sdk: thrown(/missing role/),
  },
  "openai-chat/handwritten__openrouter-keepalive-as-data#openrouter-keepalive-as-data": {
    why: "A non-JSON keep-alive data line: the SDK raises before the first chunk; toolwire skips it and decodes the call.",
    sdk: thrown(/not valid JSON/),
  },

  // OpenAI Responses: responses.stream().finalResponse()
  "openai-responses/vercel__ai__openai-error.1": {
    why: "The response fails with an error event. The SDK raises it; toolwire returns status error with the error's message.",
    sdk: thrown(/exceeded your current quota/),
  },
  "openai-responses/vercel__ai__parallel-tool-call-wrapper.1": {
    why: "The first event is not valid JSON, and the call is a `parallel` wrapper around two calls. The SDK raises on the bad event; toolwire skips it and unpacks the wrapper's two calls (the turn is incomplete: the stream has no response.completed).",
    sdk: thrown(/JSON/),
  },
};

/**
 * Through `createRepairingFetch`, each SDK's own accumulation holds toolwire's runnable calls for
 * every stream of ACCUMULATION_DIFFERENCES and every other recorded stream, except these. The
 * others are fixed: Kimi's start input plus deltas, parallel calls at one index, cumulative and
 * duplicated resends, a missing or wrong index, missing `type`, `role` or `finish_reason`,
 * arguments sent as objects, `null` or not at all, a keep-alive sent as data and a missing
 * message_start are re-sent well-formed, and a call cut by max_tokens / length is withheld.
 */
export interface ThroughFetchDifference {
  why: string;
  sdk: Array<{ id: string; name: string; arguments: unknown }> | { threw: string };
  /** Only these clients differ (default: all). */
  clients?: string[];
}

const CUT_CONNECTION =
  "The connection dropped inside the call, with no finish_reason and no [DONE]. The call is withheld, and nothing more can honestly be said: the stream is cut, so the SDK still rejects it (missing finish_reason), as it should.";

export const THROUGH_FETCH: Record<string, ThroughFetchDifference> = {
  "anthropic/vercel__ai__spliced-message-start": {
    why: "A relay spliced a second message_start into the stream. The first message's text was already forwarded when the restart arrived (text passes at once), so the re-encoder cannot take it back: the SDK still rejects the stream. toolwire's own decoder drops the abandoned message.",
    sdk: { threw: expect.stringMatching(/Unexpected event order/) as unknown as string },
  },
  "openai-chat/handwritten__nebius-deepseek-connection-dropped#nebius-deepseek-connection-dropped": {
    why: CUT_CONNECTION,
    sdk: { threw: expect.stringMatching(/missing finish_reason/) as unknown as string },
  },
  "openai-chat/handwritten__openai-midstream-error#openai-midstream-error": {
    why: "The server sent an error mid-call. Errors pass through as they came (the call is withheld): the SDK raises the provider's error, which is what it should see.",
    sdk: { threw: expect.stringMatching(/The server had an error/) as unknown as string },
  },
  "openai-responses/vercel__ai__openai-error.1": {
    why: "The response fails with an error event; errors pass through as they came, and the SDK raises it.",
    sdk: { threw: expect.stringMatching(/exceeded your current quota/) as unknown as string },
  },
  "openai-responses/vercel__ai__parallel-tool-call-wrapper.1": {
    why: "A hand-written reproduction whose first event (response.created) is not JSON and which never ends (no response.completed). The bad event becomes a comment, so the SDK now reads on, but it has no response to build on and rejects the stream; the `parallel` wrapper item passes as it came (not re-encoded).",
    sdk: { threw: expect.stringMatching(/expected 'response.created' event/) as unknown as string },
  },
  "openai-chat/pydantic__pydantic-ai__test_groq__test_tool_use_failed_error_streaming#interaction-0": {
    why: "Groq reports a failed tool call as an error event; it passes through, and the SDK raises it.",
    sdk: { threw: expect.stringMatching(/Tool call validation failed/) as unknown as string },
  },
};

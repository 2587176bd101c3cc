import { isPlainObject } from "../json/shape.js";
import type { ProviderName } from "../types.js";
import { unreadBody, type WholeResponseRepair } from "./whole-common.js";
import type { ReencoderOptions } from "./types.js";
import { extractWholeAnthropicTextCalls, extractWholeChatTextCalls, extractWholeOllamaTextCalls, extractWholeResponsesTextCalls } from "./whole-text-calls.js";
import { repairGeminiWhole } from "./whole-gemini.js";
import { repairAnthropicWhole, repairConverseWhole } from "./whole-messages.js";
import { repairChatWhole, repairOllamaWhole, repairResponsesWhole } from "./whole-openai.js";

export type { WholeResponseOptions, WholeResponseRepair } from "./whole-common.js";

/** What each protocol's whole body must hold to be read, for the `classified` report of one that does not. */
const EXPECTED: Record<ProviderName, string> = {
  anthropic: "a Messages object with a `content` list",
  "openai-chat": "a chat.completion object with a `choices` list",
  "openai-responses": "a response object with an `output` list",
  gemini: "a GenerateContentResponse object",
  bedrock: "a Converse response with `output.message.content`",
  ollama: "an /api/chat object with a `message`",
};

/**
 * Repairs the calls of a non-streamed response body (the parsed JSON) with the same decoder and
 * the same trust rules as a stream: the body is turned into the events its stream would have sent
 * (a Chat message becomes chunks, an Anthropic or Converse message block events, a Responses
 * object item events; a Gemini response and an Ollama `stream: false` line already are one chunk),
 * decoded by `createDecoder(provider)`, and the JSON is changed only where a call was not decoded
 * as sent:
 *
 * - a body whose every call was decoded as sent comes back as the same object (`changed: false`);
 * - a runnable call keeps its place with the decoded arguments (a string in Chat and Responses, an
 *   object in Anthropic, Converse, Gemini and Ollama) and toolwire's id where it minted one (a
 *   missing or duplicate id; Gemini on Vertex gets none added: `addMissingIds: false`); calls split
 *   from glued arguments follow it;
 * - a truncated call (a `max_tokens`/`length` stop inside it) or an invalid one is removed, never
 *   delivered as runnable, and the stop reason is made to agree as the stream re-encoders do
 *   (Anthropic `tool_use` → `end_turn`, Converse `tool_use` → `malformed_tool_use`, Chat
 *   `tool_calls` → `stop`, Gemini `STOP` → `MALFORMED_FUNCTION_CALL` when no call is left; Chat
 *   `stop` → `tool_calls` when calls are);
 * - every change is reported with the codes of the stream re-encoders; fields toolwire does not
 *   interpret pass untouched. With `textCalls`, the calls written into the text are read out as
 *   the protocol's calls (whole-text-calls.ts): a Chat body's message text as `tool_calls` (one
 *   choice), Ollama's `message.content` as `message.tool_calls`, Anthropic
 *   text blocks as `tool_use` blocks and Responses message items as `function_call` items;
 *   Gemini and Converse bodies are not read for them.
 *
 * `provider` `anthropic` also reads Claude on Bedrock (`/invoke`), which answers with Messages
 * JSON. A body that is not the protocol's shape comes back unchanged with one `classified` report
 * (`whole_response_unexpected_shape`) and `turn: null`; nothing here throws for a bad body.
 */
export function repairWholeResponse(provider: ProviderName, body: unknown, options: Omit<ReencoderOptions, "framing"> = {}): WholeResponseRepair {
  const { addMissingIds = true, ...decoderOptions } = options;
  let result: WholeResponseRepair | null = null;
  if (isPlainObject(body)) {
    switch (provider) {
      case "anthropic":
        result = repairAnthropicWhole(body, decoderOptions);
        if (result !== null && decoderOptions.textCalls !== undefined) result = extractWholeAnthropicTextCalls(result, decoderOptions);
        break;
      case "openai-chat":
        result = repairChatWhole(body, decoderOptions);
        if (result !== null && decoderOptions.textCalls !== undefined) result = extractWholeChatTextCalls(result, decoderOptions);
        break;
      case "openai-responses":
        result = repairResponsesWhole(body, decoderOptions);
        if (result !== null && decoderOptions.textCalls !== undefined) result = extractWholeResponsesTextCalls(result, decoderOptions);
        break;
      case "gemini":
        result = repairGeminiWhole(body, decoderOptions, addMissingIds);
        break;
      case "bedrock":
        result = repairConverseWhole(body, decoderOptions);
        break;
      case "ollama":
        result = repairOllamaWhole(body, decoderOptions);
        if (result !== null && decoderOptions.textCalls !== undefined) result = extractWholeOllamaTextCalls(result, decoderOptions);
        break;
    }
  }
  return result ?? unreadBody(provider, body, "whole_response_unexpected_shape", `The response body is not ${EXPECTED[provider]}; it was passed on unchanged, its calls (if any) unchecked.`);
}

/**
 * Classifies a provider's error response into a reason and the recovery that can succeed:
 * repair the history (and which faults to look for), sanitize the tool schemas for a target,
 * retry after a delay, shrink the context, or give up.
 *
 * Matching works on the provider's own error texts (see `docs/reference/provider-errors.md`
 * and the sources named on each rule), read from whatever shape the body arrives in: an SDK error
 * object, parsed JSON, a JSON string, or JSON embedded in another provider's message (Vertex,
 * OpenRouter and LiteLLM wrap the upstream body). Specific texts win over status codes.
 */
import type { FaultCode, RepairPolicy } from "../history/pairing.js";
import type { SchemaTarget } from "../schema/targets/types.js";

/**
 * What to do about a provider error: repair the history, sanitize the schemas, retry after a delay,
 * reduce the context, or fail; with the details each action needs.
 */
export type Recovery =
  /**
   * Run `repairHistory` with `policy` merged into yours and resend. `faults` are the check codes
   * behind the error (empty when the check cannot see the problem, e.g. a rejected signature).
   */
  | { action: "repair_history"; faults: FaultCode[]; policy?: Partial<RepairPolicy> }
  /**
   * Rewrite the tool schemas for `target` and resend; `strip` names keywords the error points at
   * (for llama.cpp see LLAMACPP_SCHEMA_ERRORS: every keyword named there can be removed).
   */
  | { action: "sanitize_schema"; target: SchemaTarget; strip?: string[] }
  /** Transient: resend after `seconds` (null: the provider gave no delay; use backoff). */
  | { action: "retry_after"; seconds: number | null }
  /** The request is too large: trim or summarize the history, then resend. */
  | { action: "reduce_context" }
  /** Resending cannot help. */
  | { action: "fail" };

/**
 * Why the provider rejected a request, as one stable code (`tool_result_missing`,
 * `tool_id_invalid`, `schema_rejected`, `rate_limit`, `context_overflow`…).
 */
export type ProviderErrorReason =
  | "tool_result_missing"
  | "tool_result_orphan"
  | "tool_result_not_first"
  | "server_tool_result_orphan"
  | "tool_id_duplicate"
  | "tool_id_invalid"
  | "item_id_invalid"
  | "tool_arguments_invalid"
  | "function_response_count"
  | "function_turn_order"
  | "thinking_missing"
  | "thinking_not_allowed"
  | "thinking_signature_invalid"
  | "reasoning_content_missing"
  | "reasoning_item_missing"
  | "thought_signature_missing"
  | "empty_content"
  | "roles_not_alternating"
  | "tool_result_mixed_content"
  | "schema_rejected"
  | "tool_call_rejected"
  | "context_overflow"
  | "output_limit_invalid"
  | "rate_limit"
  | "overloaded"
  | "server_error"
  | "timeout"
  | "auth"
  | "billing"
  | "content_policy"
  | "model_not_found"
  | "invalid_request"
  | "unknown";

/**
 * The result of `classifyProviderError`: the reason, the recovery, whether a retry can succeed, and
 * the message it was decided on.
 */
export interface ProviderErrorClassification {
  reason: ProviderErrorReason;
  recovery: Recovery;
  /** Whether resending (after the recovery) can succeed. */
  retryable: boolean;
  status: number | null;
  /** The provider's message the decision was made on. */
  message: string;
  /** Message index the error names (`messages.N`, `messages[N]`, `message index N`), if any. */
  messageIndex: number | null;
  /** Call ids the error names. */
  ids: string[];
  /** Name of the rule that matched, for logs and tests. */
  rule: string;
}

/** Options of `classifyProviderError`: the response headers (for `retry-after`) and the current time. */
export interface ClassifyOptions {
  /** Response headers (`retry-after`, `retry-after-ms`). */
  headers?: Headers | Record<string, string | string[] | undefined>;
  /** Current time in ms, for `retry-after` given as an HTTP date. Defaults to `Date.now()`. */
  now?: number;
}

// ---------------------------------------------------------------------------------------------
// Reading the body

interface Extracted {
  texts: string[];
  /** OpenAI's `param` (e.g. `messages.[1].role`): where the error is, not what it says. */
  params: string[];
  codes: string[];
  status: number | null;
  retryDelay: number | null;
}

const MESSAGE_KEYS = ["message", "errorMessage", "Message", "detail", "error_description", "msg", "failed_generation"];
const CODE_KEYS = ["type", "code", "status", "__type", "errorCode", "errorType", "name", "reason"];

function extract(body: unknown): Extracted {
  const out: Extracted = { texts: [], params: [], codes: [], status: null, retryDelay: null };
  visit(body, out, 0);
  return out;
}

function visit(value: unknown, out: Extracted, depth: number): void {
  if (depth > 8 || value === null || value === undefined) return;
  if (typeof value === "string") {
    addText(value, out, depth);
    return;
  }
  if (Array.isArray(value)) {
    for (const item of value) visit(item, out, depth + 1);
    return;
  }
  if (typeof value !== "object") return;
  const record = value as Record<string, unknown>;
  for (const key of MESSAGE_KEYS) {
    const text = value instanceof Error && key === "message" ? value.message : record[key];
    if (typeof text === "string") addText(text, out, depth);
  }
  if (typeof record.param === "string") out.params.push(record.param);
  for (const key of CODE_KEYS) {
    const code = record[key];
    if (typeof code === "string" && code !== "" && code.length < 80) out.codes.push(code);
    if (key === "code" && typeof code === "number" && out.status === null && code >= 400 && code < 600) out.status = code;
  }
  for (const key of ["status", "statusCode", "httpStatusCode"]) {
    const status = record[key];
    if (typeof status === "number" && status >= 400 && status < 600 && out.status === null) out.status = status;
  }
  if (typeof record.retryDelay === "string") {
    const seconds = parseDuration(record.retryDelay);
    if (seconds !== null) out.retryDelay = seconds;
  }
  for (const key of ["error", "errors", "details", "metadata", "raw", "body", "response", "data", "$metadata", "cause", "innererror"]) {
    const inner = record[key];
    if (typeof inner === "string") addText(inner, out, depth);
    else visit(inner, out, depth + 1);
  }
}

/** Adds a message and, when it embeds a JSON body (wrapping proxies), what that body says. */
function addText(text: string, out: Extracted, depth: number): void {
  const trimmed = text.trim();
  if (trimmed === "") return;
  const start = trimmed.search(/[[{]/);
  if (start >= 0) {
    const end = Math.max(trimmed.lastIndexOf("}"), trimmed.lastIndexOf("]"));
    if (end > start) {
      try {
        visit(JSON.parse(trimmed.slice(start, end + 1)), out, depth + 1);
        if (start === 0 && end === trimmed.length - 1) return;
      } catch {
        // Not JSON after all: the text stands as it is.
      }
    }
  }
  if (!out.texts.includes(trimmed)) out.texts.push(trimmed);
}

function parseDuration(text: string): number | null {
  const match = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h)?\s*$/i.exec(text);
  if (!match) return null;
  const value = Number(match[1]);
  const unit = (match[2] ?? "s").toLowerCase();
  return unit === "ms" ? value / 1000 : unit === "m" ? value * 60 : unit === "h" ? value * 3600 : value;
}

function header(headers: ClassifyOptions["headers"], name: string): string | null {
  if (!headers) return null;
  if (typeof (headers as Headers).get === "function") return (headers as Headers).get(name);
  for (const [key, value] of Object.entries(headers as Record<string, string | string[] | undefined>)) {
    if (key.toLowerCase() !== name) continue;
    return Array.isArray(value) ? (value[0] ?? null) : (value ?? null);
  }
  return null;
}

/** Seconds to wait, from headers, the body's RetryInfo, or the message text; null when none says. */
function retryDelay(text: string, extracted: Extracted, options: ClassifyOptions): number | null {
  const ms = header(options.headers, "retry-after-ms");
  if (ms !== null && Number.isFinite(Number(ms))) return Number(ms) / 1000;
  const after = header(options.headers, "retry-after");
  if (after !== null) {
    if (/^\s*\d+(\.\d+)?\s*$/.test(after)) return Number(after);
    const date = Date.parse(after);
    if (!Number.isNaN(date)) return Math.max(0, (date - (options.now ?? Date.now())) / 1000);
  }
  if (extracted.retryDelay !== null) return extracted.retryDelay;
  const match = /(?:try again|retry) (?:in|after) (\d+(?:\.\d+)?)\s*(ms|s|seconds?|m|minutes?)\b/i.exec(text);
  if (!match) return null;
  const unit = (match[2] as string).toLowerCase();
  const value = Number(match[1]);
  return unit === "ms" ? value / 1000 : unit.startsWith("m") && unit !== "ms" ? value * 60 : value;
}

// ---------------------------------------------------------------------------------------------
// Rules

interface Context {
  text: string;
  codes: string[];
  status: number | null;
}

interface Rule {
  name: string;
  reason: ProviderErrorReason;
  /** Where the text was seen (issue threads, provider docs). */
  source: string;
  match: (context: Context) => boolean;
  recovery: Recovery | ((context: Context) => Recovery);
  /** Pattern capturing the list of ids the message names. */
  ids?: RegExp;
}

const has = (pattern: RegExp) => (context: Context) => pattern.test(context.text);
const code = (...names: string[]) => (context: Context) => context.codes.some((item) => names.includes(item.toLowerCase()));
const repair = (faults: FaultCode[], policy?: Partial<RepairPolicy>): Recovery => ({ action: "repair_history", faults, ...(policy ? { policy } : {}) });

const MISSING: FaultCode[] = ["missing_result", "result_not_adjacent"];
const ORPHAN: FaultCode[] = ["orphan_result", "result_not_adjacent", "duplicate_result"];

const LLAMACPP_GRAMMAR = /error parsing grammar|failed to parse grammar|json-schema-to-grammar|json schema conversion failed|unable to generate parser for this template/i;

/** One error text of llama.cpp's schema-to-grammar path and what the recovery strips for it. */
export interface LlamacppSchemaError {
  /** The text as llama.cpp words it (`…` stands for the variable part). */
  text: string;
  /** Keywords the recovery names in `strip` (sanitizing for `llamacpp` also rewrites them). */
  strip: readonly string[];
  /** Why these keywords. */
  why: string;
  match: RegExp;
}

/**
 * The texts llama.cpp's converter (`_errors` in json-schema-to-grammar.cpp) and its GBNF parser
 * produce, first match wins; the last entry covers any other grammar failure. Every entry names
 * the keywords at fault, so a retry changes what failed.
 */
export const LLAMACPP_SCHEMA_ERRORS: readonly LlamacppSchemaError[] = [
  { text: "Pattern must start with '^' and end with '$'", strip: ["pattern"], why: "the converter takes anchored patterns only", match: /pattern must start with '\^' and end with '\$'/i },
  {
    text: "parse: error parsing grammar: unknown escape at \\d…",
    strip: ["pattern"],
    why: "`\\d` `\\w` `\\s` in a pattern are copied verbatim into the grammar, which has no such escapes",
    match: /unknown escape at/i,
  },
  {
    text: "Unbalanced parentheses / square brackets / curly brackets",
    strip: ["pattern"],
    why: "the converter's own pattern parser failed",
    match: /unbalanced (?:parentheses|square brackets|curly brackets)/i,
  },
  {
    text: "Wrong number of values in curly brackets / Invalid number in curly brackets",
    strip: ["pattern"],
    why: "a pattern repetition the converter cannot read",
    match: /(?:wrong number of values|invalid number) in curly brackets/i,
  },
  {
    text: "Unsupported ref: … / Error resolving ref …",
    strip: ["$ref"],
    why: "refs outside `#/` or to missing definitions: sanitizing for llamacpp inlines local refs",
    match: /unsupported ref:|error resolving ref/i,
  },
  {
    text: "Unrecognized schema: …",
    strip: ["pattern", "format"],
    why: "a node the converter cannot read (an unknown `type`, a bare string schema): sanitizing for llamacpp rewrites those shapes; nothing in the text names a keyword that can go, so the two that put raw text into the grammar do",
    match: /unrecognized schema/i,
  },
  {
    text: "Rule … not known",
    strip: ["format"],
    why: "a built-in rule a `format` refers to is missing",
    match: /rule \S{1,200} not known/i,
  },
  {
    text: "error parsing grammar / failed to parse grammar / JSON schema conversion failed (any other text)",
    strip: ["pattern", "format"],
    why: "the keywords that put raw text into the grammar",
    match: /[\s\S]/,
  },
];

/** The entry of LLAMACPP_SCHEMA_ERRORS for an error text (the last one when no specific text matches). */
export function llamacppSchemaError(text: string): LlamacppSchemaError {
  return LLAMACPP_SCHEMA_ERRORS.find((entry) => entry.match.test(text)) ?? LLAMACPP_SCHEMA_ERRORS[LLAMACPP_SCHEMA_ERRORS.length - 1]!;
}

/**
 * What to strip for an error text: the keywords of every specific entry it contains (the
 * converter joins all its errors with newlines), else the catch-all's.
 */
export function llamacppStrip(text: string): string[] {
  const specific = LLAMACPP_SCHEMA_ERRORS.slice(0, -1).filter((entry) => entry.match.test(text));
  const entries = specific.length > 0 ? specific : [LLAMACPP_SCHEMA_ERRORS[LLAMACPP_SCHEMA_ERRORS.length - 1]!];
  return [...new Set(entries.flatMap((entry) => entry.strip))];
}

/** First match wins: history and schema texts, then transient conditions, then size, then status. */
const RULES: Rule[] = [
  // --- Anthropic Messages (also Vertex, Bedrock InvokeModel, OpenRouter pass-through)
  {
    name: "anthropic.tool_use_without_result",
    reason: "tool_result_missing",
    source: "anthropics/claude-code#1237, #5989; Kilo-Org/kilocode#5163",
    match: has(/`?tool_use`? ids were found without `?tool_result`? blocks immediately after/i),
    recovery: repair(MISSING),
    ids: /immediately after:\s*([^\n]*?)\.\s*Each/i,
  },
  {
    name: "anthropic.server_tool_result_orphan",
    reason: "server_tool_result_orphan",
    source: "anthropics/claude-code#64383",
    match: has(/unexpected `?tool_use_id`? found in `?\w+_tool_result`? blocks/i),
    recovery: repair(["orphan_server_result"]),
    ids: /_tool_result`? blocks:\s*([^\n]*?)\.\s*Each/i,
  },
  {
    name: "anthropic.tool_result_without_use",
    reason: "tool_result_orphan",
    source: "anthropics/claude-code#13460; router-for-me/CLIProxyAPI#497; tghamm/Anthropic.SDK#184",
    match: has(/unexpected `?tool_use_id`? found in `?tool_result`? blocks/i),
    recovery: repair(ORPHAN),
    ids: /tool_result`? blocks:\s*([^\n]*?)\.\s*Each/i,
  },
  {
    name: "anthropic.tool_result_not_first",
    reason: "tool_result_not_first",
    source: "Zoo-Code-Org/Zoo-Code#1705; QwenLM/qwen-code#8161",
    match: has(/did not find \d+ `?tool_result`? block\(s\) at the beginning of this message/i),
    recovery: repair(["result_not_leading", "result_not_adjacent"]),
  },
  {
    name: "anthropic.tool_use_ids_unique",
    reason: "tool_id_duplicate",
    source: "anthropics/claude-code#20901, #21317; anomalyco/opencode#1150",
    match: has(/`?tool_use`? ids must be unique/i),
    recovery: repair(["duplicate_call_id"]),
  },
  {
    name: "anthropic.tool_use_id_pattern",
    reason: "tool_id_invalid",
    source: "anomalyco/opencode#1279",
    match: has(/tool_use\.id: String should match pattern/i),
    recovery: repair(["invalid_call_id"], { ids: "anthropic" }),
  },
  {
    name: "anthropic.tool_use_input",
    reason: "tool_arguments_invalid",
    source: "anthropics/claude-code#6696; anthropics/anthropic-sdk-typescript#648; prism-php/prism#659",
    match: has(/tool_use\.input: Input should be a valid dictionary/i),
    recovery: repair(["invalid_call"]),
  },
  {
    name: "anthropic.thinking_not_allowed",
    reason: "thinking_not_allowed",
    source: "tailcallhq/forgecode#1853",
    match: has(/when thinking is disabled, an `?assistant`? message in the final position cannot contain `?thinking`?/i),
    recovery: repair(["thinking_not_allowed"], { thinking: "off" }),
  },
  {
    name: "anthropic.thinking_missing",
    reason: "thinking_missing",
    source: "anomalyco/opencode#3077; mastra-ai/mastra#7799; anthropics/claude-code#20691",
    match: has(/expected `?thinking`? or `?redacted_thinking`?, but found|must start with a thinking block|the first block must be `?thinking`? or `?redacted_thinking`?/i),
    recovery: repair(["missing_thinking", "thinking_not_first"], { thinking: "on" }),
  },
  {
    name: "anthropic.thinking_signature",
    reason: "thinking_signature_invalid",
    source: "Hermes error classifier (thinking_signature): 400 with thinking + signature / cannot be modified",
    match: (context) => /thinking/i.test(context.text) && /invalid `?signature`?|signature.*(invalid|verif)|cannot be modified|must remain as they were/i.test(context.text),
    recovery: { action: "repair_history", faults: [], policy: { stripReasoning: true } },
  },
  {
    name: "anthropic.empty_text",
    reason: "empty_content",
    source: "anthropics/claude-code#59812; anthropics/anthropic-sdk-python#461",
    match: has(/text content blocks must (be non-empty|contain non-whitespace text)|all messages must have non-empty content/i),
    recovery: repair(["empty_text", "empty_message"]),
  },
  // --- OpenAI Chat Completions and compatible servers
  {
    name: "openai.tool_calls_without_responses",
    reason: "tool_result_missing",
    source: "farhan0167/otto-m8#30; sdcb/chats#132; QwenLM/qwen-code#315 (DashScope)",
    match: has(/an assistant message with ['"]tool_calls['"] must be followed by tool messages responding to each ['"]tool_call_id['"]/i),
    recovery: repair(MISSING),
    ids: /did not have response messages:\s*([^\n]*?)\s*$/im,
  },
  {
    name: "openai.tool_message_without_call",
    reason: "tool_result_orphan",
    source: "openai/openai-go#43; run-llama/llama_index#10493; itmisx/deepx-code#94 (DeepSeek)",
    match: has(/messages with role ['"]tool['"] must be a response to a prece(?:e)?ding message with ['"]tool_calls['"]/i),
    recovery: repair(ORPHAN),
  },
  {
    name: "openai.tool_call_id_length",
    reason: "tool_id_invalid",
    source: "agno-agi/agno#5382; Portkey-AI/gateway#1062",
    match: (context) => /tool_calls\]?\[\d+\]\.id'?: string too long|expected a string with maximum length 40/i.test(context.text),
    recovery: repair(["invalid_call_id"], { ids: "openai" }),
  },
  {
    name: "mistral.tool_call_id_format",
    reason: "tool_id_invalid",
    source: "BibekBhusal0/zen-custom-js#7",
    match: has(/tool call id was .* but must be a-z, A-Z, 0-9, with a length of 9/i),
    recovery: repair(["invalid_call_id"], { ids: "mistral" }),
  },
  {
    name: "mistral.call_response_count",
    reason: "tool_result_missing",
    source: "mistralai/client-ts#106; mistralai/client-python#234",
    match: has(/not the same number of function calls and responses/i),
    recovery: repair(["missing_result", "orphan_result", "duplicate_result"]),
  },
  {
    name: "deepseek.reasoning_content_missing",
    reason: "reasoning_content_missing",
    source: "hotovo/aider-desk#529; earendil-works/pi#3636; tingly-dev/tingly-box#457 (Moonshot)",
    match: has(/missing `?reasoning_content`? field|`?reasoning_content`? in the thinking mode must be passed back|reasoning_content is missing in assistant tool call message/i),
    recovery: repair(["missing_reasoning_content"], { thinking: "on" }),
  },
  {
    name: "kimi.empty_content",
    reason: "empty_content",
    source: "schema-compat notes (Kimi: assistant message with tool_calls and empty content)",
    match: has(/text content is empty/i),
    recovery: repair(["empty_text"]),
  },
  // --- OpenAI Responses
  {
    name: "responses.no_tool_output",
    reason: "tool_result_missing",
    source: "lace-ai/gai#49; bytedance/trae-agent#358; Azure/azure-sdk-for-python#46092",
    match: has(/no tool output found for function call/i),
    recovery: repair(MISSING),
    ids: /function call ([^\s.]+(?:\.[^\s.]+)*)\.?/i,
  },
  {
    name: "responses.no_tool_call",
    reason: "tool_result_orphan",
    source: "continuedev/continue#10092; james-6-23/codex2api#414",
    match: has(/no tool call found for function call output with call_id/i),
    recovery: repair(ORPHAN),
    ids: /with call_id ([^\s]+?)\.?(?:\s|$)/i,
  },
  {
    name: "responses.reasoning_item",
    reason: "reasoning_item_missing",
    source: "cline/cline#12242; continuedev/continue#8933, #10018; TanStack/ai#1212",
    match: has(/was provided without its required 'reasoning' item|of type 'reasoning' was provided without its required following item/i),
    recovery: repair(["missing_reasoning_item", "orphan_reasoning"], { thinking: "on" }),
  },
  {
    name: "responses.item_id_prefix",
    reason: "item_id_invalid",
    source: "continuedev/continue#11785",
    match: has(/expected an id that begins with 'fc'/i),
    recovery: repair(["invalid_item_id"]),
  },
  // --- Gemini
  {
    name: "gemini.response_count",
    reason: "function_response_count",
    source: "microsoft/vscode#299295; google-gemini/gemini-cli#16784",
    match: has(/number of function response parts is equal to the number of function call parts/i),
    recovery: repair(["response_count_mismatch", "missing_result", "orphan_result", "duplicate_result"]),
  },
  {
    name: "gemini.turn_order",
    reason: "function_turn_order",
    source: "langchain-ai/langchain#27799; google-gemini/gemini-cli#26486, #11814",
    match: has(/function (?:response|call) turns? comes? immediately after/i),
    recovery: repair(["call_turn_order", "result_not_adjacent", "missing_result", "orphan_result"]),
  },
  {
    name: "gemini.thought_signature",
    reason: "thought_signature_missing",
    source: "langgenius/dify-official-plugins#2088; thClaws/thClaws#65; ai.google.dev thought-signatures",
    match: has(/missing a `?thought_signature`?/i),
    recovery: repair(["missing_thought_signature"], { thinking: "on" }),
  },
  {
    name: "gemini.empty_text",
    reason: "empty_content",
    source: "Vertex AI 400 'empty text parameter'",
    match: has(/empty text parameter|contents\.parts must not be empty|must include at least one parts field/i),
    recovery: repair(["empty_text", "empty_message"]),
  },
  // --- Bedrock Converse
  {
    name: "bedrock.too_many_results",
    reason: "tool_result_orphan",
    source: "pydantic/pydantic-ai#2327; evalstate/fast-agent#624",
    match: has(/number of toolResult blocks at messages\.\d+\.content exceeds the number of toolUse blocks of previous turn/i),
    recovery: repair(ORPHAN),
  },
  {
    name: "bedrock.expected_results",
    reason: "tool_result_missing",
    source: "schema-compat notes (Bedrock Converse pairing)",
    match: has(/expected toolResult blocks at messages\.\d+\.content for the following Ids/i),
    recovery: repair(MISSING),
    ids: /following Ids:\s*([^\n]*?)\.?\s*$/im,
  },
  {
    name: "bedrock.mixed_blocks",
    reason: "tool_result_mixed_content",
    source: "strands-agents/harness-sdk#1223; quarkiverse/quarkus-langchain4j#1983",
    match: has(/conversation blocks and tool (?:result|use) blocks cannot be provided in the same turn/i),
    recovery: { action: "fail" },
  },
  {
    name: "bedrock.empty_error_result",
    reason: "empty_content",
    source: "aws-samples/sample-multi-agent-orchestration-chat-on-agentcore#15",
    match: has(/toolResult cannot be empty when status value is error/i),
    recovery: repair(["empty_error_result"]),
  },
  {
    name: "bedrock.blank_text",
    reason: "empty_content",
    source: "aws-samples/bedrock-engineer#8",
    match: has(/the text field in the ContentBlock object at messages\.\d+\.content\.\d+ is blank|text in content block cannot be null or empty/i),
    recovery: repair(["empty_text", "empty_message"]),
  },
  {
    name: "bedrock.alternation",
    reason: "roles_not_alternating",
    source: "microsoft/semantic-kernel#10281; langchain-ai/langchain-aws#130",
    match: has(/a conversation must (?:alternate between user and assistant roles|start with a user message)/i),
    recovery: repair(["roles_not_alternating", "first_message_not_user"]),
  },
  {
    name: "bedrock.tool_use_id_pattern",
    reason: "tool_id_invalid",
    source: "AWS ToolUseBlock reference: toolUseId [a-zA-Z0-9_-]+, 1-64",
    match: has(/toolUseId'? failed to satisfy constraint/i),
    recovery: repair(["invalid_call_id"], { ids: "bedrock" }),
  },
  // --- Tool schemas
  {
    name: "llamacpp.grammar",
    reason: "schema_rejected",
    source: "llama.cpp common/json-schema-to-grammar.cpp and the GBNF parser; Kilo-Org/kilocode#12408; openclaw/openclaw#107430; ggml-org/llama.cpp#3081, #27580",
    // The tools path answers 400; the same text with another status (the response_format path's
    // 500) is not this recovery's to claim.
    match: (context) => context.status === 400 && LLAMACPP_GRAMMAR.test(context.text) && !/no user query found in messages/i.test(context.text),
    recovery: (context) => ({ action: "sanitize_schema", target: "llamacpp", strip: llamacppStrip(context.text) }),
  },
  {
    name: "xai.invalid_arguments",
    reason: "schema_rejected",
    source: "schema-compat notes (xAI grammar compile errors, Hermes #27197, #28490)",
    match: has(/invalid arguments passed to the model/i),
    recovery: { action: "sanitize_schema", target: "xai", strip: ["pattern", "format", "enum"] },
  },
  {
    name: "anthropic.schema",
    reason: "schema_rejected",
    source: "schema-compat notes (Anthropic input_schema)",
    match: has(/input_schema does not support oneOf, allOf, or anyOf at the top level|property keys should match pattern|input_schema/i),
    recovery: { action: "sanitize_schema", target: "anthropic" },
  },
  {
    name: "openai.schema",
    reason: "schema_rejected",
    source: "schema-compat notes (OpenAI strict: Invalid schema for function)",
    match: has(/invalid schema for (?:function|response_format)|'additionalProperties' is required to be supplied and to be false/i),
    recovery: { action: "sanitize_schema", target: "openai-strict" },
  },
  {
    name: "gemini.schema",
    reason: "schema_rejected",
    source: "schema-compat notes (Gemini parameters allow-list)",
    match: has(/function_declarations\[\d+\]\.parameters|unknown name "[^"]+" at 'tools\[\d+\]\.function_declarations/i),
    recovery: { action: "sanitize_schema", target: "gemini" },
  },
  {
    name: "fireworks.schema",
    reason: "schema_rejected",
    source: "schema-compat notes (Fireworks: default beside $ref)",
    match: has(/json schema not supported/i),
    recovery: { action: "sanitize_schema", target: "fireworks" },
  },
  {
    name: "kimi.schema",
    reason: "schema_rejected",
    source: "schema-compat notes (Moonshot flavored JSON schema)",
    match: has(/type is not defined|when using anyOf, type should be defined in anyOf items|references must start with #\/\$defs|conflicting keywords found after \$ref expansion/i),
    recovery: { action: "sanitize_schema", target: "kimi" },
  },
  {
    name: "groq.tool_use_failed",
    reason: "tool_call_rejected",
    source: "pydantic/pydantic-ai test_tool_use_failed_error_streaming; vercel/ai#6916",
    match: (context) => code("tool_use_failed")(context) || /tool call validation failed/i.test(context.text),
    recovery: { action: "retry_after", seconds: null },
  },
  // --- Account, quota and transient conditions
  {
    name: "billing",
    reason: "billing",
    source: "OpenAI insufficient_quota; Anthropic credit balance",
    match: (context) =>
      code("insufficient_quota", "billing_error")(context) ||
      (/credit balance is too low|insufficient[_ ]quota|exceeded your current quota, please check your plan and billing/i.test(context.text) && !code("resource_exhausted")(context)),
    recovery: { action: "fail" },
  },
  {
    name: "rate_limit",
    reason: "rate_limit",
    source: "OpenAI 'Rate limit reached for …'; Anthropic rate_limit_error; Gemini RESOURCE_EXHAUSTED; Bedrock ThrottlingException",
    match: (context) =>
      (context.status === 429 && !/overloaded/i.test(context.text)) ||
      code("rate_limit_error", "rate_limit_exceeded", "resource_exhausted", "throttlingexception", "too_many_requests")(context) ||
      /rate limit (?:reached|exceeded)|too many (?:requests|tokens), please wait|resource has been exhausted|quota exceeded/i.test(context.text),
    recovery: { action: "retry_after", seconds: null },
  },
  {
    name: "overloaded",
    reason: "overloaded",
    source: "Anthropic 529 overloaded_error; Gemini 503 UNAVAILABLE; Bedrock ServiceUnavailableException",
    match: (context) =>
      context.status === 529 ||
      code("overloaded_error", "unavailable", "serviceunavailableexception", "modelnotreadyexception")(context) ||
      /\boverloaded\b|temporarily unavailable/i.test(context.text),
    recovery: { action: "retry_after", seconds: null },
  },
  // --- Size
  {
    name: "output_limit",
    reason: "output_limit_invalid",
    source: "Anthropic 'max_tokens: N > M, which is the maximum allowed number of output tokens'",
    match: has(/maximum allowed number of output tokens|max_tokens.*(?:too large|exceeds the model limit)|maximum tokens you requested exceeds the model limit/i),
    recovery: { action: "fail" },
  },
  {
    name: "context_overflow",
    reason: "context_overflow",
    source: "Anthropic 'prompt is too long'; OpenAI context_length_exceeded; Gemini 'input token count … exceeds'; Bedrock 'Input is too long'",
    match: (context) =>
      code("context_length_exceeded", "request_too_large")(context) ||
      context.status === 413 ||
      /prompt is too long|maximum context length|exceeds? the context window|context limit|input token count \(\d+\) exceeds|input is too long|too many (?:input )?tokens|exceeds the available context size|context size has been exceeded|reduce the length of the messages/i.test(context.text),
    recovery: { action: "reduce_context" },
  },
  // --- Credentials and access
  {
    name: "auth",
    reason: "auth",
    source: "Anthropic authentication_error; OpenAI invalid_api_key; Gemini 'API key not valid'; AWS UnrecognizedClientException",
    match: (context) =>
      context.status === 401 ||
      context.status === 403 ||
      code("authentication_error", "permission_error", "invalid_api_key", "unauthenticated", "permission_denied", "unrecognizedclientexception", "accessdeniedexception")(context) ||
      /invalid x-api-key|incorrect api key|api key not valid|invalid authentication|security token included in the request is invalid|do not have an active grok subscription/i.test(context.text),
    recovery: { action: "fail" },
  },
  {
    name: "content_policy",
    reason: "content_policy",
    source: "Hermes classifier (content-policy phrases)",
    match: (context) => code("content_filter", "content_policy_violation")(context) || /violates our usage policies|flagged by our safety|responsibleaipolicyviolation/i.test(context.text),
    recovery: { action: "fail" },
  },
  {
    name: "model_not_found",
    reason: "model_not_found",
    source: "OpenAI model_not_found; Anthropic not_found_error",
    match: (context) => code("model_not_found", "not_found_error", "resourcenotfoundexception")(context) || (context.status === 404 && /model/i.test(context.text)),
    recovery: { action: "fail" },
  },
];

function byStatus(status: number | null): Pick<Rule, "name" | "reason" | "recovery"> {
  if (status === 408 || status === 504) return { name: "status.timeout", reason: "timeout", recovery: { action: "retry_after", seconds: null } };
  if (status !== null && status >= 500) return { name: "status.server", reason: "server_error", recovery: { action: "retry_after", seconds: null } };
  if (status !== null && status >= 400) return { name: "status.client", reason: "invalid_request", recovery: { action: "fail" } };
  return { name: "unknown", reason: "unknown", recovery: { action: "fail" } };
}

function ids(text: string, pattern: RegExp | undefined): string[] {
  const match = pattern?.exec(text);
  if (!match?.[1]) return [];
  return match[1]
    .split(/[,\s]+/)
    .map((id) => id.replace(/^[`'"]+|[`'".]+$/g, ""))
    .filter((id) => id !== "");
}

function messageIndex(text: string): number | null {
  const match = /messages?(?:\.|\[|\.\[)(\d+)\]?|message (?:at )?(?:index|position) (\d+)|\binput\[(\d+)\]/i.exec(text);
  if (!match) return null;
  return Number(match[1] ?? match[2] ?? match[3]);
}

/**
 * Classifies an error response. `body` may be the parsed JSON, the raw text, an SDK error object,
 * or null; `status` may be null for errors that arrived inside a stream.
 */
export function classifyProviderError(status: number | null | undefined, body: unknown, options: ClassifyOptions = {}): ProviderErrorClassification {
  const extracted = extract(body);
  const resolved = status ?? extracted.status;
  const text = extracted.texts.join("\n");
  const context: Context = { text, codes: extracted.codes, status: resolved };
  const rule = RULES.find((candidate) => candidate.match(context));
  const chosen = rule ?? byStatus(resolved);
  let recovery = typeof chosen.recovery === "function" ? chosen.recovery(context) : chosen.recovery;
  if (recovery.action === "retry_after") recovery = { action: "retry_after", seconds: retryDelay(text, extracted, options) };
  return {
    reason: chosen.reason,
    recovery,
    retryable: recovery.action !== "fail",
    status: resolved,
    message: text,
    messageIndex: messageIndex(text) ?? messageIndex(extracted.params.join("\n")),
    ids: ids(text, rule?.ids),
    rule: chosen.name,
  };
}

/** Every rule with its reason and source, for documentation and tests. */
export function providerErrorRules(): Array<{ name: string; reason: ProviderErrorReason; source: string }> {
  return RULES.map(({ name, reason, source }) => ({ name, reason, source }));
}

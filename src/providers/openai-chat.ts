import { isPlaceholderId, type TurnBuilder, type TurnEnd } from "../assemble/turn.js";
import type { ToolCallAssembler } from "../assemble/tool-call.js";
import { IncrementalJsonParser } from "../json/incremental.js";
import { firstNonSpace } from "../json/whitespace.js";
import { resolveLimits } from "../limits.js";
import type { ContentBlock, DecoderOptions, Diagnostic, FinishReason, ProviderEvent, TruncationCause, Usage } from "../types.js";
import type { ProviderCodec } from "./codec.js";
import { afterEndReporter } from "./after-end.js";
import { isPlainObject } from "../json/shape.js";
import { hashId } from "../util/hash.js";
import { describeNonJson, numberField, stringField, sumOf, usageOf } from "./fields.js";
import type { DiagnosticCode } from "../diagnostics/codes.js";

/**
 * OpenAI Chat Completions stream decoder, hardened for the OpenAI-compatible servers people run
 * (vLLM, SGLang, llama.cpp, LM Studio, Ollama /v1, Gemini's compat endpoint, DeepSeek, Qwen, Groq,
 * xAI, Mistral, OpenRouter, LiteLLM and other relays).
 *
 * Call identity is `(choice, index, id)`:
 * - a fragment whose non-empty `id` is already known continues that call, whatever its index;
 * - a new non-empty id at an index in use starts a new call (Ollama and relays send every parallel
 *   call at index 0), and the call it replaces is finalized there and then: nothing can reach it;
 * - without an index the id decides, then the order of appearance: the fragment continues the last
 *   call of its choice unless it names a different tool after that call's arguments were complete;
 * - `""` ids and names never override a known value and never open a call; a name repeated on
 *   every chunk is set once, not concatenated.
 *
 * Calls without an id are opened once an id or their first argument text arrives (or at the end),
 * with a minted id `call_tw_<hash of response id, name, arguments at open, position>`: the same
 * stream always gives the same ids, and the response id keeps them apart across turns. For the
 * servers that omit ids (Ollama, Gemini compat, SiliconFlow) the arguments at open are the whole
 * arguments, because they send each call in one chunk.
 *
 * Chat has no per-call end marker: calls are finalized at `[DONE]`, or when the stream ends after
 * a `finish_reason`. A `finish_reason` seen on every chunk (some proxies) therefore never cuts a
 * call short. A stream with neither is incomplete and its calls are truncated.
 */

const FINISH_REASONS: Record<string, FinishReason> = {
  tool_calls: "tool_calls",
  function_call: "tool_calls",
  stop: "stop",
  eos: "stop",
  end_turn: "stop",
  stop_sequence: "stop",
  length: "length",
  max_tokens: "length",
  content_filter: "content_filter",
  error: "error",
};

/**
 * The keys of a `tool_calls[]` entry the decoder interprets; any other key is kept in
 * providerFields. A comparison chain: this runs per fragment.
 */
function isEntryKey(key: string): boolean {
  return key === "index" || key === "function" || key === "id" || key === "type" || key === "custom";
}

type TextBlock = Extract<ContentBlock, { type: "text" }>;
type ReasoningBlock = Extract<ContentBlock, { type: "reasoning" }>;
type OpaqueBlock = Extract<ContentBlock, { type: "opaque" }>;

interface CallState {
  choice: number;
  wireIndex: number | null;
  /** The id as the provider sent it; null while none arrived (the call then carries a minted id). */
  providerId: string | null;
  name: string;
  /** Null while the call is pending: seen, but without an id or argument text yet. */
  call: ToolCallAssembler | null;
  /** Order of first appearance in the turn: the position used when minting an id. */
  position: number;
  /** Characters of argument text appended so far (read without joining the assembler's buffer). */
  argumentChars: number;
  /** Custom (free-text) tool: the input is wrapped as `{"input": "<text>"}` while it streams. */
  custom: boolean;
  providerFields: Record<string, unknown>;
  /** Event sequence numbers, for deciding which call a `length` stop cut off. */
  seenAt: number;
  lastFragmentAt: number;
  ended: boolean;
  /** Diagnostic codes already reported for this call (each is reported once per call). */
  reported: Set<string>;
  /**
   * The literal concatenation of the fragments, tracked from the first fragment taken as a resend
   * for as long as it stays a valid JSON prefix: a fragment that repeats the text so far can also
   * be ordinary text (`{"` after `{"` in `{"{":0}`), and only later fragments tell which.
   */
  literal: LiteralReading | null;
}

interface LiteralReading {
  parser: IncrementalJsonParser;
  parts: string[];
  chars: number;
}

interface ChoiceState {
  index: number;
  byIndex: Map<number, CallState>;
  byId: Map<string, CallState>;
  last: CallState | null;
  legacy: CallState | null;
  /** The block the next text or reasoning delta extends; reset when a call opens in between. */
  current: { kind: "text"; block: TextBlock } | { kind: "reasoning"; block: ReasoningBlock } | null;
  refusal: OpaqueBlock | null;
  reasoningDetails: OpaqueBlock | null;
  finishRaw: string | null;
}

export function openaiChatCodec(turn: TurnBuilder, options: DecoderOptions = {}): ProviderCodec {
  const maxArgumentChars = resolveLimits(options.limits).maxArgumentChars;
  const choices = new Map<number, ChoiceState>();
  const calls: CallState[] = [];
  const reportedOnce = new Set<string>();
  let primaryChoice: number | null = null;
  let responseId: string | null = null;
  let started = false;
  let done = false;
  let errored = false;
  let finalized = false;
  let seq = 0;
  let lastActivityAt = 0;
  let lastFinishAt = -1;
  /** Content arrived after a finish_reason: this server's finish reasons are no end markers. */
  let finishNotFinal = false;

  const diag = (diagnostic: Diagnostic): void => turn.diagnostic(diagnostic);
  const ignoreAfterEnd = afterEndReporter(diag);
  const once = (code: DiagnosticCode, diagnostic: Omit<Diagnostic, "code">): void => {
    if (reportedOnce.has(code)) return;
    reportedOnce.add(code);
    diag({ code, ...diagnostic });
  };
  const callDiag = (state: CallState, code: DiagnosticCode, severity: Diagnostic["severity"], message: string, data?: unknown): void => {
    if (state.reported.has(code)) return;
    state.reported.add(code);
    diag({
      code,
      severity,
      message,
      ...(state.call ? { callIndex: state.call.index } : {}),
      ...(state.wireIndex !== null ? { providerIndex: state.wireIndex } : {}),
      ...(data !== undefined ? { data } : {}),
    });
  };

  /** The choice of the previous chunk: nearly every stream has one, so most chunks skip the map. */
  let lastChoice: ChoiceState | null = null;
  const choiceState = (index: number): ChoiceState => {
    if (lastChoice !== null && lastChoice.index === index) return lastChoice;
    let choice = choices.get(index);
    if (!choice) {
      choice = { index, byIndex: new Map(), byId: new Map(), last: null, legacy: null, current: null, refusal: null, reasoningDetails: null, finishRaw: null };
      choices.set(index, choice);
      if (primaryChoice === null) primaryChoice = index;
      else
        once("multiple_choices", {
          severity: "warning",
          message: `The stream carries several choices (n > 1); choice ${index} was decoded into the same turn as choice ${primaryChoice}, and the finish reason is taken from choice ${primaryChoice}.`,
        });
    }
    lastChoice = choice;
    return choice;
  };

  // ---- text and reasoning -------------------------------------------------------------------

  const appendText = (choice: ChoiceState, text: string): void => {
    if (text === "") return;
    if (choice.current?.kind !== "text") choice.current = { kind: "text", block: turn.openBlock<TextBlock>({ type: "text", text: "", providerIndex: choice.index }) };
    turn.appendText(choice.current.block, text);
    lastActivityAt = seq;
  };

  const appendReasoning = (choice: ChoiceState, text: string): void => {
    if (text === "") return;
    if (choice.current?.kind !== "reasoning") choice.current = { kind: "reasoning", block: turn.openBlock<ReasoningBlock>({ type: "reasoning", text: "", providerIndex: choice.index }) };
    turn.appendReasoning(choice.current.block, text);
    lastActivityAt = seq;
  };

  const onReasoning = (choice: ChoiceState, delta: Record<string, unknown>): void => {
    if (delta.reasoning_content === undefined && delta.reasoning === undefined && delta.reasoning_details === undefined) return;
    const content = stringField(delta, "reasoning_content");
    const reasoning = stringField(delta, "reasoning");
    if (content && reasoning && content !== reasoning) {
      once("reasoning_fields_differ", {
        severity: "warning",
        message: "A delta carries both reasoning_content and reasoning with different text; reasoning_content was kept.",
        data: { reasoning },
      });
    }
    const details = Array.isArray(delta.reasoning_details) ? delta.reasoning_details : [];
    let text = content || reasoning || "";
    if (text === "") {
      // OpenRouter sometimes sends only reasoning_details; its text entries are the reasoning.
      for (const detail of details) if (isPlainObject(detail) && detail.type === "reasoning.text") text += stringField(detail, "text") ?? "";
    }
    appendReasoning(choice, text);
    // Signatures and encrypted reasoning must go back verbatim; plain text entries repeat `reasoning`.
    const opaque = details.filter((detail) => isPlainObject(detail) && (detail.type !== "reasoning.text" || (typeof detail.signature === "string" && detail.signature !== "")));
    if (opaque.length > 0) {
      if (!choice.reasoningDetails) {
        choice.reasoningDetails = turn.openBlock<OpaqueBlock>({ type: "opaque", blockType: "reasoning_details", value: [], providerIndex: choice.index });
        choice.current = null;
      }
      (choice.reasoningDetails.value as unknown[]).push(...opaque);
    }
  };

  const onContent = (choice: ChoiceState, content: unknown): void => {
    if (typeof content === "string") {
      appendText(choice, content);
      return;
    }
    if (!Array.isArray(content)) {
      if (content !== null && content !== undefined) diag({ code: "content_not_text", severity: "warning", message: "delta.content is neither a string nor a list of parts; it was ignored.", data: content });
      return;
    }
    // Mistral-style content parts: text, and thinking whose own parts hold the reasoning text.
    for (const part of content) {
      if (!isPlainObject(part)) continue;
      if (part.type === "text") appendText(choice, stringField(part, "text") ?? "");
      else if (part.type === "thinking") {
        const inner = Array.isArray(part.thinking) ? part.thinking : [part];
        for (const piece of inner) appendReasoning(choice, typeof piece === "string" ? piece : (stringField(piece, "text") ?? stringField(piece, "thinking") ?? ""));
      } else diag({ code: "content_part_unknown", severity: "info", message: `A content part of type '${String(part.type)}' is not interpreted; it was kept in this diagnostic.`, data: part });
    }
  };

  const onRefusal = (choice: ChoiceState, text: string): void => {
    if (text === "") return;
    if (!choice.refusal) {
      choice.refusal = turn.openBlock<OpaqueBlock>({ type: "opaque", blockType: "refusal", value: "", providerIndex: choice.index });
      choice.current = null;
      diag({ code: "refusal", severity: "warning", message: "The model refused (delta.refusal); the refusal text is kept in an opaque 'refusal' block, not in text." });
    }
    choice.refusal.value = `${String(choice.refusal.value)}${text}`;
    lastActivityAt = seq;
  };

  // ---- tool calls ---------------------------------------------------------------------------

  const argumentsComplete = (state: CallState): boolean => {
    const text = state.call?.argumentText ?? "";
    if (text.trim() === "") return true;
    if (!/\}\s*$/.test(text.slice(-64))) return false;
    try {
      return isPlainObject(JSON.parse(text));
    } catch {
      return false;
    }
  };

  const newCall = (choice: ChoiceState, wireIndex: number | null, providerId: string | null): CallState => {
    const state: CallState = {
      choice: choice.index,
      wireIndex,
      providerId,
      name: "",
      call: null,
      position: calls.length,
      argumentChars: 0,
      custom: false,
      providerFields: choice.index !== 0 ? { choice: choice.index } : {},
      seenAt: seq,
      lastFragmentAt: seq,
      ended: false,
      reported: new Set(),
      literal: null,
    };
    calls.push(state);
    if (wireIndex !== null) choice.byIndex.set(wireIndex, state);
    if (providerId !== null) choice.byId.set(providerId, state);
    choice.last = state;
    lastActivityAt = seq;
    return state;
  };

  const openCall = (state: CallState, argumentsAtOpen: string): ToolCallAssembler => {
    if (state.call) return state.call;
    let id = state.providerId;
    if (id === null) {
      id = `call_tw_${hashId([responseId ?? "", state.name, argumentsAtOpen, String(state.position)].join("\u0000"))}`;
    }
    const call = turn.calls.open({
      id,
      idMinted: state.providerId === null,
      name: state.name,
      kind: "client",
      providerFields: state.providerFields,
      ...(state.wireIndex !== null ? { providerIndex: state.wireIndex } : {}),
    });
    state.call = call;
    const choice = choices.get(state.choice);
    if (choice) choice.current = null;
    if (state.providerId === null) {
      callDiag(state, "call_id_minted", "info", `The call to \`${state.name || "(unnamed)"}\` has no id; the deterministic id ${id} was minted (hash of response id, name, arguments at open, position).`);
    }
    if (state.custom) turn.calls.appendArguments(call, '{"input":"');
    return call;
  };

  /** Finalizes a call; custom tool input gets its closing quote first, so that it parses. */
  const endCall = (state: CallState, complete: boolean, truncationCause?: TruncationCause): void => {
    if (state.ended) return;
    const call = openCall(state, "");
    state.ended = true;
    if (complete && state.custom) turn.calls.appendArguments(call, '"}');
    if (complete && state.literal) revertToLiteral(state, call, state.literal);
    if (!state.name) callDiag(state, "call_name_missing", "warning", `Call ${call.index} never received a function name.`);
    turn.calls.end(call, { complete, emptyMeansNoArguments: true, ...(truncationCause ? { truncationCause } : {}) });
  };

  const feedArguments = (state: CallState, text: string): void => {
    const call = openCall(state, text);
    state.lastFragmentAt = seq;
    lastActivityAt = seq;
    if (state.custom) {
      // Free text becomes the content of a JSON string: escaping is per character, so it can be done per fragment.
      turn.calls.appendArguments(call, JSON.stringify(text).slice(1, -1));
      return;
    }
    // A fragment that starts with everything received so far is a resend (cumulative streams, vLLM's
    // final flush, relays duplicating chunks): appending it whole can never give valid JSON once
    // the buffer opened an object. Only its new part is appended, so the delta events and the
    // preview stay those of an ordinary stream. The buffer is only read when the fragment is at
    // least as long, so the check costs time proportional to the fragment.
    if (state.literal) followLiteral(state, text);
    if (state.argumentChars > 0 && text.length >= state.argumentChars && !turn.calls.isEnded(call)) {
      const buffer = call.argumentText;
      if (firstNonSpace(buffer) === "{" && text.startsWith(buffer)) {
        if (!state.literal) startLiteral(state, buffer, text);
        if (text.length === buffer.length) {
          call.recordRepair("collapsed_duplicate");
          diag({
            code: "arguments_repeated",
            severity: "info",
            message: `Call ${call.index} received its whole argument text again in one fragment (a final flush or a duplicated chunk); it was counted once.`,
            callIndex: call.index,
          });
          return;
        }
        call.recordRepair("cumulative_resend");
        callDiag(state, "arguments_cumulative", "info", `Call ${call.index} receives the whole argument text so far in each fragment (cumulative stream); only the new part of each fragment was appended.`);
        text = text.slice(buffer.length);
      }
    }
    state.argumentChars += text.length;
    turn.calls.appendArguments(call, text);
  };

  // The literal reading costs a parse of each fragment while it lives; for a real resend it dies
  // within the first repeated fragment (`{"a` then `{"a":1` reads `{"a{"a":1`, an error at once).
  const startLiteral = (state: CallState, buffer: string, fragment: string): void => {
    const parser = new IncrementalJsonParser({ maxDepth: 1 });
    parser.push(buffer);
    const literal: LiteralReading = { parser, parts: [buffer], chars: buffer.length };
    state.literal = literal;
    followLiteral(state, fragment);
  };

  const followLiteral = (state: CallState, fragment: string): void => {
    const literal = state.literal as LiteralReading;
    literal.parser.push(fragment);
    literal.parts.push(fragment);
    literal.chars += fragment.length;
    if (literal.parser.state === "error" || literal.chars > maxArgumentChars) state.literal = null;
  };

  /** Rule 2 of docs/design.md: the fragments as sent, when they form one object, win over a resend reading. */
  const revertToLiteral = (state: CallState, call: ToolCallAssembler, literal: LiteralReading): void => {
    state.literal = null;
    literal.parser.flush();
    if (literal.parser.state !== "complete" || !isPlainObject(literal.parser.value)) return;
    call.revertResend(literal.parts.join(""));
    diag({
      code: "arguments_resend_reverted",
      severity: "warning",
      message: `A fragment of call ${call.index} repeated the argument text so far and was first taken as a resend, but the fragments as sent form one JSON object, so they were used; the live deltas and previews showed the resend reading.`,
      callIndex: call.index,
    });
  };

  /** Which call a `tool_calls[]` entry belongs to, by (choice, index, id), creating it when new. */
  const resolveEntry = (choice: ChoiceState, wireIndex: number | null, id: string | null, name: string | null): CallState => {
    if (id !== null) {
      // The call open at this index with this id, else the latest call sent with it.
      const atIndex = wireIndex !== null ? choice.byIndex.get(wireIndex) : undefined;
      const known = atIndex && !atIndex.ended && atIndex.providerId === id ? atIndex : choice.byId.get(id);
      if (known) {
        const movedIndex = wireIndex !== null && known.wireIndex !== null && wireIndex !== known.wireIndex;
        // A header (it names the tool) that reuses a known id is a second call, not a continuation,
        // when it moved to another index and names another tool or follows finished arguments, or
        // when it names another tool after finished arguments at the same index. The turn then
        // gives the second call an id of its own (call_id_duplicate).
        const header = name !== null && known.name !== "";
        const secondCall =
          header &&
          (known.ended ||
            (movedIndex ? name !== known.name || argumentsComplete(known) : name !== known.name && known.argumentChars > 0 && argumentsComplete(known)));
        if (secondCall) {
          diag({
            code: "call_id_reused",
            severity: "warning",
            message: `The id ${id} of the call to \`${known.name}\` (index ${String(known.wireIndex)}) arrived again at index ${String(wireIndex)} naming \`${name}\`; it was decoded as a second call.`,
            ...(wireIndex !== null ? { providerIndex: wireIndex } : {}),
          });
          if (!movedIndex && !known.ended) endCall(known, true);
          return newCall(choice, wireIndex, id);
        }
        if (movedIndex) {
          callDiag(known, "call_index_changed", "warning", `A fragment for call id ${id} arrived at index ${wireIndex}, but the call opened at index ${known.wireIndex}; it was kept with its id.`);
        }
        return known;
      }
    }
    if (wireIndex === null) {
      once("tool_call_index_missing", {
        severity: "warning",
        message: "Tool-call fragments arrive without an index; they were matched by id, else to the previous call of the choice.",
      });
      if (id !== null) return newCall(choice, null, id);
      const last = choice.last;
      if (!last || last.ended || (name !== null && last.name !== "" && name !== last.name && argumentsComplete(last))) return newCall(choice, null, null);
      return last;
    }
    const existing = choice.byIndex.get(wireIndex);
    if (!existing || existing.ended) {
      if (existing?.ended) {
        diag({ code: "index_reused_after_end", severity: "warning", message: `A fragment at index ${wireIndex} arrived after that call was finalized; it started a new call.`, providerIndex: wireIndex });
      }
      return newCall(choice, wireIndex, id);
    }
    if (id !== null && existing.providerId !== null && id !== existing.providerId) {
      // Ollama /v1 and relays put every parallel call at index 0 and tell them apart only by id.
      diag({
        code: "parallel_calls_share_index",
        severity: "info",
        message: `A new call id ${id} arrived at index ${wireIndex}, which call ${existing.providerId} already used; it was decoded as a new call and the previous one finalized.`,
        providerIndex: wireIndex,
      });
      endCall(existing, true);
      return newCall(choice, wireIndex, id);
    }
    if (id === null && name !== null && existing.name !== "" && name !== existing.name && argumentsComplete(existing)) {
      diag({
        code: "parallel_calls_share_index",
        severity: "info",
        message: `A call to \`${name}\` arrived at index ${wireIndex} after the call to \`${existing.name}\` there was complete; it was decoded as a new call.`,
        providerIndex: wireIndex,
      });
      endCall(existing, true);
      return newCall(choice, wireIndex, null);
    }
    return existing;
  };

  const onToolCallEntry = (choice: ChoiceState, entry: unknown, legacy: boolean): void => {
    if (!isPlainObject(entry)) {
      diag({ code: "tool_call_not_object", severity: "warning", message: "A tool_calls entry is not an object; it was ignored.", data: entry });
      return;
    }
    // Direct reads rather than stringField (this runs once per argument fragment), with the same rules.
    const rawType = entry.type;
    const type = typeof rawType === "string" ? rawType : null;
    const custom = !legacy && (type === "custom" || isPlainObject(entry.custom));
    const body = legacy ? entry : custom ? entry.custom : entry.function;
    const wireIndex = legacy ? null : nonNegativeInteger(entry.index);
    const rawId = entry.id;
    const id = legacy || typeof rawId !== "string" || isPlaceholderId(rawId) ? null : rawId;
    if (!legacy && id === null && typeof rawId === "string" && rawId !== "") {
      once("call_id_placeholder", {
        severity: "info",
        message: `Tool-call fragments carry the placeholder id ${JSON.stringify(rawId)} (a server that serializes a missing id); it was read as no id.`,
      });
    }
    const rawName = isPlainObject(body) ? body.name : undefined;
    const name = typeof rawName === "string" && rawName !== "" ? rawName : null;

    let state: CallState;
    if (legacy) {
      state = choice.legacy && !choice.legacy.ended ? choice.legacy : newCall(choice, null, null);
      if (!choice.legacy) {
        state.providerFields.legacyFunctionCall = true;
        diag({ code: "legacy_function_call", severity: "info", message: "The stream uses the deprecated delta.function_call; it was decoded as one tool call." });
      }
      choice.legacy = state;
    } else {
      state = resolveEntry(choice, wireIndex, id, name);
    }
    lastActivityAt = seq;

    if (custom && !state.custom) {
      if (state.call) callDiag(state, "custom_after_open", "warning", "A custom tool fragment arrived for a call that already streamed function arguments; it was treated as function arguments.");
      else {
        state.custom = true;
        state.providerFields.customToolInput = true;
      }
    }
    if (type !== null && type !== "function" && type !== "custom") {
      callDiag(state, "tool_call_type_unknown", "warning", `A tool call has type '${type}'; it was decoded as a function call.`);
    }
    if (name !== null) {
      if (state.name === "") {
        state.name = name;
        if (state.call) {
          state.call.name = name;
          callDiag(state, "call_name_late", "warning", `The name \`${name}\` arrived after call ${state.call.index} had started; tool_call_start carried no name.`);
        }
      } else if (name !== state.name) {
        callDiag(state, "call_name_changed", "warning", `Call \`${state.name}\` later received the name \`${name}\`; the first name was kept.`, { name });
      }
    }
    if (id !== null && state.providerId === null) {
      state.providerId = id;
      choice.byId.set(id, state);
      if (state.call && !state.ended) {
        callDiag(state, "call_id_late", "warning", `The id ${id} arrived after call ${state.call.index} had started with the minted id ${state.call.id}; the provider's id was adopted.`);
        turn.calls.adoptProviderId(state.call, id);
      }
    }
    // for…in rather than Object.keys: no array per fragment on the hot path (JSON objects have no inherited keys).
    for (const key in entry) {
      if (legacy || isEntryKey(key)) continue;
      if (state.ended) {
        callDiag(state, "fields_after_end", "warning", `Field '${key}' arrived after the call was finalized; it was ignored.`, { [key]: entry[key] });
        continue;
      }
      // defineProperty: a "__proto__" key from the wire must stay plain data.
      Object.defineProperty(state.providerFields, key, { value: entry[key], enumerable: true, writable: true, configurable: true });
      // Gemini's compat endpoint: the thought signature must be replayed with the call.
      const signature = isPlainObject(entry[key]) ? stringField((entry[key] as Record<string, unknown>).google, "thought_signature") : null;
      if (key === "extra_content" && signature) state.providerFields.thoughtSignature = signature;
    }

    const raw = isPlainObject(body) ? (custom ? body.input : body.arguments) : undefined;
    let text: string | null = null;
    if (typeof raw === "string") text = raw;
    else if (raw === null) {
      callDiag(state, "arguments_null", "info", "A fragment carries `arguments: null`; it was treated as no argument text.");
    } else if (raw !== undefined) {
      if (typeof raw === "object") {
        text = JSON.stringify(raw);
        callDiag(state, "arguments_object", "info", "The arguments arrived as a JSON object rather than a string; the object was serialized on arrival.");
      } else {
        callDiag(state, "arguments_not_string", "warning", `The arguments arrived as ${typeof raw}; they were ignored.`, raw);
      }
    }
    if (text !== null && text !== "") feedArguments(state, text);
    else if (state.call === null && state.providerId !== null) openCall(state, "");
  };

  // ---- chunks -------------------------------------------------------------------------------

  const setUsage = (raw: unknown): void => {
    if (isPlainObject(raw)) turn.setUsage(normalizeChatUsage(raw));
  };

  const onChoice = (raw: unknown, position: number): void => {
    if (!isPlainObject(raw)) {
      diag({ code: "choice_not_object", severity: "warning", message: "A choices entry is not an object; it was ignored.", data: raw });
      return;
    }
    let index = nonNegativeInteger(raw.index);
    if (index === null) {
      index = position;
      once("choice_index_missing", { severity: "info", message: "A choice has no index; its position in the choices list was used." });
    }
    const choice = choiceState(index);
    // Moonshot puts usage inside the choice.
    setUsage(raw.usage);
    let delta = isPlainObject(raw.delta) ? raw.delta : null;
    if (!delta && isPlainObject(raw.message)) {
      delta = raw.message;
      once("choice_message_in_stream", { severity: "info", message: "A streamed choice carries `message` instead of `delta`; it was read as a delta." });
    }
    if (delta) {
      onReasoning(choice, delta);
      if (delta.content !== undefined) onContent(choice, delta.content);
      if (typeof delta.refusal === "string") onRefusal(choice, delta.refusal);
      const toolCalls = delta.tool_calls;
      if (Array.isArray(toolCalls)) for (const entry of toolCalls) onToolCallEntry(choice, entry, false);
      else if (toolCalls !== undefined && toolCalls !== null) diag({ code: "tool_calls_not_list", severity: "warning", message: "delta.tool_calls is not a list; it was ignored.", data: toolCalls });
      if (isPlainObject(delta.function_call)) onToolCallEntry(choice, delta.function_call, true);
    }
    if (lastFinishAt >= 0 && lastActivityAt > lastFinishAt) finishNotFinal = true;
    const rawFinish = raw.finish_reason;
    const finish = typeof rawFinish === "string" && rawFinish !== "" ? rawFinish : null;
    if (finish !== null) {
      choice.finishRaw = finish;
      lastFinishAt = seq;
      if (index === primaryChoice) turn.setFinish(finish, FINISH_REASONS[finish] ?? "other");
    }
  };

  const onError = (payload: Record<string, unknown> | string): void => {
    const error = typeof payload === "string" ? payload : (payload.error ?? payload);
    const message =
      typeof error === "string" ? error : (stringField(error, "message") ?? "The provider reported an error mid-stream.");
    const type = typeof error === "string" ? "error" : (stringField(error, "type") ?? stringField(error, "code") ?? "error");
    errored = true;
    turn.setError({ type, message, raw: payload });
    diag({ code: "stream_error", severity: "error", message: `The provider sent an error mid-stream: ${message}`, data: payload });
  };

  const onChunk = (data: Record<string, unknown>, event: ProviderEvent): void => {
    const rawId = data.id;
    const id = typeof rawId === "string" ? rawId : null;
    if (!started) {
      started = true;
      responseId = id;
      turn.startMessage(id, stringField(data, "model"));
    } else if (id !== null && responseId !== null && id !== responseId) {
      once("response_id_changed", {
        severity: "info",
        message: `Chunks carry different response ids (${responseId}, then ${id}); the first was kept.`,
      });
    }
    if ((data.error !== undefined && data.error !== null) || event.event === "error") {
      onError(data);
      return;
    }
    if (isPlainObject(data.usage)) setUsage(data.usage);
    else if (isPlainObject(data.x_groq) && isPlainObject(data.x_groq.usage)) setUsage(data.x_groq.usage);
    const list = data.choices;
    if (Array.isArray(list)) for (let i = 0; i < list.length; i++) onChoice(list[i], i);
    else if (list !== undefined && list !== null) diag({ code: "choices_not_list", severity: "warning", message: "`choices` is not a list; it was ignored.", data: list });
  };

  // ---- the end of the turn ------------------------------------------------------------------

  const primaryFinish = (): string | null => (primaryChoice === null ? null : (choices.get(primaryChoice)?.finishRaw ?? null));

  /** Maps the finish reason once every call is known ("stop" with calls is a tool-call turn). */
  const settleFinish = (complete: boolean): void => {
    const raw = primaryFinish();
    const hasCalls = calls.length > 0;
    if (raw === null) {
      if (!complete) return;
      const inferred: FinishReason = hasCalls ? "tool_calls" : "stop";
      turn.setFinish(null, inferred);
      diag({
        code: "finish_reason_missing",
        severity: "warning",
        message: `The stream ended properly but no choice carried a finish_reason; '${inferred}' was inferred from ${hasCalls ? "the tool calls present" : "the absence of tool calls"}.`,
      });
      return;
    }
    const mapped = FINISH_REASONS[raw] ?? "other";
    if (mapped === "stop" && hasCalls) {
      turn.setFinish(raw, "tool_calls");
      diag({
        code: "finish_reason_stop_with_tool_calls",
        severity: "warning",
        message: `finish_reason is '${raw}' but the turn has ${calls.length} tool call(s) (Gemini's compat endpoint and LiteLLM do this); the finish reason was taken as tool_calls.`,
      });
      return;
    }
    if (mapped === "tool_calls" && !hasCalls) {
      diag({ code: "finish_tool_calls_without_calls", severity: "warning", message: `finish_reason is '${raw}' but no tool call arrived.` });
    }
    if (mapped === "other") diag({ code: "finish_reason_unknown", severity: "info", message: `finish_reason '${raw}' is not a known value; it was mapped to 'other'.` });
    turn.setFinish(raw, mapped);
  };

  /**
   * The provider closed the turn: every call is finalized. On a `length` stop the call being
   * written is truncated; a call counts as finished only when a later call opened after its last
   * fragment and its arguments parse (the model had moved on).
   */
  const finalizeCalls = (): void => {
    if (finalized) return;
    finalized = true;
    for (const state of calls) if (!state.call && !state.ended) openCall(state, "");
    settleFinish(true);
    const stoppedForLength = FINISH_REASONS[primaryFinish() ?? ""] === "length";
    for (const state of calls) {
      if (state.ended) continue;
      if (stoppedForLength) {
        const moved = !state.custom && calls.some((other) => other !== state && other.choice === state.choice && other.seenAt > state.lastFragmentAt);
        if (moved && argumentsComplete(state)) {
          diag({
            code: "call_closed_by_successor",
            severity: "info",
            message: `The provider stopped for length, but call ${state.call?.index} was followed by another call and its arguments are complete; it was kept as complete.`,
            callIndex: state.call?.index,
          });
          endCall(state, true);
        } else endCall(state, false, "max_tokens");
        continue;
      }
      endCall(state, true);
    }
  };

  const push = (event: ProviderEvent): void => {
    seq++;
    const data = event.data;
    if (typeof data === "string") {
      const trimmed = data.trim();
      if (trimmed === "[DONE]") {
        if (!done && !errored) finalizeCalls();
        done = true;
        return;
      }
      if (event.event === "error") {
        onError(data);
        return;
      }
      diag({
        code: trimmed === "" ? "empty_data" : "non_json_data",
        severity: trimmed === "" ? "info" : "warning",
        message: trimmed === "" ? "An event with empty data arrived (a keep-alive); it was ignored." : describeNonJson(trimmed),
        data: event,
      });
      return;
    }
    if (!isPlainObject(data)) {
      diag({ code: "non_json_data", severity: "warning", message: "An event payload is not a JSON object; it was ignored.", data: event });
      return;
    }
    if (done || errored) {
      ignoreAfterEnd(done ? "event_after_done" : "event_after_error", done ? "[DONE]" : "the stream error", stringField(data, "object") ?? event.event ?? "chunk");
      return;
    }
    onChunk(data, event);
  };

  const flush = (): TurnEnd => {
    if (errored) {
      for (const state of calls) if (!state.call) openCall(state, "");
      return { status: "error", truncationCause: "stream_error" };
    }
    if (done) return { status: "complete", truncationCause: "stream_ended" };
    // Recorded chunk files often drop `[DONE]`: a finish_reason with nothing after it closes the
    // turn, unless this server also sent finish reasons before content (then only [DONE] counts).
    if (lastFinishAt >= 0 && lastFinishAt >= lastActivityAt && !finishNotFinal) {
      finalizeCalls();
      return { status: "complete", truncationCause: "stream_ended" };
    }
    for (const state of calls) if (!state.call) openCall(state, "");
    settleFinish(false);
    if (finishNotFinal && lastFinishAt >= lastActivityAt) {
      diag({
        code: "finish_reason_not_final",
        severity: "warning",
        message: "finish_reason arrived before content as well as after it (a proxy that sends one with every chunk), so it does not mark the end; without [DONE] the turn is incomplete.",
      });
    }
    diag({
      code: started ? "stream_ended_without_done" : "empty_stream",
      severity: "warning",
      message: started
        ? "The stream ended without [DONE] and without a final finish_reason; the turn is incomplete and its open calls are truncated."
        : "The stream ended before any chunk.",
    });
    return { status: "incomplete", truncationCause: "stream_ended" };
  };

  return { push, flush, emptyMeansNoArguments: true };
}

export function normalizeChatUsage(raw: Record<string, unknown>): Usage {
  const [input, output] = [numberField(raw, "prompt_tokens"), numberField(raw, "completion_tokens")];
  return usageOf(raw, {
    inputTokens: input,
    outputTokens: output,
    totalTokens: numberField(raw, "total_tokens") ?? sumOf(input, output),
    // OpenAI nests cached tokens; DeepSeek says prompt_cache_hit_tokens; Moonshot puts cached_tokens at the top.
    cacheReadInputTokens: numberField(raw.prompt_tokens_details, "cached_tokens") ?? numberField(raw, "prompt_cache_hit_tokens") ?? numberField(raw, "cached_tokens"),
    cacheCreationInputTokens: numberField(raw.prompt_tokens_details, "cache_write_tokens"),
    reasoningTokens: numberField(raw.completion_tokens_details, "reasoning_tokens"),
  });
}

/** A wire index: a non-negative integer, else null. */
function nonNegativeInteger(value: unknown): number | null {
  return typeof value === "number" && Number.isInteger(value) && value >= 0 ? value : null;
}


import { isPlaceholderId, type TurnBuilder, type TurnEnd } from "../assemble/turn.js";
import type { ToolCallAssembler } from "../assemble/tool-call.js";
import type { ContentBlock, Diagnostic, FinishReason, ProviderEvent, TruncationCause, Usage } from "../types.js";
import type { ProviderCodec } from "./codec.js";
import { afterEndReporter } from "./after-end.js";
import { isPlainObject } from "../json/shape.js";
import { jsonStringBody } from "../json/stringify.js";
import { hashId } from "../util/hash.js";
import { describeNonJson, eventType, numberField, stringField, sumOf, usageOf } from "./fields.js";
import type { DiagnosticCode } from "../diagnostics/codes.js";

/**
 * OpenAI Responses stream decoder (also Azure, DeepSeek's /responses, LM Studio's Open Responses
 * and Bedrock Mantle). Every output item is keyed by `item_id`, falling back to `output_index`:
 * argument deltas carry neither `call_id` nor name, which come on `output_item.added`.
 *
 * Argument sources: `item.arguments` on `output_item.added` is `start`, the deltas are `delta`, and
 * `function_call_arguments.done` (else `output_item.done`, else the item in the terminal
 * response) is `final`, which finalize checks against the deltas. A call ends at its first
 * `.done`: that is the provider saying the arguments are complete.
 *
 * Custom (free-form) tools stream plain text, not JSON. Their input is presented as the arguments
 * object `{"input": "<text>"}`: the text is JSON-escaped as it streams, so the live preview, the
 * `final` check and finalize all work on it unchanged, and the call carries
 * `providerFields.customToolInput: true` so that a history encoder sends `input` back as text.
 *
 * The parallel-call wrapper some models emit (one call named `parallel` or
 * `multi_tool_use.parallel` with `{"tool_uses": [{"recipient_name": "functions.x", "parameters":
 * {…}}, …]}`) is expanded into one call per entry, ids `<call_id>_<n>`, with
 * `providerFields.parallelWrapper` recording the original call and a `parallel_wrapper_expanded`
 * diagnostic. Its calls are therefore only announced when the wrapper is complete.
 */

const WRAPPER_NAMES = new Set(["parallel", "multi_tool_use.parallel"]);

/** Item types executed by the provider (or not function calls): kept verbatim, never client calls. */
const HOSTED_EVENT_PREFIXES = [
  "response.web_search_call",
  "response.file_search_call",
  "response.code_interpreter_call",
  "response.image_generation_call",
  "response.mcp_call",
  "response.mcp_list_tools",
  "response.computer_call",
  "response.shell_call",
  "response.local_shell_call",
  "response.apply_patch_call",
  "response.audio",
];

type TextBlock = Extract<ContentBlock, { type: "text" }>;
type ReasoningBlock = Extract<ContentBlock, { type: "reasoning" }>;
type OpaqueBlock = Extract<ContentBlock, { type: "opaque" }>;

type ItemState =
  | { kind: "call"; itemId: string | null; outputIndex: number | null; call: ToolCallAssembler; custom: boolean; ended: boolean; finalText: string | null }
  | {
      kind: "wrapper";
      itemId: string | null;
      outputIndex: number | null;
      callId: string;
      /** The call_id was minted (none sent). */
      minted: boolean;
      name: string;
      text: string;
      start: string;
      ended: boolean;
    }
  | { kind: "message"; itemId: string | null; outputIndex: number | null; parts: Map<number, TextBlock>; refusal: OpaqueBlock | null; ended: boolean }
  | { kind: "reasoning"; itemId: string | null; outputIndex: number | null; block: ReasoningBlock; sawText: boolean; sawSummary: boolean; ended: boolean }
  | { kind: "opaque"; itemId: string | null; outputIndex: number | null; block: OpaqueBlock; ended: boolean };

export function openaiResponsesCodec(turn: TurnBuilder): ProviderCodec {
  const byId = new Map<string, ItemState>();
  const byIndex = new Map<number, ItemState>();
  let started = false;
  let responseId: string | null = null;
  let terminal: "completed" | "incomplete" | "failed" | null = null;
  let incompleteReason: string | null = null;
  let clientCalls = 0;

  const diag = (diagnostic: Diagnostic): void => turn.diagnostic(diagnostic);
  const ignoreAfterEnd = afterEndReporter(diag);
  const warn = (code: DiagnosticCode, message: string, data?: unknown, providerIndex?: number | null): void =>
    diag({ code, severity: "warning", message, ...(providerIndex !== null && providerIndex !== undefined ? { providerIndex } : {}), ...(data !== undefined ? { data } : {}) });

  const register = (state: ItemState): ItemState => {
    if (state.itemId !== null) byId.set(state.itemId, state);
    if (state.outputIndex !== null) byIndex.set(state.outputIndex, state);
    return state;
  };

  /** The item an event is about: by `item_id`, else by `output_index` (compatible servers omit one or the other). */
  const lookup = (data: Record<string, unknown>): ItemState | undefined => {
    const itemId = stringField(data, "item_id");
    const found = itemId !== null ? byId.get(itemId) : undefined;
    if (found) return found;
    const outputIndex = integerField(data, "output_index");
    return outputIndex !== null ? byIndex.get(outputIndex) : undefined;
  };

  const start = (response: unknown): void => {
    if (started) return;
    started = true;
    responseId = stringField(response, "id");
    turn.startMessage(responseId, stringField(response, "model"));
  };

  // ---- items --------------------------------------------------------------------------------

  const openItem = (item: Record<string, unknown>, outputIndex: number | null): ItemState => {
    const type = stringField(item, "type") ?? "unknown";
    const itemId = nonEmpty(stringField(item, "id"));
    if (type === "function_call" || type === "custom_tool_call") {
      const name = stringField(item, "name") ?? "";
      let callId = nonEmpty(stringField(item, "call_id"));
      if (callId !== null && isPlaceholderId(callId)) callId = null;
      const minted = callId === null;
      if (callId === null) {
        callId = `call_tw_${hashId([responseId ?? "", name, String(outputIndex ?? ""), itemId ?? ""].join("\u0000"))}`;
        warn("call_id_minted", `The ${type} item${itemId ? ` ${itemId}` : ""} has no call_id; the deterministic id ${callId} was minted.`, undefined, outputIndex);
      }
      if (type === "function_call" && WRAPPER_NAMES.has(name)) {
        const startText = typeof item.arguments === "string" ? item.arguments : "";
        return register({ kind: "wrapper", itemId, outputIndex, callId, minted, name, text: "", start: startText, ended: false });
      }
      return register(openCallItem(type === "custom_tool_call", callId, minted, name, itemId, outputIndex, type === "custom_tool_call" ? item.input : item.arguments));
    }
    if (type === "message") {
      return register({ kind: "message", itemId, outputIndex, parts: new Map(), refusal: null, ended: false });
    }
    if (type === "reasoning") {
      const block = turn.openBlock<ReasoningBlock>({
        type: "reasoning",
        text: "",
        ...(itemId !== null ? { id: itemId } : {}),
        ...(outputIndex !== null ? { providerIndex: outputIndex } : {}),
      });
      const encrypted = nonEmpty(stringField(item, "encrypted_content"));
      if (encrypted !== null) block.encryptedContent = encrypted;
      return register({ kind: "reasoning", itemId, outputIndex, block, sawText: false, sawSummary: false, ended: false });
    }
    const block = turn.openBlock<OpaqueBlock>({ type: "opaque", blockType: type, value: item, ...(outputIndex !== null ? { providerIndex: outputIndex } : {}) });
    diag({
      code: "item_not_interpreted",
      severity: "info",
      message: `Output item type '${type}' is not a client function call (hosted or special tool); it was kept verbatim.`,
      ...(outputIndex !== null ? { providerIndex: outputIndex } : {}),
    });
    return register({ kind: "opaque", itemId, outputIndex, block, ended: false });
  };

  const openCallItem = (
    custom: boolean,
    callId: string,
    minted: boolean,
    name: string,
    itemId: string | null,
    outputIndex: number | null,
    initial: unknown,
  ): Extract<ItemState, { kind: "call" }> => {
    const providerFields: Record<string, unknown> = {};
    if (itemId !== null) providerFields.itemId = itemId;
    if (custom) providerFields.customToolInput = true;
    const call = turn.calls.open({
      id: callId,
      idMinted: minted,
      name,
      kind: "client",
      providerFields,
      ...(outputIndex !== null ? { providerIndex: outputIndex } : {}),
      // A custom tool's input is text, not a start object: it is written into the wrapped string below.
      ...(!custom && typeof initial === "string" ? { start: initial } : {}),
    });
    clientCalls++;
    if (!name) warn("call_name_missing", `The call ${callId} has no name.`, undefined, outputIndex);
    if (custom) {
      turn.calls.appendArguments(call, '{"input":"');
      if (typeof initial === "string" && initial !== "") turn.calls.appendArguments(call, jsonStringBody(initial));
    }
    return { kind: "call", itemId, outputIndex, call, custom, ended: false, finalText: null };
  };

  const endCallItem = (state: Extract<ItemState, { kind: "call" }>, final: string | null, complete: boolean, cause?: TruncationCause): void => {
    if (state.ended) {
      if (final !== null && state.finalText !== null && final !== state.finalText) {
        diag({
          code: "final_arguments_disagree",
          severity: "warning",
          message: `Two end events of call ${state.call.index} carry different arguments; the first was used.`,
          callIndex: state.call.index,
          data: { first: state.finalText, later: final },
        });
      }
      return;
    }
    state.ended = true;
    if (complete) {
      if (state.custom) {
        turn.calls.appendArguments(state.call, '"}');
        if (final !== null) state.call.setFinal(JSON.stringify({ input: final }));
      } else if (final !== null) state.call.setFinal(final);
      state.finalText = final;
    }
    turn.calls.end(state.call, { complete, emptyMeansNoArguments: true, ...(cause ? { truncationCause: cause } : {}) });
  };

  /** The wrapper's calls, once its arguments are known; anything off-shape stays one ordinary call. */
  const endWrapper = (state: Extract<ItemState, { kind: "wrapper" }>, final: string | null, complete: boolean, cause?: TruncationCause): void => {
    if (state.ended) return;
    state.ended = true;
    const text = final ?? state.text;
    const entries = complete ? wrapperEntries(text) : null;
    if (entries) {
      entries.forEach((entry, position) => {
        const call = turn.calls.open({
          id: `${state.callId}_${position}`,
          idMinted: true,
          name: entry.name,
          kind: "client",
          ...(state.outputIndex !== null ? { providerIndex: state.outputIndex } : {}),
          providerFields: {
            ...(state.itemId !== null ? { itemId: state.itemId } : {}),
            parallelWrapper: { callId: state.callId, name: state.name, position, recipientName: entry.recipient },
          },
        });
        clientCalls++;
        call.setFinal(entry.parameters);
        turn.calls.end(call, { complete: true, emptyMeansNoArguments: true });
      });
      diag({
        code: "parallel_wrapper_expanded",
        severity: "warning",
        message: `The model called the '${state.name}' wrapper (${state.callId}) instead of calling its ${entries.length} tools directly; it was expanded into ${entries.length} calls with ids ${state.callId}_0…${state.callId}_${entries.length - 1}.`,
        ...(state.outputIndex !== null ? { providerIndex: state.outputIndex } : {}),
        data: { callId: state.callId, arguments: text },
      });
      return;
    }
    if (complete) {
      warn(
        "parallel_wrapper_not_expanded",
        `A call named '${state.name}' does not have the wrapper shape {"tool_uses": [{"recipient_name", "parameters"}]}; it was kept as one call.`,
        undefined,
        state.outputIndex,
      );
    }
    const call = openCallItem(false, state.callId, state.minted, state.name, state.itemId, state.outputIndex, state.start);
    if (state.text !== "") turn.calls.appendArguments(call.call, state.text);
    endCallItem(call, final, complete, cause);
  };

  const textBlock = (state: Extract<ItemState, { kind: "message" }>, contentIndex: number): TextBlock => {
    let block = state.parts.get(contentIndex);
    if (!block) {
      block = turn.openBlock<TextBlock>({ type: "text", text: "", ...(state.outputIndex !== null ? { providerIndex: state.outputIndex } : {}) });
      state.parts.set(contentIndex, block);
    }
    return block;
  };

  const onRefusal = (state: Extract<ItemState, { kind: "message" }>, text: string): void => {
    if (!state.refusal) {
      state.refusal = turn.openBlock<OpaqueBlock>({ type: "opaque", blockType: "refusal", value: "", ...(state.outputIndex !== null ? { providerIndex: state.outputIndex } : {}) });
      warn("refusal", "The model refused; the refusal text is kept in an opaque 'refusal' block, not in text.", undefined, state.outputIndex);
    }
    state.refusal.value = `${String(state.refusal.value)}${text}`;
  };

  /** `output_item.done` (or an item of the terminal response): completes what the deltas left out. */
  const onItemDone = (item: Record<string, unknown>, outputIndex: number | null): void => {
    const itemId = nonEmpty(stringField(item, "id"));
    let state = (itemId !== null ? byId.get(itemId) : undefined) ?? (outputIndex !== null ? byIndex.get(outputIndex) : undefined);
    if (!state) {
      state = openItem(item, outputIndex);
      diag({ code: "item_done_without_added", severity: "info", message: `Output item ${itemId ?? outputIndex} arrived whole, without output_item.added; it was decoded from the done item.`, data: item });
    }
    switch (state.kind) {
      case "call": {
        const final = state.custom ? stringField(item, "input") : stringField(item, "arguments");
        endCallItem(state, final, true);
        return;
      }
      case "wrapper":
        endWrapper(state, stringField(item, "arguments"), true);
        return;
      case "message": {
        if (state.ended) return;
        state.ended = true;
        const content = Array.isArray(item.content) ? item.content : [];
        content.forEach((part, contentIndex) => {
          if (!isPlainObject(part)) return;
          if (part.type === "output_text") fillText(textBlock(state as Extract<ItemState, { kind: "message" }>, contentIndex), stringField(part, "text"));
          else if (part.type === "refusal" && !(state as Extract<ItemState, { kind: "message" }>).refusal) onRefusal(state as Extract<ItemState, { kind: "message" }>, stringField(part, "refusal") ?? "");
        });
        return;
      }
      case "reasoning": {
        if (state.ended) return;
        state.ended = true;
        const encrypted = nonEmpty(stringField(item, "encrypted_content"));
        if (encrypted !== null) state.block.encryptedContent = encrypted;
        if (!state.sawSummary && Array.isArray(item.summary)) {
          const summary = item.summary.map((part) => stringField(part, "text") ?? "").filter((text) => text !== "");
          if (summary.length > 0) state.block.summary = summary;
        }
        if (!state.sawText && Array.isArray(item.content)) {
          const text = item.content.map((part) => stringField(part, "text") ?? "").join("");
          turn.appendReasoning(state.block, text);
        }
        return;
      }
      case "opaque":
        state.block.value = item;
        state.ended = true;
        return;
    }
  };

  const fillText = (block: TextBlock, text: string | null): void => {
    if (text === null || text === "") return;
    const streamed = turn.streamedText(block);
    if (streamed === "") turn.appendText(block, text);
    else if (streamed !== null && streamed !== text) {
      warn("text_done_differs", "The final text of a message part differs from its streamed deltas; the streamed text was kept.", { final: text }, block.providerIndex);
    }
  };

  // ---- events -------------------------------------------------------------------------------

  const onArgumentsDelta = (data: Record<string, unknown>, custom: boolean): void => {
    const state = lookup(data);
    const delta = stringField(data, "delta") ?? "";
    if (!state || (state.kind !== "call" && state.kind !== "wrapper")) {
      warn("delta_for_unknown_item", `An arguments delta for an unknown item (${String(data.item_id ?? data.output_index)}) was ignored.`, data, integerField(data, "output_index"));
      return;
    }
    if (state.kind === "wrapper") {
      if (!state.ended) state.text += delta;
      return;
    }
    if (state.custom !== custom) {
      warn("delta_type_mismatch", `A ${custom ? "custom tool input" : "function arguments"} delta arrived for a ${state.custom ? "custom tool" : "function"} call; it was used as that call's input.`, data, state.outputIndex);
    }
    turn.calls.appendArguments(state.call, state.custom ? jsonStringBody(delta) : delta);
  };

  const onArgumentsDone = (data: Record<string, unknown>, custom: boolean): void => {
    const state = lookup(data);
    const final = stringField(data, custom ? "input" : "arguments");
    if (!state || (state.kind !== "call" && state.kind !== "wrapper")) {
      warn("done_for_unknown_item", `An arguments .done event for an unknown item (${String(data.item_id ?? data.output_index)}) was ignored.`, data, integerField(data, "output_index"));
      return;
    }
    if (state.kind === "wrapper") endWrapper(state, final, true);
    else endCallItem(state, final, true);
  };

  const onTextDelta = (data: Record<string, unknown>, done: boolean): void => {
    const state = lookup(data);
    if (!state || state.kind !== "message") {
      warn("delta_for_unknown_item", `A text event for an unknown item (${String(data.item_id ?? data.output_index)}) was ignored.`, data, integerField(data, "output_index"));
      return;
    }
    const block = textBlock(state, integerField(data, "content_index") ?? 0);
    if (done) fillText(block, stringField(data, "text"));
    else turn.appendText(block, stringField(data, "delta") ?? "");
  };

  const onReasoningEvent = (data: Record<string, unknown>, kind: "text" | "summary", done: boolean): void => {
    const state = lookup(data);
    if (!state || state.kind !== "reasoning") {
      warn("delta_for_unknown_item", `A reasoning event for an unknown item (${String(data.item_id ?? data.output_index)}) was ignored.`, data, integerField(data, "output_index"));
      return;
    }
    if (kind === "text") {
      if (done) {
        if (!state.sawText) turn.appendReasoning(state.block, stringField(data, "text") ?? "");
        state.sawText = true;
        return;
      }
      state.sawText = true;
      turn.appendReasoning(state.block, stringField(data, "delta") ?? "");
      return;
    }
    // Summaries are kept per summary_index in `summary`, apart from the reasoning text.
    const summaryIndex = integerField(data, "summary_index") ?? 0;
    const summary = (state.block.summary ??= []);
    while (summary.length <= summaryIndex) summary.push("");
    if (done) {
      const text = stringField(data, "text");
      if (text !== null && summary[summaryIndex] === "") summary[summaryIndex] = text;
    } else summary[summaryIndex] += stringField(data, "delta") ?? "";
    state.sawSummary = true;
  };

  const setUsage = (raw: unknown): void => {
    if (isPlainObject(raw)) turn.setUsage(normalizeResponsesUsage(raw));
  };

  const onTerminal = (type: "completed" | "incomplete" | "failed", data: Record<string, unknown>): void => {
    const response = isPlainObject(data.response) ? data.response : {};
    start(response);
    setUsage(response.usage);
    // The terminal response repeats every output item: it finishes any item whose .done never came.
    const output = Array.isArray(response.output) ? response.output : [];
    if (type === "completed") output.forEach((item, index) => {
      if (isPlainObject(item)) onItemDone(item, index);
    });
    terminal = type;
    if (type === "incomplete") {
      incompleteReason = stringField(response.incomplete_details, "reason");
    }
    if (type === "failed") {
      const error = isPlainObject(response.error) ? response.error : {};
      if (!turn.hasError) {
        turn.setError({ type: stringField(error, "code") ?? stringField(error, "type") ?? "failed", message: stringField(error, "message") ?? "The response failed.", raw: data });
      }
      diag({ code: "response_failed", severity: "error", message: `The response failed: ${stringField(error, "message") ?? "(no message)"}.`, data: response.error });
    }
  };

  const onError = (data: Record<string, unknown>): void => {
    // The SDK types the error event flat; the public API nests it under `error`. Accept both.
    const nested = isPlainObject(data.error);
    const error = nested ? (data.error as Record<string, unknown>) : data;
    const message = stringField(error, "message") ?? "The provider reported an error mid-stream.";
    // In the flat shape `type` is the event's own type ("error"): the code says what happened.
    const type = (nested ? stringField(error, "type") : null) ?? stringField(error, "code") ?? "error";
    turn.setError({ type, message, raw: data });
    diag({ code: "stream_error", severity: "error", message: `The provider sent an error event: ${message}`, data });
  };

  const push = (event: ProviderEvent): void => {
    const data = event.data;
    if (!isPlainObject(data)) {
      const text = typeof data === "string" ? data.trim() : null;
      if (text === "[DONE]") return; // Some relays append Chat's terminator; Responses ends with its terminal event.
      diag({
        code: text === "" ? "empty_data" : "non_json_data",
        severity: text === "" ? "info" : "warning",
        message: text === "" ? "An event with empty data arrived (a keep-alive); it was ignored." : describeNonJson(text ?? ""),
        data: event,
      });
      return;
    }
    const type = eventType(event);
    if (terminal !== null) {
      ignoreAfterEnd("event_after_terminal", `response.${terminal}`, type);
      return;
    }
    switch (type) {
      case "response.created":
      case "response.in_progress":
      case "response.queued":
        start(data.response);
        return;
      case "response.output_item.added": {
        if (!started) start({});
        const item = isPlainObject(data.item) ? data.item : null;
        const outputIndex = integerField(data, "output_index");
        if (!item) {
          warn("item_missing", "output_item.added has no item; it was ignored.", data, outputIndex);
          return;
        }
        const itemId = nonEmpty(stringField(item, "id"));
        if ((itemId !== null && byId.has(itemId)) || (itemId === null && outputIndex !== null && byIndex.has(outputIndex))) {
          warn("item_added_twice", `Output item ${itemId ?? outputIndex} was added twice; the second was ignored.`, data, outputIndex);
          return;
        }
        openItem(item, outputIndex);
        return;
      }
      case "response.output_item.done": {
        const item = isPlainObject(data.item) ? data.item : null;
        if (item) onItemDone(item, integerField(data, "output_index"));
        else warn("item_missing", "output_item.done has no item; it was ignored.", data, integerField(data, "output_index"));
        return;
      }
      case "response.function_call_arguments.delta":
        onArgumentsDelta(data, false);
        return;
      case "response.function_call_arguments.done":
        onArgumentsDone(data, false);
        return;
      case "response.custom_tool_call_input.delta":
        onArgumentsDelta(data, true);
        return;
      case "response.custom_tool_call_input.done":
        onArgumentsDone(data, true);
        return;
      case "response.content_part.added":
      case "response.content_part.done": {
        const state = lookup(data);
        const part = isPlainObject(data.part) ? data.part : null;
        if (state?.kind === "message" && part?.type === "output_text") {
          const block = textBlock(state, integerField(data, "content_index") ?? 0);
          if (type === "response.content_part.done") fillText(block, stringField(part, "text"));
        }
        return;
      }
      case "response.output_text.delta":
        onTextDelta(data, false);
        return;
      case "response.output_text.done":
        onTextDelta(data, true);
        return;
      case "response.refusal.delta":
      case "response.refusal.done": {
        const state = lookup(data);
        if (state?.kind !== "message") return;
        if (type === "response.refusal.delta") onRefusal(state, stringField(data, "delta") ?? "");
        else if (!state.refusal) onRefusal(state, stringField(data, "refusal") ?? "");
        return;
      }
      case "response.reasoning_text.delta":
      case "response.reasoning.delta":
        onReasoningEvent(data, "text", false);
        return;
      case "response.reasoning_text.done":
      case "response.reasoning.done":
        onReasoningEvent(data, "text", true);
        return;
      case "response.reasoning_summary_text.delta":
        onReasoningEvent(data, "summary", false);
        return;
      case "response.reasoning_summary_text.done":
        onReasoningEvent(data, "summary", true);
        return;
      case "response.reasoning_summary_part.added":
      case "response.reasoning_summary_part.done":
      case "response.output_text.annotation.added":
        return;
      case "response.completed":
        onTerminal("completed", data);
        return;
      case "response.incomplete":
        onTerminal("incomplete", data);
        return;
      case "response.failed":
        onTerminal("failed", data);
        return;
      case "error":
        onError(data);
        return;
      default:
        if (HOSTED_EVENT_PREFIXES.some((prefix) => type.startsWith(prefix))) return;
        diag({ code: "unknown_event", severity: "info", message: `Event type '${type}' is not interpreted; it was kept in this diagnostic.`, data: event });
    }
  };

  const openStates = (): ItemState[] => {
    const seen = new Set<ItemState>([...byId.values(), ...byIndex.values()]);
    return [...seen].filter((state) => !state.ended);
  };

  const flush = (): TurnEnd => {
    const stoppedForLength = terminal === "incomplete" && incompleteReason === "max_output_tokens";
    const cause: TruncationCause = turn.hasError ? "stream_error" : stoppedForLength ? "max_tokens" : "stream_ended";
    // A wrapper still open is reported as the one (truncated) call it was.
    for (const state of openStates()) if (state.kind === "wrapper") endWrapper(state, null, false, cause);

    if (turn.hasError) return { status: "error", truncationCause: "stream_error" };
    if (terminal === "completed") {
      turn.setFinish("completed", clientCalls > 0 ? "tool_calls" : "stop");
      for (const state of openStates()) {
        if (state.kind === "call") {
          diag({ code: "call_without_done", severity: "warning", message: `Call ${state.call.index} has no .done event although the response completed; it was finalized from its deltas.`, callIndex: state.call.index });
          endCallItem(state, null, true);
        }
      }
      return { status: "complete", truncationCause: "stream_ended" };
    }
    if (terminal === "incomplete") {
      const reason = incompleteReason ?? "incomplete";
      const mapped: FinishReason = reason === "max_output_tokens" ? "length" : reason === "content_filter" ? "content_filter" : "other";
      turn.setFinish(reason, mapped);
      return { status: "complete", truncationCause: cause };
    }
    diag({
      code: started ? "stream_ended_without_terminal_event" : "empty_stream",
      severity: "warning",
      message: started ? "The stream ended without response.completed, response.incomplete or response.failed; the turn is incomplete." : "The stream ended before any response event.",
    });
    return { status: "incomplete", truncationCause: "stream_ended" };
  };

  return { push, flush, emptyMeansNoArguments: true };
}

interface WrapperEntry {
  name: string;
  recipient: string;
  parameters: Record<string, unknown>;
}

/** Entries of a `parallel` wrapper call, or null unless the text is exactly that shape. */
function wrapperEntries(text: string): WrapperEntry[] | null {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return null;
  }
  if (!isPlainObject(value) || Object.keys(value).length !== 1 || !Array.isArray(value.tool_uses) || value.tool_uses.length === 0) return null;
  const entries: WrapperEntry[] = [];
  for (const use of value.tool_uses) {
    const recipient = stringField(use, "recipient_name");
    const parameters = isPlainObject(use) ? use.parameters : undefined;
    if (!recipient || !isPlainObject(parameters)) return null;
    const name = recipient.startsWith("functions.") ? recipient.slice("functions.".length) : recipient;
    if (name === "" || WRAPPER_NAMES.has(name)) return null;
    entries.push({ name, recipient, parameters });
  }
  return entries;
}

export function normalizeResponsesUsage(raw: Record<string, unknown>): Usage {
  const [input, output] = [numberField(raw, "input_tokens"), numberField(raw, "output_tokens")];
  return usageOf(raw, {
    inputTokens: input,
    outputTokens: output,
    totalTokens: numberField(raw, "total_tokens") ?? sumOf(input, output),
    cacheReadInputTokens: numberField(raw.input_tokens_details, "cached_tokens"),
    reasoningTokens: numberField(raw.output_tokens_details, "reasoning_tokens"),
  });
}


function integerField(object: unknown, key: string): number | null {
  const value = numberField(object, key);
  return value !== null && Number.isInteger(value) && value >= 0 ? value : null;
}

function nonEmpty(value: string | null): string | null {
  return value === null || value === "" ? null : value;
}

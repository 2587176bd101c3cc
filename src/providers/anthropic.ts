import type { TurnBuilder, TurnEnd } from "../assemble/turn.js";
import type { ToolCallAssembler } from "../assemble/tool-call.js";
import type { ContentBlock, FinishReason, ProviderEvent, Usage } from "../types.js";
import { endStatus, type ProviderCodec } from "./codec.js";
import { afterEndReporter } from "./after-end.js";
import { isPlainObject } from "../json/shape.js";
import { blockCallId, fieldsExcept, numberField, stringField, sumOf, usageOf } from "./fields.js";
import type { DiagnosticCode } from "../diagnostics/codes.js";

/**
 * Anthropic Messages stream decoder (also Vertex, Bedrock InvokeModel after unwrapping, and
 * Anthropic-compatible servers such as Kimi). Every block is keyed by its `index`; events in an
 * unexpected order are tolerated and reported.
 */

const STOP_REASONS: Record<string, FinishReason> = {
  tool_use: "tool_calls",
  end_turn: "stop",
  stop_sequence: "stop",
  max_tokens: "length",
  model_context_window_exceeded: "length",
  refusal: "content_filter",
  pause_turn: "other",
};

/** Block types whose input streams like a client call but is executed by the provider. */
const SERVER_CALL_TYPES = new Set(["server_tool_use", "mcp_tool_use"]);

type BlockState =
  | { kind: "text"; block: Extract<ContentBlock, { type: "text" }>; stopped: boolean }
  | { kind: "thinking"; block: Extract<ContentBlock, { type: "thinking" }>; stopped: boolean }
  | { kind: "call"; call: ToolCallAssembler; stopped: boolean }
  | { kind: "opaque"; block: Extract<ContentBlock, { type: "opaque" }>; stopped: boolean };

export function anthropicCodec(turn: TurnBuilder): ProviderCodec {
  const blocks = new Map<number, BlockState>();
  let started = false;
  let stopped = false;
  let stopReason: string | null = null;
  let usage: Record<string, unknown> = {};

  const warn = (code: DiagnosticCode, message: string, data?: unknown, providerIndex?: number): void => {
    turn.diagnostic({ code, message, severity: "warning", ...(providerIndex !== undefined ? { providerIndex } : {}), ...(data !== undefined ? { data } : {}) });
  };

  const mergeUsage = (raw: unknown): void => {
    if (!isPlainObject(raw)) return;
    // message_delta usage is cumulative: overwrite each field, never add.
    usage = { ...usage, ...raw };
    turn.setUsage(normalizeUsage(usage));
  };

  const ensureStarted = (type: string): void => {
    if (started || stopped) return;
    started = true;
    warn("event_before_message_start", `A ${type} event arrived before message_start; decoding continued.`);
  };

  const onMessageStart = (data: Record<string, unknown>): void => {
    const message = isPlainObject(data.message) ? data.message : {};
    if (started) {
      const dropped = turn.reset();
      blocks.clear();
      usage = {};
      stopReason = null;
      stopped = false;
      turn.diagnostic({
        code: "message_restarted",
        severity: "warning",
        message: "A second message_start arrived mid-stream (a retry spliced into the stream); everything decoded before it was discarded.",
        data: { droppedText: dropped.text, droppedCalls: dropped.calls, droppedBlocks: dropped.blocks },
      });
    }
    started = true;
    turn.startMessage(stringField(message, "id"), stringField(message, "model"));
    mergeUsage(message.usage);
    // A message can arrive with its content already whole (e.g. the resumed turns of programmatic
    // tool calling): each block is then complete as given.
    if (Array.isArray(message.content)) {
      message.content.forEach((block, index) => {
        if (!isPlainObject(block)) return;
        openBlock(index, block);
        const state = blocks.get(index);
        if (state) closeBlock(state);
      });
    }
    const initialStop = stringField(message, "stop_reason");
    if (initialStop !== null) {
      stopReason = initialStop;
      turn.setFinish(initialStop, STOP_REASONS[initialStop] ?? "other");
    }
  };

  const onBlockStart = (data: Record<string, unknown>): void => {
    ensureStarted("content_block_start");
    const contentBlock = isPlainObject(data.content_block) ? data.content_block : null;
    let index = numberField(data, "index");
    if (index === null) {
      index = blocks.size === 0 ? 0 : Math.max(...blocks.keys()) + 1;
      warn("block_index_missing", `content_block_start has no index; it was given index ${index}.`, data);
    }
    if (!contentBlock) {
      warn("block_without_content", "content_block_start has no content_block; it was ignored.", data, index);
      return;
    }
    openBlock(index, contentBlock);
  };

  const openBlock = (index: number, contentBlock: Record<string, unknown>): void => {
    const existing = blocks.get(index);
    if (existing && !existing.stopped) {
      warn("block_restarted", `content_block_start for index ${index} arrived while that block was still open; the open block was closed as truncated.`, undefined, index);
      if (existing.kind === "call") turn.calls.end(existing.call, { complete: false, truncationCause: "stream_ended", emptyMeansNoArguments: true });
    }
    const type = typeof contentBlock.type === "string" ? contentBlock.type : "unknown";
    if (type === "text") {
      const block = turn.openBlock<Extract<ContentBlock, { type: "text" }>>({ type: "text", text: "", providerIndex: index });
      if (Array.isArray(contentBlock.citations) && contentBlock.citations.length > 0) block.citations = [...contentBlock.citations];
      blocks.set(index, { kind: "text", block, stopped: false });
      turn.appendText(block, typeof contentBlock.text === "string" ? contentBlock.text : "");
    } else if (type === "thinking") {
      const block = turn.openBlock<Extract<ContentBlock, { type: "thinking" }>>({
        type: "thinking",
        thinking: "",
        signature: typeof contentBlock.signature === "string" && contentBlock.signature !== "" ? contentBlock.signature : null,
        providerIndex: index,
      });
      blocks.set(index, { kind: "thinking", block, stopped: false });
      turn.appendReasoning(block, typeof contentBlock.thinking === "string" ? contentBlock.thinking : "");
    } else if (type === "redacted_thinking") {
      turn.openBlock({ type: "redacted_thinking", data: typeof contentBlock.data === "string" ? contentBlock.data : "", providerIndex: index });
      blocks.set(index, { kind: "opaque", block: { type: "opaque", blockType: type, value: contentBlock }, stopped: false });
    } else if (type === "tool_use" || SERVER_CALL_TYPES.has(type)) {
      const name = stringField(contentBlock, "name") ?? "";
      const { id, minted } = blockCallId(stringField(contentBlock, "id"), name, index, { block: `${type} block`, idKey: "id", prefix: "toolu_tw_" }, warn);
      const providerFields = fieldsExcept(contentBlock, ["type", "id", "name", "input"]);
      if (type !== "tool_use") providerFields.blockType = type;
      const call = turn.calls.open({
        id,
        idMinted: minted,
        name,
        kind: type === "tool_use" ? "client" : "server",
        providerIndex: index,
        providerFields,
        start: contentBlock.input,
      });
      blocks.set(index, { kind: "call", call, stopped: false });
    } else {
      // Result blocks (web_search_tool_result, …) and future block types arrive whole: keep them verbatim.
      const block = turn.openBlock<Extract<ContentBlock, { type: "opaque" }>>({ type: "opaque", blockType: type, value: contentBlock, providerIndex: index });
      blocks.set(index, { kind: "opaque", block, stopped: false });
      if (!type.endsWith("_tool_result")) {
        turn.diagnostic({ code: "unknown_block_type", severity: "info", message: `Block type '${type}' is not interpreted; it was kept verbatim.`, providerIndex: index });
      }
    }
  };

  // Defined once per decoder rather than as a closure per delta (the per-event hot path).
  const deltaTypeMismatch = (deltaType: string, kind: BlockState["kind"], index: number | null, data: Record<string, unknown>): void =>
    warn("delta_type_mismatch", `A ${deltaType} arrived for a ${kind} block at index ${String(index)}; it was ignored.`, data, index ?? undefined);

  const onBlockDelta = (data: Record<string, unknown>): void => {
    ensureStarted("content_block_delta");
    // Direct reads rather than numberField (this runs once per delta), with the same rule.
    const rawIndex = data.index;
    const index = typeof rawIndex === "number" && Number.isFinite(rawIndex) ? rawIndex : null;
    const delta = isPlainObject(data.delta) ? data.delta : null;
    const state = index === null ? undefined : blocks.get(index);
    if (!delta) {
      warn("delta_without_body", "content_block_delta has no delta; it was ignored.", data, index ?? undefined);
      return;
    }
    if (!state) {
      warn("delta_for_unknown_block", `content_block_delta for index ${String(index)} arrived without a content_block_start; it was ignored.`, data, index ?? undefined);
      return;
    }
    if (state.stopped) {
      warn("delta_after_block_stop", `content_block_delta for index ${String(index)} arrived after its content_block_stop; it was ignored.`, data, index ?? undefined);
      return;
    }
    const deltaType = typeof delta.type === "string" ? delta.type : "unknown";
    switch (deltaType) {
      case "text_delta":
        if (state.kind === "text") turn.appendText(state.block, typeof delta.text === "string" ? delta.text : "");
        else deltaTypeMismatch(deltaType, state.kind, index, data);
        return;
      case "input_json_delta":
        if (state.kind === "call") turn.calls.appendArguments(state.call, typeof delta.partial_json === "string" ? delta.partial_json : "");
        else deltaTypeMismatch(deltaType, state.kind, index, data);
        return;
      case "thinking_delta":
        if (state.kind === "thinking") turn.appendReasoning(state.block, typeof delta.thinking === "string" ? delta.thinking : "");
        else deltaTypeMismatch(deltaType, state.kind, index, data);
        return;
      case "signature_delta":
        // The signature is sent once, whole: it replaces, never appends.
        if (state.kind === "thinking") state.block.signature = typeof delta.signature === "string" ? delta.signature : null;
        else deltaTypeMismatch(deltaType, state.kind, index, data);
        return;
      case "citations_delta":
        if (state.kind === "text") (state.block.citations ??= []).push(delta.citation);
        else deltaTypeMismatch(deltaType, state.kind, index, data);
        return;
      default:
        turn.diagnostic({
          code: "unknown_delta_type",
          severity: "info",
          message: `Delta type '${deltaType}' is not interpreted; it was kept in this diagnostic.`,
          providerIndex: index ?? undefined,
          data: delta,
        });
    }
  };

  const onBlockStop = (data: Record<string, unknown>): void => {
    ensureStarted("content_block_stop");
    const index = numberField(data, "index");
    const state = index === null ? undefined : blocks.get(index);
    if (!state) {
      warn("stop_for_unknown_block", `content_block_stop for index ${String(index)} has no open block; it was ignored.`, data, index ?? undefined);
      return;
    }
    closeBlock(state);
  };

  const closeBlock = (state: BlockState): void => {
    if (state.stopped) return;
    state.stopped = true;
    if (state.kind === "call") turn.calls.end(state.call, { complete: true, emptyMeansNoArguments: true });
  };

  const onMessageDelta = (data: Record<string, unknown>): void => {
    ensureStarted("message_delta");
    const delta = isPlainObject(data.delta) ? data.delta : data;
    const reason = stringField(delta, "stop_reason") ?? stringField(data, "stop_reason");
    if (reason !== null) {
      stopReason = reason;
      turn.setFinish(reason, STOP_REASONS[reason] ?? "other");
    }
    mergeUsage(data.usage);
  };

  const onError = (data: Record<string, unknown>): void => {
    const error = isPlainObject(data.error) ? data.error : data;
    turn.setError({
      type: stringField(error, "type") ?? "error",
      message: stringField(error, "message") ?? "The provider reported an error mid-stream.",
      raw: data,
    });
    turn.diagnostic({ code: "stream_error", severity: "error", message: `The provider sent an error event: ${stringField(error, "message") ?? "(no message)"}.`, data });
  };

  /** Reported once, with a count: a concatenation of several responses would otherwise flood the turn. */
  const ignoreAfterEnd = afterEndReporter((diagnostic) => turn.diagnostic(diagnostic));

  const push = (event: ProviderEvent): void => {
    const data = event.data;
    if (!isPlainObject(data)) {
      turn.diagnostic({ code: "non_json_data", severity: "warning", message: "An event payload is not a JSON object; it was ignored.", data: event });
      return;
    }
    // eventType, read directly (once per event): the payload's type, else the SSE event name.
    const rawType = data.type;
    const type = typeof rawType === "string" ? rawType : (event.event ?? "unknown");
    if (stopped && type !== "ping") {
      ignoreAfterEnd("event_after_message_stop", "message_stop", type);
      return;
    }
    // An error event ends the stream (the SDKs raise it): what follows is not the model's turn.
    if (turn.hasError && type !== "ping") {
      ignoreAfterEnd("event_after_error", "the stream's error event", type);
      return;
    }
    switch (type) {
      case "message_start":
        onMessageStart(data);
        break;
      case "content_block_start":
        onBlockStart(data);
        break;
      case "content_block_delta":
        onBlockDelta(data);
        break;
      case "content_block_stop":
        onBlockStop(data);
        break;
      case "message_delta":
        onMessageDelta(data);
        break;
      case "message_stop":
        ensureStarted("message_stop");
        stopped = true;
        break;
      case "ping":
        break;
      case "error":
        onError(data);
        break;
      default:
        turn.diagnostic({ code: "unknown_event", severity: "info", message: `Event type '${type}' is not interpreted; it was kept in this diagnostic.`, data: event });
    }
  };

  const flush = (): TurnEnd => {
    const status = endStatus(turn, stopped, started, { code: "stream_ended_without_message_stop", message: "The stream ended without message_stop; the turn is incomplete.", empty: "The stream ended before any message event." });
    return { status, truncationCause: turn.openCallTruncationCause(stopReason === "max_tokens") };
  };

  return { push, flush, emptyMeansNoArguments: true };
}

export function normalizeUsage(raw: Record<string, unknown>): Usage {
  const [input, output] = [numberField(raw, "input_tokens"), numberField(raw, "output_tokens")];
  return usageOf({ ...raw }, { inputTokens: input, outputTokens: output, totalTokens: sumOf(input, output), cacheReadInputTokens: numberField(raw, "cache_read_input_tokens"), cacheCreationInputTokens: numberField(raw, "cache_creation_input_tokens") });
}

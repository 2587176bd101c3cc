import type { TurnBuilder, TurnEnd } from "../assemble/turn.js";
import type { ToolCallAssembler } from "../assemble/tool-call.js";
import type { ContentBlock, FinishReason, ProviderEvent, Usage } from "../types.js";
import { endStatus, type ProviderCodec } from "./codec.js";
import { afterEndReporter } from "./after-end.js";
import { isPlainObject } from "../json/shape.js";
import { ANTHROPIC_MESSAGE_EVENTS, blockCallId, fieldsExcept, numberField, stringField, sumOf, usageOf } from "./fields.js";
import type { DiagnosticCode } from "../diagnostics/codes.js";

/**
 * AWS Bedrock ConverseStream decoder. It reads the events in every form they reach it:
 * - from the binary event stream (`aws-eventstream` framing): `{event: ":event-type", data: body}`,
 *   exception frames as `{event: "exception", data: {exceptionType, message, …}}`, protocol error
 *   frames and framing failures as `{event: "error", data: {errorCode, errorMessage}}`;
 * - as the AWS SDK exposes them (and the Vercel AI SDK fixtures record them): one-key objects
 *   `{"contentBlockDelta": {...}}`, exceptions as `{"throttlingException": {message}}`.
 *
 * Blocks are keyed by `contentBlockIndex`. Text and reasoning blocks have no start event (their
 * first delta opens them); tool blocks open with `contentBlockStart.start.toolUse` and their input
 * streams as string fragments (`delta.toolUse.input`), the call's `delta` source.
 */

const STOP_REASONS: Record<string, FinishReason> = {
  end_turn: "stop",
  stop_sequence: "stop",
  tool_use: "tool_calls",
  max_tokens: "length",
  model_context_window_exceeded: "length",
  guardrail_intervened: "content_filter",
  content_filtered: "content_filter",
  malformed_model_output: "error",
  malformed_tool_use: "error",
};

const EVENT_NAMES = new Set(["messageStart", "contentBlockStart", "contentBlockDelta", "contentBlockStop", "messageStop", "metadata"]);

/** Native Anthropic events, which reach this decoder only when an InvokeModel body is decoded as ConverseStream. */
const ANTHROPIC_EVENTS: ReadonlySet<string> = new Set([...ANTHROPIC_MESSAGE_EVENTS, "chunk"]);

/** Exception members of the ConverseStream output union (the SDK's wrapped form names them so). */
const EXCEPTION_SUFFIX = "Exception";

type BlockState =
  | { kind: "text"; block: Extract<ContentBlock, { type: "text" }>; stopped: boolean }
  | { kind: "reasoning"; block: Extract<ContentBlock, { type: "thinking" }>; stopped: boolean }
  | { kind: "redacted"; block: Extract<ContentBlock, { type: "redacted_thinking" }>; stopped: boolean }
  | { kind: "call"; call: ToolCallAssembler; stopped: boolean }
  | { kind: "opaque"; block: Extract<ContentBlock, { type: "opaque" }>; stopped: boolean };

/** The event's name and body, whichever form it came in; null name when it cannot be told. */
export function readBedrockEvent(event: ProviderEvent): { name: string | null; body: unknown } {
  const data = event.data;
  const name = event.event;
  if (name !== undefined && (EVENT_NAMES.has(name) || name === "exception" || name === "error" || name.endsWith(EXCEPTION_SUFFIX))) {
    return { name, body: data };
  }
  if (isPlainObject(data)) {
    const keys = Object.keys(data).filter((key) => key !== "p");
    if (keys.length === 1) {
      const key = keys[0] as string;
      if (EVENT_NAMES.has(key) || key.endsWith(EXCEPTION_SUFFIX)) return { name: key, body: data[key] };
    }
  }
  return { name: name ?? null, body: data };
}

export function bedrockCodec(turn: TurnBuilder): ProviderCodec {
  const blocks = new Map<number, BlockState>();
  let started = false;
  let stopped = false;
  let stopReason: string | null = null;
  let sawMetadata = false;
  let invokeModelReported = false;

  const warn = (code: DiagnosticCode, message: string, data?: unknown, providerIndex?: number): void => {
    turn.diagnostic({ code, message, severity: "warning", ...(providerIndex !== undefined ? { providerIndex } : {}), ...(data !== undefined ? { data } : {}) });
  };

  const ensureStarted = (name: string): void => {
    if (started) return;
    started = true;
    // The Vercel AI SDK's hand-written fixtures omit messageStart; live streams always send it.
    turn.diagnostic({ code: "event_before_message_start", severity: "info", message: `A ${name} event arrived before messageStart; decoding continued.` });
    turn.startMessage(null, null);
  };

  const blockIndex = (body: Record<string, unknown>, name: string): number | null => {
    const index = numberField(body, "contentBlockIndex");
    if (index === null) warn("block_index_missing", `${name} has no contentBlockIndex; it was ignored.`, body);
    return index;
  };

  const onBlockStart = (body: Record<string, unknown>): void => {
    const index = blockIndex(body, "contentBlockStart");
    if (index === null) return;
    const existing = blocks.get(index);
    if (existing && !existing.stopped) {
      warn("block_restarted", `contentBlockStart for index ${index} arrived while that block was still open; the open block was closed${existing.kind === "call" ? " and its call truncated" : ""}.`, undefined, index);
      existing.stopped = true;
      if (existing.kind === "call") turn.calls.end(existing.call, { complete: false, truncationCause: "stream_ended", emptyMeansNoArguments: true });
    }
    const start = isPlainObject(body.start) ? body.start : {};
    if (isPlainObject(start.toolUse)) {
      const toolUse = start.toolUse;
      const name = stringField(toolUse, "name") ?? "";
      const type = stringField(toolUse, "type");
      const { id, minted } = blockCallId(stringField(toolUse, "toolUseId"), name, index, { block: "toolUse block", idKey: "toolUseId", prefix: "tooluse_tw_" }, warn);
      const providerFields = fieldsExcept(toolUse, ["toolUseId", "name", "input"]);
      const call = turn.calls.open({
        id,
        idMinted: minted,
        name,
        // Provider-executed tools (Nova's code interpreter) say so; they are not for the client to run.
        kind: type === "server_tool_use" ? "server" : "client",
        providerIndex: index,
        providerFields,
        ...(toolUse.input !== undefined ? { start: toolUse.input } : {}),
      });
      blocks.set(index, { kind: "call", call, stopped: false });
      return;
    }
    // Tool results of provider-executed tools and future start kinds arrive as data: keep them verbatim.
    const kind = Object.keys(start)[0] ?? "unknown";
    const block = turn.openBlock<Extract<ContentBlock, { type: "opaque" }>>({ type: "opaque", blockType: kind, value: { start: start[kind] ?? start, deltas: [] }, providerIndex: index });
    blocks.set(index, { kind: "opaque", block, stopped: false });
    if (kind !== "toolResult") {
      turn.diagnostic({ code: "unknown_block_type", severity: "info", message: `Block start '${kind}' is not interpreted; it was kept verbatim.`, providerIndex: index, data: start });
    }
  };

  const openImplicit = (index: number, kind: "text" | "reasoning"): BlockState => {
    const state: BlockState =
      kind === "text"
        ? { kind, block: turn.openBlock<Extract<ContentBlock, { type: "text" }>>({ type: "text", text: "", providerIndex: index }), stopped: false }
        : { kind, block: turn.openBlock<Extract<ContentBlock, { type: "thinking" }>>({ type: "thinking", thinking: "", signature: null, providerIndex: index }), stopped: false };
    blocks.set(index, state);
    return state;
  };

  const onBlockDelta = (body: Record<string, unknown>): void => {
    const index = blockIndex(body, "contentBlockDelta");
    if (index === null) return;
    const delta = isPlainObject(body.delta) ? body.delta : null;
    if (!delta) {
      warn("delta_without_body", "contentBlockDelta has no delta; it was ignored.", body, index);
      return;
    }
    let state = blocks.get(index);
    if (state?.stopped) {
      warn("delta_after_block_stop", `contentBlockDelta for index ${index} arrived after its contentBlockStop; it was ignored.`, body, index);
      return;
    }
    const mismatch = (what: string): void =>
      warn("delta_type_mismatch", `A ${what} delta arrived for the ${state?.kind ?? "unknown"} block at index ${index}; it was ignored.`, body, index);

    if (typeof delta.text === "string" || isPlainObject(delta.citation)) {
      // Text blocks have no start event: the first delta opens them.
      state ??= openImplicit(index, "text");
      if (state.kind !== "text") return mismatch("text");
      if (typeof delta.text === "string") turn.appendText(state.block, delta.text);
      if (isPlainObject(delta.citation)) (state.block.citations ??= []).push(delta.citation);
      return;
    }
    if (isPlainObject(delta.toolUse)) {
      if (!state) {
        warn("delta_for_unknown_block", `A toolUse delta for index ${index} arrived without a contentBlockStart (no id or name); it was ignored.`, body, index);
        return;
      }
      if (state.kind !== "call") return mismatch("toolUse");
      const input = delta.toolUse.input;
      if (typeof input === "string") turn.calls.appendArguments(state.call, input);
      else if (input !== undefined) warn("tool_input_not_string", `A toolUse delta for index ${index} carries input that is not a string fragment; it was ignored.`, body, index);
      return;
    }
    if (isPlainObject(delta.reasoningContent)) {
      const reasoning = delta.reasoningContent;
      if (reasoning.redactedContent !== undefined) {
        if (!state) {
          const block = turn.openBlock<Extract<ContentBlock, { type: "redacted_thinking" }>>({ type: "redacted_thinking", data: "", providerIndex: index });
          state = { kind: "redacted", block, stopped: false };
          blocks.set(index, state);
        }
        if (state.kind !== "redacted") return mismatch("redactedContent");
        // Redacted content is opaque bytes (base64 in JSON); it is replayed verbatim, never shown.
        if (typeof reasoning.redactedContent === "string") state.block.data += reasoning.redactedContent;
        return;
      }
      state ??= openImplicit(index, "reasoning");
      if (state.kind !== "reasoning") return mismatch("reasoningContent");
      if (typeof reasoning.text === "string") turn.appendReasoning(state.block, reasoning.text);
      // The signature arrives whole once: it replaces, never appends.
      if (typeof reasoning.signature === "string") state.block.signature = reasoning.signature;
      return;
    }
    if (state?.kind === "opaque") {
      (state.block.value as { deltas: unknown[] }).deltas.push(delta);
      return;
    }
    turn.diagnostic({ code: "unknown_delta_type", severity: "info", message: `A delta of kind '${Object.keys(delta).join(", ")}' is not interpreted; it was kept in this diagnostic.`, providerIndex: index, data: delta });
  };

  const onBlockStop = (body: Record<string, unknown>): void => {
    const index = blockIndex(body, "contentBlockStop");
    if (index === null) return;
    const state = blocks.get(index);
    if (!state) {
      // An empty text block may stop without any delta; nothing was lost.
      turn.diagnostic({ code: "stop_for_unknown_block", severity: "info", message: `contentBlockStop for index ${index} has no open block.`, providerIndex: index });
      return;
    }
    if (state.stopped) return;
    state.stopped = true;
    if (state.kind === "call") turn.calls.end(state.call, { complete: true, emptyMeansNoArguments: true });
  };

  const onMessageStop = (body: Record<string, unknown>): void => {
    stopped = true;
    const reason = stringField(body, "stopReason");
    if (reason === null) {
      warn("stop_reason_missing", "messageStop has no stopReason.", body);
      return;
    }
    stopReason = reason;
    const mapped = STOP_REASONS[reason];
    turn.setFinish(reason, mapped ?? "other");
    if (!mapped) turn.diagnostic({ code: "unknown_stop_reason", severity: "info", message: `stopReason '${reason}' is not known; it was mapped to 'other'.` });
    if (reason === "malformed_tool_use" || reason === "malformed_model_output") {
      turn.diagnostic({
        code: reason === "malformed_tool_use" ? "malformed_tool_use" : "malformed_model_output",
        severity: "error",
        message: `Bedrock stopped with ${reason}: the model produced ${reason === "malformed_tool_use" ? "a tool call" : "output"} the service could not read. Retry the turn.`,
        data: body,
      });
    }
    if (reason === "guardrail_intervened" || reason === "content_filtered") {
      warn("content_filtered", `Bedrock stopped the response (${reason}).`, body);
    }
  };

  const onMetadata = (body: Record<string, unknown>): void => {
    sawMetadata = true;
    if (isPlainObject(body.usage)) turn.setUsage(normalizeBedrockUsage(body.usage));
  };

  const onException = (name: string, body: unknown): void => {
    const payload = isPlainObject(body) ? body : { message: typeof body === "string" ? body : null };
    const type = name === "exception" ? (stringField(payload, "exceptionType") ?? "exception") : name === "error" ? (stringField(payload, "errorCode") ?? "error") : name;
    const message =
      stringField(payload, "message") ?? stringField(payload, "Message") ?? stringField(payload, "errorMessage") ?? "Bedrock reported an error mid-stream.";
    turn.setError({ type, message, raw: body });
    turn.diagnostic({ code: "stream_error", severity: "error", message: `Bedrock sent ${type} in the stream: ${message}`, data: body });
  };

  const ignoreAfterEnd = afterEndReporter((diagnostic) => turn.diagnostic(diagnostic));

  const push = (event: ProviderEvent): void => {
    const { name, body } = readBedrockEvent(event);
    if (name === "exception" || name === "error" || (name !== null && name.endsWith(EXCEPTION_SUFFIX))) {
      onException(name, body);
      return;
    }
    // An exception ends a ConverseStream (the AWS SDKs raise it): what follows is not the model's turn.
    if (turn.hasError) {
      ignoreAfterEnd("event_after_error", "the stream's exception", name ?? "(unnamed)");
      return;
    }
    if (name === null || !EVENT_NAMES.has(name)) {
      const type = stringField(body, "type") ?? name;
      if (!invokeModelReported && type !== null && ANTHROPIC_EVENTS.has(type)) {
        invokeModelReported = true;
        warn(
          "invoke_model_stream",
          "This is an InvokeModelWithResponseStream body carrying Anthropic events, not ConverseStream: decode it with the provider 'anthropic' (over the aws-eventstream framing, which unwraps its chunk frames).",
          event,
        );
      }
      turn.diagnostic({ code: "unknown_event", severity: "info", message: `Event '${name ?? "(unnamed)"}' is not a ConverseStream event; it was kept in this diagnostic.`, data: event });
      return;
    }
    if (!isPlainObject(body)) {
      warn("non_json_data", `The ${name} event's body is not a JSON object; it was ignored.`, event);
      return;
    }
    if (name === "messageStart") {
      if (started) warn("message_restarted", "A second messageStart arrived; decoding continued in the same turn.", body);
      started = true;
      turn.startMessage(null, null);
      return;
    }
    ensureStarted(name);
    // metadata follows messageStop; anything else after it is out of place.
    if (stopped && name !== "metadata") {
      warn("event_after_message_stop", `A ${name} event arrived after messageStop; it was ignored.`, body);
      return;
    }
    switch (name) {
      case "contentBlockStart":
        onBlockStart(body);
        break;
      case "contentBlockDelta":
        onBlockDelta(body);
        break;
      case "contentBlockStop":
        onBlockStop(body);
        break;
      case "messageStop":
        onMessageStop(body);
        break;
      case "metadata":
        onMetadata(body);
        break;
    }
  };

  const flush = (): TurnEnd => {
    const status = endStatus(turn, stopped, started, { code: "stream_ended_without_message_stop", message: "The stream ended without messageStop; the turn is incomplete.", empty: "The stream ended before any ConverseStream event." });
    if (status === "complete" && !sawMetadata) turn.diagnostic({ code: "metadata_missing", severity: "info", message: "The stream ended without a metadata event; no usage is known." });
    return { status, truncationCause: turn.openCallTruncationCause(stopReason === "max_tokens") };
  };

  return { push, flush, emptyMeansNoArguments: true };
}

export function normalizeBedrockUsage(raw: Record<string, unknown>): Usage {
  const [input, output] = [numberField(raw, "inputTokens"), numberField(raw, "outputTokens")];
  // One object literal: spreading a counts object and adding fields to it cost ~1.4 µs a call in V8 (30x).
  return usageOf({ ...raw }, {
    inputTokens: input,
    outputTokens: output,
    totalTokens: numberField(raw, "totalTokens") ?? sumOf(input, output),
    cacheReadInputTokens: numberField(raw, "cacheReadInputTokens"),
    cacheCreationInputTokens: numberField(raw, "cacheWriteInputTokens"),
  });
}

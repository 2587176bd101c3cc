import { isPlaceholderId, type TurnBuilder, type TurnEnd } from "../assemble/turn.js";
import type { ContentBlock, FinishReason, ProviderEvent, Usage } from "../types.js";
import { endStatus, type ProviderCodec } from "./codec.js";
import { afterEndReporter } from "./after-end.js";
import { jsonEqual } from "../json/equal.js";
import { isPlainObject } from "../json/shape.js";
import { mintCallId } from "../util/hash.js";
import { fieldsExcept, numberField, stringField, sumOf, usageOf } from "./fields.js";
import type { DiagnosticCode } from "../diagnostics/codes.js";

/**
 * Ollama native `/api/chat` decoder (NDJSON, one chunk object per line; a non-streamed response
 * is the same object once, with `done: true`). Calls arrive whole in `message.tool_calls`, with
 * `function.arguments` as an object: that object is the call's `final` source, and the call is
 * complete on arrival. Older servers send no ids; they are minted.
 */

const DONE_REASONS: Record<string, FinishReason> = {
  stop: "stop",
  length: "length",
  load: "other",
  unload: "other",
};

export function ollamaCodec(turn: TurnBuilder): ProviderCodec {
  let started = false;
  let done = false;
  let doneReason: string | null = null;
  let createdAt: string | null = null;
  let textBlock: Extract<ContentBlock, { type: "text" }> | null = null;
  let thinkingBlock: Extract<ContentBlock, { type: "thinking" }> | null = null;
  /** Calls by the id they arrived with: what they held, and the chunk they came in. */
  const seenIds = new Map<string, Array<{ name: string; args: unknown; chunk: number }>>();
  let chunk = 0;
  let thinkMarkupReported = false;

  const warn = (code: DiagnosticCode, message: string, data?: unknown, callIndex?: number): void => {
    turn.diagnostic({ code, message, severity: "warning", ...(callIndex !== undefined ? { callIndex } : {}), ...(data !== undefined ? { data } : {}) });
  };
  const ignoreAfterEnd = afterEndReporter((diagnostic) => turn.diagnostic(diagnostic));

  const onToolCall = (raw: unknown): void => {
    if (!isPlainObject(raw)) {
      warn("tool_call_not_object", "An entry of message.tool_calls is not an object; it was ignored.", raw);
      return;
    }
    const fn = isPlainObject(raw.function) ? raw.function : {};
    const name = stringField(fn, "name") ?? "";
    const args = fn.arguments;
    let id = stringField(raw, "id");
    if (id !== null && isPlaceholderId(id)) id = null;
    const seen = id ? seenIds.get(id) : undefined;
    const repeated = seen?.some((earlier) => earlier.chunk !== chunk && earlier.name === name && jsonEqual(earlier.args, args)) === true;
    // A repeat is the same call sent again in a later chunk. Two entries of one chunk, or a later
    // call with other content, are different calls whose ids collide (servers that use the
    // function name or a counter as the id): the turn keeps each under an id of its own.
    if (id && repeated) {
      warn("duplicate_tool_call", `The call ${id} arrived a second time; the repeat was ignored.`, raw);
      return;
    }
    const minted = !id;
    if (!id) {
      // created_at differs per response, so the same call repeated in a later turn gets another id.
      id = mintCallId("ollama_tw_", name, `${createdAt ?? ""}\u0000${args === undefined ? "" : JSON.stringify(args)}`, turn.calls.count);
      turn.diagnostic({
        code: "call_id_minted",
        severity: "info",
        message: `The tool call '${name}' has no id (Ollama before ids were added sends none); the deterministic id ${id} was minted.`,
        callIndex: turn.calls.count,
        data: { id },
      });
    }
    if (!minted) seenIds.set(id, [...(seen ?? []), { name, args, chunk }]);
    if (!name) warn("call_name_missing", `The tool call ${id} has no function name.`, raw, turn.calls.count);
    const position = numberField(fn, "index");
    const providerFields = fieldsExcept(raw, ["id", "function"]);
    const call = turn.calls.open({ id, idMinted: minted, name, kind: "client", providerFields, ...(position !== null ? { providerIndex: position } : {}) });
    textBlock = null;
    thinkingBlock = null;
    // Some servers and relays send the arguments as a JSON string: finalize parses (or rejects) it as the final text.
    if (args !== undefined && args !== null) call.setFinal(args);
    turn.calls.end(call, { complete: true, emptyMeansNoArguments: true });
  };

  const onMessage = (message: Record<string, unknown>): void => {
    const thinking = stringField(message, "thinking");
    if (thinking) {
      textBlock = null;
      thinkingBlock ??= turn.openBlock<Extract<ContentBlock, { type: "thinking" }>>({ type: "thinking", thinking: "", signature: null });
      turn.appendReasoning(thinkingBlock, thinking);
    }
    const content = stringField(message, "content");
    if (content) {
      thinkingBlock = null;
      textBlock ??= turn.openBlock<Extract<ContentBlock, { type: "text" }>>({ type: "text", text: "" });
      turn.appendText(textBlock, content);
      if (!thinkMarkupReported && content.includes("<think>")) {
        thinkMarkupReported = true;
        // Splitting it out would be a guess about the model's template: it stays in the text.
        turn.diagnostic({
          code: "think_markup_in_content",
          severity: "info",
          message: "The content holds <think> markup (the model's reasoning leaked into the text because the server did not separate it); it was kept in the text as sent.",
        });
      }
    }
    if (Array.isArray(message.tool_calls)) for (const call of message.tool_calls) onToolCall(call);
    else if (message.tool_calls !== undefined && message.tool_calls !== null) warn("tool_calls_not_array", "message.tool_calls is not an array; it was ignored.", message.tool_calls);
  };

  const push = (event: ProviderEvent): void => {
    const data = event.data;
    if (!isPlainObject(data)) {
      turn.diagnostic({ code: "non_json_data", severity: "warning", message: "A line is not a JSON object; it was ignored.", data: event });
      return;
    }
    if (data.error !== undefined) {
      const message = typeof data.error === "string" ? data.error : (stringField(data.error, "message") ?? JSON.stringify(data.error));
      turn.setError({ type: "error", message, raw: data });
      turn.diagnostic({ code: "stream_error", severity: "error", message: `Ollama sent an error in the stream: ${message}`, data });
      return;
    }
    if (done) {
      ignoreAfterEnd("event_after_done", "the line with done: true", "chunk");
      return;
    }
    if (!started) {
      started = true;
      createdAt = stringField(data, "created_at");
      turn.startMessage(null, stringField(data, "model"));
    }
    chunk++;
    if (isPlainObject(data.message)) onMessage(data.message);
    if (data.done === true) {
      done = true;
      doneReason = stringField(data, "done_reason");
      turn.setUsage(normalizeOllamaUsage(data));
    }
  };

  const flush = (): TurnEnd => {
    if (doneReason !== null) {
      let mapped: FinishReason = DONE_REASONS[doneReason] ?? "other";
      // Ollama says "stop" when the model called tools too.
      if (mapped === "stop" && turn.calls.count > 0) mapped = "tool_calls";
      turn.setFinish(doneReason, mapped);
      if (!(doneReason in DONE_REASONS)) {
        turn.diagnostic({ code: "unknown_done_reason", severity: "info", message: `done_reason '${doneReason}' is not known; it was mapped to 'other'.` });
      }
    } else if (done) {
      turn.setFinish(null, turn.calls.count > 0 ? "tool_calls" : "stop");
      turn.diagnostic({ code: "done_reason_missing", severity: "info", message: "The last line has done: true but no done_reason (older Ollama); the finish reason was taken as a normal stop." });
    }
    const status = endStatus(turn, done, started, { code: "stream_ended_without_done", message: "The stream ended before a line with done: true; the turn is incomplete.", empty: "The stream ended before any line." });
    // Calls are whole on arrival, so none is ever left open to truncate.
    return { status, truncationCause: turn.hasError ? "stream_error" : "stream_ended" };
  };

  return { push, flush, emptyMeansNoArguments: true };
}

export function normalizeOllamaUsage(data: Record<string, unknown>): Usage {
  const raw: Record<string, unknown> = {};
  for (const key of ["prompt_eval_count", "eval_count", "total_duration", "load_duration", "prompt_eval_duration", "eval_duration"]) {
    if (data[key] !== undefined) raw[key] = data[key];
  }
  const [input, output] = [numberField(data, "prompt_eval_count"), numberField(data, "eval_count")];
  return usageOf(raw, { inputTokens: input, outputTokens: output, totalTokens: sumOf(input, output) });
}

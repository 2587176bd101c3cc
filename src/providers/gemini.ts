import { isPlaceholderId, type TurnBuilder, type TurnEnd } from "../assemble/turn.js";
import type { ToolCallAssembler } from "../assemble/tool-call.js";
import type { ContentBlock, Diagnostic, FinishReason, ProviderEvent, TruncationCause, Usage } from "../types.js";
import { endStatus, type ProviderCodec } from "./codec.js";
import { isPlainObject, samePath } from "../json/shape.js";
import { jsonStringBody } from "../json/stringify.js";
import { mintCallId } from "../util/hash.js";
import { numberField, stringField, usageOf } from "./fields.js";
import type { DiagnosticCode } from "../diagnostics/codes.js";

/**
 * Google Gemini `streamGenerateContent` decoder (Gemini API and Vertex), for the SSE form
 * (`alt=sse`) and the JSON-array form alike: both carry one `GenerateContentResponse` per event.
 *
 * Calls come in two shapes:
 * - classic: a `functionCall` part arrives whole, `args` an object. That object is the call's
 *   `final` source; `args` absent means "no arguments" (`source: "empty"`).
 * - streamed arguments (Vertex `streamFunctionCallArguments`): a part with `name` and
 *   `willContinue: true` opens the call, later parts carry `partialArgs` leaves addressed by JSON
 *   paths, and the first part without `willContinue: true` ends it. The leaves are written out as
 *   JSON text in the order they arrive (the model emits them in document order), so the call's
 *   source is `delta`, live previews work as for any delta stream, and `rawArguments` is that
 *   text: toolwire's serialization of the leaves, not bytes from the wire.
 */

const FINISH_REASONS: Record<string, FinishReason> = {
  STOP: "stop",
  MAX_TOKENS: "length",
  SAFETY: "content_filter",
  RECITATION: "content_filter",
  BLOCKLIST: "content_filter",
  PROHIBITED_CONTENT: "content_filter",
  SPII: "content_filter",
  IMAGE_SAFETY: "content_filter",
  IMAGE_PROHIBITED_CONTENT: "content_filter",
  // The model tried to call a tool and the service rejected the call: no usable call arrives,
  // and an agent loop should retry rather than read the leftover text as an answer.
  MALFORMED_FUNCTION_CALL: "error",
  UNEXPECTED_TOOL_CALL: "error",
  TOO_MANY_TOOL_CALLS: "error",
  LANGUAGE: "other",
  OTHER: "other",
  FINISH_REASON_UNSPECIFIED: "other",
};

const FILTER_REASONS = new Set(["SAFETY", "RECITATION", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII", "IMAGE_SAFETY", "IMAGE_PROHIBITED_CONTENT"]);
const REJECTED_CALL_REASONS = new Set(["MALFORMED_FUNCTION_CALL", "UNEXPECTED_TOOL_CALL", "TOO_MANY_TOOL_CALLS"]);

/** Part kinds that are not text or calls but are expected (code execution, media): kept verbatim without comment. */
const KNOWN_OPAQUE_PARTS = new Set(["executableCode", "codeExecutionResult", "inlineData", "fileData"]);

interface StreamingCall {
  call: ToolCallAssembler;
  writer: PartialArgsWriter;
}

export function geminiCodec(turn: TurnBuilder): ProviderCodec {
  let started = false;
  let responseId: string | null = null;
  let finishRaw: string | null = null;
  let promptBlocked = false;
  let usage: Record<string, unknown> = {};
  let textBlock: Extract<ContentBlock, { type: "text" }> | null = null;
  let thinkingBlock: Extract<ContentBlock, { type: "thinking" }> | null = null;
  let streaming: StreamingCall | null = null;
  let extraCandidatesReported = false;

  const warn = (code: DiagnosticCode, message: string, data?: unknown, callIndex?: number): void => {
    turn.diagnostic({ code, message, severity: "warning", ...(callIndex !== undefined ? { callIndex } : {}), ...(data !== undefined ? { data } : {}) });
  };

  const start = (data: Record<string, unknown>): void => {
    if (started) return;
    started = true;
    responseId = stringField(data, "responseId");
    turn.startMessage(responseId, stringField(data, "modelVersion"));
  };

  const mintId = (name: string, argumentsText: string): string => {
    // The response id joins the hash so that a later turn repeating the same call at the same
    // position gets a different id: a history keyed by id must not pair one result with both.
    const id = mintCallId("gemini_tw_", name, `${responseId ?? ""}\u0000${argumentsText}`, turn.calls.count);
    turn.diagnostic({
      code: "call_id_minted",
      severity: "info",
      message: `The functionCall for '${name}' has no id (Gemini often sends none); the deterministic id ${id} was minted by toolwire.`,
      callIndex: turn.calls.count,
      data: { id },
    });
    return id;
  };

  const openCall = (fc: Record<string, unknown>, signature: string | null, argumentsText: string, startInput?: unknown): ToolCallAssembler => {
    const name = stringField(fc, "name") ?? "";
    if (!name) warn("call_name_missing", "A functionCall carries arguments but no name (and no call was open to continue); it was kept as a call without a name, which cannot be executed by name.", fc, turn.calls.count);
    const sent = stringField(fc, "id");
    const minted = !sent || isPlaceholderId(sent);
    const id = minted ? mintId(name, argumentsText) : sent;
    const providerFields: Record<string, unknown> = {};
    if (signature !== null) providerFields.thoughtSignature = signature;
    return turn.calls.open({ id, idMinted: minted, name, kind: "client", providerFields, ...(startInput !== undefined ? { start: startInput } : {}) });
  };

  const closeStreaming = (complete: boolean, truncationCause?: TruncationCause): void => {
    const open = streaming;
    if (!open) return;
    streaming = null;
    // A truncated call keeps its text as far as it got: closing it would fake an end.
    if (complete) turn.calls.appendArguments(open.call, open.writer.flush());
    reportWriter(open);
    if (open.writer.broken) open.call.markBroken();
    turn.calls.end(open.call, { complete, emptyMeansNoArguments: true, ...(truncationCause ? { truncationCause } : {}) });
  };

  const reportWriter = (open: StreamingCall): void => {
    for (const diagnostic of open.writer.takeDiagnostics()) turn.diagnostic({ ...diagnostic, callIndex: open.call.index });
  };

  const applyLeaves = (open: StreamingCall, partialArgs: unknown): void => {
    if (partialArgs === undefined) return;
    if (!Array.isArray(partialArgs)) turn.calls.appendArguments(open.call, open.writer.breakOff("partialArgs is not an array", partialArgs));
    else for (const leaf of partialArgs) turn.calls.appendArguments(open.call, open.writer.leaf(leaf));
    reportWriter(open);
  };

  const onFunctionCall = (fc: Record<string, unknown>, signature: string | null): void => {
    const name = stringField(fc, "name");
    const continues = fc.willContinue === true;
    const hasPartial = fc.partialArgs !== undefined;
    const args = fc.args === null ? undefined : fc.args;

    if (name !== null) {
      if (streaming) {
        // The open call promised another part (willContinue) and a new call began instead: it
        // never received its end marker, so it is not executable.
        warn(
          "call_superseded",
          `A new functionCall ('${name}') began while call ${streaming.call.index} ('${streaming.call.name}') was still open; the open call never received its last part and was closed as truncated.`,
          undefined,
          streaming.call.index,
        );
        closeStreaming(false, "stream_ended");
      }
      if (!continues && !hasPartial) {
        // Classic whole call: its args object is a complete snapshot.
        const call = openCall(fc, signature, args === undefined ? "" : JSON.stringify(args));
        if (args !== undefined) call.setFinal(args);
        turn.calls.end(call, { complete: true, emptyMeansNoArguments: true });
        return;
      }
      // Arguments present when a streamed call opens are its start input; leaves then win.
      streaming = { call: openCall(fc, signature, "", args), writer: new PartialArgsWriter() };
    } else {
      if (!streaming) {
        if (!hasPartial && args === undefined) {
          turn.diagnostic({ code: "orphan_function_call_part", severity: "info", message: "A functionCall part without a name arrived while no call was open; it carries no arguments and was ignored.", data: fc });
          return;
        }
        streaming = { call: openCall(fc, signature, ""), writer: new PartialArgsWriter() };
      } else {
        const open = streaming;
        const id = stringField(fc, "id");
        if (id && !isPlaceholderId(id) && id !== (open.call.providerId ?? open.call.id)) {
          warn("call_id_changed", `A continuation part of call ${open.call.index} carries id '${id}', not '${open.call.id}'; the first id was kept.`, fc, open.call.index);
        }
        if (signature !== null) {
          const fields = (open.call.providerFields ??= {});
          if (fields.thoughtSignature === undefined) fields.thoughtSignature = signature;
          else if (fields.thoughtSignature !== signature) {
            warn("thought_signature_changed", `A continuation part of call ${open.call.index} carries a different thoughtSignature; the first was kept.`, { thoughtSignature: signature }, open.call.index);
          }
        }
      }
      // A whole args object on a continuation part is a snapshot of the finished call.
      if (args !== undefined) streaming.call.setFinal(args);
    }

    applyLeaves(streaming, fc.partialArgs);
    // Per the FunctionCall docs, willContinue says another part of this call follows; a part
    // without it (usually an empty `{}`, sometimes the last partialArgs part) is the call's last.
    if (!continues) closeStreaming(true);
  };

  const onText = (text: string, thought: boolean, signature: string | null): void => {
    if (thought) {
      textBlock = null;
      if (!thinkingBlock) thinkingBlock = turn.openBlock<Extract<ContentBlock, { type: "thinking" }>>({ type: "thinking", thinking: "", signature: null });
      turn.appendReasoning(thinkingBlock, text);
      if (signature !== null) {
        // The signature seals the thought so far; later thought text is a new block.
        thinkingBlock.signature = signature;
        thinkingBlock = null;
      }
      return;
    }
    thinkingBlock = null;
    if (text.length > 0) {
      if (!textBlock) textBlock = turn.openBlock<Extract<ContentBlock, { type: "text" }>>({ type: "text", text: "" });
      turn.appendText(textBlock, text);
    }
    if (signature !== null) {
      // Text blocks have no signature field: keep it in order as an opaque block, so the turn can
      // be replayed with the signature on the part that carried it.
      turn.openBlock({ type: "opaque", blockType: "thought_signature", value: { thoughtSignature: signature, part: "text" } });
      textBlock = null;
    }
  };

  const onPart = (part: unknown): void => {
    if (!isPlainObject(part)) {
      warn("part_not_object", "A content part is not an object; it was ignored.", part);
      return;
    }
    const signature = stringField(part, "thoughtSignature");
    if (isPlainObject(part.functionCall)) {
      textBlock = null;
      thinkingBlock = null;
      onFunctionCall(part.functionCall, signature);
      return;
    }
    if (typeof part.text === "string") {
      onText(part.text, part.thought === true, signature);
      return;
    }
    textBlock = null;
    thinkingBlock = null;
    const kind = Object.keys(part).find((key) => key !== "thoughtSignature" && key !== "thought") ?? "unknown";
    turn.openBlock({ type: "opaque", blockType: kind, value: part });
    if (!KNOWN_OPAQUE_PARTS.has(kind)) {
      turn.diagnostic({ code: "unknown_part_type", severity: "info", message: `Part type '${kind}' is not interpreted; it was kept verbatim.`, data: part });
    }
  };

  const onFinishReason = (reason: string, candidate: Record<string, unknown>): void => {
    finishRaw = reason;
    const finishMessage = stringField(candidate, "finishMessage");
    if (streaming) {
      warn(
        "call_open_at_finish",
        `The candidate finished (${reason}) while call ${streaming.call.index} ('${streaming.call.name}') still expected more parts (willContinue); it is closed as truncated at the end of the stream.`,
        undefined,
        streaming.call.index,
      );
    }
    if (reason === "MAX_TOKENS") {
      warn("max_tokens", "The model stopped at its output token limit (MAX_TOKENS).", finishMessage ?? undefined);
    } else if (FILTER_REASONS.has(reason)) {
      warn("content_filtered", `The candidate was stopped by a content filter (${reason}).`, { finishMessage, safetyRatings: candidate.safetyRatings ?? null });
    } else if (REJECTED_CALL_REASONS.has(reason)) {
      turn.diagnostic({
        code: reason === "MALFORMED_FUNCTION_CALL" ? "malformed_function_call" : reason === "UNEXPECTED_TOOL_CALL" ? "unexpected_tool_call" : "too_many_tool_calls",
        severity: "error",
        message:
          reason === "MALFORMED_FUNCTION_CALL"
            ? "Gemini rejected the function call the model generated as malformed (MALFORMED_FUNCTION_CALL); no call was delivered. Retry the turn."
            : reason === "UNEXPECTED_TOOL_CALL"
              ? "The model called a tool that the request did not make available (UNEXPECTED_TOOL_CALL); no call was delivered."
              : "The model generated more tool calls than the service allows (TOO_MANY_TOOL_CALLS).",
        data: { finishReason: reason, finishMessage },
      });
    } else if (!(reason in FINISH_REASONS)) {
      turn.diagnostic({ code: "unknown_finish_reason", severity: "info", message: `finishReason '${reason}' is not known; it was mapped to 'other'.`, data: { finishMessage } });
    }
  };

  const onCandidate = (candidate: Record<string, unknown>): void => {
    const content = isPlainObject(candidate.content) ? candidate.content : null;
    if (content && Array.isArray(content.parts)) for (const part of content.parts) onPart(part);
    const reason = stringField(candidate, "finishReason");
    if (reason !== null) onFinishReason(reason, candidate);
  };

  const onError = (data: Record<string, unknown>): void => {
    const error = isPlainObject(data.error) ? data.error : { message: String(data.error) };
    const message = stringField(error, "message") ?? "The provider reported an error mid-stream.";
    const type = stringField(error, "status") ?? (numberField(error, "code") !== null ? String(numberField(error, "code")) : "error");
    turn.setError({ type, message, raw: data });
    turn.diagnostic({ code: "stream_error", severity: "error", message: `Gemini sent an error in the stream: ${message}`, data });
  };

  const push = (event: ProviderEvent): void => {
    const data = event.data;
    if (!isPlainObject(data)) {
      turn.diagnostic({ code: "non_json_data", severity: "warning", message: "An event payload is not a JSON object; it was ignored.", data: event });
      return;
    }
    if (data.error !== undefined) {
      onError(data);
      return;
    }
    start(data);
    if (isPlainObject(data.usageMetadata)) {
      // usageMetadata is cumulative on every chunk: overwrite field by field, never add.
      usage = { ...usage, ...data.usageMetadata };
      turn.setUsage(normalizeGeminiUsage(usage));
    }
    const feedback = isPlainObject(data.promptFeedback) ? data.promptFeedback : null;
    const blockReason = stringField(feedback, "blockReason");
    if (blockReason !== null) {
      promptBlocked = true;
      finishRaw ??= blockReason;
      warn("prompt_blocked", `Gemini blocked the prompt (${blockReason}); no candidate was generated.`, feedback);
    }
    if (!Array.isArray(data.candidates)) return;
    data.candidates.forEach((candidate, position) => {
      if (!isPlainObject(candidate)) return;
      const index = numberField(candidate, "index") ?? position;
      if (index !== 0) {
        if (!extraCandidatesReported) {
          extraCandidatesReported = true;
          warn("extra_candidates_ignored", `The response holds several candidates; only candidate 0 is decoded (candidate ${index} was ignored).`);
        }
        return;
      }
      onCandidate(candidate);
    });
  };

  const flush = (): TurnEnd => {
    if (finishRaw !== null) {
      // A blocked prompt has no candidate: its blockReason stands in for the finish reason.
      let mapped: FinishReason = promptBlocked && turn.calls.count === 0 && !turn.hasError ? "content_filter" : (FINISH_REASONS[finishRaw] ?? "other");
      // STOP is Gemini's reason for a turn that called tools too (there is no tool reason).
      if (mapped === "stop" && turn.calls.count > 0) mapped = "tool_calls";
      turn.setFinish(finishRaw, mapped);
    }
    const truncationCause = turn.openCallTruncationCause(finishRaw === "MAX_TOKENS");
    if (streaming) closeStreaming(false, truncationCause);
    const status = endStatus(turn, finishRaw !== null, started, { code: "stream_ended_without_finish_reason", message: "The stream ended without a finishReason; the turn is incomplete.", empty: "The stream ended before any response chunk." });
    return { status, truncationCause };
  };

  return { push, flush, emptyMeansNoArguments: true };
}

export function normalizeGeminiUsage(raw: Record<string, unknown>): Usage {
  // candidatesTokenCount excludes thinking; thoughtsTokenCount is reported apart (and is part
  // of totalTokenCount, which is taken as the provider states it).
  return usageOf({ ...raw }, {
    inputTokens: numberField(raw, "promptTokenCount"),
    outputTokens: numberField(raw, "candidatesTokenCount"),
    totalTokens: numberField(raw, "totalTokenCount"),
    cacheReadInputTokens: numberField(raw, "cachedContentTokenCount"),
    reasoningTokens: numberField(raw, "thoughtsTokenCount"),
  });
}

// ---------------------------------------------------------------------------------------------
// Streamed function-call arguments: JSON-path leaves to JSON text.

export type JsonPathSegment = string | number;

/**
 * Parses the RFC 9535 subset the API uses for leaves: `$`, `.name`, `['name']` / `["name"]`,
 * `[index]`. Returns null for anything else (wildcards, filters, slices, negative indexes).
 */
export function parseLeafPath(path: string): JsonPathSegment[] | null {
  if (!path.startsWith("$")) return null;
  const segments: JsonPathSegment[] = [];
  let i = 1;
  while (i < path.length) {
    const ch = path[i];
    if (ch === ".") {
      let j = i + 1;
      while (j < path.length && path[j] !== "." && path[j] !== "[") j++;
      const name = path.slice(i + 1, j);
      if (name === "" || name === "*") return null;
      segments.push(name);
      i = j;
    } else if (ch === "[") {
      const quote = path[i + 1];
      if (quote === "'" || quote === '"') {
        let j = i + 2;
        let name = "";
        while (j < path.length && path[j] !== quote) {
          if (path[j] === "\\") {
            const next = path[j + 1];
            if (next === undefined) return null;
            const simple: Record<string, string> = { b: "\b", f: "\f", n: "\n", r: "\r", t: "\t", "/": "/", "\\": "\\", "'": "'", '"': '"' };
            if (next === "u") {
              const hex = path.slice(j + 2, j + 6);
              if (!/^[0-9a-fA-F]{4}$/.test(hex)) return null;
              name += String.fromCharCode(parseInt(hex, 16));
              j += 6;
              continue;
            }
            const mapped = simple[next];
            if (mapped === undefined) return null;
            name += mapped;
            j += 2;
            continue;
          }
          name += path[j];
          j++;
        }
        if (path[j] !== quote || path[j + 1] !== "]") return null;
        segments.push(name);
        i = j + 2;
      } else {
        const close = path.indexOf("]", i);
        if (close < 0) return null;
        const digits = path.slice(i + 1, close).trim();
        if (!/^(0|[1-9][0-9]*)$/.test(digits)) return null;
        const index = Number(digits);
        if (!Number.isSafeInteger(index)) return null;
        segments.push(index);
        i = close + 1;
      }
    } else {
      return null;
    }
  }
  return segments;
}

interface Frame {
  kind: "object" | "array";
  segment: JsonPathSegment | null;
  keys: Set<string>;
  count: number;
}

type Leaf = { kind: "string"; text: string; continues: boolean } | { kind: "scalar"; json: string } | { kind: "none" };

function readLeafValue(entry: Record<string, unknown>): Leaf | { kind: "invalid"; reason: string } {
  if (typeof entry.stringValue === "string") return { kind: "string", text: entry.stringValue, continues: entry.willContinue === true };
  if (entry.numberValue !== undefined) {
    const n = entry.numberValue;
    if (typeof n !== "number" || !Number.isFinite(n)) return { kind: "invalid", reason: `numberValue ${JSON.stringify(n)} is not a finite number` };
    return { kind: "scalar", json: JSON.stringify(n) };
  }
  if (entry.boolValue !== undefined) {
    if (typeof entry.boolValue !== "boolean") return { kind: "invalid", reason: "boolValue is not a boolean" };
    return { kind: "scalar", json: entry.boolValue ? "true" : "false" };
  }
  if (entry.nullValue !== undefined) return { kind: "scalar", json: "null" };
  return { kind: "none" };
}

/**
 * Turns `partialArgs` leaves into JSON text, one fragment per leaf, so that the fragments
 * concatenate to the arguments object. Containers open as paths descend into them and close when
 * a later path leaves them; strings stay open while their leaf says `willContinue`.
 *
 * JSON text cannot go back into a container it has closed, so a leaf that would need that (a
 * path out of document order, a repeated key, an array index that skips, a leaf where a container
 * already is) or that cannot be read (bad path, bad value) stops the writer: no more text is
 * written for the call, the call's text stays unterminated, and finalizing it yields
 * `invalid_json` with a diagnostic naming the leaf. Nothing is guessed and siblings are untouched.
 */
export class PartialArgsWriter {
  private readonly stack: Frame[] = [];
  private openString: JsonPathSegment[] | null = null;
  private opened = false;
  private brokenReason: string | null = null;
  private diagnostics: Diagnostic[] = [];

  get broken(): boolean {
    return this.brokenReason !== null;
  }

  takeDiagnostics(): Diagnostic[] {
    const out = this.diagnostics;
    this.diagnostics = [];
    return out;
  }

  /** Stops the writer; returns text that guarantees the call's text is not a complete object. */
  breakOff(reason: string, data?: unknown): string {
    if (this.brokenReason !== null) return "";
    this.brokenReason = reason;
    this.diagnostics.push({
      code: "partial_args_unusable",
      severity: "error",
      message: `The streamed arguments cannot be assembled: ${reason}. The call's arguments are not trusted; no further leaves were applied.`,
      ...(data !== undefined ? { data } : {}),
    });
    if (this.opened) return "";
    this.opened = true;
    return "{";
  }

  leaf(entry: unknown): string {
    if (this.brokenReason !== null) return "";
    if (!isPlainObject(entry)) return this.breakOff("a partialArgs entry is not an object", entry);
    const rawPath = stringField(entry, "jsonPath");
    const path = rawPath === null ? null : parseLeafPath(rawPath);
    if (path === null) return this.breakOff(`jsonPath ${JSON.stringify(entry.jsonPath)} is not a supported JSON path`, entry);
    if (path.length === 0) return this.breakOff("a leaf addresses the root ($), but arguments must be an object", entry);
    const value = readLeafValue(entry);
    if (value.kind === "invalid") return this.breakOff(`the leaf at ${rawPath} has an unusable value (${value.reason})`, entry);
    if (value.kind === "none") {
      this.diagnostics.push({ code: "partial_arg_without_value", severity: "info", message: `A partialArgs entry for ${rawPath} carries no value; it was ignored.`, data: entry });
      return "";
    }

    let out = "";
    if (!this.opened) {
      this.opened = true;
      this.stack.push({ kind: "object", segment: null, keys: new Set(), count: 0 });
      out += "{";
    }
    if (this.openString) {
      if (samePath(this.openString, path)) {
        if (value.kind !== "string") return out + this.breakOff(`a non-string value continues the string at ${rawPath}`, entry);
        out += jsonStringBody(value.text);
        if (!value.continues) {
          out += '"';
          this.openString = null;
        }
        return out;
      }
      this.diagnostics.push({
        code: "partial_arg_string_closed_implicitly",
        severity: "warning",
        message: `The string at ${formatPath(this.openString)} said more would follow (willContinue) but the next leaf is ${rawPath}; the string was ended there.`,
      });
      out += '"';
      this.openString = null;
    }

    const containers = path.slice(0, -1);
    const key = path[path.length - 1] as JsonPathSegment;
    let depth = 0;
    while (depth < containers.length && depth + 1 < this.stack.length && this.stack[depth + 1]?.segment === containers[depth]) depth++;
    while (this.stack.length - 1 > depth) out += (this.stack.pop() as Frame).kind === "object" ? "}" : "]";
    for (let i = depth; i < containers.length; i++) {
      const segment = containers[i] as JsonPathSegment;
      const prefix = this.place(segment);
      if (prefix === null) return out + this.breakOff(this.placementProblem(path, i), entry);
      const next = i + 1 < containers.length ? containers[i + 1] : key;
      const kind = typeof next === "number" ? "array" : "object";
      out += prefix + (kind === "object" ? "{" : "[");
      this.stack.push({ kind, segment, keys: new Set(), count: 0 });
    }
    const prefix = this.place(key);
    if (prefix === null) return out + this.breakOff(this.placementProblem(path, containers.length), entry);
    if (value.kind === "string") {
      out += prefix + '"' + jsonStringBody(value.text);
      if (value.continues) this.openString = path;
      else out += '"';
    } else {
      out += prefix + value.json;
    }
    return out;
  }

  /** Text that ends the arguments object (the call's last part arrived). */
  flush(): string {
    if (this.brokenReason !== null) return "";
    let out = "";
    if (this.openString) {
      this.diagnostics.push({
        code: "partial_arg_string_unterminated",
        severity: "warning",
        message: `The call ended while the string at ${formatPath(this.openString)} still said more would follow (willContinue); it was ended with the text received.`,
      });
      out += '"';
      this.openString = null;
    }
    while (this.stack.length > 0) out += (this.stack.pop() as Frame).kind === "object" ? "}" : "]";
    return out;
  }

  private place(segment: JsonPathSegment): string | null {
    const frame = this.stack[this.stack.length - 1] as Frame;
    if (frame.kind === "object") {
      if (typeof segment !== "string" || frame.keys.has(segment)) return null;
      const comma = frame.keys.size > 0 ? "," : "";
      frame.keys.add(segment);
      return comma + JSON.stringify(segment) + ":";
    }
    if (typeof segment !== "number" || segment !== frame.count) return null;
    frame.count++;
    return segment > 0 ? "," : "";
  }

  private placementProblem(path: JsonPathSegment[], at: number): string {
    const where = formatPath(path.slice(0, at));
    const segment = path[at];
    const frame = this.stack[this.stack.length - 1] as Frame;
    if (frame.kind === "object" && typeof segment === "number") return `${formatPath(path)} indexes ${where}, which is an object`;
    if (frame.kind === "array" && typeof segment === "string") return `${formatPath(path)} names a key in ${where}, which is an array`;
    if (frame.kind === "array") return `${formatPath(path)} is element ${String(segment)} of ${where}, but the next element there is ${frame.count} (leaves must arrive in document order)`;
    return `${formatPath(path)} goes back to key '${String(segment)}' of ${where}, which was already written (leaves must arrive in document order)`;
  }
}

function formatPath(path: readonly JsonPathSegment[]): string {
  return "$" + path.map((segment) => (typeof segment === "number" ? `[${segment}]` : /^[A-Za-z_][A-Za-z0-9_]*$/.test(segment) ? `.${segment}` : `[${JSON.stringify(segment)}]`)).join("");
}

import type { CodecEvent, ContentBlock, DecodedTurn, DecoderOptions, Diagnostic, FinishReason, ProviderName, ToolCall, TruncationCause, TurnError, TurnStatus, Usage } from "../types.js";
import { resolveLimits } from "../limits.js";
import { resolveTextCallOptions } from "../text-calls/options.js";
import { DiagnosticLog } from "./diagnostic-log.js";
import { TextCallBridge } from "./text-call-bridge.js";
import { TurnBlocks, type ReasoningBlock, type TextBlock } from "./turn-blocks.js";
import { TurnBudget } from "./turn-budget.js";
import { TurnCalls } from "./turn-calls.js";
import { boundedBlocks, omitted, tooDeepToKeep } from "./verbatim.js";

// Kept here for the modules that read ids off the wire (re-encoders) and import it from the turn.
export { isPlaceholderId } from "./call-ids.js";

export interface TurnEnd {
  status: TurnStatus;
  /** Why calls still open are truncated. */
  truncationCause: TruncationCause;
}

/**
 * Provider-independent turn state. Provider decoders translate wire events into calls on this
 * builder and on its `calls`; it coordinates the parts (blocks and their text, calls and their ids,
 * diagnostics, the turn's size budget, text calls), emits the CodecEvents and builds the
 * DecodedTurn: `finish` returns it.
 */
export class TurnBuilder {
  /** Where events go: the builder's own list until `drain`, or a caller's sink (`redirectTo`). */
  out: CodecEvent[] = [];
  readonly calls: TurnCalls;
  /** The text-call extractor (option `textCalls`), or null when off. */
  readonly textCalls: TextCallBridge | null;
  private readonly blocks: TurnBlocks;
  private readonly budget: TurnBudget;
  private readonly diagnostics = new DiagnosticLog();
  private usage: Usage | null = null;
  private rawFinishReason: string | null = null;
  private finishReason: FinishReason | null = null;
  private error: TurnError | null = null;
  private messageId: string | null = null;
  private model: string | null = null;
  private turn: DecodedTurn | null = null;

  constructor(
    readonly provider: ProviderName,
    private readonly options: DecoderOptions = {},
  ) {
    const limits = resolveLimits(options.limits);
    this.budget = new TurnBudget(limits.maxTurnChars, this);
    this.blocks = new TurnBlocks(options.retainText !== false, this.budget);
    this.calls = new TurnCalls(this, this.blocks, this.budget, limits, options.previews === true, options.maxPreviewDepth ?? limits.maxDepth);
    const textCalls = resolveTextCallOptions(options.textCalls);
    this.textCalls = textCalls ? new TextCallBridge(textCalls, this) : null;
  }

  /** Events produced since the last drain. */
  drain(): CodecEvent[] {
    const events = this.out;
    this.out = [];
    return events;
  }

  /** Redirects emitted events to `sink` until `restoreSink`: the hot path, with no closure per event. */
  redirectTo(sink: CodecEvent[]): CodecEvent[] {
    const own = this.out;
    this.out = sink;
    return own;
  }

  restoreSink(own: CodecEvent[]): void {
    this.out = own;
  }

  startMessage(messageId: string | null, model: string | null): void {
    this.messageId = messageId ?? this.messageId;
    this.model = model ?? this.model;
    this.out.push({ type: "message_start", messageId: this.messageId, model: this.model });
  }

  diagnostic(diagnostic: Diagnostic): void {
    this.diagnostics.add(diagnostic, this.out);
  }

  /** Opens a text-like block and returns it so the decoder can keep appending to it. */
  openBlock<B extends ContentBlock>(block: B): B {
    return this.blocks.open(block);
  }

  /**
   * The text a block received, as sent; null when text calls took markup out of `block.text` or
   * hold some of it back (then text did arrive, though `block.text` may be empty).
   */
  streamedText(block: TextBlock): string | null {
    return this.blocks.streamedText(block, this.textCalls === null || this.textCalls.router.keptWhole(block));
  }

  appendText(block: TextBlock, text: string): void {
    // With text calls on, plain text (most deltas) still comes straight back here.
    if (this.textCalls === null || this.textCalls.router.text(block, text)) this.blocks.appendText(block, text, text.length, this.out);
  }

  appendReasoning(block: ReasoningBlock, text: string): void {
    const router = this.textCalls?.router;
    if (!router || !router.readsReasoning || router.reasoning(block, text)) this.blocks.appendReasoning(block, text, text.length, this.out);
  }

  /** Text past the text-call extractor, into its block. */
  relayText(block: TextBlock, text: string): void {
    this.blocks.appendText(block, text, text.length, this.out);
  }

  /** Reasoning past the text-call extractor, into its block. */
  relayReasoning(block: ReasoningBlock, text: string): void {
    this.blocks.appendReasoning(block, text, text.length, this.out);
  }

  setFinish(raw: string | null, mapped: FinishReason | null): void {
    if (raw !== null) this.rawFinishReason = raw;
    if (mapped !== null) this.finishReason = mapped;
  }

  setUsage(usage: Usage): void {
    this.usage = usage;
  }

  setError(error: TurnError): void {
    this.error = error;
    this.textCalls?.router.failedGeneration(error.raw);
  }

  /**
   * Why calls still open at the end of the stream are truncated: a mid-stream error, else the
   * provider's output token limit (`hitTokenLimit`, read from its own stop value), else the stream
   * simply ended.
   */
  openCallTruncationCause(hitTokenLimit: boolean): TruncationCause {
    return this.error ? "stream_error" : hitTokenLimit ? "max_tokens" : "stream_ended";
  }

  get hasError(): boolean {
    return this.error !== null;
  }

  /**
   * Drops everything decoded so far (a provider that restarts the message mid-stream) and
   * returns a summary of what was dropped, so the caller can report it.
   */
  reset(): { blocks: ContentBlock[]; calls: ToolCall[]; text: string } {
    const calls = this.calls.restart();
    this.textCalls?.router.reset();
    const dropped = { blocks: this.blocks.list, calls, text: this.blocks.text() };
    this.blocks.list = [];
    this.rawFinishReason = null;
    this.finishReason = null;
    this.usage = null;
    return dropped;
  }

  /** Finalizes every open call as truncated and builds the turn. Idempotent. */
  finish(end: TurnEnd, emptyMeansNoArguments: boolean): { turn: DecodedTurn; events: CodecEvent[] } {
    if (this.turn) return { turn: this.turn, events: [] };
    if (this.budget.exceeded && end.status !== "error") end = { status: "incomplete", truncationCause: "limit_exceeded" };
    this.textCalls?.end(end, this.finishReason);
    const stoppedForLength = this.finishReason === "length";
    // A clean end without the provider's end signal: a call whose arguments already are one closed
    // object keeps them (the turn stays incomplete); anything still open is truncated.
    const endedCleanly = end.status === "incomplete" && end.truncationCause === "stream_ended" && !stoppedForLength;
    for (const call of this.calls.stillOpen()) {
      if (endedCleanly && !call.detached && call.formsClosedObject) {
        this.diagnostic({ code: "call_closed_at_stream_end", severity: "warning", message: `The stream ended without the provider's end marker for call ${call.index} (\`${call.name}\`), but its arguments already form one complete JSON object; they were kept (the turn is incomplete).`, callIndex: call.index, ...(call.providerIndex !== undefined ? { providerIndex: call.providerIndex } : {}) });
        this.calls.end(call, { complete: true, emptyMeansNoArguments });
        continue;
      }
      // Whatever the provider's own word for it (model_context_window_exceeded, …), a length stop cut the call.
      const cause = stoppedForLength && end.truncationCause === "stream_ended" ? "max_tokens" : end.truncationCause;
      this.calls.end(call, { complete: false, truncationCause: cause, emptyMeansNoArguments });
    }
    this.calls.settleDeferredEnds(stoppedForLength);
    const runnable = this.textCalls?.runnableCalls(end.status, this.finishReason) ?? 0;
    if (runnable > 0) {
      this.finishReason = "tool_calls";
      this.diagnostic({ code: "finish_reason_text_calls", severity: "info", message: `The provider stopped with '${this.rawFinishReason ?? "stop"}', and ${runnable} runnable tool call(s) were read from the text; the finish reason was taken as tool_calls.` });
    }
    if (this.usage && tooDeepToKeep(this.usage.raw)) this.usage = { ...this.usage, raw: omitted("The usage") };
    if (this.error?.raw !== undefined && tooDeepToKeep(this.error.raw)) this.error = { ...this.error, raw: omitted("The error") };
    const turn: DecodedTurn = {
      sequence: this.options.sequence ?? null,
      provider: this.provider,
      status: end.status,
      finishReason: end.status === "error" ? "error" : this.finishReason,
      rawFinishReason: this.rawFinishReason,
      text: this.blocks.text(),
      reasoning: this.blocks.reasoning(),
      toolCalls: this.calls.client.map((call) => this.calls.resultOf(call)),
      serverToolCalls: this.calls.server.map((call) => this.calls.resultOf(call)),
      blocks: boundedBlocks(this.blocks.list),
      usage: this.usage,
      messageId: this.messageId,
      model: this.model,
      error: this.error,
      diagnostics: this.diagnostics.kept,
    };
    this.turn = turn;
    this.out.push({ type: "finish", turn });
    return { turn, events: this.drain() };
  }
}

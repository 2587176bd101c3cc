import type {
  ArgumentSource,
  CodecEvent,
  ContentBlock,
  DecodedTurn,
  DecoderOptions,
  Diagnostic,
  FinishReason,
  ProviderName,
  ToolCall,
  TruncationCause,
  TurnError,
  TurnStatus,
  Usage,
} from "../types.js";
import { resolveLimits, type DecoderLimits } from "../limits.js";
import { exceedsDepth } from "../json/finalize.js";
import { ToolCallAssembler, type ToolCallInit } from "./tool-call.js";
import { resolveTextCallOptions } from "../text-calls/options.js";
import { TextCallRouter } from "../text-calls/router.js";

/**
 * Deepest nesting kept in data the turn carries verbatim (diagnostic data, opaque blocks, raw
 * usage and errors, provider fields). Deeper values are replaced by a note: a consumer's
 * JSON.stringify would otherwise overflow the stack on a turn built from a hostile stream.
 */
const VERBATIM_DEPTH = 320;

/**
 * Diagnostics kept per code. A stream of garbage lines yields one diagnostic per line, each many
 * times the size of its line: past this count they are only counted, in `diagnostics_suppressed`.
 */
const DIAGNOSTICS_PER_CODE = 100;

function omitted(what: string): { omitted: string } {
  return { omitted: `${what} nested deeper than ${VERBATIM_DEPTH} levels; not kept` };
}

function bounded<T>(value: T, what: string): T | { omitted: string } {
  return typeof value === "object" && value !== null && exceedsDepth(value, VERBATIM_DEPTH) ? omitted(what) : value;
}

export interface OpenCallInit extends Omit<ToolCallInit, "index"> {
  start?: unknown;
}

export interface TurnEnd {
  status: TurnStatus;
  /** Why calls still open are truncated. */
  truncationCause: TruncationCause;
}

type TextLikeBlock = Extract<ContentBlock, { type: "text" } | { type: "thinking" } | { type: "reasoning" }>;

/**
 * Provider-independent turn state: text and reasoning blocks, calls in the order they opened,
 * finish reason, usage, errors and diagnostics. Provider decoders translate wire events into
 * calls on this builder; it emits the CodecEvents and builds the DecodedTurn.
 */
export class TurnBuilder {
  private out: CodecEvent[] = [];
  private blocks: ContentBlock[] = [];
  private blockPositions = new WeakMap<ContentBlock, number>();
  private calls: ToolCallAssembler[] = [];
  private serverCalls: ToolCallAssembler[] = [];
  private finishedCalls = new Map<ToolCallAssembler, ToolCall>();
  private diagnostics: Diagnostic[] = [];
  private usage: Usage | null = null;
  private rawFinishReason: string | null = null;
  private finishReason: FinishReason | null = null;
  private error: TurnError | null = null;
  private messageId: string | null = null;
  private model: string | null = null;
  private turn: DecodedTurn | null = null;
  private readonly previews: boolean;
  private readonly limits: Required<DecoderLimits>;
  /** Characters of text, reasoning and arguments held, against limits.maxTurnChars. */
  private heldChars = 0;
  private overLimit = false;
  private droppedCalls = 0;
  private droppedCallsDiagnostic: Diagnostic | null = null;
  private readonly diagnosticCounts = new Map<string, number>();
  private suppressed: Diagnostic | null = null;
  /** The text-call extractor (option `textCalls`), or null when off. */
  private readonly textCalls: TextCallRouter<ToolCallAssembler> | null;
  private readonly textOrigins = new WeakMap<ToolCallAssembler, { source: ArgumentSource; syntax: string }>();

  constructor(
    readonly provider: ProviderName,
    private readonly options: DecoderOptions = {},
  ) {
    this.previews = options.previews === true;
    this.limits = resolveLimits(options.limits);
    const textCalls = resolveTextCallOptions(options.textCalls);
    this.textCalls = textCalls
      ? new TextCallRouter(textCalls, {
          emitText: (block, text) => this.emitText(block, text),
          emitReasoning: (block, text) => this.emitReasoning(block, text),
          openCall: (name, syntax, source) => this.openTextCall(name, syntax, source),
          appendArguments: (call, fragment) => this.appendArguments(call, fragment),
          endCall: (call, complete, cause) => {
            this.endCall(call, { complete, ...(cause ? { truncationCause: cause } : {}), emptyMeansNoArguments: true });
          },
          diagnostic: (diagnostic) => this.diagnostic(diagnostic),
        })
      : null;
  }

  /** A call read from text: a minted id derived from its position, never one a provider sent in this turn. */
  private openTextCall(name: string, syntax: string, source: ArgumentSource): ToolCallAssembler {
    const taken = new Set([...this.calls, ...this.serverCalls].map((call) => call.id));
    let id = `tw_text_${this.calls.length}`;
    for (let n = 1; taken.has(id); n++) id = `tw_text_${this.calls.length}_${n}`;
    const call = this.openCall({ id, name, kind: "client" });
    this.textOrigins.set(call, { source, syntax });
    return call;
  }

  /** Counts held characters; past the turn limit, nothing more is kept and the turn ends incomplete. */
  private admit(chars: number): boolean {
    if (this.overLimit) return false;
    if (this.heldChars + chars > this.limits.maxTurnChars) {
      this.overLimit = true;
      this.diagnostic({
        code: "turn_too_large",
        severity: "error",
        message: `The turn exceeded ${this.limits.maxTurnChars} characters of text and arguments; the rest of the stream was not kept and the turn is incomplete.`,
      });
      return false;
    }
    this.heldChars += chars;
    return true;
  }

  get limitExceeded(): boolean {
    return this.overLimit;
  }

  /** Events produced since the last drain. */
  drain(): CodecEvent[] {
    const events = this.out;
    this.out = [];
    return events;
  }

  /**
   * Runs `fn` with events appended straight to `sink`: the hot path of byte decoding, which
   * then allocates no intermediate array per wire event.
   */
  /**
   * Redirects emitted events to `sink` until `restoreSink` (the per-event hot path uses this pair
   * rather than `emitInto`, which allocates a closure per event).
   */
  redirectTo(sink: CodecEvent[]): CodecEvent[] {
    const own = this.out;
    this.out = sink;
    return own;
  }

  restoreSink(own: CodecEvent[]): void {
    this.out = own;
  }

  emitInto(sink: CodecEvent[], fn: () => void): void {
    const own = this.out;
    this.out = sink;
    try {
      fn();
    } finally {
      this.out = own;
    }
  }

  get finished(): boolean {
    return this.turn !== null;
  }

  startMessage(messageId: string | null, model: string | null): void {
    this.messageId = messageId ?? this.messageId;
    this.model = model ?? this.model;
    this.out.push({ type: "message_start", messageId: this.messageId, model: this.model });
  }

  diagnostic(diagnostic: Diagnostic): void {
    const seen = (this.diagnosticCounts.get(diagnostic.code) ?? 0) + 1;
    this.diagnosticCounts.set(diagnostic.code, seen);
    if (seen > DIAGNOSTICS_PER_CODE) {
      if (!this.suppressed) {
        this.suppressed = {
          code: "diagnostics_suppressed",
          severity: "warning",
          message: `More than ${DIAGNOSTICS_PER_CODE} diagnostics of one kind; the rest are only counted (data.counts).`,
          data: { counts: {} as Record<string, number> },
        };
        this.diagnostic(this.suppressed);
      }
      const counts = (this.suppressed.data as { counts: Record<string, number> }).counts;
      Object.defineProperty(counts, diagnostic.code, { value: (Object.hasOwn(counts, diagnostic.code) ? (counts[diagnostic.code] as number) : 0) + 1, enumerable: true, writable: true, configurable: true });
      return;
    }
    if (diagnostic.data !== undefined) diagnostic.data = bounded(diagnostic.data, "The data");
    this.diagnostics.push(diagnostic);
    this.out.push({ type: "diagnostic", diagnostic });
  }

  /** Opens a text-like block and returns it so the decoder can keep appending to it. */
  openBlock<B extends ContentBlock>(block: B): B {
    this.blockPositions.set(block, this.blocks.length);
    this.blocks.push(block);
    return block;
  }

  /**
   * The index text and reasoning deltas carry: the block's position in `turn.blocks`. Provider
   * indexes are not unique per block (a Responses item holds several content parts).
   */
  private positionOf(block: ContentBlock): number {
    return this.blockPositions.get(block) ?? this.blocks.indexOf(block);
  }

  /**
   * The text a block received, as sent: with text calls on, `block.text` lacks the calls' markup
   * (a block whose text was all one call is empty although text arrived).
   */
  streamedText(block: Extract<ContentBlock, { type: "text" }>): string {
    return this.textCalls?.receivedText(block) ?? block.text;
  }

  appendText(block: Extract<ContentBlock, { type: "text" }>, text: string): void {
    // With text calls on, plain text (most deltas) still comes straight back here.
    if (this.textCalls === null || this.textCalls.text(block, text)) this.emitText(block, text);
  }

  private emitText(block: Extract<ContentBlock, { type: "text" }>, text: string): void {
    if (text.length === 0 || !this.admit(text.length)) return;
    block.text += text;
    this.out.push({ type: "text_delta", index: this.positionOf(block), text });
  }

  appendReasoning(block: Extract<ContentBlock, { type: "thinking" } | { type: "reasoning" }>, text: string): void {
    if (this.textCalls === null || !this.textCalls.readsReasoning || this.textCalls.reasoning(block, text)) this.emitReasoning(block, text);
  }

  private emitReasoning(block: Extract<ContentBlock, { type: "thinking" } | { type: "reasoning" }>, text: string): void {
    if (text.length === 0 || !this.admit(text.length)) return;
    if (block.type === "thinking") block.thinking += text;
    else block.text += text;
    this.out.push({ type: "reasoning_delta", index: this.positionOf(block), text });
  }

  openCall(init: OpenCallInit): ToolCallAssembler {
    if (init.providerFields && exceedsDepth(init.providerFields, VERBATIM_DEPTH)) init = { ...init, providerFields: omitted("The provider fields") };
    const list = init.kind === "server" ? this.serverCalls : this.calls;
    const call = new ToolCallAssembler(
      { ...init, index: list.length },
      {
        previews: this.previews,
        maxPreviewDepth: this.options.maxPreviewDepth ?? this.limits.maxDepth,
        maxArgumentChars: this.limits.maxArgumentChars,
        maxDepth: this.limits.maxDepth,
      },
    );
    if (this.callCount >= this.limits.maxCallsPerTurn || this.overLimit) {
      // Over the limit the call is decoded into nothing: its events are dropped, and counted.
      call.detached = true;
      this.droppedCalls++;
      if (this.droppedCallsDiagnostic) {
        (this.droppedCallsDiagnostic.data as { dropped: number }).dropped = this.droppedCalls;
      } else {
        this.droppedCallsDiagnostic = {
          code: "too_many_calls",
          severity: "error",
          message: `The turn opened more than ${this.limits.maxCallsPerTurn} tool calls; later calls were dropped.`,
          data: { dropped: this.droppedCalls },
        };
        this.diagnostic(this.droppedCallsDiagnostic);
      }
      return call;
    }
    list.push(call);
    this.blocks.push({
      type: init.kind === "server" ? "server_tool_call" : "tool_call",
      callIndex: call.index,
      ...(init.providerIndex !== undefined ? { providerIndex: init.providerIndex } : {}),
    });
    if (init.start !== undefined) {
      const problem = call.setStart(init.start);
      if (problem) this.diagnostic(problem);
    }
    this.out.push({ type: "tool_call_start", index: call.index, id: call.id, name: call.name, kind: call.kind });
    return call;
  }

  appendArguments(call: ToolCallAssembler, fragment: string): void {
    if (call.detached) return;
    // The assembler's own flag, not a map lookup: this runs once per argument delta.
    if (call.finalized) {
      this.diagnostic({
        code: "delta_after_call_end",
        severity: "warning",
        message: `Arguments arrived for call ${call.index} after it was finalized; they were ignored.`,
        callIndex: call.index,
        data: { fragment },
      });
      return;
    }
    if (!this.admit(fragment.length)) return;
    const outcome = call.appendDelta(fragment);
    if (outcome === "overflow") {
      this.diagnostic({
        code: "arguments_too_large",
        severity: "error",
        message: `The arguments of call ${call.index} (${call.name}) exceeded ${this.limits.maxArgumentChars} characters; the rest was not kept.`,
        callIndex: call.index,
      });
    }
    if (outcome !== "appended") return;
    const event: CodecEvent = { type: "tool_call_delta", index: call.index, id: call.id, delta: fragment, kind: call.kind };
    if (this.previews) event.preview = call.previewValue;
    this.out.push(event);
  }

  endCall(call: ToolCallAssembler, options: { complete: boolean; truncationCause?: TruncationCause; emptyMeansNoArguments: boolean }): ToolCall {
    if (call.detached) return call.end(options).call;
    const done = this.finishedCalls.get(call);
    if (done) return done;
    let ended: ReturnType<ToolCallAssembler["end"]>;
    try {
      ended = call.end(options);
    } catch (error) {
      // finish() must not throw: a finalize bug costs this call, reported, not the turn.
      const reason = error instanceof Error ? error.message : String(error);
      ended = { call: call.fail(options.complete, reason), diagnostics: [] };
      this.diagnostic({
        code: "internal_error",
        severity: "error",
        message: `toolwire failed while finalizing call ${call.index}: ${reason}. Please report this with the recorded stream.`,
        callIndex: call.index,
      });
    }
    const { call: result, diagnostics } = ended;
    const origin = this.textOrigins.get(call);
    if (origin) {
      if (result.source !== null) result.source = origin.source as ArgumentSource;
      result.textSyntax = origin.syntax;
    }
    this.finishedCalls.set(call, result);
    for (const diagnostic of diagnostics) this.diagnostic(diagnostic);
    this.out.push({ type: "tool_call_end", call: result });
    return result;
  }

  isEnded(call: ToolCallAssembler): boolean {
    return this.finishedCalls.has(call);
  }

  setFinish(raw: string | null, mapped: FinishReason | null): void {
    if (raw !== null) this.rawFinishReason = raw;
    if (mapped !== null) this.finishReason = mapped;
  }

  get currentFinishReason(): FinishReason | null {
    return this.finishReason;
  }

  setUsage(usage: Usage): void {
    this.usage = usage;
  }

  get currentUsage(): Usage | null {
    return this.usage;
  }

  setError(error: TurnError): void {
    this.error = error;
    this.textCalls?.failedGeneration(error.raw);
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

  /** Calls that have not been finalized yet, in the order they opened. */
  openCalls(): ToolCallAssembler[] {
    return [...this.calls, ...this.serverCalls].filter((call) => !this.finishedCalls.has(call));
  }

  get callCount(): number {
    return this.calls.length + this.serverCalls.length;
  }

  /**
   * Drops everything decoded so far (a provider that restarts the message mid-stream) and
   * returns a summary of what was dropped, so the caller can report it.
   */
  reset(): { blocks: ContentBlock[]; calls: ToolCall[]; text: string } {
    const calls = [...this.calls, ...this.serverCalls].map((call) =>
      this.endCall(call, { complete: false, truncationCause: "message_restarted", emptyMeansNoArguments: false }),
    );
    const dropped = { blocks: this.blocks, calls, text: this.collectText() };
    this.blocks = [];
    this.calls = [];
    this.serverCalls = [];
    this.finishedCalls = new Map();
    this.rawFinishReason = null;
    this.finishReason = null;
    this.usage = null;
    return dropped;
  }

  private collectText(): string {
    return this.blocks.map((block) => (block.type === "text" ? block.text : "")).join("");
  }

  private collectReasoning(): string {
    return this.blocks
      .map((block) => (block.type === "thinking" ? block.thinking : block.type === "reasoning" ? block.text : ""))
      .join("");
  }

  /** Provider data kept as sent, bounded in depth so that the turn always serializes. */
  private boundVerbatimData(): void {
    this.blocks = this.blocks.map((block) => {
      if (block.type === "opaque" && exceedsDepth(block.value, VERBATIM_DEPTH)) return { ...block, value: omitted("The block") };
      if (block.type === "text" && block.citations && exceedsDepth(block.citations, VERBATIM_DEPTH)) return { ...block, citations: [] };
      return block;
    });
    if (this.usage && exceedsDepth(this.usage.raw, VERBATIM_DEPTH)) this.usage = { ...this.usage, raw: omitted("The usage") };
    if (this.error?.raw !== undefined && exceedsDepth(this.error.raw, VERBATIM_DEPTH)) this.error = { ...this.error, raw: omitted("The error") };
  }

  /**
   * Held text is passed on and text calls still open are truncated; a turn that stopped normally
   * with complete text calls is a tool-call turn.
   */
  private endTextCalls(end: TurnEnd): void {
    const textCalls = this.textCalls as TextCallRouter<ToolCallAssembler>;
    textCalls.end(end.status === "error" ? "stream_error" : this.finishReason === "length" ? "max_tokens" : end.truncationCause);
    if (textCalls.completeCalls > 0 && this.finishReason === "stop" && end.status === "complete") {
      this.finishReason = "tool_calls";
      this.diagnostic({
        code: "finish_reason_text_calls",
        severity: "info",
        message: `The provider stopped with '${this.rawFinishReason ?? "stop"}', and ${textCalls.completeCalls} tool call(s) were read from the text; the finish reason was taken as tool_calls.`,
      });
    }
  }

  /** Finalizes every open call as truncated and builds the turn. Idempotent. */
  finish(end: TurnEnd, emptyMeansNoArguments: boolean): { turn: DecodedTurn; events: CodecEvent[] } {
    if (this.turn) return { turn: this.turn, events: [] };
    if (this.overLimit && end.status !== "error") end = { status: "incomplete", truncationCause: "limit_exceeded" };
    if (this.textCalls) this.endTextCalls(end);
    for (const call of this.openCalls()) {
      this.endCall(call, { complete: false, truncationCause: end.truncationCause, emptyMeansNoArguments });
    }
    const resultOf = (call: ToolCallAssembler): ToolCall => this.finishedCalls.get(call) as ToolCall;
    this.boundVerbatimData();
    const turn: DecodedTurn = {
      sequence: this.options.sequence ?? null,
      provider: this.provider,
      status: end.status,
      finishReason: end.status === "error" ? "error" : this.finishReason,
      rawFinishReason: this.rawFinishReason,
      text: this.collectText(),
      reasoning: this.collectReasoning(),
      toolCalls: this.calls.map(resultOf),
      serverToolCalls: this.serverCalls.map(resultOf),
      blocks: this.blocks,
      usage: this.usage,
      messageId: this.messageId,
      model: this.model,
      error: this.error,
      diagnostics: this.diagnostics,
    };
    this.turn = turn;
    this.out.push({ type: "finish", turn });
    return { turn, events: this.drain() };
  }
}

export type { TextLikeBlock };

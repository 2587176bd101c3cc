import type {
  ArgumentSource,
  RepairCode,
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

/**
 * Repairs that complete or rewrite the argument text. In a turn the provider stopped at its output
 * limit, a call that needed one of them may simply be cut off, so it is reported as truncated.
 */
const TEXT_REPAIRS: ReadonlySet<RepairCode> = new Set<RepairCode>([
  "strip_code_fence",
  "strip_special_tokens",
  "python_literals",
  "invalid_escapes",
  "trailing_comma",
  "single_quotes",
  "missing_closing_brace",
  "jsonrepair",
]);

/** Placeholder ids some servers put on chunks that carry no id (`"null"`, `"None"`, `"undefined"`). */
const PLACEHOLDER_IDS: ReadonlySet<string> = new Set(["", "null", "None", "undefined", "nil", "NULL"]);

/** True when a provider id field holds no id: empty, or a serialized null of some language. */
export function isPlaceholderId(id: string): boolean {
  return PLACEHOLDER_IDS.has(id.trim());
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
  /** Whether text and reasoning are accumulated in their blocks (option `retainText`). */
  private readonly retainText: boolean;
  /** With `retainText` off: the blocks that received text (what `streamedText` still has to tell). */
  private readonly receivedText = new WeakSet<ContentBlock>();
  private readonly limits: Required<DecoderLimits>;
  /** Characters of text, reasoning and arguments held, against limits.maxTurnChars. */
  private heldChars = 0;
  private overLimit = false;
  private droppedCalls = 0;
  private droppedCallsDiagnostic: Diagnostic | null = null;
  private readonly diagnosticCounts = new Map<string, number>();
  private suppressed: Diagnostic | null = null;
  /** Every call id the provider sent in this turn (a minted id never equals one of them). */
  private sentIds = new Set<string>();
  /** The call that carries each id now: ids are unique within the turn. */
  private idOwners = new Map<string, ToolCallAssembler>();
  /** Next suffix to try when minting from a base id (keeps N duplicates of one id linear). */
  private mintSuffixes = new Map<string, number>();
  /**
   * Calls that closed with arguments that do not parse strictly: their tool_call_end waits for the
   * end of the turn, where a stop at the output limit makes them truncated rather than invalid.
   */
  private deferredEnds: Array<{ call: ToolCallAssembler; emptyMeansNoArguments: boolean }> = [];
  /** The text-call extractor (option `textCalls`), or null when off. */
  private readonly textCalls: TextCallRouter<ToolCallAssembler> | null;
  private readonly textOrigins = new WeakMap<ToolCallAssembler, { source: ArgumentSource; syntax: string }>();

  constructor(
    readonly provider: ProviderName,
    private readonly options: DecoderOptions = {},
  ) {
    this.previews = options.previews === true;
    this.retainText = options.retainText !== false;
    this.limits = resolveLimits(options.limits);
    const textCalls = resolveTextCallOptions(options.textCalls);
    this.textCalls = textCalls
      ? new TextCallRouter(textCalls, {
          emitText: (block, text) => this.emitText(block, text),
          emitReasoning: (block, text) => this.emitReasoning(block, text),
          emitTextReasoning: (block, text) => this.emitTextReasoning(block, text),
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
    // Checked against the id index, not a set built from every call: that was O(calls) per call.
    let id = `tw_text_${this.calls.length}`;
    for (let n = 1; this.isTaken(id); n++) id = `tw_text_${this.calls.length}_${n}`;
    const call = this.openCall({ id, idMinted: true, name, kind: "client" });
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
   * The text a block received, as sent; null when text calls took markup out of `block.text` or
   * hold some of it back (then text did arrive, though `block.text` may be empty).
   */
  streamedText(block: Extract<ContentBlock, { type: "text" }>): string | null {
    if (!this.retainText) return this.receivedText.has(block) ? null : "";
    return this.textCalls === null || this.textCalls.keptWhole(block) ? block.text : null;
  }

  appendText(block: Extract<ContentBlock, { type: "text" }>, text: string): void {
    // With text calls on, plain text (most deltas) still comes straight back here.
    if (this.textCalls === null || this.textCalls.text(block, text)) this.emitText(block, text);
  }

  private emitText(block: Extract<ContentBlock, { type: "text" }>, text: string): void {
    if (text.length === 0) return;
    if (!this.retainText) {
      if (this.overLimit) return;
      this.receivedText.add(block);
    } else {
      if (!this.admit(text.length)) return;
      block.text += text;
    }
    this.out.push({ type: "text_delta", index: this.positionOf(block), text });
  }

  /** Reasoning the text-call extractor read in a text block: kept in a reasoning block of its own. */
  private readonly textReasoning = new WeakMap<ContentBlock, Extract<ContentBlock, { type: "reasoning" }>>();

  private emitTextReasoning(block: Extract<ContentBlock, { type: "text" }>, text: string): void {
    let reasoning = this.textReasoning.get(block);
    if (!reasoning) {
      reasoning = this.openBlock<Extract<ContentBlock, { type: "reasoning" }>>({ type: "reasoning", text: "", ...(block.providerIndex !== undefined ? { providerIndex: block.providerIndex } : {}) });
      this.textReasoning.set(block, reasoning);
    }
    this.emitReasoning(reasoning, text);
  }

  appendReasoning(block: Extract<ContentBlock, { type: "thinking" } | { type: "reasoning" }>, text: string): void {
    if (this.textCalls === null || !this.textCalls.readsReasoning || this.textCalls.reasoning(block, text)) this.emitReasoning(block, text);
  }

  private emitReasoning(block: Extract<ContentBlock, { type: "thinking" } | { type: "reasoning" }>, text: string): void {
    if (text.length === 0) return;
    if (!this.retainText) {
      if (this.overLimit) return;
    } else {
      if (!this.admit(text.length)) return;
      if (block.type === "thinking") block.thinking += text;
      else block.text += text;
    }
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
      this.countDroppedCall();
      return call;
    }
    list.push(call);
    this.assignId(call, init.id, init.idMinted === true);
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

  private countDroppedCall(): void {
    this.droppedCalls++;
    if (this.droppedCallsDiagnostic) {
      (this.droppedCallsDiagnostic.data as { dropped: number }).dropped = this.droppedCalls;
      return;
    }
    this.droppedCallsDiagnostic = {
      code: "too_many_calls",
      severity: "error",
      message: `The turn opened more than ${this.limits.maxCallsPerTurn} tool calls; later calls were dropped.`,
      data: { dropped: this.droppedCalls },
    };
    this.diagnostic(this.droppedCallsDiagnostic);
  }

  /**
   * The id rule, one for every provider: ids are unique within a turn. A call whose sent id an
   * earlier call already carries gets a minted id `<sent>_tw<n>` (`providerId` keeps the sent one,
   * repair `minted_id`, diagnostic `call_id_duplicate`). A minted id never equals an id the
   * provider sent in the turn: it is checked against every sent id, and when a later call is sent
   * with an id toolwire had minted for an earlier call, the earlier call is minted another
   * (`call_id_reminted`) and the later one keeps the id it was sent with.
   */
  private assignId(call: ToolCallAssembler, id: string, minted: boolean): void {
    if (minted) {
      const unique = this.isTaken(id) ? this.mintFrom(id) : id;
      call.id = unique;
      call.idMinted = true;
      this.idOwners.set(unique, call);
      return;
    }
    this.sentIds.add(id);
    const owner = this.idOwners.get(id);
    if (!owner || owner === call) {
      call.id = id;
      this.idOwners.set(id, call);
      return;
    }
    if (owner.idMinted) {
      const replacement = this.mintFrom(owner.providerId ?? id);
      this.idOwners.set(replacement, owner);
      owner.renameId(replacement);
      call.id = id;
      this.idOwners.set(id, call);
      this.diagnostic({
        code: "call_id_reminted",
        severity: "warning",
        message: `The provider sent the id ${id} for call ${call.index}, which toolwire had minted for call ${owner.index}; call ${owner.index} now carries ${replacement} (its earlier events showed ${id}).`,
        callIndex: owner.index,
        data: { id, minted: replacement, callIndex: call.index },
      });
      return;
    }
    const replacement = this.mintFrom(id);
    call.id = replacement;
    call.providerId = id;
    call.idMinted = true;
    this.idOwners.set(replacement, call);
    this.diagnostic({
      code: "call_id_duplicate",
      severity: "warning",
      message: `Call ${call.index} arrived with the id ${id}, which call ${owner.index} already has; it was given the id ${replacement} (providerId keeps ${id}), so that each result pairs with its own call.`,
      callIndex: call.index,
      data: { id, minted: replacement, firstCallIndex: owner.index },
    });
  }

  private isTaken(id: string): boolean {
    return this.idOwners.has(id) || this.sentIds.has(id);
  }

  /** `<base>_tw<n>` with the first n from 2 on that no call carries and the provider never sent. */
  private mintFrom(base: string): string {
    let n = this.mintSuffixes.get(base) ?? 2;
    let id = `${base}_tw${n}`;
    while (this.isTaken(id)) id = `${base}_tw${++n}`;
    this.mintSuffixes.set(base, n + 1);
    return id;
  }

  /**
   * The provider's id arrived after the call opened under a minted one (Chat Completions servers
   * that send the id late): the call takes it, under the same uniqueness rule as at open.
   */
  adoptProviderId(call: ToolCallAssembler, id: string): void {
    if (call.detached || this.finishedCalls.has(call)) return;
    if (this.idOwners.get(call.id) === call) this.idOwners.delete(call.id);
    call.idMinted = false;
    call.providerId = undefined;
    this.assignId(call, id, false);
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
    // One literal per case: adding `preview` afterwards would change the object's shape and allocate
    // a second property store for every delta.
    this.out.push(
      this.previews
        ? { type: "tool_call_delta", index: call.index, id: call.id, delta: fragment, kind: call.kind, preview: call.previewValue }
        : { type: "tool_call_delta", index: call.index, id: call.id, delta: fragment, kind: call.kind },
    );
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
    this.markTextOrigin(call, result);
    this.finishedCalls.set(call, result);
    for (const diagnostic of diagnostics) this.diagnostic(diagnostic);
    if (options.complete && !strictlyParsed(result)) {
      // Whether this is a bad call or a cut-off one is told by the stop reason, which comes later.
      this.deferredEnds.push({ call, emptyMeansNoArguments: options.emptyMeansNoArguments });
      return result;
    }
    this.out.push({ type: "tool_call_end", call: result });
    this.openSplitCalls(call, result);
    return result;
  }

  /** A call read from text says so: its source (`text` or `failed_generation`) and its syntax. */
  private markTextOrigin(call: ToolCallAssembler, result: ToolCall): void {
    const origin = this.textOrigins.get(call);
    if (!origin) return;
    if (result.source !== null) result.source = origin.source;
    result.textSyntax = origin.syntax;
  }

  /**
   * Different complete objects glued at one call (servers that flatten parallel calls of one
   * tool): each object after the first becomes a call of the same name, opened after every call so
   * far, with a minted id whose `providerId` is the id the glued call was sent with.
   */
  private openSplitCalls(call: ToolCallAssembler, result: ToolCall): void {
    const objects = call.takeSplitObjects();
    if (objects.length === 0) return;
    const sentId = result.providerId ?? (call.idMinted ? undefined : result.id);
    for (const { value, raw } of objects) {
      const list = call.kind === "server" ? this.serverCalls : this.calls;
      if (this.callCount >= this.limits.maxCallsPerTurn || this.overLimit) {
        this.countDroppedCall();
        return;
      }
      const split = new ToolCallAssembler(
        {
          index: list.length,
          id: this.mintFrom(sentId ?? result.id),
          idMinted: true,
          name: call.name,
          kind: call.kind,
          ...(call.providerIndex !== undefined ? { providerIndex: call.providerIndex } : {}),
          ...(call.providerFields ? { providerFields: { ...call.providerFields } } : {}),
        },
        { previews: false },
      );
      if (sentId !== undefined) split.providerId = sentId;
      list.push(split);
      this.idOwners.set(split.id, split);
      this.blocks.push({ type: call.kind === "server" ? "server_tool_call" : "tool_call", callIndex: split.index, ...(call.providerIndex !== undefined ? { providerIndex: call.providerIndex } : {}) });
      this.out.push({ type: "tool_call_start", index: split.index, id: split.id, name: split.name, kind: split.kind });
      const settled = split.settleWith({ arguments: value, rawArguments: raw, source: result.source, complete: true, repairs: ["split_concatenated_calls"], error: null });
      this.finishedCalls.set(split, settled);
      this.diagnostic({
        code: "split_concatenated_calls",
        severity: "warning",
        message: `Call ${call.index} (\`${call.name}\`) carried several different complete JSON objects one after another (a server that flattened parallel calls of one tool); the object ${JSON.stringify(raw.length > 80 ? `${raw.slice(0, 80)}…` : raw)} became call ${split.index} with the id ${split.id}.`,
        callIndex: split.index,
        data: { from: call.index, id: split.id, providerId: sentId ?? null },
      });
      this.out.push({ type: "tool_call_end", call: settled });
    }
  }

  /**
   * The deferred ends, now that the stop reason is known: in a turn stopped at the output limit a
   * call whose arguments do not parse strictly was cut off (truncated, cause max_tokens).
   */
  private settleDeferredEnds(stoppedForLength: boolean): void {
    const deferred = this.deferredEnds;
    this.deferredEnds = [];
    for (const { call, emptyMeansNoArguments } of deferred) {
      let result = this.finishedCalls.get(call) as ToolCall;
      if (stoppedForLength) {
        try {
          const revised = call.reviseAsTruncated("max_tokens", emptyMeansNoArguments);
          result = revised.call;
          this.markTextOrigin(call, result);
          this.finishedCalls.set(call, result);
          this.diagnostic({
            code: "call_truncated_by_stop",
            severity: "warning",
            message: `Call ${call.index} (\`${call.name}\`) was closed with arguments that do not parse, and the provider then stopped at its output token limit: it was cut off, and is reported as truncated rather than invalid.`,
            callIndex: call.index,
            ...(call.providerIndex !== undefined ? { providerIndex: call.providerIndex } : {}),
          });
        } catch {
          // Keep the result as first settled: a finalize bug costs the revision, not the turn.
        }
      }
      this.out.push({ type: "tool_call_end", call: result });
      this.openSplitCalls(call, result);
    }
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
    this.settleDeferredEnds(false);
    const calls = [...this.calls, ...this.serverCalls].map((call) =>
      this.endCall(call, { complete: false, truncationCause: "message_restarted", emptyMeansNoArguments: false }),
    );
    this.textCalls?.reset();
    const dropped = { blocks: this.blocks, calls, text: this.collectText() };
    this.blocks = [];
    this.calls = [];
    this.serverCalls = [];
    this.finishedCalls = new Map();
    this.deferredEnds = [];
    this.sentIds = new Set();
    this.idOwners = new Map();
    this.mintSuffixes = new Map();
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
    // A normal stop (not the output limit, an error or a dropped stream): markup still open never formed a call.
    const cut = end.status !== "complete" || this.finishReason === "length";
    textCalls.end(end.status === "error" ? "stream_error" : this.finishReason === "length" ? "max_tokens" : end.truncationCause, cut);
  }

  /**
   * A turn that stopped normally with a runnable call read from its text is a tool-call turn; a
   * call read from text that cannot run (invalid_json) does not make it one.
   */
  private settleTextCallFinish(end: TurnEnd): void {
    if (this.finishReason !== "stop" || end.status !== "complete") return;
    let runnable = 0;
    for (const call of this.calls) {
      const result = this.finishedCalls.get(call);
      if (result && result.source === "text" && result.complete && result.arguments !== null) runnable++;
    }
    if (runnable === 0) return;
    this.finishReason = "tool_calls";
    this.diagnostic({
      code: "finish_reason_text_calls",
      severity: "info",
      message: `The provider stopped with '${this.rawFinishReason ?? "stop"}', and ${runnable} runnable tool call(s) were read from the text; the finish reason was taken as tool_calls.`,
    });
  }

  /** Finalizes every open call as truncated and builds the turn. Idempotent. */
  finish(end: TurnEnd, emptyMeansNoArguments: boolean): { turn: DecodedTurn; events: CodecEvent[] } {
    if (this.turn) return { turn: this.turn, events: [] };
    if (this.overLimit && end.status !== "error") end = { status: "incomplete", truncationCause: "limit_exceeded" };
    if (this.textCalls) this.endTextCalls(end);
    const stoppedForLength = this.finishReason === "length";
    // A clean end without the provider's end signal: a call whose arguments already are one closed
    // object keeps them (the turn stays incomplete); anything still open is truncated.
    const endedCleanly = end.status === "incomplete" && end.truncationCause === "stream_ended" && !stoppedForLength;
    for (const call of this.openCalls()) {
      if (endedCleanly && !call.detached && call.formsClosedObject) {
        this.diagnostic({
          code: "call_closed_at_stream_end",
          severity: "warning",
          message: `The stream ended without the provider's end marker for call ${call.index} (\`${call.name}\`), but its arguments already form one complete JSON object; they were kept (the turn is incomplete).`,
          callIndex: call.index,
          ...(call.providerIndex !== undefined ? { providerIndex: call.providerIndex } : {}),
        });
        this.endCall(call, { complete: true, emptyMeansNoArguments });
        continue;
      }
      // Whatever the provider's own word for it (model_context_window_exceeded, …), a length stop cut the call.
      const cause = stoppedForLength && end.truncationCause === "stream_ended" ? "max_tokens" : end.truncationCause;
      this.endCall(call, { complete: false, truncationCause: cause, emptyMeansNoArguments });
    }
    this.settleDeferredEnds(stoppedForLength);
    if (this.textCalls) this.settleTextCallFinish(end);
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

/**
 * True when the call's arguments need no stop reason to be judged: they parsed strictly (or came
 * whole), or the call failed for a reason a cut cannot explain.
 */
function strictlyParsed(call: ToolCall): boolean {
  if (call.error) return call.error.code !== "invalid_json";
  return !call.repairs.some((repair) => TEXT_REPAIRS.has(repair));
}

export type { TextLikeBlock };

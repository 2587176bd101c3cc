import type { CodecEvent, Diagnostic, RepairCode, ToolCall } from "../types.js";
import type { DecoderLimits } from "../limits.js";
import { CallIds } from "./call-ids.js";
import { ToolCallAssembler, type CallEndOptions, type ToolCallInit } from "./tool-call.js";
import type { TextCallBridge } from "./text-call-bridge.js";
import type { TurnBlocks } from "./turn-blocks.js";
import type { TurnBudget } from "./turn-budget.js";
import { omitted, tooDeepToKeep } from "./verbatim.js";

export interface OpenCallInit extends Omit<ToolCallInit, "index"> {
  start?: unknown;
}

/** What the calls report to: the turn's event sink of the moment, its diagnostics and text-call glue. */
export interface CallsHost {
  readonly out: CodecEvent[];
  diagnostic(diagnostic: Diagnostic): void;
  readonly textCalls: TextCallBridge | null;
}

/**
 * Repairs that complete or rewrite the argument text. In a turn the provider stopped at its output
 * limit, a call that needed one of them may simply be cut off, so it is reported as truncated.
 */
const TEXT_REPAIRS: ReadonlySet<RepairCode> = new Set<RepairCode>(["strip_code_fence", "strip_special_tokens", "python_literals", "invalid_escapes", "trailing_comma", "single_quotes", "missing_closing_brace", "jsonrepair"]);

/**
 * The turn's tool calls, client and server, in the order they opened: their ids, their argument
 * deltas, and their ends (the stop reason decides some of them, split calls open at others).
 */
export class TurnCalls {
  /** Client calls (`turn.toolCalls`). */
  client: ToolCallAssembler[] = [];
  /** Server calls (`turn.serverToolCalls`). */
  server: ToolCallAssembler[] = [];
  ids: CallIds;
  private ended = new Map<ToolCallAssembler, ToolCall>();
  /**
   * Calls that closed with arguments that do not parse strictly: their tool_call_end waits for the
   * end of the turn, where a stop at the output limit makes them truncated rather than invalid.
   */
  private deferredEnds: Array<{ call: ToolCallAssembler; emptyMeansNoArguments: boolean }> = [];
  private dropped = 0;
  private droppedDiagnostic: Diagnostic | null = null;

  constructor(
    private readonly host: CallsHost,
    private readonly blocks: TurnBlocks,
    private readonly budget: TurnBudget,
    private readonly limits: Required<DecoderLimits>,
    private readonly previews: boolean,
    private readonly maxPreviewDepth: number,
  ) {
    // The host itself, not a closure over it: a closure made here made text decoding a third slower (more GC).
    this.ids = new CallIds(host);
  }

  get count(): number {
    return this.client.length + this.server.length;
  }

  open(init: OpenCallInit): ToolCallAssembler {
    if (init.providerFields && tooDeepToKeep(init.providerFields)) init = { ...init, providerFields: omitted("The provider fields") };
    const list = init.kind === "server" ? this.server : this.client;
    const call = new ToolCallAssembler(
      { ...init, index: list.length },
      { previews: this.previews, maxPreviewDepth: this.maxPreviewDepth, maxArgumentChars: this.limits.maxArgumentChars, maxDepth: this.limits.maxDepth },
    );
    if (!this.admitCall()) {
      // Over the limit the call is decoded into nothing: its events are dropped, and counted.
      call.detached = true;
      return call;
    }
    list.push(call);
    this.ids.assign(call, init.id, init.idMinted === true);
    this.blocks.openCall(call.kind, call.index, init.providerIndex);
    if (init.start !== undefined) {
      const problem = call.setStart(init.start);
      if (problem) this.host.diagnostic(problem);
    }
    this.host.out.push({ type: "tool_call_start", index: call.index, id: call.id, name: call.name, kind: call.kind });
    return call;
  }

  /** False, with the call counted in `too_many_calls`, when the turn takes no more calls. */
  private admitCall(): boolean {
    if (this.count < this.limits.maxCallsPerTurn && !this.budget.exceeded) return true;
    this.dropped++;
    if (this.droppedDiagnostic) {
      (this.droppedDiagnostic.data as { dropped: number }).dropped = this.dropped;
      return false;
    }
    this.droppedDiagnostic = {
      code: "too_many_calls",
      severity: "error",
      message: `The turn opened more than ${this.limits.maxCallsPerTurn} tool calls; later calls were dropped.`,
      data: { dropped: this.dropped },
    };
    this.host.diagnostic(this.droppedDiagnostic);
    return false;
  }

  /** The provider's id arrived after the call opened under a minted one (see `CallIds.adoptProviderId`). */
  adoptProviderId(call: ToolCallAssembler, id: string): void {
    if (call.detached || this.ended.has(call)) return;
    this.ids.adoptProviderId(call, id);
  }

  appendArguments(call: ToolCallAssembler, fragment: string): void {
    if (call.detached) return;
    // The assembler's own flag, not a map lookup: this runs once per argument delta.
    if (call.finalized) {
      this.host.diagnostic({ code: "delta_after_call_end", severity: "warning", message: `Arguments arrived for call ${call.index} after it was finalized; they were ignored.`, callIndex: call.index, data: { fragment } });
      return;
    }
    if (!this.budget.admit(fragment.length)) return;
    const outcome = call.appendDelta(fragment);
    if (outcome === "overflow") {
      this.host.diagnostic({ code: "arguments_too_large", severity: "error", message: `The arguments of call ${call.index} (${call.name}) exceeded ${this.limits.maxArgumentChars} characters; the rest was not kept.`, callIndex: call.index });
    }
    if (outcome !== "appended") return;
    // One literal per case: adding `preview` afterwards would change the object's shape and allocate
    // a second property store for every delta.
    this.host.out.push(
      this.previews
        ? { type: "tool_call_delta", index: call.index, id: call.id, delta: fragment, kind: call.kind, preview: call.previewValue }
        : { type: "tool_call_delta", index: call.index, id: call.id, delta: fragment, kind: call.kind },
    );
  }

  end(call: ToolCallAssembler, options: CallEndOptions): ToolCall {
    if (call.detached) return call.end(options).call;
    const done = this.ended.get(call);
    if (done) return done;
    let ended: ReturnType<ToolCallAssembler["end"]>;
    try {
      ended = call.end(options);
    } catch (error) {
      // finish() must not throw: a finalize bug costs this call, reported, not the turn.
      const reason = error instanceof Error ? error.message : String(error);
      ended = { call: call.fail(options.complete, reason), diagnostics: [] };
      this.host.diagnostic({ code: "internal_error", severity: "error", message: `toolwire failed while finalizing call ${call.index}: ${reason}. Please report this with the recorded stream.`, callIndex: call.index });
    }
    const { call: result, diagnostics } = ended;
    this.host.textCalls?.markOrigin(call, result);
    this.ended.set(call, result);
    for (const diagnostic of diagnostics) this.host.diagnostic(diagnostic);
    if (options.complete && !strictlyParsed(result)) {
      // Whether this is a bad call or a cut-off one is told by the stop reason, which comes later.
      this.deferredEnds.push({ call, emptyMeansNoArguments: options.emptyMeansNoArguments });
      return result;
    }
    this.host.out.push({ type: "tool_call_end", call: result });
    this.openSplitCalls(call, result);
    return result;
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
    for (const { value, raw, error } of objects) {
      const list = call.kind === "server" ? this.server : this.client;
      if (!this.admitCall()) return;
      const split = new ToolCallAssembler(
        {
          index: list.length,
          id: this.ids.mintFrom(sentId ?? result.id),
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
      this.ids.claim(split);
      this.blocks.openCall(call.kind, split.index, call.providerIndex);
      this.host.out.push({ type: "tool_call_start", index: split.index, id: split.id, name: split.name, kind: split.kind });
      const settled = split.settleWith(
        error
          ? { arguments: null, rawArguments: raw, source: null, complete: true, repairs: ["split_concatenated_calls"], error }
          : { arguments: value, rawArguments: raw, source: "delta", complete: true, repairs: ["split_concatenated_calls"], error: null },
      );
      this.ended.set(split, settled);
      this.host.diagnostic({ code: "split_concatenated_calls", severity: "warning", message: `Call ${call.index} (\`${call.name}\`) carried several different complete JSON objects one after another (a server that flattened parallel calls of one tool); the object ${JSON.stringify(raw.length > 80 ? `${raw.slice(0, 80)}…` : raw)} became call ${split.index} with the id ${split.id}.`, callIndex: split.index, data: { from: call.index, id: split.id, providerId: sentId ?? null } });
      this.host.out.push({ type: "tool_call_end", call: settled });
    }
  }

  /**
   * The deferred ends, now that the stop reason is known: in a turn stopped at the output limit a
   * call whose arguments do not parse strictly was cut off (truncated, cause max_tokens).
   */
  settleDeferredEnds(stoppedForLength: boolean): void {
    const deferred = this.deferredEnds;
    this.deferredEnds = [];
    for (const { call, emptyMeansNoArguments } of deferred) {
      let result = this.ended.get(call) as ToolCall;
      if (stoppedForLength) {
        try {
          result = call.reviseAsTruncated("max_tokens", emptyMeansNoArguments).call;
          this.host.textCalls?.markOrigin(call, result);
          this.ended.set(call, result);
          this.host.diagnostic({ code: "call_truncated_by_stop", severity: "warning", message: `Call ${call.index} (\`${call.name}\`) was closed with arguments that do not parse, and the provider then stopped at its output token limit: it was cut off, and is reported as truncated rather than invalid.`, callIndex: call.index, ...(call.providerIndex !== undefined ? { providerIndex: call.providerIndex } : {}) });
        } catch {
          // Keep the result as first settled: a finalize bug costs the revision, not the turn.
        }
      }
      this.host.out.push({ type: "tool_call_end", call: result });
      this.openSplitCalls(call, result);
    }
  }

  isEnded(call: ToolCallAssembler): boolean {
    return this.ended.has(call);
  }

  /** The result of an ended call. */
  resultOf(call: ToolCallAssembler): ToolCall {
    return this.ended.get(call) as ToolCall;
  }

  /** Calls that have not been finalized yet, in the order they opened. */
  stillOpen(): ToolCallAssembler[] {
    return [...this.client, ...this.server].filter((call) => !this.ended.has(call));
  }

  /** Ends every call as truncated (`message_restarted`) and forgets them all; returns their results. */
  restart(): ToolCall[] {
    this.settleDeferredEnds(false);
    const calls = [...this.client, ...this.server].map((call) => this.end(call, { complete: false, truncationCause: "message_restarted", emptyMeansNoArguments: false }));
    this.client = [];
    this.server = [];
    this.ended = new Map();
    this.deferredEnds = [];
    this.ids = new CallIds(this.host);
    return calls;
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

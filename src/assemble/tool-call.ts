import type { Diagnostic, RepairCode, ToolCall, TruncationCause } from "../types.js";
import { isPlainObject } from "../json/shape.js";
import { exceedsDepth, finalizeArguments, type ArgumentSources, type SplitPiece } from "../json/finalize.js";
import { IncrementalJsonParser } from "../json/incremental.js";
import type { DiagnosticCode } from "../diagnostics/codes.js";

export interface ToolCallInit {
  index: number;
  id: string;
  /** True when the decoder minted `id` because the provider sent none (ids the provider sent are false). */
  idMinted?: boolean;
  name: string;
  kind: "client" | "server";
  providerIndex?: number;
  providerFields?: Record<string, unknown>;
}

export type AppendOutcome = "appended" | "ignored" | "overflow";

export interface CallEndOptions {
  complete: boolean;
  truncationCause?: TruncationCause;
  emptyMeansNoArguments: boolean;
}

/**
 * One tool call while it streams: keeps its argument sources apart (start input, delta stream,
 * final snapshot) until it is finalized, and optionally maintains a live preview whose cost per
 * delta is proportional to the delta.
 */
export class ToolCallAssembler {
  readonly index: number;
  id: string;
  /** The id the provider sent, when the turn replaced it (a duplicate): reported as `ToolCall.providerId`. */
  providerId: string | undefined;
  /** True when `id` was minted by toolwire (none sent, or a duplicate replaced), so that it may be minted again. */
  idMinted: boolean;
  name: string;
  readonly kind: "client" | "server";
  readonly providerIndex: number | undefined;
  providerFields: Record<string, unknown> | undefined;
  /** Dropped by the turn (over a limit): its events are decoded into nothing. */
  detached = false;
  /** The decoder wrote the text and knows it is broken: finalize must not repair it. */
  private broken = false;

  private start: Record<string, unknown> | undefined;
  /** Delta text as joined chunks plus pending small fragments (see `get deltaText`). */
  private deltaHead = "";
  private readonly deltaParts: string[] = [];
  private deltaLength = 0;
  private final: ArgumentSources["final"];
  private readonly priorRepairs: RepairCode[] = [];
  private preview: IncrementalJsonParser | null;
  private previewPrimed = false;
  /** The preview parser was fed the start input first, so its value is not the deltas' own. */
  private previewMerged = false;
  private result: ToolCall | null = null;
  private overflowed = false;
  /** A start or final object nested past maxDepth: never serialized (JSON.stringify recurses), the call fails. */
  private tooDeepSource = false;
  private readonly maxArgumentChars: number;
  private readonly maxDepth: number | undefined;
  private readonly maxPreviewDepth: number | undefined;
  private resultDiagnostics: Diagnostic[] = [];
  /** Further objects glued after the first one (`split_concatenated_calls`), for the turn to open as calls. */
  private splitObjects: SplitPiece[] = [];

  constructor(init: ToolCallInit, options: { previews: boolean; maxPreviewDepth?: number; maxArgumentChars?: number; maxDepth?: number }) {
    this.maxArgumentChars = options.maxArgumentChars ?? Number.POSITIVE_INFINITY;
    this.maxDepth = options.maxDepth;
    this.index = init.index;
    this.id = init.id;
    this.providerId = undefined;
    this.idMinted = init.idMinted === true;
    this.name = init.name;
    this.kind = init.kind;
    this.providerIndex = init.providerIndex;
    this.providerFields = init.providerFields;
    this.maxPreviewDepth = options.maxPreviewDepth;
    this.preview = options.previews ? new IncrementalJsonParser({ maxDepth: this.maxPreviewDepth }) : null;
  }

  /** The decoder built the argument text and could not finish it faithfully: no repair may complete it. */
  markBroken(): void {
    this.broken = true;
  }

  get finalized(): boolean {
    return this.result !== null;
  }

  get argumentText(): string {
    return this.deltaText;
  }

  /**
   * The concatenated fragments. Small fragments are joined into flat chunks of a few KB before
   * they join the rope, so a long call streamed in tiny deltas keeps a few hundred objects alive
   * rather than one per delta (garbage-collection cost, not correctness, is the reason).
   */
  private get deltaText(): string {
    if (this.deltaParts.length > 0) {
      this.deltaHead += this.deltaParts.join("");
      this.deltaParts.length = 0;
    }
    return this.deltaHead;
  }

  private set deltaText(text: string) {
    this.deltaHead = text;
    this.deltaParts.length = 0;
    this.deltaLength = text.length;
  }

  /**
   * Arguments present when the call opened. `{}`, `null` and absence all mean "none"; a JSON
   * string holding an object is accepted (some relays send the input serialized).
   * Returns a diagnostic when the value is unusable.
   */
  setStart(input: unknown): Diagnostic | null {
    if (input === undefined || input === null) return null;
    let value = input;
    if (typeof value === "string") {
      if (value.trim() === "") return null;
      try {
        value = JSON.parse(value);
      } catch {
        return this.startDiagnostic("start_input_not_json", "The input sent when the call opened is a string that is not JSON; it was ignored.", input);
      }
    }
    if (!isPlainObject(value)) {
      return this.startDiagnostic("start_input_not_object", "The input sent when the call opened is not an object; it was ignored.", input);
    }
    if (this.nestsTooDeep(value)) {
      this.tooDeepSource = true;
      return this.startDiagnostic("start_input_too_deep", `The input sent when the call opened nests deeper than ${String(this.maxDepth)} levels; the call cannot be executed.`, null);
    }
    this.start = Object.keys(value).length === 0 ? undefined : value;
    return null;
  }

  private startDiagnostic(code: DiagnosticCode, message: string, data: unknown): Diagnostic {
    return { code, message, severity: "warning", callIndex: this.index, providerIndex: this.providerIndex, data };
  }

  /**
   * Appends a fragment. Empty fragments are ignored; past the size limit nothing more is kept
   * ("overflow" is returned once, then "ignored").
   */
  appendDelta(fragment: string): AppendOutcome {
    if (fragment.length === 0) return "ignored";
    if (this.overflowed) return "ignored";
    if (this.deltaLength + fragment.length > this.maxArgumentChars) {
      this.overflowed = true;
      this.preview = null;
      return "overflow";
    }
    this.deltaParts.push(fragment);
    this.deltaLength += fragment.length;
    if (this.deltaParts.length >= 256) {
      this.deltaHead += this.deltaParts.join("");
      this.deltaParts.length = 0;
    }
    if (this.preview) {
      if (!this.previewPrimed) {
        this.previewPrimed = true;
        this.primePreview(fragment);
      }
      this.preview.push(fragment);
    }
    return "appended";
  }

  /**
   * Undoes resend readings made on arrival: the fragments as sent (`text`) are the arguments after
   * all. The repairs those readings recorded go, and the preview is rebuilt from the text.
   */
  revertResend(text: string): void {
    this.deltaText = text;
    for (const code of ["collapsed_duplicate", "cumulative_resend"] as const) {
      const at = this.priorRepairs.indexOf(code);
      if (at >= 0) this.priorRepairs.splice(at, 1);
    }
    this.restartPreview(text);
  }

  /** The preview of `text` alone, as if it had been the only fragments (no start input merged in). */
  private restartPreview(text: string): void {
    if (!this.preview) return;
    this.preview = new IncrementalJsonParser({ maxDepth: this.maxPreviewDepth });
    this.preview.push(text);
    this.previewPrimed = true;
    this.previewMerged = false;
  }

  /**
   * Records a repair decided while the deltas arrived (a resend recognized on arrival and counted
   * once, its new part appended), without touching the buffer or the preview.
   */
  recordRepair(repair: RepairCode): void {
    if (!this.priorRepairs.includes(repair)) this.priorRepairs.push(repair);
  }

  /** A start input continued by deltas (Kimi) previews as the merged object, as finalize will decide. */
  private primePreview(firstFragment: string): void {
    if (!this.start || !this.preview) return;
    const head = firstFragment.trimStart()[0];
    if (head === "," || head === '"') {
      const open = JSON.stringify(this.start).slice(0, -1);
      this.preview.push(head === '"' ? `${open},` : open);
      this.previewMerged = true;
    }
  }

  /** The live preview value, updated in place (undefined before any delta or without previews). */
  get previewValue(): unknown {
    return this.preview?.value;
  }

  private nestsTooDeep(value: unknown): boolean {
    return this.maxDepth !== undefined && typeof value === "object" && value !== null && exceedsDepth(value, this.maxDepth);
  }

  setFinal(value: unknown): void {
    if (typeof value === "string" && value.length > this.maxArgumentChars) {
      this.overflowed = true;
      return;
    }
    if (this.nestsTooDeep(value)) {
      this.tooDeepSource = true;
      return;
    }
    this.final = typeof value === "string" ? { text: value } : { value };
  }

  get overflow(): boolean {
    return this.overflowed;
  }

  end(options: CallEndOptions): { call: ToolCall; diagnostics: Diagnostic[] } {
    if (this.result) return { call: this.result, diagnostics: [] };
    if (this.overflowed) return this.settle(this.tooLarge(options.complete), []);
    if (this.tooDeepSource) return this.settle(this.tooDeep(options.complete), []);
    const sources: ArgumentSources = { deltaText: this.deltaText };
    // The preview parser has already parsed the deltas exactly as JSON.parse would (a tested
    // property): reuse its value rather than parse the whole text a second time. The final
    // arguments are then the very object the last preview showed.
    const preview = this.preview;
    if (preview && !this.previewMerged && preview.state === "complete" && !preview.depthExceeded) sources.deltaValue = preview.value;
    if (this.start) sources.start = this.start;
    if (this.final) sources.final = this.final;
    const decided = finalizeArguments(sources, {
      toolName: this.name,
      complete: options.complete,
      truncationCause: options.truncationCause,
      emptyMeansNoArguments: options.emptyMeansNoArguments,
      priorRepairs: this.priorRepairs,
      maxDepth: this.maxDepth,
      noRepair: this.broken,
    });
    // Whole-object sources are measured only once serialized: the cap holds for them too.
    if (decided.rawArguments.length > this.maxArgumentChars) return this.settle(this.tooLarge(options.complete), []);
    this.splitObjects = decided.split ?? [];
    return this.settle(
      {
        index: this.index,
        id: this.id,
        name: this.name,
        arguments: decided.arguments,
        rawArguments: decided.rawArguments,
        source: decided.source,
        complete: options.complete,
        repairs: decided.repairs,
        error: decided.error,
        kind: this.kind,
      },
      decided.diagnostics,
    );
  }

  /** A call refused by a limit: no arguments, the kept text, and an error the model can act on. */
  private refused(complete: boolean, error: ToolCall["error"]): ToolCall {
    return {
      index: this.index,
      id: this.id,
      name: this.name,
      arguments: null,
      rawArguments: this.deltaText,
      source: null,
      complete,
      repairs: [],
      error,
      kind: this.kind,
    };
  }

  private tooLarge(complete: boolean): ToolCall {
    return this.refused(complete, {
      code: "too_large",
      message: `The arguments for \`${this.name}\` exceeded ${this.maxArgumentChars} characters; only the beginning was kept and the call was not executed. Send smaller arguments (split the work across several calls).`,
    });
  }

  private tooDeep(complete: boolean): ToolCall {
    return this.refused(complete, {
      code: "too_deep",
      message: `The arguments for \`${this.name}\` nest more than ${String(this.maxDepth)} levels deep. The call was not executed; send flatter arguments.`,
    });
  }

  /**
   * Settles a call whose finalization failed unexpectedly, so that a bug in finalize costs one
   * call rather than the whole stream.
   */
  fail(complete: boolean, reason: string): ToolCall {
    if (this.result) return this.result;
    const message = `toolwire could not finalize the arguments for \`${this.name}\` (${reason}); the call was not executed. Send the call again.`;
    return this.settle(this.refused(complete, { code: "invalid_json", message }), []).call;
  }

  /** The objects after the first of a glued `{…}{…}` text, once finalized; taken once. */
  takeSplitObjects(): SplitPiece[] {
    const objects = this.splitObjects;
    this.splitObjects = [];
    return objects;
  }

  /**
   * True when the delta text (or, without deltas, the final snapshot) already is one closed JSON
   * object: the call's content is whole even though its end marker never came.
   */
  get formsClosedObject(): boolean {
    if (this.overflowed || this.tooDeepSource || this.broken) return false;
    const text = this.deltaText;
    if (text.trim() !== "") {
      try {
        return isPlainObject(JSON.parse(text));
      } catch {
        return false;
      }
    }
    if (!this.final) return false;
    if ("value" in this.final) return isPlainObject(this.final.value);
    try {
      return isPlainObject(JSON.parse(this.final.text));
    } catch {
      return false;
    }
  }

  /** Gives the call another id (a later provider id took its minted one); a settled result follows. */
  renameId(id: string): void {
    this.id = id;
    if (this.result) this.result.id = id;
  }

  /**
   * Finalizes again as cut off (`complete: false`): a call that closed with arguments that do not
   * parse strictly, in a turn the provider then stopped at its output limit.
   */
  reviseAsTruncated(cause: TruncationCause, emptyMeansNoArguments: boolean): { call: ToolCall; diagnostics: Diagnostic[] } {
    this.result = null;
    this.splitObjects = [];
    return this.end({ complete: false, truncationCause: cause, emptyMeansNoArguments });
  }

  /** Settles a call whose arguments were decided elsewhere (a call split off another one). */
  settleWith(call: Omit<ToolCall, "index" | "id" | "name" | "kind">): ToolCall {
    return this.settle({ index: this.index, id: this.id, name: this.name, kind: this.kind, ...call }, []).call;
  }

  private settle(call: ToolCall, diagnostics: Diagnostic[]): { call: ToolCall; diagnostics: Diagnostic[] } {
    if (this.providerId !== undefined) {
      call.providerId = this.providerId;
      if (!call.repairs.includes("minted_id")) call.repairs = [...call.repairs, "minted_id"];
    }
    if (this.providerIndex !== undefined) call.providerIndex = this.providerIndex;
    if (this.providerFields && Object.keys(this.providerFields).length > 0) call.providerFields = this.providerFields;
    this.result = call;
    this.resultDiagnostics = diagnostics.map((d) => ({ ...d, callIndex: this.index, providerIndex: this.providerIndex }));
    this.preview = null;
    return { call, diagnostics: this.resultDiagnostics };
  }
}

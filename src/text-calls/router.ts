import type { ArgumentSource, ContentBlock, Diagnostic, TruncationCause } from "../types.js";
import { TextCallExtractor, type TextCallSink } from "./extractor.js";
import type { ResolvedTextCallOptions } from "./options.js";
import type { TextCallSyntaxName } from "./syntaxes.js";

type TextBlock = Extract<ContentBlock, { type: "text" }>;
type ReasoningBlock = Extract<ContentBlock, { type: "thinking" } | { type: "reasoning" }>;

/** What the turn builder lends the extractor: the same text, call and diagnostic paths decoders use. */
export interface TextCallHost<Call> {
  emitText(block: TextBlock, text: string): void;
  emitReasoning(block: ReasoningBlock, text: string): void;
  /** Reasoning read in a text block (`<think>…</think>` and the like): the host keeps it as reasoning. */
  emitTextReasoning(block: TextBlock, text: string): void;
  openCall(name: string, syntax: TextCallSyntaxName, source: ArgumentSource): Call;
  appendArguments(call: Call, fragment: string): void;
  endCall(call: Call, complete: boolean, cause?: TruncationCause): void;
  diagnostic(diagnostic: Diagnostic): void;
}

/**
 * Runs one extractor per text or reasoning block (a block is one stream of text), and the
 * extractor on a provider's `failed_generation`. Owned by the TurnBuilder when `textCalls` is set.
 */
export class TextCallRouter<Call> {
  private readonly channels = new Map<ContentBlock, TextCallExtractor>();
  /** Complete calls extracted from text (not from a failed generation). */
  completeCalls = 0;

  constructor(
    private readonly options: ResolvedTextCallOptions,
    private readonly host: TextCallHost<Call>,
  ) {}

  get readsReasoning(): boolean {
    return this.options.reasoning;
  }

  /**
   * Reads a text delta. Returns true when it is plain text the caller passes on itself (the fast
   * path, one check per delta); otherwise the extractor has taken it.
   */
  text(block: TextBlock, text: string): boolean {
    // The block of the previous delta, without a map lookup or a closure: this runs per delta.
    const extractor = block === this.lastBlock ? (this.lastExtractor as TextCallExtractor) : this.channel(block, false);
    return extractor.read(text);
  }

  /** Reads a reasoning delta; the return value is as for `text`. */
  reasoning(block: ReasoningBlock, text: string): boolean {
    const extractor = block === this.lastBlock ? (this.lastExtractor as TextCallExtractor) : this.channel(block, true);
    return extractor.read(text);
  }

  /**
   * The provider restarted the message: the turn builder has ended every call, the text-call ones
   * included, so what the extractors hold (open calls, held text) belongs to the dropped message.
   */
  reset(): void {
    this.channels.clear();
    this.lastBlock = null;
    this.lastExtractor = null;
    this.completeCalls = 0;
  }

  /** The stream is over: held text is passed on and calls still open are closed as not complete. */
  end(cause: TruncationCause, cut: boolean): void {
    for (const extractor of this.channels.values()) extractor.end(cause, cut);
  }

  private lastBlock: ContentBlock | null = null;
  private lastExtractor: TextCallExtractor | null = null;

  /**
   * Whether `block.text` is all the text the block received: false once the extractor took a
   * call's markup out of it or holds some of it back.
   */
  keptWhole(block: ContentBlock): boolean {
    const extractor = this.channels.get(block);
    return !extractor || (extractor.callsOpened === 0 && extractor.heldBack === 0 && !extractor.changedText);
  }

  private channel(block: ContentBlock, reasoning: boolean): TextCallExtractor {
    let extractor = this.channels.get(block);
    if (!extractor) {
      const emit = reasoning ? (t: string) => this.host.emitReasoning(block as ReasoningBlock, t) : (t: string) => this.host.emitText(block as TextBlock, t);
      const emitReasoning = reasoning ? emit : (t: string) => this.host.emitTextReasoning(block as TextBlock, t);
      extractor = new TextCallExtractor(this.options, { ...this.sink(emit, "text"), reasoning: emitReasoning }, reasoning);
      this.channels.set(block, extractor);
    }
    this.lastBlock = block;
    this.lastExtractor = extractor;
    return extractor;
  }

  private sink(emit: (text: string) => void, source: ArgumentSource): TextCallSink {
    let call: Call | null = null;
    return {
      text: emit,
      open: (name, syntax) => {
        call = this.host.openCall(name, syntax, source);
      },
      args: (fragment) => {
        if (call !== null) this.host.appendArguments(call, fragment);
      },
      close: (complete, cause) => {
        if (call === null) return;
        this.host.endCall(call, complete, cause);
        if (complete && source === "text") this.completeCalls++;
        call = null;
      },
      diagnostic: (d) => this.host.diagnostic(d),
    };
  }

  /**
   * A provider error that carries the model's rejected output (Groq's `tool_use_failed` puts it
   * in `error.failed_generation`): the calls in it are reported with `source: "failed_generation"`,
   * complete when their markup closed, so an agent can run them or send them back. The text around
   * them is not added to the turn.
   */
  failedGeneration(raw: unknown): void {
    const generation = failedGenerationOf(raw);
    if (generation === null) return;
    let found = 0;
    const sink = this.sink(() => undefined, "failed_generation");
    const extractor = new TextCallExtractor(this.options, {
      ...sink,
      open: (name, syntax) => {
        found++;
        sink.open(name, syntax);
      },
    });
    extractor.push(generation);
    extractor.end("stream_error");
    this.host.diagnostic({
      code: found > 0 ? "failed_generation_calls" : "failed_generation_no_calls",
      severity: found > 0 ? "info" : "warning",
      message:
        found > 0
          ? `The provider rejected the model's output (failed_generation); ${found} tool call(s) in it are reported with source "failed_generation". The turn stays an error: run them only if you accept them as they are, or send them back.`
          : "The provider rejected the model's output (failed_generation); no tool call could be read from it.",
      data: { failedGeneration: generation.length > 2000 ? `${generation.slice(0, 2000)}…` : generation },
    });
  }
}

/** `error.failed_generation` (Groq) in a provider error payload, or null. */
export function failedGenerationOf(raw: unknown): string | null {
  if (typeof raw !== "object" || raw === null) return null;
  const record = raw as Record<string, unknown>;
  if (typeof record.failed_generation === "string") return record.failed_generation;
  const inner = record.error;
  if (typeof inner === "object" && inner !== null) {
    const value = (inner as Record<string, unknown>).failed_generation;
    if (typeof value === "string") return value;
  }
  return null;
}

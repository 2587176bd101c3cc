import type { ArgumentSource, FinishReason, ToolCall, TurnStatus } from "../types.js";
import type { ResolvedTextCallOptions } from "../text-calls/options.js";
import { TextCallRouter } from "../text-calls/router.js";
import type { ToolCallAssembler } from "./tool-call.js";
import type { TurnBuilder, TurnEnd } from "./turn.js";
import type { ReasoningBlock, TextBlock } from "./turn-blocks.js";

/**
 * The text-call extractor (option `textCalls`) wired into a turn: text and reasoning pass through
 * it, the calls it reads open on the turn under ids of their own and say where they came from.
 */
export class TextCallBridge {
  readonly router: TextCallRouter<ToolCallAssembler>;
  private readonly origins = new WeakMap<ToolCallAssembler, { source: ArgumentSource; syntax: string }>();
  /** Reasoning the extractor read in a text block: kept in a reasoning block of its own. */
  private readonly reasoningOf = new WeakMap<TextBlock, ReasoningBlock>();

  constructor(
    options: ResolvedTextCallOptions,
    private readonly turn: TurnBuilder,
  ) {
    this.router = new TextCallRouter(options, {
      emitText: (block, text) => turn.relayText(block, text),
      emitReasoning: (block, text) => turn.relayReasoning(block, text),
      emitTextReasoning: (block, text) => turn.relayReasoning(this.reasoningBlockFor(block), text),
      openCall: (name, syntax, source) => this.openCall(name, syntax, source),
      appendArguments: (call, fragment) => turn.calls.appendArguments(call, fragment),
      endCall: (call, complete, cause) => {
        turn.calls.end(call, { complete, ...(cause ? { truncationCause: cause } : {}), emptyMeansNoArguments: true });
      },
      diagnostic: (diagnostic) => turn.diagnostic(diagnostic),
    });
  }

  /** A call read from text: a minted id derived from its position, never one a provider sent in this turn. */
  private openCall(name: string, syntax: string, source: ArgumentSource): ToolCallAssembler {
    const calls = this.turn.calls;
    const call = calls.open({ id: calls.ids.forTextCall(calls.client.length), idMinted: true, name, kind: "client" });
    this.origins.set(call, { source, syntax });
    return call;
  }

  private reasoningBlockFor(block: TextBlock): ReasoningBlock {
    let reasoning = this.reasoningOf.get(block);
    if (!reasoning) {
      reasoning = this.turn.openBlock<ReasoningBlock>({ type: "reasoning", text: "", ...(block.providerIndex !== undefined ? { providerIndex: block.providerIndex } : {}) });
      this.reasoningOf.set(block, reasoning);
    }
    return reasoning;
  }

  /** A call read from text says so: its source (`text` or `failed_generation`) and its syntax. */
  markOrigin(call: ToolCallAssembler, result: ToolCall): void {
    const origin = this.origins.get(call);
    if (!origin) return;
    if (result.source !== null) result.source = origin.source;
    result.textSyntax = origin.syntax;
  }

  /** Held text is passed on and text calls still open are truncated. */
  end(end: TurnEnd, finishReason: FinishReason | null): void {
    // A normal stop (not the output limit, an error or a dropped stream): markup still open never formed a call.
    const cut = end.status !== "complete" || finishReason === "length";
    this.router.end(end.status === "error" ? "stream_error" : finishReason === "length" ? "max_tokens" : end.truncationCause, cut);
  }

  /**
   * Calls read from text that can run, in a turn that stopped normally: such a turn is a tool-call
   * turn; a call read from text that cannot run (invalid_json) does not make it one.
   */
  runnableCalls(status: TurnStatus, finishReason: FinishReason | null): number {
    if (finishReason !== "stop" || status !== "complete") return 0;
    let runnable = 0;
    for (const call of this.turn.calls.client) {
      const result = this.turn.calls.isEnded(call) ? this.turn.calls.resultOf(call) : null;
      if (result && result.source === "text" && result.complete && result.arguments !== null) runnable++;
    }
    return runnable;
  }
}

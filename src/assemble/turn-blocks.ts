import type { CodecEvent, ContentBlock, ToolCall } from "../types.js";
import type { TurnBudget } from "./turn-budget.js";

export type TextBlock = Extract<ContentBlock, { type: "text" }>;
export type ReasoningBlock = Extract<ContentBlock, { type: "thinking" } | { type: "reasoning" }>;

/**
 * The turn's blocks in the order they opened, and the text and reasoning deltas appended to them:
 * accumulated in the blocks, or with `retainText: false` only relayed as events (a proxy that
 * forwards text keeps no copy of it).
 */
export class TurnBlocks {
  list: ContentBlock[] = [];
  private readonly positions = new WeakMap<ContentBlock, number>();
  /** With `retainText` off: the blocks that received text (what `streamedText` still has to tell). */
  private readonly received = new WeakSet<ContentBlock>();

  constructor(
    private readonly retainText: boolean,
    private readonly budget: TurnBudget,
  ) {}

  /** Opens a text-like block and returns it so the decoder can keep appending to it. */
  open<B extends ContentBlock>(block: B): B {
    this.positions.set(block, this.list.length);
    this.list.push(block);
    return block;
  }

  /** The place of a call among the blocks (its content lives in the call). */
  openCall(kind: ToolCall["kind"], callIndex: number, providerIndex: number | undefined): void {
    this.list.push({ type: kind === "server" ? "server_tool_call" : "tool_call", callIndex, ...(providerIndex !== undefined ? { providerIndex } : {}) });
  }

  /**
   * The index text and reasoning deltas carry: the block's position in `turn.blocks`. Provider
   * indexes are not unique per block (a Responses item holds several content parts).
   */
  private positionOf(block: ContentBlock): number {
    return this.positions.get(block) ?? this.list.indexOf(block);
  }

  /**
   * `chars` is `text.length`, read by the caller: text the text-call extractor relays (joined
   * strings, rare) and the decoders' deltas (every delta) then count at different load sites, and
   * the per-delta one stays polymorphic; one shared site sees more string shapes than V8 tracks
   * and turns megamorphic (measured: about 120 instructions more per delta).
   */
  appendText(block: TextBlock, text: string, chars: number, out: CodecEvent[]): void {
    if (chars === 0) return;
    if (!this.retainText) {
      if (this.budget.exceeded) return;
      this.received.add(block);
    } else {
      if (!this.budget.admit(chars)) return;
      block.text += text;
    }
    out.push({ type: "text_delta", index: this.positionOf(block), text });
  }

  /** As `appendText`. */
  appendReasoning(block: ReasoningBlock, text: string, chars: number, out: CodecEvent[]): void {
    if (chars === 0) return;
    if (!this.retainText) {
      if (this.budget.exceeded) return;
    } else {
      if (!this.budget.admit(chars)) return;
      if (block.type === "thinking") block.thinking += text;
      else block.text += text;
    }
    out.push({ type: "reasoning_delta", index: this.positionOf(block), text });
  }

  /**
   * The text a block received, as sent; null when it is not all in `block.text` (`keptWhole`
   * false: text calls took markup out or hold some back), or was relayed and not kept.
   */
  streamedText(block: TextBlock, keptWhole: boolean): string | null {
    if (!this.retainText) return this.received.has(block) ? null : "";
    return keptWhole ? block.text : null;
  }

  text(): string {
    return this.list.map((block) => (block.type === "text" ? block.text : "")).join("");
  }

  reasoning(): string {
    return this.list.map((block) => (block.type === "thinking" ? block.thinking : block.type === "reasoning" ? block.text : "")).join("");
  }
}

import type { CodecEvent, DecoderOptions } from "../types.js";
import type { DecoderTap } from "./common.js";
import { reasoningMoved } from "./text-calls.js";

/**
 * What the text-call extractor released while the decoder read one event, in order: text, reasoning
 * taken out of the text, and the calls it opened (by call index; the call is written once the
 * decoder has ended it). The block-structured protocols (Anthropic Messages, OpenAI Responses)
 * rewrite a text block or message item from these parts, where Chat only needs the totals
 * (`ReleasedText`): a call must go out between the text before it and the text after it.
 */
export type TextPart = { kind: "text" | "reasoning"; text: string; position: number } | { kind: "call"; index: number };

/** Collects the parts a tap's decoder writes, per pushed event, and where (which wire block) it read them. */
export class TextParts {
  private parts: TextPart[] | null = null;
  private wire: number | null = null;
  /** The decoder's block position of released text → the wire block (content index or output index) it was read in. */
  private readonly blocks = new Map<number, number>();
  private reasoningReported = false;

  constructor(
    private readonly tap: DecoderTap,
    /** Where reasoning taken out of the text goes, for the report. */
    private readonly reasoningGoesTo: string,
  ) {
    tap.observer = (event: CodecEvent) => this.observe(event);
  }

  /** Runs `read` (a push or the end of the tap) and returns what the extractor released meanwhile; `wire`: the block read. */
  collect(read: () => unknown, wire: number | null = null): TextPart[] {
    const parts: TextPart[] = [];
    this.parts = parts;
    this.wire = wire;
    try {
      read();
    } finally {
      this.parts = null;
      this.wire = null;
    }
    return parts;
  }

  /** The wire block a part released at the end was read in, when the extractor released some of that block's text before. */
  blockOf(part: TextPart): number | null {
    return part.kind === "call" ? null : (this.blocks.get(part.position) ?? null);
  }

  /** Reports, once per body, that reasoning written into the text was moved out of it. */
  reportReasoning(): void {
    if (this.reasoningReported) return;
    this.reasoningReported = true;
    this.tap.report(reasoningMoved(`a ${this.reasoningGoesTo}`));
  }

  private observe(event: CodecEvent): void {
    const parts = this.parts;
    if (parts === null) return;
    if (event.type === "text_delta" || event.type === "reasoning_delta") {
      if (this.wire !== null) this.blocks.set(event.index, this.wire);
      const last = parts[parts.length - 1];
      const kind = event.type === "text_delta" ? "text" : "reasoning";
      // Neighbouring pieces of one kind are one part (a write per part, not per piece).
      if (last !== undefined && last.kind === kind && last.position === event.index) last.text += event.text;
      else parts.push({ kind, text: event.text, position: event.index });
    } else if (event.type === "tool_call_start" && event.kind === "client") {
      parts.push({ kind: "call", index: event.index });
    }
  }
}

/**
 * The decoder options of a block-structured protocol's text-call stage: calls are read in the text
 * only (`reasoning: true` would read them in the server's own reasoning blocks, which pass as sent).
 */
export function textCallDecoderOptions(options: DecoderOptions): DecoderOptions {
  const setting = options.textCalls;
  if (setting === undefined || setting === "auto" || Array.isArray(setting)) return options;
  const detailed = setting as Exclude<typeof setting, "auto" | readonly unknown[]>;
  return detailed.reasoning ? { ...options, textCalls: { ...detailed, reasoning: false } } : options;
}

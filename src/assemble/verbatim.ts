import { exceedsDepth } from "../json/finalize.js";
import type { ContentBlock } from "../types.js";

/**
 * Deepest nesting kept in data the turn carries verbatim (diagnostic data, opaque blocks, raw
 * usage and errors, provider fields). Deeper values are replaced by a note: a consumer's
 * JSON.stringify would otherwise overflow the stack on a turn built from a hostile stream.
 */
const VERBATIM_DEPTH = 320;

export function tooDeepToKeep(value: unknown): boolean {
  return typeof value === "object" && value !== null && exceedsDepth(value, VERBATIM_DEPTH);
}

/** The note that stands for a value nested too deep to keep. */
export function omitted(what: string): { omitted: string } {
  return { omitted: `${what} nested deeper than ${VERBATIM_DEPTH} levels; not kept` };
}

export function bounded<T>(value: T, what: string): T | { omitted: string } {
  return tooDeepToKeep(value) ? omitted(what) : value;
}

/** Blocks that carry provider data as sent, bounded in depth so that the turn always serializes. */
export function boundedBlocks(blocks: ContentBlock[]): ContentBlock[] {
  return blocks.map((block) => {
    if (block.type === "opaque" && tooDeepToKeep(block.value)) return { ...block, value: omitted("The block") };
    if (block.type === "text" && block.citations && tooDeepToKeep(block.citations)) return { ...block, citations: [] };
    return block;
  });
}

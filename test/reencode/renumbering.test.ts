import { describe, expect, it } from "vitest";
import { decodeEventStream } from "../../src/framing/aws-eventstream.js";
import { encodeEventStreamBytes } from "../../src/testing/wire.js";
import type { DecodedTurn, ProviderEvent, ProviderName } from "../../src/types.js";
import { a } from "../helpers/anthropic-events.js";
import { decodeBytes, reencode, sseBody } from "./support.js";

/**
 * Block numbers after a withheld call, when a block interleaves with a held call (it starts while
 * the call is open, so it overtakes it). A client numbers blocks as they show (the Anthropic SDK
 * appends each started block to its list and finds a delta's block by its index), and so does
 * toolwire's decoder: every re-encoder that holds blocks numbers them 0, 1, 2… in the order they
 * show in its output, with no hole where a call was withheld.
 */

const utf8 = new TextEncoder();

/** Text 0, a tool call 1 whose input is `input`, text 2 inside it (before its stop), text 3 after it. */
function anthropicBody(input: string): Uint8Array {
  const events = [
    a.messageStart(),
    a.textStart(0),
    a.text(0, "a"),
    a.stop(0),
    a.toolStart(1, "toolu_1", "read", {}),
    a.json(1, input),
    a.textStart(2),
    a.text(2, "b"),
    a.stop(2),
    a.stop(1),
    a.textStart(3),
    a.text(3, "c"),
    a.stop(3),
    a.messageDelta("tool_use"),
    a.messageStop(),
  ];
  return utf8.encode(sseBody("anthropic", events));
}

const ev = (name: string, body: Record<string, unknown>): ProviderEvent => ({ event: name, data: body });

/** The same turn as ConverseStream frames (Bedrock sends text blocks without a start). */
function bedrockBody(input: string): Uint8Array {
  return encodeEventStreamBytes([
    ev("messageStart", { role: "assistant" }),
    ev("contentBlockDelta", { contentBlockIndex: 0, delta: { text: "a" } }),
    ev("contentBlockStop", { contentBlockIndex: 0 }),
    ev("contentBlockStart", { contentBlockIndex: 1, start: { toolUse: { toolUseId: "toolu_1", name: "read" } } }),
    ev("contentBlockDelta", { contentBlockIndex: 1, delta: { toolUse: { input } } }),
    ev("contentBlockDelta", { contentBlockIndex: 2, delta: { text: "b" } }),
    ev("contentBlockStop", { contentBlockIndex: 2 }),
    ev("contentBlockStop", { contentBlockIndex: 1 }),
    ev("contentBlockDelta", { contentBlockIndex: 3, delta: { text: "c" } }),
    ev("contentBlockStop", { contentBlockIndex: 3 }),
    ev("messageStop", { stopReason: "tool_use" }),
  ]);
}

/** The block index of every block event written, in order. */
function writtenIndexes(provider: ProviderName, output: Uint8Array): number[] {
  if (provider === "anthropic") {
    const text = new TextDecoder().decode(output);
    return [...text.matchAll(/"type":"content_block_\w+","index":(\d+)/g)].map((match) => Number(match[1]));
  }
  const indexes: number[] = [];
  for (const message of decodeEventStream(output)) {
    const body = JSON.parse(new TextDecoder().decode(message.payload)) as { contentBlockIndex?: number };
    if (body.contentBlockIndex !== undefined) indexes.push(body.contentBlockIndex);
  }
  return indexes;
}

/** Each block's number at its first event: the order blocks show in. */
function firstShown(indexes: readonly number[]): number[] {
  return [...new Set(indexes)];
}

const blockTexts = (turn: DecodedTurn) => turn.blocks.map((block) => (block.type === "text" ? block.text : block.type));

describe.each([
  ["anthropic", anthropicBody],
  ["bedrock", bedrockBody],
] as const)("%s: a block that interleaves with a held call", (provider, body) => {
  it("numbers blocks as they show when the call is delivered: the overtaking block before the call", () => {
    for (const sizes of [[1 << 20], [7]]) {
      const { output } = reencode(provider, body('{"path":"a"}'), sizes);
      expect(firstShown(writtenIndexes(provider, output))).toEqual([0, 1, 2, 3]);
      const again = decodeBytes(provider, output);
      expect(blockTexts(again)).toEqual(["a", "b", "tool_call", "c"]);
      expect(again.blocks.map((block) => block.providerIndex)).toEqual([0, 1, 2, 3]);
      expect(again.toolCalls.map((call) => [call.id, call.arguments])).toEqual([["toolu_1", { path: "a" }]]);
    }
  });

  it("leaves no hole where the call was withheld", () => {
    for (const sizes of [[1 << 20], [7]]) {
      const { output, reencoder } = reencode(provider, body("[1]"), sizes);
      expect(reencoder.repairs).toContainEqual(expect.objectContaining({ action: "withheld", id: "toolu_1" }));
      expect(firstShown(writtenIndexes(provider, output))).toEqual([0, 1, 2]);
      const again = decodeBytes(provider, output);
      expect(blockTexts(again)).toEqual(["a", "b", "c"]);
      expect(again.blocks.map((block) => block.providerIndex)).toEqual([0, 1, 2]);
      expect(again.toolCalls).toEqual([]);
    }
  });
});

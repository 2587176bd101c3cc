/**
 * Every recorded stream of the corpus, decoded by its provider's decoder, encoded back as that
 * provider's assistant turn and followed by results for its calls: the history must pass the
 * provider's check, and no unusable argument text may reach it.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parseRecords } from "../../src/framing/records.js";
import { checkHistory, encodeToolResults, encodeTurn, HISTORY_FORMATS, toNeutral, type HistoryFormat } from "../../src/history/index.js";
import { replayEvents } from "../../src/replay.js";
import type { DecodedTurn } from "../../src/types.js";

const ROOT = join(import.meta.dirname, "..", "..", "testdata");

const USER: Record<HistoryFormat, unknown> = {
  anthropic: { role: "user", content: "go" },
  "openai-chat": { role: "user", content: "go" },
  "openai-responses": { role: "user", content: "go" },
  gemini: { role: "user", parts: [{ text: "go" }] },
  bedrock: { role: "user", content: [{ text: "go" }] },
};

function streams(format: HistoryFormat): Array<[string, DecodedTurn]> {
  const dir = join(ROOT, format);
  const out: Array<[string, DecodedTurn]> = [];
  for (const file of readdirSync(dir).filter((name) => name.endsWith(".ndjson")).sort()) {
    for (const stream of parseRecords(readFileSync(join(dir, file), "utf8"))) {
      out.push([`${file}${stream.sequence ? `#${stream.sequence}` : ""}`, replayEvents({ ...stream, provider: format }, { provider: format })]);
    }
  }
  return out;
}

describe.each(HISTORY_FORMATS)("%s corpus", (format) => {
  const cases = streams(format);
  it("has streams", () => expect(cases.length).toBeGreaterThan(0));

  it.each(cases)("%s", (_, decoded) => {
    const encoded = encodeTurn(decoded, format);
    const results = [
      ...encoded.errorResults,
      ...toNeutral(encoded.messages, format).flatMap((message) =>
        message.parts.flatMap((part) =>
          part.type === "tool_call" && part.arguments !== null ? [{ callId: part.id, name: part.name, content: "ok", ...(part.syntheticId ? { syntheticId: true as const } : {}) }] : [],
        ),
      ),
    ];
    const history = [USER[format], ...encoded.messages, ...encodeToolResults(results, format)];
    // A turn that stopped on thinking alone cannot be replayed as an assistant message; skip those.
    if (encoded.message.parts.length === 0) return;
    const faults = checkHistory(history, format);
    // A turn continuing a paused one (Anthropic pause_turn) opens with the result of a server tool
    // whose use sits in the previous response: on its own it is an orphan, rightly reported.
    const continuation = decoded.blocks[0]?.type === "opaque";
    expect(faults.filter((fault) => !(continuation && fault.code === "orphan_server_result"))).toEqual([]);
    const wire = JSON.stringify(history);
    for (const call of decoded.toolCalls) {
      if (call.arguments === null && call.rawArguments.length > 8) expect(wire).not.toContain(JSON.stringify(call.rawArguments).slice(1, -1));
    }
  });
});

import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { cutText } from "../../src/testing/text-calls.js";
import { parseRecords } from "../../src/framing/records.js";
import { replayEvents } from "../../src/replay.js";
import type { DecodedTurn, DecoderOptions } from "../../src/types.js";
import { TESTDATA, upstreamFile } from "../helpers/testdata.js";
import { corpusDir } from "../helpers/corpus.js";

/**
 * testdata/text-calls: one stream per syntax and provider pairing, each naming the template or
 * parser tests it follows, with the decoded turn it must give (`<name>.expected.json`). Run with
 * TOOLWIRE_WRITE_TEXT_CALLS=1 to write a missing expectation (then read it before committing).
 */
const DIR = join(TESTDATA, "text-calls");
const files = readdirSync(DIR)
  .filter((name) => name.endsWith(".ndjson"))
  .sort();

function optionsOf(text: string): DecoderOptions["textCalls"] {
  const line = /^# textCalls: (.*)$/m.exec(text);
  if (!line) throw new Error("a text-calls stream must say its options in a '# textCalls: <json>' header line");
  return JSON.parse(line[1] as string) as DecoderOptions["textCalls"];
}

type Stream = ReturnType<typeof parseRecords>[number];

/** A Chat Completions content delta (and nothing else in its event), or null. */
function contentOf(event: Stream["events"][number]): string | null {
  const data = (event as { data?: unknown }).data;
  if (typeof data !== "object" || data === null) return null;
  const choices = (data as { choices?: unknown }).choices;
  if (!Array.isArray(choices) || choices.length !== 1) return null;
  const choice = choices[0] as { delta?: Record<string, unknown>; finish_reason?: unknown };
  const delta = choice.delta;
  if (!delta || choice.finish_reason !== null || typeof delta.content !== "string" || Object.keys(delta).length !== 1) return null;
  return delta.content;
}

/**
 * The stream with its run of content deltas cut anew at `cuts` (the same text, other deltas), or
 * null when its content deltas are not one run (another provider, or content between other events).
 */
function rechunk(stream: Stream, cuts: readonly number[]): Stream | null {
  const events = stream.events;
  const first = events.findIndex((event) => contentOf(event) !== null);
  if (first < 0) return null;
  let last = first;
  while (last + 1 < events.length && contentOf(events[last + 1]!) !== null) last++;
  if (events.slice(last + 1).some((event) => contentOf(event) !== null)) return null;
  const text = events.slice(first, last + 1).map((event) => contentOf(event) as string).join("");
  const template = events[first] as { data: { choices: Array<Record<string, unknown>> } };
  const pieces = cutText(text, cuts).map((piece) => ({ ...template, data: { ...template.data, choices: [{ ...template.data.choices[0], delta: { content: piece } }] } }));
  return { ...stream, events: [...events.slice(0, first), ...pieces, ...events.slice(last + 1)] as Stream["events"] };
}

function project(turn: DecodedTurn) {
  return {
    sequence: turn.sequence,
    provider: turn.provider,
    status: turn.status,
    finishReason: turn.finishReason,
    rawFinishReason: turn.rawFinishReason,
    text: turn.text,
    reasoning: turn.reasoning,
    toolCalls: turn.toolCalls.map((call) => ({
      index: call.index,
      id: call.id,
      name: call.name,
      arguments: call.arguments,
      rawArguments: call.rawArguments,
      source: call.source,
      textSyntax: call.textSyntax ?? null,
      complete: call.complete,
      repairs: call.repairs,
      // The message's wording is not part of the expectation: its code and cause are.
      error: call.error ? { code: call.error.code, ...(call.error.cause ? { cause: call.error.cause } : {}) } : null,
    })),
    diagnostics: turn.diagnostics.map((d) => d.code),
  };
}

describe("testdata/text-calls", () => {
  it("holds at least the pairings the issue names", () => {
    for (const prefix of ["hermes__openai-chat", "qwen3-coder__openai-chat", "kimi-k2__bedrock", "kimi-k2__openai-chat", "mistral__", "llama3-json__", "deepseek__", "harmony__", "groq-failed-generation__"]) {
      expect(files.some((name) => name.startsWith(prefix)), prefix).toBe(true);
    }
  });

  for (const name of files) {
    it(name, () => {
      const text = readFileSync(join(DIR, name), "utf8");
      expect(text, "each stream names its source").toMatch(/^# source: /m);
      const textCalls = optionsOf(text);
      const turns = parseRecords(text).map((stream) => project(replayEvents(stream, { textCalls })));
      const expectedPath = join(DIR, name.replace(/\.ndjson$/, ".expected.json"));
      if (!existsSync(expectedPath) && process.env.TOOLWIRE_WRITE_TEXT_CALLS === "1") writeFileSync(expectedPath, JSON.stringify(turns, null, 2) + "\n");
      expect(turns).toEqual(JSON.parse(readFileSync(expectedPath, "utf8")));

      // Off by default: the same stream decodes to text and no call read from it.
      for (const stream of parseRecords(text)) {
        const plain = replayEvents(stream);
        expect(plain.toolCalls.filter((call) => call.source === "text" || call.source === "failed_generation")).toEqual([]);
      }
      // Idempotent on replay: the same stream and options give the same turn.
      expect(parseRecords(text).map((stream) => project(replayEvents(stream, { textCalls })))).toEqual(turns);

      // Any split of the text into deltas gives the same turn (calls, text, reasoning, ids).
      const streams = parseRecords(text);
      if (streams.some((stream) => rechunk(stream, []) === null)) return;
      fc.assert(
        fc.property(fc.array(fc.nat({ max: 2000 }), { maxLength: 40 }), (cuts) => {
          expect(streams.map((stream) => project(replayEvents(rechunk(stream, cuts) as Stream, { textCalls })))).toEqual(turns);
        }),
        { numRuns: 40 },
      );
    });
  }

  it.skipIf(corpusDir("upstream") === null)("recovers the call from the recorded Groq tool_use_failed stream (pydantic-ai cassette, in the upstream corpus), turn still error", () => {
    const [first] = upstreamFile("openai-chat", "pydantic__pydantic-ai__test_groq__test_tool_use_failed_error_streaming.ndjson").streams;
    const turn = replayEvents(first!, { textCalls: "auto" });
    expect(turn.status).toBe("error");
    expect(turn.toolCalls).toEqual([
      {
        index: 0,
        id: "tw_text_0",
        name: "get_something_by_name",
        arguments: { invalid_param: "value" },
        rawArguments: '{\n  "invalid_param": "value"\n}',
        source: "failed_generation",
        textSyntax: "llama3-json",
        complete: true,
        repairs: [],
        error: null,
        kind: "client",
      },
    ]);
    expect(turn.diagnostics.map((d) => d.code)).toContain("failed_generation_calls");
    // Off by default: only the diagnostic the decoder always gave.
    expect(replayEvents(first!).toolCalls).toEqual([]);
  });
});

import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { expect, it } from "vitest";
import { parseRecords } from "../../src/framing/records.js";
import { replayEvents } from "../../src/replay.js";
import type { DecodedTurn, DecoderOptions } from "../../src/types.js";
import { describeCorpus } from "../helpers/corpus.js";

/**
 * The model outputs that vLLM's tool parsers, SGLang's detectors and llama.cpp's chat parsers feed
 * their own tests (../shared/corpus/text-calls-peer, see its MANIFEST.md), streamed as a server
 * streams them: each decodes with `textCalls: "auto"` (and the request's tools where the case
 * carries them) to the calls and text its peer test expects.
 */

interface ExpectedCall {
  name: string;
  arguments?: unknown;
  complete?: boolean;
}

interface PeerExpectation {
  provider?: string;
  toolCalls: ExpectedCall[];
  text?: string;
  textIncludes?: string | string[];
  textExcludes?: string | string[];
  distinctIds?: boolean;
  ignoreArguments?: boolean;
  tools?: unknown[];
  source?: string;
}

const list = (value: string | string[] | undefined): string[] => (value === undefined ? [] : Array.isArray(value) ? value : [value]);

/** Decodes one case as `toolwire replay --text-calls auto [--tools]` does. */
export function decodePeerCase(dir: string, name: string): { turn: DecodedTurn; expectation: PeerExpectation } {
  const expectation = JSON.parse(readFileSync(join(dir, `${name}.expect.json`), "utf8")) as PeerExpectation;
  const [stream] = parseRecords(readFileSync(join(dir, `${name}.ndjson`), "utf8"));
  const textCalls: DecoderOptions["textCalls"] = expectation.tools ? { syntaxes: "auto", tools: expectation.tools as Record<string, unknown>[] } : "auto";
  const turn = replayEvents(stream!, { provider: "openai-chat", textCalls });
  return { turn, expectation };
}

/** The differences between a decoded turn and the peer's expectation (empty when it agrees). */
export function peerMisses(turn: DecodedTurn, expectation: PeerExpectation): string[] {
  const misses: string[] = [];
  const calls = turn.toolCalls;
  if (calls.length !== expectation.toolCalls.length) misses.push(`${calls.length} calls (${calls.map((c) => c.name).join(", ")}), expected ${expectation.toolCalls.length}`);
  expectation.toolCalls.forEach((want, k) => {
    const got = calls[k];
    if (!got) return;
    if (got.name !== want.name) misses.push(`call ${k} is ${got.name}, expected ${want.name}`);
    if ((want.complete ?? true) !== got.complete) misses.push(`call ${k} complete=${got.complete}`);
    if (!expectation.ignoreArguments && want.arguments !== undefined && JSON.stringify(sorted(got.arguments)) !== JSON.stringify(sorted(want.arguments))) {
      misses.push(`call ${k} arguments ${JSON.stringify(got.arguments)} (raw ${JSON.stringify(got.rawArguments)}), expected ${JSON.stringify(want.arguments)}`);
    }
  });
  if (expectation.text !== undefined && turn.text !== expectation.text) misses.push(`text ${JSON.stringify(turn.text)}, expected ${JSON.stringify(expectation.text)}`);
  for (const part of list(expectation.textIncludes)) if (!turn.text.includes(part)) misses.push(`text ${JSON.stringify(turn.text)} lacks ${JSON.stringify(part)}`);
  for (const part of list(expectation.textExcludes)) if (turn.text.includes(part)) misses.push(`text ${JSON.stringify(turn.text)} holds ${JSON.stringify(part)}`);
  if (expectation.distinctIds && new Set(calls.map((c) => c.id)).size !== calls.length) misses.push("call ids are not distinct");
  return misses;
}

function sorted(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sorted);
  if (value && typeof value === "object") return Object.fromEntries(Object.keys(value).sort().map((k) => [k, sorted((value as Record<string, unknown>)[k])]));
  return value;
}

/**
 * Cases where toolwire reads the output differently from the peer on purpose, with the reason and
 * what toolwire gives instead, derived from the peer's own expectation (asserted below). Everything
 * else in the peer's expectation holds.
 */
const DIVERGES: Record<string, { reason: string; instead: (expectation: PeerExpectation) => { text: string; reasoning: string } }> = {
  "glm-vllm-think-block-kept-in-content": {
    reason:
      "vLLM's GLM tool parser, run without a reasoning parser, leaves <think>…</think> in the content; toolwire reads reasoning written into the text as reasoning (issue 30), as llama.cpp and vLLM with its reasoning parser do.",
    instead: (expectation) => {
      const think = /^<think>([\s\S]*?)<\/think>/.exec(expectation.text ?? "");
      if (!think) throw new Error("the case no longer starts with a think block");
      return { text: (expectation.text as string).slice(think[0].length), reasoning: think[1] as string };
    },
  },
};

describeCorpus("text-calls-peer", "peer tool-parser test outputs decode as their peers expect", (dir) => {
  const names = readdirSync(dir)
    .filter((file) => file.endsWith(".expect.json"))
    .map((file) => file.slice(0, -".expect.json".length))
    .sort();

  it("holds the 80 cases of the manifest", () => {
    expect(names.length).toBe(80);
  });

  for (const name of names) {
    it(name, () => {
      const { turn, expectation } = decodePeerCase(dir, name);
      const diverges = DIVERGES[name];
      if (diverges) {
        const instead = diverges.instead(expectation);
        expect(peerMisses(turn, { ...expectation, text: instead.text })).toEqual([]);
        expect(turn.reasoning).toBe(instead.reasoning);
      } else expect(peerMisses(turn, expectation)).toEqual([]);
      // The finish reason is tool_calls only when a runnable call was read.
      const runnable = turn.toolCalls.some((call) => call.complete && call.arguments !== null);
      if (turn.finishReason === "tool_calls") expect(runnable).toBe(true);
    });
  }
});

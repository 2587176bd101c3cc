import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { importRecording } from "../../src/import/index.js";
import { replayEvents, toReplayJson } from "../../src/replay.js";
import type { DecoderOptions } from "../../src/types.js";
import { describeCorpus } from "../helpers/corpus.js";
import { compareTurns, gitBlobId, parseManifest, type Expectation } from "../helpers/peer-corpus.js";

/**
 * The peer corpus (shared/corpus/peer): recordings from other projects' test fixtures, each with
 * `<file>.expect.json`, the calls those projects' tests expect. Checked as its MANIFEST.md says:
 * `toolwire import <file>` then `toolwire replay --json` (here in memory: importRecording, the
 * function the CLI uses, then replayEvents and the --json shape), comparing the number of turns,
 * per turn the number of calls, per call `name` and `arguments` (deep equality; an expectation
 * without an `arguments` key leaves them unchecked) and `complete` where given. The bytes are
 * checked first against the manifest's size and git blob id, so a changed file cannot pass.
 */

/**
 * Files decoded with options other than the defaults `toolwire replay --json` uses, and why. The
 * corpus expectations stay as they are: these calls are real, but toolwire reads calls written as
 * text only when asked (`textCalls`, "Off when absent": src/types.ts DecoderOptions), because a
 * call read from prose is a decision the caller must opt into. With `--text-calls auto` both
 * decode to exactly the expected calls.
 */
const DECODE_OVERRIDES: Readonly<Record<string, { options: DecoderOptions; reason: string }>> = {
  "pydantic__pydantic-ai__tests__models__cassettes__test_groq__test_tool_use_failed_error_streaming.yaml": {
    options: { textCalls: "auto" },
    reason:
      "turn 1 has no streamed call: Groq rejected the model's output (event: error, code tool_use_failed) and the call exists only in error.failed_generation, which toolwire reads (source failed_generation, turn status error) with textCalls on",
  },
  "vercel__ai__packages__amazon-bedrock__src____fixtures____issue-11409-kimi-k2-thinking-read-file.chunks.txt": {
    options: { textCalls: { syntaxes: "auto", reasoning: true } },
    reason:
      "Kimi K2 on Bedrock wrote the call into a text block (<function=read_file><parameter=…>), no toolUse block, and inside a <think> it never closed. A call written while thinking is reasoning and never runnable unless the caller opts in (textCalls.reasoning, the text-call rules of docs/text-calls.md); vercel/ai's test expects the call, so this file is decoded with that opt-in",
  },
};

/**
 * The decoder a manifest provider may be read with. The manifest files InvokeModelWithResponseStream
 * recordings of Claude under bedrock; their chunk frames unwrap to Anthropic Messages events, which
 * toolwire decodes with the anthropic decoder (as it does for the upstream corpus).
 */
const ACCEPTED_DECODERS: Readonly<Record<string, readonly string[]>> = { bedrock: ["bedrock", "anthropic"] };

describe("peer corpus helpers", () => {
  it("gitBlobId is git hash-object", () => {
    // `printf 'hello\n' | git hash-object --stdin` and `git hash-object /dev/null`.
    expect(gitBlobId(new TextEncoder().encode("hello\n"))).toBe("ce013625030ba8dba906f756967f9e9ca394464a");
    expect(gitBlobId(new Uint8Array(0))).toBe("e69de29bb2d1d6434b8b29ae775ad8c2e48c5391");
  });

  it("compareTurns names each difference and ignores arguments an expectation leaves out", () => {
    const call = (name: string, args: Record<string, unknown> | null, complete = true) => ({ index: 0, id: "i", name, arguments: args, rawArguments: "", source: "delta" as const, complete, repairs: [], error: null });
    const turn = (calls: ReturnType<typeof call>[]) => ({ sequence: null, provider: "openai-chat" as const, status: "complete" as const, finishReason: "tool_calls" as const, text: "", toolCalls: calls, usage: null, diagnostics: [] });
    const expected = (calls: Expectation["turns"][number]["toolCalls"]): Expectation => ({ provider: "openai-chat", source: { repo: "r", path: "p", blob: "b" }, turns: [{ toolCalls: calls }] });
    expect(compareTurns([turn([call("a", { x: 1 })])], expected([{ name: "a", arguments: { x: 1 }, complete: true }]))).toEqual([]);
    expect(compareTurns([turn([call("a", {})])], expected([{ name: "a" }]))).toEqual([]);
    expect(compareTurns([turn([call("b", null, false)])], expected([{ name: "a", arguments: { x: 1 }, complete: true }]))).toEqual([
      'turn 1 call 1: name "b", expected "a"',
      'turn 1 call 1: arguments null (raw "", repairs []), expected {"x":1}',
      "turn 1 call 1: complete false, expected true",
    ]);
    expect(compareTurns([], expected([]))).toEqual(["0 turn(s) decoded, 1 expected"]);
  });
});

describeCorpus("peer", "peer corpus: other projects' recordings decode to the calls their tests expect", (dir) => {
  const manifest = parseManifest(readFileSync(join(dir, "MANIFEST.md"), "utf8"));
  const onDisk = readdirSync(dir, { withFileTypes: true })
    .filter((entry) => entry.isFile() && entry.name !== "MANIFEST.md" && !entry.name.endsWith(".expect.json"))
    .map((entry) => entry.name)
    .sort();

  describe("inventory", () => {
    it("the manifest lists every recording in the folder, numbered 1..N, each with an .expect.json", () => {
      expect(manifest.length).toBe(78);
      expect(manifest.map((row) => row.number)).toEqual(manifest.map((_, i) => i + 1));
      expect([...manifest.map((row) => row.file)].sort()).toEqual(onDisk);
      const names = new Set(readdirSync(dir));
      for (const row of manifest) expect(names.has(`${row.file}.expect.json`), `${row.file}.expect.json`).toBe(true);
    });

    it("every decode override names a file of the corpus", () => {
      for (const file of Object.keys(DECODE_OVERRIDES)) expect(onDisk, file).toContain(file);
    });
  });

  const failures = new Map<string, string[]>();

  describe.each(manifest.map((row) => [row.number, row.file, row] as const))("%i %s", (_number, file, row) => {
    let bytes: Uint8Array;
    let expected: Expectation;
    beforeAll(() => {
      bytes = new Uint8Array(readFileSync(join(dir, file)));
      expected = JSON.parse(readFileSync(join(dir, `${file}.expect.json`), "utf8")) as Expectation;
    });

    it("has the manifest's bytes (size and git blob id)", () => {
      const blob = gitBlobId(bytes);
      expect(bytes.length, "size").toBe(row.bytes);
      expect(blob.startsWith(row.blob), `git blob ${blob} does not start with the manifest's ${row.blob}`).toBe(true);
      expect(blob, "the .expect.json source.blob").toBe(expected.source.blob);
    });

    it("imports and decodes to the expected calls", async () => {
      const override = DECODE_OVERRIDES[file];
      const imported = await importRecording(file, bytes);
      const turns = imported.streams.map((stream) => toReplayJson(replayEvents(stream, override?.options ?? {})));
      const problems = compareTurns(turns, expected);
      const accepted = ACCEPTED_DECODERS[expected.provider] ?? [expected.provider];
      for (const turn of turns) if (!accepted.includes(turn.provider)) problems.push(`decoded as ${turn.provider}, the manifest says ${expected.provider}`);
      if (problems.length > 0) failures.set(file, problems);
      expect(problems).toEqual([]);
    });
  });

  describe("score", () => {
    it("every file decodes to its expectation", () => {
      const lines = [...failures].map(([file, problems]) => `${file}\n  ${problems.join("\n  ")}`);
      expect(lines, `${manifest.length - failures.size} of ${manifest.length} files decode to their expectations`).toEqual([]);
    });
  });
});

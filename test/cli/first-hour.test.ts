import { closeSync, copyFileSync, ftruncateSync, mkdtempSync, openSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { describe, expect, it } from "vitest";
import { EXIT, type CliContext } from "../../src/cli/context.js";
import { main } from "../../src/cli/main.js";
import { parseRecords } from "../../src/framing/records.js";
import { replayEvents, toReplayJson } from "../../src/replay.js";
import { TESTDATA } from "../helpers/testdata.js";
import { cli } from "./support.js";

/**
 * Issue 29, "every command behaves the same way": each bullet as a new user meets it, on the
 * hand-written streams only.
 */

const CHAT = "openai-chat/handwritten__groq-several-calls-one-delta.ndjson";
const GEMINI = "gemini/handwritten__streamed_args_edge_cases.ndjson";
const OLLAMA = "ollama/handwritten__streamed_parallel_calls.ndjson";
const HERMES = "text-calls/hermes__openai-chat__length-cut.ndjson";

function scratch(): string {
  return mkdtempSync(join(tmpdir(), "toolwire-first-hour-"));
}

/** Runs the CLI in-process with `stdin` as standard input. */
async function withStdin(args: string[], stdin: string | Uint8Array, cwd: string): Promise<{ code: number; out: string; err: string }> {
  let out = "";
  let err = "";
  const ctx: CliContext = { out: (text) => void (out += text), err: (text) => void (err += text), cwd, stdin: Readable.from([typeof stdin === "string" ? Buffer.from(stdin) : stdin]) };
  const code = await main(args, ctx);
  return { code, out, err };
}

const ANTHROPIC_HISTORY = [
  { role: "user", content: "What is in a.txt?" },
  { role: "assistant", content: [{ type: "tool_use", id: "toolu_1", name: "read_file", input: { path: "a.txt" } }] },
];
const GEMINI_HISTORY = {
  contents: [
    { role: "user", parts: [{ text: "weather in Paris" }] },
    { role: "model", parts: [{ functionCall: { name: "weather", args: { city: "Paris" } } }] },
  ],
};
const CHAT_HISTORY = [
  { role: "system", content: "be brief" },
  { role: "user", content: "hi" },
  { role: "assistant", content: null, tool_calls: [{ id: "call_1", type: "function", function: { name: "f", arguments: "{}" } }] },
];

describe("history and schema detect the format, and warn on a mismatch", () => {
  it("history check without --format reads the format from the messages", async () => {
    const dir = scratch();
    writeFileSync(join(dir, "claude.json"), JSON.stringify(ANTHROPIC_HISTORY));
    writeFileSync(join(dir, "gemini.json"), JSON.stringify(GEMINI_HISTORY));
    writeFileSync(join(dir, "chat.json"), JSON.stringify(CHAT_HISTORY));
    const claude = await cli(["history", "check", "claude.json"], { cwd: dir });
    expect(claude.out).toMatch(/^claude\.json \(anthropic\): 1 fault/);
    expect(claude.code).toBe(EXIT.findings);
    const gemini = await cli(["history", "check", "gemini.json"], { cwd: dir });
    expect(gemini.out).toMatch(/^gemini\.json \(gemini\): 1 fault/);
    const chat = await cli(["history", "check", "chat.json"], { cwd: dir });
    expect(chat.out).toMatch(/^chat\.json \(openai-chat\): 1 fault/);
  });

  it("a file of another format than --format gets a warning, not a silent 'no faults'", async () => {
    const dir = scratch();
    writeFileSync(join(dir, "chat.json"), JSON.stringify(CHAT_HISTORY));
    const { err } = await cli(["history", "check", "chat.json", "--format", "anthropic"], { cwd: dir });
    expect(err).toMatch(/^toolwire history: warning: 'chat\.json' looks like openai-chat messages .*not anthropic/);
  });

  it("a history whose messages name no format asks for --format (exit 3)", async () => {
    const dir = scratch();
    writeFileSync(join(dir, "plain.json"), JSON.stringify([{ role: "user", content: "hi" }]));
    const { code, err } = await cli(["history", "check", "plain.json"], { cwd: dir });
    expect(code).toBe(EXIT.input);
    expect(err).toMatch(/cannot tell the format of 'plain\.json'.*Pass --format/);
  });

  it("schema check without --target takes the provider of the tool format; a contradicting --target warns", async () => {
    const dir = scratch();
    const tools = [{ type: "function", function: { name: "f", parameters: { type: "object", properties: { a: { type: "string" } } } } }];
    writeFileSync(join(dir, "tools.json"), JSON.stringify(tools));
    const detected = await cli(["schema", "check", "tools.json"], { cwd: dir });
    expect(detected.code).toBe(EXIT.ok);
    expect(detected.out).toContain("f: ok for openai");
    const mismatch = await cli(["schema", "check", "tools.json", "--target", "anthropic"], { cwd: dir });
    expect(mismatch.err).toContain("toolwire schema: warning: 'tools.json' holds openai tool definitions; checking them for anthropic");
  });

  it("import stamps the provider the payloads show, and warns when --provider contradicts them", async () => {
    const dir = scratch();
    const [stream] = parseRecords(readFileSync(join(TESTDATA, CHAT), "utf8"));
    writeFileSync(join(dir, "bare.jsonl"), stream!.events.map((event) => JSON.stringify(event.data)).join("\n") + "\n");
    const plain = await cli(["import", "bare.jsonl"], { cwd: dir });
    expect(plain.code).toBe(EXIT.ok);
    expect(parseRecords(plain.out)[0]?.provider).toBe("openai-chat");
    const forced = await cli(["import", "bare.jsonl", "--provider", "anthropic"], { cwd: dir });
    expect(forced.err).toMatch(/^toolwire import: warning: --provider anthropic but every stream's payloads look like another provider's: .*openai-chat/);
  });
});

describe("replay with a forced provider that decodes nothing", () => {
  it("one summary line for the whole run and exit 3, not one line per stream and exit 0", async () => {
    const { code, err } = await cli(["replay", "testdata/openai-chat", "testdata/ollama", "--provider", "gemini"]);
    expect(code).toBe(EXIT.input);
    const lines = err.trimEnd().split("\n");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^toolwire replay: --provider gemini decoded nothing in \d+ of \d+ streams: their events look like openai-chat \(\d+\), ollama \(\d+\)/);
  });

  it("a provider that fits stays quiet and exits 0", async () => {
    const { code, err } = await cli(["replay", `testdata/${GEMINI}`, "--provider", "gemini"]);
    expect(code).toBe(EXIT.ok);
    expect(err).toBe("");
  });
});

describe("large input is an input error, and files are read as streams", () => {
  it("a file over the limit → exit 3 with its size, before reading it", async () => {
    const dir = scratch();
    // A sparse 611 MiB file: its size is what counts, and it is never read.
    const fd = openSync(join(dir, "huge.ndjson"), "w");
    ftruncateSync(fd, 611 * 1024 * 1024);
    closeSync(fd);
    for (const args of [["replay", "huge.ndjson"], ["import", "huge.ndjson"], ["history", "check", "huge.ndjson", "--format", "anthropic"]]) {
      const { code, err } = await cli(args, { cwd: dir });
      expect(code, args.join(" ")).toBe(EXIT.input);
      expect(err, args.join(" ")).toMatch(/'huge\.ndjson': the input is 611 MiB, more than toolwire reads \(256 MiB; set TOOLWIRE_MAX_INPUT_MIB/);
    }
  });

  it("standard input over the limit → exit 3 too", async () => {
    const before = process.env.TOOLWIRE_MAX_INPUT_MIB;
    process.env.TOOLWIRE_MAX_INPUT_MIB = "0.001";
    try {
      const { code, err } = await withStdin(["replay", "-"], "x".repeat(4096), scratch());
      expect(code).toBe(EXIT.input);
      expect(err).toMatch(/'\(stdin\)': the input is more than 0\.0 MiB/);
    } finally {
      if (before === undefined) delete process.env.TOOLWIRE_MAX_INPUT_MIB;
      else process.env.TOOLWIRE_MAX_INPUT_MIB = before;
    }
  });

  it("a records file read line by line gives the same streams as parseRecords, BOM and CRLF included", async () => {
    const dir = scratch();
    const text = readFileSync(join(TESTDATA, CHAT), "utf8");
    writeFileSync(join(dir, "crlf.ndjson"), "\uFEFF" + text.replace(/\n/g, "\r\n"));
    const plain = await cli(["replay", `testdata/${CHAT}`, "--json"]);
    const crlf = await cli(["replay", "crlf.ndjson", "--json"], { cwd: dir });
    expect(crlf.code).toBe(EXIT.ok);
    expect(crlf.out).toBe(plain.out);
  });
});

describe("a records file is decoded as it is read", () => {
  it("streams one after another and interleaved streams give what parseRecords and replayEvents give", async () => {
    const dir = scratch();
    const text = readFileSync(join(TESTDATA, GEMINI), "utf8");
    const lines = text.split("\n").filter((line) => line.startsWith("{"));
    // The same records with their streams interleaved: every other line swapped with a line of another stream.
    const interleaved = [...lines].sort((a, b) => (JSON.parse(a) as { sequence: string }).sequence.localeCompare((JSON.parse(b) as { sequence: string }).sequence) || 0);
    const mixed = interleaved.map((_, i, all) => all[i % 2 === 0 ? i / 2 : Math.floor(all.length / 2) + (i - 1) / 2] as string);
    writeFileSync(join(dir, "contiguous.ndjson"), text);
    writeFileSync(join(dir, "interleaved.ndjson"), mixed.join("\n") + "\n");
    const expected = (records: string) =>
      parseRecords(records)
        .map((stream) => JSON.stringify(toReplayJson(replayEvents(stream))))
        .join("\n") + "\n";
    expect((await cli(["replay", "contiguous.ndjson", "--json"], { cwd: dir })).out).toBe(expected(text));
    expect((await cli(["replay", "interleaved.ndjson", "--json"], { cwd: dir })).out).toBe(expected(mixed.join("\n")));
    expect(new Set(mixed.map((line) => (JSON.parse(line) as { sequence: string }).sequence)).size).toBeGreaterThan(1);
  });
});

describe("output width: whole lines when piped, the terminal's width on a terminal", () => {
  it("replay --verbose piped keeps every line whole", async () => {
    const { out } = await cli(["replay", "testdata/openai-chat", "--verbose"]);
    expect(out).not.toContain("…");
    expect(Math.max(...out.split("\n").map((line) => Array.from(line).length))).toBeGreaterThan(80);
  });

  it("replay on an 80-column terminal cuts at 80", async () => {
    const { out } = await cli(["replay", `testdata/${CHAT}`, "--verbose"], { columns: 80 });
    for (const line of out.split("\n")) expect(Array.from(line).length).toBeLessThanOrEqual(80);
  });

  it("conformance fits an 80-column terminal and keeps rows whole when piped", async () => {
    const terminal = await cli(["conformance", "testdata/openai-chat"], { columns: 80 });
    for (const line of terminal.out.split("\n")) expect(Array.from(line).length, line).toBeLessThanOrEqual(80);
    expect(terminal.out).toMatch(/…/);
    const piped = await cli(["conformance", "testdata/openai-chat"]);
    expect(piped.out).toContain("handwritten__groq-several-calls-one-delta.ndjson");
    expect(piped.out.split("\n").find((line) => line.includes("groq-several"))).not.toContain("…");
  });
});

describe("stdin, garbage, unknown options and one error style", () => {
  it("'-' reads standard input in replay and import", async () => {
    const text = readFileSync(join(TESTDATA, CHAT), "utf8");
    const replayed = await withStdin(["replay", "-", "--json"], text, scratch());
    expect(replayed.code).toBe(EXIT.ok);
    expect(replayed.out).toBe((await cli(["replay", `testdata/${CHAT}`, "--json"])).out);
    const imported = await withStdin(["import", "-"], text, scratch());
    expect(imported.code).toBe(EXIT.ok);
    expect(parseRecords(imported.out)[0]?.events).toEqual(parseRecords(text)[0]?.events);
    expect(imported.out).toMatch(/^# source: \(stdin\)$/m);
    const empty = await withStdin(["replay", "-"], "", scratch());
    expect(empty.code).toBe(EXIT.input);
    expect(empty.err).toBe("toolwire replay: '(stdin)': the file is empty: no recorded stream in it\n");
  });

  it("binary garbage quoted in an error is escaped: no control character reaches the terminal", async () => {
    const dir = scratch();
    const garbage = Buffer.from([0x7b, 0x1b, 0x5b, 0x32, 0x4a, 0x07, 0x00, 0xff, 0xfe, 0x9b, 0x0d, 0x0a]);
    writeFileSync(join(dir, "junk.ndjson"), garbage);
    const { code, err } = await cli(["replay", "junk.ndjson"], { cwd: dir });
    expect(code).toBe(EXIT.input);
    // eslint-disable-next-line no-control-regex
    expect(err.replace(/\n/g, "")).not.toMatch(/[\x00-\x08\x0b-\x1f\x7f-\x9f\uFFFD]/);
    expect(err).toContain("\\x1b");
    const bogus = await cli(["replay", "x", "--provider", "\x1b[2Jevil"]);
    expect(bogus.err).toContain("unknown provider '\\x1b[2Jevil'");
  });

  it.each(["replay", "import", "conformance", "expect", "serve", "history", "schema", "fuzz"])("%s --bogus: 'unknown option --bogus', one line", async (command) => {
    const { code, err } = await cli([command, ...(command === "history" || command === "schema" ? ["check"] : []), "x.json", "--bogus"]);
    expect(code).toBe(EXIT.usage);
    expect(err).toBe(`toolwire ${command}: unknown option --bogus (see 'toolwire ${command} --help')\n`);
  });

  it.each([
    ["replay", ["replay", "x", "--provider", "cohere"]],
    ["import", ["import", "x", "--provider", "cohere"]],
    ["expect", ["expect", "x", "--provider", "cohere"]],
    ["serve", ["serve", "x", "--provider", "cohere"]],
    ["fuzz", ["fuzz", "--provider", "cohere"]],
  ])("%s: an unknown provider is worded like every other unknown value", async (command, args) => {
    const { code, err } = await cli(args);
    expect(code).toBe(EXIT.usage);
    expect(err).toBe(`toolwire ${command}: unknown provider 'cohere'. Expected one of: anthropic, openai-chat, openai-responses, gemini, bedrock, ollama.\n`);
  });

  it("an empty file is 'the file is empty' in every command", async () => {
    const dir = scratch();
    writeFileSync(join(dir, "empty.json"), "");
    writeFileSync(join(dir, "empty.ndjson"), "");
    for (const args of [
      ["history", "check", "empty.json", "--format", "anthropic"],
      ["schema", "check", "empty.json", "--target", "openai"],
      ["replay", "empty.ndjson"],
      ["import", "empty.json"],
    ]) {
      const { code, err } = await cli(args, { cwd: dir });
      expect(code, args.join(" ")).toBe(EXIT.input);
      expect(err, args.join(" ")).toMatch(/: 'empty\.(json|ndjson)': the file is empty/);
    }
  });
});

describe("schema check on a history file", () => {
  it("says it is a history, not a schema (exit 3)", async () => {
    const dir = scratch();
    writeFileSync(join(dir, "history.json"), JSON.stringify({ model: "m", messages: ANTHROPIC_HISTORY }));
    const { code, err, out } = await cli(["schema", "check", "history.json", "--target", "openai"], { cwd: dir });
    expect(code).toBe(EXIT.input);
    expect(out).toBe("");
    expect(err).toBe("toolwire schema: 'history.json' is a conversation history (anthropic messages), not a JSON Schema or tool definitions: check it with 'toolwire history check history.json'\n");
  });
});

describe("text-call recordings and draft expectations", () => {
  it("replay honours a file's '# textCalls' header", async () => {
    const { code, out } = await cli(["replay", `testdata/${HERMES}`, "--json"]);
    expect(code).toBe(EXIT.ok);
    const turn = JSON.parse(out) as { toolCalls: Array<{ name: string; error: { code: string } | null }> };
    expect(turn.toolCalls).toHaveLength(1);
    expect(turn.toolCalls[0]).toMatchObject({ name: "write_file", error: { code: "truncated" } });
  });

  it("without the header, replay hints at --text-calls where the text holds calls", async () => {
    const dir = scratch();
    writeFileSync(join(dir, "bare.ndjson"), readFileSync(join(TESTDATA, HERMES), "utf8").replace(/^# textCalls:.*\n/m, ""));
    const { code, err } = await cli(["replay", "bare.ndjson"], { cwd: dir });
    expect(code).toBe(EXIT.ok);
    expect(err).toBe("toolwire replay: 1 stream without tool calls holds calls written in the text (first: 'bare.ndjson'): replay with --text-calls auto to read them.\n");
    const plain = await cli(["replay", `testdata/${CHAT}`]);
    expect(plain.err).toBe("");
  });

  it("expect and conformance honour the header too", async () => {
    const dir = scratch();
    copyFileSync(join(TESTDATA, HERMES), join(dir, "hermes.ndjson"));
    expect((await cli(["expect", "hermes.ndjson"], { cwd: dir })).out).toMatch(/^wrote {2}hermes\.expected\.json \(openai-chat, 1 stream\(s\), 1 call\(s\)\)$/m);
    const { code, out } = await cli(["conformance", "hermes.ndjson"], { cwd: dir });
    expect(code).toBe(EXIT.ok);
    expect(out).toMatch(/1 match their expectation/);
  });

  it("conformance flags a match against an unverified DRAFT expectation", async () => {
    const dir = scratch();
    copyFileSync(join(TESTDATA, OLLAMA), join(dir, "ollama.ndjson"));
    expect((await cli(["expect", "ollama.ndjson"], { cwd: dir })).code).toBe(EXIT.ok);
    const draft = await cli(["conformance", "ollama.ndjson"], { cwd: dir });
    expect(draft.code).toBe(EXIT.ok);
    expect(draft.out).toMatch(/ollama\.ndjson +.*equal \(DRAFT: unverified\)$/m);
    expect(draft.out).toMatch(/1 expectation\(s\) are unverified DRAFTs/);
    const expectation = JSON.parse(readFileSync(join(dir, "ollama.expected.json"), "utf8")) as Record<string, unknown>;
    writeFileSync(join(dir, "ollama.expected.json"), JSON.stringify({ ...expectation, verifiedBy: "read by hand" }));
    const reviewed = await cli(["conformance", "ollama.ndjson"], { cwd: dir });
    expect(reviewed.out).not.toMatch(/DRAFT/);
  });
});

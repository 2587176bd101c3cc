import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { main } from "../../src/cli/main.js";
import type { CliContext } from "../../src/cli/context.js";
import { TESTDATA } from "../helpers/testdata.js";

async function cli(args: string[], cwd = TESTDATA): Promise<{ code: number; out: string; err: string }> {
  let out = "";
  let err = "";
  const ctx: CliContext = { out: (t) => void (out += t), err: (t) => void (err += t), cwd };
  const code = await main(args, ctx);
  return { code, out, err };
}

const KIMI = "anthropic/handwritten__kimi-start-input-quirks.ndjson";

describe("toolwire replay", () => {
  it("prints the JSON-lines contract: one object per sequence, in file order", async () => {
    const { code, out } = await cli(["replay", KIMI, "--json"]);
    expect(code).toBe(0);
    const lines = out.trim().split("\n").map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(lines.map((l) => l.sequence)).toEqual([
      "kimi_start_input_repeated_in_delta",
      "kimi_delta_only",
      "kimi_start_input_only",
      "kimi_null_start_then_delta",
      "kimi_start_input_continued_by_delta",
      "kimi_empty_start_then_delta",
    ]);
    for (const line of lines) {
      expect(Object.keys(line).sort()).toEqual(["diagnostics", "finishReason", "provider", "sequence", "status", "text", "toolCalls", "usage"]);
      for (const call of line.toolCalls as Array<Record<string, unknown>>) {
        expect(Object.keys(call).sort()).toEqual(["arguments", "complete", "error", "id", "index", "name", "rawArguments", "repairs", "source"]);
      }
    }
    expect(lines[4]?.toolCalls).toEqual([
      {
        index: 0,
        id: "tool_kimi_05",
        name: "glob",
        arguments: { pattern: "*.md", path: "docs/reference" },
        rawArguments: '{"pattern":"*.md","path":"docs/reference"}',
        source: "merged",
        complete: true,
        repairs: ["start_continuation"],
        error: null,
      },
    ]);
  });

  it("--sequence selects one stream", async () => {
    const { out } = await cli(["replay", KIMI, "--json", "--sequence", "kimi_start_input_only"]);
    const lines = out.trim().split("\n");
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0] as string)).toMatchObject({ toolCalls: [{ id: "tool_kimi_03", source: "start" }] });
  });

  it("replays a directory with a readable report and a summary line", async () => {
    const { code, out } = await cli(["replay", "anthropic", "--verbose"]);
    expect(code).toBe(0);
    expect(out).toContain("✓ get_forecast toolu_tw_claude_a1");
    expect(out).toContain("✗ write_file toolu_tw_claude_b2 truncated (max_tokens)");
    expect(out).toMatch(/Replayed 6 files, \d+ streams, \d+ tool calls: /);
  });

  it("replays a raw SSE body directly, converting it on the fly", async () => {
    const rawFile = join(TESTDATA, "raw", "anthropic-weather.sse");
    const { code, out } = await cli(["replay", rawFile, "--json"]);
    expect(code).toBe(0);
    expect(JSON.parse(out)).toMatchObject({ provider: "anthropic", toolCalls: [{ name: "get_weather", arguments: { location: "Bergen" } }] });
  });

  describe("errors are clear and typed by exit code", () => {
    const dir = mkdtempSync(join(tmpdir(), "toolwire-cli-"));

    it("unknown provider → 2", async () => {
      const { code, err } = await cli(["replay", KIMI, "--provider", "cohere"]);
      expect(code).toBe(2);
      expect(err).toContain("unknown provider 'cohere'");
    });

    it("unknown flag → 2, one line pointing at --help", async () => {
      const { code, err } = await cli(["replay", KIMI, "--bogus"]);
      expect(code).toBe(2);
      expect(err).toBe("toolwire replay: unknown option --bogus (see 'toolwire replay --help')\n");
    });

    it("missing file → 3", async () => {
      const { code, err } = await cli(["replay", "nope.ndjson"]);
      expect(code).toBe(3);
      expect(err).toBe("toolwire replay: cannot read 'nope.ndjson': no such file or directory\n");
    });

    it("malformed record line → 3 naming the line", async () => {
      const file = join(dir, "bad.ndjson");
      writeFileSync(file, '{"data": {"type": "ping"}}\n{not json\n');
      const { code, err } = await cli(["replay", file]);
      expect(code).toBe(3);
      expect(err).toMatch(/line 2/);
    });

    it("payloads of no known provider → 3 asking for --provider", async () => {
      const file = join(dir, "unknown.ndjson");
      writeFileSync(file, '{"data": {"hello": "world"}}\n');
      const { code, err } = await cli(["replay", file]);
      expect(code).toBe(3);
      expect(err).toContain("--provider");
    });

    it("payloads of two providers → 3 naming both", async () => {
      const file = join(dir, "mixed.ndjson");
      writeFileSync(file, '{"data": {"type": "message_start", "message": {}}}\n{"data": {"object": "chat.completion.chunk", "choices": []}}\n');
      const { code, err } = await cli(["replay", file]);
      expect(code).toBe(3);
      expect(err).toMatch(/anthropic.*openai-chat/);
    });

    it("unknown command → 2", async () => {
      const { code, err } = await cli(["frobnicate"]);
      expect(code).toBe(2);
      expect(err).toContain("unknown command");
    });
  });
});

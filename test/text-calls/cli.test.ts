import { describe, expect, it } from "vitest";
import { main } from "../../src/cli/main.js";
import type { CliContext } from "../../src/cli/context.js";
import { TESTDATA } from "../helpers/testdata.js";

async function cli(args: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = "";
  let err = "";
  const ctx: CliContext = { out: (t) => void (out += t), err: (t) => void (err += t), cwd: TESTDATA };
  const code = await main(args, ctx);
  return { code, out, err };
}

const FILE = "text-calls/hermes__openai-chat__qwen2.5-vllm-no-parser.ndjson";

describe("toolwire replay --text-calls", () => {
  it("reads calls written into the text with the flag, or with the file's header; --text-calls off reads none", async () => {
    // Issue 29: the file's '# textCalls: "auto"' header is honoured (it was ignored without the flag).
    const off = JSON.parse((await cli(["replay", FILE, "--json", "--text-calls", "off"])).out) as { toolCalls: unknown[] };
    expect(off.toolCalls).toEqual([]);
    const byHeader = JSON.parse((await cli(["replay", FILE, "--json"])).out) as { toolCalls: Array<{ name: string }> };
    expect(byHeader.toolCalls.map((c) => c.name)).toEqual(["get_weather", "write_note"]);
    const { code, out } = await cli(["replay", FILE, "--json", "--text-calls", "auto"]);
    expect(code).toBe(0);
    const line = JSON.parse(out) as { toolCalls: Array<{ name: string; source: string; id: string }>; finishReason: string };
    expect(line.toolCalls.map((c) => [c.id, c.name, c.source])).toEqual([
      ["tw_text_0", "get_weather", "text"],
      ["tw_text_1", "write_note", "text"],
    ]);
    expect(line.finishReason).toBe("tool_calls");
  });

  it("accepts syntax names and rejects unknown ones as a usage error", async () => {
    const named = JSON.parse((await cli(["replay", FILE, "--json", "--text-calls", "kimi-k2,mistral"])).out) as { toolCalls: unknown[] };
    expect(named.toolCalls).toEqual([]);
    const { code, err } = await cli(["replay", FILE, "--text-calls", "klingon"]);
    expect(code).toBe(2);
    expect(err).toMatch(/unknown text-call syntax 'klingon'/);
  });
});

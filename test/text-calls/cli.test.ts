import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
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

describe("toolwire replay --tools", () => {
  const QWEN = "text-calls/qwen3-coder__openai-chat__llama-cpp-generic.ndjson";
  const dir = mkdtempSync(join(tmpdir(), "toolwire-tools-"));
  const write = (name: string, value: unknown): string => {
    const path = join(dir, name);
    writeFileSync(path, typeof value === "string" ? value : JSON.stringify(value));
    return path;
  };
  const readFileTool = (lineType: string) => ({
    type: "function",
    function: { name: "read_file", parameters: { type: "object", properties: { path: { type: "string" }, line: { type: lineType } } } },
  });

  it("types XML parameter values by the tools' schemas, as textCalls.tools does", async () => {
    const asString = JSON.parse((await cli(["replay", QWEN, "--json", "--text-calls", "auto", "--tools", write("string.json", [readFileTool("string")])])).out) as { toolCalls: Array<{ arguments: unknown }> };
    expect(asString.toolCalls[0]?.arguments).toEqual({ path: "src/main.ts", line: "42" });
    // A request body with "tools", in the Anthropic shape.
    const body = { tools: [{ name: "read_file", input_schema: { type: "object", properties: { line: { type: "integer" } } } }] };
    const typed = JSON.parse((await cli(["replay", QWEN, "--json", "--text-calls", "auto", "--tools", write("body.json", body)])).out) as { toolCalls: Array<{ arguments: unknown }> };
    expect(typed.toolCalls[0]?.arguments).toEqual({ path: "src/main.ts", line: 42 });
  });

  it("only the tools' names become calls", async () => {
    const other = { tools: [{ name: "write_file", parameters: { type: "object" } }] };
    const out = JSON.parse((await cli(["replay", QWEN, "--json", "--text-calls", "auto", "--tools", write("other.json", other)])).out) as { toolCalls: unknown[] };
    expect(out.toolCalls).toEqual([]);
  });

  it("bad use is a usage error, a missing file an input error", async () => {
    const without = await cli(["replay", QWEN, "--tools", write("t.json", [readFileTool("integer")])]);
    expect(without.code).toBe(2);
    expect(without.err).toMatch(/use it with --text-calls/);
    const notJson = await cli(["replay", QWEN, "--text-calls", "auto", "--tools", write("bad.json", "{nope")]);
    expect(notJson.code).toBe(2);
    expect(notJson.err).toMatch(/not JSON/);
    const noList = await cli(["replay", QWEN, "--text-calls", "auto", "--tools", write("obj.json", { name: 1 })]);
    expect(noList.code).toBe(2);
    expect(noList.err).toMatch(/expected a JSON list of tool definitions/);
    const nameless = await cli(["replay", QWEN, "--text-calls", "auto", "--tools", write("nameless.json", [{ parameters: {} }])]);
    expect(nameless.code).toBe(2);
    expect(nameless.err).toMatch(/tools\[0\] is not a tool definition/);
    const missing = await cli(["replay", QWEN, "--text-calls", "auto", "--tools", join(dir, "absent.json")]);
    expect(missing.code).toBe(3);
    expect(missing.err).toMatch(/cannot read it/);
  });
});

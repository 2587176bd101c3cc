import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { run, summary, usage } from "../../src/cli/commands/import.js";
import { CliError, EXIT, type CliContext } from "../../src/cli/context.js";
import { parseRecords } from "../../src/framing/records.js";

const dir = mkdtempSync(join(tmpdir(), "toolwire-import-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function context(): CliContext & { stdout: string; stderr: string } {
  const ctx = {
    stdout: "",
    stderr: "",
    cwd: dir,
    out(text: string) {
      ctx.stdout += text;
    },
    err(text: string) {
      ctx.stderr += text;
    },
  };
  return ctx;
}

async function cliError(args: string[]): Promise<CliError> {
  try {
    await run(args, context());
  } catch (error) {
    if (error instanceof CliError) return error;
    throw error;
  }
  throw new Error("expected a CliError");
}

const SSE = 'event: message_start\ndata: {"type":"message_start","message":{"id":"m"}}\n\nevent: message_stop\ndata: {"type":"message_stop"}\n\n';
writeFileSync(join(dir, "stream.txt"), SSE);
writeFileSync(join(dir, "prose.txt"), "nothing here\n");

describe("toolwire import", () => {
  it("has a summary and usage", () => {
    expect(summary).toMatch(/NDJSON/);
    expect(usage).toMatch(/^Usage: toolwire import <file\|-> \[--provider P\] \[--out FILE\]/);
  });

  it("writes records with a source header to stdout", async () => {
    const ctx = context();
    expect(await run(["stream.txt", "--provider", "anthropic"], ctx)).toBe(EXIT.ok);
    expect(ctx.stdout.split("\n").slice(0, 2)).toEqual(["# source: stream.txt", "# format: sse (converted by toolwire import)"]);
    expect(parseRecords(ctx.stdout)).toEqual([
      {
        sequence: null,
        provider: "anthropic",
        events: [
          { event: "message_start", data: { type: "message_start", message: { id: "m" } } },
          { event: "message_stop", data: { type: "message_stop" } },
        ],
      },
    ]);
  });

  it("writes to --out and reports on stderr", async () => {
    const ctx = context();
    expect(await run(["stream.txt", "--out", "out.ndjson"], ctx)).toBe(EXIT.ok);
    expect(ctx.stdout).toBe("");
    expect(ctx.stderr).toBe("imported 1 stream(s), 2 event(s) from 'stream.txt' (sse) to 'out.ndjson'\n");
    expect(parseRecords(readFileSync(join(dir, "out.ndjson"), "utf8"))[0]?.events).toHaveLength(2);
  });

  it("rejects an unknown provider as a usage error", async () => {
    const error = await cliError(["stream.txt", "--provider", "openai"]);
    expect(error.exitCode).toBe(EXIT.usage);
    expect(error.message).toBe("unknown provider 'openai'. Expected one of: anthropic, openai-chat, openai-responses, gemini, bedrock, ollama.");
  });

  it("reports unreadable and unrecognized files as input errors naming the file", async () => {
    const missing = await cliError(["nope.yaml"]);
    expect(missing.exitCode).toBe(EXIT.input);
    expect(missing.message).toBe("cannot read 'nope.yaml': no such file or directory");
    const prose = await cliError(["prose.txt"]);
    expect(prose.exitCode).toBe(EXIT.input);
    expect(prose.message).toMatch(/^'prose\.txt': unrecognized format: expected one of raw SSE text/);
  });

  it("rejects missing or extra arguments and unknown flags as usage errors", async () => {
    expect((await cliError([])).exitCode).toBe(EXIT.usage);
    expect((await cliError(["a", "b"])).exitCode).toBe(EXIT.usage);
    expect((await cliError(["stream.txt", "--bogus"])).exitCode).toBe(EXIT.usage);
  });
});

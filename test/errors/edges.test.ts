import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { CliContext } from "../../src/cli/context.js";
import { main } from "../../src/cli/main.js";
import { startReplayServer, type ReplayServer } from "../../src/node/replay-server.js";

/** The converted throw paths that end up in a report or an HTTP response rather than a caller's catch. */

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

async function conformance(dir: string): Promise<Array<{ file: string; verdict: string; error?: string }>> {
  let out = "";
  const ctx: CliContext = { out: (t) => void (out += t), err: () => {}, cwd: dir };
  await main(["conformance", dir, "--json"], ctx);
  return (JSON.parse(out) as { files: Array<{ file: string; verdict: string; error?: string }> }).files;
}

describe("an expectation file of the wrong shape is an error row that says why", () => {
  it.each([
    ["[]", "not a JSON object"],
    ['{"provider": "cohere", "streams": []}', '"provider" must be a provider name, got "cohere"'],
    ['{"provider": "openai-chat", "streams": {}}', '"streams" must be an array'],
  ])("%s", async (expectation, message) => {
    const dir = mkdtempSync(join(tmpdir(), "toolwire-expectation-"));
    dirs.push(dir);
    mkdirSync(join(dir, "openai-chat"));
    writeFileSync(join(dir, "openai-chat", "a.ndjson"), '{"data": {"id": "c", "choices": [{"index": 0, "delta": {"content": "hi"}, "finish_reason": "stop"}]}}\n');
    writeFileSync(join(dir, "openai-chat", "a.expected.json"), expectation);
    const rows = await conformance(dir);
    expect(rows).toHaveLength(1);
    expect(rows[0]?.verdict).toBe("error");
    expect(JSON.stringify(rows[0])).toContain(JSON.stringify(message).slice(1, -1));
  });
});

describe("the replay server", () => {
  let server: ReplayServer | undefined;
  afterAll(async () => {
    await server?.close();
  });

  it("answers a request body over 16 MiB with a 413 naming the limit, not a crash", async () => {
    server = await startReplayServer({ streams: [{ key: "a", file: "a.ndjson", sequence: null, provider: "anthropic", events: [] }] });
    const response = await fetch(`${server.url}/v1/messages`, { method: "POST", headers: { "content-type": "application/json" }, body: "x".repeat(16 * 1024 * 1024 + 1) });
    // 413 Content Too Large (RFC 9110 §15.5.14); it was a 500 until an outside HTTP check.
    expect(response.status).toBe(413);
    expect(await response.text()).toContain("request body larger than 16777216 bytes");
  });
});

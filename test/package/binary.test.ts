import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { copyFileSync, existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/**
 * SLOW (a few seconds to build; postject comes from node_modules or the npm registry). Issue 29:
 * people who want only the proxy and have no Node toolchain get one executable from
 * `npm run build:binary`; here it is built and drives `proxy` in front of `serve`, both run from
 * the executable with no Node.js on the PATH. Skipped, with one line saying why, where it cannot
 * be built (an old Node, no postject and no registry).
 */

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
/** Built outside dist/, which the package test's build removes. */
const OUT = mkdtempSync(join(tmpdir(), "toolwire-binary-build-"));
const EXECUTABLE = join(OUT, process.platform === "win32" ? "toolwire.exe" : "toolwire");

const children: ChildProcess[] = [];
let skip: string | null = null;

/** Starts the executable with an empty PATH (no node to fall back on) and waits for its URL line. */
function start(args: string[], cwd: string): Promise<string> {
  const child = spawn(EXECUTABLE, args, { cwd, env: { PATH: "", HOME: cwd } });
  children.push(child);
  return new Promise((resolve, reject) => {
    let out = "";
    child.stdout?.setEncoding("utf8").on("data", (text: string) => {
      out += text;
      const found = /http:\/\/127\.0\.0\.1:\d+/.exec(out);
      if (found) resolve(found[0]);
    });
    child.stderr?.setEncoding("utf8").on("data", (text: string) => void (out += text));
    child.on("exit", (code) => reject(new Error(`${args[0]} exited (${code}): ${out}`)));
  });
}

beforeAll(async () => {
  const built = await new Promise<{ status: number | null; output: string }>((resolve) => {
    const child = spawn(process.execPath, ["scripts/build-binary.mjs", "--out", OUT], { cwd: ROOT });
    let output = "";
    child.stdout.setEncoding("utf8").on("data", (text: string) => void (output += text));
    child.stderr.setEncoding("utf8").on("data", (text: string) => void (output += text));
    child.on("close", (status) => resolve({ status, output }));
  });
  if (built.status !== 0 || !existsSync(EXECUTABLE)) {
    skip = (/build:binary: (.*)/.exec(built.output)?.[1] ?? built.output.trim().split("\n").at(-1)) || "the build failed";
    process.stderr.write(`binary.test.ts: skipped: npm run build:binary could not run here: ${skip}\n`);
  }
}, 300_000);

afterAll(() => {
  for (const child of children) child.kill();
  rmSync(OUT, { recursive: true, force: true });
});

describe("the single executable (npm run build:binary)", () => {
  it("runs without Node.js on the PATH: --version, and a usage error in one line", (context) => {
    if (skip !== null) return context.skip();
    const version = spawnSync(EXECUTABLE, ["--version"], { encoding: "utf8", env: { PATH: "" } });
    expect(version.status).toBe(0);
    expect(version.stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);
    const bogus = spawnSync(EXECUTABLE, ["replay", "--bogus"], { encoding: "utf8", env: { PATH: "" } });
    expect(bogus.status).toBe(2);
    expect(bogus.stderr).toBe("toolwire replay: unknown option --bogus (see 'toolwire replay --help')\n");
  });

  it("drives proxy in front of serve: a cut call is withheld, streamed and whole", async (context) => {
    if (skip !== null) return context.skip();
    const dir = mkdtempSync(join(tmpdir(), "toolwire-binary-"));
    copyFileSync(join(ROOT, "testdata/openai-chat/handwritten__openai-length-mid-call.ndjson"), join(dir, "cut.ndjson"));
    const upstream = await start(["serve", "cut.ndjson"], dir);
    const proxy = await start(["proxy", "--upstream", upstream, "--port", "0"], dir);

    // Streamed: the re-encoded stream holds the first call; the cut one is withheld.
    const streamed = await fetch(`${proxy}/v1/chat/completions`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model: "m", messages: [{ role: "user", content: "hi" }], stream: true }) });
    expect(streamed.status).toBe(200);
    const text = await streamed.text();
    expect(text).toContain("call_LenA1");
    expect(text).not.toContain("call_LenB2");

    // Not streamed: serve assembles the whole body (the cut call as sent), the proxy repairs it.
    const whole = await fetch(`${proxy}/v1/chat/completions`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model: "m", messages: [{ role: "user", content: "hi" }] }) });
    expect(whole.status).toBe(200);
    const body = (await whole.json()) as { choices: Array<{ message: { tool_calls?: Array<{ id: string; function: { arguments: string } }> } }> };
    const calls = body.choices[0]?.message.tool_calls ?? [];
    for (const call of calls) expect(() => JSON.parse(call.function.arguments)).not.toThrow();
    expect(calls.map((call) => call.id)).not.toContain("call_LenB2");
  });
});

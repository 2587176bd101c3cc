import { copyFileSync, mkdirSync, mkdtempSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { PROGRESS_INTERVAL_MS, progressReporter } from "../../src/cli/commands/fuzz.js";
import { EXIT } from "../../src/cli/context.js";
import { TESTDATA } from "../helpers/testdata.js";
import { cli } from "./support.js";

describe("toolwire fuzz: progress on a terminal", () => {
  it("a line at the first case, then at least every 5 s while cases are checked", () => {
    expect(PROGRESS_INTERVAL_MS).toBeLessThanOrEqual(5_000);
    let clock = 1_000_000;
    const written: Array<{ at: number; text: string }> = [];
    const progress = progressReporter((text) => written.push({ at: clock, text }), () => clock);
    // A case every 300 ms for a minute.
    for (let i = 0; i < 200; i++) {
      progress.onCase(i % 3 === 0 ? "anthropic" : "gemini");
      clock += 300;
    }
    progress.done();
    const lines = written.filter((entry) => entry.text.includes("fuzz:"));
    expect(lines[0]?.at).toBe(1_000_000);
    expect(lines[0]?.text).toBe("\r\x1b[Kfuzz: 0s, anthropic 1 cases checked, 0 finding(s)");
    for (let i = 1; i < lines.length; i++) expect((lines[i] as { at: number }).at - (lines[i - 1] as { at: number }).at).toBeLessThanOrEqual(5_000);
    expect(lines.length).toBeGreaterThanOrEqual(60_000 / 5_000);
    expect(lines.at(-1)?.text).toMatch(/anthropic \d+, gemini \d+ cases checked/);
    // The line is cleared at the end, so the summary starts on a clean line.
    expect(written.at(-1)?.text).toBe("\r\x1b[K");
  });

  it("runs with npm run fuzz's options over the given recordings, with progress on a TTY only", async () => {
    const dir = mkdtempSync(join(tmpdir(), "toolwire-fuzz-"));
    mkdirSync(join(dir, "anthropic"));
    copyFileSync(join(TESTDATA, "anthropic", "handwritten__kimi-start-input-quirks.ndjson"), join(dir, "anthropic", "kimi.ndjson"));
    const args = ["fuzz", "anthropic", "--runs", "30", "--runs-per-round", "10", "--seed", "7", "--provider", "anthropic", "--out", "found"];
    const tty = await cli(args, { cwd: dir, isTTY: true });
    expect(tty.code, tty.out).toBe(EXIT.ok);
    expect(tty.out).toMatch(/^toolwire fuzz: seed 7, 30 runs per provider, corpus anthropic=6\n/);
    expect(tty.out).toMatch(/anthropic: 30 runs; 0 new finding\(s\) in [\d.]+s \(seed 7\)/);
    expect(tty.err).toMatch(/fuzz: \d+s, anthropic \d+ cases checked, 0 finding\(s\)/);
    const pipe = await cli(args, { cwd: dir, isTTY: false });
    expect(pipe.err).toBe("");
    expect(readdirSync(dir)).not.toContain("found");
  });

  it("bad options are usage errors", async () => {
    expect((await cli(["fuzz", "--runs", "0"])).code).toBe(EXIT.usage);
    expect((await cli(["fuzz", "--seed", "x"])).code).toBe(EXIT.usage);
    expect((await cli(["fuzz", "--provider", "cohere"])).code).toBe(EXIT.usage);
    expect((await cli(["fuzz", "--bogus"])).code).toBe(EXIT.usage);
  });
});

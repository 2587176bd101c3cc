import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { packageVersion } from "../../src/cli/main.js";
import { buildBin, cli, REPO, runBin, STACK_LINE } from "./support.js";

const VERSION = (JSON.parse(readFileSync(join(REPO, "package.json"), "utf8")) as { version: string }).version;

describe("toolwire --version", () => {
  it("prints package.json's version", async () => {
    expect(packageVersion()).toBe(VERSION);
    for (const flag of ["--version", "-V", "version"]) {
      const { code, out, err } = await cli([flag]);
      expect(code).toBe(0);
      expect(out).toBe(`${VERSION}\n`);
      expect(err).toBe("");
    }
  });

  it("is named in --help, with the exit codes", async () => {
    const { code, out } = await cli(["--help"]);
    expect(code).toBe(0);
    expect(out).toContain("toolwire --version");
    expect(out).toMatch(/Exit codes \(every command\):\n {2}0 {2}success\n {2}1 {2}.*\n.*\n {2}2 {2}usage error.*\n {2}3 {2}input error: a path that is missing, unreadable, a directory where a file is needed, or\n\s+empty/);
    for (const command of ["replay", "import", "conformance", "expect", "history", "schema", "serve", "fuzz"]) expect(out).toMatch(new RegExp(`^ {2}${command} +\\S`, "m"));
  });
});

describe("the built bin (esbuild bundle, as npm run build:cli makes it)", () => {
  let built: Awaited<ReturnType<typeof buildBin>>;
  beforeAll(async () => {
    built = await buildBin();
  }, 60_000);
  afterAll(() => built?.remove());

  it("--version works from the bundle", () => {
    const result = runBin(built.bin, ["--version"]);
    expect(result.status).toBe(0);
    expect(result.stdout).toBe(`${VERSION}\n`);
  });

  it("`toolwire replay … | head -1` exits 0 without a word on stderr (EPIPE)", () => {
    // --json on every recording writes far more than a pipe holds, so the writes after head exits fail with EPIPE.
    const result = spawnSync("bash", ["-c", `set -o pipefail; "${process.execPath}" "${built.bin}" replay testdata --json | head -1`], { cwd: REPO, encoding: "utf8" });
    expect(result.stderr).toBe("");
    expect(result.status).toBe(0);
    expect(result.stdout.split("\n").filter((line) => line !== "")).toHaveLength(1);
    expect(JSON.parse(result.stdout)).toHaveProperty("toolCalls");
  });

  it("ordinary mistakes get one line and an exit code, never a stack trace", () => {
    const dir = mkdtempSync(join(tmpdir(), "toolwire-bin-"));
    writeFileSync(join(dir, "empty.sse"), "");
    const cases: Array<[string[], number, RegExp]> = [
      [["frobnicate"], 2, /^toolwire: unknown command 'frobnicate'/],
      [["--frobnicate"], 2, /^toolwire: unknown option '--frobnicate'/],
      [["replay", "testdata", "--bogus"], 2, /^toolwire replay: unknown option --bogus \(see 'toolwire replay --help'\)\n$/],
      [["replay", "no/such.ndjson"], 3, /^toolwire replay: cannot read 'no\/such.ndjson': no such file or directory\n$/],
      [["import", dir], 3, /^toolwire import: cannot read '.*': is a directory, not a file\n$/],
      [["replay", join(dir, "empty.sse")], 3, /^toolwire replay: '.*empty\.sse': the file is empty: no recorded stream in it\n$/],
      [["history", "check", "nope.json", "--format", "claude"], 3, /^toolwire history: cannot read 'nope.json': no such file or directory\n$/],
      [["schema", "check", dir, "--target", "gemini"], 3, /^toolwire schema: cannot read '.*': is a directory, not a file\n$/],
    ];
    for (const [args, status, message] of cases) {
      const result = runBin(built.bin, args);
      expect(result.status, args.join(" ")).toBe(status);
      expect(result.stderr, args.join(" ")).toMatch(message);
      expect(result.stderr, args.join(" ")).not.toMatch(STACK_LINE);
    }
  });
});

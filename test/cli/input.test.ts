import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { startServe } from "../../src/cli/commands/serve.js";
import { EXIT } from "../../src/cli/context.js";
import { ioReason } from "../../src/cli/input.js";
import type { ReplayServer } from "../../src/node/replay-server.js";
import { TESTDATA } from "../helpers/testdata.js";
import { cli } from "./support.js";

/**
 * Missing, unreadable and empty input: one behaviour and one exit code (3) in every command that
 * reads recordings, with the path printed once.
 */

const COMMANDS: Array<{ name: string; args: (path: string) => string[] }> = [
  { name: "replay", args: (path) => ["replay", path] },
  { name: "import", args: (path) => ["import", path] },
  { name: "conformance", args: (path) => ["conformance", path] },
  { name: "expect", args: (path) => ["expect", path] },
  { name: "serve", args: (path) => ["serve", path, "--port", "0"] },
];

function scratch(): string {
  return mkdtempSync(join(tmpdir(), "toolwire-input-"));
}

function occurrences(text: string, part: string): number {
  return text.split(part).length - 1;
}

const servers: ReplayServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

/** `serve` runs until interrupted: its loading step is what can fail. */
async function run(command: string, args: string[], cwd: string): Promise<{ code: number; err: string }> {
  if (command !== "serve") return cli(args, { cwd });
  let err = "";
  try {
    servers.push(await startServe(args.slice(1), { out: () => {}, err: (text) => void (err += text), cwd }));
    return { code: 0, err };
  } catch (error) {
    const { CliError } = await import("../../src/cli/context.js");
    if (!(error instanceof CliError)) throw error;
    return { code: error.exitCode, err: `toolwire serve: ${error.message}\n` };
  }
}

describe.each(COMMANDS)("toolwire $name: empty and unreadable input", ({ name, args }) => {
  const dir = scratch();
  writeFileSync(join(dir, "empty.ndjson"), "");
  writeFileSync(join(dir, "comments.ndjson"), "# only a comment\n\n   \n");
  writeFileSync(join(dir, "empty.sse"), "");
  writeFileSync(join(dir, "blank.sse"), "\n\n");
  mkdirSync(join(dir, "folder.sse"));

  it.each([
    ["empty.ndjson", /the file is empty: no recorded stream in it/],
    ["comments.ndjson", /the file holds only blank or comment lines: no recorded stream in it/],
    ["empty.sse", /the file is empty: no recorded stream in it/],
    ["blank.sse", /the file holds only blank or comment lines: no recorded stream in it/],
  ])("%s → exit 3, the path named once", async (file, reason) => {
    const { code, err } = await run(name, args(file), dir);
    expect(code).toBe(EXIT.input);
    expect(err).toMatch(new RegExp(`^toolwire ${name}: '${file.replace(".", "\\.")}': `));
    expect(err).toMatch(reason);
    expect(occurrences(err, file)).toBe(1);
  });

  it("a missing path → exit 3, 'cannot read', named once", async () => {
    const { code, err } = await run(name, args("nope.ndjson"), dir);
    expect(code).toBe(EXIT.input);
    expect(err).toBe(`toolwire ${name}: cannot read 'nope.ndjson': no such file or directory\n`);
  });

  if (name === "import") {
    it("a directory where a file is needed → exit 3", async () => {
      const { code, err } = await run(name, args("folder.sse"), dir);
      expect(code).toBe(EXIT.input);
      expect(err).toBe(`toolwire import: cannot read 'folder.sse': is a directory, not a file\n`);
    });
  }

  it("a file it may not read → exit 3, 'permission denied'", async () => {
    const locked = join(dir, "locked.ndjson");
    writeFileSync(locked, '{"data": {"type": "ping"}}\n');
    chmodSync(locked, 0o000);
    const { code, err } = await run(name, args("locked.ndjson"), dir);
    if (process.getuid?.() === 0) {
      // root reads it anyway: the file is then simply a recording (or, for import, converted).
      expect([EXIT.ok, EXIT.findings, EXIT.input]).toContain(code);
    } else {
      expect(code).toBe(EXIT.input);
      expect(err).toBe(`toolwire ${name}: cannot read 'locked.ndjson': permission denied\n`);
    }
    chmodSync(locked, 0o644);
  });
});

describe("errno reasons are words, without Node's repeat of the path", () => {
  it.each([
    ["ENOENT", "no such file or directory"],
    ["EISDIR", "is a directory, not a file"],
    ["EACCES", "permission denied"],
    ["EPERM", "permission denied"],
    ["ENOTDIR", "a part of the path is not a directory"],
  ])("%s", (code, reason) => {
    const error = Object.assign(new Error(`${code}: something, open '/x/y'`), { code });
    expect(ioReason(error)).toBe(reason);
  });
});

describe("conformance on a recording that is not NDJSON", () => {
  it("never reads the stream as its own expectation; 'expect' writes <file>.expected.json beside it", async () => {
    const dir = scratch();
    copyFileSync(join(TESTDATA, "raw", "anthropic-weather.sse"), join(dir, "x.sse"));
    const before = await cli(["conformance", "x.sse"], { cwd: dir });
    expect(before.code).toBe(EXIT.ok);
    expect(before.out).toMatch(/x\.sse.*no expectation/);
    expect(before.out).not.toMatch(/cannot be used/);

    const written = await cli(["expect", "x.sse"], { cwd: dir });
    expect(written.code).toBe(EXIT.ok);
    expect(existsSync(join(dir, "x.sse.expected.json"))).toBe(true);
    const after = await cli(["conformance", "x.sse"], { cwd: dir });
    expect(after.code).toBe(EXIT.ok);
    expect(after.out).toMatch(/1 match their expectation/);
    expect(readFileSync(join(dir, "x.sse"), "utf8")).toContain("event: message_start");
  });
});

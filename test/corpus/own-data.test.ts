import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { CORPUS_ROOT, describeCorpus, REPO_ROOT } from "../helpers/corpus.js";

/**
 * The repository holds only what the project wrote: other projects' recordings, parser test outputs
 * and licences stay in the corpora beside the checkout (test/helpers/corpus.ts), and are read from
 * there. This checks the tracked files against every file of the three corpora.
 */

function gitBlobId(bytes: Uint8Array): string {
  return createHash("sha1").update(`blob ${bytes.length}\0`).update(bytes).digest("hex");
}

function tracked(): string[] {
  try {
    return execFileSync("git", ["ls-files", "-z"], { cwd: REPO_ROOT, encoding: "utf8" }).split("\0").filter((path) => path !== "");
  } catch {
    return [];
  }
}

function walk(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? walk(path) : [path];
  });
}

const files = tracked();

describe("the repository's own data", () => {
  it.skipIf(files.length === 0)("no tracked file is named after another project's file (<owner>__<repo>__…)", () => {
    const owners = /(^|\/)(anthropics|charmbracelet|danshapiro|pydantic|simonw|vercel|vxcontrol|Arize-ai|DataDog|Mirascope|microsoft|openai|googleapis|jackmpcollins|crewAIInc|traceloop)__[A-Za-z0-9_.-]+__/;
    expect(files.filter((path) => owners.test(path))).toEqual([]);
  });
});

describeCorpus("upstream", "no tracked file has the bytes of a corpus file", () => {
  it("tracked files and the corpora share no git blob", () => {
    const corpusBlobs = new Map<string, string>();
    for (const corpus of ["upstream", "peer", "text-calls-peer"]) {
      const dir = join(CORPUS_ROOT as string, corpus);
      let paths: string[] = [];
      try {
        paths = walk(dir);
      } catch {
        continue;
      }
      for (const path of paths) {
        if (path.endsWith("MANIFEST.md")) continue;
        const bytes = readFileSync(path);
        // Tiny files (an empty licence line, "{}") say nothing about provenance.
        if (bytes.length < 64) continue;
        corpusBlobs.set(gitBlobId(bytes), path);
      }
    }
    const copies = files.flatMap((path) => {
      let bytes: Buffer;
      try {
        bytes = readFileSync(join(REPO_ROOT, path));
      } catch {
        return [];
      }
      const match = corpusBlobs.get(gitBlobId(bytes));
      return match === undefined ? [] : [`${path} = ${match}`];
    });
    expect(copies).toEqual([]);
  });
});

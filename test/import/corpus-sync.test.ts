import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { CORPUS_TABLE, CorpusError, GENERATED_MARKER, importCorpus, parseManifest } from "../../scripts/import-corpus.js";
import { parseRecords } from "../../src/framing/records.js";
import { CORPUS_DIR, REPO_ROOT } from "./corpus.js";

const TESTDATA = join(REPO_ROOT, "testdata");

function listFiles(root: string, dir = root): string[] {
  return readdirSync(dir)
    .flatMap((name) => {
      const path = join(dir, name);
      return statSync(path).isDirectory() ? listFiles(root, path) : [relative(root, path).split("\\").join("/")];
    })
    .sort();
}

function isGenerated(path: string): boolean {
  return path.startsWith("LICENSES/") || (path.endsWith(".ndjson") && readFileSync(join(TESTDATA, path), "utf8").startsWith(GENERATED_MARKER));
}

describe(`testdata/ is in sync with the upstream corpus (${CORPUS_DIR})`, () => {
  const out = mkdtempSync(join(tmpdir(), "toolwire-corpus-"));
  afterAll(() => rmSync(out, { recursive: true, force: true }));

  it("re-importing reproduces the committed testdata byte for byte", async () => {
    const report = await importCorpus(CORPUS_DIR, out);
    expect(report.files).toHaveLength(Object.keys(CORPUS_TABLE).length);
    expect(report.files).toHaveLength(57);
    const generated = listFiles(out);
    const committed = listFiles(TESTDATA).filter(isGenerated);
    // A file only on one side means a renamed/removed table entry: run `npm run import-corpus`.
    expect(committed).toEqual(generated);
    for (const path of generated) {
      const expected = readFileSync(join(out, path));
      const actual = readFileSync(join(TESTDATA, path));
      expect(actual.equals(expected), `${path} differs from a fresh import: run \`npm run import-corpus\``).toBe(true);
    }
  });

  it("every generated file parses as records with the table's provider", async () => {
    for (const entry of Object.values(CORPUS_TABLE)) {
      const dir = join(TESTDATA, entry.provider);
      for (const name of readdirSync(dir).filter((n) => n.endsWith(`__${entry.short}.ndjson`))) {
        const streams = parseRecords(readFileSync(join(dir, name), "utf8"));
        expect(streams.length).toBeGreaterThan(0);
        for (const stream of streams) expect(stream.provider).toBe(entry.provider);
      }
    }
  });
});

describe("import-corpus fails loudly", () => {
  const work = mkdtempSync(join(tmpdir(), "toolwire-corpus-copy-"));
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  async function failure(mutate: (corpus: string) => void): Promise<string> {
    const corpus = join(work, `c${Math.random().toString(36).slice(2)}`);
    cpSync(CORPUS_DIR, corpus, { recursive: true });
    mutate(corpus);
    try {
      await importCorpus(corpus, join(corpus, "out"));
    } catch (error) {
      expect(error).toBeInstanceOf(CorpusError);
      return (error as Error).message;
    }
    throw new Error("expected a CorpusError");
  }

  it("on a corpus file missing from the table", async () => {
    const message = await failure((corpus) => writeFileSync(join(corpus, "vercel__ai", "new-fixture.chunks.txt"), "{}\n"));
    expect(message).toContain("corpus file not in CORPUS_TABLE (add it with its provider): vercel__ai/new-fixture.chunks.txt");
  });

  it("on a table entry without its file", async () => {
    const local = "simonw__llm/tests__cassettes__test_tools_streaming__test_tools_streaming_variant_d.yaml";
    const message = await failure((corpus) => rmSync(join(corpus, local)));
    expect(message).toContain(`CORPUS_TABLE entry has no corpus file: ${local}`);
  });

  it("on a file whose bytes are not the upstream blob", async () => {
    const local = "vercel__ai/packages__groq__src____fixtures____groq-tool-call.chunks.txt";
    const message = await failure((corpus) => writeFileSync(join(corpus, local), readFileSync(join(corpus, local), "utf8") + "\n"));
    expect(message).toMatch(/groq-tool-call\.chunks\.txt: git blob [0-9a-f]{12} differs from MANIFEST\.md's abcaea1324c9/);
  });

  it("reads all 57 rows of MANIFEST.md", () => {
    const rows = parseManifest(readFileSync(join(CORPUS_DIR, "MANIFEST.md"), "utf8"));
    expect(rows.size).toBe(57);
    expect(rows.get("vxcontrol__langchaingo/llms__ollama__testdata__TestToolCall.httprr")).toMatchObject({
      repo: "vxcontrol/langchaingo",
      path: "llms/ollama/testdata/TestToolCall.httprr",
      license: "MIT",
      blob: "edc115c4a6bb",
    });
  });
});

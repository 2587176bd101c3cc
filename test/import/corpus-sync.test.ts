import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { afterAll, expect, it } from "vitest";
import { CORPUS_TABLE, CorpusError, GENERATED_MARKER, importCorpus, importUpstream, parseManifest } from "../../scripts/import-corpus.js";
import { describeCorpus } from "../helpers/corpus.js";
import { parseRecords } from "../../src/framing/records.js";
import { CORPUS_DIR, REPO_ROOT } from "./corpus.js";

const EXPECTATIONS = join(REPO_ROOT, "testdata", "corpus-expectations", "upstream");

function listFiles(root: string, dir = root): string[] {
  return readdirSync(dir)
    .flatMap((name) => {
      const path = join(dir, name);
      return statSync(path).isDirectory() ? listFiles(root, path) : [relative(root, path).split("\\").join("/")];
    })
    .sort();
}

describeCorpus("upstream", "the upstream corpus imports, and every file has the project's reviewed expectation", () => {
  const out = mkdtempSync(join(tmpdir(), "toolwire-corpus-"));
  afterAll(() => rmSync(out, { recursive: true, force: true }));

  it("importing in memory and writing the cache give the same records", async () => {
    const { files } = importUpstream(CORPUS_DIR as string);
    expect(files).toHaveLength(Object.keys(CORPUS_TABLE).length);
    expect(files).toHaveLength(57);
    const report = await importCorpus(CORPUS_DIR as string, out);
    expect(report.files.map((file) => file.out)).toEqual(files.map((file) => file.out));
    for (const file of files) {
      const written = readFileSync(join(out, file.out), "utf8");
      expect(written.startsWith(GENERATED_MARKER)).toBe(true);
      expect(written).toBe(file.text);
      expect(parseRecords(written)).toEqual(file.streamsData);
    }
  });

  it("every imported stream carries the table's provider", () => {
    for (const file of importUpstream(CORPUS_DIR as string).files) {
      expect(file.streamsData.length).toBeGreaterThan(0);
      for (const stream of file.streamsData) expect(stream.provider).toBe(CORPUS_TABLE[file.local]?.provider);
    }
  });

  it("testdata/corpus-expectations/upstream holds one expectation per corpus file, and no other", () => {
    const expected = Object.keys(CORPUS_TABLE).map((local) => `${local}.expected.json`).sort();
    expect(listFiles(EXPECTATIONS)).toEqual(expected);
  });
});

describeCorpus("upstream", "import-corpus fails loudly", () => {
  const work = mkdtempSync(join(tmpdir(), "toolwire-corpus-copy-"));
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  async function failure(mutate: (corpus: string) => void): Promise<string> {
    const corpus = join(work, `c${Math.random().toString(36).slice(2)}`);
    cpSync(CORPUS_DIR as string, corpus, { recursive: true });
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
    const rows = parseManifest(readFileSync(join(CORPUS_DIR as string, "MANIFEST.md"), "utf8"));
    expect(rows.size).toBe(57);
    expect(rows.get("vxcontrol__langchaingo/llms__ollama__testdata__TestToolCall.httprr")).toMatchObject({
      repo: "vxcontrol/langchaingo",
      path: "llms/ollama/testdata/TestToolCall.httprr",
      license: "MIT",
      blob: "edc115c4a6bb",
    });
  });
});

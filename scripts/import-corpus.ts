/**
 * Imports the upstream corpus (other projects' recorded streams, described by its MANIFEST.md) into
 * toolwire's recorded-stream files. The corpus is not part of the repository: it is found at
 * `$TOOLWIRE_CORPUS/upstream`. The tests import it in memory (`importUpstream`); this script
 * writes the same files into the git-ignored `.corpus-cache/`, so that the CLI can replay them:
 *
 *   TOOLWIRE_CORPUS=/path/holding/upstream npm run import-corpus
 *   node dist/quick-cli/src/cli/bin.js replay .corpus-cache
 */
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { readdirSync, readFileSync } from "node:fs";
import { mkdir, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { serializeRecords, type RecordedStream } from "../src/framing/records.js";
import { importFile } from "../src/import/index.js";
import type { ProviderName } from "../src/types.js";

interface CorpusEntry {
  provider: ProviderName;
  /** Output name after `<owner>__<repo>__`: the upstream file's own name without container suffixes. */
  short: string;
}

/**
 * Every upstream file, by local name (`<owner>__<repo>/<path with / as __>`), and the decoder it
 * belongs to. OpenAI-compatible hosts (Groq, OpenRouter, llama.cpp, …) are `openai-chat`; Kimi,
 * Vertex-hosted Claude and the Bedrock InvokeModel Claude stream (its chunks unwrap to Anthropic
 * events) are `anthropic`; only ConverseStream is `bedrock`.
 */
export const CORPUS_TABLE: Readonly<Record<string, CorpusEntry>> = {
  // Anthropic Messages
  "anthropics__anthropic-sdk-typescript/tests__lib__fixtures__incomplete_partial_json_response.txt": { provider: "anthropic", short: "incomplete_partial_json_response" },
  "anthropics__anthropic-sdk-typescript/tests__lib__fixtures__tool_use_response.txt": { provider: "anthropic", short: "tool_use_response" },
  "charmbracelet__fantasy/providertests__testdata__TestAnthropicCommon__claude-sonnet-4__multi_tool_streaming.yaml": { provider: "anthropic", short: "TestAnthropicCommon__claude-sonnet-4__multi_tool_streaming" },
  "charmbracelet__fantasy/providertests__testdata__TestAnthropicThinking__claude-sonnet-4__thinking-streaming.yaml": { provider: "anthropic", short: "TestAnthropicThinking__claude-sonnet-4__thinking-streaming" },
  "charmbracelet__fantasy/providertests__testdata__TestAnthropicWebSearch__stream.yaml": { provider: "anthropic", short: "TestAnthropicWebSearch__stream" },
  "charmbracelet__fantasy/providertests__testdata__TestGoogleCommon__vertex-claude-3-7-sonnet__tool_streaming.yaml": { provider: "anthropic", short: "TestGoogleCommon__vertex-claude-3-7-sonnet__tool_streaming" },
  "charmbracelet__fantasy/providertests__testdata__TestBedrockCommon__bedrock-anthropic-claude-sonnet-4-5__tool_streaming.yaml": { provider: "anthropic", short: "TestBedrockCommon__bedrock-anthropic-claude-sonnet-4-5__tool_streaming" },
  "danshapiro__kilroy/internal__llm__providers__anthropic__testdata__kimi_tool_call_sequences.ndjson": { provider: "anthropic", short: "kimi_tool_call_sequences" },
  "pydantic__pydantic-ai/tests__models__cassettes__test_anthropic__test_pause_turn_web_search_streaming_vcr.yaml": { provider: "anthropic", short: "test_anthropic__test_pause_turn_web_search_streaming_vcr" },
  "vercel__ai/packages__anthropic__src____fixtures____anthropic-json-tool.2.chunks.txt": { provider: "anthropic", short: "anthropic-json-tool.2" },
  "vercel__ai/packages__anthropic__src____fixtures____anthropic-programmatic-tool-calling.1.chunks.txt": { provider: "anthropic", short: "anthropic-programmatic-tool-calling.1" },
  "vercel__ai/packages__anthropic__src____fixtures____anthropic-tool-no-args.chunks.txt": { provider: "anthropic", short: "anthropic-tool-no-args" },
  "vercel__ai/packages__anthropic__src____fixtures____spliced-message-start.chunks.txt": { provider: "anthropic", short: "spliced-message-start" },

  // AWS Bedrock ConverseStream
  "pydantic__pydantic-ai/tests__models__cassettes__test_bedrock__test_bedrock_model_code_execution_tool_stream.yaml": { provider: "bedrock", short: "test_bedrock__test_bedrock_model_code_execution_tool_stream" },
  "pydantic__pydantic-ai/tests__models__cassettes__test_bedrock__test_bedrock_model_iter_stream.yaml": { provider: "bedrock", short: "test_bedrock__test_bedrock_model_iter_stream" },
  "vercel__ai/packages__amazon-bedrock__src____fixtures____amazon-bedrock-json-with-tools.1.chunks.txt": { provider: "bedrock", short: "amazon-bedrock-json-with-tools.1" },
  "vercel__ai/packages__amazon-bedrock__src____fixtures____issue-11409-kimi-k2-thinking-glob-search.chunks.txt": { provider: "bedrock", short: "issue-11409-kimi-k2-thinking-glob-search" },
  "vercel__ai/packages__amazon-bedrock__src____fixtures____model-stream-error-exception.eventstream.base64.txt": { provider: "bedrock", short: "model-stream-error-exception" },

  // OpenAI Chat Completions and compatible hosts
  "charmbracelet__fantasy/providertests__testdata__TestOpenAICommon__openai-gpt-4o__multi_tool_streaming.yaml": { provider: "openai-chat", short: "TestOpenAICommon__openai-gpt-4o__multi_tool_streaming" },
  "charmbracelet__fantasy/providertests__testdata__TestOpenAICompatibleCommon__groq-kimi-k2__multi_tool_streaming.yaml": { provider: "openai-chat", short: "TestOpenAICompatibleCommon__groq-kimi-k2__multi_tool_streaming" },
  "charmbracelet__fantasy/providertests__testdata__TestOpenAICompatibleCommon__zai-glm-4-7-flash__multi_tool_streaming.yaml": { provider: "openai-chat", short: "TestOpenAICompatibleCommon__zai-glm-4-7-flash__multi_tool_streaming" },
  "charmbracelet__fantasy/providertests__testdata__TestOpenAICompatibleCommon__llama-cpp-gpt-oss__tool_streaming.yaml": { provider: "openai-chat", short: "TestOpenAICompatibleCommon__llama-cpp-gpt-oss__tool_streaming" },
  "charmbracelet__fantasy/providertests__testdata__TestOpenAICompatibleThinking__llama-cpp-gpt-oss__thinking-streaming.yaml": { provider: "openai-chat", short: "TestOpenAICompatibleThinking__llama-cpp-gpt-oss__thinking-streaming" },
  "charmbracelet__fantasy/providertests__testdata__TestOpenRouterCommon__anthropic__multi_tool_streaming.yaml": { provider: "openai-chat", short: "TestOpenRouterCommon__anthropic__multi_tool_streaming" },
  "charmbracelet__fantasy/providertests__testdata__TestOpenRouterCommon__kimi__multi_tool_streaming.yaml": { provider: "openai-chat", short: "TestOpenRouterCommon__kimi__multi_tool_streaming" },
  "pydantic__pydantic-ai/tests__cassettes__test_temporal__test_complex_agent_run.yaml": { provider: "openai-chat", short: "test_temporal__test_complex_agent_run" },
  "pydantic__pydantic-ai/tests__models__cassettes__test_groq__test_tool_use_failed_error_streaming.yaml": { provider: "openai-chat", short: "test_groq__test_tool_use_failed_error_streaming" },
  "simonw__llm/tests__cassettes__test_tools_streaming__test_tools_streaming_variant_a.yaml": { provider: "openai-chat", short: "test_tools_streaming_variant_a" },
  "simonw__llm/tests__cassettes__test_tools_streaming__test_tools_streaming_variant_c.yaml": { provider: "openai-chat", short: "test_tools_streaming_variant_c" },
  "simonw__llm/tests__cassettes__test_tools_streaming__test_tools_streaming_variant_d.yaml": { provider: "openai-chat", short: "test_tools_streaming_variant_d" },
  "vercel__ai/packages__alibaba__src____fixtures____alibaba-tool-call.chunks.txt": { provider: "openai-chat", short: "alibaba-tool-call" },
  "vercel__ai/packages__deepseek__src__chat____fixtures____deepseek-tool-call.chunks.txt": { provider: "openai-chat", short: "deepseek-tool-call" },
  "vercel__ai/packages__groq__src____fixtures____groq-tool-call.chunks.txt": { provider: "openai-chat", short: "groq-tool-call" },
  "vercel__ai/packages__mistral__src____fixtures____mistral-incremental-tool-call.chunks.txt": { provider: "openai-chat", short: "mistral-incremental-tool-call" },
  "vercel__ai/packages__openai-compatible__src__chat____fixtures____anthropic-fallback-tool-call.sse": { provider: "openai-chat", short: "anthropic-fallback-tool-call" },
  "vercel__ai/packages__openai-compatible__src__chat____fixtures____issue-15789-step-1.chunks.txt": { provider: "openai-chat", short: "issue-15789-step-1" },
  "vercel__ai/packages__openai-compatible__src__chat____fixtures____xai-tool-call.chunks.txt": { provider: "openai-chat", short: "xai-tool-call" },

  // OpenAI Responses and compatible hosts
  "charmbracelet__fantasy/providertests__testdata__TestOpenAIResponsesCommon__openai-gpt-4o__multi_tool_streaming.yaml": { provider: "openai-responses", short: "TestOpenAIResponsesCommon__openai-gpt-4o__multi_tool_streaming" },
  "charmbracelet__fantasy/providertests__testdata__TestOpenAIResponsesCommon__openai-gpt-5__multi_tool_streaming.yaml": { provider: "openai-responses", short: "TestOpenAIResponsesCommon__openai-gpt-5__multi_tool_streaming" },
  "pydantic__pydantic-ai/tests__models__cassettes__test_bedrock_mantle__test_reused_tool_call_ids[stream].yaml": { provider: "openai-responses", short: "test_bedrock_mantle__test_reused_tool_call_ids-stream" },
  "pydantic__pydantic-ai/tests__models__cassettes__test_deepseek_responses__test_deepseek_responses[function_tool_stream].yaml": { provider: "openai-responses", short: "test_deepseek_responses-function_tool_stream" },
  "pydantic__pydantic-ai/tests__models__cassettes__test_openai_responses__test_openai_responses_streaming_usage.yaml": { provider: "openai-responses", short: "test_openai_responses__test_openai_responses_streaming_usage" },
  "simonw__llm/tests__cassettes__test_openai_responses__test_responses_tool_use_streaming.yaml": { provider: "openai-responses", short: "test_responses_tool_use_streaming" },
  "vercel__ai/packages__open-responses__src__responses____fixtures____lmstudio-tool-call.1.chunks.txt": { provider: "openai-responses", short: "lmstudio-tool-call.1" },
  "vercel__ai/packages__openai__src__responses____fixtures____openai-custom-tool.1.chunks.txt": { provider: "openai-responses", short: "openai-custom-tool.1" },
  "vercel__ai/packages__openai__src__responses____fixtures____openai-error.1.chunks.txt": { provider: "openai-responses", short: "openai-error.1" },
  "vercel__ai/packages__openai__src__responses____fixtures____parallel-tool-call-wrapper.1.chunks.txt": { provider: "openai-responses", short: "parallel-tool-call-wrapper.1" },

  // Google Gemini (Gemini API and Vertex)
  "charmbracelet__fantasy/providertests__testdata__TestGoogleCommon__gemini-2.5-flash__multi_tool_streaming.yaml": { provider: "gemini", short: "TestGoogleCommon__gemini-2.5-flash__multi_tool_streaming" },
  "charmbracelet__fantasy/providertests__testdata__TestGoogleCommon__gemini-3-pro-preview__multi_tool_streaming.yaml": { provider: "gemini", short: "TestGoogleCommon__gemini-3-pro-preview__multi_tool_streaming" },
  "charmbracelet__fantasy/providertests__testdata__TestGoogleCommon__vertex-gemini-2-5-pro__multi_tool_streaming.yaml": { provider: "gemini", short: "TestGoogleCommon__vertex-gemini-2-5-pro__multi_tool_streaming" },
  "pydantic__pydantic-ai/tests__models__cassettes__test_google__test_google_streaming_tool_call_thought_signature.yaml": { provider: "gemini", short: "test_google__test_google_streaming_tool_call_thought_signature" },
  "vercel__ai/packages__google__src____fixtures____google-stream-no-args-tool-call.chunks.txt": { provider: "gemini", short: "google-stream-no-args-tool-call" },
  "vercel__ai/packages__google__src____fixtures____google-stream-tool-call-arguments.chunks.txt": { provider: "gemini", short: "google-stream-tool-call-arguments" },
  "vercel__ai/packages__google__src____fixtures____google-stream-tool-call-array-arguments-missing-terminal-function-call.chunks.txt": { provider: "gemini", short: "google-stream-tool-call-array-arguments-missing-terminal-function-call" },
  "vercel__ai/packages__google__src____fixtures____google-tool-call-gemini3.chunks.txt": { provider: "gemini", short: "google-tool-call-gemini3" },
  "vercel__ai/packages__google__src____fixtures____google-vertex-stream-tool-call-arguments-nested.1.chunks.txt": { provider: "gemini", short: "google-vertex-stream-tool-call-arguments-nested.1" },

  // Ollama native
  "vxcontrol__langchaingo/llms__ollama__testdata__TestToolCall.httprr": { provider: "ollama", short: "ollama__TestToolCall" },
};

/** Files in each repository folder that are not data. */
const LICENSE_FILES = ["UPSTREAM_LICENSE", "UPSTREAM_NOTICE"];

/** First line of every generated file: how stale outputs are recognized, and a warning to humans. */
export const GENERATED_MARKER = "# generated by `npm run import-corpus` (scripts/import-corpus.ts) from the upstream corpus: do not edit, re-run it";

export interface ManifestRow {
  number: number;
  local: string;
  repo: string;
  path: string;
  commit: string;
  license: string;
  provider: string;
  format: string;
  origin: string;
  description: string;
  bytes: number;
  blob: string;
}

export interface ReportEntry {
  local: string;
  /** Output path relative to the output directory, with forward slashes. */
  out: string;
  provider: ProviderName;
  format: string;
  streams: number;
  events: number;
  notes: string[];
}

export interface Report {
  corpusDir: string;
  outDir: string;
  files: ReportEntry[];
  /** License folders written under LICENSES/, relative to the output directory. */
  licenses: string[];
  /** Stale generated files removed from the output directory. */
  removed: string[];
}

export class CorpusError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "CorpusError";
  }
}

function unquote(cell: string): string {
  const trimmed = cell.trim();
  return trimmed.startsWith("`") && trimmed.endsWith("`") ? trimmed.slice(1, -1) : trimmed;
}

/** Reads the per-file table of MANIFEST.md (rows `| n | \`local\` | repo | … | blob |`). */
export function parseManifest(text: string): Map<string, ManifestRow> {
  const rows = new Map<string, ManifestRow>();
  for (const line of text.split("\n")) {
    if (!/^\|\s*\d+\s*\|\s*`/.test(line)) continue;
    const cells = line.trim().replace(/^\|/, "").replace(/\|$/, "").split("|");
    if (cells.length < 12) continue;
    // The description may itself contain '|': take fixed columns from both ends.
    const head = cells.slice(0, 9).map(unquote);
    const tail = cells.slice(-2).map(unquote);
    const description = cells.slice(9, -2).join("|").trim();
    const [number = "", local = "", repo = "", path = "", commit = "", license = "", provider = "", format = "", origin = ""] = head;
    const [bytes = "", blob = ""] = tail;
    rows.set(local, {
      number: Number(number),
      local,
      repo,
      path,
      commit,
      license,
      provider,
      format,
      origin,
      description,
      bytes: Number(bytes),
      blob,
    });
  }
  return rows;
}

function gitBlobId(bytes: Uint8Array): string {
  return createHash("sha1").update(`blob ${bytes.length}\0`).update(bytes).digest("hex");
}

function checkTable(files: readonly string[], manifest: Map<string, ManifestRow>): void {
  const problems: string[] = [];
  const inTable = new Set(Object.keys(CORPUS_TABLE));
  for (const file of files) {
    if (!inTable.has(file)) problems.push(`corpus file not in CORPUS_TABLE (add it with its provider): ${file}`);
    if (!manifest.has(file)) problems.push(`corpus file not described in MANIFEST.md: ${file}`);
  }
  const present = new Set(files);
  for (const local of inTable) {
    if (!present.has(local)) problems.push(`CORPUS_TABLE entry has no corpus file: ${local}`);
  }
  const outputs = new Map<string, string>();
  for (const [local, entry] of Object.entries(CORPUS_TABLE)) {
    if (!/^[A-Za-z0-9._-]+$/.test(entry.short)) problems.push(`short name '${entry.short}' of ${local} has characters unsafe in file names`);
    const out = outputName(local, entry);
    const other = outputs.get(out);
    if (other) problems.push(`${local} and ${other} would both write ${out}`);
    outputs.set(out, local);
  }
  if (problems.length > 0) throw new CorpusError(`corpus table out of sync:\n  ${problems.join("\n  ")}`);
}

function outputName(local: string, entry: CorpusEntry): string {
  const repoFolder = local.split("/")[0] as string;
  return `${entry.provider}/${repoFolder}__${entry.short}.ndjson`;
}

function headerFor(row: ManifestRow, entry: CorpusEntry, format: string, repoFolder: string, notes: readonly string[]): string[] {
  return [
    GENERATED_MARKER.replace(/^# /, ""),
    `upstream: ${row.repo} ${row.path}`,
    `commit: ${row.commit} (blob ${row.blob}, verified)`,
    `licence: ${row.license}; full text in the corpus at ${repoFolder}/UPSTREAM_LICENSE`,
    `origin: ${row.origin}`,
    `upstream container: ${row.format}`,
    `converter: toolwire import, format ${format}`,
    `provider: ${entry.provider} (MANIFEST: ${row.provider})`,
    `description: ${row.description}`,
    ...notes.map((note) => `note: ${note}`),
  ];
}

async function writeOut(path: string, content: string | Uint8Array): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  await writeFile(path, content);
}

/** One corpus file imported in memory: its recorded streams and the file text the CLI replays. */
export interface ImportedFile extends ReportEntry {
  row: ManifestRow;
  streamsData: RecordedStream[];
  /** The records file, with its provenance header (`serializeRecords`). */
  text: string;
}

function listCorpusSync(corpusDir: string): { files: string[]; repos: string[] } {
  const files: string[] = [];
  const repos: string[] = [];
  for (const entry of readdirSync(corpusDir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
    if (!entry.isDirectory()) continue;
    repos.push(entry.name);
    for (const name of readdirSync(join(corpusDir, entry.name)).sort()) {
      if (!LICENSE_FILES.includes(name)) files.push(`${entry.name}/${name}`);
    }
  }
  return { files, repos };
}

/**
 * Imports every file of the upstream corpus in memory, checking each against the manifest (size
 * and git blob id) and the table (provider). Throws a CorpusError on the first disagreement.
 */
export function importUpstream(corpusDir: string): { files: ImportedFile[]; repos: string[] } {
  const manifestPath = join(corpusDir, "MANIFEST.md");
  if (!existsSync(manifestPath)) throw new CorpusError(`no MANIFEST.md in ${corpusDir}: is this the upstream corpus folder?`);
  const manifest = parseManifest(readFileSync(manifestPath, "utf8"));
  const { files, repos } = listCorpusSync(corpusDir);
  checkTable(files, manifest);

  const imported: ImportedFile[] = [];
  for (const local of files) {
    const entry = CORPUS_TABLE[local] as CorpusEntry;
    const row = manifest.get(local) as ManifestRow;
    const repoFolder = local.split("/")[0] as string;
    const fileName = local.slice(repoFolder.length + 1);

    const bytes = new Uint8Array(readFileSync(join(corpusDir, local)));
    const blob = gitBlobId(bytes);
    if (!blob.startsWith(row.blob)) {
      throw new CorpusError(`${local}: git blob ${blob.slice(0, 12)} differs from MANIFEST.md's ${row.blob}; the corpus copy is not the upstream file`);
    }

    const result = importFile(fileName, bytes);
    if (result.streams.length === 0 || result.streams.some((stream) => stream.events.length === 0)) {
      throw new CorpusError(`${local}: converted to no events (${result.format}); notes: ${result.notes.join("; ") || "none"}`);
    }
    for (const stream of result.streams) {
      // The container's own hint (request URL, InvokeModel chunks) must agree with the table.
      if (stream.provider !== null && stream.provider !== entry.provider) {
        throw new CorpusError(`${local}: CORPUS_TABLE says ${entry.provider} but ${stream.sequence ?? "the stream"} looks like ${stream.provider}`);
      }
    }
    const streams = result.streams.map((stream) => ({ ...stream, provider: entry.provider }));
    imported.push({
      local,
      out: outputName(local, entry),
      provider: entry.provider,
      format: result.format,
      streams: streams.length,
      events: streams.reduce((sum, stream) => sum + stream.events.length, 0),
      notes: result.notes,
      row,
      streamsData: streams,
      text: serializeRecords(streams, { header: headerFor(row, entry, result.format, repoFolder, result.notes) }),
    });
  }
  return { files: imported, repos };
}

/** Imports the corpus and writes the records files (and licences) into outDir, removing stale ones. */
export async function importCorpus(corpusDir: string, outDir: string): Promise<Report> {
  const { files, repos } = importUpstream(corpusDir);
  const report: Report = { corpusDir, outDir, files: [], licenses: [], removed: [] };
  const usedRepos = new Set<string>();
  for (const file of files) {
    usedRepos.add(file.local.split("/")[0] as string);
    await writeOut(join(outDir, file.out), file.text);
    const { row: _row, streamsData: _streams, text: _text, ...entry } = file;
    report.files.push(entry);
  }

  for (const repo of repos) {
    if (!usedRepos.has(repo)) continue;
    let copied = false;
    for (const name of LICENSE_FILES) {
      const source = join(corpusDir, repo, name);
      if (!existsSync(source)) continue;
      await writeOut(join(outDir, "LICENSES", repo, name), new Uint8Array(await readFile(source)));
      copied = true;
    }
    if (!copied) throw new CorpusError(`${repo}: no UPSTREAM_LICENSE; its files cannot be redistributed without one`);
    report.licenses.push(`LICENSES/${repo}`);
  }

  report.removed = await removeStale(outDir, new Set(report.files.map((file) => file.out)), new Set(repos.filter((repo) => usedRepos.has(repo))));
  return report;
}

/** Deletes generated files (and license folders) this run did not produce: renamed or dropped entries. */
async function removeStale(outDir: string, produced: Set<string>, repos: Set<string>): Promise<string[]> {
  const removed: string[] = [];
  if (!existsSync(outDir)) return removed;
  for (const entry of await readdir(outDir, { withFileTypes: true })) {
    if (!entry.isDirectory()) continue;
    const dir = join(outDir, entry.name);
    if (entry.name === "LICENSES") {
      for (const repo of await readdir(dir)) {
        if (!repos.has(repo)) {
          await rm(join(dir, repo), { recursive: true, force: true });
          removed.push(`LICENSES/${repo}`);
        }
      }
      continue;
    }
    for (const name of await readdir(dir)) {
      const rel = `${entry.name}/${name}`;
      if (!name.endsWith(".ndjson") || produced.has(rel)) continue;
      const path = join(dir, name);
      if ((await stat(path)).isFile() && (await readFile(path, "utf8")).startsWith(GENERATED_MARKER)) {
        await rm(path);
        removed.push(rel);
      }
    }
  }
  return removed.sort();
}

/** The repository root: the nearest folder above this module holding toolwire's package.json. */
export function repoRoot(from: string = dirname(fileURLToPath(import.meta.url))): string {
  let dir = from;
  while (true) {
    const candidate = join(dir, "package.json");
    if (existsSync(candidate)) return dir;
    const parent = dirname(dir);
    if (parent === dir) throw new CorpusError(`no package.json above ${from}`);
    dir = parent;
  }
}

/**
 * The upstream corpus: `$TOOLWIRE_CORPUS/upstream`. The script assumes no folder beside the
 * checkout (the tests look for one: test/helpers/corpus.ts).
 */
export function defaultCorpusDir(): string {
  if (!process.env.TOOLWIRE_CORPUS) {
    throw new CorpusError("set TOOLWIRE_CORPUS to a directory holding upstream/ (the real-wire corpora: other projects' recordings are not part of the repository)");
  }
  return join(resolve(process.env.TOOLWIRE_CORPUS), "upstream");
}

/** Where `npm run import-corpus` writes: git-ignored, never shipped. */
export function cacheDir(root: string = repoRoot()): string {
  return join(root, ".corpus-cache");
}

function printReport(report: Report, root: string): void {
  const byProvider = new Map<string, ReportEntry[]>();
  for (const file of report.files) byProvider.set(file.provider, [...(byProvider.get(file.provider) ?? []), file]);
  const lines = [`imported ${report.files.length} upstream files from ${relative(root, report.corpusDir) || "."} into ${relative(root, report.outDir) || "."}`];
  for (const [provider, files] of [...byProvider].sort(([a], [b]) => (a < b ? -1 : 1))) {
    const streams = files.reduce((sum, file) => sum + file.streams, 0);
    const events = files.reduce((sum, file) => sum + file.events, 0);
    lines.push(`  ${provider}: ${files.length} files, ${streams} streams, ${events} events`);
    for (const file of files) lines.push(`    ${file.out}  [${file.format}] ${file.streams} stream(s), ${file.events} events`);
  }
  lines.push(`  licences: ${report.licenses.join(", ")}`);
  if (report.removed.length > 0) lines.push(`  removed stale: ${report.removed.join(", ")}`);
  process.stdout.write(lines.join("\n") + "\n");
}

async function main(): Promise<void> {
  const root = repoRoot();
  const corpusDir = defaultCorpusDir();
  if (!existsSync(corpusDir)) {
    throw new CorpusError(`corpus not found at ${corpusDir}; set TOOLWIRE_CORPUS to a directory holding upstream/ (other projects' recordings are not part of the repository)`);
  }
  const report = await importCorpus(corpusDir, cacheDir(root));
  printReport(report, root);
}

function isEntryPoint(): boolean {
  const script = process.argv[1];
  return script !== undefined && import.meta.url === pathToFileURL(resolve(script)).href;
}

if (isEntryPoint()) {
  main().catch((error: unknown) => {
    process.stderr.write(`import-corpus: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
  });
}

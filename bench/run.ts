import Anthropic from "@anthropic-ai/sdk";
import { createParser } from "eventsource-parser";
import OpenAI from "openai";
import { createByteDecoder } from "../src/adapters/bytes.js";
import type { ProviderName } from "../src/types.js";
import { anthropicSseBody, bigArguments, chunkBytes, openaiChatSseBody, WRITE_FILE_TOOL } from "./fixtures.js";

/**
 * `npm run bench`: one tool call of 100 KB and of 1 MB streamed in 16-byte deltas, for each
 * protocol decoded by toolwire (with and without previews), by the official SDK's streaming
 * helper with its live-arguments listener, and by a baseline (eventsource-parser + string
 * concatenation + one JSON.parse). Reports medians and ratios to the baseline in one run.
 *
 * - Anthropic Messages: @anthropic-ai/sdk MessageStream with an `inputJson` listener.
 * - OpenAI Chat Completions: openai's ChatCompletionStream (`client.chat.completions.stream`)
 *   with a strict function tool, so it keeps `parsed_arguments` live, and a
 *   `tool_calls.function.arguments.delta` listener.
 *
 * The SDKs re-parse the whole buffer on every delta (quadratic); each SDK run stops after a
 * budget (TOOLWIRE_BENCH_SDK_BUDGET_MS, default 20 s) and reports how far it got.
 */

const DELTA_SIZE = 16;
const SIZES = [100 * 1024, 1024 * 1024];
const SDK_BUDGET_MS = Number(process.env.TOOLWIRE_BENCH_SDK_BUDGET_MS ?? 20_000);

interface Measurement {
  ms: number;
  note?: string;
}

interface Section {
  title: string;
  provider: ProviderName;
  sdkLabel: string;
  body(argumentsText: string, size: number): string;
  baseline(chunks: Uint8Array[]): unknown;
  /** One SDK run; resolves with a note when the budget ran out. */
  sdkOnce(chunks: Uint8Array[], budgetMs: number): Promise<Measurement>;
}

function median(values: number[]): number {
  const sorted = [...values].sort((x, y) => x - y);
  return sorted[Math.floor(sorted.length / 2)] as number;
}

function gc(): void {
  (globalThis as { gc?: () => void }).gc?.();
}

function timeSync(runs: number, fn: () => void): Measurement {
  // Warm up until the JIT has settled: at least 5 runs and half a second, so that a decoder with
  // more code paths than the baseline is not measured while still being compiled.
  const warmStart = performance.now();
  for (let i = 0; i < 5 || performance.now() - warmStart < 500; i++) fn();
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    // No forced gc() here: a full collection before each run shrinks the young generation and
    // makes the next run's allocation pattern, not its work, dominate; natural GC is part of the cost.
    const start = performance.now();
    fn();
    times.push(performance.now() - start);
  }
  return { ms: median(times) };
}

/** The bytes as a fetch body that gives up once the budget is spent, for the SDK runs. */
function budgetedBody(chunks: Uint8Array[], start: number, budgetMs: number, progress: { sent: number }): ReadableStream<Uint8Array> {
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      if (performance.now() - start > budgetMs) {
        controller.error(new Error("budget"));
        return;
      }
      const chunk = chunks[progress.sent++];
      if (chunk) controller.enqueue(chunk);
      else controller.close();
    },
  });
}

function stopped(budgetMs: number, start: number, sent: number, total: number): Measurement {
  return { ms: performance.now() - start, note: `stopped after ${budgetMs / 1000} s at ${((sent / total) * 100).toFixed(1)}% of the stream` };
}

const anthropicSection: Section = {
  title: "one Anthropic tool call, 16-byte input_json_delta fragments",
  provider: "anthropic",
  sdkLabel: "@anthropic-ai/sdk (inputJson)",
  body: anthropicSseBody,
  baseline(chunks) {
    const decoder = new TextDecoder();
    let buffer = "";
    const parser = createParser({
      onEvent(message) {
        const data = JSON.parse(message.data) as { type: string; delta?: { type: string; partial_json?: string } };
        if (data.type === "content_block_delta" && data.delta?.type === "input_json_delta") buffer += data.delta.partial_json ?? "";
      },
    });
    for (const chunk of chunks) parser.feed(decoder.decode(chunk, { stream: true }));
    return JSON.parse(buffer);
  },
  async sdkOnce(chunks, budgetMs) {
    const progress = { sent: 0 };
    const start = performance.now();
    const body = budgetedBody(chunks, start, budgetMs, progress);
    const client = new Anthropic({
      apiKey: "bench",
      maxRetries: 0,
      fetch: async () => new Response(body, { headers: { "content-type": "text/event-stream" } }),
    });
    const stream = client.messages.stream({ model: "claude-bench", max_tokens: 10, messages: [{ role: "user", content: "x" }] });
    let previews = 0;
    stream.on("inputJson", () => {
      previews++;
    });
    stream.on("error", () => {});
    try {
      await stream.finalMessage();
    } catch {
      return stopped(budgetMs, start, progress.sent, chunks.length);
    }
    if (previews === 0) throw new Error("the SDK emitted no inputJson events");
    return { ms: performance.now() - start };
  },
};

const chatSection: Section = {
  title: "one OpenAI Chat Completions strict tool call, 16-byte function.arguments fragments",
  provider: "openai-chat",
  sdkLabel: "openai ChatCompletionStream",
  body: openaiChatSseBody,
  baseline(chunks) {
    const decoder = new TextDecoder();
    let buffer = "";
    const parser = createParser({
      onEvent(message) {
        if (message.data === "[DONE]") return;
        const data = JSON.parse(message.data) as { choices: Array<{ delta?: { tool_calls?: Array<{ function?: { arguments?: string } }> } }> };
        buffer += data.choices[0]?.delta?.tool_calls?.[0]?.function?.arguments ?? "";
      },
    });
    for (const chunk of chunks) parser.feed(decoder.decode(chunk, { stream: true }));
    return JSON.parse(buffer);
  },
  async sdkOnce(chunks, budgetMs) {
    const progress = { sent: 0 };
    const start = performance.now();
    const body = budgetedBody(chunks, start, budgetMs, progress);
    const client = new OpenAI({
      apiKey: "bench",
      maxRetries: 0,
      fetch: async () => new Response(body, { headers: { "content-type": "text/event-stream" } }),
    });
    const stream = client.chat.completions.stream({ model: "gpt-bench", messages: [{ role: "user", content: "x" }], tools: [WRITE_FILE_TOOL] });
    let previews = 0;
    stream.on("tool_calls.function.arguments.delta", () => {
      previews++;
    });
    stream.on("error", () => {});
    let completion;
    try {
      completion = await stream.finalChatCompletion();
    } catch {
      return stopped(budgetMs, start, progress.sent, chunks.length);
    }
    if (previews === 0) throw new Error("the SDK emitted no tool_calls.function.arguments.delta events");
    if (!completion.choices[0]?.message.tool_calls?.[0]) throw new Error("the SDK returned no tool call");
    return { ms: performance.now() - start };
  },
};

function toolwire(provider: ProviderName, chunks: Uint8Array[], previews: boolean): unknown {
  const decoder = createByteDecoder(provider, { previews });
  // The consumer reads every delta's preview, as the SDK runs receive every inputJson snapshot:
  // the measurement holds even if previews were ever computed on demand.
  let shown = 0;
  for (const chunk of chunks) {
    for (const event of decoder.push(chunk)) if (event.type === "tool_call_delta" && event.preview !== undefined) shown++;
  }
  if (previews && shown === 0) throw new Error("toolwire emitted no previews");
  const turn = decoder.finish();
  const call = turn.toolCalls[0];
  if (!call || call.error) throw new Error(`toolwire failed the benchmark stream: ${JSON.stringify(call?.error)}`);
  return call.arguments;
}

async function sdk(section: Section, chunks: Uint8Array[], runs: number): Promise<Measurement> {
  const first = await section.sdkOnce(chunks, SDK_BUDGET_MS);
  if (first.note) return first;
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    gc();
    const m = await section.sdkOnce(chunks, SDK_BUDGET_MS);
    if (m.note) return m;
    times.push(m.ms);
  }
  return { ms: median(times) };
}

function format(m: Measurement, base: number): string {
  const ratio = m.ms / base;
  return `${m.ms.toFixed(1).padStart(9)} ms  ${(m.note ? "≥" : "") + ratio.toFixed(2)}x${m.note ? `  (${m.note})` : ""}`;
}

/** Runs one section at both sizes; returns the worst ratio of toolwire with previews to the baseline. */
async function runSection(section: Section): Promise<number> {
  const results: Record<string, Record<string, Measurement>> = {};
  console.log(`toolwire benchmark: ${section.title}, node ${process.version}\n`);
  for (const size of SIZES) {
    const args = bigArguments(size);
    const chunks = chunkBytes(section.body(args, DELTA_SIZE));
    const deltas = Math.ceil(args.length / DELTA_SIZE);
    const runs = size > 500_000 ? 15 : 41;
    const expected = JSON.parse(args) as unknown;
    if (JSON.stringify(toolwire(section.provider, chunks, true)) !== JSON.stringify(expected)) throw new Error("toolwire result differs from JSON.parse");
    if (JSON.stringify(section.baseline(chunks)) !== JSON.stringify(expected)) throw new Error("baseline result differs from JSON.parse");
    const row: Record<string, Measurement> = {
      baseline: timeSync(runs, () => section.baseline(chunks)),
      "toolwire (previews)": timeSync(runs, () => toolwire(section.provider, chunks, true)),
      "toolwire (no previews)": timeSync(runs, () => toolwire(section.provider, chunks, false)),
      [section.sdkLabel]: await sdk(section, chunks, size > 500_000 ? 1 : 3),
    };
    results[size] = row;
    const base = (row.baseline as Measurement).ms;
    console.log(`${(args.length / 1024).toFixed(0)} KB arguments, ${deltas} deltas:`);
    for (const [name, m] of Object.entries(row)) console.log(`  ${name.padEnd(30)} ${format(m, base)}`);
    console.log("");
  }
  const [small, large] = SIZES.map((size) => results[size] as Record<string, Measurement>);
  const worst = Math.max(...SIZES.map((size) => (results[size]?.["toolwire (previews)"] as Measurement).ms / (results[size]?.baseline as Measurement).ms));
  if (small && large) {
    const scale = (name: string): string => `${((large[name] as Measurement).ms / (small[name] as Measurement).ms).toFixed(1)}x${large[name]?.note ? " (SDK stopped at its budget)" : ""}`;
    console.log(`Scaling from 100 KB to 1 MB (ideal ~10x): baseline ${scale("baseline")}, toolwire (previews) ${scale("toolwire (previews)")}, ${section.sdkLabel} ${scale(section.sdkLabel)}`);
    console.log(`toolwire with previews vs baseline, worst of both sizes: ${worst.toFixed(2)}x (target ≤ 1.5x): ${worst <= 1.5 ? "met" : "NOT met"}\n`);
  }
  return worst;
}

async function main(): Promise<void> {
  const only = process.env.TOOLWIRE_BENCH_ONLY;
  for (const section of [anthropicSection, chatSection]) {
    if (only && section.provider !== only) continue;
    await runSection(section);
  }
}

await main();

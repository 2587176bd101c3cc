import { door, DOORS, type DoorName } from "./doors.js";
import { CpuBudget, cpuMs, preparePeer, type PeerName } from "./peers.js";
import { bodyStream, buildScenario, type Normalized, type Scenario, type ScenarioSpec } from "./scenarios.js";
import { collectTurn } from "../src/adapters/web.js";

/**
 * One benchmark process: `node --expose-gc dist/bench/worker.js '<task json>'` prints one JSON
 * line with its measurements. `run.ts` starts one per measurement so that no configuration
 * inherits another's heap, JIT state or garbage.
 */

export type Task =
  | { kind: "ratio"; spec: ScenarioSpec; door: DoorName; rounds: number; warmMs: number }
  | { kind: "peer"; spec: ScenarioSpec; peer: PeerName; budgetMs: number; runs: number }
  | { kind: "memory"; spec: ScenarioSpec; door: DoorName }
  | { kind: "stream50"; megabytes: number };

export interface RatioResult {
  baselineMs: number;
  doorMs: number;
  ratio: number;
}

export interface PeerResult {
  baselineMs: number;
  peerMs: number;
  ratio: number;
  /** Share of the stream the peer decoded before its budget ran out (1 when it finished). */
  share: number;
  stopped: boolean;
}

export interface MemoryResult {
  /** Largest live heap growth seen while decoding (after a full collection at every chunk read), in bytes. */
  peakBytes: number;
  /** Heap growth after a collection with the result still held. */
  retainedBytes: number;
}

export interface Stream50Result {
  wireBytes: number;
  keptArgumentChars: number;
  cpuMs: number;
  peakBytes: number;
  retainedBytes: number;
}

function gc(): void {
  const collect = (globalThis as { gc?: () => void }).gc;
  if (!collect) throw new Error("run the benchmark worker with --expose-gc");
  collect();
}

export function median(values: number[]): number {
  const sorted = [...values].sort((x, y) => x - y);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[middle] as number) : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
}

function same(result: Normalized | null, scenario: Scenario, who: string): void {
  if (JSON.stringify(result) !== JSON.stringify(scenario.expected)) throw new Error(`${who} decoded the benchmark stream differently from JSON.parse`);
}

type Run = (scenario: Scenario) => Promise<unknown>;

function turns(name: DoorName): Run {
  const decode = door(name);
  return async (scenario) => {
    let last: unknown;
    for (let i = 0; i < scenario.turnsPerRun; i++) last = await decode(scenario.protocol, bodyStream(scenario.chunks));
    return last;
  };
}

async function timed(run: Run, scenario: Scenario): Promise<number> {
  const start = cpuMs();
  await run(scenario);
  return cpuMs() - start;
}

async function ratio(task: Extract<Task, { kind: "ratio" }>): Promise<RatioResult> {
  const scenario = buildScenario(task.spec);
  const baseline = turns("baseline");
  const candidate = turns(task.door);
  same((await door("baseline")(scenario.protocol, bodyStream(scenario.chunks))) as Normalized, scenario, "the baseline");
  same((await door(task.door)(scenario.protocol, bodyStream(scenario.chunks))) as Normalized, scenario, task.door);
  // Warm up both until the JIT has settled: at least 5 runs each and warmMs of CPU.
  const warmStart = cpuMs();
  for (let i = 0; i < 5 || cpuMs() - warmStart < task.warmMs; i++) {
    await baseline(scenario);
    await candidate(scenario);
  }
  const base: number[] = [];
  const mine: number[] = [];
  for (let round = 0; round < task.rounds; round++) {
    // Alternate the order so neither side always runs in the other's garbage.
    if (round % 2 === 0) {
      base.push(await timed(baseline, scenario));
      mine.push(await timed(candidate, scenario));
    } else {
      mine.push(await timed(candidate, scenario));
      base.push(await timed(baseline, scenario));
    }
  }
  const baselineMs = median(base) / scenario.turnsPerRun;
  const doorMs = median(mine) / scenario.turnsPerRun;
  return { baselineMs, doorMs, ratio: doorMs / baselineMs };
}

async function peer(task: Extract<Task, { kind: "peer" }>): Promise<PeerResult> {
  const scenario = buildScenario(task.spec);
  const baseline = turns("baseline");
  const warmStart = cpuMs();
  for (let i = 0; i < 5 || cpuMs() - warmStart < 300; i++) await baseline(scenario);
  const base: number[] = [];
  for (let i = 0; i < 7; i++) base.push(await timed(baseline, scenario));
  const baselineMs = median(base) / scenario.turnsPerRun;
  // The peer's garbage must not be charged to the baseline, nor the baseline's to the peer.
  gc();
  const budget = new CpuBudget(cpuMs(), task.budgetMs);
  const decode = await preparePeer(task.peer, scenario, budget);
  const times: number[] = [];
  // The first run warms the peer up (and is its only run if it spends the budget).
  for (let i = 0; i <= task.runs; i++) {
    const start = cpuMs();
    let result: Normalized | null = null;
    for (let turn = 0; turn < scenario.turnsPerRun; turn++) {
      result = await decode();
      if (result === null) break;
    }
    const spent = cpuMs() - start;
    if (result === null) {
      const share = (budget.sent - 1) / scenario.chunks.length;
      return { baselineMs, peerMs: spent, ratio: spent / baselineMs, share: Math.max(0, share), stopped: true };
    }
    same(result, scenario, task.peer);
    if (i > 0) times.push(spent / scenario.turnsPerRun);
    if (cpuMs() - budget.startedAt() > task.budgetMs * 0.75) break;
    gc();
  }
  const peerMs = median(times.length > 0 ? times : [Number.NaN]);
  return { baselineMs, peerMs, ratio: peerMs / baselineMs, share: 1, stopped: false };
}

function heapUsed(): number {
  return process.memoryUsage().heapUsed;
}

async function memory(task: Extract<Task, { kind: "memory" }>): Promise<MemoryResult> {
  const decode = door(task.door);
  const warm = buildScenario({ ...task.spec, size: Math.min(task.spec.size, 100 * 1024) });
  for (let i = 0; i < 3; i++) await decode(warm.protocol, bodyStream(warm.chunks));
  const scenario = buildScenario(task.spec);
  gc();
  gc();
  const before = heapUsed();
  let peak = before;
  let next = 0;
  // A full collection before each sample: the peak is of live data. Without it the sample also
  // counts garbage waiting in the old generation, whose amount follows V8's heuristics (allocation
  // site pretenuring moved whole runs of short-lived events there in some processes and not in
  // others: the same code read 6 MB or 13 MB).
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      gc();
      peak = Math.max(peak, heapUsed());
      const chunk = scenario.chunks[next++];
      if (chunk) controller.enqueue(chunk);
      else controller.close();
    },
  });
  const result = await decode(scenario.protocol, stream);
  peak = Math.max(peak, heapUsed());
  gc();
  const retained = heapUsed() - before;
  same(result, scenario, task.door);
  return { peakBytes: peak - before, retainedBytes: retained };
}

/**
 * A long Anthropic stream of 2-character argument deltas, generated chunk by chunk and never held
 * whole, decoded with collectTurn: memory follows what the turn keeps (the arguments), not the
 * bytes that went by.
 */
async function stream50(task: Extract<Task, { kind: "stream50" }>): Promise<Stream50Result> {
  const encoder = new TextEncoder();
  const event = (type: string, data: unknown): string => `event: ${type}\ndata: ${JSON.stringify(data)}\n\n`;
  const head = encoder.encode(
    event("message_start", { type: "message_start", message: { id: "msg_big", type: "message", role: "assistant", model: "claude-bench", content: [], usage: { input_tokens: 1, output_tokens: 1 } } }) +
      event("content_block_start", { type: "content_block_start", index: 0, content_block: { type: "tool_use", id: "toolu_big", name: "write", input: {} } }) +
      event("content_block_delta", { type: "content_block_delta", index: 0, delta: { type: "input_json_delta", partial_json: '{"k":"' } }),
  );
  const delta = event("content_block_delta", { type: "content_block_delta", index: 0, delta: { type: "input_json_delta", partial_json: "ab" } });
  const perChunk = Math.floor((16 * 1024) / delta.length);
  const middle = encoder.encode(delta.repeat(perChunk));
  const tail = encoder.encode(
    event("content_block_delta", { type: "content_block_delta", index: 0, delta: { type: "input_json_delta", partial_json: '"}' } }) +
      event("content_block_stop", { type: "content_block_stop", index: 0 }) +
      event("message_delta", { type: "message_delta", delta: { stop_reason: "tool_use" }, usage: { output_tokens: 1 } }) +
      event("message_stop", { type: "message_stop" }),
  );
  const middleChunks = Math.ceil((task.megabytes * 1024 * 1024) / middle.length);
  gc();
  const before = heapUsed();
  let peak = before;
  let sent = 0;
  let wireBytes = 0;
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      if ((sent & 15) === 0) peak = Math.max(peak, heapUsed());
      const chunk = sent === 0 ? head : sent <= middleChunks ? middle : sent === middleChunks + 1 ? tail : null;
      sent++;
      if (chunk) {
        wireBytes += chunk.length;
        controller.enqueue(chunk);
      } else controller.close();
    },
  });
  const start = cpuMs();
  const turn = await collectTurn("anthropic", stream);
  const spent = cpuMs() - start;
  peak = Math.max(peak, heapUsed());
  gc();
  const retained = heapUsed() - before;
  const args = turn.toolCalls[0]?.arguments as { k?: string } | null;
  if (turn.status !== "complete" || !args || args.k?.length !== middleChunks * perChunk * 2) throw new Error("the 50 MB stream did not decode whole");
  return { wireBytes, keptArgumentChars: args.k.length, cpuMs: spent, peakBytes: peak - before, retainedBytes: retained };
}

async function main(): Promise<void> {
  const task = JSON.parse(process.argv[2] ?? "null") as Task;
  if (task?.kind === "peer") {
    // A peer that gives up by throwing out of its own event handlers (openai 7 refuses a strict
    // call past its structured-JSON fragment limit) is a result, not a crash of the benchmark.
    process.on("uncaughtException", (error) => {
      process.stdout.write(`${JSON.stringify({ failed: error instanceof Error ? `${error.name}: ${error.message}` : String(error) })}\n`);
      process.exit(0);
    });
  }
  if (!task) throw new Error(`usage: worker.js '<task json>' (doors: ${Object.keys(DOORS).join(", ")})`);
  let result: unknown;
  if (task.kind === "ratio") result = await ratio(task);
  else if (task.kind === "peer") result = await peer(task);
  else if (task.kind === "memory") result = await memory(task);
  else result = await stream50(task);
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

await main();

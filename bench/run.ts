import { spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { cpus, platform, release, totalmem } from "node:os";
import { fileURLToPath } from "node:url";
import { DOORS, type DoorName } from "./doors.js";
import { PEER_PACKAGES, PEERS, peerFits, type PeerName } from "./peers.js";
import { renderBench, type BenchResults, type ColdRow, type MemoryRow, type PeerRow, type RatioRow, type Stream50Row } from "./report.js";
import { buildScenario, scenarioId, type Protocol, type ScenarioSpec } from "./scenarios.js";
import type { MemoryResult, PeerResult, RatioResult, Stream50Result, Task } from "./worker.js";
import { median } from "./cpu.js";
import { lastLineOfProcess } from "./process.js";

/**
 * `npm run bench [-- --json out.json] [--quick] [--only <text>] [--no-peers]
 *  [--reuse-ratios earlier.json] [--reuse-peers earlier.json] [--no-proxy]` (the reuse options take
 *  those rows from an earlier run and measure the rest; the proxy rows, `dist/bench/proxy.js
 *  --quick`, come last unless --no-proxy)
 *
 * Every measurement is process CPU time (user + system, `process.cpuUsage`), since wall time
 * means little on a shared machine. Each configuration runs in its own processes (3 by default,
 * 1 with --quick); each process warms up, then times the door and the baseline alternately on
 * the same bytes and reports the ratio of their medians; a row's ratio is the median of its
 * processes' ratios. The slow peers (official SDKs, AI SDK) run last, each in its own process
 * with a CPU budget (TOOLWIRE_BENCH_PEER_BUDGET_MS, default 8 s): a peer that spends it stops and
 * the row reports the share of the stream it reached. With --json the results are written for
 * `npm run bench:readme`, which renders the tables of docs/performance.md.
 */

const args = process.argv.slice(2);
const quick = args.includes("--quick");
const jsonAt = args.indexOf("--json");
const jsonPath = jsonAt >= 0 ? args[jsonAt + 1] : undefined;
const onlyAt = args.indexOf("--only");
const only = onlyAt >= 0 ? args[onlyAt + 1] : undefined;
const withPeers = !args.includes("--no-peers");
const reuseAt = args.indexOf("--reuse-ratios");
/** Takes the ratio rows from an earlier run's JSON and measures the rest (cold import, memory, peers). */
const reuseRatios = reuseAt >= 0 ? args[reuseAt + 1] : undefined;
const reusePeersAt = args.indexOf("--reuse-peers");
/** Takes the peer rows (and their versions) from an earlier run's JSON instead of measuring them. */
const reusePeers = reusePeersAt >= 0 ? args[reusePeersAt + 1] : undefined;
/** An earlier run's results, read once (before this run may overwrite the same file). */
function earlierRun(path: string | undefined): BenchResults | null {
  return path === undefined ? null : (JSON.parse(readFileSync(path, "utf8")) as BenchResults);
}
const earlierRatios = earlierRun(reuseRatios);
const earlierPeers = reusePeers === reuseRatios ? earlierRatios : earlierRun(reusePeers);
const PROCESSES = quick ? 1 : Number(process.env.TOOLWIRE_BENCH_PROCESSES ?? 3);
/** Processes per peer configuration (a peer that spends its budget is not repeated). */
const PEER_PROCESSES = Number(process.env.TOOLWIRE_BENCH_PEER_PROCESSES ?? PROCESSES);
const PEER_BUDGET_MS = Number(process.env.TOOLWIRE_BENCH_PEER_BUDGET_MS ?? 8_000);
const KB = 1024;
const SIZES = [100 * KB, 400 * KB, 1024 * KB];
const PROTOCOLS: Protocol[] = ["anthropic", "openai-chat"];
const LARGE_DOORS: DoorName[] = ["push", "push-previews", "decodeStream", "decodeStream-previews", "batches-previews", "collectTurn", "collectTurn-previews"];
const PARALLEL_DOORS: DoorName[] = ["push-previews", "decodeStream-previews", "batches-previews", "collectTurn-previews"];
const SMALL_DOORS: DoorName[] = ["push", "decodeStream", "collectTurn"];
const MEMORY_DOORS: DoorName[] = ["baseline", "push-previews", "decodeStream-previews", "collectTurn"];
const SMALL_SIZE = 2 * KB;

const worker = fileURLToPath(new URL("./worker.js", import.meta.url));
const coldImport = fileURLToPath(new URL("./import-cpu.js", import.meta.url));

function spawnJson<T>(script: string, argv: string[], flags: string[] = []): T {
  return JSON.parse(lastLineOfProcess(script, argv, ["--expose-gc", ...flags])) as T;
}

/**
 * Memory processes run with a 1 MB young generation. The memory rows collect before each sample
 * and count live data only; the 50 MB stream samples without collecting, so its peak counts live
 * data plus at most that much garbage awaiting collection, not the young generation's fill level.
 */
const MEMORY_FLAGS = ["--max-semi-space-size=1"];

function runTask<T>(task: Task): T {
  return spawnJson<T>(worker, [JSON.stringify(task)], task.kind === "memory" || task.kind === "stream50" ? MEMORY_FLAGS : []);
}

function selected(label: string): boolean {
  return only === undefined || label.includes(only);
}

function log(line: string): void {
  process.stderr.write(`${line}\n`);
}

interface RatioPlan {
  spec: ScenarioSpec;
  door: DoorName;
}

function ratioPlans(): RatioPlan[] {
  const plans: RatioPlan[] = [];
  for (const protocol of PROTOCOLS) {
    for (const size of quick ? [100 * KB, 1024 * KB] : SIZES) for (const door of LARGE_DOORS) plans.push({ spec: { protocol, shape: "single", size }, door });
    for (const door of PARALLEL_DOORS) plans.push({ spec: { protocol, shape: "parallel4", size: 1024 * KB }, door });
    for (const door of SMALL_DOORS) plans.push({ spec: { protocol, shape: "small", size: SMALL_SIZE }, door });
  }
  return plans.filter((plan) => selected(`${scenarioId(plan.spec)} ${plan.door}`));
}

function measureRatios(): RatioRow[] {
  const plans = ratioPlans();
  const found = new Map<RatioPlan, RatioResult[]>(plans.map((plan) => [plan, []]));
  // Rounds outside, configurations inside: a change in the machine's load spreads over all rows.
  for (let round = 0; round < PROCESSES; round++) {
    for (const plan of plans) {
      const large = plan.spec.size > 500 * KB;
      const result = runTask<RatioResult>({ kind: "ratio", spec: plan.spec, door: plan.door, rounds: quick ? 5 : large ? 9 : 15, warmMs: quick ? 300 : plan.spec.shape === "small" ? 1500 : 1000 });
      found.get(plan)?.push(result);
      log(`  ${scenarioId(plan.spec)} ${plan.door}: ${result.ratio.toFixed(3)}x (baseline ${result.baselineMs.toFixed(2)} ms)`);
    }
  }
  return plans.map((plan) => {
    const results = found.get(plan) ?? [];
    const scenario = buildScenario(plan.spec);
    const doorMs = median(results.map((r) => r.doorMs));
    return {
      ...plan.spec,
      door: plan.door,
      processes: results.length,
      ratios: results.map((r) => round3(r.ratio)),
      ratio: round3(median(results.map((r) => r.ratio))),
      baselineMs: round3(median(results.map((r) => r.baselineMs))),
      doorMs: round3(doorMs),
      wireBytes: scenario.wireBytes,
      deltas: scenario.deltas,
      ...(plan.spec.shape === "small" ? { turnsPerSecond: Math.round(1000 / doorMs), baselineTurnsPerSecond: Math.round(1000 / median(results.map((r) => r.baselineMs))) } : {}),
    };
  });
}

function measureMemory(): MemoryRow[] {
  const rows: MemoryRow[] = [];
  for (const protocol of PROTOCOLS) {
    const spec: ScenarioSpec = { protocol, shape: "single", size: 1024 * KB };
    if (!selected(`${scenarioId(spec)} memory`)) continue;
    const peaks = new Map<DoorName, MemoryResult[]>(MEMORY_DOORS.map((door) => [door, []]));
    for (let round = 0; round < PROCESSES; round++) {
      for (const door of MEMORY_DOORS) peaks.get(door)?.push(runTask<MemoryResult>({ kind: "memory", spec, door }));
    }
    const basePeak = median((peaks.get("baseline") ?? []).map((r) => r.peakBytes));
    for (const door of MEMORY_DOORS) {
      const results = peaks.get(door) ?? [];
      const peakBytes = median(results.map((r) => r.peakBytes));
      rows.push({ ...spec, door, processes: results.length, peakBytes, retainedBytes: median(results.map((r) => r.retainedBytes)), ratio: round3(peakBytes / basePeak) });
      log(`  memory ${scenarioId(spec)} ${door}: peak ${(peakBytes / 1024 / 1024).toFixed(1)} MB (${(peakBytes / basePeak).toFixed(2)}x)`);
    }
  }
  return rows;
}

function measureStream50(): Stream50Row | null {
  if (!selected("stream50")) return null;
  const megabytes = 50;
  const result = runTask<Stream50Result>({ kind: "stream50", megabytes });
  log(`  50 MB stream: peak heap growth ${(result.peakBytes / 1024 / 1024).toFixed(1)} MB, ${((result.wireBytes / 1024 / 1024 / result.cpuMs) * 1000).toFixed(0)} MB/s of CPU`);
  return { megabytes, ...result };
}

function measureColdImport(): ColdRow | null {
  if (!selected("cold")) return null;
  const runs: number[] = [];
  for (let i = 0; i < Math.max(5, PROCESSES); i++) runs.push(spawnJson<{ cpuMs: number }>(coldImport, []).cpuMs);
  const cpuMs = round3(median(runs));
  log(`  cold import "toolwire": ${cpuMs} ms CPU`);
  return { specifier: "toolwire", processes: runs.length, cpuMs, runs: runs.map(round3) };
}

function measurePeers(): PeerRow[] {
  const rows: PeerRow[] = [];
  const specs: ScenarioSpec[] = [];
  for (const protocol of PROTOCOLS) {
    specs.push({ protocol, shape: "single", size: 100 * KB }, { protocol, shape: "single", size: 1024 * KB }, { protocol, shape: "small", size: SMALL_SIZE });
  }
  for (const spec of specs) {
    for (const peer of Object.keys(PEERS) as PeerName[]) {
      if (!peerFits(peer, spec.protocol) || !selected(`${scenarioId(spec)} ${peer}`)) continue;
      const results: PeerResult[] = [];
      let failed: string | null = null;
      for (let round = 0; round < PEER_PROCESSES; round++) {
        const result = runTask<PeerResult | { failed: string }>({ kind: "peer", spec, peer, budgetMs: PEER_BUDGET_MS, runs: spec.shape === "small" ? 3 : spec.size > 500 * KB ? 1 : 3 });
        if ("failed" in result) {
          failed = result.failed;
          break;
        }
        results.push(result);
        // A peer that spent its budget would spend it again: one process says it.
        if (result.stopped) break;
      }
      if (failed !== null) {
        rows.push({ ...spec, peer, processes: 1, stopped: false, failed, share: 0, ratio: Number.NaN, baselineMs: Number.NaN, peerMs: Number.NaN, budgetMs: PEER_BUDGET_MS });
        log(`  ${scenarioId(spec)} ${peer}: failed (${failed})`);
        continue;
      }
      const stopped = results.some((r) => r.stopped);
      const row: PeerRow = {
        ...spec,
        peer,
        processes: results.length,
        stopped,
        share: round3(median(results.map((r) => r.share))),
        ratio: round3(median(results.map((r) => r.ratio))),
        baselineMs: round3(median(results.map((r) => r.baselineMs))),
        peerMs: round3(median(results.map((r) => r.peerMs))),
        budgetMs: PEER_BUDGET_MS,
        ...(spec.shape === "small" && !stopped ? { turnsPerSecond: Math.round(1000 / median(results.map((r) => r.peerMs))) } : {}),
      };
      rows.push(row);
      log(`  ${scenarioId(spec)} ${peer}: ${stopped ? "≥" : ""}${row.ratio.toFixed(2)}x${stopped ? ` (stopped at ${(row.share * 100).toFixed(1)}%)` : ""}`);
    }
  }
  return rows;
}

function round3(value: number): number {
  return Math.round(value * 1000) / 1000;
}

/** Installed versions of the peers' packages (an npm alias such as openai-v7 reports the real package's version). */
function peerVersions(): Record<string, string> {
  const versions: Record<string, string> = {};
  for (const name of PEER_PACKAGES) {
    try {
      // From dist/bench/run.js; some packages do not export their package.json.
      const manifest = new URL(`../../node_modules/${name}/package.json`, import.meta.url);
      versions[name] = (JSON.parse(readFileSync(manifest, "utf8")) as { version: string }).version;
    } catch {
      versions[name] = "not installed";
    }
  }
  return versions;
}

function machine(): BenchResults["machine"] {
  const cores = cpus();
  return { cpu: cores[0]?.model.trim() ?? "unknown", cores: cores.length, memoryGb: Math.round(totalmem() / 1024 ** 3), os: `${platform()} ${release()}` };
}

log(`toolwire benchmark: node ${process.version}, ${PROCESSES} process(es) per configuration${quick ? " (quick)" : ""}`);
log("cold import:");
const cold = measureColdImport();
log("CPU ratios to the baseline:");
const ratios = earlierRatios ? earlierRatios.ratios : measureRatios();
log("memory:");
const memory = measureMemory();
const stream50 = measureStream50();
log(reusePeers ? `peers taken from ${reusePeers}` : withPeers ? "peers (official SDKs, AI SDK), each with a CPU budget:" : "peers skipped (--no-peers)");
const peers = earlierPeers ? earlierPeers.peers : withPeers ? measurePeers() : [];
const results: BenchResults = {
  version: 1,
  date: new Date().toISOString().slice(0, 10),
  node: process.version,
  machine: machine(),
  processesPerConfiguration: earlierRatios ? earlierRatios.processesPerConfiguration : PROCESSES,
  peerProcesses: PEER_PROCESSES,
  quick,
  peerBudgetMs: PEER_BUDGET_MS,
  doors: { ...DOORS },
  peerVersions: peerVersions(),
  peerLabels: Object.fromEntries(Object.entries(PEERS).map(([name, peer]) => [name, peer.label])),
  cold,
  ratios,
  memory,
  stream50,
  peers,
};
process.stdout.write(`${renderBench(results)}\n`);
if (jsonPath) {
  writeFileSync(jsonPath, `${JSON.stringify(results, null, 2)}\n`);
  log(`results written to ${jsonPath}`);
}
if (!args.includes("--no-proxy")) {
  // toolwire proxy against a byte-forwarding proxy (CPU, text-delta latency, 500 concurrent streams, relay memory): see bench/proxy.ts.
  log("proxy rows (node dist/bench/proxy.js --quick):");
  const proxyRows = spawnSync(process.execPath, [fileURLToPath(new URL("./proxy.js", import.meta.url)), "--quick"], { encoding: "utf8", maxBuffer: 16 * 1024 * 1024 });
  process.stdout.write(proxyRows.status === 0 ? proxyRows.stdout : `proxy bench failed:\n${proxyRows.stderr}\n`);
}

/**
 * Renders a benchmark run's JSON (`npm run bench -- --json bench/results.json`) as the Performance
 * tables of docs/performance.md. Pure: test/bench-readme.test.ts renders the committed JSON and compares.
 */

export interface RatioRow {
  protocol: string;
  shape: string;
  size: number;
  door: string;
  processes: number;
  ratios: number[];
  ratio: number;
  baselineMs: number;
  doorMs: number;
  wireBytes: number;
  deltas: number;
  turnsPerSecond?: number;
  baselineTurnsPerSecond?: number;
}

export interface PeerRow {
  protocol: string;
  shape: string;
  size: number;
  peer: string;
  processes: number;
  stopped: boolean;
  share: number;
  ratio: number;
  baselineMs: number;
  peerMs: number;
  budgetMs: number;
  turnsPerSecond?: number;
  /** Why the library did not decode the stream at all (it threw). */
  failed?: string;
}

export interface MemoryRow {
  protocol: string;
  shape: string;
  size: number;
  door: string;
  processes: number;
  peakBytes: number;
  retainedBytes: number;
  ratio: number;
}

export interface Stream50Row {
  megabytes: number;
  wireBytes: number;
  keptArgumentChars: number;
  cpuMs: number;
  peakBytes: number;
  retainedBytes: number;
}

export interface ColdRow {
  specifier: string;
  processes: number;
  cpuMs: number;
  runs: number[];
}

export interface BenchResults {
  version: 1;
  date: string;
  node: string;
  machine: { cpu: string; cores: number; memoryGb: number; os: string };
  processesPerConfiguration: number;
  /** Processes per peer configuration, when it differs from `processesPerConfiguration`. */
  peerProcesses?: number;
  quick: boolean;
  /** What the reader should know about how this run was put together. */
  note?: string;
  peerBudgetMs: number;
  doors: Record<string, string>;
  peerLabels: Record<string, string>;
  peerVersions?: Record<string, string>;
  cold: ColdRow | null;
  ratios: RatioRow[];
  memory: MemoryRow[];
  stream50: Stream50Row | null;
  peers: PeerRow[];
}

const PROTOCOL_NAMES: Record<string, string> = { anthropic: "Anthropic", "openai-chat": "Chat Completions" };
const COLUMNS: Array<[door: string, title: string]> = [
  ["push", "push core"],
  ["push-previews", "push core, previews"],
  ["decodeStream", "decodeStream"],
  ["decodeStream-previews", "decodeStream, previews"],
  ["batches-previews", "decodeStreamBatches, previews"],
  ["collectTurn", "collectTurn"],
  ["collectTurn-previews", "collectTurn, previews"],
];

function size(bytes: number): string {
  return bytes >= 1024 * 1024 ? `${(bytes / 1024 / 1024).toFixed(bytes % (1024 * 1024) === 0 ? 0 : 1)} MB` : `${Math.round(bytes / 1024)} KB`;
}

function ms(value: number): string {
  return value >= 100 ? `${value.toFixed(0)} ms` : value >= 10 ? `${value.toFixed(1)} ms` : `${value.toFixed(2)} ms`;
}

function x(ratio: number): string {
  return `${ratio.toFixed(2)}x`;
}

function stream(row: { protocol: string; shape: string }): string {
  const name = PROTOCOL_NAMES[row.protocol] ?? row.protocol;
  if (row.shape === "parallel4") return `${name}, 4 parallel calls${row.protocol === "openai-chat" ? " (interleaved)" : ""}`;
  if (row.shape === "small") return `${name}, agent turn (text + 2 calls)`;
  return `${name}, one call`;
}

function groups<T extends { protocol: string; shape: string; size: number }>(rows: T[]): T[][] {
  const byKey = new Map<string, T[]>();
  for (const row of rows) {
    const key = `${row.protocol}|${row.shape}|${row.size}`;
    const list = byKey.get(key) ?? [];
    list.push(row);
    byKey.set(key, list);
  }
  return [...byKey.values()];
}

function verdict(met: boolean): string {
  return met ? "met" : "**not met**";
}

function worst(rows: Array<{ ratio: number }>): number {
  return rows.reduce((max, row) => Math.max(max, row.ratio), 0);
}

function targets(results: BenchResults): string[] {
  const lines: string[] = [];
  const single = results.ratios.filter((r) => r.shape === "single" && (r.door === "decodeStream-previews" || r.door === "collectTurn-previews" || r.door === "batches-previews"));
  for (const door of ["decodeStream-previews", "batches-previews", "collectTurn-previews"]) {
    const rows = single.filter((r) => r.door === door);
    if (rows.length === 0) continue;
    const top = worst(rows);
    lines.push(`- \`${door}\` ≤ 1.1x at every size, both protocols: worst ${x(top)}, ${verdict(top <= 1.1)}.`);
  }
  const parallel = results.ratios.filter((r) => r.shape === "parallel4" && r.door !== "push-previews");
  if (parallel.length > 0) lines.push(`- 4 parallel calls ≤ 1.2x (decodeStream, batches, collectTurn with previews): worst ${x(worst(parallel))}, ${verdict(worst(parallel) <= 1.2)}.`);
  const small = results.ratios.filter((r) => r.shape === "small" && r.door !== "push");
  if (small.length > 0) lines.push(`- Agent turn ≤ 1.3x (decodeStream, collectTurn): worst ${x(worst(small))}, ${verdict(worst(small) <= 1.3)}.`);
  if (results.cold) lines.push(`- Cold \`import "toolwire"\` ≤ 50 ms of CPU: ${ms(results.cold.cpuMs)}, ${verdict(results.cold.cpuMs <= 50)}.`);
  const memory = results.memory.filter((r) => r.door !== "baseline");
  if (memory.length > 0) lines.push(`- Peak heap at 1 MB ≤ 1.2x the baseline's: worst ${x(worst(memory))}, ${verdict(worst(memory) <= 1.2)}.`);
  return lines;
}

/** The Performance tables of docs/performance.md, from one benchmark run. */
export function renderBench(results: BenchResults): string {
  const out: string[] = [];
  const m = results.machine;
  out.push(
    `Measured ${results.date} on ${m.cpu} (${m.cores} cores, ${m.memoryGb} GB, ${m.os}), Node ${results.node}: process CPU time (user + system), ` +
      `${results.processesPerConfiguration} process(es) per configuration, each timing the door and the baseline alternately after a warm-up; ` +
      `ratios are the median of the per-process ratios${results.quick ? " (a --quick run)" : ""}. Every row reads the same bytes from a ReadableStream of 16 KB chunks, as \`fetch\` delivers them; arguments stream in 16-character deltas.`,
    "",
  );
  if (results.note) out.push(results.note, "");
  const large = groups(results.ratios.filter((r) => r.shape !== "small"));
  if (large.length > 0) {
    out.push("CPU time relative to the baseline (lower is better; the baseline's own time in its column):", "");
    out.push("| stream | size | baseline CPU | " + COLUMNS.map(([, title]) => title).join(" | ") + " |");
    out.push("|---|---|---|" + COLUMNS.map(() => "---|").join(""));
  }
  for (const group of large) {
    const first = group[0] as RatioRow;
    const cell = (door: string): string => {
      const row = group.find((r) => r.door === door);
      return row ? x(row.ratio) : "";
    };
    out.push(`| ${stream(first)} | ${size(first.size)} | ${ms(first.baselineMs)} | ${COLUMNS.map(([door]) => cell(door)).join(" | ")} |`);
  }
  const small = groups(results.ratios.filter((r) => r.shape === "small"));
  if (small.length > 0) {
    out.push("", "Small agent turns (text + 2 calls, about 2 KB of text and arguments; on the wire each 16-character delta is one SSE event): ratio per turn, and turns per CPU second:", "");
    out.push("| stream | wire size | baseline | push core | decodeStream | collectTurn |");
    out.push("|---|---|---|---|---|---|");
    for (const group of small) {
      const first = group[0] as RatioRow;
      const cell = (door: string): string => {
        const row = group.find((r) => r.door === door);
        return row ? `${x(row.ratio)} (${row.turnsPerSecond ?? 0}/s)` : "";
      };
      out.push(`| ${stream(first)} | ${size(first.wireBytes)} | ${ms(first.baselineMs)} (${first.baselineTurnsPerSecond ?? 0}/s) | ${cell("push")} | ${cell("decodeStream")} | ${cell("collectTurn")} |`);
    }
  }
  if (results.peers.length > 0) {
    out.push(
      "",
      `Other libraries on the same bytes, each in its own processes after toolwire's, with a CPU budget of ${results.peerBudgetMs / 1000} s per process; a library that spends it stops, and the row says how much of the stream it had read (its ratio is then a lower bound):`,
      "",
    );
    if (results.peerVersions) {
      out.push(`Versions: ${Object.entries(results.peerVersions).map(([name, version]) => `${name} ${version}`).join(", ")}.`, "");
    }
    out.push("| stream | size | library (door) | CPU per turn | ratio to baseline | stream read | processes |");
    out.push("|---|---|---|---|---|---|---|");
    for (const row of results.peers) {
      const label = results.peerLabels[row.peer] ?? row.peer;
      if (row.failed !== undefined) {
        out.push(`| ${stream(row)} | ${size(row.size)} | ${label} | failed: ${row.failed.replace(/\|/g, "\\|")} | | | ${row.processes} |`);
        continue;
      }
      const rate = row.turnsPerSecond !== undefined ? ` (${row.turnsPerSecond}/s)` : "";
      out.push(`| ${stream(row)} | ${size(row.size)} | ${label} | ${row.stopped ? "≥ " : ""}${ms(row.peerMs)}${rate} | ${row.stopped ? "≥ " : ""}${x(row.ratio)} | ${row.stopped ? `${(row.share * 100).toFixed(1)}% (budget spent)` : "100%"} | ${row.processes} |`);
    }
  }
  if (results.memory.length > 0) {
    out.push("", "Memory, one 1 MB call: peak of live data (heap growth sampled after a full collection at every chunk read, so that garbage awaiting collection does not count; retained: after a collection, with the result held):", "");
    out.push("| stream | door | peak heap growth | ratio to baseline | retained |");
    out.push("|---|---|---|---|---|");
    for (const row of results.memory) {
      out.push(`| ${stream(row)} | \`${row.door}\` | ${(row.peakBytes / 1024 / 1024).toFixed(1)} MB | ${x(row.ratio)} | ${(row.retainedBytes / 1024 / 1024).toFixed(1)} MB |`);
    }
  }
  const notes: string[] = [];
  if (results.stream50) {
    const s = results.stream50;
    notes.push(
      `- A ${s.megabytes} MB Anthropic stream of 2-character argument deltas through \`collectTurn\`: peak heap growth ${(s.peakBytes / 1024 / 1024).toFixed(1)} MB, ` +
        `${(s.retainedBytes / 1024 / 1024).toFixed(1)} MB retained (the ${(s.keptArgumentChars / 1024 / 1024).toFixed(1)} M characters of arguments the turn keeps), ` +
        `${((s.wireBytes / 1024 / 1024 / s.cpuMs) * 1000).toFixed(0)} MB of wire per CPU second.`,
    );
  }
  if (results.cold) notes.push(`- Cold \`import "toolwire"\` in a fresh process: ${ms(results.cold.cpuMs)} of CPU (median of ${results.cold.processes}).`);
  if (notes.length > 0) out.push("", ...notes);
  out.push("", "Doors (what each column measures):", "");
  for (const [door, label] of Object.entries(results.doors)) out.push(`- \`${door}\`: ${label}`);
  out.push("", "Targets:", "", ...targets(results));
  return out.join("\n");
}

export const BENCH_START = "<!-- bench:start (generated by `npm run bench:readme` from bench/results.json) -->";
export const BENCH_END = "<!-- bench:end -->";

/** The page (docs/performance.md) with its generated Performance block replaced. */
export function withBenchTable(readme: string, results: BenchResults): string {
  const start = readme.indexOf(BENCH_START);
  const end = readme.indexOf(BENCH_END);
  if (start < 0 || end < start) throw new Error(`docs/performance.md has no ${BENCH_START} … ${BENCH_END} block`);
  return `${readme.slice(0, start + BENCH_START.length)}\n${renderBench(results)}\n${readme.slice(end)}`;
}

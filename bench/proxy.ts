import { spawn, type ChildProcess } from "node:child_process";
import { appendFileSync, readFileSync } from "node:fs";
import { createServer, request } from "node:http";
import { fileURLToPath } from "node:url";
import { createByteDecoder } from "../src/adapters/bytes.js";
import { startProxy } from "../src/node/proxy.js";
import { createReencoder } from "../src/reencode/index.js";
import type { ProviderName } from "../src/types.js";
import { anthropicSseBody, anthropicTurnBody, bigArguments, chunkBytes, openaiChatSseBody, smallArguments } from "./fixtures.js";
import { cpuMs, cpuMsAsync, median } from "./cpu.js";
import { forwardingHandler } from "./forwarding-handler.js";
import { listening, printedUrl } from "./loopback.js";

/**
 * `node dist/bench/proxy.js [--quick] [--only cpu|latency|concurrent|memory]` (after `npm run
 * build`; `npm run bench` runs it with --quick at its end): what putting `toolwire proxy` in front
 * of a client costs, against a proxy built the same way that forwards bytes untouched (node:http
 * in front of the same upstream client, `createUpstreamFetch`: the cost of the hop alone).
 *
 * 1. cpu: one 1 MB tool call in 16-byte deltas, re-encoded in process (decode + split + hold +
 *    release), then over HTTP direct, through the byte-forwarding proxy and through toolwire
 *    proxy (CPU of the whole process: upstream, proxy, client). Target: toolwire proxy ≤ the
 *    forwarding proxy + the in-process re-encode + 10%.
 * 2. latency: text deltas, one every 2 ms, each stamped with its send time: the time each takes to
 *    reach the client through the forwarding proxy and through toolwire proxy. Target ≤ 1 ms added.
 * 3. concurrent: 500 streams of a tool-call turn at once (text then two calls, 16-byte deltas,
 *    paced), direct and through a toolwire proxy running as its own process (the CLI): p99 time per
 *    stream, and the proxy process's peak RSS. Target: p99 ≤ 1.5x direct, peak RSS ≤ 150 MB.
 * 4. memory: 160 MB of text deltas relayed by that proxy process: its peak RSS, which must not
 *    grow with the stream.
 *
 * CPU time, not wall time, where the machine is shared (1); wall time where latency is the
 * question (2, 3). Medians of several runs.
 */

const args = process.argv.slice(2);
const quick = args.includes("--quick");
const onlyAt = args.indexOf("--only");
const only = onlyAt >= 0 ? args[onlyAt + 1] : undefined;
const SIZE = 1024 * 1024;
const DELTA = 16;
const BIN = fileURLToPath(new URL("../src/cli/bin.js", import.meta.url));
const FORWARDING = fileURLToPath(new URL("./forwarding-proxy.js", import.meta.url));

/** Serves `chunks`: as fast as the client reads when `paceMs` is 0, else one chunk every `paceMs`. */
async function upstreamServer(chunks: Uint8Array[], paceMs = 0): Promise<{ url: string; close(): Promise<void> }> {
  const server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      let i = 0;
      const next = (): void => {
        while (i < chunks.length) {
          const chunk = chunks[i++] as Uint8Array;
          if (!res.write(chunk)) {
            res.once("drain", next);
            return;
          }
          if (paceMs > 0) {
            setTimeout(next, paceMs);
            return;
          }
        }
        res.end();
      };
      next();
    });
  });
  return listening(server);
}

/** The body cut after every `count` SSE events. */
function eventGroups(body: string, count: number): Uint8Array[] {
  const events = body.split("\n\n").filter((event) => event !== "");
  const out: Uint8Array[] = [];
  for (let i = 0; i < events.length; i += count) out.push(new TextEncoder().encode(`${events.slice(i, i + count).join("\n\n")}\n\n`));
  return out;
}

/** A proxy that forwards request and response bytes untouched, built as `toolwire proxy` is (bench/forwarding-handler.ts). */
async function passThroughProxy(upstream: string): Promise<{ url: string; close(): Promise<void> }> {
  const server = createServer(forwardingHandler(upstream));
  return listening(server);
}

async function readAndDecode(url: string, provider: ProviderName): Promise<number> {
  const response = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
  const decoder = createByteDecoder(provider);
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    decoder.push(value);
  }
  return decoder.finish().toolCalls.filter((call) => call.arguments !== null).length;
}

function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] as number;
}

async function cpu(): Promise<void> {
  const runs = quick ? 5 : 9;
  console.log(`\n1. CPU: one ${SIZE / 1024} KB call in ${DELTA}-byte deltas (CPU ms of the process, median of ${runs})`);
  for (const provider of ["anthropic", "openai-chat"] as const) {
    const body = provider === "anthropic" ? anthropicSseBody(bigArguments(SIZE), DELTA) : openaiChatSseBody(bigArguments(SIZE), DELTA);
    const chunks = chunkBytes(body);
    const decodeOnly = (): void => {
      const decoder = createByteDecoder(provider);
      for (const chunk of chunks) decoder.push(chunk);
      if (decoder.finish().toolCalls[0]?.arguments === null) throw new Error("bench stream did not decode");
    };
    const reencodeOnly = (): void => {
      // As the proxy runs it: the decoder keeps no text.
      const reencoder = createReencoder(provider, { retainText: false });
      let bytes = 0;
      for (const chunk of chunks) for (const piece of reencoder.push(chunk)) bytes += piece.length;
      for (const piece of reencoder.flush()) bytes += piece.length;
      if (bytes === 0) throw new Error("nothing re-encoded");
    };
    for (let i = 0; i < 5; i++) {
      decodeOnly();
      reencodeOnly();
    }
    const decode: number[] = [];
    const reencode: number[] = [];
    for (let i = 0; i < runs; i++) {
      decode.push(cpuMs(decodeOnly));
      reencode.push(cpuMs(reencodeOnly));
    }
    const upstream = await upstreamServer(chunks);
    const pipe = await passThroughProxy(upstream.url);
    const proxy = await startProxy({ upstream: upstream.url });
    const path = provider === "anthropic" ? "/v1/messages" : "/v1/chat/completions";
    const routes = { direct: upstream.url, pipe: pipe.url, toolwire: proxy.url };
    const times: Record<keyof typeof routes, number[]> = { direct: [], pipe: [], toolwire: [] };
    for (let i = 0; i < 3; i++) for (const url of Object.values(routes)) await readAndDecode(`${url}${path}`, provider);
    for (let i = 0; i < runs; i++) {
      for (const [route, url] of Object.entries(routes) as Array<[keyof typeof routes, string]>) {
        times[route].push(await cpuMsAsync(async () => void (await readAndDecode(`${url}${path}`, provider))));
      }
    }
    await proxy.close();
    await pipe.close();
    // The same, each proxy in a process of its own (as it runs in production): the client's decoder
    // and the proxy's re-encoder no longer share the JIT's type feedback (see docs/proxy.md).
    const own = { pipe: await proxyProcess(upstream.url, "forwarding"), toolwire: await proxyProcess(upstream.url, "toolwire") };
    const split: Record<"pipe" | "toolwire", number[]> = { pipe: [], toolwire: [] };
    for (let i = 0; i < 3; i++) for (const child of Object.values(own)) await readAndDecode(`${child.url}${path}`, provider);
    for (let i = 0; i < runs; i++) {
      for (const [route, child] of Object.entries(own) as Array<["pipe" | "toolwire", (typeof own)["pipe"]]>) {
        const before = await child.cpuMs();
        const here = await cpuMsAsync(async () => void (await readAndDecode(`${child.url}${path}`, provider)));
        split[route].push(here + (await child.cpuMs()) - before);
      }
    }
    await own.pipe.stop();
    await own.toolwire.stop();
    await upstream.close();
    const d = median(decode);
    const r = median(reencode);
    const direct = median(times.direct);
    const forwarding = median(times.pipe);
    const toolwire = median(times.toolwire);
    const budget = forwarding + r;
    const share = (ms: number): string => `${ms >= direct ? "+" : ""}${(((ms - direct) / direct) * 100).toFixed(0)}%`;
    console.log(`   ${provider.padEnd(12)} in process: decode ${d.toFixed(1)} ms, re-encode ${r.toFixed(1)} ms (${(((r - d) / d) * 100).toFixed(0)}% over the decode)`);
    console.log(`   ${"".padEnd(12)} over HTTP: direct ${direct.toFixed(1)} ms, byte-forwarding proxy ${forwarding.toFixed(1)} ms (${share(forwarding)}), toolwire proxy ${toolwire.toFixed(1)} ms (${share(toolwire)})`);
    console.log(`   ${"".padEnd(12)} one process: toolwire proxy vs forwarding + in-process re-encode (${budget.toFixed(1)} ms): ${toolwire <= budget ? "" : "+"}${(toolwire - budget).toFixed(1)} ms = ${(((toolwire - budget) / budget) * 100).toFixed(1)}%`);
    const ownPipe = median(split.pipe);
    const ownToolwire = median(split.toolwire);
    const ownBudget = ownPipe + r;
    console.log(
      `   ${"".padEnd(12)} proxies in their own process: forwarding ${ownPipe.toFixed(1)} ms, toolwire ${ownToolwire.toFixed(1)} ms; vs forwarding + in-process re-encode (${ownBudget.toFixed(1)} ms): ${ownToolwire <= ownBudget ? "" : "+"}${(ownToolwire - ownBudget).toFixed(1)} ms = ${(((ownToolwire - ownBudget) / ownBudget) * 100).toFixed(1)}% (target ≤ +10%: ${ownToolwire <= ownBudget * 1.1 ? "met" : "NOT met"})`,
    );
  }
}

async function latency(): Promise<void> {
  const COUNT = quick ? 200 : 500;
  console.log(`\n2. Text-delta latency: ${COUNT} Chat text deltas, one every 2 ms, each stamped with its send time (ms, wall)`);
  const server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      let sent = 0;
      const timer = setInterval(() => {
        if (sent++ < COUNT) res.write(`data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"t=${performance.now().toFixed(3)};"},"finish_reason":null}]}\n\n`);
        else {
          clearInterval(timer);
          res.end(`data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n`);
        }
      }, 2);
    });
  });
  const upstream = await listening(server);
  const pipe = await passThroughProxy(upstream.url);
  const proxy = await startProxy({ upstream: upstream.url });
  const delays = async (base: string): Promise<number[]> => {
    const response = await fetch(`${base}/v1/chat/completions`, { method: "POST", headers: { "content-type": "application/json" }, body: '{"stream":true}' });
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    const decoder = new TextDecoder();
    const out: number[] = [];
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      const now = performance.now();
      for (const match of decoder.decode(value, { stream: true }).matchAll(/t=(\d+\.\d+);/g)) out.push(now - Number(match[1]));
    }
    return out;
  };
  const rows: Record<"direct" | "pipe" | "toolwire", number[]> = { direct: [], pipe: [], toolwire: [] };
  for (let i = 0; i < (quick ? 2 : 3); i++) {
    rows.direct.push(...(await delays(upstream.url)));
    rows.pipe.push(...(await delays(pipe.url)));
    rows.toolwire.push(...(await delays(proxy.url)));
  }
  await proxy.close();
  await pipe.close();
  await upstream.close();
  const line = (name: string, values: number[]): string => `${name} median ${median(values).toFixed(2)}, p99 ${percentile(values, 99).toFixed(2)}`;
  console.log(`   ${line("direct", rows.direct)}; ${line("byte-forwarding proxy", rows.pipe)}; ${line("toolwire proxy", rows.toolwire)}`);
  const added = median(rows.toolwire) - median(rows.pipe);
  console.log(`   toolwire proxy adds ${added.toFixed(2)} ms (median) over the forwarding proxy (target ≤ 1 ms: ${added <= 1 ? "met" : "NOT met"})`);
}

/** A proxy in a process of its own (the CLI, or the byte-forwarding one): its URL, its process, its CPU time so far, a stop. */
async function proxyProcess(upstream: string, kind: "toolwire" | "forwarding" = "toolwire", flags: readonly string[] = []): Promise<{ url: string; child: ChildProcess; cpuMs(): Promise<number>; stop(): Promise<void> }> {
  // Node flags for the proxy processes alone (e.g. "--trace-gc" or "--cpu-prof"), to study them under load.
  const nodeFlags = (process.env.TOOLWIRE_BENCH_PROXY_NODE_FLAGS ?? "").split(" ").filter(Boolean);
  const argv = [...nodeFlags, ...flags, ...(kind === "toolwire" ? [BIN, "proxy", "--upstream", upstream] : [FORWARDING, upstream])];
  const child = spawn(process.execPath, argv, { stdio: ["ignore", "pipe", "ignore"] });
  const log = process.env.TOOLWIRE_BENCH_PROXY_LOG;
  if (log) child.stdout?.on("data", (data: Buffer) => appendFileSync(`${log}.${kind}`, data));
  const url = await printedUrl(child, () => "the proxy process exited");
  return {
    url,
    child,
    cpuMs: async () => {
      if (kind === "forwarding") return ((await (await fetch(`${url}/__cpu`)).json()) as { ms: number }).ms;
      const metrics = await (await fetch(`${url}/metrics`)).text();
      return Number(/^process_cpu_seconds_total (\S+)$/m.exec(metrics)?.[1]) * 1000;
    },
    stop: async () => {
      const exited = new Promise((resolve) => child.on("exit", resolve));
      child.kill("SIGTERM");
      await exited;
    },
  };
}

/** Peak resident set of a process (Linux: VmHWM), in MB; NaN elsewhere. */
function peakRssMb(pid: number | undefined): number {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    return Number(/VmHWM:\s+(\d+) kB/.exec(status)?.[1]) / 1024;
  } catch {
    return Number.NaN;
  }
}

/** A streamed request through `base` read to its end with node:http (no decoding), in ms of wall time. */
function timedStream(base: string, path: string): Promise<number> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const req = request(`${base}${path}`, { method: "POST", headers: { "content-type": "application/json" }, agent: false }, (res) => {
      res.on("data", () => {});
      res.on("end", () => resolve(performance.now() - started));
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end('{"stream":true}');
  });
}

/**
 * The heap settings docs/proxy.md offers operators who bound the proxy's memory: a young generation
 * of at most 8 MB per semi-space (V8 grows it to 16 MB when the machine is quiet) and an old
 * generation let grow 20% past its live data before a collection, instead of up to 4x.
 */
const LEAN_HEAP = ["--max-semi-space-size=8", "--heap-growing-percent=20"];

async function concurrent(): Promise<void> {
  const COUNT = 500;
  const turn = anthropicTurnBody(
    "I will read both files and then write the summary. ".repeat(8),
    [
      { id: "toolu_1", name: "read_file", argumentsText: smallArguments(2048, 1) },
      { id: "toolu_2", name: "read_file", argumentsText: smallArguments(2048, 2) },
    ],
    DELTA,
  );
  const groups = eventGroups(turn, 10);
  console.log(`\n3. ${COUNT} concurrent streams of a tool-call turn (Anthropic: text, two 2 KB calls, ${DELTA}-byte deltas: ${groups.length} writes of 10 events, one every 10 ms), direct and through toolwire proxy as its own process (ms, wall)`);
  const upstream = await upstreamServer(groups, 10);
  const run = async (base: string): Promise<number[]> => Promise.all(Array.from({ length: COUNT }, () => timedStream(base, "/v1/messages")));
  const through = async (kind: "toolwire" | "forwarding", flags: readonly string[] = []): Promise<{ times: number[]; peak: number; cpu: number }> => {
    const proxy = await proxyProcess(upstream.url, kind, flags);
    try {
      await run(proxy.url);
      const before = await proxy.cpuMs();
      const times = await run(proxy.url);
      return { times, peak: peakRssMb(proxy.child.pid), cpu: (await proxy.cpuMs()) - before };
    } finally {
      await proxy.stop();
    }
  };
  try {
    await run(upstream.url);
    const direct = await run(upstream.url);
    const forwarding = await through("forwarding");
    const toolwire = await through("toolwire");
    const lean = await through("toolwire", LEAN_HEAP);
    const p = (values: number[], at: number): string => percentile(values, at).toFixed(0);
    const ratio = percentile(toolwire.times, 99) / percentile(direct, 99);
    console.log(`   direct: p50 ${p(direct, 50)}, p99 ${p(direct, 99)}; byte-forwarding proxy: p50 ${p(forwarding.times, 50)}, p99 ${p(forwarding.times, 99)} (${(percentile(forwarding.times, 99) / percentile(direct, 99)).toFixed(2)}x)`);
    console.log(`   toolwire proxy: p50 ${p(toolwire.times, 50)}, p99 ${p(toolwire.times, 99)} (${ratio.toFixed(2)}x direct; target ≤ 1.5x: ${ratio <= 1.5 ? "met" : "NOT met"})`);
    console.log(`   CPU of the proxy process for the ${COUNT} streams: byte-forwarding ${forwarding.cpu.toFixed(0)} ms, toolwire ${toolwire.cpu.toFixed(0)} ms`);
    console.log(`   peak RSS of the proxy process: byte-forwarding ${forwarding.peak.toFixed(0)} MB, toolwire ${toolwire.peak.toFixed(0)} MB (target ≤ 150 MB: ${toolwire.peak <= 150 ? "met" : "NOT met"})`);
    const leanRatio = percentile(lean.times, 99) / percentile(direct, 99);
    console.log(`   toolwire proxy, NODE_OPTIONS="${LEAN_HEAP.join(" ")}": p50 ${p(lean.times, 50)}, p99 ${p(lean.times, 99)} (${leanRatio.toFixed(2)}x direct), peak RSS ${lean.peak.toFixed(0)} MB (target ≤ 150 MB: ${lean.peak <= 150 ? "met" : "NOT met"})`);
  } finally {
    await upstream.close();
  }
}

async function memory(): Promise<void> {
  const TOTAL = (quick ? 64 : 160) * 1024 * 1024;
  console.log(`\n4. Relay memory: ${TOTAL / 1024 / 1024} MB of Anthropic text deltas through toolwire proxy as its own process`);
  const delta = `event: content_block_delta\ndata: ${JSON.stringify({ type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "lorem ipsum dolor sit amet, ".repeat(4) } })}\n\n`;
  const block = Buffer.from(delta.repeat(Math.floor((64 * 1024) / delta.length)));
  const head = `event: message_start\ndata: {"type":"message_start","message":{"id":"m","type":"message","role":"assistant","model":"x","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":1,"output_tokens":1}}}\n\nevent: content_block_start\ndata: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}\n\n`;
  const tail = `event: content_block_stop\ndata: {"type":"content_block_stop","index":0}\n\nevent: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":1}}\n\nevent: message_stop\ndata: {"type":"message_stop"}\n\n`;
  const server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write(head);
      let sent = 0;
      const next = (): void => {
        while (sent < TOTAL) {
          sent += block.length;
          if (!res.write(block)) {
            res.once("drain", next);
            return;
          }
        }
        res.end(tail);
      };
      next();
    });
  });
  const upstream = await listening(server);
  const proxy = await proxyProcess(upstream.url);
  try {
    const start = peakRssMb(proxy.child.pid);
    await timedStream(proxy.url, "/v1/messages");
    const idle = peakRssMb(proxy.child.pid);
    const started = performance.now();
    await timedStream(proxy.url, "/v1/messages");
    const peak = peakRssMb(proxy.child.pid);
    console.log(`   proxy process peak RSS ${peak.toFixed(0)} MB after relaying ${TOTAL / 1024 / 1024} MB twice (${idle.toFixed(0)} MB after the first time, ${start.toFixed(0)} MB at start); ${((TOTAL / 1024 / 1024 / (performance.now() - started)) * 1000).toFixed(0)} MB/s`);
  } finally {
    await proxy.stop();
    await upstream.close();
  }
}

if (!only || only === "cpu") await cpu();
if (!only || only === "latency") await latency();
if (!only || only === "concurrent") await concurrent();
if (!only || only === "memory") await memory();

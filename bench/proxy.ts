import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createByteDecoder } from "../src/adapters/bytes.js";
import { forwardBody } from "../src/node/forward-body.js";
import { startProxy } from "../src/node/proxy.js";
import { createReencoder } from "../src/reencode/index.js";
import type { ProviderName } from "../src/types.js";
import { anthropicSseBody, bigArguments, chunkBytes, openaiChatSseBody } from "./fixtures.js";
import { cpuMs, cpuMsAsync, median } from "./cpu.js";

/**
 * `node dist/bench/proxy.js` (after `npm run build`): what putting toolwire in front of a client costs.
 *
 * 1. Re-encoding, in process: one 1 MB tool call in 16-byte deltas (the bench's standard stream),
 *    decoded by toolwire (what any toolwire user pays) and re-encoded (decode + split into raw
 *    events + hold/forward). The proxy overhead is the difference, as a share of the decode.
 * 2. Through HTTP: the same stream from a local upstream, read by a client that decodes it, direct,
 *    through a proxy built the same way that forwards the bytes untouched (node:http in front of
 *    the global fetch: the cost of the hop alone), and through `toolwire proxy`: CPU time of the
 *    whole process (upstream, proxy and client).
 * 3. 100 concurrent streams held open through the proxy (paced upstream), all checked.
 *
 * CPU time, not wall time: the machine is shared. Medians of several runs.
 */

const SIZE = 1024 * 1024;
const DELTA = 16;

const bodies: Record<"anthropic" | "openai-chat", string> = {
  anthropic: anthropicSseBody(bigArguments(SIZE), DELTA),
  "openai-chat": openaiChatSseBody(bigArguments(SIZE), DELTA),
};

function decodeOnly(provider: ProviderName, chunks: Uint8Array[]): void {
  const decoder = createByteDecoder(provider);
  for (const chunk of chunks) decoder.push(chunk);
  const turn = decoder.finish();
  if (turn.toolCalls[0]?.arguments === null) throw new Error("bench stream did not decode");
}

function reencodeOnly(provider: ProviderName, chunks: Uint8Array[]): void {
  const reencoder = createReencoder(provider);
  let bytes = 0;
  for (const chunk of chunks) for (const piece of reencoder.push(chunk)) bytes += piece.length;
  for (const piece of reencoder.end()) bytes += piece.length;
  if (bytes === 0) throw new Error("nothing re-encoded");
}

function inProcess(): void {
  console.log(`\n1. Re-encoding in process: one ${SIZE / 1024} KB call, ${DELTA}-byte deltas (CPU ms, median of 15)`);
  for (const provider of ["anthropic", "openai-chat"] as const) {
    const chunks = chunkBytes(bodies[provider]);
    for (let i = 0; i < 5; i++) {
      decodeOnly(provider, chunks);
      reencodeOnly(provider, chunks);
    }
    const decode: number[] = [];
    const reencode: number[] = [];
    for (let i = 0; i < 15; i++) {
      decode.push(cpuMs(() => decodeOnly(provider, chunks)));
      reencode.push(cpuMs(() => reencodeOnly(provider, chunks)));
    }
    const d = median(decode);
    const r = median(reencode);
    console.log(`   ${provider.padEnd(12)} decode ${d.toFixed(1)} ms   re-encode ${r.toFixed(1)} ms   overhead ${(r - d).toFixed(1)} ms = ${(((r - d) / d) * 100).toFixed(1)}% of the decode`);
  }
}

/** `server` listening on a free loopback port: its URL, and a close that ends open connections. */
async function listening(server: Server): Promise<{ url: string; close(): Promise<void> }> {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * Serves `body`: whole when `paceMs` is 0, else its events a few at a time every `paceMs` (so that
 * many streams are open at once). Counts the responses open at the same time.
 */
async function upstreamServer(body: string, paceMs = 0): Promise<{ url: string; close(): Promise<void>; maxOpen: () => number }> {
  const chunks = paceMs === 0 ? chunkBytes(body) : eventGroups(body, 10);
  let open = 0;
  let maxOpen = 0;
  const server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      open++;
      maxOpen = Math.max(maxOpen, open);
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
        open--;
        res.end();
      };
      next();
    });
  });
  return { ...(await listening(server)), maxOpen: () => maxOpen };
}

/** The body cut after every `count` SSE events. */
function eventGroups(body: string, count: number): Uint8Array[] {
  const events = body.split("\n\n").filter((event) => event !== "");
  const out: Uint8Array[] = [];
  for (let i = 0; i < events.length; i += count) out.push(new TextEncoder().encode(`${events.slice(i, i + count).join("\n\n")}\n\n`));
  return out;
}

/**
 * A proxy that forwards request and response bytes untouched, built as `toolwire proxy` is
 * (node:http in front of the global fetch): what the HTTP hop costs without toolwire.
 */
async function passThroughProxy(upstream: string): Promise<{ url: string; close(): Promise<void> }> {
  const server = createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on("data", (part: Buffer) => parts.push(part));
    req.on("end", () => {
      void (async () => {
        const response = await fetch(`${upstream}${req.url ?? "/"}`, { method: req.method, headers: { "content-type": "application/json" }, body: Buffer.concat(parts) });
        res.writeHead(response.status, { "content-type": response.headers.get("content-type") ?? "application/octet-stream" });
        await forwardBody(response.body as ReadableStream<Uint8Array>, res);
        res.end();
      })();
    });
  });
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

async function overHttp(): Promise<void> {
  console.log(`\n2. Through HTTP: the same stream read and decoded by a client, direct, through a byte-forwarding proxy, and through toolwire proxy (CPU ms of the process, median of 9)`);
  for (const provider of ["anthropic", "openai-chat"] as const) {
    const upstream = await upstreamServer(bodies[provider]);
    const pipe = await passThroughProxy(upstream.url);
    const proxy = await startProxy({ upstream: upstream.url });
    const path = provider === "anthropic" ? "/v1/messages" : "/v1/chat/completions";
    const routes = { direct: upstream.url, pipe: pipe.url, toolwire: proxy.url };
    const times: Record<keyof typeof routes, number[]> = { direct: [], pipe: [], toolwire: [] };
    for (let i = 0; i < 3; i++) for (const url of Object.values(routes)) await readAndDecode(`${url}${path}`, provider);
    for (let i = 0; i < 9; i++) {
      for (const [route, url] of Object.entries(routes) as Array<[keyof typeof routes, string]>) {
        times[route].push(await cpuMsAsync(async () => void (await readAndDecode(`${url}${path}`, provider))));
      }
    }
    const d = median(times.direct);
    const b = median(times.pipe);
    const p = median(times.toolwire);
    const share = (ms: number): string => `${(((ms - d) / d) * 100).toFixed(0)}%`;
    console.log(
      `   ${provider.padEnd(12)} direct ${d.toFixed(1)} ms   byte-forwarding proxy ${b.toFixed(1)} ms (+${share(b)})   toolwire proxy ${p.toFixed(1)} ms (+${share(p)}; ${(p - b).toFixed(1)} ms more than forwarding)`,
    );
    await proxy.close();
    await pipe.close();
    await upstream.close();
  }
}

async function concurrent(): Promise<void> {
  const COUNT = 100;
  const body = openaiChatSseBody(bigArguments(8 * 1024), DELTA);
  const groups = eventGroups(body, 10).length;
  console.log(`\n3. ${COUNT} concurrent Chat streams (one 8 KB call in ${DELTA}-byte deltas, sent 10 events every 10 ms: ${groups} writes, about ${(groups * 10) / 1000} s each) through toolwire proxy`);
  const upstream = await upstreamServer(body, 10);
  const proxy = await startProxy({ upstream: upstream.url });
  const started = performance.now();
  const cpu = await cpuMsAsync(async () => {
    const results = await Promise.all(Array.from({ length: COUNT }, () => readAndDecode(`${proxy.url}/v1/chat/completions`, "openai-chat")));
    const good = results.filter((calls) => calls === 1).length;
    if (good !== COUNT) throw new Error(`only ${good} of ${COUNT} streams gave their call`);
  });
  console.log(
    `   all ${COUNT} complete with their call; ${upstream.maxOpen()} open upstream at the same time; ${(performance.now() - started).toFixed(0)} ms wall, ${cpu.toFixed(0)} ms CPU, process RSS ${(process.memoryUsage().rss / 1024 / 1024).toFixed(0)} MB`,
  );
  await proxy.close();
  await upstream.close();
}

inProcess();
await overHttp();
await concurrent();

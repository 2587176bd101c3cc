// The page's script: the core, bundled for the browser, decodes the replay server's streams with
// fetch, replays their records through the push core, records one, and times one out. It posts
// what it got back to the test, which compares it with the same work done in Node.
import { collectTurn, parseRecords, record, replayEvents, type DecodedTurn, type ProviderName } from "../../src/index.js";

export interface BrowserJob {
  key: string;
  provider: ProviderName;
  /** Path (and query) of the replay route to POST to. */
  path: string;
  sequence: string | null;
  framing?: "aws-eventstream";
}

export interface BrowserResult {
  userAgent: string;
  fetched: Record<string, DecodedTurn>;
  replayed: Record<string, DecodedTurn>;
  recorded: { key: string; text: string; turn: DecodedTurn } | null;
  timedOut: DecodedTurn | null;
}

async function run(): Promise<BrowserResult> {
  const jobs = (await (await fetch("/jobs")).json()) as BrowserJob[];
  const result: BrowserResult = { userAgent: navigator.userAgent, fetched: {}, replayed: {}, recorded: null, timedOut: null };
  for (const job of jobs) {
    const init = { method: "POST", headers: { "x-toolwire-stream": job.key, "content-type": "application/json" }, body: JSON.stringify({ stream: true }) };
    const options = { sequence: job.sequence, ...(job.framing ? { framing: job.framing } : {}) };
    result.fetched[`${job.path} ${job.key}`] = await collectTurn(job.provider, await fetch(job.path, init), options);
    if (!(job.key in result.replayed)) {
      const records = await (await fetch(`/records?key=${encodeURIComponent(job.key)}`)).text();
      const [stream] = parseRecords(records);
      if (stream) result.replayed[job.key] = replayEvents(stream, { provider: job.provider });
    }
  }
  const first = jobs[0];
  if (first) {
    let text = "";
    const sink = new WritableStream<string>({
      write(chunk) {
        text += chunk;
      },
    });
    const response = await fetch(first.path, { method: "POST", headers: { "x-toolwire-stream": first.key }, body: JSON.stringify({ stream: true }) });
    const turn = await collectTurn(first.provider, record(response, sink, { sequence: first.sequence }));
    result.recorded = { key: first.key, text, turn };
  }
  // A paced stream that stalls: the watchdog's timers and AbortSignal are the browser's own.
  const stalled = await fetch("/v1/messages?pace=1", { method: "POST", headers: { "x-toolwire-stream": "stalls" }, body: JSON.stringify({ stream: true }) });
  result.timedOut = await collectTurn("anthropic", stalled, { idleTimeoutMs: 150, signal: new AbortController().signal });
  return result;
}

async function report(body: unknown): Promise<void> {
  await fetch("/result", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
}

window.addEventListener("error", (event) => void report({ error: `${event.message} at ${event.filename}:${event.lineno}` }));
window.addEventListener("unhandledrejection", (event) => void report({ error: String((event.reason as Error)?.stack ?? event.reason) }));
run().then(
  (result) => report({ result }),
  (error: unknown) => report({ error: String((error as Error)?.stack ?? error) }),
);

/**
 * The proxy's metrics in the Prometheus text format (version 0.0.4), served at `GET /metrics`:
 * counters, one gauge and two histograms, with label sets bounded by the configuration (routes,
 * protocols, statuses, repair codes), never by request content.
 */

type Labels = Record<string, string>;

function escapeLabel(value: string): string {
  return value.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n");
}

function labelText(labels: Labels, extra?: [string, string]): string {
  const entries = Object.entries(labels);
  if (extra) entries.push(extra);
  return entries.length === 0 ? "" : `{${entries.map(([name, value]) => `${name}="${escapeLabel(value)}"`).join(",")}}`;
}

function keyOf(labels: Labels): string {
  // Label values are bounded names (routes, protocols, codes): joined with a separator they cannot contain.
  let key = "";
  for (const name in labels) key += `${name}\u0000${labels[name]}\u0001`;
  return key;
}

class Counter {
  readonly values = new Map<string, { labels: Labels; value: number }>();
  constructor(
    readonly name: string,
    readonly help: string,
    readonly type: "counter" | "gauge" = "counter",
  ) {}
  add(labels: Labels, by = 1): void {
    const key = keyOf(labels);
    const entry = this.values.get(key);
    if (entry) entry.value += by;
    else this.values.set(key, { labels, value: by });
  }
  get(labels: Labels): number {
    return this.values.get(keyOf(labels))?.value ?? 0;
  }
  render(): string {
    let out = `# HELP ${this.name} ${this.help}\n# TYPE ${this.name} ${this.type}\n`;
    for (const { labels, value } of this.values.values()) out += `${this.name}${labelText(labels)} ${value}\n`;
    return out;
  }
}

/** Seconds; from 5 ms (a JSON answer) to 5 min (a long streamed turn). */
const BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];

class Histogram {
  readonly values = new Map<string, { labels: Labels; counts: number[]; sum: number; count: number }>();
  constructor(
    readonly name: string,
    readonly help: string,
  ) {}
  observe(labels: Labels, seconds: number): void {
    const key = keyOf(labels);
    let entry = this.values.get(key);
    if (!entry) {
      entry = { labels, counts: BUCKETS.map(() => 0), sum: 0, count: 0 };
      this.values.set(key, entry);
    }
    for (let i = 0; i < BUCKETS.length; i++) if (seconds <= (BUCKETS[i] as number)) (entry.counts[i] as number)++;
    entry.sum += seconds;
    entry.count++;
  }
  render(): string {
    let out = `# HELP ${this.name} ${this.help}\n# TYPE ${this.name} histogram\n`;
    for (const { labels, counts, sum, count } of this.values.values()) {
      BUCKETS.forEach((bound, i) => (out += `${this.name}_bucket${labelText(labels, ["le", String(bound)])} ${counts[i]}\n`));
      out += `${this.name}_bucket${labelText(labels, ["le", "+Inf"])} ${count}\n`;
      out += `${this.name}_sum${labelText(labels)} ${sum}\n${this.name}_count${labelText(labels)} ${count}\n`;
    }
    return out;
  }
}

/** Every metric `toolwire proxy` exports; names documented in docs/proxy.md. */
export class ProxyMetrics {
  readonly requests = new Counter("toolwire_proxy_requests_total", "Requests answered, by route, protocol and HTTP status (499: the client went away before the response's headers).");
  readonly repairs = new Counter("toolwire_proxy_repairs_total", "Repairs and decisions reported, by route, protocol, code and action (repaired, withheld, retried, classified).");
  readonly withheld = new Counter("toolwire_proxy_withheld_calls_total", "Tool calls withheld from the client (cut or invalid), by route, protocol and code.");
  readonly upstreamErrors = new Counter("toolwire_proxy_upstream_errors_total", "Upstream failures, by route and kind: request_failed (no response: connect, DNS, TLS, reset), response_cut (the body failed mid-way).");
  readonly clientAborts = new Counter("toolwire_proxy_client_aborts_total", "Requests the client abandoned before the response ended (the upstream request is cancelled), by route.");
  readonly refused = new Counter("toolwire_proxy_refused_total", "Requests the proxy refused itself, by reason (host, duplicate_host, transfer_coding, target, body_too_large, no_route, draining).");
  readonly streamsOpen = new Counter("toolwire_proxy_streams_open", "Responses being relayed to a client right now, by route.", "gauge");
  readonly inFlight = new Counter("toolwire_proxy_requests_in_flight", "Requests in progress right now.", "gauge");
  readonly ttfb = new Histogram("toolwire_proxy_time_to_first_byte_seconds", "From the request's arrival to the first byte of the response body written to the client (the headers, for a response without a body), by route.");
  readonly duration = new Histogram("toolwire_proxy_request_duration_seconds", "From the request's arrival to the end of the response, by route.");

  constructor() {
    this.inFlight.add({}, 0);
  }

  /** The exposition text for `GET /metrics`: the proxy's metrics, then the process's (CPU, resident memory, start time: the standard names). */
  render(): string {
    const cpu = process.cpuUsage();
    const started = Math.round(Date.now() / 1000 - process.uptime());
    const own = [this.requests, this.repairs, this.withheld, this.upstreamErrors, this.clientAborts, this.refused, this.streamsOpen, this.inFlight, this.ttfb, this.duration].map((metric) => metric.render()).join("");
    return (
      own +
      `# HELP process_cpu_seconds_total Total user and system CPU time spent in seconds.\n# TYPE process_cpu_seconds_total counter\nprocess_cpu_seconds_total ${(cpu.user + cpu.system) / 1e6}\n` +
      `# HELP process_resident_memory_bytes Resident memory size in bytes.\n# TYPE process_resident_memory_bytes gauge\nprocess_resident_memory_bytes ${process.memoryUsage.rss()}\n` +
      `# HELP process_start_time_seconds Start time of the process since unix epoch in seconds.\n# TYPE process_start_time_seconds gauge\nprocess_start_time_seconds ${started}\n`
    );
  }
}

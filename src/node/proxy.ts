import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { ToolwireError } from "../errors.js";
import { createRepairingFetch, type FetchLike, type RepairingFetchOptions } from "../fetch/index.js";
import { forwardBody } from "./forward-body.js";
import type { RepairReport } from "../reencode/types.js";
import type { ProviderName } from "../types.js";

/**
 * `toolwire proxy`: the repairing fetch as a local HTTP server, for clients in any language.
 * Point the client's base URL at it (`http://127.0.0.1:<port>`); every request is forwarded to
 * `upstream` + the request's path and query, through `createRepairingFetch`.
 *
 * - Headers pass through untouched (authentication included) except hop-by-hop ones; they are
 *   never logged or recorded. `accept-encoding` is not forwarded: the proxy reads the body.
 * - A client that disconnects cancels the upstream request.
 * - One log line per request: method, path, protocol, status, time and the repair codes.
 * - `x-toolwire-repairs` on the response lists the codes of the request-side repairs and
 *   recoveries, and those of a non-streamed JSON response (repaired whole before the headers go
 *   out); on streamed responses the trailer of the same name adds the codes of the stream's repairs.
 */
export interface ProxyOptions {
  /** The provider's base URL, e.g. `https://api.anthropic.com`. */
  upstream: string;
  /** 0 (default) picks a free port. */
  port?: number;
  /** Interface to bind (default 127.0.0.1: loopback only). */
  host?: string;
  /** The protocol of every request (default: from each request's path). */
  provider?: ProviderName;
  /** Schema target for tools (default: from the upstream host, else from the protocol). */
  target?: string;
  repairs?: RepairingFetchOptions["repairs"];
  /** One line per request (default: none). Never given headers. */
  log?: (line: string) => void;
  /** Every repair of every request. */
  onRepair?: (report: RepairReport, request: { method: string; path: string }) => void;
  /** The fetch used upstream (default: the global fetch). */
  fetch?: FetchLike;
}

/** A running `toolwire proxy` server on loopback (from `startProxy`). */
export interface ProxyServer {
  readonly url: string;
  readonly port: number;
  close(): Promise<void>;
}

const HOP_BY_HOP = new Set(["connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "te", "trailer", "transfer-encoding", "upgrade", "host", "content-length", "accept-encoding"]);
const RESPONSE_DROP = new Set(["connection", "keep-alive", "transfer-encoding", "content-length", "content-encoding", "trailer", "upgrade"]);

function isLoopback(host: string): boolean {
  return host === "127.0.0.1" || host === "localhost" || host === "::1";
}

function hostName(header: string | undefined): string {
  return (header ?? "").replace(/:\d+$/, "").replace(/^\[|\]$/g, "").toLowerCase();
}

/** The codes of a list of reports, each once, for a header or a log line. */
export function repairSummary(reports: readonly RepairReport[]): string {
  return [...new Set(reports.map((report) => `${report.action === "withheld" ? "withheld:" : ""}${report.code}`))].join(",");
}

/**
 * The proxy's request handler on its own, to mount in an existing Node HTTP server; throws a
 * ToolwireError (`invalid_upstream`) for an upstream that is not an absolute URL.
 */
export function createProxyHandler(options: ProxyOptions): (req: IncomingMessage, res: ServerResponse) => void {
  let upstream: URL;
  try {
    upstream = new URL(options.upstream);
  } catch {
    throw new ToolwireError("invalid_upstream", `the upstream must be an absolute URL, got '${options.upstream}'`);
  }
  const base = upstream.href.replace(/\/+$/, "");
  const bound = options.host ?? "127.0.0.1";

  return (req, res) => {
    const started = performance.now();
    const method = req.method ?? "GET";
    const path = req.url ?? "/";
    if (isLoopback(bound) && !isLoopback(hostName(req.headers.host))) {
      // A page on another origin that rebinds its DNS to 127.0.0.1 must not reach the provider with the user's keys.
      res.writeHead(403, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: { type: "permission_error", message: "toolwire proxy answers loopback names only" } }));
      return;
    }
    const reports: RepairReport[] = [];
    const controller = new AbortController();
    let finished = false;
    res.on("close", () => {
      if (!finished) controller.abort();
    });
    const repairingFetch = createRepairingFetch({
      ...(options.fetch ? { fetch: options.fetch } : {}),
      ...(options.provider ? { provider: options.provider } : {}),
      ...(options.target ? { target: options.target } : {}),
      ...(options.repairs ? { repairs: options.repairs } : {}),
      onRepair: (report) => {
        reports.push(report);
        options.onRepair?.(report, { method, path });
      },
    });
    const logLine = (status: number | string): void => {
      const summary = repairSummary(reports);
      options.log?.(`${method} ${path.split("?")[0] ?? path} ${status} ${Math.round(performance.now() - started)}ms${summary ? ` repairs=${summary}` : ""}`);
    };

    void (async () => {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      const body = chunks.length > 0 ? Buffer.concat(chunks) : null;
      const headers = new Headers();
      for (const [name, value] of Object.entries(req.headers)) {
        if (HOP_BY_HOP.has(name) || value === undefined) continue;
        for (const item of Array.isArray(value) ? value : [value]) headers.append(name, item);
      }
      const init: RequestInit = { method, headers, signal: controller.signal };
      if (body && method !== "GET" && method !== "HEAD") init.body = body.toString("utf8");
      const response = await repairingFetch(`${base}${path}`, init);
      const outHeaders: Record<string, string | string[]> = {};
      response.headers.forEach((value, name) => {
        if (!RESPONSE_DROP.has(name)) outHeaders[name] = value;
      });
      const setCookies = response.headers.getSetCookie?.() ?? [];
      if (setCookies.length > 0) outHeaders["set-cookie"] = setCookies;
      const known = repairSummary(reports);
      if (known) outHeaders["x-toolwire-repairs"] = known;
      const before = reports.length;
      if (response.body) outHeaders.trailer = "x-toolwire-repairs";
      res.writeHead(response.status, response.statusText, outHeaders);
      res.flushHeaders();
      if (response.body) {
        await forwardBody(response.body, res);
        if (reports.length > before || known) res.addTrailers({ "x-toolwire-repairs": repairSummary(reports) });
      }
      finished = true;
      res.end();
      logLine(response.status);
    })().catch((error: unknown) => {
      finished = true;
      const aborted = controller.signal.aborted;
      if (!res.headersSent) {
        res.writeHead(502, { "content-type": "application/json" });
        res.end(JSON.stringify({ error: { type: "api_error", message: `toolwire proxy: upstream request failed: ${error instanceof Error ? error.message : String(error)}` } }));
      } else res.destroy();
      logLine(aborted ? "client-closed" : "upstream-failed");
    });
  };
}

/** Starts the proxy (on 127.0.0.1 unless `host` says otherwise). */
export async function startProxy(options: ProxyOptions): Promise<ProxyServer> {
  const handler = createProxyHandler(options);
  const server: Server = createServer(handler);
  const host = options.host ?? "127.0.0.1";
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://${host.includes(":") ? `[${host}]` : host}:${port}`,
    port,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      }),
  };
}

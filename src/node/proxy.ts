import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { Readable } from "node:stream";
import { brotliDecompress, gunzip, inflate, type InputType, type ZlibOptions } from "node:zlib";
import { ToolwireError } from "../errors.js";
import { createRepairingFetch, type FetchLike, type RepairingFetchOptions } from "../fetch/index.js";
import { routeFor, routeOf, type Route } from "../fetch/routes.js";
import { forwardBody } from "./forward-body.js";
import { allowedHosts, forwardedRequestHeaders, forwardedResponseHeaders, headerCount, hostName, isLoopback, resolveTarget, sendError, sendsChunked } from "./proxy-http.js";
import type { RepairReport } from "../reencode/types.js";
import type { ProviderName } from "../types.js";

/**
 * `toolwire proxy`: the repairing fetch as a local HTTP server, for clients in any language.
 * Point the client's base URL at it (`http://127.0.0.1:<port>`); every request is forwarded to
 * `upstream` + the request's path and query, through `createRepairingFetch`.
 *
 * - Headers pass through untouched (authentication included) except hop-by-hop ones (and those
 *   the request's `Connection` names); they are never logged or recorded. `accept-encoding` and
 *   `expect` are not forwarded: the proxy reads the body, and answers `100-continue` itself.
 * - Only a path is taken as request target; the upstream URL is the upstream's and the path's,
 *   and a path that leaves the upstream's base path is refused (400), as are duplicate `Host`
 *   headers and Host names that are not loopback names nor allowed (`allowHosts`: 403).
 * - Request bodies the proxy does not read (every path but the protocols' routes) stream through
 *   byte for byte; those it reads are capped (`maxBodyBytes`: 413), decompressed when sent with
 *   gzip, deflate or br, and sent as they came unless a repair changed them.
 * - A client that disconnects cancels the upstream request.
 * - One log line per request: method, path, protocol, status, time and the repair codes.
 * - `x-toolwire-repairs` on the response lists the codes of the request-side repairs and
 *   recoveries, and those of a non-streamed JSON response (repaired whole before the headers go
 *   out); on streamed responses to HTTP/1.1 clients the trailer of the same name adds the codes of
 *   the stream's repairs.
 */
export interface ProxyOptions {
  /** The provider's base URL, e.g. `https://api.anthropic.com`. */
  upstream: string;
  /** 0 (default) picks a free port. */
  port?: number;
  /** Interface to bind (default 127.0.0.1: loopback only). */
  host?: string;
  /**
   * Host names the proxy answers besides the loopback ones (`localhost`, `127.0.0.1`, `::1`), for
   * a proxy bound off loopback: any other Host header gets 403, so that a page whose DNS name
   * rebinds to the proxy's address cannot use it.
   */
  allowHosts?: readonly string[];
  /** The protocol of every request (default: from each request's path). */
  provider?: ProviderName;
  /** Schema target for tools (default: from the upstream host, else from the protocol). */
  target?: string;
  repairs?: RepairingFetchOptions["repairs"];
  /** Largest request body the proxy reads to repair, decompressed (default 32 MiB); a larger one gets 413. Bodies it does not read stream through unbounded. */
  maxBodyBytes?: number;
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

export const DEFAULT_MAX_BODY_BYTES = 32 * 1024 * 1024;

/** Requests whose `Expect: 100-continue` the proxy answers itself (it decides first whether it wants the body). */
const continuePending = new WeakSet<IncomingMessage>();

/** The codes of a list of reports, each once, for a header or a log line. */
export function repairSummary(reports: readonly RepairReport[]): string {
  return [...new Set(reports.map((report) => `${report.action === "withheld" ? "withheld:" : ""}${report.code}`))].join(",");
}

type Decompress = (input: InputType, options: ZlibOptions, callback: (error: Error | null, result: Buffer) => void) => void;
const DECOMPRESS: Record<string, Decompress> = { gzip: gunzip, "x-gzip": gunzip, deflate: inflate, br: brotliDecompress as Decompress };

function decompress(fn: Decompress, input: Buffer, limit: number): Promise<Buffer | "too_large" | "corrupt"> {
  return new Promise((resolve) => {
    fn(input, { maxOutputLength: Math.max(1, limit) }, (error, result) => {
      if (!error) resolve(result);
      else resolve((error as NodeJS.ErrnoException).code === "ERR_BUFFER_TOO_LARGE" ? "too_large" : "corrupt");
    });
  });
}

/** Reads a request body up to `limit` bytes; "too_large" as soon as it grows past it (the rest is not read). */
async function readCapped(req: IncomingMessage, limit: number): Promise<Buffer | "too_large"> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > limit) return "too_large";
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

/** A Buffer as the plain Uint8Array a fetch body takes (same memory). */
function bytesOf(buffer: Buffer): Uint8Array<ArrayBuffer> {
  return new Uint8Array(buffer.buffer as ArrayBuffer, buffer.byteOffset, buffer.length);
}

function isJsonish(contentType: string | undefined): boolean {
  return contentType === undefined || contentType === "" || /json/i.test(contentType);
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
  if (upstream.protocol !== "http:" && upstream.protocol !== "https:") throw new ToolwireError("invalid_upstream", `the upstream must be an http(s) URL, got '${options.upstream}'`);
  const hosts = allowedHosts(options.allowHosts);
  const limit = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const baseFetch: FetchLike = options.fetch ?? ((input, init) => fetch(input, init));

  return (req, res) => {
    const started = performance.now();
    const method = req.method ?? "GET";
    const target = req.url ?? "/";
    const path = target.split("?")[0] ?? target;
    let provider: ProviderName | null = options.provider ?? null;
    const logLine = (status: number | string, reports: readonly RepairReport[] = []): void => {
      const summary = repairSummary(reports);
      options.log?.(`${method} ${path} ${status} ${Math.round(performance.now() - started)}ms${summary ? ` repairs=${summary}` : ""}`);
    };
    const refuse = (status: number, message: string): void => {
      // The body was not read: close the connection rather than read what may be a large upload.
      sendError(res, provider, status, message, { connection: "close" });
      logLine(status);
    };

    if (headerCount(req, "host") > 1) return refuse(400, "more than one Host header");
    if (!hosts.has(hostName(req.headers.host))) {
      // A page on another origin that rebinds its DNS to the proxy's address must not reach the provider with the user's keys.
      return refuse(403, `toolwire proxy does not answer the Host '${hostName(req.headers.host)}' (loopback names${options.allowHosts?.length ? " and the allowed hosts" : ""} only)`);
    }
    const url = resolveTarget(target, upstream);
    if (!(url instanceof URL)) return refuse(400, url.refused);
    const route: Route | null = options.provider ? routeFor(options.provider, url.href) : routeOf(url.href);
    provider = route?.provider ?? provider;

    const reports: RepairReport[] = [];
    const controller = new AbortController();
    let finished = false;
    res.on("close", () => {
      if (!finished) controller.abort();
    });

    void (async () => {
      const headers = forwardedRequestHeaders(req);
      const init: RequestInit & { duplex?: "half" } = { method, headers, signal: controller.signal };
      const hasBody = method !== "GET" && method !== "HEAD" && (req.headers["content-length"] !== undefined ? req.headers["content-length"] !== "0" : req.headers["transfer-encoding"] !== undefined);
      let upstreamFetch = baseFetch;
      if (hasBody && route && isJsonish(req.headers["content-type"])) {
        // A body the proxy reads (to repair it): capped, decompressed when it came compressed.
        const declared = Number(req.headers["content-length"] ?? 0);
        if (declared > limit) return refuse(413, `the request body (${declared} bytes) is larger than the proxy reads (${limit} bytes)`);
        if (continuePending.has(req)) res.writeContinue();
        const body = await readCapped(req, limit);
        if (body === "too_large") return refuse(413, `the request body is larger than the proxy reads (${limit} bytes)`);
        const encoding = (req.headers["content-encoding"] ?? "").trim().toLowerCase();
        const inflateWith = DECOMPRESS[encoding];
        const plain = inflateWith ? await decompress(inflateWith, body, limit) : body;
        if (plain === "too_large") return refuse(413, `the request body, decompressed, is larger than the proxy reads (${limit} bytes)`);
        const original = bytesOf(body);
        if (plain !== "corrupt" && plain !== body) {
          // Decompressed to be read; sent compressed as it came unless a repair changed it.
          const decoded = bytesOf(plain);
          headers.delete("content-encoding");
          upstreamFetch = (input, sent) => {
            if (sent?.body !== decoded) return baseFetch(input, sent);
            const restored = new Headers(sent.headers);
            restored.set("content-encoding", encoding);
            return baseFetch(input, { ...sent, headers: restored, body: original });
          };
          init.body = decoded;
        } else init.body = original;
      } else if (hasBody) {
        // Not read by the proxy: streamed to the upstream as it arrives, with its own framing's length.
        if (continuePending.has(req)) res.writeContinue();
        if (req.headers["content-length"] !== undefined) headers.set("content-length", req.headers["content-length"]);
        init.body = Readable.toWeb(req) as ReadableStream<Uint8Array>;
        init.duplex = "half";
      }
      const repairingFetch = createRepairingFetch({
        fetch: upstreamFetch,
        ...(options.provider ? { provider: options.provider } : {}),
        ...(options.target ? { target: options.target } : {}),
        ...(options.repairs ? { repairs: options.repairs } : {}),
        onRepair: (report) => {
          reports.push(report);
          options.onRepair?.(report, { method, path: target });
        },
      });
      const response = await repairingFetch(url.href, init);
      const outHeaders = forwardedResponseHeaders(response.headers);
      const known = repairSummary(reports);
      if (known) outHeaders["x-toolwire-repairs"] = known;
      const before = reports.length;
      const trailers = response.body !== null && sendsChunked(req, response.status);
      if (trailers) outHeaders.trailer = "x-toolwire-repairs";
      res.writeHead(response.status, response.statusText, outHeaders);
      res.flushHeaders();
      if (response.body) {
        await forwardBody(response.body, res);
        if (trailers && (reports.length > before || known)) res.addTrailers({ "x-toolwire-repairs": repairSummary(reports) });
      }
      finished = true;
      res.end();
      logLine(response.status, reports);
    })().catch((error: unknown) => {
      finished = true;
      const aborted = controller.signal.aborted;
      if (!res.headersSent) sendError(res, provider, 502, `upstream request failed: ${error instanceof Error ? error.message : String(error)}`);
      else res.destroy();
      logLine(aborted ? "client-closed" : "upstream-failed", reports);
    });
  };
}

/** Starts the proxy (on 127.0.0.1 unless `host` says otherwise). */
export async function startProxy(options: ProxyOptions): Promise<ProxyServer> {
  const handler = createProxyHandler(options);
  const server: Server = createServer(handler);
  // The handler decides whether it wants the body (a 413 goes out without the 100).
  server.on("checkContinue", (req: IncomingMessage, res: ServerResponse) => {
    continuePending.add(req);
    handler(req, res);
  });
  // Authority-form (CONNECT host:port): not a tunnel.
  server.on("connect", (_req: IncomingMessage, socket: Socket) => {
    const body = JSON.stringify({ error: { message: "toolwire proxy: CONNECT is not supported (the proxy forwards paths to its upstream only)", type: "invalid_request_error" } });
    socket.end(`HTTP/1.1 400 Bad Request\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`);
  });
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

export { isLoopback };

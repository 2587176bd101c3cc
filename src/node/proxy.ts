import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { Readable } from "node:stream";
import { brotliDecompress, gunzip, inflate, type InputType, type ZlibOptions } from "node:zlib";
import { ToolwireError } from "../errors.js";
import { createRepairingFetch, type FetchLike, type RepairingFetchOptions } from "../fetch/index.js";
import { routeFor, routeOf, type Route } from "../fetch/routes.js";
import { forwardBody } from "./forward-body.js";
import { allowedHosts, forwardedRequestHeaders, forwardedResponseHeaders, headerCount, hostName, inConnectionOrder, normalizePath, transferCodingRefusal, resolveTarget, trimSlashes, sendError, sendsChunked, writeError } from "./proxy-http.js";
import { ProxyMetrics } from "./proxy-metrics.js";
import { createUpstreamFetch } from "./upstream-fetch.js";
import { isWithheldCall, withWithheldNotice } from "./withheld-notice.js";
import type { RepairReport } from "../reencode/types.js";
import type { TextCallSetting } from "../text-calls/options.js";
import type { ProviderName } from "../types.js";

/**
 * `toolwire proxy`: the repairing fetch as a local HTTP server, for clients in any language.
 * Point the client's base URL at it (`http://127.0.0.1:<port>`); every request is forwarded to
 * `upstream` + the request's path and query, through `createRepairingFetch`.
 *
 * - Headers pass through untouched (authentication included) except hop-by-hop ones (and those
 *   the request's `Connection` names); they are never logged or recorded. `accept-encoding` and
 *   `expect` are not forwarded: the proxy asks for `identity` and reads the body (decoded if the
 *   upstream compressed it all the same), and answers `100-continue` itself.
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
 *   the stream's repairs; the value ends with the request's id (`…,request_id=<id>`, see
 *   `repairsHeader`), which every `onRepair` report carries too (`report.requestId`).
 */
/** One upstream behind a path prefix (`--config`): `/anthropic/v1/messages` → `https://api.anthropic.com/v1/messages`. */
export interface ProxyRoute {
  /** Path prefix the route answers, matched on whole segments (`/openai` matches `/openai/v1/...`, not `/openai2`); `/` matches every path. */
  prefix: string;
  /** The provider's base URL, e.g. `https://api.anthropic.com` or `http://127.0.0.1:8000`. */
  upstream: string;
  /** Name in logs and metrics (default: the prefix). */
  name?: string;
  /** Whether the prefix is removed from the path before it is joined to the upstream (default true). */
  stripPrefix?: boolean;
  /** The protocol of every request on this route (default: from each request's path). */
  provider?: ProviderName;
  /** Schema target for tools (default: from the upstream host, else from the protocol). */
  target?: string;
  repairs?: RepairingFetchOptions["repairs"];
  /** Read the tool calls the model wrote into its text (see `ProxyOptions.textCalls`); default off. */
  textCalls?: TextCallSetting;
}

/** One request as logged (`logFormat: "json"` writes it as one JSON object per line). */
export interface ProxyLogRecord {
  time: string;
  request_id: string;
  method: string;
  /** The request's path, without its query. */
  path: string;
  /** The route's name (`default` for `upstream`), or null when none matched. */
  route: string | null;
  provider: ProviderName | null;
  /** The status sent to the client (499: the client went away before the headers). */
  status: number;
  /** `ok`, `refused` (the proxy answered itself), `client_closed`, `upstream_failed` (no response), `response_cut` (the body failed mid-way). */
  outcome: "ok" | "refused" | "client_closed" | "upstream_failed" | "response_cut";
  duration_ms: number;
  /** Time to the first byte of the body written to the client, or null. */
  ttfb_ms: number | null;
  /** The repair codes, each once (`withheld:` before a withheld call's code). */
  repairs: string[];
  /** Calls withheld from the client. */
  withheld: number;
}

/** How `startProxy` / `createProxyHandler` forward: the upstream (or routes), the repairs, limits, logging and observability. */
export interface ProxyOptions {
  /** The provider's base URL, e.g. `https://api.anthropic.com`: a route for every path (after `routes`). */
  upstream?: string;
  /** Upstreams by path prefix, longest prefix first; `upstream` (with `provider`, `target`, `repairs`) is the route of the paths none matches. */
  routes?: readonly ProxyRoute[];
  /** 0 (default) picks a free port. */
  port?: number;
  /** Interface to bind (default 127.0.0.1: loopback only). */
  host?: string;
  /**
   * Host names the proxy answers besides the loopback ones (`localhost`, `127.0.0.1`, `::1`), for
   * a proxy bound off loopback: any other Host header gets 403, so that a page whose DNS name
   * rebinds to the proxy's address cannot use it. `/healthz` and `/metrics` answer any Host.
   */
  allowHosts?: readonly string[];
  /** The protocol of every request (default: from each request's path). */
  provider?: ProviderName;
  /** Schema target for tools (default: from the upstream host, else from the protocol). */
  target?: string;
  repairs?: RepairingFetchOptions["repairs"];
  /**
   * For an upstream started without a tool-call parser (vLLM, SGLang, llama.cpp, Ollama): read the
   * calls the model wrote into its text and send them to the client as the protocol's real calls
   * (Chat Completions, Anthropic Messages, OpenAI Responses and Ollama /api/chat, streamed or not;
   * not Gemini or Bedrock; see docs/text-calls.md). The tools of each request that offers some type its
   * calls, in place of `textCalls.tools`. Off when absent. Like `provider` and `target`, it is the
   * `upstream` route's: each of `routes` sets its own.
   */
  textCalls?: TextCallSetting;
  /** Largest request body the proxy reads to repair, decompressed (default 32 MiB); a larger one gets 413. Bodies it does not read stream through unbounded. */
  maxBodyBytes?: number;
  /**
   * How long the rest of a refused request's body (413, 404, 403, a bad target) is read and
   * discarded after the answer, so that a client still sending it gets the answer rather than a
   * reset, before the connection is closed (default 30 s, nginx's `lingering_time`).
   */
  lingerMs?: number;
  /** One line per request (default: none). Never given headers. */
  log?: (line: string) => void;
  /** `text` (default): `POST /v1/messages 200 812ms repairs=… id=…`; `json`: one `ProxyLogRecord` as JSON per line. */
  logFormat?: "text" | "json";
  /**
   * Opt-in: when a call is withheld (cut or invalid), add a text part to the assistant message
   * saying which call and why, so that the model reads it on its next turn instead of the call
   * vanishing (every protocol, streamed and whole; where, per protocol: docs/proxy.md).
   */
  withheldNotice?: boolean;
  /** Every repair of every request, with the request's id (`x-request-id`) on the report (`report.requestId`) and in `request`. */
  onRepair?: (report: RepairReport, request: { method: string; path: string; requestId: string; route: string }) => void;
  /** The fetch used upstream (default: `createUpstreamFetch()`, node:http(s) with keep-alive; redirects are passed to the client, not followed). */
  fetch?: FetchLike;
}

/** A running `toolwire proxy` server (from `startProxy`). */
export interface ProxyServer {
  readonly url: string;
  readonly port: number;
  /** Closes the server and every connection at once (streams in progress are cut). */
  close(): Promise<void>;
  /**
   * Graceful stop: stops accepting connections, lets the requests in progress finish for up to
   * `graceMs` (default 30 s), then closes what is left. Resolves with the number of requests cut.
   */
  shutdown(graceMs?: number): Promise<{ cut: number }>;
  /** The Prometheus text `GET /metrics` answers. */
  metrics(): string;
}

export const DEFAULT_MAX_BODY_BYTES = 32 * 1024 * 1024;

/** Requests whose `Expect: 100-continue` the proxy answers itself (it decides first whether it wants the body). */
const continuePending = new WeakSet<IncomingMessage>();

/** The codes of a list of reports, each once, for a header or a log line. */
export function repairSummary(reports: readonly RepairReport[]): string {
  return [...new Set(reports.map((report) => `${report.action === "withheld" ? "withheld:" : ""}${report.code}`))].join(",");
}

/**
 * The `x-toolwire-repairs` value: the codes (as `repairSummary`), then the request's id as a last
 * member `request_id=<id>`, so that a repair seen by the client can be traced to the log line and
 * the `onRepair` reports. A reader that splits on "," still finds every code as a member of its
 * own (no code contains "="); the id is everything after the first ",request_id=" (it may itself
 * hold a comma). Empty when there is no repair (the header is then not sent).
 */
export function repairsHeader(reports: readonly RepairReport[], requestId: string): string {
  const codes = repairSummary(reports);
  return codes === "" ? "" : `${codes},request_id=${requestId}`;
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

/**
 * Reads a request body up to `limit` bytes; "too_large" as soon as it grows past it (the rest is
 * left unread, the request paused, not destroyed: destroying it would reset the connection before
 * the 413 reaches the client).
 */
function readCapped(req: IncomingMessage, limit: number): Promise<Buffer | "too_large"> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const stop = (): void => {
      req.off("data", onData).off("end", onEnd).off("error", onError).off("close", onClose);
    };
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size <= limit) {
        chunks.push(chunk);
        return;
      }
      stop();
      req.pause();
      resolve("too_large");
    };
    const onEnd = (): void => {
      stop();
      resolve(Buffer.concat(chunks));
    };
    const onError = (error: Error): void => {
      stop();
      reject(error);
    };
    const onClose = (): void => onError(new Error("the client closed the connection before the end of the request body"));
    req.on("data", onData).on("end", onEnd).on("error", onError).on("close", onClose);
  });
}

/** Whether the request's framing says a body follows: a Content-Length other than 0, or (without one) a Transfer-Encoding. */
function declaresBody(req: IncomingMessage): boolean {
  const length = req.headers["content-length"];
  return length !== undefined ? length !== "0" : req.headers["transfer-encoding"] !== undefined;
}

/** How long the rest of a refused body is read and discarded before the connection is closed (nginx's `lingering_time`). */
const DEFAULT_LINGER_MS = 30_000;

/**
 * Reads and discards the rest of a request body the proxy refused, then calls `done`, so that a
 * client still sending it gets the answer rather than a reset (closing a socket with unread bytes
 * in it sends one, which fails the client's write and drops the answer); the connection is closed
 * if the body has not ended within `lingerMs`.
 */
function discardRest(req: IncomingMessage, lingerMs: number, done: () => void): void {
  if (req.complete) return done();
  const timer = setTimeout(() => req.socket.destroy(), lingerMs).unref();
  let called = false;
  const ended = (): void => {
    clearTimeout(timer);
    if (!called) done();
    called = true;
  };
  req.once("end", ended).once("close", ended);
  req.resume();
}

/** A Buffer as the plain Uint8Array a fetch body takes (same memory). */
function bytesOf(buffer: Buffer): Uint8Array<ArrayBuffer> {
  return new Uint8Array(buffer.buffer as ArrayBuffer, buffer.byteOffset, buffer.length);
}

function isJsonish(contentType: string | undefined): boolean {
  return contentType === undefined || contentType === "" || /json/i.test(contentType);
}

interface CompiledRoute {
  name: string;
  /** Without a trailing slash; "" for `/`. */
  prefix: string;
  strip: boolean;
  upstream: URL;
  provider?: ProviderName;
  target?: string;
  repairs?: RepairingFetchOptions["repairs"];
  textCalls?: TextCallSetting;
}

function compileRoute(route: ProxyRoute): CompiledRoute {
  let upstream: URL;
  try {
    upstream = new URL(route.upstream);
  } catch {
    throw new ToolwireError("invalid_upstream", `the upstream must be an absolute URL, got '${route.upstream}'`);
  }
  if (upstream.protocol !== "http:" && upstream.protocol !== "https:") throw new ToolwireError("invalid_upstream", `the upstream must be an http(s) URL, got '${route.upstream}'`);
  if (!route.prefix.startsWith("/") || /[?#\\]|\/\.\.?(\/|$)/.test(route.prefix)) throw new ToolwireError("invalid_route", `a route's prefix must be a path such as '/anthropic', got '${route.prefix}'`);
  const prefix = trimSlashes(route.prefix);
  return {
    name: route.name ?? (prefix || "/"),
    prefix,
    strip: route.stripPrefix ?? true,
    upstream,
    ...(route.provider ? { provider: route.provider } : {}),
    ...(route.target ? { target: route.target } : {}),
    ...(route.repairs ? { repairs: route.repairs } : {}),
    ...(route.textCalls ? { textCalls: route.textCalls } : {}),
  };
}

/** The routes of the options, longest prefix first (the `upstream` route, `/`, last). */
function compileRoutes(options: ProxyOptions): CompiledRoute[] {
  const routes = (options.routes ?? []).map(compileRoute);
  if (options.upstream !== undefined) {
    routes.push({
      ...compileRoute({ prefix: "/", upstream: options.upstream, name: "default", ...(options.provider ? { provider: options.provider } : {}), ...(options.target ? { target: options.target } : {}), ...(options.repairs ? { repairs: options.repairs } : {}), ...(options.textCalls ? { textCalls: options.textCalls } : {}) }),
      strip: false,
    });
  }
  if (routes.length === 0) throw new ToolwireError("invalid_upstream", "the proxy needs an upstream or at least one route");
  const names = new Set<string>();
  for (const route of routes) {
    if (names.has(route.prefix)) throw new ToolwireError("invalid_route", `two routes have the prefix '${route.prefix || "/"}'`);
    names.add(route.prefix);
  }
  return routes.sort((a, b) => b.prefix.length - a.prefix.length);
}

/** The route whose prefix is a whole-segment prefix of `path` (a normalized path). */
function matchRoute(routes: readonly CompiledRoute[], path: string): CompiledRoute | null {
  for (const route of routes) if (route.prefix === "" || path === route.prefix || path.startsWith(`${route.prefix}/`)) return route;
  return null;
}

/** A request id from the client (visible ASCII, at most 128 characters), or a fresh one. */
function requestIdOf(req: IncomingMessage): string {
  const given = req.headers["x-request-id"];
  return typeof given === "string" && /^[\x21-\x7e]{1,128}$/.test(given) ? given : randomUUID();
}

interface ProxyState {
  draining: boolean;
  active: number;
}

/** The handler, its metrics and its drain state (`startProxy` shares them with the server). */
function createProxy(options: ProxyOptions): { handler: (req: IncomingMessage, res: ServerResponse) => void; metrics: ProxyMetrics; state: ProxyState } {
  const routes = compileRoutes(options);
  const hosts = allowedHosts(options.allowHosts);
  const limit = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const lingerMs = options.lingerMs ?? DEFAULT_LINGER_MS;
  const baseFetch: FetchLike = options.fetch ?? createUpstreamFetch();
  const metrics = new ProxyMetrics();
  const state: ProxyState = { draining: false, active: 0 };
  const json = options.logFormat === "json";

  const handler = (req: IncomingMessage, res: ServerResponse): void => {
    const started = performance.now();
    const method = req.method ?? "GET";
    const target = req.url ?? "/";
    const path = target.split("?")[0] ?? target;
    const requestId = requestIdOf(req);
    res.setHeader("x-request-id", requestId);
    if (state.draining) res.setHeader("connection", "close");

    if ((method === "GET" || method === "HEAD") && (path === "/healthz" || path === "/metrics")) {
      // Operators' endpoints: no keys involved, so any Host (a probe by pod IP, a scraper).
      const body = path === "/metrics" ? metrics.render() : JSON.stringify({ status: state.draining ? "draining" : "ok" });
      res.writeHead(path === "/healthz" && state.draining ? 503 : 200, { "content-type": path === "/metrics" ? "text/plain; version=0.0.4; charset=utf-8" : "application/json", "content-length": Buffer.byteLength(body), "cache-control": "no-store" });
      res.end(method === "HEAD" ? undefined : body);
      return;
    }

    state.active++;
    metrics.inFlight.add({}, 1);
    let route: CompiledRoute | null = null;
    let provider: ProviderName | null = options.provider ?? null;
    const reports: RepairReport[] = [];
    let ttfb: number | null = null;
    let ended = false;
    const finish = (status: number, outcome: ProxyLogRecord["outcome"]): void => {
      if (ended) return;
      ended = true;
      state.active--;
      metrics.inFlight.add({}, -1);
      const routeName = route?.name ?? "none";
      const seconds = (performance.now() - started) / 1000;
      metrics.requests.add({ route: routeName, provider: provider ?? "none", status: String(status) });
      metrics.duration.observe({ route: routeName }, seconds);
      if (outcome === "client_closed") metrics.clientAborts.add({ route: routeName });
      if (outcome === "upstream_failed" || outcome === "response_cut") metrics.upstreamErrors.add({ route: routeName, kind: outcome === "upstream_failed" ? "request_failed" : "response_cut" });
      if (!options.log) return;
      const summary = repairSummary(reports);
      if (json) {
        const record: ProxyLogRecord = {
          time: new Date().toISOString(),
          request_id: requestId,
          method,
          path,
          route: route?.name ?? null,
          provider,
          status,
          outcome,
          duration_ms: Math.round(seconds * 1000),
          ttfb_ms: ttfb === null ? null : Math.round(ttfb),
          repairs: summary === "" ? [] : summary.split(","),
          withheld: reports.filter(isWithheldCall).length,
        };
        options.log(JSON.stringify(record));
      } else {
        const shown = outcome === "client_closed" ? "client-closed" : outcome === "upstream_failed" || outcome === "response_cut" ? "upstream-failed" : String(status);
        options.log(`${method} ${path} ${shown} ${Math.round(seconds * 1000)}ms${summary ? ` repairs=${summary}` : ""} id=${requestId}`);
      }
    };
    // A body that is still coming (no `Expect: 100-continue` left unanswered, or the 100 sent).
    let continued = false;
    const bodyComing = (): boolean => !req.complete && declaresBody(req) && (continued || !continuePending.has(req));
    /**
     * Answers for the proxy. A client still sending the body (Python's http.client and urllib
     * write all of it before they read) would get a reset, and lose the answer, if the connection
     * closed with its bytes unread: a body whose framing holds is read and discarded after the
     * answer, bounded in time, as nginx's lingering close does, and the connection then serves the
     * next request. `framingHolds: false` (a transfer coding refused, two Hosts): closed at once.
     */
    const refuse = (status: number, reason: string, message: string, framingHolds = true): void => {
      metrics.refused.add({ reason });
      if (framingHolds && bodyComing()) {
        if (writeError(res, provider, status, message)) discardRest(req, lingerMs, () => res.end());
      } else sendError(res, provider, status, message, { connection: "close" });
      finish(status, "refused");
    };
    const continueBody = (): void => {
      if (!continuePending.has(req) || continued) return;
      continued = true;
      res.writeContinue();
    };

    if (headerCount(req, "host") > 1) return refuse(400, "duplicate_host", "more than one Host header", false);
    const coding = transferCodingRefusal(req);
    if (coding !== null) return refuse(coding, "transfer_coding", `the request's Transfer-Encoding '${req.headers["transfer-encoding"] ?? ""}' is not supported (chunked alone, last)`, false);
    if (!hosts.has(hostName(req.headers.host))) {
      // A page on another origin that rebinds its DNS to the proxy's address must not reach the provider with the user's keys.
      return refuse(403, "host", `this proxy does not answer the Host '${hostName(req.headers.host)}' (loopback names${options.allowHosts?.length ? " and the allowed hosts" : ""} only)`);
    }
    const normalized = normalizePath(target);
    if (typeof normalized !== "string") return refuse(400, "target", normalized.refused);
    route = matchRoute(routes, normalized);
    if (!route) return refuse(404, "no_route", `no route for the path '${normalized}'`);
    const url = resolveTarget(target, route.upstream, route.strip ? route.prefix : "");
    if (!(url instanceof URL)) return refuse(400, "target", url.refused);
    const current = route;
    const fetchRoute: Route | null = current.provider ? routeFor(current.provider, url.href) : routeOf(url.href);
    provider = fetchRoute?.provider ?? current.provider ?? null;
    const labels = { route: current.name, provider: provider ?? "none" };

    const controller = new AbortController();
    let responded = false;
    res.on("close", () => {
      if (!responded) {
        controller.abort();
        finish(res.headersSent ? res.statusCode : 499, "client_closed");
      }
    });

    void (async () => {
      const headers = forwardedRequestHeaders(req);
      headers.set("x-request-id", requestId);
      const init: RequestInit & { duplex?: "half" } = { method, headers, signal: controller.signal };
      const hasBody = method !== "GET" && method !== "HEAD" && declaresBody(req);
      let upstreamFetch = baseFetch;
      if (hasBody && fetchRoute && isJsonish(req.headers["content-type"])) {
        // A body the proxy reads (to repair it): capped, decompressed when it came compressed.
        const declared = Number(req.headers["content-length"] ?? 0);
        if (declared > limit) return refuse(413, "body_too_large", `the request body (${declared} bytes) is larger than the proxy reads (${limit} bytes)`);
        continueBody();
        const body = await readCapped(req, limit);
        if (body === "too_large") return refuse(413, "body_too_large", `the request body is larger than the proxy reads (${limit} bytes)`);
        const encoding = (req.headers["content-encoding"] ?? "").trim().toLowerCase();
        const inflateWith = DECOMPRESS[encoding];
        const plain = inflateWith ? await decompress(inflateWith, body, limit) : body;
        if (plain === "too_large") return refuse(413, "body_too_large", `the request body, decompressed, is larger than the proxy reads (${limit} bytes)`);
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
        continueBody();
        if (req.headers["content-length"] !== undefined) headers.set("content-length", req.headers["content-length"]);
        init.body = Readable.toWeb(req) as ReadableStream<Uint8Array>;
        init.duplex = "half";
      }
      const repairingFetch = createRepairingFetch({
        fetch: upstreamFetch,
        // A relay needs the decoder's events, not the turn's text: memory per stream stays with the calls not yet decided.
        decoder: { retainText: false, ...(current.textCalls ? { textCalls: current.textCalls } : {}) },
        ...(current.provider ? { provider: current.provider } : {}),
        ...(current.target ? { target: current.target } : {}),
        ...(current.repairs ? { repairs: current.repairs } : {}),
        onRepair: (report) => {
          reports.push(report);
          metrics.repairs.add({ ...labels, code: report.code, action: report.action });
          if (isWithheldCall(report)) metrics.withheld.add({ ...labels, code: report.code });
          options.onRepair?.({ ...report, requestId }, { method, path: target, requestId, route: current.name });
        },
      });
      let response = await repairingFetch(url.href, init);
      if (options.withheldNotice && fetchRoute) response = await withWithheldNotice(response, fetchRoute, () => reports);
      const outHeaders = forwardedResponseHeaders(response.headers, method === "HEAD");
      outHeaders["x-request-id"] = requestId;
      const known = repairsHeader(reports, requestId);
      if (known) outHeaders["x-toolwire-repairs"] = known;
      const before = reports.length;
      const trailers = response.body !== null && sendsChunked(req, response.status);
      if (trailers) outHeaders.trailer = "x-toolwire-repairs";
      res.writeHead(response.status, response.statusText, outHeaders);
      res.flushHeaders();
      if (response.body) {
        metrics.streamsOpen.add({ route: current.name }, 1);
        try {
          await forwardBody(response.body, res, () => (ttfb = performance.now() - started));
        } finally {
          metrics.streamsOpen.add({ route: current.name }, -1);
        }
        if (trailers && (reports.length > before || known)) res.addTrailers({ "x-toolwire-repairs": repairsHeader(reports, requestId) });
      } else ttfb = performance.now() - started;
      if (ttfb !== null) metrics.ttfb.observe({ route: current.name }, ttfb / 1000);
      if (res.destroyed) return;
      responded = true;
      res.end();
      finish(response.status, "ok");
    })().catch((error: unknown) => {
      if (controller.signal.aborted || ended) return;
      responded = true;
      if (!res.headersSent) {
        sendError(res, provider, 502, `upstream request failed: ${error instanceof Error ? error.message : String(error)}`);
        finish(502, "upstream_failed");
      } else {
        res.destroy();
        finish(res.statusCode, "response_cut");
      }
    });
  };
  return { handler, metrics, state };
}

/**
 * The proxy's request handler on its own, to mount in an existing Node HTTP server (with
 * `/healthz` and `/metrics`; pipelined requests are worked on in order by `startProxy`'s server,
 * not by the handler alone); throws a ToolwireError (`invalid_upstream`, `invalid_route`) for an
 * upstream that is not an absolute http(s) URL or a route that is not a path.
 */
export function createProxyHandler(options: ProxyOptions): (req: IncomingMessage, res: ServerResponse) => void {
  return createProxy(options).handler;
}

const KEEP_ALIVE_MS = 75_000;

/** Starts the proxy (on 127.0.0.1 unless `host` says otherwise). */
export async function startProxy(options: ProxyOptions): Promise<ProxyServer> {
  const { handler: each, metrics, state } = createProxy(options);
  const handler = inConnectionOrder(each);
  const server: Server = createServer(handler);
  // An idle client connection is kept 75 s, as nginx keeps one, not Node's 5 s: client pools keep
  // theirs longer (Go's 90 s), and a request sent as the proxy closes the connection is lost.
  server.keepAliveTimeout = KEEP_ALIVE_MS;
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
  let closing: Promise<void> | null = null;
  const closed = (): Promise<void> => (closing ??= new Promise<void>((resolve) => server.close(() => resolve())));
  return {
    url: `http://${host.includes(":") ? `[${host}]` : host}:${port}`,
    port,
    close: async () => {
      const done = closed();
      server.closeAllConnections();
      await done;
    },
    shutdown: async (graceMs = 30_000) => {
      state.draining = true;
      const done = closed();
      const deadline = Date.now() + graceMs;
      // Keep-alive connections go as soon as they are idle; requests in progress may finish until the deadline.
      while (state.active > 0 && Date.now() < deadline) {
        server.closeIdleConnections();
        await new Promise((resolve) => setTimeout(resolve, Math.min(50, Math.max(1, deadline - Date.now()))));
      }
      const cut = state.active;
      server.closeAllConnections();
      await done;
      return { cut };
    },
    metrics: () => metrics.render(),
  };
}

import type { IncomingMessage, ServerResponse } from "node:http";
import type { Socket } from "node:net";
import type { ProviderName } from "../types.js";

/**
 * The HTTP rules `toolwire proxy` keeps as a reverse proxy (RFC 9110/9112, as nginx and Envoy keep
 * them): which headers are hop-by-hop, which request targets and Host headers are refused, and the
 * error bodies the proxy answers with itself, in the shape of the request's protocol.
 */

/** Request headers never forwarded: hop-by-hop ones (RFC 9110 7.6.1), and those the proxy sets itself. */
const REQUEST_DROP = new Set([
  "connection",
  "keep-alive",
  "proxy-connection",
  "proxy-authenticate",
  "proxy-authorization",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
  "host",
  "content-length",
  // Answered by the proxy (Node sends the 100), never forwarded: the upstream hop frames its own body.
  "expect",
  // The proxy's fetch asks for (and decodes) the encodings it reads itself.
  "accept-encoding",
]);

/** Response headers never forwarded: hop-by-hop ones, and those the proxy's own framing replaces. */
const RESPONSE_DROP = new Set(["connection", "keep-alive", "proxy-connection", "transfer-encoding", "content-length", "content-encoding", "trailer", "upgrade", "te"]);

/** The field names a `Connection` header lists: hop-by-hop for this connection only (RFC 9110 7.6.1). */
export function connectionTokens(value: string | string[] | null | undefined): Set<string> {
  const tokens = new Set<string>();
  for (const item of Array.isArray(value) ? value : value ? [value] : []) {
    for (const token of item.split(",")) {
      const name = token.trim().toLowerCase();
      if (name !== "") tokens.add(name);
    }
  }
  return tokens;
}

/** The request's headers as they go upstream: hop-by-hop ones and those named in `Connection` left out. */
export function forwardedRequestHeaders(req: IncomingMessage): Headers {
  const named = connectionTokens(req.headers.connection);
  const headers = new Headers();
  const raw = req.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = (raw[i] as string).toLowerCase();
    if (REQUEST_DROP.has(name) || named.has(name)) continue;
    headers.append(name, raw[i + 1] as string);
  }
  return headers;
}

/**
 * The upstream response's headers as they go to the client (Set-Cookie kept as separate fields).
 * `head`: the answer to a HEAD, which keeps its `Content-Length` (the size a GET would send,
 * RFC 9110 §9.3.2): no body follows whose framing the proxy would choose.
 */
export function forwardedResponseHeaders(headers: Headers, head = false): Record<string, string | string[]> {
  const named = connectionTokens(headers.get("connection"));
  const out: Record<string, string | string[]> = {};
  headers.forEach((value, name) => {
    if (!RESPONSE_DROP.has(name) && !named.has(name) && name !== "set-cookie") out[name] = value;
    else if (head && name === "content-length" && !named.has(name)) out[name] = value;
  });
  const cookies = headers.getSetCookie?.() ?? [];
  if (cookies.length > 0 && !named.has("set-cookie")) out["set-cookie"] = cookies;
  return out;
}

/** How many times the request carries a header (Node keeps only the first `Host`). */
export function headerCount(req: IncomingMessage, name: string): number {
  let count = 0;
  for (let i = 0; i < req.rawHeaders.length; i += 2) if ((req.rawHeaders[i] as string).toLowerCase() === name) count++;
  return count;
}

const LOOPBACK_NAMES = ["127.0.0.1", "localhost", "::1"];

/** Whether an interface address is loopback. */
export function isLoopback(host: string): boolean {
  return LOOPBACK_NAMES.includes(host.toLowerCase()) || /^127\.\d+\.\d+\.\d+$/.test(host);
}

/** The name in a Host header: port and IPv6 brackets removed, lower case. */
export function hostName(header: string | undefined): string {
  const value = (header ?? "").trim().toLowerCase();
  if (value.startsWith("[")) return value.slice(1, value.indexOf("]") > 0 ? value.indexOf("]") : undefined);
  const colon = value.lastIndexOf(":");
  const name = colon >= 0 && /^\d*$/.test(value.slice(colon + 1)) ? value.slice(0, colon) : value;
  return name.endsWith(".") ? name.slice(0, -1) : name;
}

/** A Host name an operator may allow (`--allow-host`): letters, digits, dots, dashes; or an IP address. */
export function isHostNameSyntax(name: string): boolean {
  if (name.length === 0 || name.length > 253) return false;
  if (name.includes(":")) return /^[0-9a-f:.]+$/i.test(name);
  return name
    .replace(/\.$/, "")
    .split(".")
    .every((label) => /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/i.test(label));
}

/** The set of Host names a proxy answers: loopback names always, plus the allowed ones. */
export function allowedHosts(extra: readonly string[] | undefined): Set<string> {
  return new Set([...LOOPBACK_NAMES, ...(extra ?? []).map((name) => hostName(name))]);
}

/**
 * The path of a request target with its dot segments (also `%2e%2e` and `\\`) resolved, or a
 * reason to refuse it. Only origin-form targets (a path) are taken: absolute-form
 * (`http://other/...`), authority-form and asterisk-form ones are refused, since the upstream URL
 * is built from the upstream and the path alone; so is a path that climbs above its root.
 */
export function normalizePath(target: string): string | { refused: string } {
  const parsed = parseTarget(target);
  return parsed instanceof URL ? parsed.pathname.slice("/root".length) || "/" : parsed;
}

function parseTarget(target: string): URL | { refused: string } {
  if (!target.startsWith("/")) return { refused: "the request target must be a path (origin-form): absolute-form, authority-form and asterisk-form targets are not forwarded" };
  let path: URL;
  try {
    // Inside a fixed root, so that `//host/...` stays a path and a climb above the root shows.
    path = new URL(`http://proxy.invalid/root${target}`);
  } catch {
    return { refused: "the request target is not a valid path" };
  }
  if (path.host !== "proxy.invalid" || !(path.pathname === "/root" || path.pathname.startsWith("/root/"))) return { refused: "the path climbs above its root ('..')" };
  // Belt and braces: a dot segment the URL parser left in place is refused, not forwarded; so is
  // one behind an encoded slash (`..%2f`, `..%5c`), which an upstream that decodes them would climb.
  if (path.pathname.split("/").some((segment) => segment.split(/%2f|%5c/i).some((part) => /^(?:\.|%2e){1,2}$/i.test(part)))) return { refused: "the path has a dot segment that does not resolve" };
  return path;
}

/**
 * The upstream URL for a request target (see `normalizePath`), `stripPrefix` removed from its
 * path, or a reason to refuse it: a URL that would leave the upstream's origin or base path is.
 */
export function resolveTarget(target: string, upstream: URL, stripPrefix = ""): URL | { refused: string } {
  const path = parseTarget(target);
  if (!(path instanceof URL)) return path;
  let rest = path.pathname.slice("/root".length) || "/";
  const prefix = trimSlashes(stripPrefix);
  if (prefix !== "" && (rest === prefix || rest.startsWith(`${prefix}/`))) rest = rest.slice(prefix.length) || "/";
  const base = trimSlashes(upstream.pathname);
  let url: URL;
  try {
    url = new URL(`${upstream.origin}${base}${rest}${path.search}`);
  } catch {
    return { refused: "the request target is not a valid path" };
  }
  if (url.origin !== upstream.origin || !(base === "" || url.pathname === base || url.pathname.startsWith(`${base}/`))) return { refused: "the path leaves the upstream's base path" };
  return url;
}

/** `path` without trailing slashes (a loop: a regex `/\/+$/` is quadratic on a long run of slashes). */
export function trimSlashes(path: string): string {
  let end = path.length;
  while (end > 0 && path.charCodeAt(end - 1) === 47) end--;
  return path.slice(0, end);
}

/**
 * The status for a request whose `Transfer-Encoding` the proxy cannot read, or null: absent and
 * `chunked` alone are read. Chunked not last leaves the body's length unknown (400, RFC 9112
 * §6.3); other codings before it are not applied by Node's parser (`gzip, chunked` reaches the
 * handler de-chunked but still gzipped), so such a body is refused (501, RFC 9112 §6.1) rather
 * than forwarded with its coding silently dropped.
 */
export function transferCodingRefusal(req: IncomingMessage): 400 | 501 | null {
  const coding = req.headers["transfer-encoding"];
  if (coding === undefined) return null;
  const codings = coding.toLowerCase().split(",").map((name) => name.trim());
  if (codings.at(-1) !== "chunked") return 400;
  return codings.length === 1 ? null : 501;
}

/**
 * The handler run for one request of a connection at a time. Node parses pipelined requests and
 * hands them over at once (answering them in order); RFC 9112 §9.3.2 lets a server work on them
 * in parallel only when they are all safe, and the upstream must see a `POST` before the `GET`
 * that follows it on the connection, as nginx sends them. Each request waits for the response
 * before it to end; one behind a response that closed the connection is dropped, not forwarded.
 */
export function inConnectionOrder(handler: (req: IncomingMessage, res: ServerResponse) => void): (req: IncomingMessage, res: ServerResponse) => void {
  const waiting = new WeakMap<Socket, Array<() => void>>();
  return (req, res) => {
    const socket = req.socket;
    const next = (): void => {
      const following = waiting.get(socket)?.shift();
      if (following) following();
      else waiting.delete(socket);
    };
    const run = (): void => {
      // The connection closed, or the response before ended it (`Connection: close`): nobody reads this answer.
      if (socket.destroyed || socket.writableEnded) return next();
      res.once("close", next);
      handler(req, res);
    };
    const queue = waiting.get(socket);
    if (queue) queue.push(run);
    else {
      waiting.set(socket, []);
      run();
    }
  };
}

/** Whether the response to this request is sent chunked (so trailers may follow its body). */
export function sendsChunked(req: IncomingMessage, status: number): boolean {
  return req.httpVersionMajor === 1 && req.httpVersionMinor >= 1 && req.method !== "HEAD" && status >= 200 && status !== 204 && status !== 304;
}

/**
 * An error the proxy answers itself, in the shape the client's SDK parses for the protocol (so it
 * raises an error with the message, not a parse failure); `null` when the protocol is unknown.
 */
export function errorResponse(provider: ProviderName | null, status: number, message: string): { headers: Record<string, string>; body: string } {
  const headers: Record<string, string> = { "content-type": "application/json" };
  const kind = status === 413 ? "too_large" : status === 403 ? "forbidden" : status === 404 ? "not_found" : status === 503 ? "unavailable" : status >= 500 && status !== 501 ? "upstream" : "invalid";
  switch (provider) {
    case "anthropic": {
      const type = { too_large: "request_too_large", forbidden: "permission_error", not_found: "not_found_error", upstream: "api_error", unavailable: "overloaded_error", invalid: "invalid_request_error" }[kind];
      return { headers, body: JSON.stringify({ type: "error", error: { type, message } }) };
    }
    case "gemini": {
      const statusName = { too_large: "INVALID_ARGUMENT", forbidden: "PERMISSION_DENIED", not_found: "NOT_FOUND", upstream: "UNAVAILABLE", unavailable: "UNAVAILABLE", invalid: "INVALID_ARGUMENT" }[kind];
      return { headers, body: JSON.stringify({ error: { code: status, message, status: statusName } }) };
    }
    case "bedrock": {
      headers["x-amzn-errortype"] = { too_large: "ValidationException", forbidden: "AccessDeniedException", not_found: "ResourceNotFoundException", upstream: "ServiceUnavailableException", unavailable: "ServiceUnavailableException", invalid: "ValidationException" }[kind];
      return { headers, body: JSON.stringify({ message }) };
    }
    case "ollama":
      return { headers, body: JSON.stringify({ error: message }) };
    default: {
      // OpenAI's shape (Chat, Responses, and any other path): `error.type` also reads as Anthropic's inner error.
      const type = { too_large: "invalid_request_error", forbidden: "permission_error", not_found: "not_found_error", upstream: "api_error", unavailable: "api_error", invalid: "invalid_request_error" }[kind];
      const code = kind === "too_large" ? "request_too_large" : null;
      return { headers, body: JSON.stringify({ error: { message, type, param: null, code } }) };
    }
  }
}

/** Sends an error the proxy answers itself (see `errorResponse`). */
export function sendError(res: ServerResponse, provider: ProviderName | null, status: number, message: string, extra: Record<string, string> = {}): void {
  if (writeError(res, provider, status, message, extra)) res.end();
}

/**
 * Writes the whole of an error the proxy answers itself but does not end the response (which
 * would let Node close the connection): for a caller that must first read the rest of the
 * request. False when the headers were already sent (the response is then destroyed).
 */
export function writeError(res: ServerResponse, provider: ProviderName | null, status: number, message: string, extra: Record<string, string> = {}): boolean {
  const { headers, body } = errorResponse(provider, status, `toolwire proxy: ${message}`);
  if (res.headersSent) {
    res.destroy();
    return false;
  }
  res.writeHead(status, { ...headers, ...extra, "content-length": String(Buffer.byteLength(body)) });
  res.write(body);
  return true;
}

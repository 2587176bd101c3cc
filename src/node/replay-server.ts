import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { readFile, readdir, stat } from "node:fs/promises";
import { join, relative, resolve } from "node:path";
import { encodeEventStreamMessage, type EventStreamHeaderValue } from "../framing/aws-eventstream.js";
import { concatBytes } from "../util/bytes.js";
import { parseRecords } from "../framing/records.js";
import { detectProvider } from "../providers/detect.js";
import type { ProviderEvent, ProviderName } from "../types.js";
import { ToolwireError } from "../errors.js";
import { replayEvents } from "../replay.js";
import { createReencoder, repairWholeResponse } from "../reencode/index.js";
import type { Reencoder } from "../reencode/types.js";
import type { TextCallSetting } from "../text-calls/options.js";
import { headerCount } from "./proxy-http.js";
import { assembleWholeResponse } from "./whole-response.js";
import { isPlainObject } from "../json/shape.js";

/**
 * A loopback HTTP server that plays recorded streams back as the provider would send them, so
 * that the real SDKs, `fetch`, and an agent under test can be pointed at recordings (`baseURL`).
 *
 * Routes (matched on the end of the path, so any base path works):
 *   POST …/messages                               anthropic         SSE, `event:` lines (whole JSON without `stream: true`)
 *   POST …/chat/completions                       openai-chat       SSE, data lines (whole JSON without `stream: true`)
 *   POST …/responses                              openai-responses  SSE, `event:` lines (whole JSON without `stream: true`)
 *   POST …/models/<model>:streamGenerateContent   gemini            SSE with `alt=sse`, else one JSON array
 *   POST …/models/<model>:generateContent         gemini            whole JSON
 *   POST …/model/<id>/converse-stream             bedrock           application/vnd.amazon.eventstream
 *   POST …/model/<id>/converse                    bedrock           whole JSON
 *   POST …/model/<id>/invoke-with-response-stream anthropic         event stream of base64 `chunk` frames
 *                                                 (Claude on Bedrock: the Messages events, wrapped)
 *   POST …/model/<id>/invoke                      anthropic         whole Messages JSON (Claude on Bedrock)
 *   POST …/api/chat                               ollama            NDJSON (whole JSON with `stream: false`)
 *   GET  /streams                                 the list of stream keys, as JSON
 *
 * A non-streamed request gets a whole response: a recorded one (a `whole` entry) where the
 * chosen entry is one, else the response the recorded stream assembles to, in the provider's
 * non-streamed shape (`assembleWholeResponse`: arguments as sent, not as repaired).
 *
 * Which stream a request gets: the one named by the `x-toolwire-stream` header, the `stream`
 * query parameter or a path that starts with `/stream/<name>/` (so an SDK's baseURL can name it:
 * `http://127.0.0.1:PORT/stream/<name>/v1`); a name is a key from /streams, a unique suffix of one
 * after a `/` or `#`, or any part of exactly one key; an unknown name gets the closest keys in
 * its 404. Otherwise the route's streams in turn, in file order, starting over after the last
 * (round robin per provider, streamed and whole requests counted apart). Pacing by the records' `t` (ms since the stream started) is off unless the server's
 * `pace` option, the `x-toolwire-pace` header or the `pace` query parameter gives a factor
 * (1 = as recorded, 0.1 = ten times faster).
 *
 * With `textCalls`, Chat Completions, Ollama, Anthropic Messages and Responses recordings of a
 * server without a tool parser are served as a server with one would send them: streams through
 * the protocol's re-encoder (calls written into the text become the protocol's calls), whole Chat
 * responses assembled from the turn decoded with `textCalls`, the other whole bodies assembled as
 * recorded and read for text calls as `repairWholeResponse` reads them.
 */

/** The protocols whose recordings `textCalls` serves with the calls read from their text. */
const TEXT_CALL_PROTOCOLS: ReadonlySet<ProviderName> = new Set(["openai-chat", "ollama", "anthropic", "openai-responses"]);

export interface ReplayStream {
  /** `<file path without .ndjson, relative to the path it was found under>`, plus `#<sequence>` if named. */
  key: string;
  file: string;
  sequence: string | null;
  provider: ProviderName;
  events: ProviderEvent[];
  times?: (number | undefined)[];
  /**
   * A recorded non-streamed response (no events): served as recorded to non-streamed requests,
   * and never to a streamed one.
   */
  whole?: RecordedWholeResponse;
}

/** A non-streamed response as recorded: status, content type and the body's text. */
export interface RecordedWholeResponse {
  status: number;
  contentType: string;
  body: string;
}

/** Recorded streams that cannot be served: a missing or unreadable path, a file that does not parse (code `replay_load_failed`). */
export class ReplayLoadError extends ToolwireError {
  constructor(message: string, options?: { cause?: unknown }) {
    super("replay_load_failed", message, options);
  }
}

/** Reads NDJSON record files (directories are searched for `*.ndjson`) into keyed streams. */
export async function loadReplayStreams(paths: readonly string[], options: { cwd?: string; provider?: ProviderName } = {}): Promise<ReplayStream[]> {
  const streams: ReplayStream[] = [];
  for (const path of paths) {
    const absolute = resolve(options.cwd ?? process.cwd(), path);
    let info;
    try {
      info = await stat(absolute);
    } catch {
      throw new ReplayLoadError(`cannot read '${path}': no such file or directory`);
    }
    const files = info.isDirectory()
      ? (await readdir(absolute, { recursive: true })).filter((entry) => entry.endsWith(".ndjson")).sort().map((entry) => join(absolute, entry))
      : [absolute];
    const root = info.isDirectory() ? absolute : resolve(absolute, "..");
    for (const file of files) {
      let text: string;
      try {
        text = await readFile(file, "utf8");
      } catch (error) {
        throw new ReplayLoadError(`cannot read '${file}': ${(error as Error).message}`);
      }
      let parsed;
      try {
        parsed = parseRecords(text);
      } catch (error) {
        throw new ReplayLoadError(`'${file}': ${(error as Error).message}`);
      }
      const name = relative(root, file).replace(/\\/g, "/").replace(/\.ndjson$/, "");
      for (const stream of parsed) {
        let provider: ProviderName;
        try {
          provider = options.provider ?? stream.provider ?? detectProvider(stream.events);
        } catch (error) {
          throw new ReplayLoadError(`'${file}'${stream.sequence ? ` (sequence ${stream.sequence})` : ""}: ${(error as Error).message}`);
        }
        streams.push({
          key: stream.sequence === null ? name : `${name}#${stream.sequence}`,
          file,
          sequence: stream.sequence,
          provider,
          events: stream.events,
          ...(stream.times ? { times: stream.times } : {}),
        });
      }
    }
  }
  return streams;
}

/** One request the replay server answered, for a request log. */
export interface ReplayRequestLog {
  method: string;
  /** The path without the query. */
  path: string;
  status: number;
  /** The stream served (null when none was). */
  stream: string | null;
  provider: ProviderName | null;
  /** Why no stream was served, for an error status. */
  reason?: string;
}

/** Options of `createReplayHandler`: default pacing and a hook called for each served request. */
export interface ReplayHandlerOptions {
  /** Default pacing factor for every response; off when absent. */
  pace?: number;
  /** Called once per served request (tests use it to see what was requested; never logged by default). */
  onServe?: (info: { provider: ProviderName; key: string; path: string }) => void;
  /** Called once per request the handler answers, with its status: `toolwire serve` logs them. */
  onRequest?: (entry: ReplayRequestLog) => void;
  /** Serve Chat Completions and Ollama recordings with the calls written into their text as `tool_calls` (see above); off when absent. */
  textCalls?: TextCallSetting;
}

/** Options of `startReplayServer`: the streams to serve, the port and the handler options. */
export interface ReplayServerOptions extends ReplayHandlerOptions {
  streams: readonly ReplayStream[];
  /** 0 (the default) picks a free port. */
  port?: number;
}

/** A running replay server on 127.0.0.1 (from `startReplayServer`). */
export interface ReplayServer {
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  readonly port: number;
  readonly streams: readonly ReplayStream[];
  /** Stops listening and ends every open response. */
  close(): Promise<void>;
}

interface Route {
  provider: ProviderName;
  wire: "sse" | "json-array" | "eventstream" | "eventstream-chunks" | "ndjson";
  /**
   * How the request says whether it wants a stream: `flag`, by `stream: true` in its JSON body
   * (Ollama: unless `stream: false`); `stream` and `whole`, by the route itself.
   */
  mode: "flag" | "stream" | "whole";
}

function route(path: string, query: URLSearchParams): Route | null {
  if (path.endsWith("/messages")) return { provider: "anthropic", wire: "sse", mode: "flag" };
  if (path.endsWith("/chat/completions")) return { provider: "openai-chat", wire: "sse", mode: "flag" };
  if (path.endsWith("/responses")) return { provider: "openai-responses", wire: "sse", mode: "flag" };
  if (path.endsWith(":streamGenerateContent")) return { provider: "gemini", wire: query.get("alt") === "sse" ? "sse" : "json-array", mode: "stream" };
  if (path.endsWith(":generateContent")) return { provider: "gemini", wire: "json-array", mode: "whole" };
  if (/\/model\/[^/]+\/converse-stream$/.test(path)) return { provider: "bedrock", wire: "eventstream", mode: "stream" };
  if (/\/model\/[^/]+\/converse$/.test(path)) return { provider: "bedrock", wire: "eventstream", mode: "whole" };
  if (/\/model\/[^/]+\/invoke-with-response-stream$/.test(path)) return { provider: "anthropic", wire: "eventstream-chunks", mode: "stream" };
  if (/\/model\/[^/]+\/invoke$/.test(path)) return { provider: "anthropic", wire: "eventstream-chunks", mode: "whole" };
  if (path.endsWith("/api/chat")) return { provider: "ollama", wire: "ndjson", mode: "flag" };
  return null;
}

/** The stream a path names: `/stream/<name>/…` (percent-encoded, since keys hold `/` and `#`). */
export function streamOfPath(path: string): string | null {
  const match = /^\/stream\/([^/]+)\//.exec(path);
  if (!match) return null;
  try {
    return decodeURIComponent(match[1] as string);
  } catch {
    return match[1] as string;
  }
}

const CONTENT_TYPES: Record<Route["wire"], string> = {
  sse: "text/event-stream; charset=utf-8",
  "json-array": "application/json; charset=utf-8",
  eventstream: "application/vnd.amazon.eventstream",
  "eventstream-chunks": "application/vnd.amazon.eventstream",
  ndjson: "application/x-ndjson",
};

/** The request-id header each provider sends, so SDKs that surface it find one. */
const REQUEST_ID_HEADER: Record<ProviderName, string> = {
  anthropic: "request-id",
  "openai-chat": "x-request-id",
  "openai-responses": "x-request-id",
  gemini: "x-goog-request-id",
  bedrock: "x-amzn-requestid",
  ollama: "x-request-id",
};


/** One event in the provider's wire format. */
function encodeEvent(provider: ProviderName, wire: Route["wire"], event: ProviderEvent, first: boolean): string | Uint8Array {
  let data = event.data;
  let name = event.event;
  if ((wire === "sse" || wire === "eventstream-chunks") && (provider === "anthropic" || provider === "openai-responses") && isPlainObject(data)) {
    // These providers put the event name both on the `event:` line and in the payload's `type`.
    // Recordings keep only one of them at times (chunk-per-line fixtures lose the name; kilroy's
    // hand-written records omit `type`), and SDK users see only the payload, so both are restored.
    if (name === undefined && typeof data.type === "string") name = data.type;
    if (name !== undefined && name !== "error" && data.type === undefined) data = { type: name, ...data };
  }
  const payload = typeof data === "string" ? data : JSON.stringify(data ?? null);
  switch (wire) {
    case "sse": {
      let out = name !== undefined ? `event: ${name}\n` : "";
      for (const line of payload.split("\n")) out += `data: ${line}\n`;
      return out + "\n";
    }
    case "json-array":
      return (first ? "[" : ",\r\n") + payload;
    case "ndjson":
      return payload + "\n";
    case "eventstream":
      return encodeFrame(event);
    case "eventstream-chunks": {
      if (event.event === "exception" || event.event === "error") return encodeFrame(event);
      const bytes = new TextEncoder().encode(payload);
      return encodeEventStreamMessage(
        { ":event-type": "chunk", ":content-type": "application/json", ":message-type": "event" },
        JSON.stringify({ bytes: Buffer.from(bytes).toString("base64") }),
      );
    }
  }
}

function encodeFrame(original: ProviderEvent): Uint8Array {
  const event = unwrapSdkForm(original);
  const data = event.data;
  if (event.event === "exception" && isPlainObject(data)) {
    const { exceptionType, ...rest } = data;
    const headers: Record<string, EventStreamHeaderValue> = { ":message-type": "exception", ":content-type": "application/json" };
    if (typeof exceptionType === "string") headers[":exception-type"] = exceptionType;
    return encodeEventStreamMessage(headers, JSON.stringify(rest));
  }
  if (event.event === "error" && isPlainObject(data) && ("errorCode" in data || "errorMessage" in data)) {
    const headers: Record<string, EventStreamHeaderValue> = { ":message-type": "error" };
    if (typeof data.errorCode === "string") headers[":error-code"] = data.errorCode;
    if (typeof data.errorMessage === "string") headers[":error-message"] = data.errorMessage;
    return encodeEventStreamMessage(headers, "");
  }
  const headers: Record<string, EventStreamHeaderValue> = { ":message-type": "event", ":content-type": "application/json" };
  if (event.event !== undefined) headers[":event-type"] = event.event;
  return encodeEventStreamMessage(headers, typeof data === "string" ? data : JSON.stringify(data ?? null));
}

/**
 * A record in the AWS SDK's one-key form (`{"contentBlockDelta": {...}}`, `{"throttlingException":
 * {...}}`, as the Vercel AI SDK fixtures store them) as the wire carries it: the key is the
 * `:event-type` (or the exception type) and the inner object the payload, so that Bedrock clients,
 * which read `:event-type`, see the events.
 */
function unwrapSdkForm(event: ProviderEvent): ProviderEvent {
  if (event.event !== undefined || !isPlainObject(event.data)) return event;
  const keys = Object.keys(event.data);
  if (keys.length !== 1) return event;
  const key = keys[0] as string;
  const inner = event.data[key];
  if (!isPlainObject(inner)) return event;
  if (key.endsWith("Exception")) return { event: "exception", data: { exceptionType: key, ...inner } };
  return /^(messageStart|contentBlockStart|contentBlockDelta|contentBlockStop|messageStop|metadata)$/.test(key) ? { event: key, data: inner } : event;
}

function parsePace(value: string | null | undefined, fallback: number | undefined): number | undefined | Error {
  if (value === null || value === undefined || value === "") return fallback;
  const factor = Number(value);
  if (!Number.isFinite(factor) || factor < 0) return new Error(`pace must be a non-negative number (1 = as recorded), got '${value}'`);
  return factor;
}

/** Only loopback names: a page on another origin that rebinds its DNS to 127.0.0.1 is refused. */
function isLoopbackHost(host: string | undefined): boolean {
  if (!host) return true;
  const name = host.replace(/:\d+$/, "").replace(/^\[|\]$/g, "").toLowerCase();
  return name === "127.0.0.1" || name === "localhost" || name === "::1";
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json; charset=utf-8", "content-length": Buffer.byteLength(text) });
  res.end(text);
}

/** An error body in the shape both SDKs parse into their `APIError` message. */
function sendError(res: ServerResponse, status: number, type: string, message: string): void {
  sendJson(res, status, { type: "error", error: { type, message: `toolwire serve: ${message}` } });
}

async function readBody(req: IncomingMessage, limit = 16 * 1024 * 1024): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > limit) throw new ToolwireError("body_too_large", `request body larger than ${limit} bytes`);
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString("utf8");
}

/**
 * The request handler on its own, to mount beside other routes (the browser test serves its page
 * from the same origin). Returns false for a request it does not handle, leaving `res` untouched.
 */
export function createReplayHandler(streams: readonly ReplayStream[], options: ReplayHandlerOptions = {}): (req: IncomingMessage, res: ServerResponse) => boolean {
  const turns = new Map<string, number>();
  let requests = 0;

  const pick = (provider: ProviderName, wanted: string | null, whole: boolean): ReplayStream | string => {
    // A recorded whole response has no events to stream: only non-streamed requests get one.
    const candidates = streams.filter((stream) => stream.provider === provider && (whole || stream.whole === undefined));
    if (wanted !== null) {
      const found = findStream(candidates, wanted);
      if (!Array.isArray(found)) return found;
      if (found.length > 1) return `stream '${wanted}' is ambiguous: it matches ${listKeys(found)}`;
      const elsewhere = findStream(streams, wanted);
      if (!Array.isArray(elsewhere)) return `stream '${wanted}' is a ${elsewhere.provider} stream${elsewhere.key !== wanted ? ` (${elsewhere.key})` : ""}; this route serves ${provider}`;
      const closest = closestKeys(candidates, wanted, 3);
      return `no ${provider} stream matches '${wanted}'${closest.length > 0 ? `; closest: ${closest.join(", ")}` : ""}; GET /streams lists them`;
    }
    if (candidates.length === 0) return `no ${provider} streams are loaded`;
    const turn = `${provider} ${whole ? "whole" : "stream"}`;
    const next = turns.get(turn) ?? 0;
    turns.set(turn, next + 1);
    return candidates[next % candidates.length] as ReplayStream;
  };

  const log = (req: IncomingMessage, res: ServerResponse, path: string, stream: ReplayStream | null, reason?: string): void => {
    options.onRequest?.({ method: req.method ?? "?", path, status: res.statusCode, stream: stream?.key ?? null, provider: stream?.provider ?? null, ...(reason !== undefined ? { reason } : {}) });
  };

  return (req, res) => {
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    const handled = handle(req, res, url);
    return handled;
  };

  function handle(req: IncomingMessage, res: ServerResponse, url: URL): boolean {
    if (headerCount(req, "host") > 1) {
      sendError(res, 400, "invalid_request_error", "more than one Host header");
      log(req, res, url.pathname, null, "duplicate Host");
      return true;
    }
    if (!isLoopbackHost(req.headers.host)) {
      sendError(res, 403, "permission_error", `refusing Host '${req.headers.host ?? ""}': the replay server answers loopback names only`);
      log(req, res, url.pathname, null, "not a loopback Host");
      return true;
    }
    if (url.pathname === "/streams" && req.method !== "GET" && req.method !== "HEAD") {
      res.setHeader("allow", "GET, HEAD");
      sendError(res, 405, "invalid_request_error", `${req.method ?? "?"} /streams: the list is read with GET`);
      log(req, res, url.pathname, null, "the list is read with GET");
      return true;
    }
    if (url.pathname === "/streams") {
      // HEAD as GET (RFC 9110 §9.3.2): Node leaves the body out.
      sendJson(res, 200, { streams: streams.map((stream) => ({ key: stream.key, provider: stream.provider, events: stream.events.length, timed: stream.times !== undefined, ...(stream.whole ? { whole: true } : {}) })) });
      log(req, res, url.pathname, null);
      return true;
    }
    const target = route(url.pathname, url.searchParams);
    if (!target) return false;
    if (req.method !== "POST") {
      res.setHeader("allow", "POST");
      sendError(res, 405, "invalid_request_error", `${req.method ?? "?"} ${url.pathname}: streams are requested with POST`);
      log(req, res, url.pathname, null, "streams are requested with POST");
      return true;
    }
    void serve(req, res, url, target).catch((error: unknown) => {
      const tooLarge = error instanceof ToolwireError && error.code === "body_too_large";
      // The rest of a body too large is not read: the connection closes after the answer.
      if (tooLarge && !res.headersSent) res.setHeader("connection", "close");
      if (!res.headersSent) sendError(res, tooLarge ? 413 : 500, tooLarge ? "request_too_large" : "api_error", (error as Error).message);
      else res.destroy(error as Error);
      log(req, res, url.pathname, null, (error as Error).message);
    });
    return true;
  }

  async function serve(req: IncomingMessage, res: ServerResponse, url: URL, target: Route): Promise<void> {
    const body = await readBody(req);
    let streaming = target.mode === "stream";
    if (target.mode === "flag") {
      let parsed: unknown = null;
      try {
        parsed = body === "" ? null : JSON.parse(body);
      } catch {
        sendError(res, 400, "invalid_request_error", "the request body is not JSON");
        log(req, res, url.pathname, null, "request body is not JSON");
        return;
      }
      const streamFlag = isPlainObject(parsed) ? parsed.stream : undefined;
      streaming = target.provider === "ollama" ? streamFlag !== false : streamFlag === true;
    }
    const header = req.headers["x-toolwire-stream"];
    const wanted = (Array.isArray(header) ? header[0] : header) ?? url.searchParams.get("stream") ?? streamOfPath(url.pathname);
    const chosen = pick(target.provider, wanted ?? null, !streaming);
    if (typeof chosen === "string") {
      sendError(res, 404, "not_found_error", chosen);
      log(req, res, url.pathname, null, chosen);
      return;
    }
    const paceHeader = req.headers["x-toolwire-pace"];
    const pace = parsePace((Array.isArray(paceHeader) ? paceHeader[0] : paceHeader) ?? url.searchParams.get("pace"), options.pace);
    if (pace instanceof Error) {
      sendError(res, 400, "invalid_request_error", pace.message);
      log(req, res, url.pathname, null, pace.message);
      return;
    }
    options.onServe?.({ provider: target.provider, key: chosen.key, path: url.pathname });
    requests++;
    const headers = {
      [REQUEST_ID_HEADER[target.provider]]: `req_toolwire_replay_${requests}`,
      "x-toolwire-stream": encodeURIComponent(chosen.key),
    };
    if (!streaming) {
      const textCalls = chosen.provider === "openai-chat" ? textCallsFor(chosen.provider) : {};
      let assembled = assembleWholeResponse(target.provider, replayEvents({ sequence: chosen.sequence, provider: chosen.provider, events: chosen.events }, { provider: chosen.provider, ...textCalls }));
      // The other protocols' bodies are assembled as recorded, then read for text calls as the proxy reads a whole body.
      const later = chosen.provider !== "openai-chat" && target.provider === chosen.provider ? textCallsFor(chosen.provider) : {};
      if (later.textCalls !== undefined) assembled = repairWholeResponse(target.provider, assembled, later).body as Record<string, unknown>;
      const whole = chosen.whole ?? { status: 200, contentType: "application/json", body: JSON.stringify(assembled) };
      res.writeHead(whole.status, { "content-type": whole.contentType, "content-length": Buffer.byteLength(whole.body), ...headers });
      res.end(whole.body);
      log(req, res, url.pathname, chosen);
      return;
    }
    res.writeHead(200, { "content-type": CONTENT_TYPES[target.wire], "cache-control": "no-cache", ...headers });
    res.flushHeaders();
    log(req, res, url.pathname, chosen);
    const textCalls = textCallsFor(chosen.provider);
    await writeEvents(res, target, chosen, pace, textCalls.textCalls && target.wire !== "json-array" ? createReencoder(chosen.provider, textCalls) : null);
  }

  /** The decoder options that read text calls, for the protocols whose re-encoders write them (Chat, Ollama, Messages, Responses). */
  function textCallsFor(provider: ProviderName): { textCalls?: TextCallSetting } {
    return options.textCalls !== undefined && TEXT_CALL_PROTOCOLS.has(provider) ? { textCalls: options.textCalls } : {};
  }
}

/**
 * The stream a request names: the key itself, else the one key ending in `/<wanted>` or
 * `#<wanted>`, else the one key containing it. Several matches of the same kind: all of them.
 */
export function findStream(streams: readonly ReplayStream[], wanted: string): ReplayStream | ReplayStream[] {
  const exact = streams.find((stream) => stream.key === wanted);
  if (exact) return exact;
  const suffix = streams.filter((stream) => stream.key.endsWith(`/${wanted}`) || stream.key.endsWith(`#${wanted}`));
  if (suffix.length === 1) return suffix[0] as ReplayStream;
  if (suffix.length > 1) return suffix;
  if (wanted === "") return [];
  const lower = wanted.toLowerCase();
  const containing = streams.filter((stream) => stream.key.toLowerCase().includes(lower));
  return containing.length === 1 ? (containing[0] as ReplayStream) : containing;
}

function listKeys(streams: readonly ReplayStream[], max = 8): string {
  const keys = streams.slice(0, max).map((stream) => stream.key);
  return keys.join(", ") + (streams.length > max ? `, … (${streams.length - max} more)` : "");
}

/**
 * The keys most like `wanted`, best first: edit distance to the key's last segment (or the whole
 * key, whichever is closer). Both strings are capped at 200 characters, so a guess costs at most
 * 40,000 steps per key.
 */
export function closestKeys(streams: readonly ReplayStream[], wanted: string, count: number): string[] {
  const target = wanted.toLowerCase().slice(0, 200);
  const scored = streams.map((stream) => {
    const key = stream.key.toLowerCase();
    const last = key.slice(Math.max(key.lastIndexOf("/"), key.lastIndexOf("#")) + 1);
    return { key: stream.key, score: Math.min(editDistance(target, last.slice(0, 200)), editDistance(target, key.slice(0, 200))) };
  });
  scored.sort((a, b) => a.score - b.score || (a.key < b.key ? -1 : 1));
  // Only keys that share something with the guess: at most as many edits as the guess is long, less one.
  return scored.filter((entry) => entry.score < Math.max(1, target.length)).slice(0, count).map((entry) => entry.key);
}

/** Levenshtein distance with two rows. */
function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  let current = new Array<number>(b.length + 1).fill(0);
  for (let i = 1; i <= a.length; i++) {
    current[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a.charCodeAt(i - 1) === b.charCodeAt(j - 1) ? 0 : 1;
      current[j] = Math.min((previous[j] as number) + 1, (current[j - 1] as number) + 1, (previous[j - 1] as number) + cost);
    }
    [previous, current] = [current, previous];
  }
  return previous[b.length] as number;
}

/** Writes a stream's events; through `reencoder` when one is given (`textCalls`), which may hold some until the end. */
async function writeEvents(res: ServerResponse, target: Route, stream: ReplayStream, pace: number | undefined, reencoder: Reencoder | null): Promise<void> {
  let closed = false;
  let wake: (() => void) | null = null;
  const onClose = (): void => {
    closed = true;
    wake?.();
  };
  res.on("close", onClose);
  const started = performance.now();
  try {
    for (let i = 0; i < stream.events.length; i++) {
      const t = stream.times?.[i];
      if (pace !== undefined && pace > 0 && t !== undefined) {
        const due = started + t * pace - performance.now();
        if (due > 0) {
          await new Promise<void>((resolve) => {
            const timer = setTimeout(resolve, due);
            wake = () => {
              clearTimeout(timer);
              resolve();
            };
          });
          wake = null;
        }
      }
      // The client went away (an aborted request, a watchdog): stop, and hold no timer.
      if (closed) return;
      const encoded = encodeEvent(stream.provider, target.wire, stream.events[i] as ProviderEvent, i === 0);
      const chunk = reencoder === null ? encoded : concatBytes(reencoder.push(typeof encoded === "string" ? new TextEncoder().encode(encoded) : encoded));
      if (chunk.length > 0 && !res.write(chunk)) {
        await new Promise<void>((resolve) => {
          wake = resolve;
          res.once("drain", resolve);
        });
        wake = null;
        if (closed) return;
      }
    }
    if (reencoder !== null) for (const piece of reencoder.flush()) res.write(piece);
    if (target.wire === "json-array") res.write(stream.events.length === 0 ? "[]" : "]");
    res.end();
  } finally {
    res.off("close", onClose);
  }
}

/** Starts a replay server on 127.0.0.1 (never another interface). */
export async function startReplayServer(options: ReplayServerOptions): Promise<ReplayServer> {
  const handler = createReplayHandler(options.streams, options);
  const server: Server = createServer((req, res) => {
    if (!handler(req, res)) {
      sendError(res, 404, "not_found_error", `no route for ${req.method ?? "?"} ${req.url ?? ""}; see GET /streams and the routes in the README`);
      options.onRequest?.({ method: req.method ?? "?", path: (req.url ?? "/").split("?")[0] as string, status: 404, stream: null, provider: null, reason: "no route" });
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, "127.0.0.1", () => {
      server.off("error", reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    streams: options.streams,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        // Paced responses and idle keep-alive sockets would hold close() open.
        server.closeAllConnections();
      }),
  };
}

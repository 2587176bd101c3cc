import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { connect } from "node:net";
import { listening } from "../../bench/loopback.js";
import { startProxy, type ProxyServer } from "../../src/node/proxy.js";

/** Loopback HTTP helpers for the proxy's tests: a raw-socket client and an upstream that records what reaches it. */

export interface RawResponse {
  /** Every byte the server sent, interim responses included. */
  raw: Buffer;
  status: number;
  /** The final response's headers, names lower-cased, repeated ones joined with ", ". */
  headers: Record<string, string>;
  /** The final response's body, de-chunked when it was chunked. */
  body: Buffer;
  /** Trailer fields of a chunked body, names lower-cased. */
  trailers: Record<string, string>;
  /** The status codes of the interim (1xx) responses before the final one. */
  interim: number[];
}

/** Splits an HTTP/1.x response (as one buffer read until the connection closed) into its parts. */
export function parseResponse(raw: Buffer): RawResponse {
  let offset = 0;
  const interim: number[] = [];
  for (;;) {
    const end = raw.indexOf("\r\n\r\n", offset);
    if (end < 0) throw new Error(`no complete response head in ${JSON.stringify(raw.toString("latin1").slice(0, 200))}`);
    const head = raw.subarray(offset, end).toString("latin1").split("\r\n");
    const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(head[0] ?? "")?.[1]);
    if (status >= 100 && status < 200) {
      interim.push(status);
      offset = end + 4;
      continue;
    }
    const headers: Record<string, string> = {};
    for (const line of head.slice(1)) {
      const colon = line.indexOf(":");
      const name = line.slice(0, colon).trim().toLowerCase();
      const value = line.slice(colon + 1).trim();
      headers[name] = headers[name] === undefined ? value : `${headers[name]}, ${value}`;
    }
    let body = raw.subarray(end + 4);
    const trailers: Record<string, string> = {};
    if ((headers["transfer-encoding"] ?? "").toLowerCase().includes("chunked")) {
      const parts: Buffer[] = [];
      let at = 0;
      for (;;) {
        const lineEnd = body.indexOf("\r\n", at);
        if (lineEnd < 0) break;
        const size = parseInt(body.subarray(at, lineEnd).toString("latin1"), 16);
        if (size === 0) {
          for (const line of body.subarray(lineEnd + 2).toString("latin1").split("\r\n")) {
            const colon = line.indexOf(":");
            if (colon > 0) trailers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
          }
          break;
        }
        parts.push(body.subarray(lineEnd + 2, lineEnd + 2 + size));
        at = lineEnd + 2 + size + 2;
      }
      body = Buffer.concat(parts);
    }
    return { raw, status, headers, body, trailers, interim };
  }
}

/**
 * Sends `parts` over one raw TCP connection to 127.0.0.1:`port` (each part after the server's
 * answer to the previous one when `waitFor` says so) and reads until the server closes or
 * `timeoutMs` passes with nothing more.
 */
export function rawRequest(port: number, parts: Array<string | Buffer>, options: { waitFor?: RegExp; timeoutMs?: number } = {}): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1");
    const chunks: Buffer[] = [];
    let timer: NodeJS.Timeout | undefined;
    const idle = (): void => {
      clearTimeout(timer);
      timer = setTimeout(() => socket.end(), options.timeoutMs ?? 3000);
    };
    let sent = 0;
    const sendNext = (): void => {
      const part = parts[sent++];
      if (part !== undefined) socket.write(part);
    };
    socket.on("connect", () => {
      sendNext();
      if (!options.waitFor) while (sent < parts.length) sendNext();
      idle();
    });
    socket.on("data", (chunk: Buffer) => {
      chunks.push(chunk);
      idle();
      if (options.waitFor && sent < parts.length && options.waitFor.test(Buffer.concat(chunks).toString("latin1"))) while (sent < parts.length) sendNext();
    });
    socket.on("error", reject);
    socket.on("close", () => {
      clearTimeout(timer);
      try {
        resolve(parseResponse(Buffer.concat(chunks)));
      } catch (error) {
        reject(error as Error);
      }
    });
  });
}

export interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage["headers"];
  rawHeaders: string[];
  body: Buffer;
}

export interface RecordingUpstream {
  url: string;
  port: number;
  seen: Seen[];
  close(): Promise<void>;
}

/** An upstream on loopback that records every request (with its body's bytes) and answers with `respond` (default: 200 `{"ok":true}`). */
export async function recordingUpstream(respond?: (seen: Seen, res: ServerResponse) => void): Promise<RecordingUpstream> {
  const seen: Seen[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const entry: Seen = { method: req.method ?? "", url: req.url ?? "", headers: req.headers, rawHeaders: req.rawHeaders, body: Buffer.concat(chunks) };
      seen.push(entry);
      if (respond) respond(entry, res);
      else {
        res.writeHead(200, { "content-type": "application/json" });
        res.end('{"ok":true}');
      }
    });
  });
  return { ...(await listening(server)), seen };
}

/** A request head for the raw client: `Host: 127.0.0.1` and `Connection: close` unless given. */
export function head(requestLine: string, headers: Record<string, string | number> = {}, extra: string[] = []): string {
  const lines = [requestLine];
  const names = new Set(Object.keys(headers).map((name) => name.toLowerCase()));
  if (!names.has("host")) lines.push("Host: 127.0.0.1");
  if (!names.has("connection")) lines.push("Connection: close");
  for (const [name, value] of Object.entries(headers)) lines.push(`${name}: ${value}`);
  lines.push(...extra);
  return `${lines.join("\r\n")}\r\n\r\n`;
}

/** An upstream that answers with `respond`, and two proxies in front of it: with the withheld-call notice, and without. */
export interface NoticeRig {
  upstream: RecordingUpstream;
  withNotice: ProxyServer;
  without: ProxyServer;
  close(): Promise<void>;
}

export async function noticeRig(respond: (seen: Seen, res: ServerResponse) => void): Promise<NoticeRig> {
  const upstream = await recordingUpstream(respond);
  const withNotice = await startProxy({ upstream: upstream.url, withheldNotice: true });
  const without = await startProxy({ upstream: upstream.url });
  return {
    upstream,
    withNotice,
    without,
    close: async () => {
      await withNotice.close();
      await without.close();
      await upstream.close();
    },
  };
}

/** A request's body as text. */
export async function readRequestBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

/**
 * Writes a body in pieces of the given byte sizes (cycled), each its own write on the socket, as a
 * server streaming tokens sends them, then ends the response.
 */
export async function writeInPieces(res: ServerResponse, body: string, sizes: readonly number[]): Promise<void> {
  const bytes = Buffer.from(body, "utf8");
  let at = 0;
  for (let turn = 0; at < bytes.length; turn++) {
    const size = Math.max(1, sizes[turn % sizes.length] as number);
    res.write(bytes.subarray(at, at + size));
    at += size;
    await new Promise((resolve) => setImmediate(resolve));
  }
  res.end();
}

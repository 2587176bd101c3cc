import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from "node:http";
import { Agent as HttpsAgent, request as httpsRequest } from "node:https";
import type { Socket } from "node:net";
import { Readable, pipeline, type Transform } from "node:stream";
import { createBrotliDecompress, createGunzip, createInflate } from "node:zlib";
import type { ReadableStream as NodeReadableStream } from "node:stream/web";
import type { FetchLike } from "../fetch/index.js";

/**
 * A Node response as a web stream that reads a chunk only when one is asked for: the response is
 * paused in between, so a slow client holds the upstream back (TCP) instead of the proxy buffering
 * its answer. Cancelling destroys the response.
 */
function webBody(res: Readable, direct: IncomingMessage | null): ReadableStream<Uint8Array> {
  let reading = false;
  let detach = (): void => {};
  const stream = new ReadableStream<Uint8Array>(
    {
      start(controller) {
        const end = (): void => controller.close();
        const error = (cause: Error): void => controller.error(cause);
        const cut = (): void => controller.error(new Error("the upstream response was cut"));
        res.once("end", end);
        res.once("error", error);
        res.once("aborted", cut);
        detach = () => {
          res.off("end", end);
          res.off("error", error);
          res.off("aborted", cut);
        };
      },
      pull(controller) {
        if (!reading) {
          // The response flows only once the body is read: until then it may be taken whole (takeNodeBody).
          reading = true;
          res.on("data", (chunk: Buffer) => {
            controller.enqueue(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.length));
            if ((controller.desiredSize ?? 0) <= 0) res.pause();
          });
        }
        res.resume();
      },
      cancel() {
        res.destroy();
      },
    },
    { highWaterMark: 0 },
  );
  if (direct !== null) {
    nodeBodies.set(stream, () => {
      // A response that failed before its body was read: the stream has the error to tell.
      if (reading || direct.destroyed) return null;
      reading = true;
      detach();
      nodeBodies.delete(stream);
      return direct;
    });
  }
  return stream;
}

/**
 * The decoder of a content coding fetch undoes (gzip, deflate, br), or null. The proxy asks for
 * `identity`; an upstream may compress all the same (no header, or a cache in front of it), and
 * then the body is decoded as fetch decodes it, the `Content-Encoding` header left as it came.
 */
function contentDecoder(coding: string | undefined): Transform | null {
  const name = (coding ?? "").trim().toLowerCase();
  if (name === "gzip" || name === "x-gzip") return createGunzip();
  if (name === "deflate") return createInflate();
  if (name === "br") return createBrotliDecompress();
  return null;
}

const nodeBodies = new WeakMap<ReadableStream<Uint8Array>, () => IncomingMessage | null>();

/**
 * The Node response under a body `createUpstreamFetch` made, if the body has not been read: the
 * caller reads it itself (the body is then left unread for good). Null for any other stream.
 */
export function takeNodeBody(stream: ReadableStream<Uint8Array>): IncomingMessage | null {
  return nodeBodies.get(stream)?.() ?? null;
}

/**
 * The proxy's upstream client: a `fetch` on node:http(s) with keep-alive agents, with what a
 * reverse proxy needs of fetch and nothing more. A redirect goes back to the client as it came
 * (nginx and Envoy do not follow one either; the global fetch would, resending the body). It asks
 * for `identity` (the proxy reads bodies, and compressing them only to inflate them again costs
 * both hops), and decodes gzip, deflate and br when an upstream compresses all the same, leaving
 * `Content-Encoding` as it came, as fetch does. Cheaper than the global fetch per request and per
 * chunk (see docs/proxy.md, Cost).
 */
export function createUpstreamFetch(): FetchLike {
  const agents = {
    "http:": new HttpAgent({ keepAlive: true, scheduling: "lifo" }),
    "https:": new HttpsAgent({ keepAlive: true, scheduling: "lifo" }),
  };
  return (input, init) =>
    new Promise<Response>((resolve, reject) => {
      const url = new URL(typeof input === "string" ? input : input instanceof URL ? input.href : input.url);
      if (url.protocol !== "http:" && url.protocol !== "https:") {
        reject(new TypeError(`unsupported protocol ${url.protocol}`));
        return;
      }
      const method = init?.method ?? "GET";
      // Bodies come as sent unless asked otherwise: the proxy reads them (fetch would ask for gzip, deflate and br).
      const headers: Record<string, string | string[]> = { "accept-encoding": "identity" };
      new Headers(init?.headers).forEach((value, name) => {
        if (name === "set-cookie") return;
        headers[name] = value;
      });
      const signal = init?.signal ?? undefined;
      if (signal?.aborted) {
        reject(signal.reason instanceof Error ? signal.reason : new Error("aborted"));
        return;
      }
      const send = url.protocol === "https:" ? httpsRequest : httpRequest;
      const req = send(url, { method, headers, agent: agents[url.protocol], ...(signal ? { signal } : {}) }, (res: IncomingMessage) => {
        const out = new Headers();
        const raw = res.rawHeaders;
        for (let i = 0; i + 1 < raw.length; i += 2) {
          try {
            out.append(raw[i] as string, raw[i + 1] as string);
          } catch {
            // A header value fetch's Headers refuses: not forwarded.
          }
        }
        const status = res.statusCode ?? 502;
        const empty = status === 204 || status === 205 || status === 304 || method === "HEAD";
        if (empty) res.resume();
        try {
          const decoder = empty ? null : contentDecoder(res.headers["content-encoding"]);
          const body = empty ? null : decoder ? webBody(pipeline(res, decoder, () => {}), null) : webBody(res, res);
          resolve(new Response(body, { status, statusText: res.statusMessage ?? "", headers: out }));
        } catch (error) {
          res.destroy();
          reject(error as Error);
        }
      });
      req.on("error", reject);
      // A 101 to a request that asked for no upgrade (the proxy forwards no Upgrade): Node emits
      // neither a response nor an error for it, so without this the request would wait forever.
      req.on("upgrade", (_res: IncomingMessage, socket: Socket) => {
        socket.destroy();
        reject(new Error("the upstream switched protocols (101) on a request that asked for no upgrade"));
      });
      const body = init?.body;
      if (body === undefined || body === null) req.end();
      else if (typeof body === "string" || body instanceof Uint8Array) req.end(body);
      else if (body instanceof ReadableStream) {
        const source = Readable.fromWeb(body as NodeReadableStream<Uint8Array>);
        source.on("error", (error) => req.destroy(error));
        source.pipe(req);
      } else if (body instanceof ArrayBuffer) req.end(new Uint8Array(body));
      else {
        req.destroy();
        reject(new TypeError("unsupported body type"));
      }
    });
}

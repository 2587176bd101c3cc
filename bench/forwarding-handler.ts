import type { IncomingMessage, ServerResponse } from "node:http";
import { forwardBody } from "../src/node/forward-body.js";
import { createUpstreamFetch } from "../src/node/upstream-fetch.js";

/**
 * The byte-forwarding proxy the proxy bench measures toolwire against: a node:http handler in front
 * of the same upstream client as `toolwire proxy` (`createUpstreamFetch`), forwarding request and
 * response bytes untouched, with no toolwire work. In process (bench/proxy.ts) or in a process of
 * its own (bench/forwarding-proxy.ts).
 */
export function forwardingHandler(upstream: string): (req: IncomingMessage, res: ServerResponse) => void {
  const upstreamFetch = createUpstreamFetch();
  return (req, res) => {
    const parts: Buffer[] = [];
    req.on("data", (part: Buffer) => parts.push(part));
    req.on("end", () => {
      void (async () => {
        const response = await upstreamFetch(`${upstream}${req.url ?? "/"}`, { method: req.method, headers: { "content-type": "application/json" }, body: Buffer.concat(parts) });
        res.writeHead(response.status, { "content-type": response.headers.get("content-type") ?? "application/octet-stream" });
        await forwardBody(response.body as ReadableStream<Uint8Array>, res);
        res.end();
      })();
    });
  };
}

import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { forwardBody } from "../src/node/forward-body.js";
import { createUpstreamFetch } from "../src/node/upstream-fetch.js";

/**
 * `node dist/bench/forwarding-proxy.js <upstream>`: the byte-forwarding proxy of the proxy bench in
 * a process of its own (node:http in front of the same upstream client as `toolwire proxy`, no
 * toolwire): prints its URL; `GET /__cpu` answers the process's CPU time in ms.
 */
const upstream = process.argv[2] as string;
const upstreamFetch = createUpstreamFetch();
const server = createServer((req, res) => {
  if (req.url === "/__cpu") {
    const cpu = process.cpuUsage();
    res.end(JSON.stringify({ ms: (cpu.user + cpu.system) / 1000 }));
    return;
  }
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
});
server.listen(0, "127.0.0.1", () => process.stdout.write(`http://127.0.0.1:${(server.address() as AddressInfo).port}\n`));
process.on("SIGTERM", () => {
  server.closeAllConnections();
  server.close(() => process.exit(0));
});

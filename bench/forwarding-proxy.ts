import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { forwardingHandler } from "./forwarding-handler.js";

/**
 * `node dist/bench/forwarding-proxy.js <upstream>`: the byte-forwarding proxy of the proxy bench in
 * a process of its own (node:http in front of the same upstream client as `toolwire proxy`, no
 * toolwire): prints its URL; `GET /__cpu` answers the process's CPU time in ms.
 */
const forward = forwardingHandler(process.argv[2] as string);
const server = createServer((req, res) => {
  if (req.url === "/__cpu") {
    const cpu = process.cpuUsage();
    res.end(JSON.stringify({ ms: (cpu.user + cpu.system) / 1000 }));
    return;
  }
  forward(req, res);
});
server.listen(0, "127.0.0.1", () => process.stdout.write(`http://127.0.0.1:${(server.address() as AddressInfo).port}\n`));
process.on("SIGTERM", () => {
  server.closeAllConnections();
  server.close(() => process.exit(0));
});

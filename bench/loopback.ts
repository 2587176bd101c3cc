import type { ChildProcess } from "node:child_process";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * Loopback plumbing the proxy bench and the proxy's socket tests share: a server on a free port,
 * and the URL a proxy process prints when it listens.
 */

/** `server` listening on a free loopback port: its URL, port, and a close that ends open connections. */
export async function listening(server: Server): Promise<{ url: string; port: number; close(): Promise<void> }> {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The loopback URL `child` prints on stdout once it listens; rejects with `exitMessage()` if it exits first. */
export function printedUrl(child: ChildProcess, exitMessage: () => string): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    let out = "";
    child.stdout?.on("data", (data: Buffer) => {
      out += data.toString();
      const match = /(http:\/\/127\.0\.0\.1:\d+)/.exec(out);
      if (match) resolve(match[1] as string);
    });
    child.on("exit", () => reject(new Error(exitMessage())));
  });
}

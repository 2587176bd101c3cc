#!/usr/bin/env node
import { main } from "./main.js";
import type { CliContext } from "./context.js";

// A reader that stops early (`toolwire replay … | head -1`) closes the pipe: that is not an error.
for (const stream of [process.stdout, process.stderr]) {
  stream.on("error", (error: NodeJS.ErrnoException) => {
    if (error.code === "EPIPE") process.exit(process.exitCode ?? 0);
    throw error;
  });
}

const ctx: CliContext = {
  out: (text) => void process.stdout.write(text),
  err: (text) => void process.stderr.write(text),
  cwd: process.cwd(),
  ...(process.stdout.isTTY ? { columns: process.stdout.columns, rows: process.stdout.rows } : {}),
  isTTY: process.stderr.isTTY === true,
  stdin: process.stdin,
};

main(process.argv.slice(2), ctx).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    // A bug in toolwire, not a mistake of the user's: say so, and give the stack on request.
    const detail = error instanceof Error ? (process.env.TOOLWIRE_DEBUG ? (error.stack ?? error.message) : error.message) : String(error);
    process.stderr.write(`toolwire: internal error: ${detail}\n${process.env.TOOLWIRE_DEBUG ? "" : "(set TOOLWIRE_DEBUG=1 for the stack trace, and please report it)\n"}`);
    process.exitCode = 70;
  },
);

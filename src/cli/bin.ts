#!/usr/bin/env node
import { main } from "./main.js";
import type { CliContext } from "./context.js";

const ctx: CliContext = {
  out: (text) => void process.stdout.write(text),
  err: (text) => void process.stderr.write(text),
  cwd: process.cwd(),
};

main(process.argv.slice(2), ctx).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`toolwire: internal error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exitCode = 70;
  },
);

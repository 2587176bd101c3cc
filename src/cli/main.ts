#!/usr/bin/env node
import { CliError, EXIT, type CliContext, type CommandModule } from "./context.js";

/** Commands load lazily so that `toolwire replay` does not pay for the schema validator. */
const COMMANDS: Record<string, () => Promise<CommandModule>> = {
  replay: () => import("./commands/replay.js"),
  import: () => import("./commands/import.js"),
  conformance: () => import("./commands/conformance.js"),
  history: () => import("./commands/history.js"),
  schema: () => import("./commands/schema.js"),
  serve: () => import("./commands/serve.js"),
};

async function loadCommand(name: string): Promise<CommandModule | null> {
  const load = COMMANDS[name];
  if (!load) return null;
  try {
    return await load();
  } catch (error) {
    if (isModuleNotFound(error)) return null;
    throw error;
  }
}

function isModuleNotFound(error: unknown): boolean {
  return typeof error === "object" && error !== null && (error as { code?: string }).code === "ERR_MODULE_NOT_FOUND";
}

async function help(ctx: CliContext): Promise<void> {
  const lines = ["toolwire: decode LLM provider streams into tool calls you can trust", "", "Commands:"];
  for (const name of Object.keys(COMMANDS)) {
    const command = await loadCommand(name);
    if (command) lines.push(`  ${name.padEnd(12)} ${command.summary}`);
  }
  lines.push("", "Run `toolwire <command> --help` for a command's usage.");
  ctx.out(lines.join("\n") + "\n");
}

export async function main(argv: string[], ctx: CliContext): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === "--help" || name === "-h" || name === "help") {
    await help(ctx);
    return name === undefined ? EXIT.usage : EXIT.ok;
  }
  const command = await loadCommand(name);
  if (!command) {
    ctx.err(`toolwire: unknown command '${name}'. Run 'toolwire --help' for the list.\n`);
    return EXIT.usage;
  }
  if (rest.includes("--help") || rest.includes("-h")) {
    ctx.out(command.usage.endsWith("\n") ? command.usage : command.usage + "\n");
    return EXIT.ok;
  }
  try {
    return await command.run(rest, ctx);
  } catch (error) {
    if (error instanceof CliError) {
      ctx.err(`toolwire ${name}: ${error.message}\n`);
      return error.exitCode;
    }
    throw error;
  }
}

async function isEntryPoint(): Promise<boolean> {
  const script = process.argv[1];
  if (script === undefined) return false;
  const [{ realpathSync }, { pathToFileURL }] = await Promise.all([import("node:fs"), import("node:url")]);
  // npm's bin shims are symlinks: compare real paths.
  try {
    return import.meta.url === pathToFileURL(realpathSync(script)).href;
  } catch {
    return false;
  }
}

if (await isEntryPoint()) {
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
}

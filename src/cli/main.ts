import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { isToolwireError } from "../errors.js";
import { CliError, EXIT, type CliContext, type CommandModule } from "./context.js";
import { printable } from "./text.js";

/**
 * Commands load lazily (one module each under ./commands) so that `toolwire replay` does not pay
 * for the schema validator or fast-check. Static import() calls, so that bundlers see them.
 */
const COMMANDS = {
  replay: () => import("./commands/replay.js"),
  import: () => import("./commands/import.js"),
  conformance: () => import("./commands/conformance.js"),
  expect: () => import("./commands/expect.js"),
  history: () => import("./commands/history.js"),
  schema: () => import("./commands/schema.js"),
  serve: () => import("./commands/serve.js"),
  fuzz: () => import("./commands/fuzz.js"),
  proxy: () => import("./commands/proxy.js"),
} satisfies Record<string, () => Promise<CommandModule>>;

type CommandName = keyof typeof COMMANDS;

/** Exit codes, in `toolwire --help` and the README. */
export const EXIT_CODES_HELP = `Exit codes (every command):
  0  success
  1  the command found what it checks for (history faults, schema problems, conformance
     differences, new fuzz findings)
  2  usage error: unknown command, flag, provider, format or target (one line; see <command> --help)
  3  input error: a path that is missing, unreadable, a directory where a file is needed, or
     empty (no recorded stream in it); larger than toolwire reads (256 MiB, TOOLWIRE_MAX_INPUT_MIB);
     an unrecognized or malformed format; a provider or format not recognizable from the input;
     input refused with a typed error (e.g. too_deep)
  70 internal error: a bug in toolwire (TOOLWIRE_DEBUG=1 prints its stack; please report it)`;

async function loadCommand(name: string): Promise<CommandModule | null> {
  if (!Object.hasOwn(COMMANDS, name)) return null;
  return (await COMMANDS[name as CommandName]()) as CommandModule;
}

/** Set by `npm run build:binary` (esbuild `define`): a single executable has no package.json beside it. */
declare const __TOOLWIRE_VERSION__: string | undefined;

/** toolwire's version, from the package.json above this module (source, tsc build or bundle), or the one built into a single executable. */
export function packageVersion(from?: string): string {
  if (from === undefined && typeof __TOOLWIRE_VERSION__ === "string") return __TOOLWIRE_VERSION__;
  let dir = from ?? dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const candidate = join(dir, "package.json");
    if (existsSync(candidate)) {
      try {
        const pkg = JSON.parse(readFileSync(candidate, "utf8")) as { name?: unknown; version?: unknown };
        if (pkg.name === "toolwire" && typeof pkg.version === "string") return pkg.version;
      } catch {
        // Not ours or not readable: keep looking above.
      }
    }
    const parent = dirname(dir);
    if (parent === dir) return "unknown";
    dir = parent;
  }
}

async function help(ctx: CliContext): Promise<void> {
  const lines = [`toolwire ${packageVersion()}: decode LLM provider streams into tool calls you can trust`, "", "Usage: toolwire <command> [options]", "", "Commands:"];
  for (const name of Object.keys(COMMANDS)) {
    const command = await loadCommand(name);
    if (command) lines.push(`  ${name.padEnd(12)} ${command.summary}`);
  }
  lines.push("", "Run `toolwire <command> --help` for a command's usage; `toolwire --version` prints the version.", "", EXIT_CODES_HELP);
  ctx.out(lines.join("\n") + "\n");
}

export async function main(argv: string[], ctx: CliContext): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === "--help" || name === "-h" || name === "help") {
    await help(ctx);
    return name === undefined ? EXIT.usage : EXIT.ok;
  }
  if (name === "--version" || name === "-V" || name === "version") {
    ctx.out(`${packageVersion()}\n`);
    return EXIT.ok;
  }
  const command = await loadCommand(name);
  if (!command) {
    ctx.err(`toolwire: unknown ${name.startsWith("-") ? "option" : "command"} '${printable(name)}'. Run 'toolwire --help' for the list.\n`);
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
      ctx.err(`toolwire ${name}: ${printable(error.message)}\n`);
      return error.exitCode;
    }
    // toolwire's own typed errors are about the input (e.g. too_deep): an input error, one line.
    if (isToolwireError(error)) {
      ctx.err(`toolwire ${name}: ${printable(error.message)} (${error.code})\n`);
      return EXIT.input;
    }
    throw error;
  }
}

import { isToolwireError } from "../errors.js";
import { CliError, EXIT, type CliContext, type CommandModule } from "./context.js";

/**
 * Commands load lazily (one module each under ./commands) so that `toolwire replay` does not pay
 * for the schema validator; a command whose module is absent from this build is not listed.
 */
const COMMANDS = ["replay", "import", "conformance", "history", "schema", "serve"] as const;

async function loadCommand(name: string): Promise<CommandModule | null> {
  if (!(COMMANDS as readonly string[]).includes(name)) return null;
  try {
    return (await import(/* @vite-ignore */ `./commands/${name}.js`)) as CommandModule;
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
  for (const name of COMMANDS) {
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
    // toolwire's own typed errors are about the input (e.g. too_deep): an input error, one line.
    if (isToolwireError(error)) {
      ctx.err(`toolwire ${name}: ${error.message} (${error.code})\n`);
      return EXIT.input;
    }
    throw error;
  }
}

import { ToolwireError } from "../errors.js";
import { firstEvent } from "../node/first-event.js";

/** What every CLI command gets: output sinks and the working directory, so tests can run commands in-process. */
export interface CliContext {
  out(text: string): void;
  err(text: string): void;
  cwd: string;
  /** Terminal width for reports; absent when stdout is not a terminal (then lines are never cut). */
  columns?: number;
  /** Terminal height: a report longer than this is summarized; 40 when absent. */
  rows?: number;
  /** Whether stderr is a terminal (progress lines are printed only there). */
  isTTY?: boolean;
  /** Standard input, for the path `-` (import, replay). */
  stdin?: AsyncIterable<Uint8Array | string>;
}

/** Exit codes, documented in the README's CLI reference. */
export const EXIT = {
  ok: 0,
  /** The command ran and found what it checks for (invalid calls with --strict, history faults, schema problems). */
  findings: 1,
  usage: 2,
  /** Input that cannot be used: missing, unreadable, a directory where a file is needed, empty; unrecognized format; unknown or ambiguous provider; input toolwire refuses with a typed error (too_deep). */
  input: 3,
} as const;

/** An error meant for the user: printed without a stack trace, with its exit code. */
export class CliError extends ToolwireError {
  constructor(
    message: string,
    readonly exitCode: number = EXIT.usage,
  ) {
    super(exitCode === EXIT.usage ? "usage_error" : exitCode === EXIT.input ? "input_error" : "cli_error", message);
  }
}

export type CommandRunner = (args: string[], ctx: CliContext) => Promise<number>;

export interface CommandModule {
  run: CommandRunner;
  /** One line for `toolwire --help`. */
  summary: string;
  usage: string;
}

/**
 * Serves until the user stops it (Ctrl-C or SIGTERM), then closes the server: what the
 * long-running commands (`serve`, `proxy`) do after they start listening.
 */
export async function serveUntilInterrupted(server: { close(): Promise<void> }, ctx: CliContext, command: string): Promise<number> {
  await firstEvent(process, ["SIGINT", "SIGTERM"]);
  await server.close();
  ctx.err(`toolwire ${command}: stopped\n`);
  return EXIT.ok;
}

import { parseArgs, type ParseArgsConfig } from "node:util";
import { isProviderName, PROVIDERS, type ProviderName } from "../types.js";
import { CliError, EXIT } from "./context.js";

/**
 * Argument parsing shared by the commands, so that every command words a usage mistake the same
 * way: one line (`unknown option --bogus (see 'toolwire replay --help')`), never Node's parser
 * text followed by the whole usage.
 */

type Options = NonNullable<ParseArgsConfig["options"]>;

/** What parseCommandArgs returns for an option table. */
export type ParsedCommandArgs<T extends Options> = ReturnType<typeof parseArgs<{ args: string[]; allowPositionals: true; strict: true; options: T }>>;

/** The one-line usage error every command prints for a mistake on its command line. */
export function usageError(command: string, message: string): CliError {
  return new CliError(`${message} (see 'toolwire ${command} --help')`, EXIT.usage);
}

/** What Node's parseArgs said, as one short sentence of ours. */
export function describeParseError(error: unknown): string {
  const code = (error as { code?: unknown }).code;
  const message = error instanceof Error ? error.message : String(error);
  if (code === "ERR_PARSE_ARGS_UNKNOWN_OPTION") {
    const name = /'([^']+)'/.exec(message)?.[1];
    return `unknown option ${name ?? message}`;
  }
  if (code === "ERR_PARSE_ARGS_INVALID_OPTION_VALUE") {
    const name = /'(-[^' ]+)/.exec(message)?.[1];
    if (/argument missing/.test(message) && name !== undefined) return `option ${name} needs a value`;
    if (/does not take an argument/.test(message) && name !== undefined) return `option ${name} takes no value`;
  }
  if (code === "ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL") {
    const name = /'([^']+)'/.exec(message)?.[1];
    return `unexpected argument ${name ?? message}`;
  }
  return message.split("\n")[0] ?? message;
}

/** Node's parseArgs with positionals allowed and its errors as our one-line usage errors. */
export function parseCommandArgs<T extends Options>(command: string, args: string[], options: T): ParsedCommandArgs<T> {
  try {
    return parseArgs({ args, allowPositionals: true, strict: true, options });
  } catch (error) {
    throw usageError(command, describeParseError(error));
  }
}

/** A `--provider` value: a provider name, or the one usage error every command gives. */
export function providerOption(value: string | undefined): ProviderName | undefined {
  if (value === undefined) return undefined;
  if (!isProviderName(value)) throw new CliError(`unknown provider '${value}'. Expected one of: ${PROVIDERS.join(", ")}.`, EXIT.usage);
  return value;
}

/** The path that means standard input. */
export const STDIN = "-";

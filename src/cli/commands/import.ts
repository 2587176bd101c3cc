import { readFile, writeFile } from "node:fs/promises";
import { basename, resolve } from "node:path";
import { parseArgs } from "node:util";
import { serializeRecords } from "../../framing/records.js";
import { IMPORT_FORMATS_HELP, ImportError, importFile } from "../../import/index.js";
import { isProviderName, PROVIDERS, type ProviderName } from "../../types.js";
import { CliError, EXIT, type CliContext } from "../context.js";

export const summary = "convert a recorded stream (SSE, cassette, httprr, event stream, …) into toolwire NDJSON records";

export const usage = `Usage: toolwire import <file> [--provider P] [--out FILE]

Reads one recorded provider stream in any supported container and writes it as toolwire
NDJSON records (DESIGN.md, "recorded stream files"), one stream per recorded response.

Containers: ${IMPORT_FORMATS_HELP}.

  --provider P   stamp every stream with provider P (${PROVIDERS.join(", ")});
                 default: inferred from the request URL or the framing where the file says, else left out
  --out FILE     write to FILE instead of stdout

Exit codes: 0 imported; 2 usage error (unknown flag or provider); 3 unreadable file,
unrecognized or malformed format, compressed body, or no stream in the file.`;

function parseProvider(value: string | undefined): ProviderName | undefined {
  if (value === undefined) return undefined;
  if (!isProviderName(value)) {
    throw new CliError(`unknown provider '${value}'. Expected one of: ${PROVIDERS.join(", ")}.`, EXIT.usage);
  }
  return value;
}

export async function run(args: string[], ctx: CliContext): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args,
      allowPositionals: true,
      options: { provider: { type: "string" }, out: { type: "string" } },
    });
  } catch (error) {
    throw new CliError(`${(error as Error).message}\n${usage}`, EXIT.usage);
  }
  const { positionals, values } = parsed;
  if (positionals.length !== 1) {
    throw new CliError(`expected exactly one input file, got ${positionals.length}.\n${usage}`, EXIT.usage);
  }
  const provider = parseProvider(values.provider);
  const input = positionals[0] as string;
  const path = resolve(ctx.cwd, input);

  let bytes: Uint8Array;
  try {
    bytes = new Uint8Array(await readFile(path));
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const reason = code === "ENOENT" ? "no such file" : code === "EISDIR" ? "it is a directory" : (error as Error).message;
    throw new CliError(`cannot read '${input}': ${reason}`, EXIT.input);
  }

  let result;
  try {
    result = importFile(basename(path), bytes, provider ? { provider } : {});
  } catch (error) {
    if (error instanceof ImportError) throw new CliError(error.message, EXIT.input);
    throw error;
  }
  if (result.streams.length === 0) {
    const why = result.notes.length > 0 ? `:\n  ${result.notes.join("\n  ")}` : ".";
    throw new CliError(`'${input}' (${result.format}) holds no streamed response${why}`, EXIT.input);
  }

  const header = [`source: ${basename(path)}`, `format: ${result.format} (converted by toolwire import)`, ...result.notes.map((note) => `note: ${note}`)];
  const text = serializeRecords(result.streams, { header });
  if (values.out !== undefined) {
    try {
      await writeFile(resolve(ctx.cwd, values.out), text);
    } catch (error) {
      throw new CliError(`cannot write '${values.out}': ${(error as Error).message}`, EXIT.input);
    }
    const events = result.streams.reduce((sum, stream) => sum + stream.events.length, 0);
    ctx.err(`imported ${result.streams.length} stream(s), ${events} event(s) from '${input}' (${result.format}) to '${values.out}'\n`);
  } else {
    ctx.out(text);
  }
  return EXIT.ok;
}

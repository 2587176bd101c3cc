import { writeFile } from "node:fs/promises";
import { basename, resolve } from "node:path";
import { parseArgs } from "node:util";
import { serializeRecords } from "../../framing/records.js";
import { IMPORT_FORMATS_HELP } from "../../import/index.js";
import { isProviderName, PROVIDERS, type ProviderName } from "../../types.js";
import { CliError, EXIT, type CliContext } from "../context.js";
import { importInput, ioReason } from "../input.js";

export const summary = "convert a recorded stream (SSE, cassette, httprr, event stream, …) into toolwire NDJSON records";

export const usage = `Usage: toolwire import <file> [--provider P] [--out FILE]

Reads one recorded provider stream in any supported container and writes it as toolwire
NDJSON records (docs/design.md, "recorded stream files"), one stream per recorded response.

Containers: ${IMPORT_FORMATS_HELP}.

  --provider P   stamp every stream with provider P (${PROVIDERS.join(", ")});
                 default: inferred from the request URL or the framing where the file says, else left out
  --out FILE     write to FILE instead of stdout

Exit codes: 0 imported; 2 usage error (unknown flag or provider); 3 input error: a path that
is missing, unreadable, a directory or empty; an unrecognized or malformed format, a body in a
compression other than gzip or deflate, or no stream in the file.`;

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

  const result = await importInput({ path, shown: input }, provider ? { provider } : {});

  const header = [`source: ${basename(path)}`, `format: ${result.format} (converted by toolwire import)`, ...result.notes.map((note) => `note: ${note}`)];
  const text = serializeRecords(result.streams, { header });
  if (values.out !== undefined) {
    try {
      await writeFile(resolve(ctx.cwd, values.out), text);
    } catch (error) {
      throw new CliError(`cannot write '${values.out}': ${ioReason(error)}`, EXIT.input);
    }
    const events = result.streams.reduce((sum, stream) => sum + stream.events.length, 0);
    ctx.err(`imported ${result.streams.length} stream(s), ${events} event(s) from '${input}' (${result.format}) to '${values.out}'\n`);
  } else {
    ctx.out(text);
  }
  return EXIT.ok;
}

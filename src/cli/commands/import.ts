import { writeFile } from "node:fs/promises";
import { basename, resolve } from "node:path";
import { serializeRecords, type RecordedStream } from "../../framing/records.js";
import { IMPORT_FORMATS_HELP } from "../../import/index.js";
import { detectProvider } from "../../providers/detect.js";
import { PROVIDERS, type ProviderName } from "../../types.js";
import { parseCommandArgs, providerOption, STDIN, usageError } from "../args.js";
import { CliError, EXIT, type CliContext } from "../context.js";
import { importInput, ioReason, stdinFile } from "../input.js";

export const summary = "convert a recorded stream (SSE, cassette, httprr, event stream, …) into toolwire NDJSON records";

export const usage = `Usage: toolwire import <file|-> [--provider P] [--out FILE]

Reads one recorded provider stream in any supported container ('-': standard input) and writes
it as toolwire NDJSON records (docs/design.md, "recorded stream files"), one stream per recorded
response.

Containers: ${IMPORT_FORMATS_HELP}.

  --provider P   stamp every stream with provider P (${PROVIDERS.join(", ")});
                 default: inferred from the request URL or the framing where the file says, else
                 detected from the payloads (left out when they do not say); a --provider the
                 payloads contradict is kept, with a warning
  --out FILE     write to FILE instead of stdout

Exit codes: 0 imported; 2 usage error (unknown flag or provider); 3 input error: a path that
is missing, unreadable, a directory or empty; an unrecognized or malformed format, a body in a
compression other than gzip or deflate, or no stream in the file.`;

/** The provider the payloads name, or null when they name none or several. */
function detected(stream: RecordedStream): ProviderName | null {
  try {
    return detectProvider(stream.events);
  } catch {
    return null;
  }
}

export async function run(args: string[], ctx: CliContext): Promise<number> {
  const { positionals, values } = parseCommandArgs("import", args, { provider: { type: "string" }, out: { type: "string" } });
  if (positionals.length !== 1) throw usageError("import", `expected exactly one input file, got ${positionals.length}`);
  const provider = providerOption(values.provider);
  const input = positionals[0] as string;
  const path = input === STDIN ? STDIN : resolve(ctx.cwd, input);
  const source = input === STDIN ? stdinFile(ctx.stdin, ctx.cwd) : { path, shown: input };

  const result = await importInput(source, provider ? { provider } : {});
  // The payloads say which provider wrote them: stamp it where the file did not, warn where --provider disagrees.
  const contradicted: string[] = [];
  for (const stream of result.streams) {
    const found = detected(stream);
    if (found === null) continue;
    if (stream.provider === null) stream.provider = found;
    else if (provider !== undefined && found !== provider) contradicted.push(`${stream.sequence ?? "(stream)"} looks like ${found}`);
  }
  if (contradicted.length > 0) {
    ctx.err(`toolwire import: warning: --provider ${provider} but ${contradicted.length === result.streams.length ? "every stream's payloads look like another provider's" : `${contradicted.length} of ${result.streams.length} streams look like another provider's`}: ${contradicted.slice(0, 3).join("; ")}${contradicted.length > 3 ? "; …" : ""}\n`);
  }

  const header = [`source: ${input === STDIN ? "(stdin)" : basename(path)}`, `format: ${result.format} (converted by toolwire import)`, ...result.notes.map((note) => `note: ${note}`)];
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

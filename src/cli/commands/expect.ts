import { existsSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import { relative } from "node:path";
import { expectationPath, expectedStreamOf, type Expectation } from "../../conformance/expectation.js";
import { ProviderDetectionError } from "../../providers/detect.js";
import { replayEvents } from "../../replay.js";
import { PROVIDERS, type ProviderName } from "../../types.js";
import { parseCommandArgs, providerOption, usageError } from "../args.js";
import { CliError, EXIT, type CliContext } from "../context.js";
import { collectInputFiles, inputError, ioReason, loadRecording } from "../input.js";

export const summary = "write the expectation file of each recording, turning captured streams into regression tests";

/** What a freshly written expectation says about itself until a person has checked it. */
export const DRAFT = "DRAFT: written by `toolwire expect` from the current decoder output; check it against the recording, then say here how";

export const usage = `Usage: toolwire expect <file|dir>... [--provider P] [--force]

Decodes each recording (NDJSON records, or any format 'toolwire import' reads; directories are
searched for *.ndjson) and writes what it decodes to beside it: <name>.expected.json for
<name>.ndjson, <file>.expected.json otherwise. 'toolwire conformance <same paths>' then fails
when a later toolwire decodes the recording differently: your captured streams become
regression tests.

An expectation records the tool calls (ids, names, arguments, source, repairs, errors), the
server tool calls and how each stream ended. It is written from the current output: read it
against the recording before trusting it, and set "verifiedBy" to how you checked.

  --provider P   decode as provider P (${PROVIDERS.join(", ")});
                 default: the records' provider field, else detection from the payloads
  --force        overwrite existing expectation files (their "verifiedBy" is kept)

Exit codes: 0 written (or kept); 2 usage error; 3 input error: a path that is missing,
unreadable or empty, an unrecognized format, or a provider not recognizable.`;

export async function run(args: string[], ctx: CliContext): Promise<number> {
  const { values, positionals } = parseCommandArgs("expect", args, { provider: { type: "string" }, force: { type: "boolean", default: false } });
  if (positionals.length === 0) throw usageError("expect", "no file given");
  const forced = providerOption(values.provider);
  const files = (await collectInputFiles(positionals, ctx.cwd)).filter((file) => !file.path.endsWith(".expected.json"));
  if (files.length === 0) throw inputError(positionals.join("', '"), "no .ndjson files in it");

  let wrote = 0;
  let kept = 0;
  for (const file of files) {
    const target = expectationPath(file.path);
    const shownTarget = relative(ctx.cwd, target) || target;
    const exists = existsSync(target);
    const previous = exists ? await readPrevious(target) : null;
    if (exists && !values.force) {
      kept++;
      ctx.out(`kept   ${shownTarget} (exists; --force rewrites it)\n`);
      continue;
    }
    const loaded = await loadRecording(file);
    let expectation: Expectation;
    try {
      const turns = loaded.streams.map((stream) => replayEvents(stream, { ...(forced ? { provider: forced } : {}), ...(loaded.textCalls ? { textCalls: loaded.textCalls } : {}) }));
      const provider = turns[0]?.provider as ProviderName;
      expectation = { provider, verifiedBy: previous?.verifiedBy ?? DRAFT, streams: turns.map(expectedStreamOf) };
    } catch (error) {
      if (error instanceof ProviderDetectionError) throw inputError(file.shown, error.message);
      throw error;
    }
    try {
      await writeFile(target, JSON.stringify(expectation, null, 2) + "\n");
    } catch (error) {
      throw new CliError(`'${shownTarget}': cannot write: ${ioReason(error)}`, EXIT.input);
    }
    wrote++;
    const calls = expectation.streams.reduce((sum, stream) => sum + stream.toolCalls.length, 0);
    ctx.out(`wrote  ${shownTarget} (${expectation.provider}, ${expectation.streams.length} stream(s), ${calls} call(s))\n`);
  }
  ctx.out(`${wrote} written, ${kept} kept. Check each draft against its recording, then: toolwire conformance ${positionals.join(" ")}\n`);
  return EXIT.ok;
}

async function readPrevious(path: string): Promise<Expectation | null> {
  try {
    return JSON.parse(await readFile(path, "utf8")) as Expectation;
  } catch {
    return null;
  }
}

import { relative } from "node:path";
import { startReplayServer, type ReplayRequestLog, type ReplayServer, type ReplayStream } from "../../node/replay-server.js";
import { detectProvider, ProviderDetectionError } from "../../providers/detect.js";
import type { ProviderName } from "../../types.js";
import { parseCommandArgs, providerOption, usageError } from "../args.js";
import { CliError, EXIT, serveUntilInterrupted, type CliContext } from "../context.js";
import { collectInputFiles, inputError, loadRecording } from "../input.js";

export const summary = "serve recorded streams over loopback HTTP as the provider would, for SDKs, fetch and agents under test";

export const usage = `Usage: toolwire serve <file|dir>... [--port N] [--pace F] [--provider P]

Serves the recorded streams in the given files (NDJSON records, or any format 'toolwire import'
reads; directories are searched for *.ndjson) on http://127.0.0.1:<port> (loopback only) in
each provider's wire format. Point an SDK's baseURL, or fetch, at it. Each request is logged on
stderr: method, path, status and the stream served.

  POST …/messages                               anthropic         SSE
  POST …/chat/completions                       openai-chat       SSE
  POST …/responses                              openai-responses  SSE
  POST …/models/<model>:streamGenerateContent   gemini            SSE with ?alt=sse, else a JSON array
  POST …/model/<id>/converse-stream             bedrock           binary event stream
  POST …/model/<id>/invoke-with-response-stream anthropic         binary event stream, base64 chunks (Claude on Bedrock)
  POST …/api/chat                               ollama            NDJSON
  GET  /streams                                 the stream keys, as JSON

A request gets the stream named by its x-toolwire-stream header or ?stream= query parameter
(a key, a unique suffix of one after '/' or '#', or any part of exactly one key; an unknown name
gets the closest keys in its 404); otherwise the route's streams in turn, in file order (round
robin per provider).

  --port N       port to listen on (default: a free one, printed at start)
  --pace F       replay at the recorded pace ('t' offsets) times F (1 = as recorded, 0.1 = 10x
                 faster); per request: x-toolwire-pace header or ?pace=; default: no pauses
  --provider P   serve every stream as provider P (${"anthropic, openai-chat, openai-responses, gemini, bedrock, ollama"});
                 default: the records' provider field, else detection from the payloads

Runs until interrupted (Ctrl-C). Exit codes: 0 stopped; 2 usage error; 3 input error: a path
that is missing, unreadable or empty, an unrecognized format, or a provider not recognizable.`;

interface ServeArgs {
  paths: string[];
  port: number;
  pace: number | undefined;
  provider: ProviderName | undefined;
}

function parse(args: string[]): ServeArgs {
  const { values, positionals } = parseCommandArgs("serve", args, { port: { type: "string" }, pace: { type: "string" }, provider: { type: "string" } });
  if (positionals.length === 0) throw usageError("serve", "no file given");
  const port = values.port === undefined ? 0 : Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new CliError(`--port must be a port number, got '${values.port}'`, EXIT.usage);
  const pace = values.pace === undefined ? undefined : Number(values.pace);
  if (pace !== undefined && (!Number.isFinite(pace) || pace < 0)) throw new CliError(`--pace must be a non-negative number, got '${values.pace}'`, EXIT.usage);
  return { paths: positionals, port, pace, provider: providerOption(values.provider) };
}

/** The recorded streams of the given paths, keyed by file (relative to the folder it was found in) and sequence. */
async function loadStreams(paths: string[], cwd: string, forced: ProviderName | undefined): Promise<ReplayStream[]> {
  const files = await collectInputFiles(paths, cwd);
  if (files.length === 0) throw inputError(paths.join("', '"), "no .ndjson files in it");
  const streams: ReplayStream[] = [];
  for (const file of files) {
    const loaded = await loadRecording(file);
    const name = relative(file.root, file.path).replace(/\\/g, "/").replace(/\.ndjson$/, "");
    for (const stream of loaded.streams) {
      let provider: ProviderName;
      try {
        provider = forced ?? stream.provider ?? detectProvider(stream.events);
      } catch (error) {
        if (error instanceof ProviderDetectionError) throw new CliError(`'${file.shown}'${stream.sequence ? ` (sequence ${stream.sequence})` : ""}: ${error.message}`, EXIT.input);
        throw error;
      }
      streams.push({
        key: stream.sequence === null ? name : `${name}#${stream.sequence}`,
        file: file.path,
        sequence: stream.sequence,
        provider,
        events: stream.events,
        ...(stream.times ? { times: stream.times } : {}),
      });
    }
  }
  return streams;
}

/** One line per request: `POST /v1/messages 200 anthropic/foo#bar`, or the reason for an error status. */
export function requestLine(entry: ReplayRequestLog): string {
  const what = entry.stream !== null ? entry.stream : (entry.reason ?? "");
  return `${entry.method} ${entry.path} ${entry.status}${what ? ` ${what}` : ""}`;
}

/** Loads the streams and starts the server; `run` adds the wait for a signal. Tests call this. */
export async function startServe(args: string[], ctx: CliContext): Promise<ReplayServer> {
  const options = parse(args);
  const streams = await loadStreams(options.paths, ctx.cwd, options.provider);
  let server: ReplayServer;
  try {
    server = await startReplayServer({
      streams,
      port: options.port,
      ...(options.pace !== undefined ? { pace: options.pace } : {}),
      onRequest: (entry) => ctx.err(`toolwire serve: ${requestLine(entry)}\n`),
    });
  } catch (error) {
    throw new CliError(`cannot listen on 127.0.0.1:${options.port}: ${(error as Error).message}`, EXIT.input);
  }
  const counts = new Map<string, number>();
  for (const stream of streams) counts.set(stream.provider, (counts.get(stream.provider) ?? 0) + 1);
  ctx.out(
    `toolwire serve: ${streams.length} stream(s) (${[...counts].map(([provider, count]) => `${provider} ${count}`).join(", ")}) on ${server.url}\n` +
      `  list them: GET ${server.url}/streams; pick one with the x-toolwire-stream header or ?stream=<part of its key>\n`,
  );
  return server;
}

export async function run(args: string[], ctx: CliContext): Promise<number> {
  return serveUntilInterrupted(await startServe(args, ctx), ctx, "serve");
}

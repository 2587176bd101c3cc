import { readdir, stat } from "node:fs/promises";
import { join, relative, resolve, sep } from "node:path";
import { startReplayServer, type RecordedWholeResponse, type ReplayRequestLog, type ReplayServer, type ReplayStream } from "../../node/replay-server.js";
import { detectProvider, ProviderDetectionError } from "../../providers/detect.js";
import { isProviderName, type ProviderName } from "../../types.js";
import { parseCommandArgs, providerOption, usageError } from "../args.js";
import { CliError, EXIT, serveUntilInterrupted, type CliContext } from "../context.js";
import { textCallsOption } from "../tools-file.js";
import type { TextCallSetting } from "../../text-calls/options.js";
import { TEXT_CALL_SYNTAX_NAMES } from "../../text-calls/syntaxes.js";
import { collectInputFiles, inputError, loadRecording, readInputText, SKIPPED_FOLDERS, type InputFile } from "../input.js";

export const summary = "serve recorded streams over loopback HTTP as the provider would, for SDKs, fetch and agents under test";

export const usage = `Usage: toolwire serve <file|dir>... [--port N] [--pace F] [--provider P] [--text-calls auto|S,... [--tools FILE]]

Serves the recorded streams in the given files (NDJSON records, or any format 'toolwire import'
reads; directories are searched for *.ndjson) on http://127.0.0.1:<port> (loopback only) in
each provider's wire format, and the recorded whole responses of *.jsonl exchange files (one
{"provider","body","status"?,"contentType"?,"sequence"?} per line). Point an SDK's baseURL, or
fetch, at it. Each request is logged on stderr: method, path, status and the stream served.

  POST …/messages                               anthropic         SSE; whole JSON without stream: true
  POST …/chat/completions                       openai-chat       SSE; whole JSON without stream: true
  POST …/responses                              openai-responses  SSE; whole JSON without stream: true
  POST …/models/<model>:streamGenerateContent   gemini            SSE with ?alt=sse, else a JSON array
  POST …/models/<model>:generateContent         gemini            whole JSON
  POST …/model/<id>/converse-stream             bedrock           binary event stream
  POST …/model/<id>/converse                    bedrock           whole JSON
  POST …/model/<id>/invoke-with-response-stream anthropic         binary event stream, base64 chunks (Claude on Bedrock)
  POST …/model/<id>/invoke                      anthropic         whole Messages JSON (Claude on Bedrock)
  POST …/api/chat                               ollama            NDJSON; whole JSON with stream: false
  GET  /streams                                 the stream keys, as JSON

A non-streamed request gets a whole response: the recorded one where the entry chosen is a
recorded whole response, else the one the recorded stream assembles to, in the provider's
non-streamed shape (arguments as the provider sent them, so the repairing fetch and the proxy
have something to repair).

A request gets the stream named by its x-toolwire-stream header, its ?stream= query parameter,
or a path starting /stream/<name>/ (put it in an SDK's baseURL: http://127.0.0.1:PORT/stream/
<name>/v1; encode '/' and '#' as %2F and %23). A name is a key, a unique suffix of one after '/'
or '#', or any part of exactly one key; an unknown name gets the closest keys in its 404.
Otherwise the route's streams in turn, in file order (round robin per provider, streamed and
non-streamed requests counted apart).

  --port N       port to listen on (default: a free one, printed at start)
  --pace F       replay at the recorded pace ('t' offsets) times F (1 = as recorded, 0.1 = 10x
                 faster); per request: x-toolwire-pace header or ?pace=; default: no pauses
  --provider P   serve every stream as provider P (${"anthropic, openai-chat, openai-responses, gemini, bedrock, ollama"});
                 default: the records' provider field, else detection from the payloads
  --text-calls X serve Chat Completions (streamed and whole) and Ollama (streamed) recordings of
                 a server without a tool-call parser as one with a parser would: the calls
                 written into the text become tool_calls: auto, or syntax names separated by commas
                 (${TEXT_CALL_SYNTAX_NAMES.join(", ")})
  --tools FILE   with --text-calls: the tools the model was offered (a JSON list of tool
                 definitions, or a request body with "tools"): only their names become calls,
                 and their schemas type XML and pythonic values

Runs until interrupted (Ctrl-C). Exit codes: 0 stopped; 2 usage error; 3 input error: a path
that is missing, unreadable or empty, an unrecognized format, or a provider not recognizable.`;

interface ServeArgs {
  paths: string[];
  port: number;
  pace: number | undefined;
  provider: ProviderName | undefined;
  textCalls: string | undefined;
  tools: string | undefined;
}

function parse(args: string[]): ServeArgs {
  const { values, positionals } = parseCommandArgs("serve", args, { port: { type: "string" }, pace: { type: "string" }, provider: { type: "string" }, "text-calls": { type: "string" }, tools: { type: "string" } });
  if (positionals.length === 0) throw usageError("serve", "no file given");
  const port = values.port === undefined ? 0 : Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new CliError(`--port must be a port number, got '${values.port}'`, EXIT.usage);
  const pace = values.pace === undefined ? undefined : Number(values.pace);
  if (pace !== undefined && (!Number.isFinite(pace) || pace < 0)) throw new CliError(`--pace must be a non-negative number, got '${values.pace}'`, EXIT.usage);
  return { paths: positionals, port, pace, provider: providerOption(values.provider), textCalls: values["text-calls"], tools: values.tools };
}

/** A recorded whole response line: `{provider, body, status?, contentType?, sequence?, url?}`. */
function wholeRecordOf(value: unknown): ({ provider: ProviderName; sequence: string | null } & RecordedWholeResponse) | null {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return null;
  const record = value as Record<string, unknown>;
  if (!isProviderName(record.provider) || typeof record.body !== "string") return null;
  if (record.status !== undefined && (typeof record.status !== "number" || !Number.isInteger(record.status) || record.status < 200 || record.status > 599)) return null;
  if (record.contentType !== undefined && typeof record.contentType !== "string") return null;
  return {
    provider: record.provider,
    sequence: typeof record.sequence === "string" ? record.sequence : null,
    status: (record.status as number | undefined) ?? 200,
    contentType: (record.contentType as string | undefined) ?? "application/json",
    body: record.body,
  };
}

/** A `.jsonl` file of recorded whole responses, or null when its first record is not one (then it is read as a recording). */
async function loadWholeFile(file: InputFile): Promise<ReplayStream[] | null> {
  const text = await readInputText(file);
  const name = relative(file.root, file.path).replace(/\\/g, "/").replace(/\.jsonl$/, "");
  const entries: ReplayStream[] = [];
  let line = 0;
  for (const raw of text.split("\n")) {
    line++;
    const trimmed = raw.trim();
    if (trimmed === "" || trimmed.startsWith("#")) continue;
    let record;
    try {
      record = wholeRecordOf(JSON.parse(trimmed));
    } catch {
      record = null;
    }
    if (record === null) {
      if (entries.length === 0) return null;
      throw inputError(file.shown, `line ${line}: not a recorded whole response ({"provider", "body", "status"?, "contentType"?, "sequence"?})`);
    }
    const { provider, sequence, ...whole } = record;
    entries.push({ key: sequence === null ? name : `${name}#${sequence}`, file: file.path, sequence, provider, events: [], whole });
  }
  return entries;
}

/** The `.jsonl` exchange files under the given directories (the SKIPPED_FOLDERS left out unless named). */
async function collectWholeFiles(paths: string[], cwd: string): Promise<InputFile[]> {
  const files: InputFile[] = [];
  for (const path of paths) {
    const absolute = resolve(cwd, path);
    const info = await stat(absolute).catch(() => null);
    if (!info?.isDirectory()) continue;
    const entries = await readdir(absolute, { recursive: true }).catch(() => [] as string[]);
    for (const entry of entries.filter((item) => item.endsWith(".jsonl")).sort()) {
      if (entry.split(sep).slice(0, -1).some((folder) => Object.hasOwn(SKIPPED_FOLDERS, folder))) continue;
      const file = join(absolute, entry);
      files.push({ path: file, shown: relative(cwd, file) || file, root: absolute });
    }
  }
  return files;
}

/** The recorded streams and whole responses of the given paths, keyed by file (relative to the folder it was found in) and sequence. */
async function loadStreams(paths: string[], cwd: string, forced: ProviderName | undefined): Promise<ReplayStream[]> {
  const files = [...(await collectInputFiles(paths, cwd)), ...(await collectWholeFiles(paths, cwd))];
  if (files.length === 0) throw inputError(paths.join("', '"), "no .ndjson recordings or .jsonl whole responses in it");
  const streams: ReplayStream[] = [];
  for (const file of files) {
    if (file.path.endsWith(".jsonl")) {
      const whole = await loadWholeFile(file);
      if (whole !== null) {
        streams.push(...whole.map((entry) => (forced ? { ...entry, provider: forced } : entry)));
        continue;
      }
    }
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
  const textCalls: TextCallSetting | null | undefined = await textCallsOption("serve", options.textCalls, options.tools, ctx.cwd);
  const streams = await loadStreams(options.paths, ctx.cwd, options.provider);
  let server: ReplayServer;
  try {
    server = await startReplayServer({
      streams,
      port: options.port,
      ...(options.pace !== undefined ? { pace: options.pace } : {}),
      ...(textCalls ? { textCalls } : {}),
      onRequest: (entry) => ctx.err(`toolwire serve: ${requestLine(entry)}\n`),
    });
  } catch (error) {
    throw new CliError(`cannot listen on 127.0.0.1:${options.port}: ${(error as Error).message}`, EXIT.input);
  }
  const counts = new Map<string, number>();
  for (const stream of streams) counts.set(stream.provider, (counts.get(stream.provider) ?? 0) + 1);
  ctx.out(
    `toolwire serve: ${streams.length} stream(s) (${[...counts].map(([provider, count]) => `${provider} ${count}`).join(", ")}) on ${server.url}\n` +
      `  list them: GET ${server.url}/streams; pick one with the x-toolwire-stream header, ?stream=<part of its key> or a base URL ${server.url}/stream/<part of its key>/…\n`,
  );
  return server;
}

export async function run(args: string[], ctx: CliContext): Promise<number> {
  return serveUntilInterrupted(await startServe(args, ctx), ctx, "serve");
}

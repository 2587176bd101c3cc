import { relative } from "node:path";
import { detectProvider, ProviderDetectionError } from "../../providers/detect.js";
import { UnsupportedProviderError } from "../../providers/registry.js";
import { replayEvents, toReplayJson } from "../../replay.js";
import { PROVIDERS, type DecodedTurn, type ProviderEvent, type ProviderName, type ToolCall } from "../../types.js";
import { parseCommandArgs, providerOption, usageError } from "../args.js";
import { CliError, EXIT, type CliContext } from "../context.js";
import { TEXT_CALL_SYNTAX_NAMES } from "../../text-calls/syntaxes.js";
import type { TextCallSetting } from "../../text-calls/options.js";
import { collectInputFiles, forEachRecord, inputError, loadRecording, SKIPPED_FOLDERS, type InputFile } from "../input.js";
import { RecordFormatError } from "../../framing/records.js";
import { createDecoder } from "../../providers/registry.js";
import type { StreamingDecoder } from "../../providers/codec.js";
import { fitLine } from "../text.js";
import { plural } from "../../import/text.js";
import { textCallsOption } from "../tools-file.js";
import { wrapWords } from "../../util/wrap.js";

export const summary = "replay recorded streams (NDJSON records or upstream fixtures) and report the decoded tool calls";

export const usage = `Usage: toolwire replay <file|dir|->... [--provider P] [--sequence S] [--verbose] [--json] [--text-calls auto|S,...] [--tools FILE]

Decodes every recorded stream in the given files (directories are searched for *.ndjson,
except ${Object.keys(SKIPPED_FOLDERS).join("/ and ")}/ folders unless named) through the same push core a live stream uses.
Files may also be any format 'toolwire import' reads (SSE, cassettes, httprr, .gz, …);
'-' reads one recording from standard input.

Prints every call when that fits on one screen, else a summary per provider with the notable
findings.

  --provider P   decode as provider P (${PROVIDERS.join(", ")});
                 default: the records' provider field, else detection from the payloads
  --sequence S   only the stream named S
  --verbose      every stream and call, however long
  --json         one JSON object per stream (the replay contract of docs/design.md)
  --text-calls X also read tool calls written into the text: auto, or syntax names separated
                 by commas (${TEXT_CALL_SYNTAX_NAMES.join(", ")}); off: never;
                 default: what the file's '# textCalls: <json>' header line names, else off
  --tools FILE   with --text-calls: the tools the model was offered (a JSON list of tool
                 definitions in any shape sanitizeTools reads, or a request body with "tools"):
                 only their names become calls, and their schemas type XML and pythonic values

Lines are cut to the terminal's width on a terminal, and whole when the output is not one.

Exit codes: 0 replayed; 2 usage error (unknown flag or provider); 3 input error: a path that
is missing, unreadable, a directory where a file is needed, empty or too large; an
unrecognized format; a provider not recognizable from the payloads; or a --provider that
decodes nothing in streams that look like another provider's.`;

/** One recorded file and what its streams decoded to. */
interface ReplayedFile {
  shown: string;
  /** The path below the directory it was found in: short enough for the notable findings. */
  short: string;
  turns: DecodedTurn[];
}

/** Nothing decoded: no call, no text, no reasoning. */
function decodedNothing(turn: DecodedTurn): boolean {
  return turn.toolCalls.length === 0 && turn.serverToolCalls.length === 0 && turn.text === "" && turn.reasoning === "";
}

/**
 * With a forced provider that understood none of the events, the name of the provider they look
 * like (when detection finds exactly one other), else null.
 */
export function lookalikeProvider(turn: DecodedTurn, events: Parameters<typeof detectProvider>[0], forced: ProviderName): ProviderName | null {
  if (!decodedNothing(turn) || events.length === 0) return null;
  try {
    const detected = detectProvider(events);
    return detected !== forced ? detected : null;
  } catch {
    return null;
  }
}

export async function run(args: string[], ctx: CliContext): Promise<number> {
  const { values, positionals } = parseCommandArgs("replay", args, {
    provider: { type: "string" },
    sequence: { type: "string" },
    json: { type: "boolean", default: false },
    verbose: { type: "boolean", short: "v", default: false },
    "text-calls": { type: "string" },
    tools: { type: "string" },
  });
  if (positionals.length === 0) throw usageError("replay", "no file given");
  const provider = providerOption(values.provider);
  const textCalls = await textCallsOption("replay", values["text-calls"], values.tools, ctx.cwd);
  const files = await collectInputFiles(positionals, ctx.cwd, ctx.stdin);
  if (files.length === 0) throw inputError(positionals.join("', '"), "no .ndjson files in it");

  const replayed: ReplayedFile[] = [];
  /** Streams a forced provider understood nothing of, with the provider they look like. */
  const misread: Array<{ where: string; lookalike: ProviderName }> = [];
  /** Streams without calls whose text holds calls that --text-calls auto would read. */
  const textCallHints: string[] = [];
  let matched = 0;
  for (const file of files) {
    const decoded = await decodeFile(file, { provider, textCalls, sequence: values.sequence });
    const turns: DecodedTurn[] = [];
    for (const { turn, events, where, textCallsSet } of decoded) {
      matched++;
      if (provider) {
        const lookalike = lookalikeProvider(turn, events, provider);
        if (lookalike) misread.push({ where, lookalike });
      }
      if (!textCallsSet && turn.toolCalls.length === 0 && turn.text !== "") {
        // Only streams that decoded text and no call pay for a second decoding.
        const withTextCalls = replayEvents({ sequence: turn.sequence, provider: turn.provider, events }, { provider: turn.provider, textCalls: "auto" });
        if (withTextCalls.toolCalls.length > 0) textCallHints.push(where);
      }
      turns.push(turn);
      if (values.json) ctx.out(JSON.stringify(toReplayJson(turn)) + "\n");
    }
    replayed.push({ shown: file.shown, short: relative(file.root, file.path) || file.shown, turns });
  }
  if (values.sequence !== undefined && matched === 0) {
    throw new CliError(`no stream named '${values.sequence}' in ${files.length} file(s)`, EXIT.input);
  }
  if (!values.json) ctx.out(renderReport(replayed, { verbose: values.verbose, columns: ctx.columns ?? Number.POSITIVE_INFINITY, rows: ctx.rows ?? 40 }));
  if (textCallHints.length > 0) {
    ctx.err(`toolwire replay: ${plural(textCallHints.length, "stream")} without tool calls ${textCallHints.length === 1 ? "holds calls" : "hold calls"} written in the text (first: ${textCallHints[0]}): replay with --text-calls auto to read them.\n`);
  }
  if (provider && misread.length > 0) {
    ctx.err(`toolwire replay: ${misreadLine(provider, misread, matched)}\n`);
    return EXIT.input;
  }
  return EXIT.ok;
}

/** The one line for every stream a forced provider decoded nothing of. */
export function misreadLine(provider: ProviderName, misread: ReadonlyArray<{ where: string; lookalike: ProviderName }>, streams: number): string {
  const counts = new Map<ProviderName, number>();
  for (const { lookalike } of misread) counts.set(lookalike, (counts.get(lookalike) ?? 0) + 1);
  const looks = [...counts].sort(([, a], [, b]) => b - a).map(([name, count]) => `${name} (${count})`).join(", ");
  const first = misread[0] as { where: string; lookalike: ProviderName };
  if (misread.length === 1) return `${first.where}: decoded as ${provider}, nothing in it is ${provider}; its events look like ${first.lookalike} (try --provider ${first.lookalike}).`;
  const hint = counts.size === 1 ? `try --provider ${first.lookalike}` : "leave --provider out to detect each stream's provider";
  return `--provider ${provider} decoded nothing in ${misread.length} of ${plural(streams, "stream")}: their events look like ${looks} (first: ${first.where}); ${hint}.`;
}

/** One stream of a file, decoded: its turn, its events (or, for a file read as a stream, the first of them) and where it is. */
interface DecodedStream {
  turn: DecodedTurn;
  /** All the events, or the first SAMPLE_EVENTS of a streamed file: for the provider and text-call hints. */
  events: ProviderEvent[];
  where: string;
  /** Whether a text-call setting (flag or header) applied. */
  textCallsSet: boolean;
}

/** Events kept per stream of an NDJSON file read as a stream, for the hints (the decoding sees them all). */
const SAMPLE_EVENTS = 512;

interface DecodeOptions {
  provider: ProviderName | undefined;
  /** --text-calls: undefined when not given, null for off. */
  textCalls: TextCallSetting | null | undefined;
  sequence: string | undefined;
}

function whereOf(file: InputFile, sequence: string | null): string {
  return `'${file.shown}'${sequence ? ` (sequence ${sequence})` : ""}`;
}

/** Signals a file whose streams are interleaved: it is read whole instead. */
class Interleaved extends Error {}

/** A file's streams, loaded whole and then decoded (any import format; interleaved NDJSON). */
async function decodeLoaded(file: InputFile, options: DecodeOptions, settingOf: (header: TextCallSetting | null | undefined) => TextCallSetting | undefined): Promise<DecodedStream[]> {
  const loaded = await loadRecording(file);
  const setting = settingOf(loaded.textCalls);
  return loaded.streams
    .filter((stream) => options.sequence === undefined || stream.sequence === options.sequence)
    .map((stream) => {
      const where = whereOf(file, stream.sequence);
      try {
        const turn = replayEvents(stream, { ...(options.provider ? { provider: options.provider } : {}), ...(setting ? { textCalls: setting } : {}) });
        return { turn, events: stream.events, where, textCallsSet: options.textCalls !== undefined || setting !== undefined };
      } catch (error) {
        if (error instanceof ProviderDetectionError || error instanceof UnsupportedProviderError) throw new CliError(`${where}: ${error.message}`, EXIT.input);
        throw error;
      }
    });
}

/**
 * A file's streams, decoded. A toolwire NDJSON file is decoded as it is read, one stream after
 * the other: each record goes to its stream's decoder as soon as the stream's provider is known
 * (forced, or the records' `provider` field), so its events are not kept (only a sample for the
 * hints), and a stream is finished when the next one starts; a stream whose provider must be
 * detected keeps its events until it ends. A file whose streams are interleaved (a sequence that
 * comes back), and every other format, is loaded whole first.
 */
async function decodeFile(file: InputFile, options: DecodeOptions): Promise<DecodedStream[]> {
  const settingOf = (header: TextCallSetting | null | undefined): TextCallSetting | undefined => (options.textCalls === null ? undefined : (options.textCalls ?? header ?? undefined));
  if (!file.path.endsWith(".ndjson") || file.stdin) return decodeLoaded(file, options, settingOf);

  interface Open {
    sequence: string | null;
    decoder: StreamingDecoder | null;
    /** Events waiting for the provider to be known. */
    waiting: ProviderEvent[];
    sample: ProviderEvent[];
    setting: TextCallSetting | undefined;
    /** The provider the records named, to refuse a conflicting one as parseRecords does. */
    named: ProviderName | null;
  }
  const decoded: DecodedStream[] = [];
  const start = (entry: Open, provider: ProviderName): void => {
    entry.decoder = createDecoder(provider, { sequence: entry.sequence, ...(entry.setting ? { textCalls: entry.setting } : {}) });
    for (const event of entry.waiting.splice(0)) entry.decoder.push(event);
  };
  /** The stream being read; a file's streams are normally one after another. */
  let current: Open | null = null;
  const closed = new Set<string | null>();
  const close = (entry: Open): void => {
    const where = whereOf(file, entry.sequence);
    if (entry.decoder === null) {
      try {
        start(entry, detectProvider(entry.waiting));
      } catch (error) {
        if (error instanceof ProviderDetectionError || error instanceof UnsupportedProviderError) throw new CliError(`${where}: ${error.message}`, EXIT.input);
        throw error;
      }
    }
    const turn = (entry.decoder as StreamingDecoder).finish();
    const textCallsSet = options.textCalls !== undefined || entry.setting !== undefined;
    // The sample is kept only for a stream a hint may be about (see run): the others let it go.
    const hinted = (options.provider !== undefined && decodedNothing(turn)) || (!textCallsSet && turn.toolCalls.length === 0 && turn.text !== "");
    decoded.push({ turn, events: hinted ? entry.sample : [], where, textCallsSet });
    closed.add(entry.sequence);
  };
  try {
    await forEachRecord(file, (record, header) => {
      if (options.sequence !== undefined && record.sequence !== options.sequence) return;
      if (current !== null && current.sequence !== record.sequence) {
        close(current);
        current = null;
      }
      // Streams interleaved in the file (a sequence that comes back): read it whole instead.
      if (closed.has(record.sequence)) throw new Interleaved();
      if (current === null) current = { sequence: record.sequence, decoder: null, waiting: [], sample: [], setting: settingOf(header), named: null };
      const entry: Open = current;
      if (record.provider !== null) {
        if (entry.named !== null && entry.named !== record.provider) {
          throw new RecordFormatError(`provider ${JSON.stringify(record.provider)} conflicts with ${JSON.stringify(entry.named)} given earlier for sequence ${JSON.stringify(record.sequence)}`, record.line);
        }
        entry.named = record.provider;
      }
      if (entry.sample.length < SAMPLE_EVENTS) entry.sample.push(record.event);
      if (entry.decoder === null && (options.provider ?? record.provider) !== null) start(entry, (options.provider ?? record.provider) as ProviderName);
      if (entry.decoder) entry.decoder.push(record.event);
      else entry.waiting.push(record.event);
    });
  } catch (error) {
    if (error instanceof Interleaved) return decodeLoaded(file, options, settingOf);
    if (error instanceof RecordFormatError) throw inputError(file.shown, error.message);
    throw error;
  }
  if (current !== null) close(current);
  return decoded;
}

interface Totals {
  files: number;
  streams: number;
  calls: number;
  repaired: number;
  truncated: number;
  invalid: number;
  server: number;
  incomplete: number;
  errors: number;
}

function emptyTotals(): Totals {
  return { files: 0, streams: 0, calls: 0, repaired: 0, truncated: 0, invalid: 0, server: 0, incomplete: 0, errors: 0 };
}

function add(totals: Totals, turn: DecodedTurn): void {
  totals.streams++;
  totals.server += turn.serverToolCalls.length;
  if (turn.status === "incomplete") totals.incomplete++;
  if (turn.status === "error") totals.errors++;
  for (const call of turn.toolCalls) {
    totals.calls++;
    if (call.error?.code === "truncated") totals.truncated++;
    else if (call.error) totals.invalid++;
    else if (call.repairs.length > 0) totals.repaired++;
  }
}

/**
 * The human-readable report: every call when `verbose` or when the listing fits in `rows` lines;
 * otherwise a table per provider and the notable findings. Every line fits in `columns`.
 */
export function renderReport(files: readonly ReplayedFile[], options: { verbose: boolean; columns: number; rows: number }): string {
  const width = Math.max(40, options.columns);
  const totals = emptyTotals();
  const byProvider = new Map<string, Totals & { fileNames: Set<string> }>();
  for (const file of files) {
    totals.files++;
    for (const turn of file.turns) {
      add(totals, turn);
      let row = byProvider.get(turn.provider);
      if (!row) byProvider.set(turn.provider, (row = { ...emptyTotals(), fileNames: new Set() }));
      row.fileNames.add(file.shown);
      add(row, turn);
    }
  }
  const closing = `Replayed ${plural(totals.files, "file")}, ${plural(totals.streams, "stream")}, ${plural(totals.calls, "tool call")}: ${totals.calls - totals.repaired - totals.truncated - totals.invalid} as sent, ${totals.repaired} repaired, ${totals.truncated} truncated, ${totals.invalid} invalid; ${plural(totals.server, "server tool call")}; ${totals.incomplete} incomplete and ${totals.errors} errored stream(s).`;

  const listing = detailLines(files);
  if (options.verbose || listing.length + 3 <= options.rows) {
    return [...listing.map((line) => fitLine(line, width)), "", ...wrapWords(closing, width)].join("\n") + "\n";
  }

  const header = ["provider", "files", "streams", "calls", "repaired", "truncated", "invalid", "server"];
  const rows = [...byProvider].sort(([a], [b]) => (a < b ? -1 : 1)).map(([name, row]) => [name, row.fileNames.size, row.streams, row.calls, row.repaired, row.truncated, row.invalid, row.server].map(String));
  rows.push(["total", totals.files, totals.streams, totals.calls, totals.repaired, totals.truncated, totals.invalid, totals.server].map(String));
  const widths = header.map((title, i) => Math.max(title.length, ...rows.map((row) => (row[i] as string).length)));
  const cells = (row: string[]): string => row.map((cell, i) => (i === 0 ? cell.padEnd(widths[i] as number) : cell.padStart(widths[i] as number))).join("  ");
  const lines = [...wrapWords(closing, width), "", fitLine(cells(header), width), ...rows.map((row) => fitLine(cells(row), width))];
  const notable = notableLines(files);
  if (notable.length > 0) lines.push("", "Notable:", ...notable.map((line) => fitLine(`  ${line}`, width)));
  lines.push("", fitLine("Details: --verbose (every call), --json (one object per stream).", width));
  return lines.join("\n") + "\n";
}

function detailLines(files: readonly ReplayedFile[]): string[] {
  const lines: string[] = [];
  for (const file of files) {
    lines.push(file.shown);
    for (const turn of file.turns) {
      const warnings = turn.diagnostics.filter((d) => d.severity === "warning" || d.severity === "error").map((d) => d.code);
      lines.push(
        `  ${turn.sequence ?? "(stream)"}: ${turn.provider}, ${turn.status}, finish=${turn.finishReason ?? "none"}` +
          (turn.text ? `, text ${turn.text.length} chars` : "") +
          (turn.serverToolCalls.length ? `, ${turn.serverToolCalls.length} server tool call(s)` : "") +
          (warnings.length ? `, diagnostics: ${[...new Set(warnings)].join(" ")}` : ""),
      );
      for (const call of turn.toolCalls) lines.push(`    ${callLine(call)}`);
    }
  }
  return lines;
}

function callLine(call: ToolCall): string {
  if (call.error) return `✗ ${call.name} ${call.id} ${call.error.code}${call.error.cause ? ` (${call.error.cause})` : ""}: ${flat(call.rawArguments)}`;
  const how = `source=${call.source}${call.repairs.length ? ` repairs=${call.repairs.join(",")}` : ""}`;
  return `${call.repairs.length ? "~" : "✓"} ${call.name} ${call.id} ${how} ${flat(JSON.stringify(call.arguments))}`;
}

function flat(text: string): string {
  return text.replace(/\s+/g, " ");
}

/** A few lines a reader should not miss: what was repaired, cut off or invalid, and where first. */
function notableLines(files: readonly ReplayedFile[]): string[] {
  const repairs = new Map<string, { count: number; first: string }>();
  const errors = new Map<string, { count: number; first: string }>();
  const statuses = new Map<string, { count: number; first: string }>();
  const count = (map: Map<string, { count: number; first: string }>, key: string, where: string): void => {
    const entry = map.get(key);
    if (entry) entry.count++;
    else map.set(key, { count: 1, first: where });
  };
  for (const file of files) {
    for (const turn of file.turns) {
      const where = `${file.short}${turn.sequence ? `#${turn.sequence}` : ""}`;
      if (turn.status !== "complete") count(statuses, turn.status, where);
      for (const call of turn.toolCalls) {
        for (const repair of call.repairs) count(repairs, repair, where);
        if (call.error) count(errors, `${call.error.code}${call.error.cause ? ` (${call.error.cause})` : ""}`, where);
      }
    }
  }
  const describe = (map: Map<string, { count: number; first: string }>, mark: string, what: string): string[] =>
    [...map].sort(([, a], [, b]) => b.count - a.count).map(([key, entry]) => `${mark} ${entry.count}× ${what} ${key}, first in ${entry.first}`);
  return [...describe(errors, "✗", "call"), ...describe(repairs, "~", "repair"), ...describe(statuses, "!", "stream")].slice(0, 8);
}

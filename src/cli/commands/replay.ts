import { readFile, readdir, stat } from "node:fs/promises";
import { relative, resolve, join } from "node:path";
import { parseArgs } from "node:util";
import { parseRecords, RecordFormatError } from "../../framing/records.js";
import { importFile } from "../../import/index.js";
import { ProviderDetectionError } from "../../providers/detect.js";
import { supportedProviders, UnsupportedProviderError } from "../../providers/registry.js";
import { replayEvents, toReplayJson, type ReplayInput } from "../../replay.js";
import { isProviderName, type DecodedTurn, type ProviderName, type ToolCall } from "../../types.js";
import { CliError, EXIT, type CliContext } from "../context.js";
import { isTextCallSyntaxName, TEXT_CALL_SYNTAX_NAMES, type TextCallSyntaxName } from "../../text-calls/syntaxes.js";
import type { TextCallSetting } from "../../text-calls/options.js";

export const summary = "replay recorded streams (NDJSON records or upstream fixtures) and report the decoded tool calls";

export const usage = `Usage: toolwire replay <file|dir>... [--provider P] [--sequence S] [--json] [--text-calls auto|S,...]

Decodes every recorded stream in the given files (directories are searched for *.ndjson)
through the same push core a live stream uses.

  --provider P   decode as provider P (${"anthropic, openai-chat, openai-responses, gemini, bedrock, ollama"});
                 default: the records' provider field, else detection from the payloads
  --sequence S   only the stream named S
  --json         one JSON object per stream (the replay contract of DESIGN.md)
  --text-calls X also read tool calls written into the text: auto, or syntax names separated
                 by commas (${TEXT_CALL_SYNTAX_NAMES.join(", ")})

Exit codes: 0 replayed; 2 usage error (unknown flag or provider); 3 unreadable file,
unrecognized format, or provider not recognizable.`;

interface LoadedFile {
  path: string;
  streams: ReplayInput[];
}

export async function collectFiles(paths: string[], cwd: string): Promise<string[]> {
  const files: string[] = [];
  for (const path of paths) {
    const absolute = resolve(cwd, path);
    let info;
    try {
      info = await stat(absolute);
    } catch {
      throw new CliError(`cannot read '${path}': no such file or directory`, EXIT.input);
    }
    if (info.isDirectory()) {
      const entries = await readdir(absolute, { recursive: true });
      files.push(...entries.filter((entry) => entry.endsWith(".ndjson")).sort().map((entry) => join(absolute, entry)));
    } else {
      files.push(absolute);
    }
  }
  return files;
}

export async function loadRecordedFile(path: string, provider: ProviderName | undefined): Promise<LoadedFile> {
  let bytes: Uint8Array;
  try {
    bytes = new Uint8Array(await readFile(path));
  } catch (error) {
    throw new CliError(`cannot read '${path}': ${(error as Error).message}`, EXIT.input);
  }
  try {
    if (path.endsWith(".ndjson")) {
      const streams = parseRecords(new TextDecoder().decode(bytes));
      return { path, streams };
    }
    const imported = importFile(path, bytes, provider ? { provider } : {});
    return { path, streams: imported.streams };
  } catch (error) {
    if (error instanceof RecordFormatError || error instanceof Error) {
      throw new CliError(`'${path}': ${error.message}`, EXIT.input);
    }
    throw error;
  }
}

function parseProvider(value: string | undefined): ProviderName | undefined {
  if (value === undefined) return undefined;
  if (!isProviderName(value)) {
    throw new CliError(`unknown provider '${value}'. Known providers: ${supportedProviders().join(", ")}.`, EXIT.usage);
  }
  return value;
}

function parseTextCalls(value: string | undefined): TextCallSetting | undefined {
  if (value === undefined) return undefined;
  if (value === "auto") return "auto";
  const names = value.split(",").map((name) => name.trim()).filter((name) => name.length > 0);
  const unknown = names.filter((name) => !isTextCallSyntaxName(name));
  if (names.length === 0 || unknown.length > 0) {
    throw new CliError(`unknown text-call syntax '${unknown.join(", ") || value}'. Use auto or: ${TEXT_CALL_SYNTAX_NAMES.join(", ")}.`, EXIT.usage);
  }
  return names as TextCallSyntaxName[];
}

export async function run(args: string[], ctx: CliContext): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args,
      allowPositionals: true,
      options: {
        provider: { type: "string" },
        sequence: { type: "string" },
        json: { type: "boolean", default: false },
        "text-calls": { type: "string" },
      },
    });
  } catch (error) {
    throw new CliError(`${(error as Error).message}\n\n${usage}`, EXIT.usage);
  }
  const { values, positionals } = parsed;
  if (positionals.length === 0) throw new CliError(`no file given.\n\n${usage}`, EXIT.usage);
  const provider = parseProvider(values.provider);
  const textCalls = parseTextCalls(values["text-calls"]);
  const files = await collectFiles(positionals, ctx.cwd);
  if (files.length === 0) throw new CliError(`no .ndjson files under ${positionals.join(", ")}`, EXIT.input);

  const report = new ReadableReport();
  let matched = 0;
  for (const path of files) {
    const loaded = await loadRecordedFile(path, provider);
    const display = relative(ctx.cwd, path) || path;
    const turns: DecodedTurn[] = [];
    for (const stream of loaded.streams) {
      if (values.sequence !== undefined && stream.sequence !== values.sequence) continue;
      matched++;
      let turn: DecodedTurn;
      try {
        turn = replayEvents(stream, { ...(provider ? { provider } : {}), ...(textCalls ? { textCalls } : {}) });
      } catch (error) {
        if (error instanceof ProviderDetectionError) throw new CliError(`'${display}'${stream.sequence ? ` (sequence ${stream.sequence})` : ""}: ${error.message}`, EXIT.input);
        if (error instanceof UnsupportedProviderError) throw new CliError(`'${display}': ${error.message}`, EXIT.input);
        throw error;
      }
      turns.push(turn);
      if (values.json) ctx.out(JSON.stringify(toReplayJson(turn)) + "\n");
    }
    if (!values.json) report.file(display, turns);
  }
  if (values.sequence !== undefined && matched === 0) {
    throw new CliError(`no stream named '${values.sequence}' in ${files.length} file(s)`, EXIT.input);
  }
  if (!values.json) ctx.out(report.render());
  return EXIT.ok;
}

/** The human-readable report: one block per file, one line per call, and a closing summary. */
class ReadableReport {
  private lines: string[] = [];
  private totals = { files: 0, streams: 0, calls: 0, ok: 0, repaired: 0, truncated: 0, invalid: 0, serverCalls: 0, incomplete: 0, errors: 0 };
  private byProvider = new Map<string, number>();

  file(path: string, turns: DecodedTurn[]): void {
    this.totals.files++;
    this.lines.push(path);
    for (const turn of turns) {
      this.totals.streams++;
      this.byProvider.set(turn.provider, (this.byProvider.get(turn.provider) ?? 0) + 1);
      if (turn.status === "incomplete") this.totals.incomplete++;
      if (turn.status === "error") this.totals.errors++;
      const name = turn.sequence ?? "(stream)";
      const warnings = turn.diagnostics.filter((d) => d.severity === "warning" || d.severity === "error").map((d) => d.code);
      this.lines.push(
        `  ${name}: ${turn.provider}, ${turn.status}, finish=${turn.finishReason ?? "none"}` +
          (turn.text ? `, text ${turn.text.length} chars` : "") +
          (turn.serverToolCalls.length ? `, ${turn.serverToolCalls.length} server tool call(s)` : "") +
          (warnings.length ? `, diagnostics: ${[...new Set(warnings)].join(" ")}` : ""),
      );
      this.totals.serverCalls += turn.serverToolCalls.length;
      for (const call of turn.toolCalls) this.lines.push(`    ${this.call(call)}`);
    }
  }

  private call(call: ToolCall): string {
    this.totals.calls++;
    if (call.error) {
      if (call.error.code === "truncated") this.totals.truncated++;
      else this.totals.invalid++;
      return `✗ ${call.name} ${call.id} ${call.error.code}${call.error.cause ? ` (${call.error.cause})` : ""}: ${clip(call.rawArguments, 60)}`;
    }
    if (call.repairs.length) this.totals.repaired++;
    else this.totals.ok++;
    const how = `source=${call.source}${call.repairs.length ? ` repairs=${call.repairs.join(",")}` : ""}`;
    return `${call.repairs.length ? "~" : "✓"} ${call.name} ${call.id} ${clip(JSON.stringify(call.arguments), 80)} ${how}`;
  }

  render(): string {
    const t = this.totals;
    const providers = [...this.byProvider].map(([name, count]) => `${name} ${count}`).join(", ");
    this.lines.push(
      "",
      `Replayed ${t.files} file(s), ${t.streams} stream(s) (${providers}): ${t.calls} tool call(s): ` +
        `${t.ok} ok, ${t.repaired} repaired, ${t.truncated} truncated, ${t.invalid} invalid; ` +
        `${t.serverCalls} server tool call(s); ${t.incomplete} incomplete and ${t.errors} errored stream(s).`,
    );
    return this.lines.join("\n") + "\n";
  }
}

function clip(text: string, max: number): string {
  const flat = text.replace(/\s+/g, " ");
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

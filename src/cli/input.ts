import { createReadStream } from "node:fs";
import { readdir, stat } from "node:fs/promises";
import { basename, relative, resolve, join, sep } from "node:path";
import { RecordFormatError, RecordsParser, type ParsedRecord, type RecordedStream } from "../framing/records.js";
import { ImportError, importRecording, type ImportOptions } from "../import/index.js";
import type { TextCallSetting } from "../text-calls/options.js";
import { isTextCallSyntaxName } from "../text-calls/syntaxes.js";
import { STDIN } from "./args.js";
import { CliError, EXIT } from "./context.js";
import { concatBytes } from "../util/bytes.js";

/**
 * How every command reads recordings, so that missing, unreadable and empty input behave the same
 * in replay, import, serve, conformance, expect and fuzz: one message naming the path once, exit
 * code 3 (EXIT.input), never a stack trace.
 */

/** Folders a directory scan does not enter unless named: they hold no recordings of their own. */
export const SKIPPED_FOLDERS: Readonly<Record<string, string>> = {
  regressions: "fuzz counterexamples (invariant violations, not recordings)",
  upstream: "the raw upstream corpus (its streams are replayed from their imported copies)",
  "text-calls": "streams whose calls are written in the text: they decode as intended only with --text-calls",
};

export interface InputFile {
  /** Absolute path. */
  path: string;
  /** The path as the user should see it: relative to the working directory when inside it. */
  shown: string;
  /** The directory it was found under (the file's own folder when it was named directly). */
  root: string;
  /** Standard input (the path `-`): read from here, not from `path`. */
  stdin?: AsyncIterable<Uint8Array | string>;
}

/** What a file is read from: a path, or standard input. */
export type InputSource = Pick<InputFile, "path" | "shown" | "stdin">;

/**
 * The largest input toolwire reads (256 MiB, or TOOLWIRE_MAX_INPUT_MIB): a larger file is an input
 * error (exit 3) rather than an out-of-memory crash or V8's string limit (about 512 MiB).
 */
export function maxInputBytes(): number {
  const mib = Number(process.env.TOOLWIRE_MAX_INPUT_MIB);
  return (Number.isFinite(mib) && mib > 0 ? mib : 256) * 1024 * 1024;
}

function mib(bytes: number): string {
  return `${(bytes / (1024 * 1024)).toFixed(bytes < 10 * 1024 * 1024 ? 1 : 0)} MiB`;
}

function tooLarge(shown: string, size: number | null): CliError {
  const limit = maxInputBytes();
  const what = size === null ? `more than ${mib(limit)}` : `${mib(size)}`;
  return inputError(shown, `the input is ${what}, more than toolwire reads (${mib(limit)}; set TOOLWIRE_MAX_INPUT_MIB to raise the limit, or split the recording)`);
}

/** Standard input as the file `-`, shown as `(stdin)`. */
export function stdinFile(stdin: AsyncIterable<Uint8Array | string> | undefined, cwd: string): InputFile {
  if (!stdin) throw new CliError("'-' (standard input) is not available here", EXIT.usage);
  return { path: STDIN, shown: "(stdin)", root: cwd, stdin };
}

/** The reason an errno gives, in words, without the path Node puts in its message. */
export function ioReason(error: unknown): string {
  const code = (error as NodeJS.ErrnoException | null)?.code;
  switch (code) {
    case "ENOENT":
      return "no such file or directory";
    case "EISDIR":
      return "is a directory, not a file";
    case "ENOTDIR":
      return "a part of the path is not a directory";
    case "EACCES":
    case "EPERM":
      return "permission denied";
    case "ELOOP":
      return "too many symbolic links";
    case "EMFILE":
    case "ENFILE":
      return "too many open files";
    default:
      return code ? `cannot be read (${code})` : error instanceof Error ? error.message : String(error);
  }
}

/** The one error for input that cannot be used: the path once, the reason, exit code 3. */
export function inputError(shown: string, reason: string): CliError {
  return new CliError(`'${shown}': ${reason}`, EXIT.input);
}

/** A path the system cannot give us: `cannot read '<path>': <reason>`, exit code 3. */
export function readError(shown: string, error: unknown): CliError {
  return new CliError(`cannot read '${shown}': ${ioReason(error)}`, EXIT.input);
}

function shownPath(path: string, cwd: string): string {
  const rel = relative(cwd, path);
  return rel !== "" && !rel.startsWith("..") ? rel : path;
}

/**
 * The files the given paths name: files as given (any recording format), directories searched
 * for `*.ndjson` (sorted), without the SKIPPED_FOLDERS unless the path itself is one of them.
 */
export async function collectInputFiles(paths: readonly string[], cwd: string, stdin?: AsyncIterable<Uint8Array | string>): Promise<InputFile[]> {
  const files: InputFile[] = [];
  for (const path of paths) {
    if (path === STDIN) {
      files.push(stdinFile(stdin, cwd));
      continue;
    }
    const absolute = resolve(cwd, path);
    let info;
    try {
      info = await stat(absolute);
    } catch (error) {
      throw readError(path, error);
    }
    if (!info.isDirectory()) {
      files.push({ path: absolute, shown: shownPath(absolute, cwd), root: resolve(absolute, "..") });
      continue;
    }
    let entries: string[];
    try {
      entries = await readdir(absolute, { recursive: true });
    } catch (error) {
      throw readError(path, error);
    }
    const found = entries
      .filter((entry) => entry.endsWith(".ndjson"))
      .filter((entry) => !entry.split(sep).slice(0, -1).some((folder) => Object.hasOwn(SKIPPED_FOLDERS, folder)))
      .sort()
      .map((entry) => join(absolute, entry));
    for (const file of found) files.push({ path: file, shown: shownPath(file, cwd), root: absolute });
  }
  return files;
}

/** The chunks of a file or of standard input, as bytes, with the size limit applied as they come. */
async function* chunksOf(file: InputSource): AsyncGenerator<Uint8Array> {
  const limit = maxInputBytes();
  let source: AsyncIterable<Uint8Array | string>;
  if (file.stdin) {
    source = file.stdin;
  } else {
    let info;
    try {
      info = await stat(file.path);
    } catch (error) {
      throw readError(file.shown, error);
    }
    if (info.isDirectory()) throw readError(file.shown, Object.assign(new Error("EISDIR"), { code: "EISDIR" }));
    if (info.size > limit) throw tooLarge(file.shown, info.size);
    source = createReadStream(file.path, { highWaterMark: 1024 * 1024 });
  }
  let size = 0;
  try {
    for await (const chunk of source) {
      const bytes = typeof chunk === "string" ? new TextEncoder().encode(chunk) : chunk;
      size += bytes.length;
      if (size > limit) throw tooLarge(file.shown, file.stdin ? null : size);
      yield bytes;
    }
  } catch (error) {
    if (error instanceof CliError) throw error;
    throw readError(file.shown, error);
  }
}

/** The bytes of a file (or standard input), or the input error saying why not. */
export async function readInputBytes(file: InputSource): Promise<Uint8Array> {
  const parts: Uint8Array[] = [];
  for await (const chunk of chunksOf(file)) parts.push(chunk);
  return parts.length === 1 ? (parts[0] as Uint8Array) : concatBytes(parts);
}

/**
 * The text of a JSON document the user named (a history, a schema), with the same rules as a
 * recording: a missing or unreadable file, a too-large one and an empty one are input errors.
 */
export async function readInputText(file: InputSource): Promise<string> {
  const bytes = await readInputBytes(file);
  const text = new TextDecoder().decode(bytes);
  if (bytes.length === 0) throw inputError(file.shown, "the file is empty");
  if (text.trim() === "" || text.trim() === "\uFEFF") throw inputError(file.shown, "the file holds only blank lines");
  return text;
}

export interface LoadedRecording {
  streams: RecordedStream[];
  /** The container it was read from: `records` for toolwire NDJSON, else the import format. */
  format: string;
  notes: string[];
  /** The text-call setting the file's header names (`# textCalls: "auto"`), when it names one. */
  textCalls?: TextCallSetting;
}

/** A `# textCalls: <json>` header line's setting: "auto" or a list of syntax names; null when it is not one. */
export function textCallsHeader(line: string): TextCallSetting | null {
  const match = /^#\s*textCalls:\s*(.+?)\s*$/.exec(line);
  if (!match) return null;
  let value: unknown;
  try {
    value = JSON.parse(match[1] as string);
  } catch {
    return null;
  }
  if (value === "auto") return "auto";
  if (Array.isArray(value) && value.length > 0 && value.every((name) => typeof name === "string" && isTextCallSyntaxName(name))) return value as TextCallSetting;
  return null;
}

/** The bytes of a file that holds something: no bytes, or only blank and `#` lines, is empty input. */
async function readNonEmpty(file: InputSource): Promise<Uint8Array> {
  const bytes = await readInputBytes(file);
  if (bytes.length === 0) throw inputError(file.shown, "the file is empty: no recorded stream in it");
  // Only short files can be blank in practice; a long one is scanned only up to its first content line.
  if (bytes[0] !== 0x1f && isBlank(new TextDecoder().decode(bytes.subarray(0, 4096))) && isBlank(new TextDecoder().decode(bytes))) {
    throw inputError(file.shown, "the file holds only blank or comment lines: no recorded stream in it");
  }
  return bytes;
}

/** Without a BOM, blank lines and `#` comments, does the text hold anything? */
function isBlank(text: string): boolean {
  for (const line of text.replace(/^\uFEFF/, "").split("\n")) {
    const trimmed = line.trim();
    if (trimmed !== "" && !trimmed.startsWith("#")) return false;
  }
  return true;
}

/**
 * Reads one recording: toolwire NDJSON records (`*.ndjson`), or any format `toolwire import`
 * reads (converted on the fly, gzip included). Empty input (no bytes, only blank or comment
 * lines, or no event in any stream) is an input error like an unreadable file.
 */
export async function loadRecording(file: InputSource): Promise<LoadedRecording> {
  let loaded: LoadedRecording;
  try {
    if (file.path.endsWith(".ndjson") && !file.stdin) {
      loaded = await readRecordsFile(file);
    } else {
      const bytes = await readNonEmpty(file);
      loaded = await importRecording(file.stdin ? "stdin" : basename(file.path), bytes);
    }
  } catch (error) {
    if (error instanceof CliError) throw error;
    if (error instanceof ImportError) throw inputError(file.shown, withoutFilePrefix(error));
    if (error instanceof RecordFormatError) throw inputError(file.shown, error.message);
    throw error;
  }
  return requireStreams(file, loaded);
}

/** Converts a file with the importer (any format, gzip included), under the same rules as loadRecording. */
export async function importInput(file: InputSource, options: ImportOptions = {}): Promise<LoadedRecording> {
  const bytes = await readNonEmpty(file);
  let loaded: LoadedRecording;
  try {
    loaded = await importRecording(file.stdin ? "stdin" : basename(file.path), bytes, options);
  } catch (error) {
    if (error instanceof ImportError) throw inputError(file.shown, withoutFilePrefix(error));
    throw error;
  }
  return requireStreams(file, loaded);
}

/**
 * A toolwire NDJSON file, read as a stream: line by line, each record handed to `onRecord` as it
 * is parsed (with the text-call setting the header named so far), never the whole file as one
 * string. Empty and blank files are input errors, as for every format. Returns the header's
 * text-call setting.
 */
export async function forEachRecord(file: InputSource, onRecord: (record: ParsedRecord, textCalls: TextCallSetting | null) => void): Promise<{ textCalls: TextCallSetting | null }> {
  const parser = new RecordsParser();
  const decoder = new TextDecoder();
  let textCalls: TextCallSetting | null = null;
  let rest = "";
  let bytes = 0;
  let content = false;
  const line = (text: string): void => {
    const trimmed = text.trim();
    if (trimmed.startsWith("#")) textCalls ??= textCallsHeader(trimmed);
    else if (trimmed !== "" && trimmed !== "\uFEFF") content = true;
    const record = parser.parse(text);
    if (record !== null) onRecord(record, textCalls);
  };
  for await (const chunk of chunksOf(file)) {
    bytes += chunk.length;
    const text = rest + decoder.decode(chunk, { stream: true });
    let start = 0;
    for (let end = text.indexOf("\n"); end !== -1; end = text.indexOf("\n", start)) {
      line(text.slice(start, end));
      start = end + 1;
    }
    rest = text.slice(start);
  }
  rest += decoder.decode();
  if (rest !== "") line(rest);
  if (bytes === 0) throw inputError(file.shown, "the file is empty: no recorded stream in it");
  if (!content) throw inputError(file.shown, "the file holds only blank or comment lines: no recorded stream in it");
  return { textCalls };
}

/** A toolwire NDJSON file's streams (bounded by the size limit; the events are kept). */
async function readRecordsFile(file: InputSource): Promise<LoadedRecording> {
  const parser = new RecordsParser();
  const { textCalls } = await forEachRecord(file, (record) => parser.add(record));
  return { streams: parser.finish(), format: "records", notes: [], ...(textCalls !== null ? { textCalls } : {}) };
}

/** A recording without a single event is empty input. */
function requireStreams(file: Pick<InputFile, "shown">, loaded: LoadedRecording): LoadedRecording {
  if (loaded.streams.length === 0 || loaded.streams.every((stream) => stream.events.length === 0)) {
    const why = loaded.notes.length > 0 ? `:\n  ${loaded.notes.join("\n  ")}` : "";
    throw inputError(file.shown, `no recorded stream in it (${loaded.format})${why}`);
  }
  return loaded;
}

/** ImportError messages start with the file name; the CLI prints the path itself, once. */
export function withoutFilePrefix(error: ImportError): string {
  const prefix = `${error.file}: `;
  return error.message.startsWith(prefix) ? error.message.slice(prefix.length) : error.message;
}

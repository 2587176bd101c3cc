import { readFile, readdir, stat } from "node:fs/promises";
import { basename, relative, resolve, join, sep } from "node:path";
import { parseRecords, RecordFormatError, type RecordedStream } from "../framing/records.js";
import { ImportError, importRecording, type ImportOptions } from "../import/index.js";
import { CliError, EXIT } from "./context.js";

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
export async function collectInputFiles(paths: readonly string[], cwd: string): Promise<InputFile[]> {
  const files: InputFile[] = [];
  for (const path of paths) {
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

/** The bytes of a file, or the input error saying why not. */
export async function readInputBytes(file: Pick<InputFile, "path" | "shown">): Promise<Uint8Array> {
  try {
    return new Uint8Array(await readFile(file.path));
  } catch (error) {
    throw readError(file.shown, error);
  }
}

export interface LoadedRecording {
  streams: RecordedStream[];
  /** The container it was read from: `records` for toolwire NDJSON, else the import format. */
  format: string;
  notes: string[];
}

/** The bytes of a file that holds something: no bytes, or only blank and `#` lines, is empty input. */
async function readNonEmpty(file: Pick<InputFile, "path" | "shown">): Promise<Uint8Array> {
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
export async function loadRecording(file: Pick<InputFile, "path" | "shown">): Promise<LoadedRecording> {
  const bytes = await readNonEmpty(file);
  let loaded: LoadedRecording;
  try {
    if (file.path.endsWith(".ndjson")) {
      loaded = { streams: parseRecords(new TextDecoder().decode(bytes)), format: "records", notes: [] };
    } else {
      loaded = await importRecording(basename(file.path), bytes);
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
export async function importInput(file: Pick<InputFile, "path" | "shown">, options: ImportOptions = {}): Promise<LoadedRecording> {
  const bytes = await readNonEmpty(file);
  let loaded: LoadedRecording;
  try {
    loaded = await importRecording(basename(file.path), bytes, options);
  } catch (error) {
    if (error instanceof ImportError) throw inputError(file.shown, withoutFilePrefix(error));
    throw error;
  }
  return requireStreams(file, loaded);
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

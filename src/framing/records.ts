import { isProviderName, PROVIDERS, type ProviderEvent, type ProviderName } from "../types.js";
import { ToolwireError } from "../errors.js";
import { isPlainObject } from "../json/shape.js";

/**
 * The recorded stream file format of docs/design.md ("recorded stream files (NDJSON)"): one JSON
 * value per line, `#` comments and blank lines skipped, wrapped records
 * `{data, event?, sequence?, provider?, t?}` or bare payload lines.
 */

/** One stream of a recorded file (the records sharing a `sequence`), as `parseRecords` returns it. */
export interface RecordedStream {
  /** The records' `sequence`, or null when they name none. */
  sequence: string | null;
  /** The records' `provider`, or null when they name none (then it comes from the caller or detection). */
  provider: ProviderName | null;
  /** The provider events, in file order. */
  events: ProviderEvent[];
  /** Milliseconds since stream start per event (`t`), present only when some record had one. */
  times?: (number | undefined)[];
}

/** A line of a recorded stream file that is not a record (code `invalid_record`). */
export class RecordFormatError extends ToolwireError {
  constructor(
    message: string,
    /** 1-based line number in the parsed text. */
    readonly line: number,
  ) {
    super("invalid_record", `line ${line}: ${message}`);
  }
}

const WRAPPER_KEYS = new Set(["data", "event", "sequence", "provider", "t"]);

/**
 * True when a parsed line is a wrapped record rather than a payload. The rule is structural so
 * that it needs no knowledge of any provider: an object with a `data` key and no key outside
 * the wrapper's five. No provider payload in the corpus has that shape.
 */
export function isWrappedRecord(value: unknown): value is Record<string, unknown> & { data: unknown } {
  if (!isPlainObject(value) || !Object.hasOwn(value, "data")) return false;
  for (const key of Object.keys(value)) if (!WRAPPER_KEYS.has(key)) return false;
  return true;
}

function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return typeof value === "string" ? `the string ${JSON.stringify(value.length > 40 ? value.slice(0, 40) + "…" : value)}` : `a ${typeof value}`;
}

/**
 * Parses a recorded stream file (NDJSON records, see docs/design.md) into streams grouped by
 * `sequence`, in file order. Blank and `#` lines are skipped; a line that is not a record throws
 * RecordFormatError with its line number.
 */
export function parseRecords(text: string): RecordedStream[] {
  const parser = new RecordsParser();
  // Text that starts with a byte-order mark is still the format.
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  const lines = body.split("\n");
  for (const line of lines) parser.line(line);
  return parser.finish();
}

/** One record line, parsed: its stream, its event and its time offset. */
export interface ParsedRecord {
  sequence: string | null;
  provider: ProviderName | null;
  event: ProviderEvent;
  t: number | undefined;
  /** 1-based line number. */
  line: number;
}

/**
 * The line-at-a-time form of {@link parseRecords}, for a file read as a stream: feed each line
 * (without its `\n`; a trailing `\r` and a leading byte-order mark on the first line are dropped)
 * and take the streams with `finish()`. Same rules and errors as parseRecords.
 */
export class RecordsParser {
  readonly #streams = new Map<string | null, RecordedStream & { timed: boolean }>();
  #lineNumber = 0;

  /** Lines fed so far. */
  get lines(): number {
    return this.#lineNumber;
  }

  line(raw: string): void {
    const record = this.parse(raw);
    if (record !== null) this.add(record);
  }

  /**
   * One line checked and parsed, without keeping it: null for a blank or `#` line. Callers that
   * consume records as they come (and never need them grouped) use this and `add` nothing.
   */
  parse(raw: string): ParsedRecord | null {
    const lineNumber = ++this.#lineNumber;
    const unmarked = lineNumber === 1 && raw.charCodeAt(0) === 0xfeff ? raw.slice(1) : raw;
    const line = unmarked.endsWith("\r") ? unmarked.slice(0, -1) : unmarked;
    const trimmed = line.trim();
    if (trimmed === "" || trimmed.startsWith("#")) return null;

    let value: unknown;
    try {
      value = JSON.parse(trimmed);
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      const preview = trimmed.length > 60 ? trimmed.slice(0, 60) + "…" : trimmed;
      throw new RecordFormatError(
        `not a JSON value (${reason}): ${preview}. Each line must be a wrapped record {"data": …} or a JSON payload; comments start with '#'.`,
        lineNumber,
      );
    }

    let sequence: string | null = null;
    let provider: ProviderName | null = null;
    let event: ProviderEvent;
    let t: number | undefined;
    if (isWrappedRecord(value)) {
      const record = value;
      if (record.sequence !== undefined && record.sequence !== null) {
        if (typeof record.sequence !== "string") {
          throw new RecordFormatError(`"sequence" must be a string or null, got ${describe(record.sequence)}`, lineNumber);
        }
        sequence = record.sequence;
      }
      if (record.provider !== undefined && record.provider !== null) {
        if (!isProviderName(record.provider)) {
          throw new RecordFormatError(
            `unknown provider ${JSON.stringify(record.provider)}; expected one of ${PROVIDERS.join(", ")}`,
            lineNumber,
          );
        }
        provider = record.provider;
      }
      event = { data: record.data };
      if (record.event !== undefined && record.event !== null) {
        if (typeof record.event !== "string") {
          throw new RecordFormatError(`"event" must be a string (the SSE event name), got ${describe(record.event)}`, lineNumber);
        }
        event.event = record.event;
      }
      if (record.t !== undefined && record.t !== null) {
        if (typeof record.t !== "number" || !Number.isFinite(record.t) || record.t < 0) {
          throw new RecordFormatError(`"t" must be a non-negative number of milliseconds, got ${describe(record.t)}`, lineNumber);
        }
        t = record.t;
      }
    } else {
      event = { data: value };
    }
    return { sequence, provider, event, t, line: lineNumber };
  }

  /** Keeps a parsed record in its stream (grouped by sequence; a provider that conflicts with the stream's is an error). */
  add(record: ParsedRecord): void {
    const { sequence, provider, event, t, line: lineNumber } = record;
    let stream = this.#streams.get(sequence);
    if (!stream) {
      stream = { sequence, provider, events: [], timed: false };
      this.#streams.set(sequence, stream);
    }
    if (provider !== null) {
      if (stream.provider === null) {
        stream.provider = provider;
      } else if (stream.provider !== provider) {
        throw new RecordFormatError(
          `provider ${JSON.stringify(provider)} conflicts with ${JSON.stringify(stream.provider)} given earlier for sequence ${JSON.stringify(sequence)}`,
          lineNumber,
        );
      }
    }
    if (t !== undefined && !stream.timed) {
      stream.timed = true;
      stream.times = new Array<number | undefined>(stream.events.length).fill(undefined);
    }
    stream.events.push(event);
    if (stream.timed) stream.times?.push(t);
  }

  finish(): RecordedStream[] {
    return [...this.#streams.values()].map(({ timed: _timed, ...stream }) => stream);
  }
}

export interface SerializeOptions {
  /** Comment text written first, one `# ` line per line of text (source attribution, notes). */
  header?: string | readonly string[];
}

/** Writes wrapped records, one per line, each stream's records contiguous, in the given order. */
export function serializeRecords(streams: readonly RecordedStream[], options: SerializeOptions = {}): string {
  let out = "";
  if (options.header !== undefined) {
    const text = typeof options.header === "string" ? options.header : options.header.join("\n");
    for (const line of text.split("\n")) out += line === "" ? "#\n" : `# ${line}\n`;
  }
  for (const stream of streams) {
    stream.events.forEach((event, i) => {
      // Key order puts the grouping fields first so that files read well with `grep` and `cut`.
      const record: Record<string, unknown> = {};
      if (stream.sequence !== null) record.sequence = stream.sequence;
      if (stream.provider !== null) record.provider = stream.provider;
      if (event.event !== undefined) record.event = event.event;
      const t = stream.times?.[i];
      if (t !== undefined) record.t = t;
      record.data = event.data === undefined ? null : event.data;
      out += JSON.stringify(record) + "\n";
    });
  }
  return out;
}

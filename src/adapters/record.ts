import type { Diagnostic, ProviderEvent, ProviderName } from "../types.js";
import { ToolwireError } from "../errors.js";

/**
 * Where `record` writes: a web `WritableStream<string>` (in Node, `Writable.toWeb(createWriteStream(path))`)
 * or a callback. Either receives text made of whole lines, each ending in "\n": one write per
 * chunk read from the source (a chunk may hold several events). A callback's promise, if any, is
 * awaited before its next call.
 */
export type RecordSink = WritableStream<string> | ((line: string) => void | Promise<void>);

/**
 * Options of `record`: the sequence name, a header comment, whether to leave the sink open, and a
 * `redact` hook.
 */
export interface RecordOptions {
  /** Written as `sequence` on every record, so several turns can share one file; also the decoded turn's `sequence`. */
  sequence?: string | null;
  /** Comment text written first, one `# ` line per line (where and why the stream was recorded). */
  header?: string | readonly string[];
  /** Leave a WritableStream sink open at the end (to append more turns); by default it is closed. */
  preventClose?: boolean;
  /**
   * Rewrites each event before it is written, for recordings that leave the machine (a bug report,
   * a shared fixture): return the event to write, or null to leave it out. It receives a copy, so
   * decoding always sees the event as it arrived. If it throws, recording stops and the turn says
   * why (`record_failed`); decoding goes on.
   */
  redact?: (event: ProviderEvent) => ProviderEvent | null;
}

const RECORDING = Symbol.for("toolwire.recording");

/**
 * A source wrapped by `record`: pass it to `decodeStream` or `collectTurn`, which decode it as
 * usual and write every provider event to the sink as it arrives.
 */
export interface Recording<S> {
  readonly [RECORDING]: true;
  readonly source: S;
  readonly sink: RecordSink;
  readonly options: RecordOptions;
}

/**
 * Tees a live stream into the NDJSON record format (docs/design.md, "recorded stream files") while it
 * is decoded: `collectTurn("anthropic", record(response, sink))`. Each record carries the provider,
 * the SSE event name, `t` (ms since decoding started) and the payload; the file replays with
 * `toolwire replay` and `toolwire serve`.
 *
 * Only the response body's events are written: request and response headers, URLs and the
 * source object itself are never read, so an API key or `authorization` header cannot reach the
 * file.
 */
export function record<S>(source: S, sink: RecordSink, options: RecordOptions = {}): Recording<S> {
  if (typeof sink !== "function" && !(typeof WritableStream !== "undefined" && sink instanceof WritableStream)) {
    throw new ToolwireError("invalid_sink", "record: the sink must be a WritableStream<string> or a function called with each line.");
  }
  return { [RECORDING]: true, source, sink, options };
}

export function isRecording(value: unknown): value is Recording<unknown> {
  return typeof value === "object" && value !== null && (value as { [RECORDING]?: unknown })[RECORDING] === true;
}

function now(): number {
  return typeof performance !== "undefined" ? performance.now() : Date.now();
}

/** Writes records for one stream; failures of the sink are kept as a diagnostic, never thrown into decoding. */
export class Recorder {
  private readonly writer: WritableStreamDefaultWriter<string> | null;
  private readonly callback: ((line: string) => void | Promise<void>) | null;
  private readonly prefix: string;
  private start = 0;
  private failure: unknown = null;
  private pending: Promise<void> = Promise.resolve();
  private closed = false;

  constructor(
    provider: ProviderName,
    private readonly recording: Recording<unknown>,
  ) {
    const { sink, options } = recording;
    this.writer = typeof sink === "function" ? null : sink.getWriter();
    this.callback = typeof sink === "function" ? sink : null;
    // Key order as serializeRecords writes it, so recorded files read the same as imported ones.
    let prefix = "{";
    if (options.sequence !== undefined && options.sequence !== null) prefix += `"sequence":${JSON.stringify(options.sequence)},`;
    prefix += `"provider":${JSON.stringify(provider)},`;
    this.prefix = prefix;
    if (options.header !== undefined) {
      const text = typeof options.header === "string" ? options.header : options.header.join("\n");
      for (const line of text.split("\n")) this.write(line === "" ? "#\n" : `# ${line}\n`);
    }
  }

  /** Marks the start of the stream: `t` counts from here. */
  begin(): void {
    this.start = now();
  }

  add(events: readonly ProviderEvent[]): void {
    if (events.length === 0 || this.failure !== null) return;
    const t = Math.round(now() - this.start);
    const redact = this.recording.options.redact;
    let text = "";
    for (const original of events) {
      let event: ProviderEvent | null = original;
      if (redact) {
        try {
          event = redact(structuredClone(original));
        } catch (error) {
          this.fail(error);
          return;
        }
        if (event === null) continue;
      }
      let line = this.prefix;
      if (event.event !== undefined) line += `"event":${JSON.stringify(event.event)},`;
      line += `"t":${t},"data":${JSON.stringify(event.data === undefined ? null : event.data)}}\n`;
      text += line;
    }
    this.write(text);
  }

  /**
   * Lets the sink catch up: resolves once it can take more (WritableStream backpressure) or the
   * callback's promise settled, so a slow disk slows reading rather than filling memory.
   */
  async drain(): Promise<void> {
    if (this.writer) {
      await this.writer.ready.catch((error: unknown) => this.fail(error));
    } else {
      await this.pending;
    }
  }

  private write(text: string): void {
    if (this.failure !== null || this.closed) return;
    try {
      if (this.writer) {
        // Writes settle in order, so the last one settling means all of them did.
        this.pending = this.writer.write(text).catch((error: unknown) => this.fail(error));
      } else if (this.callback) {
        const callback = this.callback;
        this.pending = this.pending.then(async () => {
          if (this.failure === null) await callback(text);
        }).catch((error: unknown) => this.fail(error));
      }
    } catch (error) {
      this.fail(error);
    }
  }

  private fail(error: unknown): void {
    if (this.failure === null) this.failure = error ?? new ToolwireError("sink_failed", "unknown sink failure");
  }

  /** Flushes and (unless `preventClose`) closes the sink; returns a diagnostic if recording failed. */
  async close(): Promise<Diagnostic | null> {
    if (!this.closed) {
      this.closed = true;
      if (this.writer) {
        try {
          if (this.recording.options.preventClose) {
            await this.pending;
            this.writer.releaseLock();
          } else {
            await this.writer.close();
          }
        } catch (error) {
          this.fail(error);
        }
      } else {
        await this.pending;
      }
    }
    if (this.failure === null) return null;
    const message = this.failure instanceof Error ? this.failure.message : String(this.failure);
    return {
      code: "record_failed",
      severity: "error",
      message: `Writing the recording failed (${message}); the recorded file is incomplete. Decoding was not affected.`,
    };
  }
}

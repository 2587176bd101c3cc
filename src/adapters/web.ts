import { createFramer, defaultFraming, type Framer, type FramingName } from "../framing/framer.js";
import { resolveLimits } from "../limits.js";
import type { StreamingDecoder } from "../providers/codec.js";
import { createDecoder } from "../providers/registry.js";
import type { CodecEvent, DecodedTurn, Diagnostic, ProviderEvent, ProviderName, TruncationCause } from "../types.js";
import type { ByteDecoderOptions } from "./bytes.js";
import { isRecording, Recorder, type Recording } from "./record.js";
import { cancelSdkStream, pristineSdkEvents, providerEventFromSdkError, toProviderEvent, type SdkEventOf } from "./sdk.js";
import { DEFAULT_IDLE_TIMEOUT_MS, isStopped, Watchdog, type Stopped, type WatchdogOptions } from "./watchdog.js";
import { ToolwireError } from "../errors.js";

/**
 * What `decodeStream` accepts for provider `P`: a fetch `Response`, a byte `ReadableStream`, an
 * async iterable of byte or text chunks, or an async iterable of parsed events: what the official
 * SDKs' streams yield (`anthropic.messages.create({stream: true})`, `anthropic.messages.stream()`,
 * `openai.chat.completions.create({stream: true})`, `openai.responses.create({stream: true})`),
 * or `{data, event?}` provider events. Any of these may be wrapped by `record`.
 */
export type StreamSourceFor<P extends ProviderName> =
  | Response
  | ReadableStream<Uint8Array>
  | AsyncIterable<Uint8Array | string>
  | AsyncIterable<SdkEventOf<P> | ProviderEvent>;

/** Any source, for any provider. */
export type StreamSource = StreamSourceFor<ProviderName> | Recording<StreamSourceFor<ProviderName>>;

/**
 * Options of `decodeStream` and `collectTurn`: the byte decoder options plus the stall watchdog
 * (idle timeout, deadline, abort signal).
 */
export interface DecodeStreamOptions extends ByteDecoderOptions, WatchdogOptions {}

function isResponse(source: unknown): source is Response {
  return typeof Response !== "undefined" && source instanceof Response;
}

function isReadableStream(source: unknown): source is ReadableStream<Uint8Array> {
  return typeof ReadableStream !== "undefined" && source instanceof ReadableStream;
}

/** A source opened for reading, with a way to stop it that works while a read is pending. */
interface OpenSource {
  next(): Promise<IteratorResult<unknown>>;
  /** Stops the underlying request (a timeout, an abort, a consumer that stopped reading). */
  cancel(reason: unknown): void;
  /** Lets go of a source that ended normally. */
  release(): void;
}

function openReadable(stream: ReadableStream<Uint8Array> | null): OpenSource {
  if (!stream) return { next: async () => ({ done: true, value: undefined }), cancel() {}, release() {} };
  const reader = stream.getReader();
  return {
    next: () => reader.read() as Promise<IteratorResult<unknown>>,
    cancel(reason) {
      // Cancelling resolves a pending read and, for a fetch body, closes the connection.
      reader.cancel(reason).catch(() => {});
    },
    release() {
      reader.releaseLock();
    },
  };
}

function openSource(source: unknown): OpenSource {
  if (isResponse(source)) return openReadable(source.body);
  if (isReadableStream(source)) return openReadable(source);
  if (typeof source !== "object" || source === null || typeof (source as AsyncIterable<unknown>)[Symbol.asyncIterator] !== "function") {
    throw new ToolwireError("invalid_source", "decodeStream: the source must be a Response, a ReadableStream, or an async iterable (an SDK stream).");
  }
  // Listening first: the SDK emits on the listener before the iterator's read resolves.
  const pristine = pristineSdkEvents(source);
  const iterator = (source as AsyncIterable<unknown>)[Symbol.asyncIterator]();
  return {
    next: pristine ? () => iterator.next().then((result) => (result.done ? result : { done: false, value: pristine(result.value) })) : () => iterator.next(),
    cancel(reason) {
      // An async generator cannot be returned while it awaits the network: abort the SDK's own
      // request first, then ask the iterator to finish once its pending read settles.
      cancelSdkStream(source, reason);
      iterator.return?.().catch(() => {});
    },
    release() {},
  };
}

function sourceFailure(error: unknown): Diagnostic {
  const name = error instanceof Error ? error.name : typeof error;
  const message = error instanceof Error ? error.message : String(error);
  return {
    code: "source_error",
    severity: "error",
    message: `Reading the stream failed (${name}: ${message}); the turn is incomplete and its open calls are truncated.`,
    data: { name, message },
  };
}

/**
 * What a fetch Response's own metadata says about its body, when the caller did not choose a
 * framing: Gemini answers in SSE or in one JSON array depending on `alt=sse`, and the content
 * type tells which; an HTTP error carries one JSON object (read with the JSON-array framer, which
 * takes a single object as one event) and deserves a diagnostic naming the status. Other content
 * types are not trusted: OpenAI-compatible proxies often label SSE as JSON or text.
 */
function inspectResponse(provider: ProviderName, response: Response): { framing?: FramingName; diagnostic?: Diagnostic } {
  const type = (response.headers.get("content-type") ?? "").toLowerCase();
  const sse = type.includes("text/event-stream");
  if (!response.ok) {
    return {
      ...(sse ? {} : { framing: "json-array" as const }),
      diagnostic: {
        code: "http_error",
        severity: "error",
        message: `The response has HTTP status ${response.status}${response.statusText ? ` (${response.statusText})` : ""}: no stream was served; its body was decoded as the provider's error.`,
        data: { status: response.status },
      },
    };
  }
  if (provider === "gemini" && type.includes("application/json")) return { framing: "json-array" };
  return {};
}

/**
 * Framing (for byte sources), recording and decoding as one pipeline. Framing findings are
 * reported as they happen and attached to the finished turn, as `createByteDecoder` does.
 */
class Pipeline {
  private framer: Framer | null = null;
  private reportedFraming = 0;
  private mode: "bytes" | "objects" | null = null;
  private readonly decoder: StreamingDecoder;
  private readonly extraDiagnostics: Diagnostic[] = [];
  private framing: FramingName;

  recorder: Recorder | null = null;

  constructor(
    private readonly provider: ProviderName,
    private readonly options: DecodeStreamOptions,
  ) {
    this.decoder = createDecoder(provider, options);
    this.framing = options.framing ?? defaultFraming(provider);
  }

  /** Applies what a Response says about its body; returns the diagnostic to emit now, if any. */
  inspect(response: Response): CodecEvent[] {
    const found = inspectResponse(this.provider, response);
    if (found.framing && this.options.framing === undefined) this.framing = found.framing;
    if (!found.diagnostic) return [];
    this.extraDiagnostics.push(found.diagnostic);
    return [{ type: "diagnostic", diagnostic: found.diagnostic }];
  }

  push(item: unknown): CodecEvent[] {
    if (item instanceof Uint8Array || typeof item === "string") {
      if (this.mode === "objects") throw new ToolwireError("mixed_source", "decodeStream: a source must yield either bytes/text or parsed events, not both.");
      this.mode = "bytes";
      this.framer ??= createFramer(this.framing, { maxLineChars: resolveLimits(this.options.limits).maxLineChars });
      const out = this.feed(this.framer.push(item));
      this.reportFraming(out);
      return out;
    }
    if (typeof item !== "object" || item === null) {
      throw new ToolwireError("invalid_source", `decodeStream: the source yielded ${item === null ? "null" : typeof item}; expected bytes, text or parsed event objects.`);
    }
    if (this.mode === "bytes") throw new ToolwireError("mixed_source", "decodeStream: a source must yield either bytes/text or parsed events, not both.");
    this.mode = "objects";
    return this.feed([toProviderEvent(item)]);
  }

  /** An event that did not come through `push` (an SDK's thrown in-stream error). */
  pushEvent(event: ProviderEvent): CodecEvent[] {
    return this.feed([event]);
  }

  private feed(events: ProviderEvent[]): CodecEvent[] {
    this.recorder?.add(events);
    const out: CodecEvent[] = [];
    for (const event of events) this.decoder.pushInto(event, out);
    return out;
  }

  private reportFraming(out: CodecEvent[]): void {
    const found = this.framer?.diagnostics ?? [];
    for (; this.reportedFraming < found.length; this.reportedFraming++) {
      out.push({ type: "diagnostic", diagnostic: found[this.reportedFraming] as Diagnostic });
    }
  }

  /** Ends the stream: normally, or on the consumer's side with a diagnostic and a truncation cause. */
  async end(abort?: { diagnostic: Diagnostic; cause: TruncationCause }): Promise<CodecEvent[]> {
    // A last event without its blank line still arrived: flush it in every case.
    const out = this.framer ? this.feed(this.framer.flush()) : [];
    this.reportFraming(out);
    const recordProblem = this.recorder ? await this.recorder.close() : null;
    if (recordProblem) out.push({ type: "diagnostic", diagnostic: recordProblem });
    const trailing = abort ? this.decoder.abort(abort.diagnostic, abort.cause) : this.decoder.flush();
    const finish = trailing.find((event) => event.type === "finish");
    if (finish && finish.type === "finish") {
      // Findings outside the decoder belong on the turn too, so a stored turn explains itself.
      // Loops, not spreads: a hostile stream can leave more diagnostics than a call takes arguments.
      for (const diagnostic of this.extraDiagnostics) finish.turn.diagnostics.push(diagnostic);
      for (const diagnostic of this.framer?.diagnostics ?? []) finish.turn.diagnostics.push(diagnostic);
      if (recordProblem) finish.turn.diagnostics.push(recordProblem);
    }
    for (const event of trailing) out.push(event);
    return out;
  }
}

/**
 * One decoding run over one source: opening, reading through the watchdog, framing and decoding,
 * and cleanup. `step` reads one item of the source and returns the events it produced (possibly
 * none), or null once the stream has ended and its trailing events were returned. Both doors
 * drive it: `collectTurn` directly, `decodeStream` through a hand-written async iterator, so
 * that no async generator resumes per event.
 */
class DecodeRun {
  private pipeline: Pipeline | null = null;
  private input: OpenSource | null = null;
  private inner: unknown = null;
  private watchdog: Watchdog | null = null;
  private started = false;
  /** The source reached an end (normal, stop, failure) and its trailing events were produced. */
  private settled = false;
  /** Nothing more to read or return. */
  finished = false;

  constructor(
    private readonly provider: ProviderName,
    private readonly source: unknown,
    private options: DecodeStreamOptions,
  ) {}

  /** Opens everything; throws for misuse before anything is locked (the source's reader, the sink's writer). */
  private start(): CodecEvent[] {
    this.started = true;
    const recording = isRecording(this.source) ? this.source : null;
    // A recording's sequence name is the turn's too, unless the caller named the turn.
    const recordedSequence = recording?.options.sequence;
    if (recordedSequence !== undefined && recordedSequence !== null && this.options.sequence === undefined) this.options = { ...this.options, sequence: recordedSequence };
    const pipeline = new Pipeline(this.provider, this.options);
    this.pipeline = pipeline;
    this.inner = recording ? recording.source : this.source;
    const input = openSource(this.inner);
    this.input = input;
    if (recording) pipeline.recorder = new Recorder(this.provider, recording);
    const watchdogOptions = withDefaultIdleTimeout(this.options);
    this.watchdog = Watchdog.needed(watchdogOptions) ? new Watchdog(watchdogOptions, (stop) => input.cancel(stop.reason)) : null;
    pipeline.recorder?.begin();
    return isResponse(this.inner) ? pipeline.inspect(this.inner) : [];
  }

  async step(): Promise<CodecEvent[] | null> {
    if (this.finished) return null;
    try {
      if (!this.started) {
        const first = this.start();
        if (first.length > 0) return first;
      }
      const pipeline = this.pipeline as Pipeline;
      const input = this.input as OpenSource;
      const watchdog = this.watchdog;
      if (this.settled) {
        this.close();
        return null;
      }
      let result: IteratorResult<unknown> | Stopped | null = null;
      let failure: { error: unknown } | null = null;
      try {
        const read = input.next();
        result = watchdog ? await watchdog.race(read) : await read;
      } catch (error) {
        failure = { error };
      }
      // Cancelling the source on a stop settles its pending read too (as done, or as an abort
      // error): whatever the read says then, the stop is why the stream ended.
      const stop = watchdog?.stopped;
      if (stop) {
        this.settled = true;
        return await pipeline.end({ diagnostic: stop.diagnostic, cause: "aborted" });
      }
      if (failure) {
        this.settled = true;
        const event = providerEventFromSdkError(this.provider, failure.error);
        if (!event) return await pipeline.end({ diagnostic: sourceFailure(failure.error), cause: "stream_ended" });
        const out = pipeline.pushEvent(event);
        for (const trailing of await pipeline.end()) out.push(trailing);
        return out;
      }
      // A STOPPED result always comes with `watchdog.stopped` set, handled above.
      if (result === null || isStopped(result)) return [];
      if (result.done) {
        this.settled = true;
        input.release();
        return await pipeline.end();
      }
      const out = pipeline.push(result.value);
      if (pipeline.recorder) await pipeline.recorder.drain();
      return out;
    } catch (error) {
      await this.cancel();
      throw error;
    }
  }

  /** The run ended normally: only the timers and the signal listener are left to free. */
  private close(): void {
    this.finished = true;
    this.watchdog?.dispose();
  }

  /** The consumer stopped reading (or decoding threw): free the request as the SDKs do on `break`. */
  async cancel(): Promise<void> {
    if (this.finished) return;
    this.finished = true;
    this.watchdog?.dispose();
    if (this.started && !this.settled) {
      this.input?.cancel(new ToolwireError("consumer_stopped", "decodeStream: the consumer stopped reading"));
      await this.pipeline?.recorder?.close();
    }
  }
}

/** The watchdog options with the default idle timeout applied; `idleTimeoutMs: 0` turns it off. */
function withDefaultIdleTimeout(options: DecodeStreamOptions): WatchdogOptions {
  const idle = options.idleTimeoutMs === undefined ? DEFAULT_IDLE_TIMEOUT_MS : options.idleTimeoutMs;
  const out: WatchdogOptions = {};
  // Validated by the watchdog; 0 means "no idle timeout", as documented.
  if (idle !== 0) out.idleTimeoutMs = idle;
  if (options.deadlineMs !== undefined) out.deadlineMs = options.deadlineMs;
  if (options.signal !== undefined) out.signal = options.signal;
  return out;
}

const DONE: IteratorReturnResult<undefined> = Object.freeze({ done: true, value: undefined }) as IteratorReturnResult<undefined>;

/**
 * The async iterators `decodeStream` and `decodeStreamBatches` return: operations (`next`,
 * `return`, `throw`) run one after the other, as an async generator queues them; `return` cancels
 * the source as `break` does.
 */
abstract class RunIterator<T> implements AsyncGenerator<T, void, undefined> {
  /** Operations not yet settled; later ones run after earlier ones. */
  protected pending = 0;
  private queue: Promise<unknown> = Promise.resolve();

  constructor(protected readonly run: DecodeRun) {}

  abstract next(): Promise<IteratorResult<T, void>>;

  protected abstract reset(): void;

  protected enqueue<R>(operation: () => Promise<R>): Promise<R> {
    const result = this.pending++ === 0 ? operation() : this.queue.then(operation, operation);
    const settled = result.finally(() => {
      this.pending--;
    });
    this.queue = settled.catch(() => {});
    return settled;
  }

  return(): Promise<IteratorResult<T, void>> {
    return this.enqueue(async () => {
      this.reset();
      await this.run.cancel();
      return DONE;
    });
  }

  throw(error: unknown): Promise<IteratorResult<T, void>> {
    return this.enqueue(async () => {
      this.reset();
      await this.run.cancel();
      throw error;
    });
  }

  [Symbol.asyncIterator](): this {
    return this;
  }
}

/**
 * Events of one chunk are handed out from a buffer, each with an already-resolved promise,
 * instead of resuming an async generator per event (several microtask turns per event).
 */
class EventIterator extends RunIterator<CodecEvent> {
  private buffer: CodecEvent[] = [];
  private position = 0;

  next(): Promise<IteratorResult<CodecEvent, void>> {
    if (this.pending === 0) {
      if (this.position < this.buffer.length) return Promise.resolve({ done: false, value: this.buffer[this.position++] as CodecEvent });
      if (this.run.finished) return Promise.resolve(DONE);
    }
    return this.enqueue(() => this.serve());
  }

  protected reset(): void {
    this.buffer = [];
    this.position = 0;
  }

  private serve(): Promise<IteratorResult<CodecEvent, void>> {
    if (this.position < this.buffer.length) return Promise.resolve({ done: false, value: this.buffer[this.position++] as CodecEvent });
    if (this.run.finished) return Promise.resolve(DONE);
    return this.refill();
  }

  private async refill(): Promise<IteratorResult<CodecEvent, void>> {
    while (true) {
      const events = await this.run.step();
      if (events === null) {
        this.reset();
        return DONE;
      }
      if (events.length > 0) {
        this.buffer = events;
        this.position = 1;
        return { done: false, value: events[0] as CodecEvent };
      }
    }
  }
}

/** One array per chunk read that produced events. */
class BatchIterator extends RunIterator<CodecEvent[]> {
  next(): Promise<IteratorResult<CodecEvent[], void>> {
    if (this.pending === 0 && this.run.finished) return Promise.resolve(DONE);
    return this.enqueue(() => this.refill());
  }

  protected reset(): void {}

  private async refill(): Promise<IteratorResult<CodecEvent[], void>> {
    while (true) {
      const events = await this.run.step();
      if (events === null) return DONE;
      if (events.length > 0) return { done: false, value: events };
    }
  }
}

const asyncDispose = (Symbol as { asyncDispose?: symbol }).asyncDispose;
if (asyncDispose !== undefined) {
  // `await using events = decodeStream(...)` cancels the source as `break` does, where the runtime knows the symbol.
  Object.defineProperty(RunIterator.prototype, asyncDispose, {
    value(this: RunIterator<unknown>) {
      return this.return().then(() => undefined);
    },
  });
}

/**
 * Decodes a live stream into CodecEvents; the last event is always `finish` with the DecodedTurn.
 *
 * Calls are final as soon as the provider closes them (`tool_call_end` arrives with the block's
 * stop, not at the end of the stream), so an agent may start a call while the turn goes on.
 *
 * The stream never throws for what happens to it: a timeout (`idleTimeoutMs`, by default
 * {@link DEFAULT_IDLE_TIMEOUT_MS} = 120 s without a byte, `0` turns it off; `deadlineMs`), an
 * abort through `signal`, or a source that fails (network error) ends the turn `incomplete`, with
 * a diagnostic (`idle_timeout`, `deadline_exceeded`, `aborted`, `source_error`) and every open
 * call truncated. An error the provider sent mid-stream, which the SDKs raise as an exception, is
 * decoded as the provider's error event (status `error`). It throws only for misuse (an unknown
 * provider, a source of the wrong kind), at the first `next()`. When the consumer stops reading
 * early, or a bound trips, the source is cancelled (the SDKs' request is aborted, a fetch body
 * cancelled).
 */
export function decodeStream<P extends ProviderName>(
  provider: P,
  source: StreamSourceFor<P> | Recording<StreamSourceFor<P>>,
  options: DecodeStreamOptions = {},
): AsyncGenerator<CodecEvent, void, undefined> {
  return new EventIterator(new DecodeRun(provider, source, options));
}

/**
 * `decodeStream`'s events, in the same order, handed out as one array per chunk read from the
 * source (a network chunk often carries dozens of small deltas): one `await` per chunk instead of
 * one per event, the cheapest way to watch a live stream. Same sources, options and guarantees;
 * the last array ends with `finish`. Arrays are never empty.
 */
export function decodeStreamBatches<P extends ProviderName>(
  provider: P,
  source: StreamSourceFor<P> | Recording<StreamSourceFor<P>>,
  options: DecodeStreamOptions = {},
): AsyncGenerator<CodecEvent[], void, undefined> {
  return new BatchIterator(new DecodeRun(provider, source, options));
}

/**
 * Decodes a whole stream and returns the DecodedTurn. Same sources, options and guarantees as
 * `decodeStream` (including the default idle timeout), without handing out the events.
 */
export async function collectTurn<P extends ProviderName>(
  provider: P,
  source: StreamSourceFor<P> | Recording<StreamSourceFor<P>>,
  options: DecodeStreamOptions = {},
): Promise<DecodedTurn> {
  const run = new DecodeRun(provider, source, options);
  let turn: DecodedTurn | null = null;
  for (let events = await run.step(); events !== null; events = await run.step()) {
    // The finish event is the last of its batch: look from the end.
    for (let i = events.length - 1; i >= 0; i--) {
      const event = events[i] as CodecEvent;
      if (event.type === "finish") {
        turn = event.turn;
        break;
      }
    }
  }
  return turn as DecodedTurn;
}

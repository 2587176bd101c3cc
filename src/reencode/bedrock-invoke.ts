import { base64ToBytes, bytesToBase64, decodeFrame, EventStreamError, EventStreamFrameSplitter, eventStreamDiagnostic, type EventStreamMessage } from "../framing/aws-eventstream.js";
import { encodeJsonEventFrame } from "../framing/aws-eventstream-encode.js";
import { isPlainObject } from "../json/shape.js";
import type { DecodedTurn, DecoderOptions, Diagnostic } from "../types.js";
import { createAnthropicReencoder } from "./anthropic.js";
import type { SseReencoder } from "./sse-reencoder.js";
import { joined } from "./bedrock.js";
import { SseEventSplitter, sseText } from "./sse-events.js";
import type { Reencoder, RepairReport } from "./types.js";

/**
 * Claude on Bedrock, `InvokeModelWithResponseStream` (`/model/{id}/invoke-with-response-stream`):
 * Anthropic Messages events, each base64 inside a `chunk` frame (`{"bytes": …, "p": …}`) of a
 * binary AWS event stream. The Anthropic re-encoder decides everything (see
 * `createAnthropicReencoder`: held `tool_use` blocks, rewritten calls, withheld cut or invalid
 * ones, renumbered blocks, `tool_use` → `end_turn` when no call is left); this layer only unwraps
 * the frames for it and wraps what it writes:
 *
 * - an event it forwards as it came goes out as the very frame it came in (byte for byte);
 * - an event it rewrote or added goes out in a new `chunk` frame (`:event-type chunk`,
 *   `{"bytes": base64(event JSON)}`, no `p` padding, fresh CRCs);
 * - exception frames (`:message-type exception`) go out as they came; the re-encoder sees each as
 *   an Anthropic `error` event, so a call cut by it is withheld. Frames of other event types pass
 *   at once, untouched;
 * - a frame with a bad CRC, or a chunk whose bytes are not base64 JSON, is forwarded as it came with
 *   every byte after it, unread, and reported (`classified`, `eventstream_…`), as for ConverseStream.
 */
export function createBedrockInvokeReencoder(options: DecoderOptions = {}): Reencoder {
  return new BedrockInvokeReencoder(options);
}

const utf8 = new TextEncoder();
const utf8Strict = new TextDecoder("utf-8", { fatal: true });

class BedrockInvokeReencoder implements Reencoder {
  readonly provider = "anthropic" as const;
  private readonly inner: SseReencoder;
  private readonly splitter = new EventStreamFrameSplitter();
  /** Splits what the Anthropic re-encoder writes back into events. */
  private readonly written = new SseEventSplitter();
  /** The frames each event text came in, oldest first: an event written as it came goes out as its frame. */
  private readonly framesOf = new Map<string, Uint8Array[]>();
  private readonly ownRepairs: RepairReport[] = [];
  private readonly framingDiagnostics: Diagnostic[] = [];
  private failed = false;
  private ended = false;
  /** Bytes after a corrupt frame, while the inner re-encoder holds events they must not pass. */
  private readonly afterCorrupt: Uint8Array[] = [];

  constructor(options: DecoderOptions) {
    this.inner = createAnthropicReencoder(options);
  }

  get turn(): DecodedTurn | null {
    return this.inner.turn;
  }

  get repairs(): readonly RepairReport[] {
    return this.ownRepairs.length === 0 ? this.inner.repairs : [...this.inner.repairs, ...this.ownRepairs];
  }

  push(chunk: Uint8Array): Uint8Array[] {
    if (this.ended || chunk.length === 0) return [];
    if (this.failed) return this.unread(chunk.slice(), []);
    const out: Uint8Array[] = [];
    this.splitter.append(chunk);
    for (;;) {
      const at = this.splitter.offset;
      let frame: Uint8Array | null = null;
      let message: EventStreamMessage;
      let text: string | null;
      try {
        frame = this.splitter.next();
        if (frame === null) break;
        message = decodeFrame(frame, at);
        text = eventText(message);
      } catch (error) {
        if (!(error instanceof EventStreamError)) throw error;
        this.fail(error, frame, out);
        break;
      }
      if (text === null) {
        out.push(frame);
        continue;
      }
      this.remember(text, frame);
      this.write(this.inner.push(utf8.encode(text)), out);
    }
    return joined(out);
  }

  flush(): Uint8Array[] {
    if (this.ended) return [];
    this.ended = true;
    const out: Uint8Array[] = [];
    const cut = this.failed ? null : this.splitter.truncated();
    if (cut) this.framingDiagnostics.push(eventStreamDiagnostic(cut));
    const rest = this.failed ? null : this.splitter.rest();
    this.write(this.inner.flush(), out);
    for (const bytes of this.afterCorrupt) out.push(bytes);
    if (rest && rest.length > 0) out.push(rest);
    this.framesOf.clear();
    const turn = this.inner.turn;
    if (turn) for (const diagnostic of this.framingDiagnostics) turn.diagnostics.push(diagnostic);
    return joined(out);
  }

  /** @deprecated Use `flush`. */
  end(): Uint8Array[] {
    return this.flush();
  }

  private remember(text: string, view: Uint8Array): void {
    // A copy: the splitter's buffer is reused, and an event may be held past this push.
    const frame = view.slice();
    const frames = this.framesOf.get(text);
    if (frames) frames.push(frame);
    else this.framesOf.set(text, [frame]);
  }

  /** What the Anthropic re-encoder wrote, as frames: the original frame of an event it kept as it came, else a new chunk. */
  private write(pieces: Uint8Array[], out: Uint8Array[]): void {
    for (const piece of pieces) {
      for (const event of this.written.push(piece)) {
        const frames = this.framesOf.get(event.raw);
        const original = frames?.shift();
        if (frames && frames.length === 0) this.framesOf.delete(event.raw);
        if (original) out.push(original);
        // An SSE comment (a keep-alive the re-encoder turned into one) has no chunk form: dropped.
        else if (event.event !== null) out.push(encodeJsonEventFrame("chunk", { bytes: bytesToBase64(utf8.encode(JSON.stringify(event.event.data))) }));
      }
    }
  }

  /** A corrupt frame: it and everything after it pass as they came; the re-encoder sees an error (a held call is cut). */
  private fail(error: EventStreamError, frame: Uint8Array | null, out: Uint8Array[]): void {
    this.failed = true;
    const code = `eventstream_${error.code}`;
    this.framingDiagnostics.push(eventStreamDiagnostic(error));
    this.ownRepairs.push({
      stage: "response",
      action: "classified",
      code,
      provider: "anthropic",
      message: `${error.message}. The frame and every byte after it were forwarded as they came, unread; the client's own checksum check sees the damage.`,
    });
    const text = sseText({ type: "error", error: { type: code, message: error.message } }, "error");
    // The error event stands for the corrupt frame: where the re-encoder writes it, the frame goes.
    // The inner re-encoder may hold it behind a call that waits for its verdict: the frame stays
    // remembered until it is written.
    if (frame !== null) this.remember(text, frame);
    this.write(this.inner.push(utf8.encode(text)), out);
    const rest = this.splitter.rest();
    if (rest.length > 0) this.unread(rest.slice(), out);
  }

  /** Bytes after a corrupt frame, unread: forwarded now, or after what the inner re-encoder still holds. */
  private unread(bytes: Uint8Array, out: Uint8Array[]): Uint8Array[] {
    if (this.afterCorrupt.length > 0 || this.inner.waitsForVerdict) this.afterCorrupt.push(bytes);
    else out.push(bytes);
    return out;
  }
}

/**
 * The Anthropic event a frame carries, as SSE text, or null for a frame that carries none. Throws
 * EventStreamError (`invalid_chunk`) for a chunk whose bytes are not base64 JSON.
 */
function eventText(message: EventStreamMessage): string | null {
  const messageType = message.headers[":message-type"];
  if (messageType === "exception" || messageType === "error") {
    let body: unknown = null;
    try {
      body = JSON.parse(utf8Strict.decode(message.payload));
    } catch {
      // No JSON payload: the headers say enough.
    }
    const type = message.headers[messageType === "exception" ? ":exception-type" : ":error-code"];
    const text = isPlainObject(body) && typeof body.message === "string" ? body.message : message.headers[":error-message"];
    return sseText({ type: "error", error: { type: typeof type === "string" ? type : messageType, message: typeof text === "string" ? text : "Bedrock reported an error mid-stream." } }, "error");
  }
  if (message.headers[":event-type"] !== "chunk") return null;
  try {
    const chunk: unknown = JSON.parse(utf8Strict.decode(message.payload));
    if (!isPlainObject(chunk) || typeof chunk.bytes !== "string") throw new Error("no bytes field");
    const json = utf8Strict.decode(base64ToBytes(chunk.bytes));
    const event: unknown = JSON.parse(json);
    return sseText(json, isPlainObject(event) && typeof event.type === "string" ? event.type : undefined);
  } catch (error) {
    throw new EventStreamError(`InvokeModel chunk does not hold base64-encoded JSON: ${error instanceof Error ? error.message : String(error)}`, "invalid_chunk", null);
  }
}


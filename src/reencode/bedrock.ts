import { decodeFrame, encodeEventStreamMessage, EventStreamError, EventStreamFrameSplitter, eventStreamDiagnostic, toProviderEvent, unwrapInvokeModelChunk, type EventStreamMessage } from "../framing/aws-eventstream.js";
import { encodeJsonEventFrame } from "../framing/aws-eventstream-encode.js";
import { readBedrockEvent } from "../providers/bedrock.js";
import { numberField, stringField } from "../providers/fields.js";
import { concatBytes } from "../util/bytes.js";
import type { DecoderOptions, Diagnostic, ProviderEvent, ToolCall } from "../types.js";
import { decodedAsSent, extraFields, isPlainObject, TappedReencoder } from "./common.js";
import { BlockNumbers, writeHeld } from "./block-numbers.js";
import { HoldQueue, type HeldBlock } from "./hold.js";
import type { Reencoder } from "./types.js";

/**
 * Bedrock ConverseStream (`/model/{id}/converse-stream`, binary `application/vnd.amazon.eventstream`):
 * decoded, then re-emitted as ConverseStream frames.
 *
 * - Every frame is forwarded byte for byte as soon as it is whole, except the frames of client
 *   `toolUse` blocks: those are held from `contentBlockStart` to `contentBlockStop` (one call's
 *   worth), then released as they came when the call was sent well (its input fragments parse as
 *   one object, its own `toolUseId`, no input on the start), or replaced by one well-formed block
 *   when toolwire had to fix it (input resent whole or cumulatively, a duplicate or missing
 *   `toolUseId`, a syntax repair): `contentBlockStart` with `toolUseId` and `name`, one
 *   `contentBlockDelta` whose `delta.toolUse.input` is the decoded arguments as a JSON string,
 *   `contentBlockStop`. Rewritten frames carry `:event-type`, `:content-type` and `:message-type`
 *   like Bedrock's own, and no `p` padding. Several different objects glued in one block (a
 *   server that flattened parallel calls) go out as one block per call.
 * - A call whose input does not parse strictly is decided by the decoder only at the end of the
 *   turn (the stop reason tells a cut call from an invalid one): from its `contentBlockStop` on,
 *   the frames after it wait with it, and all are released in order when the body ends. Streams
 *   with well-formed calls never wait.
 * - A call cut by `max_tokens` (no `contentBlockStop` before `messageStop`), by an exception frame
 *   or by the end of the stream, or whose input is not a JSON object, is withheld: the client never
 *   sees it. `stopReason` already says `max_tokens` for a call cut that way; when every call of the
 *   turn was withheld and `stopReason` says `tool_use`, it becomes `malformed_tool_use`, Bedrock's
 *   own word for "the model produced a tool call that could not be read", so that no client waits
 *   for a call that is not there and none takes the turn for a normal end (`end_turn`) either.
 * - Blocks are numbered in the order they show (`contentBlockIndex` rewritten where that differs,
 *   the rest of the payload kept): blocks after a withheld call move down, so the client's content
 *   list has no hole, and a block that overtakes a held call numbers before it.
 * - Exception and error frames (`:message-type exception|error`), `metadata`, text, reasoning
 *   content and its signature, server tool blocks (`type: server_tool_use`) and their results pass
 *   untouched.
 * - A frame that fails its CRC (or whose prelude cannot be trusted) is forwarded as it came, with
 *   every byte after it, and reported (`classified`, `eventstream_prelude_crc` /
 *   `eventstream_message_crc`): toolwire reads nothing after a corrupt frame, just as its decoder,
 *   so it cannot vouch for what follows, and the client's own CRC check sees the damage rather
 *   than a stream toolwire made look whole. A call still held then is withheld (it is cut). Bytes
 *   left after the last whole frame when the body ends (a cut frame) are forwarded too.
 */
export function createBedrockReencoder(options: DecoderOptions = {}): Reencoder {
  return new BedrockReencoder(options);
}

type HeldCall = HeldBlock<Uint8Array>;

/** What waits behind an undecided call: a frame, bytes after a corrupt frame, or the point where one cut the calls still open. */
type Pending = { frame: Uint8Array; message: EventStreamMessage; event: ProviderEvent } | { raw: Uint8Array } | { cut: string };

class BedrockReencoder extends TappedReencoder {
  private readonly splitter = new EventStreamFrameSplitter();
  /** After a corrupt frame every byte passes as it came, unread. */
  private failed = false;
  private ended = false;
  private readonly framingDiagnostics: Diagnostic[] = [];
  private stopped = false;
  private readonly numbers = new BlockNumbers();
  private readonly held = new Map<number, HeldCall>();
  private runnable = 0;
  private withheldCalls = 0;
  /** Calls the decoder ended and no block has claimed yet, in the order they ended. */
  private readonly fresh: ToolCall[] = [];
  private readonly queue = new HoldQueue<Pending, Uint8Array>((pending, out) => this.route(pending, out));
  /** The decoder has ended: a block's call is decided, or never will be. */
  private settled = false;

  constructor(options: DecoderOptions) {
    super("bedrock", options);
  }

  push(chunk: Uint8Array): Uint8Array[] {
    if (this.ended || chunk.length === 0) return [];
    if (this.failed) {
      if (!this.queue.holding) return [chunk];
      this.queue.push({ raw: chunk.slice() }, []);
      return [];
    }
    const out: Uint8Array[] = [];
    this.splitter.append(chunk);
    this.drain(out);
    return joined(out);
  }

  flush(): Uint8Array[] {
    if (this.ended) return [];
    this.ended = true;
    const out: Uint8Array[] = [];
    let rest: Uint8Array | null = null;
    if (!this.failed) {
      const cut = this.splitter.truncated();
      if (cut) this.framingDiagnostics.push(eventStreamDiagnostic(cut));
      rest = this.splitter.rest();
    }
    for (const call of this.tap.end()) this.fresh.push(call);
    this.settled = true;
    this.queue.settle(out, true);
    // A call whose block never closed but whose input the decoder keeps whole (a closed object,
    // `call_closed_at_stream_end`) is sent as one well-formed block, as the decoder's turn has it.
    for (const [index, held] of [...this.held]) {
      this.held.delete(index);
      this.release(index, held, out, false);
    }
    if (rest !== null && rest.length > 0) out.push(rest);
    const turn = this.tap.turn;
    if (turn) for (const diagnostic of this.framingDiagnostics) turn.diagnostics.push(diagnostic);
    return joined(out);
  }

  private drain(out: Uint8Array[]): void {
    for (;;) {
      const at = this.splitter.offset;
      let frame: Uint8Array | null = null;
      let message: EventStreamMessage;
      try {
        frame = this.splitter.next();
        if (frame === null) return;
        message = decodeFrame(frame, at);
      } catch (error) {
        if (!(error instanceof EventStreamError)) throw error;
        this.fail(error, frame, out);
        return;
      }
      const event = toProviderEvent(message);
      let inner;
      try {
        inner = unwrapInvokeModelChunk(event);
      } catch (error) {
        if (!(error instanceof EventStreamError)) throw error;
        this.fail(error, frame, out);
        return;
      }
      for (const call of this.tap.push(inner ?? event)) this.fresh.push(call);
      // A frame is a view of the splitter's buffer: one that waits is copied.
      this.queue.push({ frame: this.queue.holding ? frame.slice() : frame, message, event: inner ?? event }, out);
    }
  }

  /** A corrupt frame: it and everything after it pass as they came; the decoder sees the same error event the framing gives it. */
  private fail(error: EventStreamError, frame: Uint8Array | null, out: Uint8Array[]): void {
    this.failed = true;
    const code = `eventstream_${error.code}`;
    // The calls open at this point are cut. Frames that wait behind an undecided call (their
    // blocks' stops among them) are routed later, in order: the cut waits with them.
    this.queue.push({ cut: `A corrupt frame (${error.code}) arrived before the call's contentBlockStop` }, out);
    for (const call of this.tap.push({ event: "error", data: { errorCode: code, errorMessage: error.message, message: error.message, offset: error.offset } })) this.fresh.push(call);
    this.framingDiagnostics.push(eventStreamDiagnostic(error));
    this.tap.report({
      action: "classified",
      code,
      message: `${error.message}. The frame and every byte after it were forwarded as they came, unread; the client's own checksum check sees the damage.`,
    });
    const rest = this.splitter.rest();
    for (const bytes of [frame, rest]) {
      if (bytes !== null && bytes.length > 0) this.queue.push({ raw: this.queue.holding ? bytes.slice() : bytes }, out);
    }
  }

  /** What a frame becomes, once every call before it is decided. */
  private route(pending: Pending, out: Uint8Array[]): void {
    if ("raw" in pending) {
      out.push(pending.raw);
      return;
    }
    if ("cut" in pending) {
      this.dropHeld(pending.cut);
      return;
    }
    const { frame, message, event } = pending;
    const messageType = message.headers[":message-type"];
    if (messageType === "exception" || messageType === "error") {
      this.dropHeld(`The provider sent ${messageType === "exception" ? "an exception" : "an error"} before the call's contentBlockStop`);
      out.push(frame);
      return;
    }
    const { name, body } = readBedrockEvent(event);
    if (name === null || !isPlainObject(body)) {
      out.push(frame);
      return;
    }
    const index = numberField(body, "contentBlockIndex");
    if (index === null && (name === "contentBlockStart" || name === "contentBlockDelta") && carriesToolUse(body)) {
      // The decoder ignores a block event without an index: a client must not build a call from
      // what toolwire never checked.
      this.tap.report({ action: "withheld", code: "block_index_missing", message: `A ${name} with a toolUse and no contentBlockIndex was not forwarded (toolwire's decoder ignores it, so nothing vouches for the call).` });
      return;
    }
    switch (name) {
      case "messageStart":
        // A second messageStart changes nothing: the decoder goes on in the same turn (open
        // blocks stay open), so the frame passes and the numbering goes on too.
        out.push(frame);
        return;
      case "contentBlockStart": {
        const start = isPlainObject(body.start) ? body.start : null;
        const toolUse = start && isPlainObject(start.toolUse) ? start.toolUse : null;
        // Provider-executed tools (type server_tool_use) are not the client's to run: they pass.
        if (index !== null && toolUse && toolUse.type !== "server_tool_use" && !this.stopped) {
          if (this.held.has(index)) this.dropHeld("A new block started at the same index", index);
          this.held.set(index, { events: [frame.slice()], start: toolUse, plainDeltas: true });
          return;
        }
        out.push(this.mapped(frame, message, body, index, true));
        return;
      }
      case "contentBlockDelta": {
        const held = index === null ? undefined : this.held.get(index);
        if (held) {
          held.events.push(frame.slice());
          const delta = isPlainObject(body.delta) ? body.delta : null;
          if (!delta || !isPlainObject(delta.toolUse) || typeof delta.toolUse.input !== "string") held.plainDeltas = false;
          return;
        }
        out.push(this.mapped(frame, message, body, index));
        return;
      }
      case "contentBlockStop": {
        const held = index === null ? undefined : this.held.get(index);
        if (held && index !== null) {
          this.held.delete(index);
          held.events.push(frame.slice());
          if (!this.settled && !this.fresh.some((call) => call.providerIndex === index)) {
            // Ended by the decoder only when the turn ends (input that does not parse strictly).
            this.queue.hold({ decided: () => false, release: (later) => this.release(index, held, later) });
            return;
          }
          this.release(index, held, out);
          return;
        }
        out.push(this.mapped(frame, message, body, index));
        return;
      }
      case "messageStop": {
        this.stopped = true;
        const reason = stringField(body, "stopReason");
        const cutByLength = reason === "max_tokens";
        this.dropHeld(cutByLength ? "The model hit max_tokens inside the call" : "The message stopped before the call's contentBlockStop", undefined, cutByLength ? "max_tokens" : undefined);
        if (reason === "tool_use" && this.runnable === 0 && this.withheldCalls > 0) {
          out.push(encodeJsonEventFrame("messageStop", { ...body, stopReason: "malformed_tool_use" }));
          this.tap.report({
            action: "normalized",
            code: "stop_reason_without_calls",
            message: "Every tool call of the turn was withheld, so stopReason tool_use became malformed_tool_use (the model produced no call that could be read).",
          });
          return;
        }
        out.push(frame);
        return;
      }
      default:
        out.push(this.mapped(frame, message, body, index));
    }
  }

  /** The frame as sent, or with its `contentBlockIndex` renumbered (`starts`: a block starts with it; text blocks start with their first delta). */
  private mapped(frame: Uint8Array, message: EventStreamMessage, body: Record<string, unknown>, index: number | null, starts = false): Uint8Array {
    if (index === null) return frame;
    const out = (starts ? undefined : this.numbers.of(index)) ?? this.numbers.open(index);
    if (out === index) return frame;
    return encodeEventStreamMessage(message.headers, JSON.stringify({ ...body, contentBlockIndex: out }));
  }

  /** The decoder's calls for a wire block: the block's call, then any calls split from it. */
  private claim(index: number): ToolCall[] {
    const claimed: ToolCall[] = [];
    for (let i = 0; i < this.fresh.length; ) {
      const call = this.fresh[i] as ToolCall;
      if (call.providerIndex === index && (claimed.length === 0 || call.repairs.includes("split_concatenated_calls"))) {
        claimed.push(call);
        this.fresh.splice(i, 1);
      } else i++;
    }
    return claimed;
  }

  /** `closed`: the block's contentBlockStop came (else the body ended first: never sent as it came). */
  private release(index: number, held: HeldCall, out: Uint8Array[], closed = true): void {
    const [call, ...split] = this.claim(index);
    if (!closed && (!call || call.arguments === null)) {
      this.held.set(index, held);
      this.dropHeld("The stream ended before the call's contentBlockStop", index);
      return;
    }
    if (!call) {
      // Not a call the decoder kept (over a limit): pass it on as it came.
      writeHeld(held.events, index, this.numbers.open(index), reindexed, out);
      return;
    }
    // The block's call, then the calls split from it: each withheld or delivered by itself.
    for (const [position, each] of [call, ...split].entries()) {
      if (each.arguments === null) {
        this.withheldCalls++;
        this.tap.withheld(each);
        continue;
      }
      this.runnable++;
      const outIndex = this.numbers.forHeld(index);
      if (position > 0) {
        this.writeCall(each, outIndex, out);
        this.tap.rewritten(each);
        continue;
      }
      const startInput = held.start.input;
      const asSent = closed && decodedAsSent(each) && held.plainDeltas && startInput === undefined && held.start.toolUseId === each.id && (each.source === "delta" || each.source === "empty");
      if (asSent) {
        writeHeld(held.events, index, outIndex, reindexed, out);
        continue;
      }
      this.writeCall(each, outIndex, out);
      this.tap.rewritten(each, [...(startInput === undefined ? [] : [startInput === null ? "start_input_null" : "start_input"]), ...(closed ? [] : ["call_closed_at_stream_end"])]);
    }
  }

  /** One well-formed toolUse block: start, one delta with the whole input, stop. */
  private writeCall(call: ToolCall, outIndex: number, out: Uint8Array[]): void {
    const toolUse = { toolUseId: call.id, name: call.name, ...extraFields(call, ["toolUseId", "name", "input"]) };
    out.push(encodeJsonEventFrame("contentBlockStart", { contentBlockIndex: outIndex, start: { toolUse } }));
    out.push(encodeJsonEventFrame("contentBlockDelta", { contentBlockIndex: outIndex, delta: { toolUse: { input: JSON.stringify(call.arguments) } } }));
    out.push(encodeJsonEventFrame("contentBlockStop", { contentBlockIndex: outIndex }));
  }

  /** Calls still open when the message stopped, errored, or the body ended: cut, so never delivered. */
  private dropHeld(why: string, only?: number, cause?: string): void {
    for (const [index, held] of this.held) {
      if (only !== undefined && index !== only) continue;
      this.held.delete(index);
      this.withheldCalls++;
      // The decoder ended the cut call too (it sees the same event first): a block started later
      // at this index must not claim it.
      this.claim(index);
      this.tap.cut(why, `block ${index}`, held.start.toolUseId, held.start.name, cause);
    }
  }
}

/** Whether a block event carries a client toolUse (a start or an input delta). */
function carriesToolUse(body: Record<string, unknown>): boolean {
  const start = isPlainObject(body.start) ? body.start : null;
  if (start && isPlainObject(start.toolUse)) return start.toolUse.type !== "server_tool_use";
  const delta = isPlainObject(body.delta) ? body.delta : null;
  return delta !== null && isPlainObject(delta.toolUse);
}

/** A held frame with its block index moved (decoded again from its bytes: rare, and only then). */
function reindexed(frame: Uint8Array, index: number): Uint8Array {
  const message = decodeFrame(frame, 0);
  let body: unknown;
  try {
    body = JSON.parse(new TextDecoder().decode(message.payload));
  } catch {
    return frame;
  }
  return isPlainObject(body) ? encodeEventStreamMessage(message.headers, JSON.stringify({ ...body, contentBlockIndex: index })) : frame;
}

/** The pieces as one chunk (one enqueue per push downstream), always a copy: pieces may be views of the splitter's buffer. */
export function joined(parts: Uint8Array[]): Uint8Array[] {
  return parts.length === 0 ? parts : [concatBytes(parts)];
}

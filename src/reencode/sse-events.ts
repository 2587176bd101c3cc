import { framedEvent } from "../framing/framed-event.js";
import { parseSseData } from "../framing/sse.js";
import { EventJsonReader } from "../framing/event-template.js";
import type { ProviderEvent } from "../types.js";
import { concatBytes } from "../util/bytes.js";

/**
 * Where an event's original bytes lie: `bytes[start..end)`. A range rather than a view, because a
 * long call is many small events held at once, and ranges next to each other are forwarded as one
 * view of the chunk they came in.
 */
export class WireBytes {
  constructor(
    readonly bytes: Uint8Array,
    readonly start: number,
    public end: number,
  ) {}

  view(): Uint8Array {
    return this.bytes.subarray(this.start, this.end);
  }
}

/**
 * What is forwarded for an event: its original bytes when they are known exactly, else its text
 * (re-encoded as UTF-8 on the way out). A re-encoder holds and forwards this, never a copy.
 */
export type WireEvent = string | WireBytes;

/**
 * One SSE event as it came off the wire: its exact text (blank line included), its original bytes
 * as `wire` where they are known, and what it means. `event` is null for blocks that dispatch
 * nothing (comments, keep-alives, stray blank lines): they are forwarded as they are.
 */
export interface RawSseEvent {
  raw: string;
  wire: WireEvent;
  event: ProviderEvent | null;
}

const LF = 0x0a;
const CR = 0x0d;

/**
 * Splits an SSE body into its events without re-encoding them, so that an event nobody needs to
 * change can be forwarded as it came. The body is decoded as UTF-8 once, as a stream (a chunk may
 * end inside a character); each character is looked at once, and text of an unfinished event is
 * kept as the pieces it arrived in and joined once.
 *
 * An event's `wire` is a view of the bytes it came in wherever they are known, so forwarding it is
 * byte for byte and costs no encoding. They are found without mapping characters to bytes: CR and
 * LF are one byte each, never part of another character, and survive any replacement of bad
 * bytes, so the n-th blank line of the text is the n-th LF LF of the bytes (and on CR or CRLF
 * streams, the n-th line end of the text is the n-th CR or LF byte). Where the bytes are not known
 * (text pushed as text) `wire` is the text, which re-encodes to the same bytes for valid UTF-8.
 */
export class SseEventSplitter {
  private pending: string[] = [];
  /**
   * The bytes of the unfinished event so far: those of `pending`, and the start of a character the
   * decoder still holds. Null when they are not known (the event is then forwarded as its text).
   */
  private pendingBytes: Uint8Array[] | null = [];
  /** The chunk being split, and where in it the next event's bytes begin (-1: not known). */
  private chunk: Uint8Array | null = null;
  private byteStart = 0;
  /** The text being split, and all pending text, has no CR (the LF-only path). */
  private lfOnly = true;
  private pendingLfOnly = true;
  /** Characters on the current line so far (terminator excluded). */
  private lineLength = 0;
  /** The previous character was a CR: an LF now belongs to the same terminator. */
  private afterCR = false;
  /** A blank line ended with CR: the event ends after a following LF, or before any other character. */
  private boundaryAfterCR = false;
  private readonly decoder = new TextDecoder();
  /** The stream's own JSON reader: its events repeat an envelope that it learns. */
  private readonly json = new EventJsonReader();
  private readonly parse = (text: string): unknown => this.json.parse(text);

  push(chunk: Uint8Array): RawSseEvent[] {
    return this.splitChunk(this.decoder.decode(chunk, { stream: true }), chunk);
  }

  /** Text instead of bytes: the events' `wire` is their text. */
  pushText(text: string): RawSseEvent[] {
    return this.split(text);
  }

  /** The body ended: the last event, if it came without its blank line. */
  flush(): RawSseEvent[] {
    // The decoder's flush turns a character cut at the end into U+FFFD; its bytes are pending already.
    const rest = this.splitChunk(this.decoder.decode(), NO_BYTES);
    this.boundaryAfterCR = false;
    if (this.pending.length > 0) {
      this.chunk = NO_BYTES;
      this.byteStart = 0;
      rest.push(this.take("", 0, 0, 0));
      this.chunk = null;
    }
    return rest;
  }

  private splitChunk(text: string, chunk: Uint8Array): RawSseEvent[] {
    this.chunk = chunk;
    this.byteStart = 0;
    this.endsFound = 0;
    this.endsScanned = 0;
    try {
      return this.split(text);
    } finally {
      this.chunk = null;
    }
  }

  private split(text: string): RawSseEvent[] {
    if (!this.afterCR && !this.boundaryAfterCR && text.indexOf("\r") < 0) {
      this.lfOnly = true;
      return this.pushLf(text);
    }
    this.lfOnly = false;
    const out: RawSseEvent[] = [];
    // Line ends seen in this text: an event ends right after one, and the n-th CR or LF of the text
    // is the n-th CR or LF byte of the chunk (both are ASCII, never part of another character).
    let ends = 0;
    let start = 0;
    // Locals, not fields, in the loop: this runs once per character of the body.
    let lineLength = this.lineLength;
    let afterCR = this.afterCR;
    let boundaryAfterCR = this.boundaryAfterCR;
    const length = text.length;
    for (let i = 0; i < length; i++) {
      const code = text.charCodeAt(i);
      if (code > CR && !boundaryAfterCR) {
        afterCR = false;
        lineLength++;
        continue;
      }
      if (boundaryAfterCR) {
        boundaryAfterCR = false;
        if (code === LF) {
          afterCR = false;
          ends++;
          out.push(this.take(text, start, i + 1, this.afterLineEnd(ends)));
          start = i + 1;
          continue;
        }
        out.push(this.take(text, start, i, this.afterLineEnd(ends)));
        start = i;
      }
      if (code === LF) {
        ends++;
        if (afterCR) {
          afterCR = false;
          continue;
        }
        if (lineLength === 0) {
          out.push(this.take(text, start, i + 1, this.afterLineEnd(ends)));
          start = i + 1;
        }
        lineLength = 0;
      } else if (code === CR) {
        ends++;
        afterCR = true;
        if (lineLength === 0) boundaryAfterCR = true;
        lineLength = 0;
      } else {
        afterCR = false;
        lineLength++;
      }
    }
    this.lineLength = lineLength;
    this.afterCR = afterCR;
    this.boundaryAfterCR = boundaryAfterCR;
    this.keep(text, start);
    return out;
  }

  /**
   * The common case, text with LF line ends only: events end at "\n\n", found by indexOf rather
   * than a loop over every character. A run of blank lines may be grouped differently than the
   * general path groups it; the text and the events dispatched are the same.
   */
  private pushLf(text: string): RawSseEvent[] {
    const out: RawSseEvent[] = [];
    let start = 0;
    if (this.lineLength === 0 && text.charCodeAt(0) === LF) {
      out.push(this.take(text, 0, 1, this.chunk?.[0] === LF ? 1 : -1));
      start = 1;
    }
    for (;;) {
      const at = text.indexOf("\n\n", start);
      if (at < 0) break;
      // Every character has at least one byte in this chunk, except that the first may be completed
      // by bytes of the chunk before (a surrogate pair: two characters, one byte here), so the LF LF
      // is no earlier than this.
      out.push(this.take(text, start, at + 2, this.blankLineEnd(start === 0 ? Math.max(0, at - 1) : at - start)));
      start = at + 2;
    }
    if (start < text.length) this.lineLength = text.charCodeAt(text.length - 1) === LF ? 0 : 1;
    else this.lineLength = 0;
    this.keep(text, start);
    return out;
  }

  /** CR or LF bytes of the chunk found so far, and where the search for the next one resumes. */
  private endsFound = 0;
  private endsScanned = 0;

  /** Where the chunk's bytes are just past its `n`-th CR or LF byte (0 for none; -1 when not known). */
  private afterLineEnd(n: number): number {
    const chunk = this.chunk;
    if (chunk === null) return -1;
    if (n === 0) return 0;
    let at = this.endsScanned;
    while (this.endsFound < n) {
      while (at < chunk.length && chunk[at] !== LF && chunk[at] !== CR) at++;
      if (at >= chunk.length) return -1;
      this.endsFound++;
      at++;
    }
    this.endsScanned = at;
    return at;
  }

  /** Where the first LF LF of the chunk's bytes at or after `byteStart + skip` ends (-1 when not known). */
  private blankLineEnd(skip: number): number {
    const chunk = this.chunk;
    if (chunk === null || this.byteStart < 0) return -1;
    // The LF LF is at `skip`, or past it by the extra bytes of the event's multi-byte characters:
    // a loop, since an indexOf call costs more than the bytes it skips in the usual (ASCII) event.
    const n = chunk.length - 1;
    for (let at = this.byteStart + skip; at < n; at++) if (chunk[at] === LF && chunk[at + 1] === LF) return at + 2;
    return -1;
  }

  /** The chunk's text from `start` on (and bytes from `byteStart` on) belong to the next event. */
  private keep(text: string, start: number): void {
    if (start < text.length) {
      this.pending.push(start === 0 ? text : text.slice(start));
      if (!this.lfOnly) this.pendingLfOnly = false;
    }
    if (this.pendingBytes === null) return;
    const chunk = this.chunk;
    if (chunk === null) {
      if (start < text.length) this.pendingBytes = null;
    } else if (this.byteStart < 0) this.pendingBytes = null;
    else if (this.byteStart < chunk.length) this.pendingBytes.push(chunk.subarray(this.byteStart));
  }

  /** The event of the text up to `end` (and of the bytes up to `byteEnd`, -1 when not known). */
  private take(text: string, start: number, end: number, byteEnd: number): RawSseEvent {
    let raw = text.slice(start, end);
    const lfOnly = this.lfOnly && this.pendingLfOnly;
    if (this.pending.length > 0) {
      this.pending.push(raw);
      raw = this.pending.join("");
      this.pending = [];
    }
    this.pendingLfOnly = true;
    let bytes: WireBytes | null = null;
    const chunk = this.chunk;
    // An event that ends where this chunk begins ends on the last byte before it, its line end,
    // unless the decoder carried the start of a character over: those bytes begin the next event.
    if (byteEnd === 0 && this.pendingBytes !== null && !endsOnLineEnd(this.pendingBytes)) byteEnd = -1;
    if (chunk !== null && this.byteStart >= 0 && byteEnd >= 0 && this.pendingBytes !== null) {
      if (this.pendingBytes.length === 0) bytes = new WireBytes(chunk, this.byteStart, byteEnd);
      else {
        const joined = concatBytes([...this.pendingBytes, chunk.subarray(this.byteStart, byteEnd)]);
        bytes = new WireBytes(joined, 0, joined.length);
      }
    }
    this.byteStart = byteEnd;
    // Most events begin in the chunk they end in: their (empty) list is kept, not replaced.
    if (this.pendingBytes === null || this.pendingBytes.length > 0) this.pendingBytes = [];
    return { raw, wire: bytes ?? raw, event: parseSimpleEvent(raw, !lfOnly, this.parse) ?? parseAnyEvent(raw, this.parse) };
  }
}

const NO_BYTES = new Uint8Array(0);

function endsOnLineEnd(pieces: readonly Uint8Array[]): boolean {
  for (let i = pieces.length - 1; i >= 0; i--) {
    const piece = pieces[i] as Uint8Array;
    if (piece.length > 0) return piece[piece.length - 1] === LF || piece[piece.length - 1] === CR;
  }
  return false;
}

/**
 * The shape nearly every provider sends, `[event: NAME\n]data: PAYLOAD\n\n`, read without
 * walking its lines; null for anything else (which the general reader handles). The splitter
 * says when the text cannot hold a CR, which spares a scan.
 */
function parseSimpleEvent(text: string, mayHaveCR: boolean, parse: (text: string) => unknown): ProviderEvent | null {
  const end = text.length - 2;
  if (end < 6 || text.charCodeAt(end) !== LF || text.charCodeAt(end + 1) !== LF) return null;
  let name: string | undefined;
  let dataStart = 0;
  if (text.startsWith("event: ")) {
    const nameEnd = text.indexOf("\n", 7);
    if (nameEnd <= 7) return null;
    name = text.slice(7, nameEnd);
    dataStart = nameEnd + 1;
  }
  if (!text.startsWith("data: ", dataStart)) return null;
  const payloadStart = dataStart + 6;
  if (text.indexOf("\n", payloadStart) !== end || (mayHaveCR && text.indexOf("\r") >= 0)) return null;
  const data = text.slice(payloadStart, end);
  return framedEvent(parseSseData(data, parse), name, data.length);
}

function parseAnyEvent(text: string, parse: (text: string) => unknown): ProviderEvent | null {
  let data: string | null = null;
  let name: string | undefined;
  let position = 0;
  if (text.charCodeAt(0) === 0xfeff) position = 1;
  while (position < text.length) {
    let end = position;
    while (end < text.length && text.charCodeAt(end) !== LF && text.charCodeAt(end) !== CR) end++;
    const line = text.slice(position, end);
    position = end + (text.charCodeAt(end) === CR && text.charCodeAt(end + 1) === LF ? 2 : 1);
    if (line === "" || line.startsWith(":")) continue;
    const colon = line.indexOf(":");
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (field === "data") data = data === null ? value : `${data}\n${value}`;
    else if (field === "event") name = value;
  }
  if (data === null) return null;
  // framedEvent: a short payload is provably shallow, so the decoder skips its depth walk.
  return framedEvent(parseSseData(data, parse), name !== undefined && name !== "" ? name : undefined, data.length);
}

const encoder = new TextEncoder();
const textDecoder = new TextDecoder();

/** One event as SSE text, for events that had to be rewritten or added. */
export function sseText(data: unknown, name?: string): string {
  const payload = typeof data === "string" ? data : JSON.stringify(data);
  let out = name !== undefined ? `event: ${name}\n` : "";
  for (const line of payload.split("\n")) out += `data: ${line}\n`;
  return `${out}\n`;
}

/** A comment line (what a keep-alive should have been). */
export function sseComment(text: string): string {
  return `: ${text.replace(/[\r\n]+/g, " ")}\n\n`;
}

/** A held block at least this long is handed over as it is rather than copied into a joined chunk. */
const OWN_PIECE = 64 * 1024;

/**
 * What one push released: original bytes that lie next to each other in the same chunk are one
 * view, without a copy, and the pieces are joined into one chunk, except that a block a hold
 * copied its call into (`holdWire`) of `OWN_PIECE` bytes or more goes out as it is. A long call
 * released joined would be copied a second time into one more chunk as large as it, which lives
 * until the client has read it: in a proxy that is old-generation external memory per stream,
 * and a mark-compact about once per stream (docs/proxy.md, Cost).
 */
export function encodeOut(pieces: readonly WireEvent[]): Uint8Array[] {
  const parts: Uint8Array[] = [];
  let text = "";
  let run: WireBytes | null = null;
  let runEnd = 0;
  const endRun = (): void => {
    if (run !== null && runEnd > run.start) parts.push(run.bytes.subarray(run.start, runEnd));
    run = null;
  };
  for (const piece of pieces) {
    if (typeof piece === "string") {
      if (run !== null) endRun();
      text += piece;
      continue;
    }
    if (text !== "") {
      parts.push(encoder.encode(text));
      text = "";
    }
    if (run !== null && run.bytes === piece.bytes && runEnd === piece.start) {
      runEnd = piece.end;
      continue;
    }
    endRun();
    run = piece;
    runEnd = piece.end;
  }
  endRun();
  if (text !== "") parts.push(encoder.encode(text));
  if (parts.length <= 1) return parts;
  const out: Uint8Array[] = [];
  let from = 0;
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i] as Uint8Array;
    if (part.length < OWN_PIECE || !heldBlocks.has(part.buffer)) continue;
    if (i > from) out.push(joined(parts, from, i));
    out.push(part);
    from = i + 1;
  }
  if (from < parts.length) out.push(joined(parts, from, parts.length));
  return out;
}

function joined(parts: readonly Uint8Array[], from: number, to: number): Uint8Array {
  return to - from === 1 ? (parts[from] as Uint8Array) : concatBytes(parts.slice(from, to));
}

/** The buffers of the blocks holds copy their calls into (a view of one may be handed over without a copy). */
const heldBlocks = new WeakSet<ArrayBufferLike>();
/** Ranges a hold keeps as views before it copies into blocks: a short call costs no copy and no block. */
const VIEWS_KEPT = 16;
const FIRST_BLOCK = 64 * 1024;
const LARGEST_BLOCK = 1024 * 1024;

/**
 * Appends an event to a list of held events, as one range with the event before it when their
 * bytes are next to each other: a call of many deltas is then held as a few ranges. In a hold of
 * more than `VIEWS_KEPT` ranges, a range that can grow no further (the next event came in another
 * chunk) has its bytes copied into a block of the hold's own (blocks double from 64 KB up to 1 MB),
 * so that a long call keeps no more chunks of the body alive (they die young) and is released as a
 * few large blocks rather than joined.
 */
export function holdWire(list: WireEvent[], wire: WireEvent): void {
  const last = list[list.length - 1];
  if (typeof wire !== "string" && last !== undefined && typeof last !== "string" && last.bytes === wire.bytes && last.end === wire.start) {
    // The list owns what it holds: an event's range is the splitter's fresh object, used once.
    last.end = wire.end;
    return;
  }
  sealLast(list);
  list.push(wire);
}

/** The last range of a hold can grow no further: its bytes go into the hold's current block. */
function sealLast(list: WireEvent[]): void {
  const last = list[list.length - 1];
  if (list.length < VIEWS_KEPT || last === undefined || typeof last === "string" || heldBlocks.has(last.bytes.buffer)) return;
  const length = last.end - last.start;
  const before = list[list.length - 2];
  const block = before !== undefined && typeof before !== "string" && heldBlocks.has(before.bytes.buffer) ? before : null;
  if (block !== null && block.bytes.length - block.end >= length) {
    block.bytes.set(last.view(), block.end);
    block.end += length;
    list.pop();
    return;
  }
  const size = Math.max(length, Math.min(LARGEST_BLOCK, block === null ? FIRST_BLOCK : block.bytes.length * 2));
  const bytes = new Uint8Array(size);
  heldBlocks.add(bytes.buffer);
  bytes.set(last.view());
  list[list.length - 1] = new WireBytes(bytes, 0, length);
}

/** The decoded text of a held event (to read it again on a rare rewrite path). */
export function wireText(wire: WireEvent): string {
  return typeof wire === "string" ? wire : textDecoder.decode(wire.view());
}

/** The bytes that forwarding an event sends. */
export function wireBytes(wire: WireEvent): Uint8Array {
  return typeof wire === "string" ? encoder.encode(wire) : wire.view();
}

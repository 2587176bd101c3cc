import { base64ToBytes, bytesToBase64, decodeFrame, EventStreamFrameSplitter, type EventStreamMessage } from "../framing/aws-eventstream.js";
import { encodeJsonEventFrame } from "../framing/aws-eventstream-encode.js";
import type { ProviderName } from "../types.js";
import { concatBytes } from "../util/bytes.js";

/**
 * The withheld-call notice written into a stream after the re-encoder (see withheld-notice.ts).
 * Every protocol's stream ends with a terminal unit that closes the assistant message (Anthropic
 * `message_delta`, Chat `[DONE]`, Responses `response.completed`, Gemini the chunk with
 * `finishReason`, Bedrock `messageStop` or, for Claude's invoke stream, the `chunk` holding
 * `message_delta`, Ollama the `done: true` line): the stream passes as it
 * comes up to that unit, which is held with everything after it until the body ends, when the
 * withheld calls are known. The notice then goes in before the held tail, in the protocol's own
 * form; with no withheld call the tail goes out as it came, so the stream is byte for byte what it
 * is without the notice. The re-encoder's pieces hold whole units (events, elements, lines,
 * frames), so a unit's start is found inside one piece.
 */

/** How one protocol's stream is cut and completed. */
interface NoticeWriter {
  /** Reads a piece; returns the byte offset where the held tail begins, or -1 when all of it passes (then all of it is read). */
  split(piece: Uint8Array): number;
  /** The bytes written at the end of the body in place of the held tail (empty when the stream had no terminal unit): the notice, then the tail. */
  finish(notice: string, tail: Uint8Array): Uint8Array[];
}

/** The forms of a streamed body the notice is written into. */
export type NoticeStreamForm = "sse" | "json-array" | "ndjson" | "eventstream";

/** A stream after the re-encoder that writes `notice()` (read when the body ends; null: nothing was withheld) where the protocol's client keeps it. */
export function createNoticeStream(provider: ProviderName, form: NoticeStreamForm, notice: () => string | null): TransformStream<Uint8Array, Uint8Array> {
  const writer = writerFor(provider, form);
  const held: Uint8Array[] = [];
  return new TransformStream<Uint8Array, Uint8Array>({
    transform(piece, controller) {
      if (held.length > 0) {
        held.push(piece);
        return;
      }
      const at = writer.split(piece);
      if (at < 0) {
        controller.enqueue(piece);
        return;
      }
      if (at > 0) controller.enqueue(piece.subarray(0, at));
      held.push(piece.subarray(at));
    },
    flush(controller) {
      const text = notice();
      if (text === null) {
        for (const piece of held) controller.enqueue(piece);
        return;
      }
      for (const piece of writer.finish(text, held.length === 1 ? (held[0] as Uint8Array) : concatBytes(held))) controller.enqueue(piece);
    },
  });
}

function writerFor(provider: ProviderName, form: NoticeStreamForm): NoticeWriter {
  switch (form) {
    case "sse":
      if (provider === "anthropic") return new AnthropicWriter();
      if (provider === "openai-chat") return new ChatWriter();
      if (provider === "openai-responses") return new ResponsesWriter();
      return new GeminiSseWriter();
    case "json-array":
      return new GeminiArrayWriter();
    case "ndjson":
      return new OllamaWriter();
    case "eventstream":
      return new BedrockWriter(provider === "anthropic" ? CLAUDE_FRAMES : CONVERSE_FRAMES);
  }
}

const latin1 = new TextDecoder("latin1");
const utf8 = new TextDecoder();
const encoder = new TextEncoder();

/** Where the SSE event that contains `at` starts: after the blank line before it (LF, CRLF or CR streams), or 0. */
function eventStart(text: string, at: number): number {
  for (let i = at - 1; i > 0; i--) {
    const c = text.charCodeAt(i);
    const p = text.charCodeAt(i - 1);
    if ((c === 10 && (p === 10 || (p === 13 && i > 1 && text.charCodeAt(i - 2) === 10))) || (c === 13 && p === 13)) return i + 1;
  }
  return 0;
}

/**
 * An SSE stream held from the event a pattern finds. Pieces are read as latin1 (one character per
 * byte, so a character offset is the byte offset); `read` sees every passed part once.
 */
abstract class SseWriter implements NoticeWriter {
  protected abstract readonly terminal: RegExp;
  /** Reads a part of the stream that passes. */
  protected abstract read(text: string): void;
  abstract finish(notice: string, tail: Uint8Array): Uint8Array[];

  split(piece: Uint8Array): number {
    const text = latin1.decode(piece);
    const match = this.terminal.exec(text);
    if (!match) {
      this.read(text);
      return -1;
    }
    const start = eventStart(text, match.index);
    if (start > 0) this.read(text.slice(0, start));
    return start;
  }
}

/** Anthropic Messages: a text block after the last block (the next free index), before `message_delta`. */
class AnthropicWriter extends SseWriter {
  protected readonly terminal = /"type"\s*:\s*"message_delta"|^event:\s*message_(?:delta|stop)/m;
  private maxIndex = -1;

  protected read(text: string): void {
    // The data line of each content_block_start, parsed (a line is read once: linear).
    for (let at = text.indexOf("content_block_start"); at >= 0; ) {
      const lineStart = Math.max(text.lastIndexOf("\n", at), text.lastIndexOf("\r", at)) + 1;
      let lineEnd = text.length;
      for (let i = at; i < text.length; i++) {
        const c = text.charCodeAt(i);
        if (c === 10 || c === 13) {
          lineEnd = i;
          break;
        }
      }
      const line = text.slice(lineStart, lineEnd);
      if (line.startsWith("data:")) {
        try {
          const event = JSON.parse(line.slice(5)) as { type?: unknown; index?: unknown };
          if (event.type === "content_block_start" && typeof event.index === "number" && Number.isInteger(event.index)) this.maxIndex = Math.max(this.maxIndex, event.index);
        } catch {
          // Not one whole JSON line.
        }
      }
      at = text.indexOf("content_block_start", lineEnd);
    }
  }

  finish(notice: string, tail: Uint8Array): Uint8Array[] {
    const index = this.maxIndex + 1;
    const events = [
      `event: content_block_start\ndata: ${JSON.stringify({ type: "content_block_start", index, content_block: { type: "text", text: "" } })}\n\n`,
      `event: content_block_delta\ndata: ${JSON.stringify({ type: "content_block_delta", index, delta: { type: "text_delta", text: notice } })}\n\n`,
      `event: content_block_stop\ndata: ${JSON.stringify({ type: "content_block_stop", index })}\n\n`,
    ];
    return [encoder.encode(events.join("")), tail];
  }
}

/** OpenAI Chat: a `content` delta before `[DONE]`, in a chunk with the stream's id, created and model. */
class ChatWriter extends SseWriter {
  protected readonly terminal = /^data:\s*\[DONE\]/m;
  private chunkFields: { id: unknown; created: unknown; model: unknown } | null = null;

  protected read(text: string): void {
    if (this.chunkFields !== null) return;
    const line = /^data:\s*(\{[^\n\r]*)/m.exec(text);
    if (!line) return;
    try {
      const chunk = JSON.parse(line[1] as string) as Record<string, unknown>;
      this.chunkFields = { id: chunk.id, created: chunk.created, model: chunk.model };
    } catch {
      // Not a whole JSON line: try the next piece.
    }
  }

  finish(notice: string, tail: Uint8Array): Uint8Array[] {
    const fields = this.chunkFields ?? { id: "toolwire-notice", created: Math.floor(Date.now() / 1000), model: "" };
    return [encoder.encode(`data: ${JSON.stringify({ ...fields, object: "chat.completion.chunk", choices: [{ index: 0, delta: { content: notice }, finish_reason: null }] })}\n\n`), tail];
  }
}

/** The id of the message item the notice is (Responses). */
export const NOTICE_ITEM_ID = "msg_toolwire_notice";

/** The notice as a completed Responses `message` output item. */
export function noticeMessageItem(notice: string): Record<string, unknown> {
  return { id: NOTICE_ITEM_ID, type: "message", status: "completed", role: "assistant", content: [{ type: "output_text", text: notice, annotations: [] }] };
}

/**
 * OpenAI Responses: a `message` output item with one `output_text` part, at the next free
 * `output_index`, before the terminal event (`response.completed`, `.incomplete`, `.failed`). Its
 * events take the sequence numbers after the last one sent, and the held events move up by as
 * many; the terminal event's `response.output` (what the SDKs return as the final response) gets
 * the item at its end.
 */
class ResponsesWriter extends SseWriter {
  protected readonly terminal = /"type"\s*:\s*"response\.(?:completed|incomplete|failed)"|^event:\s*response\.(?:completed|incomplete|failed)\b/m;
  private maxIndex = -1;
  private maxSequence = -1;

  protected read(text: string): void {
    // Top-level fields of the events: inside a JSON string a quote is escaped, so these cannot match there.
    for (const match of text.matchAll(/"output_index"\s*:\s*(\d+)/g)) this.maxIndex = Math.max(this.maxIndex, Number(match[1]));
    for (const match of text.matchAll(/"sequence_number"\s*:\s*(\d+)/g)) this.maxSequence = Math.max(this.maxSequence, Number(match[1]));
  }

  finish(notice: string, tail: Uint8Array): Uint8Array[] {
    const index = this.maxIndex + 1;
    const item = noticeMessageItem(notice);
    const part = { type: "output_text", text: "", annotations: [] };
    const ids = { item_id: NOTICE_ITEM_ID, output_index: index, content_index: 0 };
    const events: Array<Record<string, unknown>> = [
      { type: "response.output_item.added", output_index: index, item: { ...item, status: "in_progress", content: [] } },
      { type: "response.content_part.added", ...ids, part },
      { type: "response.output_text.delta", ...ids, delta: notice, logprobs: [] },
      { type: "response.output_text.done", ...ids, text: notice, logprobs: [] },
      { type: "response.content_part.done", ...ids, part: { ...part, text: notice } },
      { type: "response.output_item.done", output_index: index, item },
    ];
    const numbered = this.maxSequence >= 0;
    const sse = events.map((event, i) => `event: ${String(event.type)}\ndata: ${JSON.stringify(numbered ? { ...event, sequence_number: this.maxSequence + 1 + i } : event)}\n\n`).join("");
    return [encoder.encode(sse), encoder.encode(this.rewriteTail(utf8.decode(tail), item, numbered ? events.length : 0))];
  }

  /** The held events with their sequence numbers moved up by `shift` and the item added to the terminal `response.output`. */
  private rewriteTail(text: string, item: Record<string, unknown>, shift: number): string {
    let out = "";
    let at = 0;
    while (at < text.length) {
      const blank = /\r\n\r\n|\n\n|\r\r/g;
      blank.lastIndex = at;
      const found = blank.exec(text);
      const end = found ? found.index + found[0].length : text.length;
      out += rewriteEvent(text.slice(at, end), item, shift);
      at = end;
    }
    return out;
  }
}

/** One held Responses event (its blank line included), rewritten when its data is a JSON object; as it came otherwise. */
function rewriteEvent(event: string, item: Record<string, unknown>, shift: number): string {
  const lines = event.split(/\r\n|\n|\r/);
  const data = lines.filter((line) => line.startsWith("data:")).map((line) => line.slice(line.startsWith("data: ") ? 6 : 5));
  if (data.length === 0) return event;
  let parsed: unknown;
  try {
    parsed = JSON.parse(data.join("\n"));
  } catch {
    return event;
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) return event;
  const record = parsed as Record<string, unknown>;
  if (shift > 0 && typeof record.sequence_number === "number") record.sequence_number += shift;
  const response = record.response as Record<string, unknown> | undefined;
  if (typeof record.type === "string" && /^response\.(?:completed|incomplete|failed)$/.test(record.type) && response && Array.isArray(response.output)) response.output.push(item);
  const others = lines.filter((line) => line !== "" && !line.startsWith("data:"));
  return `${others.map((line) => `${line}\n`).join("")}data: ${JSON.stringify(record)}\n\n`;
}

/** A Gemini chunk that carries the notice as a text part of candidate 0, with the stream's response id and model version. */
function geminiChunk(notice: string, fields: Record<string, unknown>): string {
  return JSON.stringify({ candidates: [{ content: { parts: [{ text: notice }], role: "model" }, index: 0 }], ...fields });
}

/** The `responseId` and `modelVersion` of a Gemini chunk's JSON text, where it has them. */
function geminiFields(json: string): Record<string, unknown> {
  try {
    const chunk = JSON.parse(json) as Record<string, unknown>;
    return { ...(typeof chunk.modelVersion === "string" ? { modelVersion: chunk.modelVersion } : {}), ...(typeof chunk.responseId === "string" ? { responseId: chunk.responseId } : {}) };
  } catch {
    return {};
  }
}

/** Gemini `alt=sse`: a chunk with the notice as a text part, before the chunk that carries `finishReason`. */
class GeminiSseWriter extends SseWriter {
  protected readonly terminal = /"finishReason"\s*:\s*"/;
  private fields: Record<string, unknown> | null = null;
  private lineEnd = "\n";

  protected read(text: string): void {
    if (this.fields !== null) return;
    const line = /^data:\s*(\{[^\n\r]*)/m.exec(text);
    if (!line) return;
    this.fields = geminiFields(line[1] as string);
    if (text.includes("\r\n")) this.lineEnd = "\r\n";
  }

  finish(notice: string, tail: Uint8Array): Uint8Array[] {
    return [encoder.encode(`data: ${geminiChunk(notice, this.fields ?? {})}${this.lineEnd}${this.lineEnd}`), tail];
  }
}

/**
 * Gemini's streamed JSON array: an element with the notice before the element that carries
 * `finishReason` (or, in a stream cut before one, before the closing `]`). The array's structure
 * is followed character by character (strings, escapes, depth), so an element's start is known.
 */
class GeminiArrayWriter implements NoticeWriter {
  private depth = 0;
  private inString = false;
  private escaped = false;
  private fields: Record<string, unknown> | null = null;
  private separator = ",\n";

  split(piece: Uint8Array): number {
    const text = latin1.decode(piece);
    let elementStart = -1;
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (this.inString) {
        if (this.escaped) this.escaped = false;
        else if (c === 0x5c) this.escaped = true;
        else if (c === 0x22) this.inString = false;
        continue;
      }
      if (c === 0x22) this.inString = true;
      else if (c === 0x7b || c === 0x5b) {
        if (this.depth === 1) elementStart = i;
        this.depth++;
      } else if (c === 0x7d || c === 0x5d) {
        this.depth--;
        if (this.depth === 0 && c === 0x5d) return i;
        if (this.depth === 1 && elementStart >= 0) {
          const element = text.slice(elementStart, i + 1);
          if (/"finishReason"\s*:\s*"/.test(element)) return elementStart;
          if (this.fields === null) this.fields = geminiFields(utf8.decode(piece.subarray(elementStart, i + 1)));
          elementStart = -1;
        }
      } else if (c === 0x2c && this.depth === 1 && text.charCodeAt(i + 1) === 0x0d) this.separator = ",\r\n";
    }
    return -1;
  }

  finish(notice: string, tail: Uint8Array): Uint8Array[] {
    // The tail starts with an element (or the closing bracket): the notice element goes in front, with a separator.
    // A body cut inside the array (no tail) has no place left for one.
    if (tail.length === 0) return [];
    const element = geminiChunk(notice, this.fields ?? {});
    return [encoder.encode(tail[0] === 0x5d ? `${this.separator}${element}\n` : `${element}${this.separator}`), tail];
  }
}

/** Ollama `/api/chat` NDJSON: a line whose `message.content` is the notice, before the `done: true` line. */
class OllamaWriter implements NoticeWriter {
  private fields: Record<string, unknown> | null = null;

  split(piece: Uint8Array): number {
    const text = latin1.decode(piece);
    const match = /"done"\s*:\s*true/.exec(text);
    const end = match ? match.index : text.length;
    if (this.fields === null) {
      const lineEnd = text.indexOf("\n");
      if (lineEnd >= 0 && lineEnd < end) {
        try {
          const line = JSON.parse(utf8.decode(piece.subarray(0, lineEnd))) as Record<string, unknown>;
          this.fields = { model: line.model, created_at: line.created_at };
        } catch {
          // Not a JSON line: the notice goes without them.
        }
      }
    }
    if (!match) return -1;
    return text.lastIndexOf("\n", match.index) + 1;
  }

  finish(notice: string, tail: Uint8Array): Uint8Array[] {
    const line = { ...(this.fields ?? {}), message: { role: "assistant", content: notice }, done: false };
    return [encoder.encode(`${JSON.stringify(line)}\n`), tail];
  }
}

/** What a Bedrock event stream's frames mean for the notice: which one ends the message, which open blocks, and the notice's own frames. */
interface FrameReading {
  /** `terminal` for the frame that ends the message, a block index for one that names a block, else null. */
  read(type: unknown, payload: Uint8Array): "terminal" | number | null;
  /** The frames of a text block at `index` holding `notice`. */
  frames(notice: string, index: number): Uint8Array[];
}

/**
 * ConverseStream: a text content block at the next free `contentBlockIndex` (`contentBlockDelta`
 * and `contentBlockStop` frames, as Bedrock streams a text block) before `messageStop`.
 */
const CONVERSE_FRAMES: FrameReading = {
  read(type, payload) {
    if (type === "messageStop") return "terminal";
    if (type !== "contentBlockStart" && type !== "contentBlockDelta" && type !== "contentBlockStop") return null;
    const index = /"contentBlockIndex"\s*:\s*(\d+)/.exec(latin1.decode(payload));
    return index ? Number(index[1]) : null;
  },
  frames(notice, index) {
    return [encodeJsonEventFrame("contentBlockDelta", { contentBlockIndex: index, delta: { text: notice } }), encodeJsonEventFrame("contentBlockStop", { contentBlockIndex: index })];
  },
};

/**
 * Claude on Bedrock (`invoke-with-response-stream`): Messages events, base64 in `chunk` frames.
 * As for Messages, a text block at the next free index before `message_delta`, each of its three
 * events in a `chunk` frame of its own.
 */
const CLAUDE_FRAMES: FrameReading = {
  read(type, payload) {
    if (type !== "chunk") return null;
    try {
      const chunk = JSON.parse(utf8.decode(payload)) as { bytes?: unknown };
      if (typeof chunk.bytes !== "string") return null;
      const event = JSON.parse(utf8.decode(base64ToBytes(chunk.bytes))) as { type?: unknown; index?: unknown };
      if (event.type === "message_delta" || event.type === "message_stop") return "terminal";
      return event.type === "content_block_start" && typeof event.index === "number" && Number.isInteger(event.index) ? event.index : null;
    } catch {
      // Not base64 JSON: the re-encoder forwarded it as it came; it names no block.
      return null;
    }
  },
  frames(notice, index) {
    const chunk = (event: unknown): Uint8Array => encodeJsonEventFrame("chunk", { bytes: bytesToBase64(encoder.encode(JSON.stringify(event))) });
    return [
      chunk({ type: "content_block_start", index, content_block: { type: "text", text: "" } }),
      chunk({ type: "content_block_delta", index, delta: { type: "text_delta", text: notice } }),
      chunk({ type: "content_block_stop", index }),
    ];
  },
};

/**
 * A Bedrock binary AWS event stream (ConverseStream, or Claude's invoke stream): the notice's
 * frames (see the readings above) before the frame that ends the message. Frames are cut as the
 * decoder cuts them (one cut across pieces is completed by the next).
 */
class BedrockWriter implements NoticeWriter {
  constructor(private readonly reading: FrameReading) {}

  private readonly frames = new EventStreamFrameSplitter();
  /** Bytes of the stream before the piece being read. */
  private seen = 0;
  private maxIndex = -1;
  /** A prelude that did not read: the frames can no longer be told apart, and the notice goes at the end. */
  private lost = false;

  split(piece: Uint8Array): number {
    if (this.lost) return -1;
    const pieceStart = this.seen;
    this.seen += piece.length;
    this.frames.append(piece);
    for (;;) {
      const frameStart = this.frames.offset;
      let message: EventStreamMessage;
      try {
        const frame = this.frames.next();
        if (frame === null) return -1;
        message = decodeFrame(frame, frameStart);
      } catch {
        // A frame that does not read is skipped; a prelude that does not, ends the reading: the
        // re-encoder passed what it could not read, and nothing more is to be learnt from this body.
        if (this.frames.offset === frameStart) {
          this.lost = true;
          return -1;
        }
        continue;
      }
      const meaning = this.reading.read(message.headers[":event-type"], message.payload);
      if (meaning === "terminal") {
        // A terminal frame begun in an earlier piece has passed in part: the notice then follows it.
        return frameStart >= pieceStart ? frameStart - pieceStart : this.frames.offset - pieceStart;
      }
      if (meaning !== null) this.maxIndex = Math.max(this.maxIndex, meaning);
    }
  }

  finish(notice: string, tail: Uint8Array): Uint8Array[] {
    return [...this.reading.frames(notice, this.maxIndex + 1), tail];
  }
}

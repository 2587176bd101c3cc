import { isWrappedRecord } from "../framing/records.js";
import type { ProviderEvent, ProviderName } from "../types.js";

/**
 * What the official SDKs' streams yield, described structurally.
 *
 * The published `.d.ts` must not name `@anthropic-ai/sdk` or `openai`: a user of only one of
 * them (or of plain fetch) would otherwise need the other installed for their own type check to
 * pass. So each provider gets the smallest shape that still tells the SDKs' events apart, and
 * `test/adapters/sdk-types.test.ts` proves at compile time that the SDKs' own types
 * (`RawMessageStreamEvent`, `MessageStream`, `ChatCompletionChunk`, `ResponseStreamEvent`, and
 * their `Stream<…>` wrappers) are accepted where they belong and rejected where they do not.
 */

/** `anthropic.messages.create({stream: true})` and `anthropic.messages.stream()` events. */
export interface AnthropicStreamEventLike {
  type: string;
}

/** `openai.chat.completions.create({stream: true})` chunks: no `type`, a `choices` array. */
export interface OpenAIChatChunkLike {
  choices: readonly unknown[];
}

/** `openai.responses.create({stream: true})` events (`response.created`, …). */
export interface OpenAIResponsesEventLike {
  type: string;
}

/** The payload an SDK stream of provider `P` yields. Providers without an SDK adapter take any object. */
export type SdkEventOf<P extends ProviderName> = P extends "anthropic"
  ? AnthropicStreamEventLike
  : P extends "openai-chat"
    ? OpenAIChatChunkLike
    : P extends "openai-responses"
      ? OpenAIResponsesEventLike
      : object;

/** What an SDK exposes to stop its request: the SDKs' `Stream.controller`, `MessageStream.abort()`. */
interface Cancellable {
  controller?: { abort(reason?: unknown): void };
  abort?: () => void;
}

/**
 * Stops the request behind an SDK stream, when it exposes a way to. An async generator cannot be
 * returned while it awaits the network, so aborting the SDK's controller is what actually frees
 * the socket; returns whether it found one.
 */
export function cancelSdkStream(source: object, reason: unknown): boolean {
  const cancellable = source as Cancellable;
  if (cancellable.controller && typeof cancellable.controller.abort === "function") {
    cancellable.controller.abort(reason);
    return true;
  }
  if (typeof cancellable.abort === "function") {
    cancellable.abort();
    return true;
  }
  return false;
}

/**
 * One parsed payload from an iterable as the provider event the decoder reads: the SSE event name
 * an SDK dropped is its `type` (Anthropic, Responses); `{data, event?}` objects (recorded records,
 * or events framed by the caller) pass as they are. Other payloads (Chat chunks, the AWS SDK's
 * `{contentBlockDelta: {…}}` members, Gemini and Ollama chunks) are read by their decoders as is.
 */
export function toProviderEvent(item: object): ProviderEvent {
  if (isWrappedRecord(item)) {
    const event: ProviderEvent = { data: item.data };
    if (typeof item.event === "string") event.event = item.event;
    return event;
  }
  const type = (item as { type?: unknown }).type;
  return typeof type === "string" ? { event: type, data: item } : { data: item };
}

/**
 * The SDKs turn an error the provider sent mid-stream into a thrown `APIError` whose `error`
 * holds the parsed body. That body is the provider's error event, so it is decoded as one (the
 * turn ends with status `error`, exactly as from the raw bytes); returns null for anything else
 * (a network failure, a bug), which the caller reports as a failed source.
 */
export function providerEventFromSdkError(provider: ProviderName, error: unknown): ProviderEvent | null {
  if (typeof error !== "object" || error === null) return null;
  const { status, error: body } = error as { status?: unknown; error?: unknown };
  // A status means the HTTP request itself failed, before any stream: not an in-stream event.
  if (status !== undefined || typeof body !== "object" || body === null) return null;
  switch (provider) {
    case "anthropic":
      // `{type: "error", error: {type, message}}`, the data of the `event: error` SSE event.
      return (body as { type?: unknown }).type === "error" ? { event: "error", data: body } : null;
    case "openai-chat":
      // The SDK throws `data.error` of a chunk that carried one.
      return { data: { error: body } };
    case "openai-responses":
      // The same check catches the Responses `error` event, `{type: "error", error: {…}}`; fields
      // beside `error` (its sequence_number) are lost to the SDK.
      return { event: "error", data: { type: "error", error: body } };
    default:
      return null;
  }
}

/**
 * `anthropic.messages.stream()` (the SDK's MessageStream) builds its message snapshot out of the
 * `message_start` event's own `message` object: blocks, stop reason and usage are written into it
 * as later events arrive. A consumer that reads `message_start` after the SDK processed later
 * events (any await between the SDK's emit and the read: a watchdog race, a slow consumer) would
 * decode a message that already holds content. So the event is copied at the moment the SDK emits
 * it, and the copy is what gets decoded. Returns null for any other source (nothing to guard).
 */
export function pristineSdkEvents(source: object): ((item: unknown) => unknown) | null {
  const emitter = source as { on?: unknown; finalMessage?: unknown };
  if (typeof emitter.on !== "function" || typeof emitter.finalMessage !== "function") return null;
  const copies = new WeakMap<object, unknown>();
  const listen = emitter.on as (name: string, listener: (event: unknown) => void) => unknown;
  listen.call(source, "streamEvent", (event: unknown) => {
    if (typeof event === "object" && event !== null && (event as { type?: unknown }).type === "message_start") copies.set(event, structuredClone(event));
  });
  return (item) => (typeof item === "object" && item !== null ? (copies.get(item) ?? item) : item);
}

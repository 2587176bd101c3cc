import { createDecoder } from "../providers/registry.js";
import { repairWholeResponse } from "../reencode/whole.js";
import type { CodecEvent, DecodedTurn, DecoderOptions, ProviderEvent, ProviderName, ToolCall } from "../types.js";
import { isPlainObject } from "../json/shape.js";

/**
 * A language-model middleware for the Vercel AI SDK (`wrapLanguageModel({ model, middleware:
 * toolwireMiddleware() })`) that decodes the provider's own stream through toolwire, so that the
 * AI SDK's tool-call handling gets toolwire's calls:
 *
 * - a call toolwire decoded (as sent or repaired: a missing brace, glued objects split, cumulative
 *   arguments) reaches the AI SDK as a `tool-call` part with toolwire's arguments;
 * - a call toolwire found invalid or cut (`truncated`, `invalid_json`, …) reaches it as a
 *   `tool-call` part whose input does not parse: the raw arguments followed by
 *   `/* toolwire: <the model-facing message> *\/`. The AI SDK then raises `InvalidToolInputError`,
 *   so `experimental_repairToolCall` is called with it, or the step gets a `tool-error` part whose
 *   error (sent back to the model) carries toolwire's message, instead of the call vanishing from
 *   `fullStream`;
 * - every call part carries `providerMetadata.toolwire`: `{source, repairs, error?, message?,
 *   rawArguments}`.
 *
 * The decoding reads the raw chunks the AI SDK's provider already parsed (`includeRawChunks`, asked
 * for by the middleware; they are passed on only when the caller asked for them too). A call goes
 * on as soon as toolwire has finalized it (after the provider's parts of the chunk that closed it,
 * whose `providerMetadata`, e.g. Gemini's thought signature, it keeps), so tools can start while
 * the model writes; a model that sends no raw chunks has its own calls passed on unchanged. Non-streamed
 * calls (`generateText`) are repaired from the raw response body with `repairWholeResponse`.
 * Provider-executed calls, text, reasoning and every other part pass through untouched. A model
 * whose protocol toolwire cannot tell from `model.provider` (see `aiSdkProviderOf`) passes through
 * unchanged unless `provider` is given.
 *
 * Structural types only: this module imports nothing from `ai` or `@ai-sdk/provider`, so that
 * toolwire does not depend on them (`test/integration/ai-sdk-middleware.test.ts` runs it with the
 * real packages).
 */

/** What toolwire adds to each client tool-call part's `providerMetadata`, under `toolwire`. */
export interface ToolwireCallMetadata {
  [key: string]: unknown;
  /** Where the arguments came from (`ToolCall.source`: `delta`, `final`, …), null when none could be used. */
  source: string | null;
  /** The repairs made to the arguments (`ToolCall.repairs`); empty when they were used as sent. */
  repairs: string[];
  /** The error code of a call toolwire did not deliver as runnable (`truncated`, `invalid_json`, …). */
  error?: string;
  /** toolwire's message for the model about that call. */
  message?: string;
  /** The arguments as the model sent them. */
  rawArguments: string;
}

/** Options of `toolwireMiddleware`: the protocol when the model's provider name does not tell, decoder options, a turn hook, the specification version it declares. */
export interface ToolwireMiddlewareOptions<V extends "v3" | "v4" = "v3" | "v4"> {
  /** The wire protocol, when `model.provider` does not tell (e.g. a community provider). */
  provider?: ProviderName;
  /** Decoder options (limits, textCalls). */
  decoder?: DecoderOptions;
  /** Each turn toolwire decoded, with the provider it was read as. */
  onTurn?: (turn: DecodedTurn, info: { provider: ProviderName }) => void;
  /**
   * The middleware specification version the object declares (the behaviour is the same). `"v3"`
   * (the default) is the one AI SDK 6's `wrapLanguageModel` types ask for, and AI SDK 7's accepts
   * it too; `"v4"` is for code that types the middleware as AI SDK 7's `LanguageModelV4Middleware`.
   */
  specificationVersion?: V;
}

/** The parts this middleware reads and writes, structurally (the AI SDK's LanguageModelV3/V4 stream parts, the same for what is read here). */
interface StreamPart {
  type: string;
  [key: string]: unknown;
}

interface ModelLike {
  readonly provider: string;
  readonly modelId: string;
}

interface CallOptionsLike {
  includeRawChunks?: boolean;
}

interface StreamResultLike {
  /** ReadableStream<LanguageModelV3StreamPart | LanguageModelV4StreamPart>: read as StreamPart below. */
  stream: ReadableStream<unknown>;
}

interface GenerateResultLike {
  content: ReadonlyArray<{ readonly type: string }>;
  response?: { body?: unknown };
}

/**
 * The middleware object `wrapLanguageModel` takes (AI SDK 6 and 7), generic so that the AI SDK's own
 * types fit it: the language-model specifications V3 (AI SDK 6) and V4 (AI SDK 7) give a middleware
 * the same call options and parts, so one implementation serves both.
 */
export interface ToolwireLanguageModelMiddleware<V extends "v3" | "v4" = "v3" | "v4"> {
  readonly specificationVersion: V;
  transformParams<P extends CallOptionsLike>(options: { type: "generate" | "stream"; params: P; model: ModelLike }): PromiseLike<P>;
  wrapStream<S extends StreamResultLike, P extends CallOptionsLike>(options: { doStream: () => PromiseLike<S>; params: P; model: ModelLike }): PromiseLike<S>;
  wrapGenerate<G extends GenerateResultLike, P extends CallOptionsLike>(options: { doGenerate: () => PromiseLike<G>; params: P; model: ModelLike }): PromiseLike<G>;
}

/**
 * The protocol of an AI SDK model from its `provider` string: `anthropic.messages` and
 * `vertex.anthropic.messages` → anthropic, `openai.responses` → openai-responses, `openai.chat` and
 * any other `*.chat` (OpenAI-compatible providers) → openai-chat, `google.*`/`vertex.*` → gemini,
 * `amazon-bedrock` → bedrock, `ollama*` → ollama; null otherwise.
 */
export function aiSdkProviderOf(provider: string): ProviderName | null {
  const name = provider.toLowerCase();
  if (name.includes("anthropic")) return "anthropic";
  if (name.endsWith(".responses")) return "openai-responses";
  if (name.startsWith("ollama")) return "ollama";
  if (name.endsWith(".chat") || name === "openai" || name.startsWith("openai.")) return "openai-chat";
  if (name.startsWith("google") || name.startsWith("vertex")) return "gemini";
  if (name.includes("bedrock")) return "bedrock";
  return null;
}

/** A raw chunk as the decoder's event: the event name from `type` where the protocol puts it there; Bedrock's one-key SDK form unwrapped. */
function eventOf(provider: ProviderName, raw: unknown): ProviderEvent {
  if (provider === "bedrock" && isPlainObject(raw)) {
    const keys = Object.keys(raw);
    if (keys.length === 1 && isPlainObject(raw[keys[0] as string])) return { event: keys[0] as string, data: raw[keys[0] as string] };
  }
  if ((provider === "anthropic" || provider === "openai-responses") && isPlainObject(raw) && typeof raw.type === "string") return { event: raw.type, data: raw };
  return { data: raw };
}

/** What a client call becomes for the AI SDK: toolwire's arguments, or input that will not parse, carrying toolwire's message. */
function inputOf(call: ToolCall): string {
  if (call.arguments !== null) return JSON.stringify(call.arguments);
  const message = (call.error?.message ?? "the call was not executed").replace(/\*\//g, "* /");
  return `${call.rawArguments}\n/* toolwire: ${call.error?.code ?? "invalid"}: ${message} */`;
}

function metadataOf(call: ToolCall): ToolwireCallMetadata {
  return {
    source: call.source,
    repairs: [...call.repairs],
    ...(call.error ? { error: call.error.code, message: call.error.message } : {}),
    rawArguments: call.rawArguments,
  };
}

function callId(call: ToolCall): string {
  return call.providerId ?? call.id;
}

/** The tool-call part for one of toolwire's client calls, keeping what the provider's own part carried. */
function callPart(call: ToolCall, original: StreamPart | undefined): StreamPart {
  const providerMetadata = isPlainObject(original?.providerMetadata) ? original.providerMetadata : {};
  return {
    ...(original ?? {}),
    type: "tool-call",
    toolCallId: typeof original?.toolCallId === "string" ? original.toolCallId : callId(call),
    toolName: call.name,
    input: inputOf(call),
    providerMetadata: { ...providerMetadata, toolwire: metadataOf(call) },
  };
}

/** Pairs toolwire's calls with the provider's own parts: by id, else by order. */
function pairParts(calls: readonly ToolCall[], parts: readonly StreamPart[]): Array<StreamPart | undefined> {
  const byId = new Map(parts.map((part) => [part.toolCallId, part]));
  const unused = [...parts];
  return calls.map((call, i) => {
    const found = byId.get(callId(call)) ?? byId.get(call.id);
    if (found) {
      unused.splice(unused.indexOf(found), 1);
      return found;
    }
    return parts[i] !== undefined && unused.includes(parts[i] as StreamPart) ? (unused.splice(unused.indexOf(parts[i] as StreamPart), 1), parts[i]) : undefined;
  });
}

/**
 * Creates the middleware: `wrapLanguageModel({ model, middleware: toolwireMiddleware() })`, with
 * AI SDK 6 or 7 (`toolwireMiddleware({ specificationVersion: "v4" })` where a
 * `LanguageModelV4Middleware` is required). The model's stream is decoded by toolwire and its
 * tool-call parts carry toolwire's calls (see this entry point's description above for what
 * happens to a call that is repaired, invalid or cut).
 */
export function toolwireMiddleware<V extends "v3" | "v4" = "v3">(options: ToolwireMiddlewareOptions<V> = {}): ToolwireLanguageModelMiddleware<V> {
  /** The calls whose caller did not ask for raw chunks: they are asked for here and not passed on. */
  const hideRaw = new WeakSet<object>();
  const providerOf = (model: ModelLike): ProviderName | null => options.provider ?? aiSdkProviderOf(model.provider);

  return {
    specificationVersion: options.specificationVersion ?? ("v3" as V),
    async transformParams<P extends CallOptionsLike>({ type, params, model }: { type: "generate" | "stream"; params: P; model: ModelLike }): Promise<P> {
      if (type !== "stream" || params.includeRawChunks === true || providerOf(model) === null) return params;
      const asked: P = { ...params, includeRawChunks: true };
      hideRaw.add(asked);
      return asked;
    },

    async wrapStream<S extends StreamResultLike, P extends CallOptionsLike>({ doStream, params, model }: { doStream: () => PromiseLike<S>; params: P; model: ModelLike }): Promise<S> {
      const result = await doStream();
      const provider = providerOf(model);
      if (provider === null) return result;
      const passRaw = !hideRaw.has(params);
      const decoder = createDecoder(provider, options.decoder ?? {});
      /** The provider's own client tool-call parts, not yet paired with one of toolwire's calls. */
      const held: StreamPart[] = [];
      /** toolwire's calls, final, waiting for the provider's parts of the same chunk (they follow its raw part). */
      const pending: ToolCall[] = [];
      /** The tool-call ids already sent on: a provider part arriving later for one of them is dropped. */
      const sent = new Set<string>();
      const take = (events: readonly CodecEvent[]): DecodedTurn | null => {
        let turn: DecodedTurn | null = null;
        for (const event of events) {
          if (event.type === "tool_call_end" && event.call.kind !== "server") pending.push(event.call);
          else if (event.type === "finish") turn = event.turn;
        }
        return turn;
      };
      /** Sends the pending calls, each with the provider's part of the same id, else of the same name in order. */
      const release = (controller: TransformStreamDefaultController<StreamPart>): void => {
        for (const call of pending.splice(0)) {
          let index = held.findIndex((part) => part.toolCallId === callId(call) || part.toolCallId === call.id);
          if (index === -1) index = held.findIndex((part) => part.toolName === call.name);
          const original = index === -1 ? undefined : held.splice(index, 1)[0];
          const part = callPart(call, original);
          sent.add(part.toolCallId as string);
          controller.enqueue(part);
        }
      };
      let settled = false;
      let sawRaw = false;
      const settle = (controller: TransformStreamDefaultController<StreamPart>): void => {
        if (settled) return;
        settled = true;
        // A provider that sends no raw chunks leaves toolwire nothing to read: its own calls go on as they were.
        if (!sawRaw) {
          for (const part of held.splice(0)) controller.enqueue(part);
          return;
        }
        release(controller);
        const turn = take(decoder.flush());
        release(controller);
        if (turn) options.onTurn?.(turn, { provider });
      };
      const stream = (result.stream as ReadableStream<StreamPart>).pipeThrough(
        new TransformStream<StreamPart, StreamPart>({
          transform(part, controller) {
            if (part.type === "raw") {
              // The previous chunk's parts have all arrived: its final calls can go now.
              sawRaw = true;
              release(controller);
              take(decoder.push(eventOf(provider, part.rawValue)));
              if (passRaw) controller.enqueue(part);
              return;
            }
            if (part.type === "tool-call" && part.providerExecuted !== true) {
              if (!sent.has(part.toolCallId as string)) held.push(part);
              return;
            }
            if (part.type === "finish") settle(controller);
            controller.enqueue(part);
          },
          flush(controller) {
            settle(controller);
          },
        }),
      );
      return { ...result, stream } as S;
    },

    async wrapGenerate<G extends GenerateResultLike, P extends CallOptionsLike>({ doGenerate, model }: { doGenerate: () => PromiseLike<G>; params: P; model: ModelLike }): Promise<G> {
      const result = await doGenerate();
      const provider = providerOf(model);
      const body = result.response?.body;
      if (provider === null || body === undefined) return result;
      let parsed: unknown = body;
      if (typeof body === "string") {
        try {
          parsed = JSON.parse(body) as unknown;
        } catch {
          return result;
        }
      }
      const repaired = repairWholeResponse(provider, parsed, options.decoder ?? {});
      const turn = repaired.turn;
      if (turn === null) return result;
      options.onTurn?.(turn, { provider });
      // The whole body's calls, as toolwire read them (withheld ones included, with their error).
      const calls = turn.toolCalls;
      const given = result.content as readonly StreamPart[];
      const originals = given.filter((part) => part.type === "tool-call" && part.providerExecuted !== true);
      const paired = pairParts(calls, originals);
      const content: StreamPart[] = [];
      let placed = false;
      for (const part of given) {
        if (part.type === "tool-call" && part.providerExecuted !== true) {
          if (!placed) {
            calls.forEach((call, i) => content.push(callPart(call, paired[i])));
            placed = true;
          }
          continue;
        }
        content.push(part);
      }
      if (!placed) calls.forEach((call, i) => content.push(callPart(call, paired[i])));
      return { ...result, content } as G;
    },
  };
}

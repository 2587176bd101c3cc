import { describe, expectTypeOf, it } from "vitest";
import type Anthropic from "@anthropic-ai/sdk";
import type { MessageStream } from "@anthropic-ai/sdk/lib/MessageStream";
import type { Stream as AnthropicStream } from "@anthropic-ai/sdk/streaming";
import type OpenAI from "openai";
import type { ChatCompletionStream } from "openai/lib/ChatCompletionStream";
import type { ResponseStream } from "openai/lib/responses/ResponseStream";
import type { Stream as OpenAIStream } from "openai/streaming";
import { collectTurn, decodeStream, type StreamSourceFor } from "../../src/adapters/web.js";
import { record, type Recording } from "../../src/adapters/record.js";

/**
 * The SDKs' own stream types against toolwire's structural ones, checked by `tsc` (this file is
 * part of the type-checked project; the runtime body only keeps vitest from reporting an empty
 * file). toolwire's published types never name the SDKs; this is where their fit is proven.
 */

type AnthropicEvents = AnthropicStream<Anthropic.Messages.RawMessageStreamEvent>;
type ChatChunks = OpenAIStream<OpenAI.Chat.Completions.ChatCompletionChunk>;
type ResponsesEvents = OpenAIStream<OpenAI.Responses.ResponseStreamEvent>;

describe("SDK stream types", () => {
  it("accepts each SDK's raw stream for its own provider", () => {
    expectTypeOf<AnthropicEvents>().toMatchTypeOf<StreamSourceFor<"anthropic">>();
    expectTypeOf<MessageStream>().toMatchTypeOf<StreamSourceFor<"anthropic">>();
    expectTypeOf<ChatChunks>().toMatchTypeOf<StreamSourceFor<"openai-chat">>();
    expectTypeOf<ChatCompletionStream>().toMatchTypeOf<StreamSourceFor<"openai-chat">>();
    expectTypeOf<ResponsesEvents>().toMatchTypeOf<StreamSourceFor<"openai-responses">>();
    expectTypeOf<ResponseStream>().toMatchTypeOf<StreamSourceFor<"openai-responses">>();
    expectTypeOf<Recording<AnthropicEvents>>().toMatchTypeOf<Parameters<typeof collectTurn<"anthropic">>[1]>();
  });

  it("rejects a stream passed for the wrong provider", () => {
    expectTypeOf<ChatChunks>().not.toMatchTypeOf<StreamSourceFor<"anthropic">>();
    expectTypeOf<ChatChunks>().not.toMatchTypeOf<StreamSourceFor<"openai-responses">>();
    expectTypeOf<AnthropicEvents>().not.toMatchTypeOf<StreamSourceFor<"openai-chat">>();
    expectTypeOf<ResponsesEvents>().not.toMatchTypeOf<StreamSourceFor<"openai-chat">>();
  });

  it("accepts the web sources for every provider", () => {
    expectTypeOf<Response>().toMatchTypeOf<StreamSourceFor<"gemini">>();
    expectTypeOf<ReadableStream<Uint8Array>>().toMatchTypeOf<StreamSourceFor<"bedrock">>();
    expectTypeOf<AsyncIterable<string>>().toMatchTypeOf<StreamSourceFor<"ollama">>();
    expectTypeOf<AsyncIterable<{ event?: string; data: unknown }>>().toMatchTypeOf<StreamSourceFor<"anthropic">>();
  });

  it("type-checks real calls (never run: they need a client)", () => {
    const check = async (anthropic: Anthropic, openai: OpenAI, sink: WritableStream<string>): Promise<void> => {
      const messages = await anthropic.messages.create({ model: "m", max_tokens: 1, messages: [], stream: true });
      await collectTurn("anthropic", messages);
      await collectTurn("anthropic", anthropic.messages.stream({ model: "m", max_tokens: 1, messages: [] }));
      await collectTurn("anthropic", record(messages, sink));
      const chunks = await openai.chat.completions.create({ model: "m", messages: [], stream: true });
      decodeStream("openai-chat", chunks, { idleTimeoutMs: 1 });
      // @ts-expect-error Chat chunks are not Anthropic events.
      decodeStream("anthropic", chunks);
      const events = await openai.responses.create({ model: "m", input: "x", stream: true });
      await collectTurn("openai-responses", events);
      // @ts-expect-error Responses events are not Chat chunks.
      await collectTurn("openai-chat", events);
    };
    expectTypeOf(check).toBeFunction();
  });
});

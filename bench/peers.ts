import type { BenchCall } from "./fixtures.js";
import type { Normalized, Protocol, Scenario } from "./scenarios.js";

/**
 * The official SDKs and the AI SDK, fed the same bytes through their `fetch` option. They are
 * loaded only in the processes that time them, so their code and garbage never touch toolwire's
 * measurements.
 */
export const PEERS = {
  "anthropic-sdk": { protocol: "anthropic", label: "@anthropic-ai/sdk messages.stream(), finalMessage() only" },
  "anthropic-sdk-inputJson": { protocol: "anthropic", label: "@anthropic-ai/sdk messages.stream() with an inputJson listener" },
  "openai6-plain": { protocol: "openai-chat", label: "openai 6 chat.completions.stream(), non-strict tool" },
  "openai6-strict": { protocol: "openai-chat", label: "openai 6 chat.completions.stream(), strict tool (parsed_arguments kept live)" },
  "openai6-strict-delta": { protocol: "openai-chat", label: "openai 6 strict tool + tool_calls.function.arguments.delta listener" },
  "openai7-plain": { protocol: "openai-chat", label: "openai 7 chat.completions.stream(), non-strict tool" },
  "openai7-strict": { protocol: "openai-chat", label: "openai 7 chat.completions.stream(), strict tool" },
  "openai7-strict-delta": { protocol: "openai-chat", label: "openai 7 strict tool + tool_calls.function.arguments.delta listener" },
  "ai-sdk": { protocol: "both", label: "AI SDK streamText() (@ai-sdk/anthropic, @ai-sdk/openai .chat), awaiting text and toolCalls" },
} as const;

export type PeerName = keyof typeof PEERS;

/** The npm alias the openai 7 rows import (openai 7 declares Node >= 22; a variable, so that the type check needs no openai 7). */
const OPENAI_V7 = "openai-v7";

/** The packages behind the peer rows, whose installed versions a run records. */
export const PEER_PACKAGES = ["@anthropic-ai/sdk", "openai", "openai-v7", "ai", "@ai-sdk/anthropic", "@ai-sdk/openai"];

export function peerFits(peer: PeerName, protocol: Protocol): boolean {
  const fit = PEERS[peer].protocol;
  return fit === "both" || fit === protocol;
}

/** Stops a peer's run once the process has spent its CPU budget since `startCpuMs`. */
export class CpuBudget {
  exceeded = false;
  /** Chunks handed out in the current run. */
  sent = 0;
  constructor(
    private readonly startCpuMs: number,
    private readonly budgetMs: number,
  ) {}

  startedAt(): number {
    return this.startCpuMs;
  }

  over(): boolean {
    if (cpuMs() - this.startCpuMs > this.budgetMs) this.exceeded = true;
    return this.exceeded;
  }
}

export function cpuMs(): number {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1000;
}

function budgetedResponse(chunks: readonly Uint8Array[], budget: CpuBudget): Response {
  budget.sent = 0;
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (budget.over()) {
        controller.error(new Error("CPU budget spent"));
        return;
      }
      const chunk = chunks[budget.sent++];
      if (chunk) controller.enqueue(chunk);
      else controller.close();
    },
  });
  return new Response(body, { headers: { "content-type": "text/event-stream" } });
}

type JsonSchema = Record<string, unknown>;

/** A strict (structured-outputs) schema describing an example value: every key required, no others. */
function strictSchemaOf(value: unknown): JsonSchema {
  if (Array.isArray(value)) return { type: "array", items: strictSchemaOf(value[0] ?? "") };
  if (value !== null && typeof value === "object") {
    const properties: Record<string, JsonSchema> = {};
    for (const [key, inner] of Object.entries(value)) properties[key] = strictSchemaOf(inner);
    return { type: "object", properties, required: Object.keys(properties), additionalProperties: false };
  }
  if (typeof value === "number") return { type: "number" };
  if (typeof value === "boolean") return { type: "boolean" };
  return { type: "string" };
}

function toolsOf(calls: BenchCall[]): Map<string, JsonSchema> {
  const tools = new Map<string, JsonSchema>();
  for (const call of calls) tools.set(call.name, strictSchemaOf(JSON.parse(call.argumentsText)));
  return tools;
}

export type PeerRun = () => Promise<Normalized | null>;

/** Prepares a peer for a scenario (client, tools); each call of the result decodes one turn, or returns null when the budget ran out. */
export async function preparePeer(peer: PeerName, scenario: Scenario, budget: CpuBudget): Promise<PeerRun> {
  const tools = toolsOf(scenario.calls);
  const fetch = async (): Promise<Response> => budgetedResponse(scenario.chunks, budget);
  if (peer === "anthropic-sdk" || peer === "anthropic-sdk-inputJson") {
    const { default: Anthropic } = await import("@anthropic-ai/sdk");
    const client = new Anthropic({ apiKey: "bench", maxRetries: 0, fetch });
    return async () => {
      const stream = client.messages.stream({
        model: "claude-bench",
        max_tokens: 10,
        messages: [{ role: "user", content: "x" }],
        tools: [...tools].map(([name, schema]) => ({ name, input_schema: schema as { type: "object" } })),
      });
      let seen = 0;
      if (peer === "anthropic-sdk-inputJson") stream.on("inputJson", () => seen++);
      stream.on("error", () => {});
      let message;
      try {
        message = await stream.finalMessage();
      } catch (error) {
        if (budget.exceeded) return null;
        throw error;
      }
      if (peer === "anthropic-sdk-inputJson" && seen === 0) throw new Error("the SDK emitted no inputJson events");
      let text = "";
      const calls: Normalized["calls"] = [];
      for (const block of message.content) {
        if (block.type === "text") text += block.text;
        else if (block.type === "tool_use") calls.push({ name: block.name, arguments: block.input });
      }
      return { text, calls };
    };
  }
  if (peer.startsWith("openai")) {
    // openai 7 needs Node >= 22 and is no dev dependency: its rows run where `openai-v7` is installed (npm i -D openai-v7@npm:openai@7 on Node 22).
    const module = (peer.startsWith("openai7") ? await import(/* @vite-ignore */ OPENAI_V7) : await import("openai")) as { default: unknown };
    const OpenAI = module.default as unknown as new (options: object) => {
      chat: { completions: { stream(body: object): OpenAIStream } };
    };
    const client = new OpenAI({ apiKey: "bench", maxRetries: 0, fetch });
    const strict = peer.endsWith("strict") || peer.endsWith("strict-delta");
    const listen = peer.endsWith("strict-delta");
    const toolList = [...tools].map(([name, schema]) => ({ type: "function", function: { name, parameters: schema, ...(strict ? { strict: true } : {}) } }));
    return async () => {
      const stream = client.chat.completions.stream({ model: "gpt-bench", messages: [{ role: "user", content: "x" }], tools: toolList });
      let seen = 0;
      if (listen) stream.on("tool_calls.function.arguments.delta", () => seen++);
      stream.on("error", () => {});
      let completion;
      try {
        completion = await stream.finalChatCompletion();
      } catch (error) {
        if (budget.exceeded) return null;
        throw error;
      }
      if (listen && seen === 0) throw new Error("the SDK emitted no arguments.delta events");
      const message = completion.choices[0]?.message;
      return {
        text: message?.content ?? "",
        calls: (message?.tool_calls ?? []).map((call) => ({
          name: call.function.name,
          arguments: strict && call.function.parsed_arguments !== undefined ? call.function.parsed_arguments : (JSON.parse(call.function.arguments) as unknown),
        })),
      };
    };
  }
  // The AI SDK, with the provider package for the protocol.
  const ai = await import("ai");
  const model =
    scenario.protocol === "anthropic"
      ? (await import("@ai-sdk/anthropic")).createAnthropic({ apiKey: "bench", fetch })("claude-bench")
      : (await import("@ai-sdk/openai")).createOpenAI({ apiKey: "bench", fetch }).chat("gpt-bench");
  const toolSet: Record<string, unknown> = {};
  for (const [name, schema] of tools) toolSet[name] = ai.tool({ inputSchema: ai.jsonSchema(schema as Parameters<typeof ai.jsonSchema>[0]) });
  return async () => {
    try {
      const result = ai.streamText({ model, prompt: "x", tools: toolSet as Parameters<typeof ai.streamText>[0]["tools"], maxRetries: 0 });
      const [text, toolCalls] = await Promise.all([result.text, result.toolCalls]);
      if (budget.exceeded) return null;
      return { text, calls: toolCalls.map((call) => ({ name: call.toolName, arguments: call.input })) };
    } catch (error) {
      if (budget.exceeded) return null;
      throw error;
    }
  };
}

interface OpenAIStream {
  on(event: string, listener: (...args: unknown[]) => void): void;
  finalChatCompletion(): Promise<{
    choices: Array<{ message: { content: string | null; tool_calls?: Array<{ function: { name: string; arguments: string; parsed_arguments?: unknown } }> } }>;
  }>;
}

import { createParser } from "eventsource-parser";
import { anthropicTurnBody, bigArguments, chunkBytes, openaiChatTurnBody, smallArguments, smallTurnText, type BenchCall } from "./fixtures.js";

/**
 * The benchmark's workloads. Every door (the baseline, toolwire's entry points, the official
 * SDKs) reads the same bytes from the same kind of source: a `ReadableStream` of 16 KB chunks,
 * which is what a fetch `Response.body` hands out.
 */

export type Protocol = "anthropic" | "openai-chat";
/** `single`: one call of `size` bytes; `parallel4`: four calls of `size / 4` (Chat Completions interleaves them); `small`: an agent turn of about 2 KB. */
export type Shape = "single" | "parallel4" | "small";

export interface ScenarioSpec {
  protocol: Protocol;
  shape: Shape;
  /** Bytes of arguments (and text) in the turn. */
  size: number;
}

/** What every door must produce, compared before anything is timed. */
export interface Normalized {
  text: string;
  calls: Array<{ name: string; arguments: unknown }>;
}

export interface Scenario extends ScenarioSpec {
  chunks: Uint8Array[];
  calls: BenchCall[];
  text: string;
  expected: Normalized;
  /** Wire bytes of one turn. */
  wireBytes: number;
  /** Argument and text deltas in one turn. */
  deltas: number;
  /** Turns decoded per timed run (small turns are too quick to time one by one). */
  turnsPerRun: number;
}

export const DELTA_SIZE = 16;
const SMALL_TEXT_DELTA = 12;

export function scenarioId(spec: ScenarioSpec): string {
  return `${spec.protocol}/${spec.shape}/${spec.size}`;
}

export function buildScenario(spec: ScenarioSpec): Scenario {
  let calls: BenchCall[];
  let text = "";
  if (spec.shape === "single") {
    calls = [{ id: "call_bench_0", name: "write_file", argumentsText: bigArguments(spec.size) }];
  } else if (spec.shape === "parallel4") {
    calls = [0, 1, 2, 3].map((i) => ({ id: `call_bench_${i}`, name: "write_file", argumentsText: bigArguments(spec.size / 4) }));
  } else {
    // About a quarter text, the rest two ordinary calls.
    text = smallTurnText(Math.round(spec.size * 0.25));
    const each = Math.round((spec.size * 0.75) / 2);
    calls = [
      { id: "call_small_0", name: "search", argumentsText: smallArguments(each, 0) },
      { id: "call_small_1", name: "read_file", argumentsText: smallArguments(each, 3) },
    ];
  }
  const body =
    spec.protocol === "anthropic"
      ? anthropicTurnBody(text, calls, DELTA_SIZE, SMALL_TEXT_DELTA)
      : openaiChatTurnBody(text, calls, DELTA_SIZE, spec.shape === "parallel4", SMALL_TEXT_DELTA);
  const chunks = chunkBytes(body);
  const deltas = calls.reduce((sum, call) => sum + Math.ceil(call.argumentsText.length / DELTA_SIZE), Math.ceil(text.length / SMALL_TEXT_DELTA));
  return {
    ...spec,
    chunks,
    calls,
    text,
    expected: { text, calls: calls.map((call) => ({ name: call.name, arguments: JSON.parse(call.argumentsText) as unknown })) },
    wireBytes: chunks.reduce((sum, chunk) => sum + chunk.length, 0),
    deltas,
    turnsPerRun: spec.shape === "small" ? 200 : 1,
  };
}

/** The body as a fetch would deliver it: a fresh stream over the same chunks. */
export function bodyStream(chunks: readonly Uint8Array[]): ReadableStream<Uint8Array> {
  let next = 0;
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      const chunk = chunks[next++];
      if (chunk) controller.enqueue(chunk);
      else controller.close();
    },
  });
}

/**
 * The floor any consumer of these streams pays: read the body, split SSE with eventsource-parser,
 * `JSON.parse` each event, concatenate text and each call's argument fragments, `JSON.parse` each
 * call's arguments once at the end. No validation, no previews, no error handling.
 */
export async function baseline(protocol: Protocol, stream: ReadableStream<Uint8Array>): Promise<Normalized> {
  const decoder = new TextDecoder();
  let text = "";
  const calls: Array<{ name: string; buffer: string }> = [];
  const parser =
    protocol === "anthropic"
      ? createParser({
          onEvent(message) {
            const data = JSON.parse(message.data) as {
              type: string;
              index?: number;
              content_block?: { type: string; name?: string };
              delta?: { type: string; partial_json?: string; text?: string };
            };
            if (data.type === "content_block_delta") {
              if (data.delta?.type === "input_json_delta") (calls[data.index as number] as { buffer: string }).buffer += data.delta.partial_json ?? "";
              else if (data.delta?.type === "text_delta") text += data.delta.text ?? "";
            } else if (data.type === "content_block_start" && data.content_block?.type === "tool_use") {
              calls[data.index as number] = { name: data.content_block.name ?? "", buffer: "" };
            }
          },
        })
      : createParser({
          onEvent(message) {
            if (message.data === "[DONE]") return;
            const data = JSON.parse(message.data) as {
              choices: Array<{ delta?: { content?: string | null; tool_calls?: Array<{ index: number; function?: { name?: string; arguments?: string } }> } }>;
            };
            const delta = data.choices[0]?.delta;
            if (!delta) return;
            if (delta.content) text += delta.content;
            for (const call of delta.tool_calls ?? []) {
              const open = (calls[call.index] ??= { name: call.function?.name ?? "", buffer: "" });
              open.buffer += call.function?.arguments ?? "";
            }
          },
        });
  const reader = stream.getReader();
  while (true) {
    const { done, value } = await reader.read();
    if (done) break;
    parser.feed(decoder.decode(value, { stream: true }));
  }
  return { text, calls: calls.filter(Boolean).map((call) => ({ name: call.name, arguments: JSON.parse(call.buffer) as unknown })) };
}

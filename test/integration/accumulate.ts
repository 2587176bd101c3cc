import type Anthropic from "@anthropic-ai/sdk";
import type OpenAI from "openai";
import type { ReplayStream } from "../../src/node/replay-server.js";
import type { DecodedTurn } from "../../src/types.js";
import { ANTHROPIC_REQUEST, CHAT_REQUEST, pick, RESPONSES_REQUEST } from "./support.js";

/**
 * The calls as each SDK's own accumulation hands them to an agent (`finalMessage()`,
 * `finalChatCompletion()`, `finalResponse()`), and as toolwire does, in one comparable shape.
 * Arguments stay what the SDK gives: an object for Anthropic, the raw string for OpenAI.
 */
export type SdkCalls = Array<{ name: string; arguments: unknown }> | { threw: string };

function threw(error: unknown): { threw: string } {
  return { threw: error instanceof Error ? error.message : String(error) };
}

export async function anthropicCalls(client: Anthropic, stream: ReplayStream): Promise<SdkCalls> {
  try {
    const message = await client.messages.stream(ANTHROPIC_REQUEST, pick(stream)).finalMessage();
    return message.content.flatMap((block) => (block.type === "tool_use" ? [{ name: block.name, arguments: block.input }] : []));
  } catch (error) {
    return threw(error);
  }
}

export async function chatCalls(client: OpenAI, stream: ReplayStream): Promise<SdkCalls> {
  try {
    const completion = await client.chat.completions.stream(CHAT_REQUEST, pick(stream)).finalChatCompletion();
    return (completion.choices[0]?.message.tool_calls ?? []).map((call) => ({ name: call.function.name, arguments: call.function.arguments }));
  } catch (error) {
    return threw(error);
  }
}

export async function responsesCalls(client: OpenAI, stream: ReplayStream): Promise<SdkCalls> {
  try {
    const response = await client.responses.stream(RESPONSES_REQUEST, pick(stream)).finalResponse();
    return response.output.flatMap((item) =>
      item.type === "function_call" ? [{ name: item.name, arguments: item.arguments }] : item.type === "custom_tool_call" ? [{ name: item.name, arguments: item.input }] : [],
    );
  } catch (error) {
    return threw(error);
  }
}

function parsed(value: unknown): unknown {
  if (typeof value !== "string") return value;
  try {
    return JSON.parse(value);
  } catch {
    return Symbol("unparseable");
  }
}

/**
 * Whether an agent gets the same calls from the SDK as from toolwire: same names, and the SDK's
 * arguments (parsed, for OpenAI's strings) equal toolwire's. A call toolwire refuses (truncated,
 * invalid: `arguments: null`) agrees only with an SDK that also offers nothing. A custom tool's
 * free text is toolwire's `{input}`.
 */
export function agrees(sdk: SdkCalls, turn: DecodedTurn): boolean {
  if (!Array.isArray(sdk)) return false;
  if (sdk.length !== turn.toolCalls.length) return false;
  return sdk.every((call, i) => {
    const ours = turn.toolCalls[i];
    if (!ours || ours.name !== call.name || ours.arguments === null) return false;
    const theirs = parsed(call.arguments);
    const asInput = typeof call.arguments === "string" && JSON.stringify(ours.arguments) === JSON.stringify({ input: call.arguments });
    return asInput || JSON.stringify(sortKeys(theirs)) === JSON.stringify(sortKeys(ours.arguments));
  });
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (typeof value !== "object" || value === null) return value;
  return Object.fromEntries(Object.keys(value).sort().map((key) => [key, sortKeys((value as Record<string, unknown>)[key])]));
}

import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parseYaml } from "../../src/import/cassette.js";
import { isPlainObject } from "../../src/json/shape.js";

/**
 * An oracle independent of toolwire: in a recorded conversation, the request that follows a
 * tool-calling response sends the assistant's calls back (`messages[].tool_calls` for Chat
 * Completions, `input[]` function_call items for Responses), as the recording client decoded them.
 */

export interface SentBackCall {
  id: string;
  name: string;
  /** Parsed arguments; custom tool input is given as `{input: text}`, as toolwire presents it. */
  arguments: unknown;
  /** The text the client sent, verbatim. */
  rawArguments: string | null;
}

function requestBody(interaction: unknown): unknown {
  if (!isPlainObject(interaction) || !isPlainObject(interaction.request)) return null;
  const request = interaction.request;
  if (isPlainObject(request.parsed_body)) return request.parsed_body;
  const body = isPlainObject(request.body) ? request.body.string : request.body;
  if (typeof body !== "string") return null;
  try {
    return JSON.parse(body);
  } catch {
    return null;
  }
}

function parseArguments(raw: unknown): unknown {
  if (typeof raw !== "string") return raw ?? null;
  try {
    return JSON.parse(raw);
  } catch {
    return raw;
  }
}

/** Every assistant tool call a request sends back, in order. */
export function callsInRequest(body: unknown): SentBackCall[] {
  if (!isPlainObject(body)) return [];
  const calls: SentBackCall[] = [];
  if (Array.isArray(body.messages)) {
    for (const message of body.messages) {
      if (!isPlainObject(message) || message.role !== "assistant" || !Array.isArray(message.tool_calls)) continue;
      for (const call of message.tool_calls) {
        if (!isPlainObject(call) || !isPlainObject(call.function)) continue;
        const raw = call.function.arguments;
        calls.push({ id: String(call.id), name: String(call.function.name), arguments: parseArguments(raw), rawArguments: typeof raw === "string" ? raw : null });
      }
    }
  }
  if (Array.isArray(body.input)) {
    for (const item of body.input) {
      if (!isPlainObject(item)) continue;
      if (item.type === "function_call") {
        calls.push({ id: String(item.call_id), name: String(item.name), arguments: parseArguments(item.arguments), rawArguments: typeof item.arguments === "string" ? item.arguments : null });
      } else if (item.type === "custom_tool_call") {
        calls.push({ id: String(item.call_id), name: String(item.name), arguments: { input: item.input }, rawArguments: typeof item.input === "string" ? item.input : null });
      }
    }
  }
  return calls;
}

/**
 * For each interaction of a cassette, the calls the next request appended to the history: the
 * client's reading of that interaction's response. Absent when there is no next request or it
 * sends nothing new back.
 */
export function followUpCalls(cassettePath: string): Map<string, SentBackCall[]> {
  const doc = parseYaml(readFileSync(cassettePath, "utf8"), cassettePath, []);
  const interactions = isPlainObject(doc) && Array.isArray(doc.interactions) ? doc.interactions : [];
  const result = new Map<string, SentBackCall[]>();
  for (let i = 0; i + 1 < interactions.length; i++) {
    const before = callsInRequest(requestBody(interactions[i]));
    const after = callsInRequest(requestBody(interactions[i + 1]));
    // Histories are append-only: the new calls are the ones past the previous request's.
    const added = after.slice(before.length);
    if (added.length > 0) result.set(`interaction-${i}`, added);
  }
  return result;
}

export function cassettePath(corpusDir: string, local: string): string {
  return join(corpusDir, local);
}

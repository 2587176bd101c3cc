import { createDecoder } from "./providers/registry.js";
import { detectProvider } from "./providers/detect.js";
import type { RecordedStream } from "./framing/records.js";
import type { DecodedTurn, DecoderOptions, ProviderName, ToolCall } from "./types.js";

/** Decodes a recorded stream (one of `parseRecords`' results) through the same push core a live stream uses. */
export function replayEvents(input: RecordedStream, options: DecoderOptions & { provider?: ProviderName } = {}): DecodedTurn {
  const provider = options.provider ?? input.provider ?? detectProvider(input.events);
  const decoder = createDecoder(provider, { ...options, sequence: input.sequence });
  for (const event of input.events) decoder.push(event);
  return decoder.finish();
}

/** The call as the `replay --json` contract of docs/design.md states it. */
export interface ReplayJsonCall {
  index: number;
  id: string;
  name: string;
  arguments: Record<string, unknown> | null;
  rawArguments: string;
  source: ToolCall["source"];
  complete: boolean;
  repairs: string[];
  error: ToolCall["error"];
  /** The id the provider sent, present only when `id` was minted in its place (a duplicate). */
  providerId?: string;
  /** The text-call syntax, present only for calls extracted from text. */
  textSyntax?: string;
}

/** One line of `toolwire replay --json` (the contract in the README's CLI section). */
export interface ReplayJsonLine {
  sequence: string | null;
  provider: ProviderName;
  status: DecodedTurn["status"];
  finishReason: DecodedTurn["finishReason"];
  text: string;
  toolCalls: ReplayJsonCall[];
  usage: DecodedTurn["usage"];
  diagnostics: Array<{ code: string; message: string }>;
}

/** A decoded turn as one `toolwire replay --json` line. */
export function toReplayJson(turn: DecodedTurn): ReplayJsonLine {
  return {
    sequence: turn.sequence,
    provider: turn.provider,
    status: turn.status,
    finishReason: turn.finishReason,
    text: turn.text,
    toolCalls: turn.toolCalls.map((call) => ({
      index: call.index,
      id: call.id,
      name: call.name,
      arguments: call.arguments,
      rawArguments: call.rawArguments,
      source: call.source,
      complete: call.complete,
      repairs: call.repairs,
      error: call.error,
      ...(call.providerId !== undefined ? { providerId: call.providerId } : {}),
      ...(call.textSyntax !== undefined ? { textSyntax: call.textSyntax } : {}),
    })),
    usage: turn.usage,
    diagnostics: turn.diagnostics.map((diagnostic) => ({ code: diagnostic.code, message: diagnostic.message })),
  };
}

import type { DecodedTurn, ProviderName } from "../types.js";

/**
 * What a recorded file is expected to decode to, stored beside it as `<name>.expected.json`.
 * A projection of the DecodedTurn: the facts the recording's provider determined (ids, names,
 * arguments, how the turn ended) plus toolwire's decisions (source, repairs, errors), and none of
 * the incidental detail (text lengths, diagnostics wording) that would make every fixture brittle.
 */
export interface ExpectedCall {
  id: string;
  name: string;
  arguments: Record<string, unknown> | null;
  source: string | null;
  complete: boolean;
  repairs: string[];
  error: { code: string; cause?: string } | null;
}

/**
 * What one decoded stream must give, as a reviewed `.expected.json` stores it: status, finish
 * reason and each call's identity, arguments, source and repairs.
 */
export interface ExpectedStream {
  sequence: string | null;
  status: DecodedTurn["status"];
  finishReason: DecodedTurn["finishReason"];
  toolCalls: ExpectedCall[];
  serverToolCalls: Array<{ id: string; name: string }>;
}

/**
 * The reviewed expectation of a recorded file (`<name>.expected.json`): its provider and one
 * `ExpectedStream` per sequence.
 */
export interface Expectation {
  provider: ProviderName;
  /** Free text: where the expected values were checked (follow-up request, hand reading, …). */
  verifiedBy?: string;
  streams: ExpectedStream[];
}

/**
 * The expectation a decoded turn meets, in the form `toolwire conformance` compares (used to write
 * an expectation file for a new recording).
 */
export function expectedStreamOf(turn: DecodedTurn): ExpectedStream {
  return {
    sequence: turn.sequence,
    status: turn.status,
    finishReason: turn.finishReason,
    toolCalls: turn.toolCalls.map((call) => ({
      id: call.id,
      name: call.name,
      arguments: call.arguments,
      source: call.source,
      complete: call.complete,
      repairs: [...call.repairs],
      error: call.error ? { code: call.error.code, ...(call.error.cause ? { cause: call.error.cause } : {}) } : null,
    })),
    serverToolCalls: turn.serverToolCalls.map((call) => ({ id: call.id, name: call.name })),
  };
}

/**
 * Where a recording's expectation is stored: `<name>.expected.json` beside `<name>.ndjson`, and
 * `<file>.expected.json` beside a recording in any other format (never the recording itself).
 */
export function expectationPath(recordPath: string): string {
  return recordPath.endsWith(".ndjson") ? recordPath.slice(0, -".ndjson".length) + ".expected.json" : `${recordPath}.expected.json`;
}

import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "vitest";
import { repairWholeResponse, type WholeResponseOptions, type WholeResponseRepair } from "../../src/reencode/whole.js";
import type { DecodedTurn, ProviderName, ToolCall } from "../../src/types.js";
import { TESTDATA } from "../helpers/testdata.js";

/**
 * One non-streamed exchange of testdata/whole: the response body as the provider sends it.
 * The files are `.jsonl`, not `.ndjson`: they are exchanges, not recorded streams, so the CLI's
 * commands (which read every `.ndjson` under testdata) leave them alone.
 */
export interface WholeRecord {
  file: string;
  sequence: string;
  provider: ProviderName;
  url: string;
  status: number;
  contentType: string;
  body: string;
}

/** Every record of testdata/whole (hand-written non-streamed responses of each protocol's shape; see each file's header). */
export function wholeRecords(): WholeRecord[] {
  const dir = join(TESTDATA, "whole");
  return readdirSync(dir)
    .filter((name) => name.endsWith(".jsonl"))
    .sort()
    .flatMap((file) =>
      readFileSync(join(dir, file), "utf8")
        .split("\n")
        .filter((line) => line.trim() !== "" && !line.startsWith("#"))
        .map((line) => ({ file, ...(JSON.parse(line) as Omit<WholeRecord, "file">) })),
    );
}

/** The runnable calls of a turn, as a client would run them. */
export function runnable(turn: DecodedTurn | null, withIds = true): Array<{ id?: string; name: string; arguments: Record<string, unknown> }> {
  return (turn?.toolCalls ?? []).filter((call: ToolCall) => call.arguments !== null).map((call) => ({ ...(withIds ? { id: call.id } : {}), name: call.name, arguments: call.arguments as Record<string, unknown> }));
}

/**
 * The repair's contract on one body: the repaired body decodes to exactly the runnable calls the
 * decoder found in the original, every call in it decodes as sent (nothing left to fix, nothing
 * withheld), and repairing it again changes nothing. Returns the first repair.
 *
 * One exception, shared with the streamed Chat re-encoder: under a length stop (`max_tokens`,
 * `length`, `MAX_TOKENS`) a whole body cannot tell a call that closed from one the limit cut, so
 * its last call is always taken as cut. Repairing the repaired body again then withholds the call
 * that has become last: the second repair only ever withholds (a prefix of the calls stays).
 */
export function expectSoundRepair(provider: ProviderName, body: unknown, options: WholeResponseOptions = {}, compare: { ids?: boolean } = {}): WholeResponseRepair {
  const before = JSON.stringify(body);
  const first = repairWholeResponse(provider, body, options);
  // The input is never mutated.
  expect(JSON.stringify(body)).toBe(before);
  if (!first.changed) expect(first.body).toBe(body);
  const second = repairWholeResponse(provider, JSON.parse(JSON.stringify(first.body)), options);
  // Without ids on the wire (Vertex, Chat's legacy function_call), a second decoding mints them again.
  const withIds = compare.ids ?? options.addMissingIds !== false;
  const delivered = sorted(runnable(first.turn, withIds));
  const again = sorted(runnable(second.turn, withIds));
  if (first.turn?.finishReason === "length") {
    expect(second.repairs.every((report) => report.action === "withheld" && report.code === "truncated")).toBe(true);
    for (const call of again) expect(delivered).toContainEqual(call);
    return first;
  }
  expect(second.changed).toBe(false);
  expect(second.repairs.filter((report) => report.action !== "classified")).toEqual([]);
  expect(again).toEqual(delivered);
  for (const call of second.turn?.toolCalls ?? []) {
    expect(call.arguments).not.toBeNull();
    expect(call.error).toBeNull();
  }
  return first;
}

/**
 * Calls in a stable order: the repaired body keeps the wire's order (a call split from glued
 * arguments right after the call it came from), while a Chat turn numbers calls in the order the
 * decoder opened them (a call sent without id or arguments opens last, split calls come when their
 * call ends), so the two lists are compared as sets.
 */
function sorted<T extends { id?: string; name: string; arguments: Record<string, unknown> }>(calls: T[]): T[] {
  const key = (call: T): string => `${call.id ?? ""}\u0000${call.name}\u0000${JSON.stringify(call.arguments)}`;
  return [...calls].sort((x, y) => (key(x) < key(y) ? -1 : key(x) > key(y) ? 1 : 0));
}

/** The codes of a repair's reports, as [action, code] pairs. */
export function codes(repair: WholeResponseRepair): Array<[string, string]> {
  return repair.repairs.map((report) => [report.action, report.code]);
}

/**
 * A non-streamed Chat completion whose calls carry the quirks of servers without a working tool
 * parser: Python-literal arguments, two objects glued in one entry under a reused id, and a last
 * call cut mid-arguments (`[id, name, arguments]` per call, in order).
 */
export function chatCompletion(id: string, calls: ReadonlyArray<readonly [string, string, string]>, model = "Qwen/Qwen3-8B"): Record<string, unknown> {
  return {
    id,
    object: "chat.completion",
    created: 1760000000,
    model,
    choices: [
      {
        index: 0,
        message: { role: "assistant", content: null, tool_calls: calls.map(([callId, name, args]) => ({ id: callId, type: "function", function: { name, arguments: args } })) },
        finish_reason: "tool_calls",
      },
    ],
    usage: { prompt_tokens: 10, completion_tokens: 10, total_tokens: 20 },
  };
}

/** A non-streamed Anthropic message with two tool_use blocks under one id (as Kimi's compatible endpoint sends them). */
export function anthropicDuplicateIds(id: string): Record<string, unknown> {
  return {
    id,
    type: "message",
    role: "assistant",
    model: "kimi-k2",
    content: [
      { type: "tool_use", id: "toolu_1", name: "read", input: { path: "a" } },
      { type: "tool_use", id: "toolu_1", name: "read", input: { path: "b" } },
    ],
    stop_reason: "tool_use",
    stop_sequence: null,
    usage: { input_tokens: 1, output_tokens: 1 },
  };
}

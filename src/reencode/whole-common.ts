import { SHALLOW_DEPTH } from "../framing/framed-event.js";
import { resolveLimits } from "../limits.js";
import { createDecoder } from "../providers/registry.js";
import type { DecodedTurn, DecoderOptions, ProviderEvent, ProviderName, ToolCall } from "../types.js";
import { DecoderTap, isPlainObject } from "./common.js";
import type { ReencoderOptions, RepairReport } from "./types.js";

/** Options of `repairWholeResponse`: those of `createReencoder` but the framing (a whole body has none). */
export type WholeResponseOptions = Omit<ReencoderOptions, "framing">;

/**
 * What `repairWholeResponse` made of a non-streamed response body: the body to deliver (the very
 * object passed in when nothing changed), the turn toolwire decoded from it, and every change.
 */
export interface WholeResponseRepair {
  /** The body to deliver: the same object as the input when `changed` is false. */
  body: unknown;
  changed: boolean;
  /** The turn decoded from the body, or null when the body was not read (not the protocol's shape). */
  turn: DecodedTurn | null;
  /** Every change made (and, for a body that was not read, why), with the codes the stream re-encoders use. */
  repairs: RepairReport[];
}

/** The wire entry a decoded call came from: a position, or a protocol's own key (Chat: choice and position). */
export type EntryKey = string | number;

/** A whole body decoded through the protocol's stream decoder, with its calls grouped by the wire entry they came from. */
export interface WholeDecoding {
  readonly tap: DecoderTap;
  readonly turn: DecodedTurn;
  /** The calls of each wire entry: the entry's own call(s) first, then those the decoder split from them. */
  readonly byEntry: Map<EntryKey, ToolCall[]>;
  /** The turn opened more calls than `limits.maxCallsPerTurn`: an entry without calls was dropped by the decoder, not merged. */
  readonly overLimit: boolean;
  /** Some synthesized event nested too deep for the decoder (`event_too_deep`): an entry without calls was not checked. */
  readonly refused: boolean;
  /** Entries left out of the synthesized events because they nest too deep (withheld as `event_too_deep`). */
  readonly tooDeep: ReadonlySet<EntryKey>;
}

/**
 * The depth past which the decoder refuses a whole event (`wrapCodec`). Bodies decoded as one
 * event (Gemini, Ollama) leave out a call entry that nests near it, so that one hostile call is
 * withheld alone rather than taking the event, and its sibling calls, with it; such an entry is
 * far deeper than `limits.maxDepth`, so the decoder would never have let it run.
 */
export function eventDepthLimit(options: DecoderOptions): number {
  return Math.max(resolveLimits(options.limits).maxDepth + 16, SHALLOW_DEPTH);
}

/**
 * Decodes the events synthesized from a whole body with the provider's own stream decoder, so that
 * every finalize rule is the one streams get. `entryOf` names the wire entry of a call the decoder
 * opened itself (its `position` counts such calls in order); calls split off a glued call join the
 * entry of the call they came from.
 */
export function decodeWhole(
  provider: ProviderName,
  events: readonly ProviderEvent[],
  options: DecoderOptions,
  entryOf: (call: ToolCall, position: number) => EntryKey | undefined,
  tooDeep: ReadonlySet<EntryKey> = new Set(),
): WholeDecoding {
  // Calls the model wrote into its text have no wire entry to rewrite: a whole body keeps its text as sent.
  const { textCalls: _textCalls, ...decoderOptions } = options;
  const tap = new DecoderTap(provider, createDecoder(provider, decoderOptions));
  let refused = false;
  for (const event of events) {
    tap.push(event);
    if (tap.refused) refused = true;
  }
  tap.end();
  const turn = tap.turn as DecodedTurn;
  const splitFrom = new Map<number, number>();
  for (const diagnostic of turn.diagnostics) {
    if (diagnostic.code !== "split_concatenated_calls" || diagnostic.callIndex === undefined) continue;
    const from = isPlainObject(diagnostic.data) ? diagnostic.data.from : undefined;
    if (typeof from === "number") splitFrom.set(diagnostic.callIndex, from);
  }
  const byEntry = new Map<EntryKey, ToolCall[]>();
  const entryOfIndex = new Map<number, EntryKey | undefined>();
  let position = 0;
  for (const call of turn.toolCalls) {
    let key: EntryKey | undefined;
    const from = splitFrom.get(call.index);
    if (from !== undefined) key = entryOfIndex.get(from);
    else key = entryOf(call, position++);
    entryOfIndex.set(call.index, key);
    if (key === undefined) continue;
    const list = byEntry.get(key);
    if (list) list.push(call);
    else byEntry.set(key, [call]);
  }
  const overLimit = turn.diagnostics.some((diagnostic) => diagnostic.code === "too_many_calls");
  return { tap, turn, byEntry, overLimit, refused, tooDeep };
}

/** The calls of one wire entry sorted out: delivered ones (with the entry's place), withheld ones reported. */
export function settleEntry(decoding: WholeDecoding, key: EntryKey, describe: () => { id?: string; name?: string; what: string }): { calls: ToolCall[]; runnable: ToolCall[]; keep: boolean } {
  const calls = decoding.byEntry.get(key) ?? [];
  if (decoding.tooDeep.has(key)) {
    const entry = describe();
    decoding.tap.report({
      action: "withheld",
      code: "event_too_deep",
      message: `${entry.what} nests deeper than any call may, so toolwire could not check it; it was not delivered.`,
      ...(entry.id !== undefined ? { id: entry.id } : {}),
      ...(entry.name !== undefined ? { name: entry.name } : {}),
    });
    return { calls, runnable: [], keep: false };
  }
  if (calls.length === 0) {
    // Not a call of the decoded turn: over the call limit (passed on as sent, as streams do), or
    // an entry the decoder read as part of another call, or one it could not check (removed).
    if (decoding.overLimit && !decoding.refused) return { calls, runnable: [], keep: true };
    const entry = describe();
    decoding.tap.report({
      action: decoding.refused ? "withheld" : "normalized",
      code: decoding.refused ? "event_too_deep" : "call_entry_merged",
      message: decoding.refused
        ? `${entry.what} nests deeper than any call may, so toolwire could not check it; it was not delivered.`
        : `${entry.what} was decoded as part of another call (its id or index continued that call); it is delivered there, once.`,
      ...(entry.id !== undefined ? { id: entry.id } : {}),
      ...(entry.name !== undefined ? { name: entry.name } : {}),
    });
    return { calls, runnable: [], keep: false };
  }
  const runnable: ToolCall[] = [];
  for (const call of calls) {
    if (call.arguments === null) decoding.tap.withheld(call);
    else runnable.push(call);
  }
  return { calls, runnable, keep: true };
}

/**
 * One call entry of a whole body written to `out` as the decoder's verdict has it: as it came when
 * its one call was decoded as sent (`asSent`), else one entry per runnable call (`rewrite`: the
 * entry, and the codes its report adds), or none when no call is runnable. `changed`: what `out`
 * got differs from the entry.
 */
export function settleInto(
  decoding: WholeDecoding,
  key: EntryKey,
  describe: () => { id?: string; name?: string; what: string },
  entry: unknown,
  out: unknown[],
  asSent: (call: ToolCall) => boolean,
  rewrite: (call: ToolCall, n: number) => { entry: unknown; codes?: readonly string[] },
): { calls: ToolCall[]; runnable: ToolCall[]; changed: boolean } {
  const { calls, runnable, keep } = settleEntry(decoding, key, describe);
  if (calls.length === 0 || (calls.length === 1 && runnable.length === 1 && asSent(calls[0] as ToolCall))) {
    if (calls.length > 0 || keep) out.push(entry);
    return { calls, runnable, changed: calls.length === 0 && !keep };
  }
  runnable.forEach((call, n) => {
    const written = rewrite(call, n);
    out.push(written.entry);
    decoding.tap.rewritten(call, written.codes);
  });
  return { calls, runnable, changed: true };
}

/** The body was not read: passed through unchanged, with the reason reported as `classified`. */
export function unreadBody(provider: ProviderName, body: unknown, code: string, message: string): WholeResponseRepair {
  return { body, changed: false, turn: null, repairs: [{ stage: "response", action: "classified", code, provider, message }] };
}

/**
 * The fields of `object` a decoder reads beside the calls: the synthesized events carry only
 * these, so that a field toolwire does not interpret (however deep it nests) never makes the
 * decoder refuse an event, and with it the calls beside it.
 */
export function picked(object: Record<string, unknown>, keys: readonly string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of keys) if (Object.hasOwn(object, key)) out[key] = object[key];
  return out;
}

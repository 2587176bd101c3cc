import { extractTextCalls } from "../text-calls/extractor.js";
import { createByteDecoder, type ByteDecoderOptions } from "../adapters/bytes.js";
import { jsonEqual } from "../json/equal.js";
import { isPlainObject } from "../json/shape.js";
import { nestingDepth } from "../json/finalize.js";
import { holdsNumber } from "../json/number-range.js";
import { resolveLimits, type DecoderLimits } from "../limits.js";
import { createDecoder } from "../providers/registry.js";
import { createBedrockInvokeReencoder, createReencoder } from "../reencode/index.js";
import { EventJsonReader } from "../framing/event-template.js";
import { createParser } from "eventsource-parser";
import { LineEndNormalizer } from "../framing/line-ends.js";
import type { CodecEvent, DecodedTurn, DecoderOptions, ProviderEvent, ProviderName, ToolCall } from "../types.js";
import { expectedCallId, type TurnSpec } from "./spec.js";
import { firstDifference, stringifyJson, walkContainers } from "./values.js";

/**
 * The invariants toolwire promises for any input, as functions that return the violations they
 * find (an empty list when all hold). They serve the fuzzer, the regression tests and users who
 * want the same guarantees checked against their own recorded traffic.
 */

export type PropertyName =
  /** No exception escapes `push`, `end` or `finish`. */
  | "no_throw"
  /** The decoder never had to catch its own bug (an `internal_error` diagnostic). */
  | "no_internal_error"
  /** Every call ends complete with an object, or with an error (truncated calls included): never half. */
  | "calls_settled"
  /** One start and one end per call, deltas in between, `finish` last and once. */
  | "event_order"
  /** The text and reasoning deltas add up to the turn's text and reasoning. */
  | "text_consistent"
  /** Arguments, previews and provider fields are plain data; nothing reaches Object.prototype. */
  | "plain_data"
  /** The turn can be written as JSON (`JSON.stringify` recurses: depth matters), and arguments hold no number JSON cannot (`Infinity`). */
  | "serializable"
  /** Previews do not change the turn, and the last preview equals the final arguments. */
  | "previews_consistent"
  /** The same events give the same turn, minted ids included, and the same event stream. */
  | "deterministic"
  /** Cutting the bytes into different chunks never changes the turn. */
  | "split_invariant"
  /** Line endings, keep-alive comments and field order never change the turn. */
  | "framing_invariant"
  /** Re-cutting argument fragments never changes the calls. */
  | "refragment_invariant"
  /** Interleaving two calls' fragments never changes the calls. */
  | "interleave_invariant"
  /** Protocol keep-alive events never change the turn. */
  | "keepalive_invariant"
  /** A stream cut short never presents a call as complete with arguments the full stream does not have. */
  | "prefix_consistent"
  /** A generated valid stream decodes to exactly what was generated. */
  | "generated_roundtrip"
  /** Decoding within configured limits: calls per turn, argument size and depth, turn size. */
  | "limits_respected"
  /**
   * With `textCalls` on, each text block and the calls read from it are what the extractor reads
   * from that block's whole text decoded without the option (any delta cutting gives the same),
   * and the wire's own calls are unchanged.
   */
  | "text_calls_invariant"
  /**
   * Re-encoding the bytes (what the repairing fetch and `toolwire proxy` send on) and decoding the
   * result gives exactly the runnable calls of the original, each one well-formed.
   */
  | "reencode_roundtrip"
  /**
   * The stream's JSON reader, which learns the envelope its events repeat (framing/event-template),
   * reads every SSE payload exactly as JSON.parse: the same value, key order included, or a throw.
   */
  | "event_json_exact";

/** A violated property, with a signature that groups violations of the same bug. */
export interface Violation {
  property: PropertyName;
  message: string;
  /** Groups violations that are the same bug (the fuzzer reports each signature once). */
  signature: string;
}

function violation(property: PropertyName, message: string, detail = ""): Violation {
  return { property, message, signature: detail ? `${property}:${detail}` : property };
}

// ---------------------------------------------------------------------------------------------
// Decoding without letting anything escape.

/**
 * The outcome of decoding one stream without letting anything escape: the turn, every event, and
 * what was thrown.
 */
export interface DecodeRun {
  turn: DecodedTurn | null;
  /** Every CodecEvent in order, the trailing ones of `end` included. */
  events: CodecEvent[];
  /** What escaped push/end/finish, if anything. */
  thrown: { where: string; message: string } | null;
}

function describeError(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}

/** What both safe runs drive: a push decoder of events or of byte chunks. */
interface PushDecoder<T> {
  push(input: T): CodecEvent[];
  flush(): CodecEvent[];
  finish(): DecodedTurn;
}

/** Runs `inputs` through the decoder `create` makes, catching anything thrown (which is itself a violation). */
function runSafely<T>(create: () => PushDecoder<T>, created: string, inputs: readonly T[], unit: string): DecodeRun {
  const out: CodecEvent[] = [];
  let decoder;
  try {
    decoder = create();
  } catch (error) {
    return { turn: null, events: out, thrown: { where: created, message: describeError(error) } };
  }
  for (let i = 0; i < inputs.length; i++) {
    try {
      for (const event of decoder.push(inputs[i] as T)) out.push(event);
    } catch (error) {
      return { turn: null, events: out, thrown: { where: `push(${unit} ${i})`, message: describeError(error) } };
    }
  }
  try {
    for (const event of decoder.flush()) out.push(event);
    return { turn: decoder.finish(), events: out, thrown: null };
  } catch (error) {
    return { turn: null, events: out, thrown: { where: "finish", message: describeError(error) } };
  }
}

/** Decodes parsed events with `createDecoder`, catching anything thrown (which is itself a violation). */
export function decodeEventsSafely(provider: ProviderName, events: readonly ProviderEvent[], options: DecoderOptions = {}): DecodeRun {
  return runSafely(() => createDecoder(provider, options), "createDecoder", events, "event");
}

/** Decodes byte chunks with `createByteDecoder`, catching anything thrown (which is itself a violation). */
export function decodeBytesSafely(provider: ProviderName, chunks: readonly Uint8Array[], options: ByteDecoderOptions = {}): DecodeRun {
  return runSafely(() => createByteDecoder(provider, options), "createByteDecoder", chunks, "chunk");
}

// ---------------------------------------------------------------------------------------------
// Invariants of one decoded turn.

function allCalls(turn: DecodedTurn): Array<{ call: ToolCall; kind: "client" | "server"; position: number }> {
  return [
    ...turn.toolCalls.map((call, position) => ({ call, kind: "client" as const, position })),
    ...turn.serverToolCalls.map((call, position) => ({ call, kind: "server" as const, position })),
  ];
}

const KNOWN_ERRORS = new Set(["invalid_json", "truncated", "not_object", "too_large", "too_deep", "number_out_of_range"]);

/** Every call is settled: an object with a source, or null arguments with an error; never half of each. */
export function checkCallsSettled(turn: DecodedTurn): Violation[] {
  const found: Violation[] = [];
  const owners = new Map<string, string>();
  for (const { call, kind, position } of allCalls(turn)) {
    const label = `${kind} call ${position} (${call.name})`;
    const bad = (message: string, detail: string): void => void found.push(violation("calls_settled", `${label}: ${message}`, detail));
    if (call.index !== position) bad(`index ${call.index} does not match its position`, "index");
    if (typeof call.id !== "string" || call.id === "") bad("has no id", "id");
    // Ids are unique within a turn (issue 17): a replaced id is kept as providerId, named by minted_id.
    const owner = owners.get(call.id);
    if (owner !== undefined) bad(`shares the id ${call.id} with ${owner}`, "duplicate_id");
    else owners.set(call.id, label);
    if (call.providerId !== undefined && (call.providerId === call.id || !call.repairs.includes("minted_id"))) {
      bad(`carries providerId ${call.providerId} without a minted id of its own`, "provider_id");
    }
    if (call.arguments !== null && !isPlainObject(call.arguments)) bad("arguments are not an object", "not_object");
    if (call.arguments !== null && call.error !== null) bad(`has both arguments and an error (${call.error.code})`, "both");
    if (call.arguments === null && call.error === null) bad("has neither arguments nor an error", "neither");
    if ((call.arguments === null) !== (call.source === null)) bad(`source ${String(call.source)} does not match arguments ${call.arguments === null ? "null" : "present"}`, "source");
    if (!call.complete && call.arguments !== null) bad("is incomplete but carries arguments (it would be executed)", "incomplete_with_arguments");
    if (call.error && !KNOWN_ERRORS.has(call.error.code)) bad(`unknown error code ${call.error.code}`, "error_code");
    if (call.error?.code === "truncated" && call.complete) bad("is complete but its error says truncated", "complete_truncated");
    if (call.error && (typeof call.error.message !== "string" || call.error.message === "")) bad("error without a message", "error_message");
    if (typeof call.rawArguments !== "string") bad("rawArguments is not a string", "raw");
  }
  return found;
}

/** No `internal_error` diagnostic: nothing failed inside a decoder. */
export function checkInternalErrors(turn: DecodedTurn): Violation[] {
  return turn.diagnostics
    .filter((d) => d.code === "internal_error")
    .map((d) => violation("no_internal_error", d.message, normalize(d.message)));
}

/** Stable text for grouping: numbers and quoted values vary between occurrences of one bug. */
function normalize(message: string): string {
  return message
    .replace(/'[^']*'|"[^"]*"/g, "…")
    .replace(/\d+/g, "N")
    .slice(0, 160);
}

/**
 * Events come in a legal order: a call starts before its deltas and ends once, the finish event is
 * last and holds the turn.
 */
export function checkEventOrder(events: readonly CodecEvent[], turn: DecodedTurn): Violation[] {
  const found: Violation[] = [];
  const bad = (message: string, detail: string): void => void found.push(violation("event_order", message, detail));
  const open = new Map<string, boolean>();
  const lastEnd = new Map<string, ToolCall>();
  const started = new Set<string>();
  const diagnostics = new Set(turn.diagnostics);
  let finishes = 0;
  events.forEach((event, i) => {
    if (finishes > 0) bad(`a ${event.type} event follows finish`, "after_finish");
    switch (event.type) {
      case "tool_call_start": {
        const key = `${event.kind}:${event.index}`;
        if (open.get(key)) bad(`call ${key} started twice without ending`, "double_start");
        open.set(key, true);
        started.add(key);
        break;
      }
      case "tool_call_delta": {
        const key = `${event.kind}:${event.index}`;
        if (!open.get(key)) bad(`delta for call ${key} outside its start and end (event ${i})`, "delta_outside");
        break;
      }
      case "tool_call_end": {
        const key = `${event.call.kind ?? "client"}:${event.call.index}`;
        if (!open.get(key)) bad(`end for call ${key} that is not open (event ${i})`, "end_not_open");
        open.set(key, false);
        lastEnd.set(key, event.call);
        break;
      }
      case "diagnostic":
        if (!diagnostics.has(event.diagnostic)) bad(`diagnostic ${event.diagnostic.code} was emitted but is not on the turn`, "diagnostic_missing");
        break;
      case "finish":
        finishes++;
        if (event.turn !== turn) bad("the finish event carries a different turn than finish() returned", "finish_turn");
        break;
      default:
        break;
    }
  });
  if (finishes !== 1) bad(`${finishes} finish events`, "finish_count");
  for (const [key, isOpen] of open) if (isOpen) bad(`call ${key} started but never ended`, "never_ended");
  for (const { call, kind, position } of allCalls(turn)) {
    const key = `${kind}:${position}`;
    if (!started.has(key)) bad(`call ${key} is on the turn without a tool_call_start`, "no_start");
    if (lastEnd.get(key) !== call) bad(`call ${key} on the turn is not the one its tool_call_end carried`, "end_mismatch");
  }
  return found;
}

/** The text and reasoning deltas add up to the turn's text and reasoning. */
export function checkTextConsistent(events: readonly CodecEvent[], turn: DecodedTurn): Violation[] {
  // A restarted message drops what came before; the deltas cannot be matched then.
  if (turn.diagnostics.some((d) => d.code === "message_restarted")) return [];
  // Blocks may fill in any order (several choices, interleaved blocks): compare block by block,
  // a delta's index naming its block by its position in turn.blocks.
  const fromDeltas = { text: new Map<number, string>(), reasoning: new Map<number, string>() };
  for (const event of events) {
    const map = event.type === "text_delta" ? fromDeltas.text : event.type === "reasoning_delta" ? fromDeltas.reasoning : null;
    if (map && (event.type === "text_delta" || event.type === "reasoning_delta")) map.set(event.index, (map.get(event.index) ?? "") + event.text);
  }
  const fromBlocks = { text: new Map<number, string>(), reasoning: new Map<number, string>() };
  turn.blocks.forEach((block, position) => {
    const index = position;
    if (block.type === "text") fromBlocks.text.set(index, (fromBlocks.text.get(index) ?? "") + block.text);
    else if (block.type === "thinking") fromBlocks.reasoning.set(index, (fromBlocks.reasoning.get(index) ?? "") + block.thinking);
    else if (block.type === "reasoning") fromBlocks.reasoning.set(index, (fromBlocks.reasoning.get(index) ?? "") + block.text);
  });
  const found: Violation[] = [];
  for (const kind of ["text", "reasoning"] as const) {
    const indices = new Set([...fromDeltas[kind].keys(), ...fromBlocks[kind].keys()]);
    for (const index of [...indices].sort((x, y) => x - y)) {
      const streamed = fromDeltas[kind].get(index) ?? "";
      const kept = fromBlocks[kind].get(index) ?? "";
      if (streamed === kept) continue;
      let at = 0;
      while (at < streamed.length && streamed[at] === kept[at]) at++;
      found.push(
        violation(
          "text_consistent",
          `${kind} block ${index}: the deltas add up to ${streamed.length} characters, the turn keeps ${kept.length}; they differ from character ${at} (${JSON.stringify(streamed.slice(at, at + 30))} vs ${JSON.stringify(kept.slice(at, at + 30))})`,
          kind,
        ),
      );
    }
  }
  return found;
}

const PLAIN_PROTOTYPES = new Set<unknown>([Object.prototype, Array.prototype, null]);
const OBJECT_PROTOTYPE_KEYS = Object.getOwnPropertyNames(Object.prototype).sort().join(",");

function checkPlainValue(value: unknown, what: string, found: Violation[]): void {
  walkContainers(value, (container, path) => {
    if (!PLAIN_PROTOTYPES.has(Object.getPrototypeOf(container))) {
      found.push(violation("plain_data", `${what} ${path} is not a plain object or array (its prototype was replaced)`, "prototype"));
      return false;
    }
    return true;
  });
}

/** Arguments, provider fields and previews are plain data, and no prototype was polluted. */
export function checkPlainData(turn: DecodedTurn, events: readonly CodecEvent[] = []): Violation[] {
  const found: Violation[] = [];
  for (const { call, kind, position } of allCalls(turn)) {
    checkPlainValue(call.arguments, `${kind} call ${position} arguments`, found);
    checkPlainValue(call.providerFields, `${kind} call ${position} providerFields`, found);
  }
  for (const event of events) if (event.type === "tool_call_delta" && event.preview !== undefined) checkPlainValue(event.preview, `preview of call ${event.index}`, found);
  if (Object.getOwnPropertyNames(Object.prototype).sort().join(",") !== OBJECT_PROTOTYPE_KEYS || (({}) as Record<string, unknown>).polluted !== undefined) {
    found.push(violation("plain_data", "Object.prototype was modified while decoding", "polluted"));
  }
  return found;
}

/** The turn serializes with `JSON.stringify`, and no call's arguments hold a number it would write as `null`. */
export function checkSerializable(turn: DecodedTurn): Violation[] {
  try {
    JSON.stringify(turn);
  } catch (error) {
    return [violation("serializable", `JSON.stringify(turn) throws: ${describeError(error)}`, describeError(error).slice(0, 40))];
  }
  const found: Violation[] = [];
  for (const { call, kind, position } of allCalls(turn)) {
    if (call.arguments !== null && holdsNumber(call.arguments, (n) => !Number.isFinite(n))) {
      found.push(violation("serializable", `${kind} call ${position} arguments hold a number JSON cannot (Infinity or NaN, written as null)`, "non_finite"));
    }
  }
  return found;
}


/** The turn respects the decoder limits it was decoded with. */
export function checkLimits(turn: DecodedTurn, limits: DecoderLimits | undefined): Violation[] {
  const resolved = resolveLimits(limits);
  const found: Violation[] = [];
  const calls = allCalls(turn);
  if (calls.length > resolved.maxCallsPerTurn) found.push(violation("limits_respected", `${calls.length} calls kept, the limit is ${resolved.maxCallsPerTurn}`, "calls"));
  for (const { call, kind, position } of calls) {
    if (call.rawArguments.length > resolved.maxArgumentChars) {
      found.push(violation("limits_respected", `${kind} call ${position} keeps ${call.rawArguments.length} characters of arguments, the limit is ${resolved.maxArgumentChars}`, "argument_chars"));
    }
    if (call.arguments !== null) {
      const depth = nestingDepth(call.arguments);
      if (depth > resolved.maxDepth) found.push(violation("limits_respected", `${kind} call ${position} arguments nest ${depth} deep, the limit is ${resolved.maxDepth}`, "depth"));
    }
  }
  if (turn.text.length + turn.reasoning.length > resolved.maxTurnChars) {
    found.push(violation("limits_respected", `the turn keeps ${turn.text.length + turn.reasoning.length} characters of text, the limit is ${resolved.maxTurnChars}`, "turn_chars"));
  }
  return found;
}

/** Options of `checkRun`. */
export interface RunCheckOptions {
  limits?: DecoderLimits;
}

/** Every invariant that one decode run must satisfy on its own. */
export function checkRun(run: DecodeRun, options: RunCheckOptions = {}): Violation[] {
  if (run.thrown || !run.turn) {
    const message = run.thrown ? `${run.thrown.where} threw ${run.thrown.message}` : "no turn";
    return [violation("no_throw", message, normalize(run.thrown?.message ?? "no turn"))];
  }
  const turn = run.turn;
  return [
    ...checkInternalErrors(turn),
    ...checkCallsSettled(turn),
    ...checkEventOrder(run.events, turn),
    ...checkTextConsistent(run.events, turn),
    ...checkPlainData(turn, run.events),
    ...checkSerializable(turn),
    ...checkLimits(turn, options.limits),
  ];
}

// ---------------------------------------------------------------------------------------------
// Relations between runs.

/** `property` is violated when the two turns differ (the first difference is named). */
export function compareTurns(property: PropertyName, expected: DecodeRun, actual: DecodeRun, what: string): Violation[] {
  if (!expected.turn || !actual.turn) return [];
  const difference = firstDifference(expected.turn, actual.turn);
  return difference ? [violation(property, `${what}: the turn differs at ${difference}`, difference.replace(/\[\d+\]/g, "[]").replace(/:.*/, ""))] : [];
}

function eventsWithoutPreviews(events: readonly CodecEvent[]): unknown[] {
  return events.map((event) => (event.type === "tool_call_delta" ? { ...event, preview: undefined } : event));
}

/** Decoding the same events twice gives the same turn and the same events. */
export function checkDeterministic(first: DecodeRun, second: DecodeRun): Violation[] {
  const found = compareTurns("deterministic", first, second, "decoding the same events twice");
  if (found.length === 0 && first.turn && second.turn) {
    const difference = firstDifference(eventsWithoutPreviews(first.events), eventsWithoutPreviews(second.events));
    if (difference) found.push(violation("deterministic", `decoding the same events twice emits different events at ${difference}`, "events"));
  }
  return found;
}

/** With previews on, the turn is unchanged and each clean call's last preview is its arguments. */
export function checkPreviews(withPreviews: DecodeRun, without: DecodeRun): Violation[] {
  if (!withPreviews.turn || !without.turn) return [];
  const found = compareTurns("previews_consistent", without, withPreviews, "turning previews on");
  const last = new Map<string, unknown>();
  for (const event of withPreviews.events) {
    if (event.type === "tool_call_start") last.delete(`${event.kind}:${event.index}`);
    if (event.type === "tool_call_delta" && event.preview !== undefined) last.set(`${event.kind}:${event.index}`, event.preview);
  }
  for (const { call, kind, position } of allCalls(withPreviews.turn)) {
    if (!call.complete || call.arguments === null || (call.source !== "delta" && call.source !== "merged")) continue;
    if (call.repairs.some((repair) => repair !== "start_continuation")) continue;
    // A resend reading reverted at the end: the live previews showed the reading the fragments
    // supported while they arrived, and the turn says so.
    if (withPreviews.turn.diagnostics.some((d) => d.code === "arguments_resend_reverted" && d.callIndex === position && kind === "client")) continue;
    const key = `${kind}:${position}`;
    if (!last.has(key)) continue;
    const difference = firstDifference(call.arguments, last.get(key));
    if (difference) found.push(violation("previews_consistent", `${kind} call ${position}: the last preview differs from the final arguments at ${difference}`, "last_preview"));
  }
  return found;
}

/** A call is "clean" when it came whole from its sources with nothing repaired. */
export function isCleanTurn(turn: DecodedTurn | null): boolean {
  // A final snapshot that disagrees with the deltas is a server contradicting itself: a prefix cut
  // before the snapshot holds the deltas' object, which nothing in the prefix can tell is stale.
  if (!turn || turn.diagnostics.some((d) => d.code === "message_restarted" || d.code === "internal_error" || d.code === "final_differs_from_delta")) return false;
  return allCalls(turn).every(({ call }) => call.complete && call.arguments !== null && call.repairs.length === 0);
}

/**
 * The calls of two decodes of the same logical stream must agree. Ids are compared only when the
 * wire carried them (`wireIds`): a minted id hashes what arrived when the call opened, so
 * re-cutting the fragments may legitimately change it.
 */
export function compareCalls(property: PropertyName, expected: DecodeRun, actual: DecodeRun, what: string, wireIds: (id: string) => boolean): Violation[] {
  if (!expected.turn || !actual.turn) return [];
  const found: Violation[] = [];
  const a = allCalls(expected.turn);
  const b = allCalls(actual.turn);
  if (a.length !== b.length) return [violation(property, `${what}: ${a.length} calls became ${b.length}`, "count")];
  a.forEach(({ call, kind, position }, i) => {
    const other = (b[i] as { call: ToolCall }).call;
    const label = `${what}: ${kind} call ${position}`;
    if (call.name !== other.name) found.push(violation(property, `${label} name ${JSON.stringify(call.name)} became ${JSON.stringify(other.name)}`, "name"));
    if (wireIds(call.id) && call.id !== other.id) found.push(violation(property, `${label} id ${call.id} became ${other.id}`, "id"));
    if (call.complete !== other.complete) found.push(violation(property, `${label} complete ${call.complete} became ${other.complete}`, "complete"));
    if ((call.error?.code ?? null) !== (other.error?.code ?? null)) found.push(violation(property, `${label} error ${call.error?.code ?? "none"} became ${other.error?.code ?? "none"}`, "error"));
    const difference = firstDifference(call.arguments, other.arguments);
    if (difference) found.push(violation(property, `${label} arguments differ at ${difference}`, "arguments"));
  });
  if (expected.turn.text !== actual.turn.text) found.push(violation(property, `${what}: the text changed`, "text"));
  if (expected.turn.status !== actual.turn.status) found.push(violation(property, `${what}: status ${expected.turn.status} became ${actual.turn.status}`, "status"));
  return found;
}

/**
 * A prefix of a clean stream: every call it presents as complete with arguments must be the same
 * call with the same arguments in the full stream.
 */
export function checkPrefix(prefix: DecodeRun, full: DecodeRun): Violation[] {
  if (!prefix.turn || !full.turn || !isCleanTurn(full.turn)) return [];
  const found: Violation[] = [];
  const reference = allCalls(full.turn);
  for (const { call, kind, position } of allCalls(prefix.turn)) {
    if (!call.complete || call.arguments === null) continue;
    const match = reference.find((entry) => entry.kind === kind && entry.position === position);
    if (!match) {
      found.push(violation("prefix_consistent", `${kind} call ${position} (${call.name}) is complete in a prefix but absent from the full stream`, "absent"));
      continue;
    }
    if (match.call.name !== call.name) continue;
    const difference = firstDifference(match.call.arguments, call.arguments);
    if (difference) {
      found.push(violation("prefix_consistent", `${kind} call ${position} (${call.name}) is complete in a prefix with arguments the full stream does not have (${difference})`, "arguments"));
    }
  }
  return found;
}

/** A generated stream must decode to exactly its spec. */
export function checkGenerated(provider: ProviderName, run: DecodeRun, spec: TurnSpec, what = "generated stream"): Violation[] {
  if (!run.turn) return [];
  const turn = run.turn;
  const found: Violation[] = [];
  const bad = (message: string, detail: string): void => void found.push(violation("generated_roundtrip", `${what}: ${message}`, detail));
  if (turn.status !== "complete") bad(`status is ${turn.status}`, "status");
  if (turn.text !== spec.text.join("")) bad(`text ${JSON.stringify(turn.text.slice(0, 80))} instead of ${JSON.stringify(spec.text.join("").slice(0, 80))}`, "text");
  if (turn.toolCalls.length !== spec.calls.length) bad(`${turn.toolCalls.length} calls instead of ${spec.calls.length}`, "count");
  spec.calls.forEach((expected, i) => {
    const call = turn.toolCalls[i];
    if (!call) return;
    // A spec whose ids collide (kept regression files predate unique generated ids): a later call
    // with a taken id must be kept under an id of its own.
    const collides = expected.id !== undefined && spec.calls.slice(0, i).some((earlier) => earlier.id === expected.id);
    const id = collides ? undefined : expectedCallId(provider, expected, i);
    if (collides && turn.toolCalls.slice(0, i).some((earlier) => earlier.id === call.id)) bad(`call ${i} shares the id ${call.id} with an earlier call`, "id");
    if (call.name !== expected.name) bad(`call ${i} is named ${JSON.stringify(call.name)} instead of ${JSON.stringify(expected.name)}`, "name");
    if (id !== undefined && call.id !== id) bad(`call ${i} has id ${call.id} instead of ${id}`, "id");
    if (!call.complete || call.error) bad(`call ${i} is ${call.complete ? "complete" : "incomplete"} with error ${call.error?.code ?? "none"}: ${call.error?.message ?? ""}`, "error");
    if (call.arguments !== null && !jsonEqual(call.arguments, expected.arguments)) {
      bad(`call ${i} arguments differ at ${firstDifference(expected.arguments, call.arguments) ?? "?"}`, "arguments");
    }
    const repairs = collides ? call.repairs.filter((repair) => repair !== "minted_id") : call.repairs;
    if (repairs.length > 0) bad(`call ${i} was repaired (${repairs.join(", ")}) although it was valid`, "repairs");
    if (collides && call.providerId !== expectedCallId(provider, expected, i)) bad(`call ${i} lost its sent id (providerId ${String(call.providerId)})`, "id");
  });
  if (turn.finishReason !== "stop" && turn.finishReason !== "tool_calls") bad(`finish reason ${String(turn.finishReason)}`, "finish");
  return found;
}

/**
 * `text_calls_invariant`: `withCalls` decoded the events with `textCalls: "auto"`, `plain` without.
 * Per text block, the text and the calls read from the text equal what the extractor reads from
 * the block's whole text at once; the wire's calls are the same in both.
 */
export function checkTextCalls(plain: DecodeRun, withCalls: DecodeRun): Violation[] {
  const a = plain.turn;
  const b = withCalls.turn;
  if (!a || !b || a.status !== b.status || a.diagnostics.some((d) => d.code === "turn_too_large" || d.code === "too_many_calls")) return [];
  const found: Violation[] = [];
  const bad = (message: string, detail: string): void => void found.push(violation("text_calls_invariant", message, detail));
  // Ids are left out: a minted wire id may follow the call's index, which text calls shift.
  // A call read from markup is known by its syntax: a truncated one has `source: null` (no arguments).
  const readFromMarkup = (call: DecodedTurn["toolCalls"][number]): boolean => call.textSyntax !== undefined;
  const wire = (turn: DecodedTurn) => turn.toolCalls.filter((call) => !readFromMarkup(call)).map((call) => ({ name: call.name, arguments: call.arguments, complete: call.complete }));
  const wireA = wire(a);
  const wireB = wire(b);
  if (stringifyJson(wireA) !== stringifyJson(wireB)) bad(`the wire's calls changed with textCalls on (${wireA.length} → ${wireB.length})`, "wire_calls");
  const textBlocksA = a.blocks.filter((block) => block.type === "text");
  const textBlocksB = b.blocks.filter((block) => block.type === "text");
  if (textBlocksA.length !== textBlocksB.length) {
    bad(`${textBlocksB.length} text blocks with textCalls on, ${textBlocksA.length} without`, "blocks");
    return found;
  }
  // Calls recovered from a provider's failed_generation are not in the text blocks.
  if (b.diagnostics.some((d) => d.code === "failed_generation_calls")) return found;
  const fromText = b.toolCalls.filter(readFromMarkup);
  const expected: Array<{ name: string; rawArguments: string; complete: boolean }> = [];
  // Markup still open at a normal stop is text; where the stream was cut it is a call not complete.
  const cut = b.status !== "complete" || b.finishReason === "length";
  textBlocksA.forEach((block, i) => {
    const whole = extractTextCalls(block.text, "auto", "stream_ended", cut);
    const got = (textBlocksB[i] as { text: string }).text;
    if (whole.text !== got) bad(`text block ${i}: ${JSON.stringify(got.slice(0, 60))} read incrementally, ${JSON.stringify(whole.text.slice(0, 60))} read whole`, "text");
    for (const call of whole.calls) expected.push({ name: call.name, rawArguments: call.argumentText, complete: call.complete });
  });
  const actual = fromText.map((call) => ({ name: call.name, rawArguments: call.rawArguments, complete: call.complete }));
  // Order across blocks follows the stream; compare as sorted lists of what was read.
  const key = (list: typeof expected) => list.map((c) => stringifyJson(c)).sort();
  if (stringifyJson(key(expected)) !== stringifyJson(key(actual))) bad(`calls read from text differ: ${actual.length} incrementally, ${expected.length} from the whole text`, "calls");
  return found;
}

/**
 * `reencode_roundtrip`: `original` decoded the bytes, `reencoded` decoded what the re-encoder made
 * of them. The runnable calls are the same (id, name, arguments), and each comes out well-formed:
 * complete, no repair; the text is the same (each choice's, when a Chat turn has several). An
 * errored Chat turn may deliver fewer of its calls. A Chat turn stopped for `length` keeps its finish_reason, so decoding the
 * re-encoded stream alone takes its last delivered call for the cut one: that call is compared by
 * its raw arguments.
 */
export function checkReencoded(original: DecodeRun, reencoded: DecodeRun): Violation[] {
  const a = original.turn;
  const b = reencoded.turn;
  if (!a) return [];
  if (!b) return [violation("reencode_roundtrip", `the re-encoded stream did not decode: ${reencoded.thrown?.message ?? "no turn"}`, "no_turn")];
  const found: Violation[] = [];
  // Under a length stop the decoder reads the last call as cut even when the re-encoder re-sent it
  // whole (it was complete in the original because a later call, now withheld, followed it): a
  // client reads it as sent. The stop is told by the call's cause, since an error after [DONE]
  // makes the turn's own finish reason "error".
  const cutBehind = (call: ToolCall): boolean => call.error?.cause === "max_tokens";
  const delivered = b.toolCalls.map((call) => {
    let args: unknown = call.arguments;
    if (cutBehind(call)) {
      try {
        args = JSON.parse(call.rawArguments) as unknown;
      } catch {
        args = null;
      }
    }
    return { id: call.id, name: call.name, arguments: args };
  });
  // Chat marks calls complete only with the turn's end (finish_reason, [DONE]): an error before it
  // makes the re-encoder withhold every call held then, even one the decoder saw end. So an errored
  // Chat turn may deliver fewer calls, never others.
  const mayWithhold = a.provider === "openai-chat" && a.status === "error";
  const runnable = a.toolCalls.filter((call) => call.arguments !== null).map((call) => ({ id: call.id, name: call.name, arguments: call.arguments }));
  // Compared by id, not position: a call split from glued objects is numbered by the decoder when
  // it is split, the re-encoder sends it right after the block it came from.
  const byId = (calls: ReadonlyArray<{ id: string; name: string; arguments: unknown }>): string => stringifyJson([...calls].sort((x, y) => (x.id < y.id ? -1 : x.id > y.id ? 1 : 0)));
  const expected = mayWithhold ? runnable.filter((call) => delivered.some((d) => d.id === call.id)) : runnable;
  if (byId(delivered) !== byId(expected)) {
    found.push(violation("reencode_roundtrip", `re-encoded, the stream delivers ${delivered.length} call(s) (${delivered.map((c) => c.name).join(", ")}) where the original has ${runnable.length} runnable (${runnable.map((c) => c.name).join(", ")})`, "calls"));
  }
  for (const call of b.toolCalls) {
    if (cutBehind(call)) continue;
    if (!call.complete || call.repairs.length > 0 || call.error !== null) {
      found.push(violation("reencode_roundtrip", `re-encoded call ${call.index} (${call.name}) is not well-formed: complete ${call.complete}, repairs [${call.repairs.join(", ")}], error ${call.error?.code ?? "none"}`, "not_well_formed"));
      break;
    }
  }
  if (a.text !== b.text && textByChoice(a) !== textByChoice(b)) found.push(violation("reencode_roundtrip", "re-encoding changed the turn's text", "text"));
  return found;
}

/**
 * A Chat turn with several choices (n > 1) merges them into one text in the order their blocks
 * opened, which depends on how the choices' chunks interleave with held call chunks; what a client
 * reads is each choice's own text, so that is compared. Null for single-choice turns.
 */
function textByChoice(turn: DecodedTurn): string | null {
  if (!turn.diagnostics.some((d) => d.code === "multiple_choices")) return null;
  const byChoice = new Map<number, string>();
  for (const block of turn.blocks) {
    if (block.type === "text") byChoice.set(block.providerIndex ?? -1, (byChoice.get(block.providerIndex ?? -1) ?? "") + block.text);
  }
  return stringifyJson([...byChoice].sort((x, y) => x[0] - y[0]));
}

/**
 * `reencode_roundtrip` on bytes: re-encodes `chunks` with the provider's re-encoder (nothing may
 * escape it), decodes the output, and compares with `original` (the same bytes decoded).
 */
export function checkReencodeRoundtrip(provider: ProviderName, chunks: readonly Uint8Array[], original: DecodeRun, options: ByteDecoderOptions = {}): Violation[] {
  const output: Uint8Array[] = [];
  try {
    // Anthropic in eventstream frames is Claude on Bedrock, which has a re-encoder of its own.
    const reencoder = provider === "anthropic" && options.framing === "aws-eventstream" ? createBedrockInvokeReencoder() : createReencoder(provider);
    for (const chunk of chunks) output.push(...reencoder.push(chunk));
    output.push(...reencoder.flush());
  } catch (error) {
    return [violation("reencode_roundtrip", `the re-encoder threw: ${describeError(error)}`, "threw")];
  }
  return checkReencoded(original, decodeBytesSafely(provider, output, options));
}

/**
 * `event_json_exact`: each SSE payload of `text`, read in order by one stream's reader (as the
 * framer reads them), is what JSON.parse makes of it.
 */
export function checkEventJson(text: string): Violation[] {
  const reader = new EventJsonReader();
  const found: Violation[] = [];
  const parser = createParser({
    onEvent(message) {
      if (found.length > 0) return;
      const mine = parseOutcome((data) => reader.parse(data), message.data);
      const reference = parseOutcome(JSON.parse, message.data);
      if (mine !== reference) found.push(violation("event_json_exact", `the stream's JSON reader read ${JSON.stringify(message.data.slice(0, 200))} as ${mine.slice(0, 200)}, JSON.parse as ${reference.slice(0, 200)}`));
    },
  });
  // LF line ends: eventsource-parser's CR path is quadratic in the length of what it is fed.
  parser.feed(new LineEndNormalizer().normalize(text));
  parser.feed("\n\n");
  return found;
}

/** A parse's outcome as comparable text: the value with its key order (and -0), or the throw. */
function parseOutcome(parse: (text: string) => unknown, text: string): string {
  try {
    return `value ${JSON.stringify(parse(text), (_key, value: unknown) => (Object.is(value, -0) ? "\u0000-0" : value))}`;
  } catch {
    return "throws";
  }
}

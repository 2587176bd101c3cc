import type { FramingName } from "../framing/framer.js";
import type { ProviderEvent, ProviderName } from "../types.js";
import { argumentDelta, keepAliveEvents, rewriteArguments, strangeEvents, withArgumentDelta, type ArgumentSiteKind } from "./shapes.js";
import { setOwn } from "./values.js";
import { encodeWire, framingsFor, multibyteCutPoints, splitBytes, type LineEnding } from "./wire.js";

/**
 * Mutations as plain data: a plan is JSON, so that a counterexample can be written down, read
 * back and applied again with the same result. Positions are natural numbers taken modulo the
 * length of what they index, so one plan applies to any stream and shrinks toward 0.
 */

export type HostileKind = "deep" | "proto" | "wide" | "long_string" | "bad_escape" | "not_object" | "huge_number";

/** Every kind of hostile argument value a plan can inject. */
export const HOSTILE_KINDS: readonly HostileKind[] = ["deep", "proto", "wide", "long_string", "bad_escape", "not_object", "huge_number"];

/** One change to a stream's events, as JSON data; positions are taken modulo the stream's length. */
export type EventMutation =
  /** Re-cut every run of one call's argument fragments at the given sizes (cycled). */
  | { op: "refragment"; sizes: number[] }
  /** Swap two adjacent argument fragments of different calls (a legal interleaving). */
  | { op: "interleave"; at: number }
  | { op: "duplicate"; at: number; to: number }
  | { op: "drop"; at: number }
  /** Swap an event with the next one. */
  | { op: "swap"; at: number }
  /** Insert a protocol keep-alive (`keepalive`) or an event the decoder cannot know (`strange`). */
  | { op: "inject"; at: number; kind: "keepalive" | "strange"; pick: number }
  /** Replace the arguments at one argument site with a hostile value. */
  | { op: "hostile"; at: number; kind: HostileKind }
  /** Keep only the first `at` events (modulo length + 1). */
  | { op: "truncate"; at: number };

/**
 * How the events become bytes: framing freedoms (line endings, keep-alives, field order, cuts) and
 * damage (invalid UTF-8, flipped bits, truncation).
 */
export interface ByteMutation {
  /** Index into `framingsFor(provider)`. */
  framing: number;
  lineEnding: LineEnding;
  dataFirst: boolean;
  keepAlives: number[];
  invalidUtf8: Array<{ at: number; bytes: number[] }>;
  corrupt: Array<{ at: number; xor: number }>;
  truncate: number | null;
  cuts: number[];
  /** Also cut inside every multi-byte UTF-8 sequence (up to 64 of them). */
  multibyteCuts: boolean;
  /** SSE: each JSON payload spread over several `data:` lines (absent in plans written before it existed). */
  multilineData?: boolean;
}

/** A whole mutation plan: event mutations, byte plan, previews on or off, and the limits to decode with. */
export interface MutationPlan {
  events: EventMutation[];
  bytes: ByteMutation;
  previews: boolean;
  /** `small` decodes with tight limits, so that every limit is reached by ordinary streams. */
  limits: "default" | "small";
  /** Decode with `textCalls: "auto"` (tool calls written in text are read). Absent: off. */
  textCalls?: boolean;
}

/** Limits used by `limits: "small"` plans: ordinary streams reach every one of them. */
export const SMALL_LIMITS = { maxArgumentChars: 2000, maxDepth: 16, maxCallsPerTurn: 2, maxTurnChars: 20_000, maxLineChars: 6000 } as const;

/** The limits a plan decodes with (`SMALL_LIMITS` for `limits: "small"`). */
export function limitsFor(plan: Pick<MutationPlan, "limits">): typeof SMALL_LIMITS | undefined {
  return plan.limits === "small" ? SMALL_LIMITS : undefined;
}

// ---------------------------------------------------------------------------------------------
// Applying event mutations.

/** Maximal runs of consecutive argument fragments of one call. */
function deltaRuns(provider: ProviderName, events: readonly ProviderEvent[]): Array<{ start: number; end: number }> {
  const runs: Array<{ start: number; end: number }> = [];
  let current: { start: number; end: number; key: string } | null = null;
  events.forEach((event, i) => {
    const delta = argumentDelta(provider, event);
    if (delta && current && current.key === baseKey(delta.key) && !opensCall(delta.key)) {
      current.end = i + 1;
      return;
    }
    if (current) runs.push(current);
    current = delta ? { start: i, end: i + 1, key: baseKey(delta.key) } : null;
  });
  if (current) runs.push(current);
  return runs;
}

/** Chat fragments that carry an id open a call; the key without the id names the slot. */
function baseKey(key: string): string {
  const at = key.indexOf(":id:");
  return at < 0 ? key : key.slice(0, at);
}

function opensCall(key: string): boolean {
  return key.includes(":id:");
}

function cut(text: string, sizes: readonly number[]): string[] {
  const out: string[] = [];
  for (let at = 0, k = 0; at < text.length; k++) {
    const size = Math.max(1, sizes[k % sizes.length] ?? 1);
    out.push(text.slice(at, at + size));
    at += size;
  }
  return out;
}

/**
 * Re-cuts each run of argument fragments at the given sizes (cycled): the same arguments in
 * different deltas.
 */
export function refragment(provider: ProviderName, events: readonly ProviderEvent[], sizes: readonly number[]): ProviderEvent[] {
  const runs = deltaRuns(provider, events);
  if (runs.length === 0 || sizes.length === 0) return [...events];
  const out: ProviderEvent[] = [];
  let next = 0;
  for (const run of runs) {
    for (let i = next; i < run.start; i++) out.push(events[i] as ProviderEvent);
    const first = events[run.start] as ProviderEvent;
    const text = events
      .slice(run.start, run.end)
      .map((event) => argumentDelta(provider, event)?.text ?? "")
      .join("");
    const pieces = text === "" ? [""] : cut(text, sizes);
    pieces.forEach((piece, k) => out.push(withArgumentDelta(provider, first, piece, k === 0)));
    next = run.end;
  }
  for (let i = next; i < events.length; i++) out.push(events[i] as ProviderEvent);
  return out;
}

function interleave(provider: ProviderName, events: readonly ProviderEvent[], at: number): ProviderEvent[] {
  const pairs: number[] = [];
  for (let i = 0; i + 1 < events.length; i++) {
    const a = argumentDelta(provider, events[i] as ProviderEvent);
    const b = argumentDelta(provider, events[i + 1] as ProviderEvent);
    // Two fragments that both open a call would swap the calls' order, not interleave them.
    if (a && b && baseKey(a.key) !== baseKey(b.key) && !(opensCall(a.key) && opensCall(b.key))) pairs.push(i);
  }
  if (pairs.length === 0) return [...events];
  return swapAt(events, pairs[at % pairs.length] as number);
}

function swapAt(events: readonly ProviderEvent[], i: number): ProviderEvent[] {
  const out = [...events];
  if (i + 1 >= out.length) return out;
  [out[i], out[i + 1]] = [out[i + 1] as ProviderEvent, out[i] as ProviderEvent];
  return out;
}

// Deep enough for any recursion to overflow the default stack (JSON.stringify gives up near 5,000).
const DEEP = 20_000;

/** A JSON text a model (or an attacker behind a relay) could send as arguments. */
export function hostileText(kind: HostileKind): string {
  switch (kind) {
    case "deep":
      return '{"a":' + "[".repeat(DEEP) + "]".repeat(DEEP) + "}";
    case "proto":
      return '{"__proto__":{"polluted":true},"constructor":{"prototype":{"polluted":true}},"prototype":{"polluted":true}}';
    case "wide": {
      const members: string[] = [];
      for (let i = 0; i < 5000; i++) members.push(`"k${i}":${i}`);
      return `{${members.join(",")}}`;
    }
    case "long_string":
      return `{"s":"${"x".repeat(200_000)}"}`;
    case "bad_escape":
      return '{"s":"\\ud800\\x\\u12"}';
    case "not_object":
      return "[1,2,3]";
    case "huge_number":
      // Beyond a double's range and beyond its exact integers: parsed, they would not be what was sent.
      return '{"big":1e999,"id":12345678901234567890,"ok":[-1E+400]}';
  }
}

/** The same hostile payloads as values, for sites that carry objects. */
export function hostileValue(kind: HostileKind): unknown {
  switch (kind) {
    case "deep": {
      const root: Record<string, unknown> = {};
      let node: unknown[] = [];
      root.a = node;
      for (let i = 1; i < DEEP; i++) {
        const child: unknown[] = [];
        node.push(child);
        node = child;
      }
      return root;
    }
    case "proto":
      return JSON.parse(hostileText("proto"));
    case "wide":
      return JSON.parse(hostileText("wide"));
    case "long_string":
      return { s: "x".repeat(200_000) };
    case "bad_escape": {
      const value: Record<string, unknown> = {};
      setOwn(value, "s", "\ud800");
      return value;
    }
    case "not_object":
      return [1, 2, 3];
    case "huge_number":
      return { big: Number.POSITIVE_INFINITY, ok: [Number.NEGATIVE_INFINITY] };
  }
}

function plantHostile(provider: ProviderName, events: readonly ProviderEvent[], at: number, kind: HostileKind): ProviderEvent[] {
  const sites: Array<{ index: number; rewritten: ProviderEvent }> = [];
  events.forEach((event, index) => {
    const rewritten = rewriteArguments(provider, event, (site: ArgumentSiteKind) => (site === "text" ? hostileText(kind) : hostileValue(kind)));
    if (rewritten) sites.push({ index, rewritten });
  });
  if (sites.length === 0) return [...events];
  const site = sites[at % sites.length] as { index: number; rewritten: ProviderEvent };
  const out = [...events];
  out[site.index] = site.rewritten;
  return out;
}

/** Applies one event mutation; never changes the input array. */
export function applyEventMutation(provider: ProviderName, events: readonly ProviderEvent[], mutation: EventMutation): ProviderEvent[] {
  const n = events.length;
  switch (mutation.op) {
    case "refragment":
      return refragment(provider, events, mutation.sizes);
    case "interleave":
      return interleave(provider, events, mutation.at);
    case "duplicate": {
      if (n === 0) return [];
      const copy = events[mutation.at % n] as ProviderEvent;
      const out = [...events];
      out.splice(mutation.to % (n + 1), 0, copy);
      return out;
    }
    case "drop": {
      if (n === 0) return [];
      const out = [...events];
      out.splice(mutation.at % n, 1);
      return out;
    }
    case "swap":
      return n < 2 ? [...events] : swapAt(events, mutation.at % (n - 1));
    case "inject": {
      const keepAlives = keepAliveEvents(provider);
      const pool = mutation.kind === "keepalive" && keepAlives.length > 0 ? keepAlives : strangeEvents(provider);
      const out = [...events];
      out.splice(mutation.at % (n + 1), 0, pool[mutation.pick % pool.length] as ProviderEvent);
      return out;
    }
    case "hostile":
      return plantHostile(provider, events, mutation.at, mutation.kind);
    case "truncate":
      return events.slice(0, mutation.at % (n + 1));
  }
}

/** Applies event mutations in order. */
export function applyEventMutations(provider: ProviderName, events: readonly ProviderEvent[], mutations: readonly EventMutation[]): ProviderEvent[] {
  let out = [...events];
  for (const mutation of mutations) out = applyEventMutation(provider, out, mutation);
  return out;
}

// ---------------------------------------------------------------------------------------------
// Applying byte mutations.

/** Byte sequences no UTF-8 decoder may accept: stray continuation, overlong, surrogate, cut, out of range. */
export const INVALID_UTF8: readonly (readonly number[])[] = [[0xff], [0x80], [0xc0, 0x80], [0xed, 0xa0, 0x80], [0xe2, 0x82], [0xf0, 0x9f, 0x98], [0xf4, 0x90, 0x80, 0x80], [0xfe, 0xff]];

/** The framing a byte plan uses for `provider`. */
export function framingOf(provider: ProviderName, bytes: Pick<ByteMutation, "framing">): FramingName {
  const options = framingsFor(provider);
  return options[bytes.framing % options.length] as FramingName;
}

/** True when the byte plan only uses freedoms of the framing: the bytes mean the same events. */
export function isBenign(bytes: ByteMutation): boolean {
  return bytes.invalidUtf8.length === 0 && bytes.corrupt.length === 0 && bytes.truncate === null;
}

/** The wire bytes of `events` with the plan's freedoms and damage applied, and where to cut them. */
export function applyByteMutation(provider: ProviderName, events: readonly ProviderEvent[], plan: ByteMutation): { bytes: Uint8Array; chunks: Uint8Array[] } {
  let bytes = encodeWire(provider, events, {
    framing: framingOf(provider, plan),
    lineEnding: plan.lineEnding,
    dataFirst: plan.dataFirst,
    keepAlives: plan.keepAlives,
    multilineData: plan.multilineData === true,
  });
  for (const insert of plan.invalidUtf8) {
    const at = insert.at % (bytes.length + 1);
    const next = new Uint8Array(bytes.length + insert.bytes.length);
    next.set(bytes.subarray(0, at), 0);
    next.set(insert.bytes, at);
    next.set(bytes.subarray(at), at + insert.bytes.length);
    bytes = next;
  }
  if (plan.corrupt.length > 0 && bytes.length > 0) {
    bytes = bytes.slice();
    for (const { at, xor } of plan.corrupt) {
      const i = at % bytes.length;
      bytes[i] = ((bytes[i] as number) ^ (xor & 0xff || 1)) & 0xff;
    }
  }
  if (plan.truncate !== null) bytes = bytes.subarray(0, plan.truncate % (bytes.length + 1));
  const cuts = plan.multibyteCuts ? [...plan.cuts, ...multibyteCutPoints(bytes)] : plan.cuts;
  return { bytes, chunks: splitBytes(bytes, cuts) };
}

/** One line naming what a plan does, for reports and file headers. */
export function describePlan(plan: MutationPlan): string {
  const parts = plan.events.map((m) => {
    switch (m.op) {
      case "refragment":
        return `refragment(${m.sizes.join(",")})`;
      case "inject":
        return `inject ${m.kind}#${m.pick}@${m.at}`;
      case "hostile":
        return `hostile ${m.kind}@${m.at}`;
      case "duplicate":
        return `duplicate ${m.at}->${m.to}`;
      default:
        return `${m.op}@${m.at}`;
    }
  });
  const b = plan.bytes;
  if (b.lineEnding !== "lf") parts.push(`line endings ${b.lineEnding}`);
  if (b.dataFirst) parts.push("data before event");
  if (b.multilineData) parts.push("multi-line data");
  if (b.keepAlives.length > 0) parts.push(`${b.keepAlives.length} keep-alive(s)`);
  if (b.invalidUtf8.length > 0) parts.push(`${b.invalidUtf8.length} invalid UTF-8 insert(s)`);
  if (b.corrupt.length > 0) parts.push(`${b.corrupt.length} corrupted byte(s)`);
  if (b.truncate !== null) parts.push(`bytes truncated at ${b.truncate}`);
  if (b.cuts.length > 0 || b.multibyteCuts) parts.push(`${b.cuts.length} cut(s)${b.multibyteCuts ? " + multi-byte cuts" : ""}`);
  if (b.framing !== 0) parts.push(`framing #${b.framing}`);
  if (plan.previews) parts.push("previews");
  if (plan.textCalls) parts.push("text calls");
  if (plan.limits !== "default") parts.push(`${plan.limits} limits`);
  return parts.length > 0 ? parts.join("; ") : "none";
}

import fc from "fast-check";
import type { ProviderName } from "../types.js";
import { renderSpec, type CallSpec, type GeneratedStream, type TurnSpec } from "./spec.js";
import { HOSTILE_KINDS, INVALID_UTF8, type ByteMutation, type EventMutation, type MutationPlan } from "./mutations.js";
import { setOwn } from "./values.js";
import type { LineEnding } from "./wire.js";
import { cutText, textCallDocument, wholeMessageTextCall } from "./text-calls.js";

/**
 * fast-check arbitraries of provider-neutral turn specs and of the streams rendered from them
 * (`toolwire/testing/fuzz`; fast-check is a peer dependency). The specs and their rendering live in
 * spec.ts, which loads without fast-check.
 */
export { expectedCallId, renderSpec, type CallSpec, type GeneratedStream, type TurnSpec } from "./spec.js";

const PROTO_KEYS = ["__proto__", "constructor", "prototype"];

/** Strings that stress every layer: multi-byte and astral characters, quotes, escapes, controls. */
export function hostileString(maxLength = 12): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 3, arbitrary: fc.string({ maxLength }) },
    { weight: 3, arbitrary: fc.string({ unit: "grapheme", maxLength }) },
    { weight: 2, arbitrary: fc.string({ unit: "binary", maxLength }) },
    { weight: 1, arbitrary: fc.string({ unit: fc.constantFrom('"', "\\", "\n", "\r", "\u2028", "\u0000", "é", "€", "😀", "{", "}", "[", "]", ",", ":"), maxLength }) },
  );
}

/** Object keys for generated arguments, `__proto__`, `constructor` and `prototype` among them. */
export function jsonKey(): fc.Arbitrary<string> {
  return fc.oneof({ weight: 1, arbitrary: fc.constantFrom(...PROTO_KEYS) }, { weight: 4, arbitrary: fc.string({ maxLength: 8 }) }, { weight: 2, arbitrary: hostileString(6) });
}

function objectFrom(entries: Array<[string, unknown]>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of entries) setOwn(out, key, value);
  return out;
}

/** JSON values (objects built so that `__proto__` keys stay own data). */
export function jsonValue(maxDepth = 3): fc.Arbitrary<unknown> {
  const { value } = fc.letrec<{ value: unknown; leaf: unknown; array: unknown[]; object: Record<string, unknown> }>((tie) => ({
    leaf: fc.oneof(
      fc.constant(null),
      fc.boolean(),
      fc.integer({ min: -1_000_000, max: 1_000_000 }),
      fc.double({ noNaN: true, noDefaultInfinity: true }),
      hostileString(),
    ),
    value: fc.oneof({ depthSize: "small", maxDepth, withCrossShrink: true }, tie("leaf"), tie("array"), tie("object")),
    array: fc.array(tie("value"), { maxLength: 4 }),
    object: fc.array(fc.tuple(jsonKey(), tie("value")), { maxLength: 4 }).map(objectFrom),
  }));
  return value;
}

/** Arguments objects with hostile keys and values. */
export function argumentsObject(): fc.Arbitrary<Record<string, unknown>> {
  return fc.array(fc.tuple(jsonKey(), jsonValue()), { maxLength: 5 }).map(objectFrom);
}

const toolName = fc.stringMatching(/^[a-z][a-z0-9_]{0,11}$/);
const idBody = fc.stringMatching(/^[A-Za-z0-9]{4,16}$/);

/** Provider-neutral turn specs: text, calls with random arguments, fragment sizes and layout choices. */
export function turnSpec(options: { maxCalls?: number } = {}): fc.Arbitrary<TurnSpec> {
  return fc.record({
    // Sometimes text with tool calls written into it (read only with the textCalls option).
    text: fc.oneof({ weight: 4, arbitrary: fc.array(hostileString(16), { maxLength: 4 }) }, { weight: 1, arbitrary: textWithCalls() }),
    // Ids are unique within a turn: on most wires one id is one call (fragments are joined by it).
    // Colliding ids are a server quirk with tests of their own.
    calls: fc.uniqueArray(
      fc.record({ id: fc.option(idBody, { nil: undefined, freq: 5 }), name: toolName, arguments: argumentsObject() }).map(({ id, ...rest }): CallSpec => (id === undefined ? rest : { id, ...rest })),
      { maxLength: options.maxCalls ?? 3, selector: (call) => call.id ?? call },
    ),
    fragmentSizes: fc.array(fc.integer({ min: 1, max: 40 }), { minLength: 1, maxLength: 5 }),
    streamedArgs: fc.boolean(),
    callPerChunk: fc.boolean(),
    interleaved: fc.boolean(),
  });
}


/** Text with tool calls written into it (any syntax), cut into text deltas anywhere. */
export function textWithCalls(): fc.Arbitrary<string[]> {
  return fc.oneof(textCallDocument(), wholeMessageTextCall()).chain((doc) => fc.array(fc.nat({ max: doc.text.length }), { maxLength: 8 }).map((cuts) => cutText(doc.text, cuts)));
}

/** Valid streams of `provider`, rendered from generated specs (each knows what it must decode to). */
export function generatedStream(provider: ProviderName, options: { maxCalls?: number } = {}): fc.Arbitrary<GeneratedStream> {
  return turnSpec(options).map((spec) => ({ provider, spec, events: renderSpec(provider, spec) }));
}

// ---------------------------------------------------------------------------------------------
// Arbitraries.

const position = fc.nat({ max: 100_000 });

/** One event mutation of any kind. */
export function eventMutation(): fc.Arbitrary<EventMutation> {
  return fc.oneof(
    fc.record({ op: fc.constant("refragment" as const), sizes: fc.array(fc.integer({ min: 1, max: 64 }), { minLength: 1, maxLength: 6 }) }),
    fc.record({ op: fc.constant("interleave" as const), at: position }),
    fc.record({ op: fc.constant("duplicate" as const), at: position, to: position }),
    fc.record({ op: fc.constant("drop" as const), at: position }),
    fc.record({ op: fc.constant("swap" as const), at: position }),
    fc.record({ op: fc.constant("inject" as const), at: position, kind: fc.constantFrom("keepalive" as const, "strange" as const), pick: fc.nat({ max: 64 }) }),
    fc.record({ op: fc.constant("hostile" as const), at: position, kind: fc.constantFrom(...HOSTILE_KINDS) }),
    fc.record({ op: fc.constant("truncate" as const), at: position }),
  );
}

const NO_BYTES: ByteMutation = { framing: 0, lineEnding: "lf", dataFirst: false, keepAlives: [], invalidUtf8: [], corrupt: [], truncate: null, cuts: [], multibyteCuts: false };

/** Only the freedoms of the framing: line endings, keep-alives, field order, chunk boundaries. */
export function benignBytes(): fc.Arbitrary<ByteMutation> {
  return fc.record({
    framing: fc.nat({ max: 3 }),
    lineEnding: fc.constantFrom<LineEnding>("lf", "crlf", "cr"),
    dataFirst: fc.boolean(),
    keepAlives: fc.array(position, { maxLength: 4 }),
    invalidUtf8: fc.constant([]),
    corrupt: fc.constant([]),
    truncate: fc.constant(null),
    cuts: fc.array(fc.nat({ max: 1_000_000 }), { maxLength: 40 }),
    multibyteCuts: fc.boolean(),
    multilineData: fc.boolean(),
  });
}

/** Freedoms plus damage: invalid UTF-8, flipped bits, a body cut short. */
export function damagingBytes(): fc.Arbitrary<ByteMutation> {
  return fc.record({
    framing: fc.nat({ max: 3 }),
    lineEnding: fc.constantFrom<LineEnding>("lf", "crlf", "cr"),
    dataFirst: fc.boolean(),
    keepAlives: fc.array(position, { maxLength: 3 }),
    invalidUtf8: fc.array(fc.record({ at: fc.nat({ max: 1_000_000 }), bytes: fc.constantFrom(...INVALID_UTF8.map((b) => [...b])) }), { maxLength: 3 }),
    corrupt: fc.array(fc.record({ at: fc.nat({ max: 1_000_000 }), xor: fc.integer({ min: 1, max: 255 }) }), { maxLength: 3 }),
    truncate: fc.option(fc.nat({ max: 1_000_000 }), { nil: null, freq: 3 }),
    cuts: fc.array(fc.nat({ max: 1_000_000 }), { maxLength: 20 }),
    multibyteCuts: fc.boolean(),
    multilineData: fc.boolean(),
  });
}

const previews = fc.boolean();
const limits = fc.constantFrom<"default" | "small">("default", "default", "default", "small");

/**
 * Plans mixing focused ones (a single invariance-preserving change, checked against the unmutated
 * stream) with chaos (several mutations and damaged bytes, checked against the invariants only).
 */
export function mutationPlan(): fc.Arbitrary<MutationPlan> {
  // One plan in four also decodes with textCalls on.
  return fc.tuple(plainMutationPlan(), fc.nat({ max: 3 })).map(([plan, pick]) => (pick === 0 ? { ...plan, textCalls: true } : plan));
}

function plainMutationPlan(): fc.Arbitrary<MutationPlan> {
  const focused = (mutation: fc.Arbitrary<EventMutation>): fc.Arbitrary<MutationPlan> =>
    fc.record({ events: mutation.map((m) => [m]), bytes: fc.constant(NO_BYTES), previews, limits: fc.constant<"default">("default") });
  return fc.oneof(
    { weight: 3, arbitrary: fc.record({ events: fc.array(eventMutation(), { maxLength: 4 }), bytes: damagingBytes(), previews, limits }) },
    { weight: 2, arbitrary: fc.record({ events: fc.constant<EventMutation[]>([]), bytes: benignBytes(), previews, limits: fc.constant<"default">("default") }) },
    { weight: 2, arbitrary: fc.record({ events: fc.constant<EventMutation[]>([]), bytes: damagingBytes(), previews, limits }) },
    { weight: 1, arbitrary: focused(fc.record({ op: fc.constant("refragment" as const), sizes: fc.array(fc.integer({ min: 1, max: 64 }), { minLength: 1, maxLength: 6 }) })) },
    { weight: 1, arbitrary: focused(fc.record({ op: fc.constant("interleave" as const), at: position })) },
    { weight: 1, arbitrary: focused(fc.record({ op: fc.constant("inject" as const), at: position, kind: fc.constant("keepalive" as const), pick: fc.nat({ max: 8 }) })) },
    { weight: 2, arbitrary: focused(fc.record({ op: fc.constant("truncate" as const), at: position })) },
    { weight: 1, arbitrary: focused(fc.record({ op: fc.constant("hostile" as const), at: position, kind: fc.constantFrom(...HOSTILE_KINDS) })) },
  );
}

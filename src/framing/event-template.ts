/**
 * `JSON.parse` for a stream's events that learns the envelope the stream repeats.
 *
 * Most events of a Chat Completions stream are the same text but for one string: the
 *
 *     {"id":"chatcmpl-…","object":"chat.completion.chunk","created":…,"model":"…","choices":[{"index":0,
 *      "delta":{"tool_calls":[{"index":0,"function":{"arguments":"…"}}]},"logprobs":null,"finish_reason":null}]}
 *
 * envelope repeats byte for byte while the arguments fragment changes (OpenAI adds a second
 * changing string, `obfuscation`; the Responses API a counter, `sequence_number`; Ollama a
 * timestamp). JSON.parse reads and allocates the whole envelope for every fragment, and that is
 * most of the CPU time of decoding such a stream. After parsing an event, the reader may keep it
 * as a template: the text cut at the values that change ("holes": strings and counters under the
 * keys in HOLE_KEYS), and the parsed value. A later event that is the same text with other valid
 * values in the holes is built from the template by copying it and putting in the new values,
 * without JSON.parse.
 *
 * The result is exactly JSON.parse's, because the two texts differ only inside the holes' tokens:
 * - A template is kept only when a probe (the event's text with each hole's value replaced by a
 *   marker it did not hold) parses to values with the markers at the holes' paths. So each hole's
 *   text is the one token that makes the value at that path.
 * - A later text matches only when every fixed piece is equal and each hole holds a valid token of
 *   its kind: a JSON string body (no raw control character, no unescaped quote, only JSON's
 *   escapes), or a plain non-negative integer of at most 15 digits. Its tokens are then the
 *   template's tokens with other values there, which parse to the template's value with other
 *   values at the holes.
 * - Every container of the template is copied for each event, so no two events share an object.
 * - Anything else (no template fits, or the text does not parse) goes to JSON.parse whole.
 *
 * The cost stays bounded when a stream's events never repeat (an id that changes): learning is
 * paid for by hits (at most `LEARN_FREE` attempts plus one per `HITS_PER_LEARN` hits), and a
 * reader whose templates keep missing stops trying them.
 */

type HoleKind = "string" | "integer";

/** The keys whose values change from event to event of a delta stream, and what they hold. */
const HOLE_KEYS = new Map<string, HoleKind>([
  ...["content", "reasoning_content", "reasoning", "arguments", "text", "thinking", "partial_json", "delta", "obfuscation", "created_at"].map((key) => [key, "string"] as const),
  ["sequence_number", "integer"],
]);
const MAX_HOLES = 4;
/** A template's value may hold at most this many containers (Chat's argument delta holds 7). */
const MAX_CONTAINERS = 16;
/** Digits of an integer hole: any such integer is exact in a double. */
const MAX_DIGITS = 15;
const MAX_TEMPLATES = 6;
/** Deltas are small; a long event is not learned from (its probe would cost a second parse of it). */
const MAX_LEARN_LENGTH = 16 * 1024;
const LEARN_FREE = 6;
const HITS_PER_LEARN = 16;
/** Misses beyond this many plus twice the hits switch templates off for the stream. */
const MISS_ALLOWANCE = 32;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;

type Key = string | number;
type Container = Record<string, unknown> | unknown[];

/** How to copy one container: its own value (copied shallowly), then its containers and holes set. */
interface CopyPlan {
  value: Container;
  array: boolean;
  /**
   * The copy site for an object's shape (see copyAtSite), given at the first copy: most templates
   * learned are never used (an event that does not repeat), and they should not take up sites.
   */
  site: number;
  children: Array<{ key: Key; plan: CopyPlan }>;
  holes: Array<{ key: Key; hole: number }>;
}

interface Template {
  /**
   * The fixed text between holes: `pieces[0]` hole 0 `pieces[1]` … hole n-1 `pieces[n]`. A string
   * hole is its body: the piece before it ends with the opening quote, the one after it starts
   * with the closing quote.
   */
  pieces: string[];
  kinds: HoleKind[];
  plan: CopyPlan;
}

interface FoundHole {
  path: Key[];
  kind: HoleKind;
  value: string | number;
  /** Where the plan puts the hole's value. */
  holes: CopyPlan["holes"];
  key: Key;
}

export class EventJsonReader {
  private templates: Template[] = [];
  private hits = 0;
  private misses = 0;
  private attempts = 0;
  private off = false;
  private readonly values: Array<string | number> = [];
  /** Where each hole's body starts and ends in the text being matched. */
  private readonly bounds: number[] = [];

  /** How the reader has fared: events built from templates, misses, learning attempts, and whether it gave up. */
  get stats(): { hits: number; misses: number; attempts: number; templates: number; off: boolean } {
    return { hits: this.hits, misses: this.misses, attempts: this.attempts, templates: this.templates.length, off: this.off };
  }

  /** Parses `text` exactly as JSON.parse would, returning or throwing alike. */
  parse(text: string): unknown {
    if (this.off) return JSON.parse(text);
    const templates = this.templates;
    for (let i = 0; i < templates.length; i++) {
      const template = templates[i] as Template;
      if (this.match(template, text)) {
        this.hits++;
        if (i > 0) {
          // Most recently used first: an interleaved stream finds its template sooner.
          templates.splice(i, 1);
          templates.unshift(template);
        }
        return build(template.plan, this.values);
      }
    }
    const value: unknown = JSON.parse(text);
    if (templates.length > 0 && ++this.misses > MISS_ALLOWANCE + 2 * this.hits) {
      this.off = true;
      this.templates = [];
      return value;
    }
    if (this.attempts < LEARN_FREE + this.hits / HITS_PER_LEARN) {
      this.attempts++;
      this.learn(text, value);
    }
    return value;
  }

  /** True when `text` is `template`'s text with valid tokens in its holes, their values left in `values`. */
  private match(template: Template, text: string): boolean {
    const pieces = template.pieces;
    const kinds = template.kinds;
    const first = pieces[0] as string;
    if (text.length < first.length || text.slice(0, first.length) !== first) return false;
    const bounds = this.bounds;
    let at = first.length;
    for (let hole = 0; hole < kinds.length; hole++) {
      const end = kinds[hole] === "string" ? stringBodyEnd(text, at) : integerEnd(text, at);
      if (end < 0) return false;
      const piece = pieces[hole + 1] as string;
      if (text.slice(end, end + piece.length) !== piece) return false;
      bounds[2 * hole] = at;
      bounds[2 * hole + 1] = end;
      at = end + piece.length;
    }
    if (at !== text.length) return false;
    for (let hole = 0; hole < kinds.length; hole++) {
      const start = bounds[2 * hole] as number;
      const end = bounds[2 * hole + 1] as number;
      this.values[hole] = kinds[hole] === "string" ? stringValue(text, start, end) : Number(text.slice(start, end));
    }
    return true;
  }

  private learn(text: string, parsed: unknown): void {
    if (typeof parsed !== "object" || parsed === null || text.length > MAX_LEARN_LENGTH) return;
    // The template keeps a value of its own: the caller may change or keep the one it was handed,
    // and later events must still be what JSON.parse makes of their text.
    const value = JSON.parse(text) as unknown;
    const found: FoundHole[] = [];
    let containers = 0;
    /** The copy plan of `node`, noting its holes in `found`; null when it cannot be a template's value. */
    const walk = (node: Container, path: Key[]): CopyPlan | null => {
      if (++containers > MAX_CONTAINERS) return null;
      const array = Array.isArray(node);
      const plan: CopyPlan = { value: node, array, site: UNASSIGNED, children: [], holes: [] };
      const entries: Array<[Key, unknown]> = array ? (node as unknown[]).map((item: unknown, i) => [i, item]) : Object.entries(node);
      for (const [key, child] of entries) {
        // Assigning a `__proto__` key would set the prototype, not copy the value.
        if (key === "__proto__") return null;
        if (typeof child === "object" && child !== null) {
          const childPlan = walk(child as Container, [...path, key]);
          if (!childPlan) return null;
          plan.children.push({ key, plan: childPlan });
          continue;
        }
        const kind = typeof key === "string" ? HOLE_KEYS.get(key) : undefined;
        const fits = kind === "string" ? typeof child === "string" : kind === "integer" && typeof child === "number" && Number.isSafeInteger(child) && child >= 0 && !Object.is(child, -0);
        if (!kind || !fits) continue;
        if (found.length === MAX_HOLES) return null;
        found.push({ path: [...path, key], kind, value: child as string | number, holes: plan.holes, key });
      }
      return plan;
    };
    const plan = walk(value as Container, []);
    if (!plan || found.length === 0) return;
    // Where each hole's token is: after its key (and the colon, with or without a space), found once.
    const located: Array<{ start: number; end: number; hole: FoundHole }> = [];
    for (const hole of found) {
      const encoded = hole.kind === "string" ? JSON.stringify(hole.value) : String(hole.value);
      let head = `"${hole.key as string}":`;
      let at = text.indexOf(head + encoded);
      if (at < 0) {
        head += " ";
        at = text.indexOf(head + encoded);
      }
      if (at < 0 || text.indexOf(head + encoded, at + 1) >= 0) return;
      const token = at + head.length;
      if (hole.kind === "string") {
        located.push({ start: token + 1, end: token + encoded.length - 1, hole });
      } else {
        // The integer must end there ("12" is not the token of 123 or 12.5).
        if (integerEnd(text, token) !== token + encoded.length || /[.eE]/.test(text.charAt(token + encoded.length))) return;
        located.push({ start: token, end: token + encoded.length, hole });
      }
    }
    located.sort((a, b) => a.start - b.start);
    const pieces: string[] = [];
    let from = 0;
    for (const { start, end } of located) {
      if (start < from) return;
      pieces.push(ownCopy(text.slice(from, start)));
      from = end;
    }
    pieces.push(ownCopy(text.slice(from)));
    // The probe: each hole's value replaced by a marker it did not hold must land at that hole's path.
    const markers = located.map(({ hole }, i) => {
      const marker = hole.kind === "string" ? `toolwire-hole-${i}` : 987_654_321 + i * 2;
      return hole.value === marker ? (typeof marker === "string" ? `${marker}!` : marker + 1) : marker;
    });
    let probeText = pieces[0] as string;
    for (let i = 0; i < located.length; i++) probeText += String(markers[i]) + (pieces[i + 1] as string);
    let probe: unknown;
    try {
      probe = JSON.parse(probeText);
    } catch {
      return;
    }
    for (let i = 0; i < located.length; i++) if (valueAt(probe, (located[i] as (typeof located)[number]).hole.path) !== markers[i]) return;
    located.forEach(({ hole }, i) => hole.holes.push({ key: hole.key, hole: i }));
    if (this.templates.length === MAX_TEMPLATES) this.templates.pop();
    this.templates.unshift({ pieces, kinds: located.map(({ hole }) => hole.kind), plan });
  }
}

/**
 * The index of the closing quote of the JSON string body that starts at `from`, or -1 when the
 * text there is not a valid body (a raw control character, a bad escape, or no closing quote).
 */
function stringBodyEnd(text: string, from: number): number {
  const n = text.length;
  for (let at = from; at < n; at++) {
    const c = text.charCodeAt(at);
    if (c === QUOTE) return at;
    if (c < 0x20) return -1;
    if (c === BACKSLASH) {
      const e = text.charCodeAt(++at);
      if (e === 0x75) {
        for (let k = 1; k <= 4; k++) if (!isHex(text.charCodeAt(at + k))) return -1;
        at += 4;
      } else if (e !== QUOTE && e !== BACKSLASH && e !== 0x2f && e !== 0x62 && e !== 0x66 && e !== 0x6e && e !== 0x72 && e !== 0x74) {
        return -1;
      }
    }
  }
  return -1;
}

/** The index after the plain non-negative integer that starts at `from` (JSON's form, at most MAX_DIGITS digits), or -1. */
function integerEnd(text: string, from: number): number {
  let at = from;
  while (at < text.length && at - from <= MAX_DIGITS) {
    const c = text.charCodeAt(at);
    if (c < 0x30 || c > 0x39) break;
    at++;
  }
  const digits = at - from;
  if (digits === 0 || digits > MAX_DIGITS) return -1;
  // JSON allows no leading zero: "0" is a whole number.
  if (digits > 1 && text.charCodeAt(from) === 0x30) return -1;
  return at;
}

function isHex(c: number): boolean {
  return (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66);
}

/** The string a valid body between `start` and the closing quote at `end` stands for. */
function stringValue(text: string, start: number, end: number): string {
  // Shorter slices are copies in V8 (its SlicedString minimum is 13 characters). A longer slice
  // would keep the text it was cut from alive (the event, and with it the chunk the framer read),
  // and a turn accumulates its fragments: JSON.parse gives a string of its own, escapes decoded.
  if (end - start < FLAT_SLICE_LENGTH) {
    const backslash = text.indexOf("\\", start);
    if (backslash < 0 || backslash >= end) return text.slice(start, end);
  }
  return JSON.parse(text.slice(start - 1, end + 1)) as string;
}

const FLAT_SLICE_LENGTH = 13;

/**
 * A string with memory of its own. A template lives as long as its stream, and a slice of an
 * event's text would keep the whole text the framer decoded alive with it (V8 slices longer
 * strings by reference): with many streams at once, those texts outlive the young generation and
 * fill the old one. Concatenating, then slicing, makes V8 copy the characters into a new string.
 */
function ownCopy(slice: string): string {
  return slice.length < FLAT_SLICE_LENGTH ? slice : ` ${slice}`.slice(1);
}

function valueAt(value: unknown, path: readonly Key[]): unknown {
  let node = value;
  for (const key of path) {
    if (typeof node !== "object" || node === null) return undefined;
    node = (node as Record<Key, unknown>)[key];
  }
  return node;
}

/**
 * Copies a template's object at one of 16 spread sites. A spread is fast at a code site that has
 * met few hidden classes (object shapes) and about five times slower at one that has met many:
 * measured 9 against 48 ns per object, which made decoding a text stream 40% slower (2.7 against
 * 3.9 ms per MB) in a process that had decoded one stream of tool calls before. A process meets
 * the shapes of every provider it reads and of every kind of event, so each shape is given one of
 * these sites in turn (the JIT keeps its knowledge per site, and a site holds four shapes fast).
 * Written out, since a site is a place in the source: functions made by one factory would share
 * one, and a call through a table of functions costs a call that this switch does not.
 * `npm run bench:mixed` measures decoding in such a process.
 */
function copyAtSite(site: number, value: object): Record<Key, unknown> {
  switch (site) {
    case 0:
      return { ...value };
    case 1:
      return { ...value };
    case 2:
      return { ...value };
    case 3:
      return { ...value };
    case 4:
      return { ...value };
    case 5:
      return { ...value };
    case 6:
      return { ...value };
    case 7:
      return { ...value };
    case 8:
      return { ...value };
    case 9:
      return { ...value };
    case 10:
      return { ...value };
    case 11:
      return { ...value };
    case 12:
      return { ...value };
    case 13:
      return { ...value };
    case 14:
      return { ...value };
    default:
      return { ...value };
  }
}
const COPY_SITES = 16;

/**
 * Shapes (key lists) given a site so far; bounded, as a hostile stream could show endless keys.
 * Process-wide on purpose: the JIT's knowledge is per site and so per process. A table per
 * reader would start every stream's shapes at site 0, piling the shapes of every provider onto
 * the first sites: the slow case measured above. Its only state is that assignment, which never
 * changes a parse result.
 */
const copySites = new Map<string, number>();
const MAX_REMEMBERED_SHAPES = 4 * COPY_SITES;
const UNASSIGNED = -1;

function copySiteOf(value: object): number {
  const shape = Object.keys(value).join("\u0000");
  const known = copySites.get(shape);
  if (known !== undefined) return known;
  if (copySites.size < MAX_REMEMBERED_SHAPES) {
    const site = copySites.size % COPY_SITES;
    copySites.set(shape, site);
    return site;
  }
  // Past the bound, shapes are spread over the sites by a hash of their keys: slower copies where
  // they crowd a site, never wrong ones.
  let hash = 0;
  for (let i = 0; i < shape.length; i++) hash = (Math.imul(hash, 31) + shape.charCodeAt(i)) | 0;
  return (hash >>> 0) % COPY_SITES;
}

function build(plan: CopyPlan, values: ReadonlyArray<string | number>): unknown {
  let copy: Record<Key, unknown>;
  if (plan.array) {
    copy = (plan.value as unknown[]).slice() as unknown as Record<Key, unknown>;
  } else {
    if (plan.site === UNASSIGNED) plan.site = copySiteOf(plan.value);
    copy = copyAtSite(plan.site, plan.value);
  }
  for (const child of plan.children) copy[child.key] = build(child.plan, values);
  for (const hole of plan.holes) copy[hole.key] = values[hole.hole];
  return copy;
}

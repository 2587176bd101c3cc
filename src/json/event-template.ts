/**
 * `JSON.parse` for a stream's events that learns the envelope the stream repeats.
 *
 * Most events of a Chat Completions stream are the same text but for one string: the
 *
 *     {"id":"chatcmpl-…","object":"chat.completion.chunk","created":…,"model":"…","choices":[{"index":0,
 *      "delta":{"tool_calls":[{"index":0,"function":{"arguments":"…"}}]},"logprobs":null,"finish_reason":null}]}
 *
 * envelope repeats byte for byte while the arguments fragment changes (OpenAI adds a second
 * changing string, `obfuscation`). JSON.parse reads and allocates the whole envelope for every
 * fragment, and that is most of the CPU time of decoding such a stream. After parsing an event,
 * the reader may keep it as a template: the text cut at the strings that change ("holes"), and the
 * parsed value. A later event that is the same text with other valid string bodies in the holes is
 * built from the template by copying it and putting in the new strings, without JSON.parse.
 *
 * The result is exactly JSON.parse's, because the two texts differ only inside string tokens:
 * - A template is kept only when a probe (the event's text with each hole's string replaced by a
 *   marker) parses to the value with the markers at the holes' paths. So each hole's text is the
 *   string token that makes that value, and nothing else in the text changed.
 * - A later text matches only when every fixed piece is equal and each hole holds a valid JSON
 *   string body (no raw control character, no unescaped quote, only JSON's escapes). Its tokens
 *   are then the template's tokens with other strings, which parse to the template's value with
 *   other strings at the holes.
 * - Every container in a template is on a hole's path and every other value in it is a primitive,
 *   so each result is a fresh tree: no two events share an object.
 * - Anything else (no template fits, or the text does not parse) goes to JSON.parse whole.
 *
 * The cost stays bounded when a stream's events never repeat (an id or a counter that changes):
 * learning is paid for by hits (at most `LEARN_FREE` attempts plus one per `HITS_PER_LEARN`
 * hits), and a reader whose templates keep missing stops trying them.
 */

/** The keys whose string values change from event to event of a delta stream. */
const HOLE_KEYS = new Set(["content", "reasoning_content", "reasoning", "arguments", "text", "thinking", "partial_json", "obfuscation"]);
const MAX_HOLES = 3;
/** A template's value may hold at most this many containers (Chat's argument delta holds 7). */
const MAX_CONTAINERS = 12;
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
  children: Array<{ key: Key; plan: CopyPlan }>;
  holes: Array<{ key: Key; hole: number }>;
}

interface Template {
  /** The fixed text between holes: `pieces[0]` hole 0 `pieces[1]` … hole n-1 `pieces[n]`. */
  pieces: string[];
  plan: CopyPlan;
  holes: number;
}

export class EventJsonReader {
  private templates: Template[] = [];
  private hits = 0;
  private misses = 0;
  private attempts = 0;
  private off = false;
  private readonly fallback: (text: string) => unknown;
  private readonly values: string[] = [];
  /** Where each hole's body starts and ends in the text being matched. */
  private readonly bounds: number[] = [];

  /** `fallback` parses what no template fits (JSON.parse, or a parser with fast paths of its own). */
  constructor(fallback: (text: string) => unknown = JSON.parse) {
    this.fallback = fallback;
  }

  /** How the reader has fared: events built from templates, misses, learning attempts, and whether it gave up. */
  get stats(): { hits: number; misses: number; attempts: number; templates: number; off: boolean } {
    return { hits: this.hits, misses: this.misses, attempts: this.attempts, templates: this.templates.length, off: this.off };
  }

  /** Parses `text` exactly as JSON.parse would, returning or throwing alike. */
  parse(text: string): unknown {
    if (this.off) return this.fallback(text);
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
    const value = this.fallback(text);
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

  /** True when `text` is `template`'s text with valid string bodies in its holes, left in `values`. */
  private match(template: Template, text: string): boolean {
    const pieces = template.pieces;
    const first = pieces[0] as string;
    if (text.length < first.length || text.slice(0, first.length) !== first) return false;
    const bounds = this.bounds;
    let at = first.length;
    for (let hole = 0; hole < template.holes; hole++) {
      const end = stringBodyEnd(text, at);
      if (end < 0) return false;
      const piece = pieces[hole + 1] as string;
      if (text.slice(end, end + piece.length) !== piece) return false;
      bounds[2 * hole] = at;
      bounds[2 * hole + 1] = end;
      at = end + piece.length;
    }
    if (at !== text.length) return false;
    for (let hole = 0; hole < template.holes; hole++) this.values[hole] = stringValue(text, bounds[2 * hole] as number, bounds[2 * hole + 1] as number);
    return true;
  }

  private learn(text: string, value: unknown): void {
    if (typeof value !== "object" || value === null || text.length > MAX_LEARN_LENGTH) return;
    const found: Array<{ path: Key[]; value: string }> = [];
    let containers = 0;
    /** The number of holes under `node`, or -1 when it cannot be a template's value. */
    const walk = (node: object, path: Key[]): number => {
      if (++containers > MAX_CONTAINERS) return -1;
      let holes = 0;
      const entries: Array<[Key, unknown]> = Array.isArray(node) ? node.map((item: unknown, i) => [i, item]) : Object.entries(node);
      for (const [key, child] of entries) {
        if (key === "__proto__") return -1;
        if (typeof child === "object" && child !== null) {
          // A container with no hole under it would be shared by every event built from the template.
          const under = walk(child, [...path, key]);
          if (under <= 0) return -1;
          holes += under;
        } else if (typeof child === "string" && typeof key === "string" && HOLE_KEYS.has(key)) {
          if (found.length === MAX_HOLES) return -1;
          found.push({ path: [...path, key], value: child });
          holes++;
        }
      }
      return holes;
    };
    if (walk(value, []) <= 0) return;
    // Where each hole's string token is: after its key (and the colon, with or without a space), found once.
    const located: Array<{ start: number; end: number; path: Key[] }> = [];
    for (const hole of found) {
      const key = hole.path[hole.path.length - 1] as string;
      const encoded = JSON.stringify(hole.value);
      let head = `"${key}":`;
      let at = text.indexOf(head + encoded);
      if (at < 0) {
        head += " ";
        at = text.indexOf(head + encoded);
      }
      if (at < 0 || text.indexOf(head + encoded, at + 1) >= 0) return;
      const start = at + head.length + 1;
      located.push({ start, end: start + encoded.length - 2, path: hole.path });
    }
    located.sort((a, b) => a.start - b.start);
    const pieces: string[] = [];
    let from = 0;
    for (const hole of located) {
      if (hole.start < from) return;
      pieces.push(text.slice(from, hole.start));
      from = hole.end;
    }
    pieces.push(text.slice(from));
    // The probe: each hole's string replaced by a marker it did not hold must land at that hole's path.
    const markers = located.map((hole, i) => (valueAt(value, hole.path) === `toolwire-hole-${i}` ? `toolwire-hole-${i}!` : `toolwire-hole-${i}`));
    let probeText = pieces[0] as string;
    for (let i = 0; i < located.length; i++) probeText += (markers[i] as string) + (pieces[i + 1] as string);
    let probe: unknown;
    try {
      probe = JSON.parse(probeText);
    } catch {
      return;
    }
    for (let i = 0; i < located.length; i++) if (valueAt(probe, (located[i] as { path: Key[] }).path) !== markers[i]) return;
    const plan = copyPlan(value as Container, located.map((hole, i) => ({ path: hole.path, hole: i })));
    if (this.templates.length === MAX_TEMPLATES) this.templates.pop();
    this.templates.unshift({ pieces, plan, holes: located.length });
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

function isHex(c: number): boolean {
  return (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66);
}

/** The string a valid body between `start` and the closing quote at `end` stands for. */
function stringValue(text: string, start: number, end: number): string {
  if (start === end) return "";
  const body = text.slice(start, end);
  return body.indexOf("\\") < 0 ? body : (JSON.parse(text.slice(start - 1, end + 1)) as string);
}

function valueAt(value: unknown, path: readonly Key[]): unknown {
  let node = value;
  for (const key of path) {
    if (typeof node !== "object" || node === null) return undefined;
    node = (node as Record<Key, unknown>)[key];
  }
  return node;
}

/** Plans the copy of `value` along the holes' paths (relative to `value`). */
function copyPlan(value: Container, holes: ReadonlyArray<{ path: Key[]; hole: number }>): CopyPlan {
  const plan: CopyPlan = { value, array: Array.isArray(value), children: [], holes: [] };
  const below = new Map<Key, Array<{ path: Key[]; hole: number }>>();
  for (const { path, hole } of holes) {
    const key = path[0] as Key;
    if (path.length === 1) {
      plan.holes.push({ key, hole });
    } else {
      const list = below.get(key) ?? [];
      list.push({ path: path.slice(1), hole });
      below.set(key, list);
    }
  }
  for (const [key, list] of below) plan.children.push({ key, plan: copyPlan((value as Record<Key, unknown>)[key] as Container, list) });
  return plan;
}

function build(plan: CopyPlan, values: readonly string[]): unknown {
  const copy: Record<Key, unknown> = plan.array ? ((plan.value as unknown[]).slice() as unknown as Record<Key, unknown>) : { ...plan.value };
  for (const child of plan.children) copy[child.key] = build(child.plan, values);
  for (const hole of plan.holes) copy[hole.key] = values[hole.hole];
  return copy;
}

/**
 * Hand-written scanners for tool calls written into text. Everything here is linear: each
 * character is examined a bounded number of times, and only a marker-sized suffix (or a short
 * call header) is ever held back between deltas.
 */

/** A literal matched at a position: the position after it, PARTIAL when the text ends inside it, NO otherwise. */
export const PARTIAL = -2;
export const NO = -1;

export function matchAt(s: string, i: number, literal: string): number {
  const n = Math.min(literal.length, s.length - i);
  for (let k = 0; k < n; k++) if (s.charCodeAt(i + k) !== literal.charCodeAt(k)) return NO;
  return n === literal.length ? i + n : PARTIAL;
}

export function isWs(code: number): boolean {
  return code === 32 || code === 10 || code === 13 || code === 9;
}

export function skipWs(s: string, i: number): number {
  while (i < s.length && isWs(s.charCodeAt(i))) i++;
  return i;
}

/** Whitespace runs longer than this are not held back while waiting for optional markup. */
export const MAX_HELD_WS = 256;

export type Expect = { kind: "more" } | { kind: "match"; which: number; end: number } | { kind: "none"; at: number };

/**
 * After optional whitespace, one of `literals` (tried in order, so a longer literal sharing a prefix
 * with a shorter one goes first). "more" when the text ends before a decision.
 */
export function expectAfterWs(s: string, i: number, literals: readonly string[]): Expect {
  const j = skipWs(s, i);
  if (j === s.length) return j - i > MAX_HELD_WS ? { kind: "none", at: j } : { kind: "more" };
  let partial = false;
  for (let w = 0; w < literals.length; w++) {
    const end = matchAt(s, j, literals[w] as string);
    if (end >= 0) {
      if (partial) return { kind: "more" };
      return { kind: "match", which: w, end };
    }
    if (end === PARTIAL) partial = true;
  }
  return partial ? { kind: "more" } : { kind: "none", at: j };
}

/**
 * What a reader's last `feed` decided; the position `feed` returned says where:
 * "more": it needs more text from there (the rest is held back);
 * "done": it finished there;
 * "reject": not a call after all (or not an allowed one): the text read since the last mark is
 * passed on as text and scanning resumes there;
 * "broken": an open call's markup broke off there (the reader told its ParseContext): no call.
 */
export type ReadStatus = "more" | "done" | "reject" | "broken";

/**
 * The one result convention of every text-call reader, a whole call's parser or one part of a
 * call (a name, an envelope, a value): `feed` returns a position and sets `status`.
 */
export abstract class Reader {
  status: ReadStatus = "more";

  protected more(i: number): number {
    this.status = "more";
    return i;
  }

  protected done(i: number): number {
    this.status = "done";
    return i;
  }

  protected reject(i: number): number {
    this.status = "reject";
    return i;
  }

  /** The open call's markup broke off at `i`: the call is not one, its text is released as text. */
  protected broken(i: number, x: { broken(): void }): number {
    x.broken();
    this.status = "broken";
    return i;
  }
}

/**
 * Finds where one JSON value ends, fed in pieces: tracks string and escape state and bracket depth,
 * so markup inside a JSON string never ends the value. Validity is finalize's job, not this one's.
 * `feed` returns the position after the value ("done"), or where more text is needed ("more").
 */
export class JsonValueTracker extends Reader {
  /**
   * With a stop literal (a call's end token), the value also ends where that literal appears outside
   * a string: `cut` is then true (the value did not close). When the text ends inside a possible
   * stop literal, the status is "more" at its start, and more text decides.
   */
  cut = false;
  constructor(private readonly stop: string | null = null) {
    super();
  }

  private started = false;
  private depth = 0;
  private inString = false;
  private escape = false;
  private scalar = false;

  feed(s: string, i: number): number {
    let k = i;
    if (!this.started) {
      if (k >= s.length) return this.more(k);
      this.started = true;
      const c = s.charCodeAt(k);
      if (c === 123 || c === 91) {
        this.depth = 1;
        k++;
      } else if (c === 34) {
        this.inString = true;
        k++;
      } else this.scalar = true;
    }
    if (this.scalar) {
      for (; k < s.length; k++) if (!isScalarChar(s.charCodeAt(k))) return this.done(k);
      return this.more(k);
    }
    const n = s.length;
    while (k < n) {
      if (this.inString) {
        if (this.escape) {
          this.escape = false;
          k++;
          continue;
        }
        // Jump to the next quote or backslash: string bodies are most of an argument's text.
        const q = s.indexOf('"', k);
        const b = s.indexOf("\\", k);
        if (q < 0 && b < 0) return this.more(n);
        if (b >= 0 && (q < 0 || b < q)) {
          this.escape = true;
          k = b + 1;
          continue;
        }
        this.inString = false;
        k = q + 1;
        if (this.depth === 0) return this.done(k);
        continue;
      }
      const c = s.charCodeAt(k);
      if (this.stop !== null && c === this.stop.charCodeAt(0)) {
        const end = matchAt(s, k, this.stop);
        if (end >= 0) {
          this.cut = true;
          return this.done(k);
        }
        if (end === PARTIAL) return this.more(k);
      }
      if (c === 34) this.inString = true;
      else if (c === 123 || c === 91) this.depth++;
      else if (c === 125 || c === 93) {
        this.depth--;
        if (this.depth === 0) return this.done(k + 1);
      }
      k++;
    }
    return this.more(n);
  }
}

function isScalarChar(c: number): boolean {
  return (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 46 || c === 43 || c === 45;
}

/** The text of a JSON string body (without quotes) as a value, or null when it is not valid. */
export function decodeJsonStringBody(body: string): string | null {
  try {
    const value: unknown = JSON.parse(`"${body}"`);
    return typeof value === "string" ? value : null;
  } catch {
    return null;
  }
}

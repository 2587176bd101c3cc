/**
 * Incremental, resumable JSON parser.
 *
 * Serves two callers: live previews of tool-call arguments while fragments stream in, and
 * finalize, which needs the exact position of the first syntax error and the boundaries of
 * concatenated values. It accepts exactly what `JSON.parse` accepts.
 *
 * Cost model: each `push` costs time proportional to the fragment (plus one property write for an
 * unfinished string), never to the text received so far. Earlier text is never re-scanned and
 * strings are grown by concatenation, which V8 keeps as a rope, so appends are O(1) amortized.
 * There is no recursion: nesting lives on an explicit stack, so depth is bounded by memory only.
 */

export interface IncrementalJsonOptions {
  /**
   * Nesting depth followed for the preview value (default 256, values below 1 count as 1). Deeper
   * content is still scanned (so structure/close/error tracking stays exact) but not materialized;
   * `depthExceeded` becomes true. A container past the limit is omitted from its parent object, or
   * left as `undefined` in its parent array so that indices keep matching `path`.
   */
  maxDepth?: number;
  /**
   * Accept several top-level values one after another (`{..}{..}` or `{..}\n{..}`), collecting each
   * in `values`. Default false: non-whitespace after the first complete value is an error.
   */
  multiple?: boolean;
}

export type JsonPathSegment = string | number;

export interface JsonSyntaxError {
  message: string;
  /** Char offset in the total text fed so far. */
  position: number;
}

type Container = Record<string, unknown> | unknown[];

interface Frame {
  isArray: boolean;
  /** null when the container lies beyond maxDepth and is scanned but not built. */
  container: Container | null;
  /** Objects: the key of the member being written (or last written). */
  key: string;
  /** Arrays: index of the element being written (or last written); -1 before the first. */
  index: number;
}

// Lexical states. Plain numeric constants keep the hot switch monomorphic (and const enums do not
// survive isolated transpilation).
const ST_VALUE = 0; // a value is expected (after ':' or ',' in an array, or at the top level)
const ST_ARRAY_FIRST = 1; // right after '[': a value or ']'
const ST_OBJ_FIRST = 2; // right after '{': a key or '}'
const ST_KEY = 3; // after ',' in an object: a key
const ST_COLON = 4;
const ST_AFTER = 5; // a value just ended
const ST_STRING = 6;
const ST_ESCAPE = 7;
const ST_UNICODE = 8;
const ST_NUMBER = 9;
const ST_LITERAL = 10;
const ST_ERROR = 11;

// Number sub-states; the terminal ones are those after which the number may end.
const N_MINUS = 0;
const N_ZERO = 1;
const N_INT = 2;
const N_DOT = 3;
const N_FRAC = 4;
const N_EXP = 5;
const N_EXP_SIGN = 6;
const N_EXP_DIGITS = 7;

const DEFAULT_MAX_DEPTH = 256;

function isTerminalNumber(sub: number): boolean {
  return sub === N_ZERO || sub === N_INT || sub === N_FRAC || sub === N_EXP_DIGITS;
}

function unterminatedNumberMessage(sub: number): string {
  if (sub === N_MINUS) return "No number after minus sign";
  if (sub === N_DOT) return "Unterminated fractional number";
  return "Exponent part is missing a number";
}

function hexValue(c: number): number {
  if (c >= 0x30 && c <= 0x39) return c - 0x30;
  const lower = c | 0x20;
  if (lower >= 0x61 && lower <= 0x66) return lower - 0x61 + 10;
  return -1;
}

/** Shows a character readably in a message; control characters would be invisible or break lines. */
function describeChar(c: number): string {
  if (c < 0x20 || c === 0x7f) return `U+${c.toString(16).toUpperCase().padStart(4, "0")}`;
  return `'${String.fromCharCode(c)}'`;
}

function escapeValue(c: number): string | undefined {
  switch (c) {
    case 0x22:
      return '"';
    case 0x5c:
      return "\\";
    case 0x2f:
      return "/";
    case 0x62:
      return "\b";
    case 0x66:
      return "\f";
    case 0x6e:
      return "\n";
    case 0x72:
      return "\r";
    case 0x74:
      return "\t";
    default:
      return undefined;
  }
}

/** `escapeValue` as a table over ASCII, for the scan loop; `u` and invalid escapes are undefined. */
const SIMPLE_ESCAPES: Array<string | undefined> = Array.from({ length: 0x80 }, (_, c) => escapeValue(c));

/** Characters gathered from small pieces before they are joined into one flat chunk. */
const STRING_CHUNK = 1024;

function setMember(frame: Frame, value: unknown): void {
  const container = frame.container;
  if (container === null) return;
  if (frame.isArray) {
    (container as unknown[])[frame.index] = value;
    return;
  }
  const key = frame.key;
  // Plain assignment to "__proto__" would swap the prototype instead of storing data; the other
  // names go the same way so that no inherited accessor can ever intercept a model-chosen key.
  if (key === "__proto__" || key === "constructor" || key === "prototype") {
    Object.defineProperty(container, key, { value, enumerable: true, writable: true, configurable: true });
  } else {
    (container as Record<string, unknown>)[key] = value;
  }
}

/**
 * Incremental, resumable JSON parser: `push` fragments, read the partial `value` at any time; each
 * push costs time proportional to the fragment. Accepts exactly what `JSON.parse` accepts and
 * reports the position of the first syntax error.
 */
export class IncrementalJsonParser {
  private readonly maxDepth: number;
  private readonly multiple: boolean;

  private st = ST_VALUE;
  private ended = false;
  private total = 0;
  private err: JsonSyntaxError | null = null;

  /** Frames are pooled: a slot is reused when the depth comes back, so deep streams allocate once. */
  private readonly frames: Frame[] = [];
  private open = 0;

  private current: unknown = undefined;
  private readonly completed: unknown[] = [];
  private readonly ends: number[] = [];
  private exceeded = false;

  /**
   * Decoded text of the string being read, excluding `hold`: `strHead` plus the pieces in
   * `strParts`. Small pieces are joined into one flat chunk before they join the rope, so a long
   * string streamed in tiny fragments leaves a few large chunks for the garbage collector to keep
   * alive instead of one rope node per fragment (which made scavenges dominate the cost).
   */
  private strHead = "";
  private readonly strParts: string[] = [];
  private strPartsLength = 0;
  /** The same pieces as `strParts`, as a short-lived rope, so publishing needs no join per push. */
  private strTail = "";
  /** Pieces decoded during the current push, not yet in `strParts` (see `appendStr`). */
  private strAcc = "";
  /**
   * A high surrogate kept out of the preview until its partner arrives, so a pair split across
   * pushes never shows as a lone surrogate. Flushed into `str` before anything else is appended.
   */
  private hold = "";
  private isKey = false;
  private uCount = 0;
  private uCode = 0;

  /** Number text from earlier pushes; the part in the current fragment is sliced on demand. */
  private numText = "";
  private numSub = N_MINUS;
  /**
   * Integer part accumulated digit by digit: most numbers in tool arguments are small integers,
   * and building them arithmetically avoids a string allocation and a conversion each.
   */
  private numInt = 0;
  private numDigits = 0;
  private numNeg = false;

  private lit = "";
  private litPos = 0;
  private litValue: boolean | null = null;

  constructor(options?: IncrementalJsonOptions) {
    const requested = options?.maxDepth ?? DEFAULT_MAX_DEPTH;
    // The root container is always built so that `value` keeps one identity for the whole stream.
    this.maxDepth = requested >= 1 ? Math.floor(requested) : 1;
    this.multiple = options?.multiple ?? false;
  }

  /**
   * Live partial value of the current (first, unless `multiple`) top-level value. Once the root
   * container exists, the same object is updated in place on each push. undefined until a value starts.
   */
  get value(): unknown {
    return this.current;
  }

  /** Every completed top-level value, in order (at most one without `multiple`). */
  get values(): unknown[] {
    return this.completed;
  }

  /** Char offsets (exclusive end) where each completed top-level value ended. */
  get valueEnds(): number[] {
    return this.ends;
  }

  /**
   * Path of the member currently being written, e.g. ["todos", 3, "title"]. A key joins the path once
   * it is complete; an array index once its element starts. Exact at any depth, even past maxDepth.
   */
  get path(): readonly JsonPathSegment[] {
    const out: JsonPathSegment[] = [];
    const depth = this.open;
    if (depth === 0) return out;
    for (let d = 0; d < depth - 1; d++) {
      const frame = this.frames[d] as Frame;
      out.push(frame.isArray ? frame.index : frame.key);
    }
    const top = this.frames[depth - 1] as Frame;
    const st = this.st;
    const inValueString = (st === ST_STRING || st === ST_ESCAPE || st === ST_UNICODE) && !this.isKey;
    const inMember = inValueString || st === ST_NUMBER || st === ST_LITERAL || st === ST_AFTER;
    if (top.isArray) {
      if (inMember) out.push(top.index);
    } else if (inMember || st === ST_COLON || st === ST_VALUE) {
      out.push(top.key);
    }
    return out;
  }

  /**
   * "empty" (only whitespace so far) | "partial" (inside a value) | "complete" (a top-level value
   * closed; only whitespace after) | "error".
   */
  get state(): "empty" | "partial" | "complete" | "error" {
    const st = this.st;
    if (st === ST_ERROR) return "error";
    if (this.open === 0) {
      if (st === ST_AFTER) return "complete";
      if (st === ST_VALUE) return "empty";
    }
    return "partial";
  }

  /** The first syntax error; once set, further pushes are ignored. */
  get error(): JsonSyntaxError | null {
    return this.err;
  }

  /** Current open container depth (0 at top level). */
  get depth(): number {
    return this.open;
  }

  /** True while inside an unterminated string (key or value). */
  get inString(): boolean {
    const st = this.st;
    return st === ST_STRING || st === ST_ESCAPE || st === ST_UNICODE;
  }

  /** True once a container deeper than maxDepth was met (scanned but left out of the preview). */
  get depthExceeded(): boolean {
    return this.exceeded;
  }

  /** Total chars consumed: everything pushed up to and including the fragment where an error occurred. */
  get length(): number {
    return this.total;
  }

  /**
   * Feed the next fragment. Work is proportional to `fragment.length` (amortized), never to the
   * total so far. Ignored once in error or after `end()`.
   */
  push(fragment: string): void {
    if (this.st === ST_ERROR || this.ended) return;
    const n = fragment.length;
    if (n === 0) return;
    const base = this.total;
    this.total = base + n;
    let st = this.st;
    let i = 0;
    // Start, within this fragment, of the number being read; a number begun earlier resumes at 0.
    let numFrom = 0;

    scan: while (i < n) {
      switch (st) {
        case ST_STRING: {
          let start = i;
          let c = 0;
          for (;;) {
            while (i < n) {
              c = fragment.charCodeAt(i);
              if (c === 0x22 || c === 0x5c || c < 0x20) break;
              i++;
            }
            // A two-character escape wholly inside this fragment is decoded in place: code in
            // tool arguments escapes every quote and newline, and a trip through ST_ESCAPE per
            // escape cost more than the scan itself.
            if (c !== 0x5c || i + 1 >= n) break;
            const e = fragment.charCodeAt(i + 1);
            const decoded = e < 0x80 ? SIMPLE_ESCAPES[e] : undefined;
            if (decoded === undefined) break;
            if (this.hold !== "") {
              this.appendStr(this.hold);
              this.hold = "";
            }
            this.appendStr(i > start ? fragment.slice(start, i) + decoded : decoded);
            i += 2;
            start = i;
            c = 0;
          }
          if (i === n) {
            let end = n;
            const last = fragment.charCodeAt(n - 1);
            if (last >= 0xd800 && last <= 0xdbff) end = n - 1;
            if (this.hold !== "") {
              this.appendStr(this.hold);
              this.hold = "";
            }
            // The common case, a fragment wholly inside a string, appends the fragment itself:
            // no slice to allocate, only the rope node.
            if (end > start) this.appendStr(start === 0 && end === n ? fragment : fragment.slice(start, end));
            if (end < n) this.hold = fragment.charAt(end);
            break scan;
          }
          // A held high surrogate stays held across a backslash: the escape may be its partner.
          if (this.hold !== "" && (i > start || c === 0x22)) {
            this.appendStr(this.hold);
            this.hold = "";
          }
          if (i > start) this.appendStr(fragment.slice(start, i));
          if (c === 0x22) {
            i++;
            const text = this.takeStr();
            if (this.isKey) {
              (this.frames[this.open - 1] as Frame).key = text;
              st = ST_COLON;
            } else {
              this.completeScalar(text, base + i);
              st = ST_AFTER;
            }
          } else if (c === 0x5c) {
            i++;
            st = ST_ESCAPE;
          } else {
            st = this.fail("Unescaped control character in a string", base + i);
            break scan;
          }
          break;
        }

        case ST_ESCAPE: {
          const c = fragment.charCodeAt(i);
          if (c === 0x75) {
            this.uCount = 0;
            this.uCode = 0;
            i++;
            st = ST_UNICODE;
            break;
          }
          const decoded = escapeValue(c);
          if (decoded === undefined) {
            const shown = c < 0x20 || c === 0x7f ? describeChar(c) : String.fromCharCode(c);
            st = this.fail(`Bad escape \\${shown} in a string`, base + i);
            break scan;
          }
          if (this.hold !== "") {
            this.appendStr(this.hold);
            this.hold = "";
          }
          this.appendStr(decoded);
          i++;
          st = ST_STRING;
          break;
        }

        case ST_UNICODE: {
          let count = this.uCount;
          let code = this.uCode;
          while (i < n && count < 4) {
            const c = fragment.charCodeAt(i);
            const h = hexValue(c);
            if (h < 0) {
              st = this.fail(`Bad Unicode escape in a string: ${describeChar(c)} is not a hex digit`, base + i);
              break scan;
            }
            code = code * 16 + h;
            count++;
            i++;
          }
          if (count < 4) {
            this.uCount = count;
            this.uCode = code;
            break scan;
          }
          if (this.hold !== "") {
            this.appendStr(this.hold);
            this.hold = "";
          }
          const ch = String.fromCharCode(code);
          if (code >= 0xd800 && code <= 0xdbff) this.hold = ch;
          else this.appendStr(ch);
          st = ST_STRING;
          break;
        }

        case ST_NUMBER: {
          let sub = this.numSub;
          let int = this.numInt;
          let digits = this.numDigits;
          while (i < n) {
            const c = fragment.charCodeAt(i);
            if (c >= 0x30 && c <= 0x39) {
              if (sub === N_INT) {
                int = int * 10 + (c - 0x30);
                digits++;
              } else if (sub === N_ZERO) {
                st = this.fail("Leading zeros are not allowed in a number", base + i);
                break scan;
              } else if (sub === N_MINUS) {
                sub = c === 0x30 ? N_ZERO : N_INT;
                int = c - 0x30;
                digits = 1;
              } else if (sub === N_DOT) {
                sub = N_FRAC;
              } else if (sub === N_EXP || sub === N_EXP_SIGN) {
                sub = N_EXP_DIGITS;
              }
              i++;
              continue;
            }
            if (c === 0x2e) {
              if (sub === N_ZERO || sub === N_INT) {
                sub = N_DOT;
                i++;
                continue;
              }
            } else if (c === 0x65 || c === 0x45) {
              if (sub === N_ZERO || sub === N_INT || sub === N_FRAC) {
                sub = N_EXP;
                i++;
                continue;
              }
            } else if (c === 0x2b || c === 0x2d) {
              if (sub === N_EXP) {
                sub = N_EXP_SIGN;
                i++;
                continue;
              }
            }
            // Any other character ends the number; it is then read again as what follows a value.
            if (!isTerminalNumber(sub)) {
              st = this.fail(unterminatedNumberMessage(sub), base + i);
              break scan;
            }
            let value: number;
            if ((sub === N_INT || sub === N_ZERO) && digits <= 15) {
              // Up to 15 digits the arithmetic is exact, so this equals what JSON.parse returns.
              value = this.numNeg ? -int : int;
            } else {
              value = Number(this.numText + fragment.slice(numFrom, i));
            }
            this.numText = "";
            this.completeScalar(value, base + i);
            st = ST_AFTER;
            break;
          }
          this.numSub = sub;
          this.numInt = int;
          this.numDigits = digits;
          break;
        }

        case ST_LITERAL: {
          const lit = this.lit;
          let k = this.litPos;
          while (i < n && k < lit.length) {
            const c = fragment.charCodeAt(i);
            if (c !== lit.charCodeAt(k)) {
              st = this.fail(`Unexpected character ${describeChar(c)} in the literal '${lit}'`, base + i);
              break scan;
            }
            i++;
            k++;
          }
          if (k < lit.length) {
            this.litPos = k;
            break scan;
          }
          this.completeScalar(this.litValue, base + i);
          st = ST_AFTER;
          break;
        }

        case ST_AFTER: {
          const c = fragment.charCodeAt(i);
          if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) {
            i++;
            break;
          }
          const depth = this.open;
          if (depth === 0) {
            if (this.multiple) {
              // Not consumed: the character is read again as the start of the next value.
              st = ST_VALUE;
              break;
            }
            st = this.fail(`Unexpected non-whitespace character ${describeChar(c)} after JSON`, base + i);
            break scan;
          }
          const frame = this.frames[depth - 1] as Frame;
          if (c === 0x2c) {
            i++;
            st = frame.isArray ? ST_VALUE : ST_KEY;
          } else if (frame.isArray ? c === 0x5d : c === 0x7d) {
            i++;
            st = this.closeContainer(base + i);
          } else {
            st = this.fail(
              frame.isArray ? "Expected ',' or ']' after an array element" : "Expected ',' or '}' after a property value",
              base + i,
            );
            break scan;
          }
          break;
        }

        case ST_OBJ_FIRST:
        case ST_KEY: {
          const c = fragment.charCodeAt(i);
          if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) {
            i++;
            break;
          }
          if (c === 0x22) {
            i++;
            this.isKey = true;
            this.clearStr();
            st = ST_STRING;
          } else if (c === 0x7d && st === ST_OBJ_FIRST) {
            i++;
            st = this.closeContainer(base + i);
          } else {
            st = this.fail(
              st === ST_OBJ_FIRST
                ? `Expected a double-quoted property name or '}' but found ${describeChar(c)}`
                : `Expected a double-quoted property name after ',' but found ${describeChar(c)}`,
              base + i,
            );
            break scan;
          }
          break;
        }

        case ST_COLON: {
          const c = fragment.charCodeAt(i);
          if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) {
            i++;
            break;
          }
          if (c !== 0x3a) {
            st = this.fail("Expected ':' after a property name", base + i);
            break scan;
          }
          i++;
          st = ST_VALUE;
          break;
        }

        case ST_VALUE:
        case ST_ARRAY_FIRST: {
          const c = fragment.charCodeAt(i);
          if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) {
            i++;
            break;
          }
          if (c === 0x5d && st === ST_ARRAY_FIRST) {
            i++;
            st = this.closeContainer(base + i);
            break;
          }
          if (c === 0x22) {
            this.beginValue();
            this.isKey = false;
            this.clearStr();
            i++;
            st = ST_STRING;
          } else if (c === 0x7b || c === 0x5b) {
            this.beginValue();
            this.openContainer(c === 0x5b);
            i++;
            st = c === 0x5b ? ST_ARRAY_FIRST : ST_OBJ_FIRST;
          } else if (c === 0x2d || (c >= 0x30 && c <= 0x39)) {
            this.beginValue();
            this.numText = "";
            this.numSub = c === 0x2d ? N_MINUS : c === 0x30 ? N_ZERO : N_INT;
            this.numNeg = c === 0x2d;
            this.numInt = c === 0x2d ? 0 : c - 0x30;
            this.numDigits = c === 0x2d ? 0 : 1;
            numFrom = i;
            i++;
            st = ST_NUMBER;
          } else if (c === 0x74 || c === 0x66 || c === 0x6e) {
            this.beginValue();
            this.lit = c === 0x74 ? "true" : c === 0x66 ? "false" : "null";
            this.litValue = c === 0x74 ? true : c === 0x66 ? false : null;
            this.litPos = 1;
            i++;
            st = ST_LITERAL;
          } else {
            const where = this.open === 0 && this.completed.length === 0 ? "" : " where a value was expected";
            st = this.fail(`Unexpected character ${describeChar(c)}${where}`, base + i);
            break scan;
          }
          break;
        }

        default:
          break scan;
      }
    }

    if (st === ST_ERROR) return;
    this.st = st;
    if (st === ST_NUMBER) {
      this.numText += fragment.slice(numFrom, n);
    } else if (st === ST_STRING || st === ST_ESCAPE || st === ST_UNICODE) {
      if (this.isKey) {
        this.commitStr();
      } else {
        // One write per push: the unfinished string is visible as far as it has been decoded.
        const text = this.peekStr();
        if (this.open === 0) this.current = text;
        else setMember(this.frames[this.open - 1] as Frame, text);
      }
    }
  }

  /**
   * Signal end of input: a top-level number pending at the end is completed (e.g. text "12").
   * Nothing else is invented: an unclosed container or string leaves the state "partial".
   */
  flush(): void {
    if (this.ended) return;
    this.ended = true;
    if (this.st === ST_NUMBER && this.open === 0 && isTerminalNumber(this.numSub)) {
      const text = this.numText;
      this.numText = "";
      this.completeScalar(Number(text), this.total);
      this.st = ST_AFTER;
    }
  }

  /**
   * Pieces decoded within one push gather in `strAcc` (a few small concatenations) and join the
   * string's chunks once per push, in `commitStr`: bookkeeping per piece cost more than the scan.
   */
  private appendStr(piece: string): void {
    this.strAcc += piece;
  }

  private commitStr(): void {
    const piece = this.strAcc;
    if (piece === "") return;
    this.strAcc = "";
    this.strParts.push(piece);
    this.strTail += piece;
    this.strPartsLength += piece.length;
    if (this.strPartsLength >= STRING_CHUNK) {
      this.strHead += this.strParts.join("");
      this.strParts.length = 0;
      this.strPartsLength = 0;
      this.strTail = "";
    }
  }

  /** The string so far, without consuming it: one rope node, no copying. */
  private peekStr(): string {
    this.commitStr();
    return this.strTail === "" ? this.strHead : this.strHead + this.strTail;
  }

  private takeStr(): string {
    // A string that began and ended within this push (keys, short values) is the accumulator itself.
    if (this.strHead === "" && this.strPartsLength === 0) {
      const text = this.strAcc;
      this.strAcc = "";
      return text;
    }
    const text = this.peekStr();
    this.clearStr();
    return text;
  }

  private clearStr(): void {
    this.strHead = "";
    this.strAcc = "";
    this.strParts.length = 0;
    this.strPartsLength = 0;
    this.strTail = "";
  }

  private fail(message: string, position: number): number {
    this.err = { message, position };
    this.st = ST_ERROR;
    this.clearStr();
    this.hold = "";
    this.numText = "";
    return ST_ERROR;
  }

  /** Bookkeeping when a value starts: arrays advance their index, the top level starts afresh. */
  private beginValue(): void {
    const depth = this.open;
    if (depth === 0) {
      this.current = undefined;
      return;
    }
    const parent = this.frames[depth - 1] as Frame;
    if (parent.isArray) parent.index++;
  }

  private openContainer(isArray: boolean): void {
    const depth = this.open;
    let container: Container | null = null;
    if (depth < this.maxDepth) container = isArray ? [] : {};
    else this.exceeded = true;
    if (depth === 0) {
      this.current = container ?? undefined;
    } else {
      const parent = this.frames[depth - 1] as Frame;
      if (container !== null || parent.isArray) setMember(parent, container ?? undefined);
    }
    const slot = this.frames[depth];
    if (slot === undefined) {
      this.frames.push({ isArray, container, key: "", index: -1 });
    } else {
      slot.isArray = isArray;
      slot.container = container;
      slot.key = "";
      slot.index = -1;
    }
    this.open = depth + 1;
  }

  /** Returns the state that follows: a closed container is a value that just ended. */
  private closeContainer(end: number): number {
    const depth = this.open - 1;
    this.open = depth;
    // Drop the reference so a pooled frame does not keep a finished subtree alive on its own.
    (this.frames[depth] as Frame).container = null;
    if (depth === 0) {
      this.completed.push(this.current);
      this.ends.push(end);
    }
    return ST_AFTER;
  }

  private completeScalar(value: unknown, end: number): void {
    const depth = this.open;
    if (depth === 0) {
      this.current = value;
      this.completed.push(value);
      this.ends.push(end);
      return;
    }
    setMember(this.frames[depth - 1] as Frame, value);
  }
}

/** Convenience: scan a whole text; used by finalize to locate syntax errors and split concatenated values. */
export function scanJson(text: string, options?: IncrementalJsonOptions): IncrementalJsonParser {
  const parser = new IncrementalJsonParser(options);
  parser.push(text);
  parser.flush();
  return parser;
}

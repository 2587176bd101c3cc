import { RE2JS } from "re2js";
import { ToolwireError } from "../errors.js";

/**
 * Linear-time matching for every regular expression taken from a schema (`pattern`,
 * `patternProperties`, `propertyNames`). Tool schemas come from MCP servers and other parties the
 * agent does not control, and a backtracking engine (`RegExp`) takes exponential time on patterns
 * such as `(a+)+$`: one schema could stall the agent on every call. Patterns run on RE2 (the
 * `re2js` port, pure JavaScript), whose time is linear in the input.
 *
 * JSON Schema patterns are ECMA-262 regular expressions. Each is first checked with `RegExp` (u
 * flag; compiling never matches, so this costs no backtracking) and then translated so that RE2
 * gives it the ECMA meaning:
 * - `\s` / `\S`: ECMA's whitespace set (Unicode spaces, NBSP, BOM, line separators), not RE2's
 *   ASCII one;
 * - `.`: any code point but `\n`, `\r`, U+2028, U+2029 (RE2's excludes only `\n`);
 * - `[]` matches nothing and `[^]` any code point (RE2 reads `[]…]` as a class holding `]`);
 * - `\uXXXX` (surrogate pairs joined), `\u{…}`, `\cX`, `\0`, `[\b]` become RE2 code point escapes;
 * - `\p{Letter}`, `\p{gc=Lu}`, `\p{Script=Greek}` become RE2's `\p{L}`, `\p{Lu}`, `\p{Greek}`;
 * - named groups become plain groups (only whether a pattern matches is used).
 * `\d`, `\w`, `\b`, `^` and `$` (no multiline: `$` is the end of the input) mean the same in both.
 *
 * What RE2 cannot do in linear time is refused with `UnsupportedPatternError`, never matched with
 * a backtracking engine: backreferences (`\1`, `\k<name>`), lookahead and lookbehind, inline
 * modifier groups (`(?i:…)`: newer engines accept them, and they would change what the translation
 * means), repetition counts above 1000, and Unicode properties re2js lacks (e.g. `Ideographic`,
 * `Script_Extensions`). Unicode tables (categories, scripts) are re2js's and may trail the
 * JavaScript engine's by a Unicode version.
 */

/** A schema pattern RE2 cannot run: the schema cannot be validated in linear time. */
export class UnsupportedPatternError extends ToolwireError {
  constructor(
    /** The pattern as the schema wrote it. */
    readonly pattern: string,
    /** Why, for people: names the feature. */
    readonly reason: string,
  ) {
    super("unsupported_pattern", `The pattern ${JSON.stringify(pattern)} cannot be used: ${reason}. Schema patterns run on a linear-time engine (RE2), which has no backreferences or lookaround.`);
  }
}

/** A compiled schema pattern. `test` searches anywhere in the input, as JSON Schema's `pattern` does. */
export interface LinearRegExp {
  readonly source: string;
  test(input: string): boolean;
  toString(): string;
}

/** ECMA-262 WhiteSpace and LineTerminator code points, as RE2 class ranges. */
const WHITESPACE = "\\x{9}-\\x{D}\\x{20}\\x{A0}\\x{1680}\\x{2000}-\\x{200A}\\x{2028}\\x{2029}\\x{202F}\\x{205F}\\x{3000}\\x{FEFF}";
/** Every other code point. */
const NOT_WHITESPACE =
  "\\x{0}-\\x{8}\\x{E}-\\x{1F}\\x{21}-\\x{9F}\\x{A1}-\\x{167F}\\x{1681}-\\x{1FFF}\\x{200B}-\\x{2027}\\x{202A}-\\x{202E}\\x{2030}-\\x{205E}\\x{2060}-\\x{2FFF}\\x{3001}-\\x{FEFE}\\x{FF00}-\\x{10FFFF}";
const DOT = "[^\\n\\r\\x{2028}\\x{2029}]";
const ANY = "\\x{0}-\\x{10FFFF}";
const MAX_REPEAT = 1000;

/** ECMA General_Category long names and aliases → RE2's short names. */
const CATEGORY: Record<string, string> = {
  Letter: "L",
  Cased_Letter: "LC",
  Uppercase_Letter: "Lu",
  Lowercase_Letter: "Ll",
  Titlecase_Letter: "Lt",
  Modifier_Letter: "Lm",
  Other_Letter: "Lo",
  Mark: "M",
  Combining_Mark: "M",
  Nonspacing_Mark: "Mn",
  Spacing_Mark: "Mc",
  Enclosing_Mark: "Me",
  Number: "N",
  Decimal_Number: "Nd",
  digit: "Nd",
  Letter_Number: "Nl",
  Other_Number: "No",
  Punctuation: "P",
  punct: "P",
  Connector_Punctuation: "Pc",
  Dash_Punctuation: "Pd",
  Open_Punctuation: "Ps",
  Close_Punctuation: "Pe",
  Initial_Punctuation: "Pi",
  Final_Punctuation: "Pf",
  Other_Punctuation: "Po",
  Symbol: "S",
  Math_Symbol: "Sm",
  Currency_Symbol: "Sc",
  Modifier_Symbol: "Sk",
  Other_Symbol: "So",
  Separator: "Z",
  Space_Separator: "Zs",
  Line_Separator: "Zl",
  Paragraph_Separator: "Zp",
  Other: "C",
  Control: "Cc",
  cntrl: "Cc",
  Format: "Cf",
  Surrogate: "Cs",
  Private_Use: "Co",
  Unassigned: "Cn",
};

class Refused extends Error {}

function refuse(reason: string): never {
  throw new Refused(reason);
}

function hex(codePoint: number): string {
  return `\\x{${codePoint.toString(16).toUpperCase()}}`;
}

/** An escape's meaning: one code point, a class (with its forms outside and inside `[...]`), or an assertion. */
type Atom = { kind: "char"; codePoint: number } | { kind: "class"; outside: string; inside: string } | { kind: "assertion"; text: string };

/** One left-to-right pass over a pattern already known to be valid ECMA-262 (u flag). */
class Translator {
  private i = 0;
  private out = "";

  constructor(private readonly src: string) {}

  run(): string {
    const src = this.src;
    while (this.i < src.length) {
      const ch = src[this.i]!;
      if (ch === "\\") {
        const atom = this.escape(false);
        this.out += atom.kind === "char" ? hex(atom.codePoint) : atom.kind === "class" ? atom.outside : atom.text;
      } else if (ch === "[") this.out += this.charClass();
      else if (ch === ".") {
        this.out += DOT;
        this.i++;
      } else if (ch === "(") this.group();
      else if (ch === "{") this.repeat();
      else {
        this.out += ch;
        this.i++;
      }
    }
    return this.out;
  }

  private group(): void {
    const src = this.src;
    if (src.startsWith("(?=", this.i) || src.startsWith("(?!", this.i)) refuse("it uses lookahead ((?= or (?!)");
    if (src.startsWith("(?<=", this.i) || src.startsWith("(?<!", this.i)) refuse("it uses lookbehind ((?<= or (?<!)");
    // ES2025 modifier groups ((?i:…), (?s:…)) would change what the translation of `.`, `\s` or
    // `^` means inside them; only engines newer than Node 20 accept them at all.
    if (src.startsWith("(?", this.i) && !src.startsWith("(?:", this.i) && !src.startsWith("(?<", this.i)) refuse("it uses an inline modifier group ((?i:…), (?s:…))");
    if (src.startsWith("(?<", this.i)) {
      // A named group: the name only matters for captures, which schema validation never reads.
      this.out += "(?:";
      this.i = src.indexOf(">", this.i) + 1;
      return;
    }
    this.out += "(";
    this.i++;
  }

  private repeat(): void {
    const end = this.src.indexOf("}", this.i);
    const body = this.src.slice(this.i + 1, end);
    for (const count of body.split(",")) {
      if (count !== "" && Number(count) > MAX_REPEAT) refuse(`the repetition count ${count} is above ${MAX_REPEAT}, RE2's limit`);
    }
    this.out += this.src.slice(this.i, end + 1);
    this.i = end + 1;
  }

  private charClass(): string {
    const src = this.src;
    this.i++;
    const negated = src[this.i] === "^";
    if (negated) this.i++;
    if (src[this.i] === "]") {
      this.i++;
      // ECMA's empty class matches nothing and its negation any code point.
      return negated ? `[${ANY}]` : `[^${ANY}]`;
    }
    let body = "";
    while (this.i < src.length && src[this.i] !== "]") {
      const first = this.classAtom();
      if (first.kind === "char" && src[this.i] === "-" && src[this.i + 1] !== "]" && this.i + 1 < src.length) {
        this.i++;
        const last = this.classAtom();
        if (last.kind !== "char") refuse("a class range ends in a class escape");
        body += `${hex(first.codePoint)}-${hex(last.codePoint)}`;
      } else body += first.kind === "char" ? hex(first.codePoint) : first.kind === "class" ? first.inside : refuse("an assertion inside a character class");
    }
    this.i++;
    return `[${negated ? "^" : ""}${body}]`;
  }

  private classAtom(): Atom {
    if (this.src[this.i] === "\\") return this.escape(true);
    const codePoint = this.src.codePointAt(this.i)!;
    this.i += codePoint > 0xffff ? 2 : 1;
    return { kind: "char", codePoint };
  }

  /** Reads the escape at `i` (a backslash) and moves past it. */
  private escape(inClass: boolean): Atom {
    const src = this.src;
    const letter = src[this.i + 1] ?? "";
    this.i += 2;
    const char = (codePoint: number): Atom => ({ kind: "char", codePoint });
    switch (letter) {
      case "d":
      case "D":
      case "w":
      case "W":
        return { kind: "class", outside: `\\${letter}`, inside: `\\${letter}` };
      case "s":
        return { kind: "class", outside: `[${WHITESPACE}]`, inside: WHITESPACE };
      case "S":
        return { kind: "class", outside: `[^${WHITESPACE}]`, inside: NOT_WHITESPACE };
      case "b":
        return inClass ? char(8) : { kind: "assertion", text: "\\b" };
      case "B":
        return { kind: "assertion", text: "\\B" };
      case "t":
        return char(9);
      case "n":
        return char(10);
      case "v":
        return char(11);
      case "f":
        return char(12);
      case "r":
        return char(13);
      case "0":
        return char(0);
      case "c":
        this.i++;
        return char(src.charCodeAt(this.i - 1) % 32);
      case "x":
        this.i += 2;
        return char(parseInt(src.slice(this.i - 2, this.i), 16));
      case "u":
        return char(this.unicodeEscape());
      case "k":
        return refuse("it uses a backreference (\\k<name>)");
      case "p":
      case "P":
        return this.property(letter === "P");
      default:
        if (letter >= "1" && letter <= "9") refuse(`it uses a backreference (\\${letter})`);
        // An identity escape of a syntax character (`\.`, `\/`, `\-`…).
        return char(letter.codePointAt(0) ?? 0x5c);
    }
  }

  /** After `\u`: `{hex}`, or four hex digits (two escapes of a surrogate pair make one code point). */
  private unicodeEscape(): number {
    const src = this.src;
    if (src[this.i] === "{") {
      const end = src.indexOf("}", this.i);
      const value = parseInt(src.slice(this.i + 1, end), 16);
      this.i = end + 1;
      return value;
    }
    const high = parseInt(src.slice(this.i, this.i + 4), 16);
    this.i += 4;
    if (high >= 0xd800 && high <= 0xdbff && src.startsWith("\\u", this.i) && /^[0-9a-fA-F]{4}$/.test(src.slice(this.i + 2, this.i + 6))) {
      const low = parseInt(src.slice(this.i + 2, this.i + 6), 16);
      if (low >= 0xdc00 && low <= 0xdfff) {
        this.i += 6;
        return (high - 0xd800) * 0x400 + (low - 0xdc00) + 0x10000;
      }
    }
    return high;
  }

  private property(negated: boolean): Atom {
    const src = this.src;
    const end = src.indexOf("}", this.i);
    const body = src.slice(this.i + 1, end);
    this.i = end + 1;
    const [key, value] = body.includes("=") ? (body.split("=", 2) as [string, string]) : [null, body];
    let name: string;
    if (key === null) {
      if (value === "ASCII") return negated ? { kind: "class", outside: "[^\\x{0}-\\x{7F}]", inside: "\\x{80}-\\x{10FFFF}" } : { kind: "class", outside: "[\\x{0}-\\x{7F}]", inside: "\\x{0}-\\x{7F}" };
      name = CATEGORY[value] ?? value;
    } else if (key === "General_Category" || key === "gc") name = CATEGORY[value] ?? value;
    else if (key === "Script" || key === "sc") name = value;
    else refuse(`RE2 has no Unicode property ${key}`);
    const text = `\\${negated ? "P" : "p"}{${name}}`;
    return { kind: "class", outside: text, inside: text };
  }
}

/**
 * The RE2 form of an ECMA-262 pattern, or why there is none. Linear in the pattern's length.
 * Exposed for tests and tools; schema validation uses `compilePattern`.
 */
export function translatePattern(source: string): { ok: true; source: string } | { ok: false; reason: string } {
  try {
    new RegExp(source, "u");
  } catch (error) {
    return { ok: false, reason: `it is not a valid ECMA-262 regular expression (${error instanceof Error ? error.message : String(error)})` };
  }
  try {
    const translated = new Translator(source).run();
    RE2JS.compile(translated);
    return { ok: true, source: translated };
  } catch (error) {
    if (error instanceof Refused) return { ok: false, reason: error.message };
    const message = error instanceof Error ? error.message.replace(/^error parsing regexp: /, "") : String(error);
    return { ok: false, reason: `RE2 cannot compile it (${message})` };
  }
}

const MAX_CACHED = 1024;
const cache = new Map<string, LinearRegExp | UnsupportedPatternError>();

/**
 * Compiles a schema pattern for linear-time matching, cached (the same MCP schemas come back every
 * turn). Throws `UnsupportedPatternError` for a pattern RE2 cannot run.
 */
export function compilePattern(source: string): LinearRegExp {
  let entry = cache.get(source);
  if (entry === undefined) {
    entry = build(source);
    if (cache.size >= MAX_CACHED) cache.delete(cache.keys().next().value as string);
    cache.set(source, entry);
  }
  if (entry instanceof UnsupportedPatternError) throw entry;
  return entry;
}

function build(source: string): LinearRegExp | UnsupportedPatternError {
  const translated = translatePattern(source);
  if (!translated.ok) return new UnsupportedPatternError(source, translated.reason);
  const re = RE2JS.compile(translated.source);
  return {
    source,
    test: (input: string) => re.test(input),
    // ajv keys its compiled patterns by this string: it must differ between patterns.
    toString: () => `re2:${JSON.stringify(source)}`,
  };
}

/** Why `source` cannot be a schema pattern here, or null when it can. */
export function patternProblem(source: string): string | null {
  try {
    compilePattern(source);
    return null;
  } catch (error) {
    if (error instanceof UnsupportedPatternError) return error.reason;
    throw error;
  }
}

/**
 * ajv's `code.regExp` engine: ajv calls it with each schema pattern and the flags `"u"`. The `code`
 * string is only read by ajv's standalone code generation, which toolwire does not use.
 */
export const linearRegExpEngine = Object.assign(
  (pattern: string, flags: string): LinearRegExp => {
    if (flags !== "u" && flags !== "") throw new UnsupportedPatternError(pattern, `the regular expression flags ${JSON.stringify(flags)} are not supported`);
    return compilePattern(pattern);
  },
  { code: "toolwire.linearRegExpEngine" },
);

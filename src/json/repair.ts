import { jsonrepair } from "jsonrepair";
import type { RepairCode } from "../types.js";
import { isPlainObject } from "./shape.js";

/**
 * Gated syntax repair for the arguments of a call the provider marked complete. Each fix is a
 * named, narrow transformation tried in order; jsonrepair is the last resort. A repair is only
 * accepted when the result parses to a JSON object, and only a lossless one yields arguments: it
 * may quote, escape, drop a trailing comma, a fence or a special-token tail, write Python literals
 * as JSON, or add the outer object's missing closing brace, but never drop, invent or reorder a
 * token the model wrote. Text that is cut off (an unterminated string or a container still open
 * inside the object) is never "repaired": that would invent content.
 */

export interface RepairOutcome {
  value: Record<string, unknown>;
  repairs: RepairCode[];
}

interface NamedFix {
  code: RepairCode;
  apply(text: string): string;
}

const FENCE = "```";

function stripCodeFence(text: string): string {
  const trimmed = text.trim();
  if (!trimmed.startsWith(FENCE) || !trimmed.endsWith(FENCE) || trimmed.length < 6) return text;
  const firstNewline = trimmed.indexOf("\n");
  if (firstNewline < 0) return trimmed.slice(3, -3);
  // The info string (```json) runs to the first newline.
  return trimmed.slice(firstNewline + 1, -3);
}

/** Chat-template tokens that leak around tool arguments on local servers (gpt-oss, Qwen, DeepSeek, Hermes). */
const SPECIAL_TOKENS = [
  "<|call|>",
  "<|end|>",
  "<|im_end|>",
  "<|eot_id|>",
  "<|eom_id|>",
  "<|tool_call_end|>",
  "<|tool_calls_section_end|>",
  "</tool_call>",
  "<tool_call>",
  "<|tool_call_begin|>",
  "<|tool_call_argument_begin|>",
  "<｜tool▁call▁end｜>",
  "<｜tool▁calls▁end｜>",
  "<｜end▁of▁sentence｜>",
];

function stripSpecialTokens(text: string): string {
  let out = text.trim();
  let changed = true;
  while (changed) {
    changed = false;
    for (const token of SPECIAL_TOKENS) {
      if (out.endsWith(token)) {
        out = out.slice(0, -token.length).trimEnd();
        changed = true;
      }
      if (out.startsWith(token)) {
        out = out.slice(token.length).trimStart();
        changed = true;
      }
    }
  }
  return out === text.trim() ? text : out;
}

/**
 * Rewrites the text outside of double-quoted strings, so that fixes never touch string contents.
 * `visit` looks at one position and returns a replacement and where to continue, or null to keep
 * the character; unchanged runs are copied as slices (the scan is linear, one pass).
 */
function mapOutsideStrings(text: string, visit: (text: string, i: number) => [string, number] | null): string {
  const out: string[] = [];
  let runStart = 0;
  let i = 0;
  while (i < text.length) {
    if (text.charCodeAt(i) === 0x22) {
      let j = i + 1;
      while (j < text.length && text.charCodeAt(j) !== 0x22) j += text.charCodeAt(j) === 0x5c ? 2 : 1;
      i = j + 1;
      continue;
    }
    const hit = visit(text, i);
    if (hit === null) {
      i++;
      continue;
    }
    out.push(text.slice(runStart, i), hit[0]);
    i = hit[1];
    runStart = i;
  }
  if (out.length === 0) return text;
  out.push(text.slice(runStart));
  return out.join("");
}

const PYTHON_LITERALS: ReadonlyArray<readonly [string, string]> = [
  ["True", "true"],
  ["False", "false"],
  ["None", "null"],
];

function isIdentChar(ch: string | undefined): boolean {
  return ch !== undefined && /[A-Za-z0-9_]/.test(ch);
}

function replacePythonLiterals(text: string): string {
  if (!text.includes("True") && !text.includes("False") && !text.includes("None")) return text;
  return mapOutsideStrings(text, (src, i) => {
    const ch = src[i];
    if (ch !== "T" && ch !== "F" && ch !== "N") return null;
    for (const [python, json] of PYTHON_LITERALS) {
      if (src.startsWith(python, i) && !isIdentChar(src[i - 1]) && !isIdentChar(src[i + python.length])) return [json, i + python.length];
    }
    return null;
  });
}

const VALID_ESCAPES = new Set(['"', "\\", "/", "b", "f", "n", "r", "t", "u"]);

/** `\d`, `\H`, `C:\Users`: a backslash before a character JSON does not escape is meant literally. */
function escapeInvalidBackslashes(text: string): string {
  let out = "";
  let inString = false;
  let runStart = 0;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (!inString) {
      if (ch === '"') inString = true;
      continue;
    }
    if (ch === '"') {
      inString = false;
      continue;
    }
    if (ch === "\\") {
      const next = text[i + 1];
      const isValid = next !== undefined && VALID_ESCAPES.has(next) && (next !== "u" || /^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6)));
      if (!isValid) {
        out += text.slice(runStart, i) + "\\\\";
        runStart = i + 1;
      } else {
        i++;
      }
    }
  }
  return runStart === 0 ? text : out + text.slice(runStart);
}

function removeTrailingCommas(text: string): string {
  if (!text.includes(",")) return text;
  return mapOutsideStrings(text, (src, i) => {
    if (src[i] !== ",") return null;
    let j = i + 1;
    while (j < src.length && /\s/.test(src[j] as string)) j++;
    return src[j] === "}" || src[j] === "]" ? ["", i + 1] : null;
  });
}

/**
 * Single-quoted strings (a Python repr) rewritten with double quotes, content unchanged. A quote
 * opens a string only where a value or key may start (after `{ [ , :`), so an apostrophe inside a
 * bare word is left alone; an unterminated one leaves the text as it was.
 */
function requoteSingleQuoted(text: string): string {
  const out: string[] = [];
  let i = 0;
  let runStart = 0;
  let boundary = true;
  let changed = false;
  while (i < text.length) {
    const ch = text[i] as string;
    if (ch === '"') {
      let j = i + 1;
      while (j < text.length && text[j] !== '"') j += text[j] === "\\" ? 2 : 1;
      i = j + 1;
      boundary = false;
      continue;
    }
    if (ch === "'" && boundary) {
      let j = i + 1;
      let body = "";
      let bodyStart = j;
      while (j < text.length && text[j] !== "'") {
        const c = text[j];
        if (c === "\\" && text[j + 1] === "'") {
          body += `${text.slice(bodyStart, j)}'`;
          j += 2;
          bodyStart = j;
        } else if (c === "\\") {
          j += 2;
        } else if (c === '"') {
          body += `${text.slice(bodyStart, j)}\\"`;
          j++;
          bodyStart = j;
        } else j++;
      }
      if (j >= text.length) return text;
      body += text.slice(bodyStart, j);
      out.push(text.slice(runStart, i), `"${body}"`);
      changed = true;
      i = j + 1;
      runStart = i;
      boundary = false;
      continue;
    }
    if (ch === "{" || ch === "[" || ch === "," || ch === ":") boundary = true;
    else if (ch !== " " && ch !== "\t" && ch !== "\n" && ch !== "\r") boundary = false;
    i++;
  }
  if (!changed) return text;
  out.push(text.slice(runStart));
  return out.join("");
}

/**
 * The outer object's closing brace, when it is all a complete call lacks: outside any string, only
 * the outer object open, and the text ends right after a value (never after `:`, `,` or `{`,
 * which would mean a member was still coming).
 */
function closeOuterBrace(text: string): string {
  let depth = 0;
  let inString = false;
  let last = "";
  for (let i = 0; i < text.length; i++) {
    const ch = text.charCodeAt(i);
    if (inString) {
      if (ch === 0x5c) i++;
      else if (ch === 0x22) {
        inString = false;
        last = '"';
      }
      continue;
    }
    if (ch === 0x22) inString = true;
    else if (ch === 0x7b || ch === 0x5b) depth++;
    else if (ch === 0x7d || ch === 0x5d) depth--;
    if (ch !== 0x20 && ch !== 0x09 && ch !== 0x0a && ch !== 0x0d && ch !== 0x22) last = text[i] as string;
    if (depth <= 0 && i < text.length - 1 && ch === 0x7d) return text;
  }
  if (inString || depth !== 1 || text.trimStart()[0] !== "{") return text;
  // After a closer the missing brace might be an inner one (`{"a":{"b":1,"c":2}`): ambiguous, refused.
  if (last === "" || last === ":" || last === "," || last === "{" || last === "[" || last === "}" || last === "]") return text;
  return `${text.trimEnd()}}`;
}

/** Named fixes, in the order they are tried. Each is lossless: it changes no token the model wrote. */
const FIXES: NamedFix[] = [
  { code: "strip_code_fence", apply: stripCodeFence },
  { code: "strip_special_tokens", apply: stripSpecialTokens },
  // Before the fixes that only know double-quoted strings, so that they never touch this content.
  { code: "single_quotes", apply: requoteSingleQuoted },
  { code: "python_literals", apply: replacePythonLiterals },
  { code: "invalid_escapes", apply: escapeInvalidBackslashes },
  { code: "missing_closing_brace", apply: closeOuterBrace },
  { code: "trailing_comma", apply: removeTrailingCommas },
];

function tryParseObject(text: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return isPlainObject(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

/**
 * True when the text ends inside a string or with containers still open, ignoring syntax errors
 * elsewhere: the signature of a cut-off stream, which no repair may complete.
 */
export function looksCutOff(text: string): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text.charCodeAt(i);
    if (inString) {
      if (ch === 0x5c) i++;
      else if (ch === 0x22) inString = false;
      continue;
    }
    if (ch === 0x22) inString = true;
    else if (ch === 0x7b || ch === 0x5b) depth++;
    else if (ch === 0x7d || ch === 0x5d) depth--;
  }
  return inString || depth > 0;
}

/**
 * `looksCutOff` over lenient tokens: single-quoted strings count as strings, so a brace inside
 * one opens nothing. An unterminated string of either kind is a cut.
 */
function cutOffTokens(text: string): boolean {
  // The tokenizer's reading without its tokens: a quote of either kind always opens a string.
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const ch = text.charCodeAt(i);
    if (ch === 0x22 || ch === 0x27) {
      let j = i + 1;
      while (j < text.length && text.charCodeAt(j) !== ch) j += text.charCodeAt(j) === 0x5c ? 2 : 1;
      if (j >= text.length) return true;
      i = j;
    } else if (ch === 0x7b || ch === 0x5b) depth++;
    else if (ch === 0x7d || ch === 0x5d) depth--;
  }
  return depth > 0;
}

/** A repair that keeps every token the model wrote: its value may be executed. */
export interface LosslessRepair {
  kind: "lossless";
  value: Record<string, unknown>;
  repairs: RepairCode[];
}

/** A repair that would drop, invent or reorder tokens: only ever a suggestion. */
export interface LossyRepair {
  kind: "lossy";
  suggestion: Record<string, unknown>;
  /** What the repair would change, for the message. */
  reason: string;
}

/**
 * Repairs a complete call's argument text. Lossless fixes (FIXES, and a jsonrepair rewrite whose
 * tokens are verified to be the original's modulo lossless edits) give `lossless`; a jsonrepair
 * rewrite that changes tokens gives `lossy` with the candidate; otherwise undefined.
 */
export function classifyRepair(text: string): LosslessRepair | LossyRepair | undefined {
  let current = text;
  const repairs: RepairCode[] = [];
  for (const fix of FIXES) {
    const next = fix.apply(current);
    if (next === current) continue;
    current = next;
    repairs.push(fix.code);
    const value = tryParseObject(current);
    if (value) return { kind: "lossless", value, repairs };
  }
  if (cutOffTokens(current)) return undefined;
  let repaired: string;
  try {
    repaired = jsonrepair(current);
  } catch {
    return undefined;
  }
  const value = tryParseObject(repaired);
  if (!value) return undefined;
  const difference = tokenDifference(current, repaired);
  if (difference === null) return { kind: "lossless", value, repairs: [...repairs, "jsonrepair"] };
  return { kind: "lossy", suggestion: value, reason: difference };
}

/** The lossless repair of `text`, or undefined (a lossy candidate is never returned here). */
export function repairArguments(text: string): { value: Record<string, unknown>; repairs: RepairCode[] } | undefined {
  const outcome = classifyRepair(text);
  return outcome?.kind === "lossless" ? { value: outcome.value, repairs: outcome.repairs } : undefined;
}

// ---------------------------------------------------------------------------------------------
// Losslessness: a token-level comparison of the text as sent and jsonrepair's rewrite.

type TokenKind = "punct" | "string" | "word";

interface Token {
  kind: TokenKind;
  /** Punctuation character, decoded string content, or the word as written. */
  text: string;
  /** Character offset in the scanned text. */
  at: number;
}

const PUNCT = new Set(["{", "}", "[", "]", ":", ","]);
const SIMPLE_ESCAPES: Record<string, string> = { '"': '"', "\\": "\\", "/": "/", b: "\b", f: "\f", n: "\n", r: "\r", t: "\t" };

/**
 * Lenient linear tokenizer: punctuation, double- or single-quoted strings (decoded; an escape JSON
 * does not know keeps its backslash, as the invalid_escapes fix reads it), and words (anything
 * else up to a delimiter). Returns null for an unterminated string.
 */
function tokenize(text: string): Token[] | null {
  const tokens: Token[] = [];
  let i = 0;
  while (i < text.length) {
    const ch = text[i] as string;
    if (ch === " " || ch === "\t" || ch === "\n" || ch === "\r") {
      i++;
      continue;
    }
    if (PUNCT.has(ch)) {
      tokens.push({ kind: "punct", text: ch, at: i });
      i++;
      continue;
    }
    if (ch === '"' || ch === "'") {
      const at = i;
      let out = "";
      let runStart = ++i;
      let closed = false;
      while (i < text.length) {
        const c = text[i] as string;
        if (c === ch) {
          out += text.slice(runStart, i);
          closed = true;
          i++;
          break;
        }
        if (c !== "\\") {
          i++;
          continue;
        }
        out += text.slice(runStart, i);
        const next = text[i + 1];
        if (next === undefined) return null;
        if (next === "u" && /^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6))) {
          out += String.fromCharCode(parseInt(text.slice(i + 2, i + 6), 16));
          i += 6;
        } else if (next in SIMPLE_ESCAPES) {
          out += SIMPLE_ESCAPES[next] as string;
          i += 2;
        } else if (next === "'" && ch === "'") {
          out += "'";
          i += 2;
        } else {
          out += `\\${next}`;
          i += 2;
        }
        runStart = i;
      }
      if (!closed) return null;
      tokens.push({ kind: "string", text: out, at });
      continue;
    }
    const at = i;
    while (i < text.length) {
      const c = text[i] as string;
      if (c === " " || c === "\t" || c === "\n" || c === "\r" || c === '"' || c === "'" || PUNCT.has(c)) break;
      i++;
    }
    tokens.push({ kind: "word", text: text.slice(at, i), at });
  }
  return tokens;
}

const JSON_NUMBER = /^-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?$/;
const LITERALS: Record<string, string> = { true: "true", false: "false", null: "null", True: "true", False: "false", None: "null" };

/** A token's meaning: words that are numbers or literals stay themselves, other words are bare strings. */
function meaning(token: Token): string {
  if (token.kind === "punct") return `p${token.text}`;
  if (token.kind === "string") return `s${token.text}`;
  const literal = Object.hasOwn(LITERALS, token.text) ? LITERALS[token.text] : undefined;
  if (literal !== undefined) return `l${literal}`;
  if (JSON_NUMBER.test(token.text)) return `n${token.text}`;
  return `s${token.text}`;
}

/**
 * Null when `candidate` has exactly the tokens of `raw`, modulo the lossless edits: quoting a bare
 * word, requoting or re-escaping a string with the same content, writing a Python literal as
 * JSON, and dropping a comma before `}` or `]`. Otherwise a description of the first difference.
 */
export function tokenDifference(raw: string, candidate: string): string | null {
  const a = tokenize(raw);
  const b = tokenize(candidate);
  if (!a || !b) return "a string is not terminated";
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    const x = a[i];
    const y = b[j];
    if (x && x.kind === "punct" && x.text === "," && (a[i + 1]?.text === "}" || a[i + 1]?.text === "]") && a[i + 1]?.kind === "punct" && !(y?.kind === "punct" && y.text === ",")) {
      i++;
      continue;
    }
    if (!x) return `it adds ${JSON.stringify(describe(y as Token))} after the end of the text`;
    if (!y) return `it drops ${JSON.stringify(describe(x))} at character ${x.at}`;
    if (meaning(x) !== meaning(y)) {
      return `it writes ${JSON.stringify(describe(y))} where the text has ${JSON.stringify(describe(x))} (character ${x.at})`;
    }
    i++;
    j++;
  }
  return null;
}

function describe(token: Token): string {
  const text = token.kind === "string" ? JSON.stringify(token.text) : token.text;
  return text.length > 40 ? `${text.slice(0, 40)}…` : text;
}

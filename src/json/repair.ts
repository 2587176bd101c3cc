import { jsonrepair } from "jsonrepair";
import type { RepairCode } from "../types.js";
import { isPlainObject } from "./equal.js";

/**
 * Gated syntax repair for the arguments of a call the provider marked complete. Each fix is a
 * named, narrow transformation tried in order; jsonrepair is the last resort. A repair is only
 * accepted when the result parses to a JSON object. Text that is merely cut off (an unterminated
 * string or unclosed container at the end) is never "repaired": that would invent content.
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
 * Rewrites the text outside of double-quoted strings, one character at a time, so that fixes
 * never touch string contents.
 */
function mapOutsideStrings(text: string, visit: (text: string, i: number, out: string[]) => number): string {
  const out: string[] = [];
  let i = 0;
  while (i < text.length) {
    const ch = text[i] as string;
    if (ch === '"') {
      let j = i + 1;
      while (j < text.length && text[j] !== '"') j += text[j] === "\\" ? 2 : 1;
      out.push(text.slice(i, j + 1));
      i = j + 1;
      continue;
    }
    i = visit(text, i, out);
  }
  return out.join("");
}

const PYTHON_LITERALS: Record<string, string> = { True: "true", False: "false", None: "null" };

function isIdentChar(ch: string | undefined): boolean {
  return ch !== undefined && /[A-Za-z0-9_]/.test(ch);
}

function replacePythonLiterals(text: string): string {
  return mapOutsideStrings(text, (src, i, out) => {
    for (const [python, json] of Object.entries(PYTHON_LITERALS)) {
      if (src.startsWith(python, i) && !isIdentChar(src[i - 1]) && !isIdentChar(src[i + python.length])) {
        out.push(json);
        return i + python.length;
      }
    }
    out.push(src[i] as string);
    return i + 1;
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
  return mapOutsideStrings(text, (src, i, out) => {
    const ch = src[i] as string;
    if (ch === ",") {
      let j = i + 1;
      while (j < src.length && /\s/.test(src[j] as string)) j++;
      if (src[j] === "}" || src[j] === "]") return i + 1;
    }
    out.push(ch);
    return i + 1;
  });
}

const FIXES: NamedFix[] = [
  { code: "strip_code_fence", apply: stripCodeFence },
  { code: "strip_special_tokens", apply: stripSpecialTokens },
  { code: "python_literals", apply: replacePythonLiterals },
  { code: "invalid_escapes", apply: escapeInvalidBackslashes },
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

export function repairArguments(text: string): RepairOutcome | undefined {
  let current = text;
  const repairs: RepairCode[] = [];
  for (const fix of FIXES) {
    const next = fix.apply(current);
    if (next === current) continue;
    current = next;
    repairs.push(fix.code);
    const value = tryParseObject(current);
    if (value) return { value, repairs };
  }
  if (looksCutOff(current)) return undefined;
  let repaired: string;
  try {
    repaired = jsonrepair(current);
  } catch {
    return undefined;
  }
  const value = tryParseObject(repaired);
  if (!value) return undefined;
  return { value, repairs: [...repairs, "jsonrepair"] };
}

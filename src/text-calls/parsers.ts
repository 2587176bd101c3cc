import type { ParamKind } from "./options.js";
import { decodeJsonStringBody, expectAfterWs, isWs, JsonValueTracker, matchAt, PARTIAL, skipWs } from "./scan.js";
import type { TextCallSyntaxName } from "./syntaxes.js";

/**
 * What a call parser may do while it reads: the extractor (extractor.ts) implements it.
 * Positions passed to `mark` index the string being fed.
 */
export interface ParseContext {
  /** Opens a call; false when the name is not allowed (the parser must then reject). */
  open(name: string, syntax: TextCallSyntaxName): boolean;
  args(fragment: string): void;
  /**
   * The open call's markup closed: the call is formed. With `group`, it is passed on only when the
   * parser finishes (a pythonic list is one unit: a later error in it makes all of it text).
   */
  close(group?: boolean): void;
  /** The open call's markup broke off before its end: no call; its text is released as text. */
  broken(): void;
  /** Text from `position` on is no longer part of a finished call: a later reject re-emits it as text. */
  mark(position: number): void;
  /** The text read since the last mark, up to `position`, is not a call: it is passed on as text. */
  release(position: number): void;
  /** How the open call's parameter is typed by the caller's tool schema. */
  paramKind(key: string): ParamKind;
  diagnostic(code: string, message: string, data?: unknown): void;
  has(syntax: TextCallSyntaxName): boolean;
}

/**
 * Streams a call's JSON arguments value: the part of `s` from `i` that belongs to it goes to the
 * call, and the call is closed as complete where the value ends. Returns the position after the
 * value, or -1 when the value goes on past `s` (the caller then asks for more text).
 */
function streamJsonArguments(tracker: JsonValueTracker, s: string, i: number, x: ParseContext): number {
  const end = tracker.feed(s, i);
  x.args(end < 0 ? s.slice(i) : s.slice(i, end));
  if (end >= 0 && !tracker.partial) x.close();
  return end;
}

/**
 * "more": needs more text from the returned position (the rest is held back);
 * "done": finished, plain text resumes at the returned position;
 * "reject": not a call after all (or not an allowed one): the text read since the last mark is
 * emitted as text and scanning resumes at the returned position.
 */
export type ParseStatus = "more" | "done" | "reject";

export abstract class CallParser {
  status: ParseStatus = "more";
  abstract feed(s: string, i: number, x: ParseContext): number;

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
}

/** Longest name, key or call id read in a header; longer means "not a call". */
const MAX_NAME = 256;

/** Reads characters up to a terminator literal; names never contain a newline. */
class Until {
  text = "";
  constructor(
    private readonly terminators: readonly string[],
    private readonly limit = MAX_NAME,
    private readonly stopAtNewline = true,
  ) {}

  /**
   * `{end, which}` once a terminator matched (end = position after it), `{more: at}` when the text
   * ends inside a possible terminator or simply ends, `{fail: at}` when the token is too long or
   * hits a newline.
   */
  feed(s: string, i: number): { end: number; which: number } | { more: number } | { fail: number } {
    let k = i;
    while (k < s.length) {
      const c = s.charCodeAt(k);
      if (c === 10 && this.stopAtNewline) return { fail: k };
      for (let w = 0; w < this.terminators.length; w++) {
        const t = this.terminators[w] as string;
        if (c !== t.charCodeAt(0)) continue;
        const end = matchAt(s, k, t);
        if (end >= 0) {
          this.text += s.slice(i, k);
          return { end, which: w };
        }
        if (end === PARTIAL) {
          this.text += s.slice(i, k);
          return { more: k };
        }
      }
      k++;
      if (this.text.length + (k - i) > this.limit) return { fail: k };
    }
    this.text += s.slice(i, k);
    return { more: k };
  }
}

// ---- the JSON envelope: {"name": …, "arguments": {…}} ----------------------------------------

const enum E {
  Start,
  KeyOrEnd,
  Key,
  KeyBody,
  Colon,
  ValueStart,
  Name,
  TypeBody,
  Args,
  Skip,
  After,
}

export type EnvelopeResult = "more" | "end" | "reject" | "broken";

/**
 * `{"name": "f", "arguments": {…}}` read incrementally: the call opens when its arguments begin
 * (the name must come first), the arguments stream as they arrive, other keys are skipped.
 */
export class Envelope {
  result: EnvelopeResult = "more";
  private st = E.Start;
  private body = "";
  private key = "";
  private name: string | null = null;
  private tracker: JsonValueTracker | null = null;
  private argsSeen = false;
  private escape = false;
  /** Where a too-long string started being read past the limit (a position in the current text). */
  private tooLongAt = -1;

  constructor(
    private readonly syntax: TextCallSyntaxName,
    private readonly argKeys: readonly string[],
    /** Without an arguments key the object is not a call (bare JSON at the start of a message). */
    private readonly requireArgs: boolean,
    /** The call's end marker: outside a string it ends arguments that never closed (an invalid_json call). */
    private readonly stop: string | null = null,
  ) {}

  private fail(i: number, x: ParseContext, opened: boolean): number {
    if (opened) x.broken();
    this.result = opened ? "broken" : "reject";
    return i;
  }

  feed(s: string, i: number, x: ParseContext): number {
    while (i < s.length) {
      switch (this.st) {
        case E.Start: {
          i = skipWs(s, i);
          if (i === s.length) break;
          if (s.charCodeAt(i) !== 123) return this.fail(i, x, false);
          i++;
          this.st = E.KeyOrEnd;
          break;
        }
        case E.KeyOrEnd:
        case E.Key: {
          i = skipWs(s, i);
          if (i === s.length) break;
          const c = s.charCodeAt(i);
          if (c === 34) {
            this.st = E.KeyBody;
            this.body = "";
            this.escape = false;
            i++;
          } else if (c === 125 && this.st === E.KeyOrEnd) return this.end(i + 1, x);
          else return this.fail(i, x, this.argsSeen);
          break;
        }
        case E.KeyBody:
        case E.Name:
        case E.TypeBody: {
          const close = this.readString(s, i);
          if (this.tooLongAt >= 0) return this.fail(this.tooLongAt, x, this.argsSeen);
          if (close < 0) {
            i = s.length;
            break;
          }
          i = close;
          const value = decodeJsonStringBody(this.body);
          if (value === null) return this.fail(i, x, this.argsSeen);
          if (this.st === E.TypeBody) this.st = E.After;
          else if (this.st === E.KeyBody) {
            this.key = value;
            this.st = E.Colon;
          } else {
            this.name = value;
            this.st = E.After;
          }
          break;
        }
        case E.Colon: {
          i = skipWs(s, i);
          if (i === s.length) break;
          if (s.charCodeAt(i) !== 58) return this.fail(i, x, this.argsSeen);
          i++;
          this.st = E.ValueStart;
          break;
        }
        case E.ValueStart: {
          i = skipWs(s, i);
          if (i === s.length) break;
          const c = s.charCodeAt(i);
          if (this.key === "name" && this.name === null) {
            if (c !== 34) return this.fail(i, x, this.argsSeen);
            this.st = E.Name;
            this.body = "";
            this.escape = false;
            i++;
          } else if (!this.argsSeen && this.argKeys.includes(this.key)) {
            // The name must come first: the call opens here, and its arguments then stream.
            if (this.name === null || (c !== 123 && c !== 34)) return this.fail(i, x, false);
            if (!x.open(this.name, this.syntax)) return this.fail(i, x, false);
            this.argsSeen = true;
            this.tracker = new JsonValueTracker(this.stop);
            this.st = E.Args;
          } else if (this.requireArgs && !this.argsSeen) {
            // A bare object at the start of a message is held only while it can be a call:
            // besides name and arguments, only a short string "type" may come first.
            if (this.key !== "type" || c !== 34) return this.fail(i, x, false);
            this.st = E.TypeBody;
            this.body = "";
            this.escape = false;
            i++;
          } else {
            this.tracker = new JsonValueTracker();
            this.st = E.Skip;
          }
          break;
        }
        case E.Args:
        case E.Skip: {
          const tracker = this.tracker as JsonValueTracker;
          const end = tracker.feed(s, i);
          if (this.st === E.Args) x.args(end < 0 ? s.slice(i) : s.slice(i, end));
          if (end < 0) {
            i = s.length;
            break;
          }
          if (tracker.partial) {
            tracker.partial = false;
            this.result = "more";
            return end;
          }
          if (tracker.cut) {
            // The end marker came before the arguments closed: the call ends there, invalid_json.
            this.result = "end";
            return end;
          }
          i = end;
          this.tracker = null;
          this.st = E.After;
          break;
        }
        case E.After: {
          i = skipWs(s, i);
          if (i === s.length) break;
          const c = s.charCodeAt(i);
          if (c === 44) {
            this.st = E.Key;
            i++;
          } else if (c === 125) return this.end(i + 1, x);
          else return this.fail(i, x, this.argsSeen);
          break;
        }
      }
    }
    this.result = "more";
    return i;
  }

  /**
   * Reads a JSON string body (a key, name or type: at most MAX_NAME characters) into `this.body`;
   * the index after the closing quote, or -1. Past the limit, `tooLongAt` is the exact position
   * where it was passed, so the outcome does not depend on how the text was cut into deltas.
   */
  private readString(s: string, i: number): number {
    let k = i;
    while (k < s.length) {
      if (this.body.length + (k - i) > MAX_NAME) {
        this.tooLongAt = k;
        return -1;
      }
      const c = s.charCodeAt(k);
      if (this.escape) this.escape = false;
      else if (c === 92) this.escape = true;
      else if (c === 34) {
        this.body += s.slice(i, k);
        return k + 1;
      }
      k++;
    }
    this.body += s.slice(i, k);
    return -1;
  }

  private end(i: number, x: ParseContext): number {
    if (!this.argsSeen) {
      if (this.name === null || this.requireArgs || !x.open(this.name, this.syntax)) return this.fail(i, x, false);
    }
    this.result = "end";
    return i;
  }
}

// ---- XML-like parameter values (Qwen3-Coder, GLM) ------------------------------------------------

/**
 * One parameter value read up to its end literal. String parameters stream as a JSON string;
 * parameters the schema types otherwise are kept until their end and written as JSON when they
 * parse as JSON (else as the string they are, with a diagnostic).
 */
class ParamValue {
  private readonly parts: string[] = [];
  private started = false;

  constructor(
    private readonly kind: ParamKind,
    private readonly key: string,
    /** Literals that end the value; the first is consumed, the others are left for the caller. */
    private readonly ends: readonly string[],
    /** Qwen3-Coder writes a newline after `>` and before `</parameter>`: one of each is dropped. */
    private readonly trimNewlines: boolean,
  ) {}

  private out(text: string, x: ParseContext): void {
    if (text.length === 0) return;
    if (this.kind === "string") x.args(jsonStringBody(text));
    else this.parts.push(text);
  }

  /** `{end}` when the value is complete (position after the consumed end, or at a left one), `{more}` otherwise. */
  feed(s: string, i: number, x: ParseContext): { end: number } | { more: number } {
    if (!this.started) {
      if (i >= s.length) return { more: i };
      this.started = true;
      if (this.trimNewlines && s.charCodeAt(i) === 10) i++;
      if (this.kind === "string") x.args('"');
    }
    while (i <= s.length) {
      const k = s.indexOf("<", i);
      if (k < 0) {
        // Hold a trailing newline back: it may be the one before the end tag.
        const hold = this.trimNewlines && s.length > i && s.charCodeAt(s.length - 1) === 10 ? 1 : 0;
        this.out(s.slice(i, s.length - hold), x);
        return { more: s.length - hold };
      }
      let which = -1;
      let partial = false;
      for (let w = 0; w < this.ends.length; w++) {
        const end = matchAt(s, k, this.ends[w] as string);
        if (end >= 0) {
          which = w;
          break;
        }
        if (end === PARTIAL) partial = true;
      }
      if (which >= 0 || partial) {
        const hold = this.trimNewlines && k > i && s.charCodeAt(k - 1) === 10 ? 1 : 0;
        this.out(s.slice(i, k - hold), x);
        if (partial && which < 0) return { more: k - hold };
        this.finish(x);
        return { end: which === 0 ? k + (this.ends[0] as string).length : k };
      }
      this.out(s.slice(i, k + 1), x);
      i = k + 1;
    }
    return { more: s.length };
  }

  private finish(x: ParseContext): void {
    if (this.kind === "string") {
      x.args('"');
      return;
    }
    const raw = this.parts.join("");
    const trimmed = raw.trim();
    let parsed = false;
    try {
      JSON.parse(trimmed);
      parsed = trimmed.length > 0;
    } catch {
      parsed = false;
    }
    if (parsed) x.args(trimmed);
    else {
      x.args(JSON.stringify(raw));
      x.diagnostic("text_call_param_not_json", `The tool schema types parameter \`${this.key}\` as non-string, but its value is not JSON; it was kept as the string the model wrote.`, { key: this.key, value: raw.slice(0, 200) });
    }
  }
}

function jsonStringBody(text: string): string {
  return JSON.stringify(text).slice(1, -1);
}

// ---- <tool_call> … : Hermes JSON, Qwen3-Coder XML or GLM -----------------------------------------

const enum T {
  Dispatch,
  Envelope,
  Trail,
  Inner,
}

/** After `<tool_call>`: a JSON envelope (Hermes), `<function=` (Qwen3-Coder) or a bare name (GLM). */
export class ToolCallTagParser extends CallParser {
  private st = T.Dispatch;
  private envelope: Envelope | null = null;
  private inner: CallParser | null = null;

  feed(s: string, i: number, x: ParseContext): number {
    while (true) {
      switch (this.st) {
        case T.Dispatch: {
          const j = skipWs(s, i);
          if (j === s.length) return j - i > MAX_NAME ? this.reject(j) : this.more(i);
          const c = s.charCodeAt(j);
          if (c === 123 && x.has("hermes")) {
            this.envelope = new Envelope("hermes", ["arguments", "parameters"], false, "</tool_call>");
            this.st = T.Envelope;
            i = j;
          } else if (c === 60) {
            const end = matchAt(s, j, "<function=");
            if (end === PARTIAL) return this.more(i);
            if (end < 0 || !x.has("qwen3-coder")) return this.reject(j);
            this.inner = new XmlFunctionParser(true);
            this.st = T.Inner;
            i = end;
          } else if (x.has("glm") && !isWs(c)) {
            this.inner = new GlmParser();
            this.st = T.Inner;
            i = j;
          } else return this.reject(j);
          break;
        }
        case T.Envelope: {
          const envelope = this.envelope as Envelope;
          i = envelope.feed(s, i, x);
          if (envelope.result === "more") return this.more(i);
          if (envelope.result === "reject") return this.reject(i);
          if (envelope.result === "broken") return this.done(i);
          x.close();
          x.mark(i);
          this.st = T.Trail;
          break;
        }
        case T.Trail: {
          const r = expectAfterWs(s, i, ["</tool_call>"]);
          if (r.kind === "more") return this.more(i);
          return this.done(r.kind === "match" ? r.end : i);
        }
        case T.Inner: {
          const inner = this.inner as CallParser;
          i = inner.feed(s, i, x);
          this.status = inner.status;
          return i;
        }
      }
    }
  }
}

const enum F {
  Name,
  Between,
  Key,
  Value,
  Json,
  JsonEnd,
  Trail,
}

/**
 * `<function=NAME>` then `<parameter=KEY>VALUE</parameter>`… `</function>` (Qwen3-Coder), or
 * `<function=NAME>{json}</function>` (the form Llama models write on Groq).
 */
export class XmlFunctionParser extends CallParser {
  private st = F.Name;
  private readonly token = new Until([">", "{"]);
  private key: Until | null = null;
  private value: ParamValue | null = null;
  private tracker: JsonValueTracker | null = null;
  private first = true;

  constructor(private readonly wrapped: boolean) {
    super();
  }

  private broken(i: number, x: ParseContext): number {
    x.broken();
    return this.done(i);
  }

  feed(s: string, i: number, x: ParseContext): number {
    while (true) {
      switch (this.st) {
        case F.Name: {
          const r = this.token.feed(s, i);
          if ("more" in r) return this.more(r.more);
          if ("fail" in r) return this.reject(r.fail);
          const name = this.token.text.trim();
          if (name.length === 0 || /[\s<]/.test(name) || !x.open(name, "qwen3-coder")) return this.reject(r.end);
          // `{` ends the name without being consumed: the arguments are JSON.
          i = r.which === 1 ? r.end - 1 : r.end;
          this.st = F.Between;
          break;
        }
        case F.Between: {
          if (this.first) {
            const j = skipWs(s, i);
            if (j === s.length) return this.more(i);
            if (s.charCodeAt(j) === 123) {
              this.tracker = new JsonValueTracker();
              this.st = F.Json;
              i = j;
              break;
            }
          }
          const r = expectAfterWs(s, i, ["<parameter=", "</function>"]);
          if (r.kind === "more") return this.more(i);
          if (r.kind === "none") return this.broken(r.at, x);
          if (r.which === 0) {
            this.key = new Until([">"]);
            this.st = F.Key;
            i = r.end;
            break;
          }
          x.args(this.first ? "{}" : "}");
          x.close();
          x.mark(r.end);
          i = r.end;
          // Unwrapped, a `</tool_call>` may still follow (models that skip the opening tag).
          this.st = F.Trail;
          break;
        }
        case F.Key: {
          const key = this.key as Until;
          const r = key.feed(s, i);
          if ("more" in r) return this.more(r.more);
          if ("fail" in r) return this.broken(r.fail, x);
          const name = key.text.trim();
          x.args(`${this.first ? "{" : ", "}${JSON.stringify(name)}: `);
          this.first = false;
          this.value = new ParamValue(x.paramKind(name), name, ["</parameter>", "<parameter=", "</function>"], true);
          this.st = F.Value;
          i = r.end;
          break;
        }
        case F.Value: {
          const r = (this.value as ParamValue).feed(s, i, x);
          if ("more" in r) return this.more(r.more);
          i = r.end;
          this.value = null;
          this.st = F.Between;
          break;
        }
        case F.Json: {
          const end = streamJsonArguments(this.tracker as JsonValueTracker, s, i, x);
          if (end < 0) return this.more(s.length);
          x.mark(end);
          i = end;
          this.st = F.JsonEnd;
          break;
        }
        case F.JsonEnd: {
          const r = expectAfterWs(s, i, ["</function>"]);
          if (r.kind === "more") return this.more(i);
          if (r.kind === "none") return this.done(i);
          i = r.end;
          x.mark(i);
          this.st = F.Trail;
          break;
        }
        case F.Trail: {
          const r = expectAfterWs(s, i, ["</tool_call>"]);
          if (r.kind === "more") return this.more(i);
          return this.done(r.kind === "match" ? r.end : i);
        }
      }
    }
  }
}

const enum G {
  Name,
  Between,
  Key,
  AfterKey,
  Value,
}

/** `NAME` `<arg_key>K</arg_key><arg_value>V</arg_value>`… `</tool_call>` (GLM 4.5+), after `<tool_call>`. */
export class GlmParser extends CallParser {
  private st = G.Name;
  private readonly name = new Until(["<arg_key>", "</tool_call>", "\n"], MAX_NAME, false);
  private key: Until | null = null;
  private value: ParamValue | null = null;
  private first = true;

  feed(s: string, i: number, x: ParseContext): number {
    while (true) {
      switch (this.st) {
        case G.Name: {
          const r = this.name.feed(s, i);
          if ("more" in r) return this.more(r.more);
          if ("fail" in r) return this.reject(r.fail);
          const name = this.name.text.trim();
          const at = r.which === 2 ? r.end : r.end - (r.which === 0 ? "<arg_key>".length : "</tool_call>".length);
          if (name.length === 0 || name.includes("<") || !x.open(name, "glm")) return this.reject(at);
          i = at;
          this.st = G.Between;
          break;
        }
        case G.Between: {
          const r = expectAfterWs(s, i, ["<arg_key>", "</tool_call>"]);
          if (r.kind === "more") return this.more(i);
          if (r.kind === "none") {
            x.broken();
            return this.done(r.at);
          }
          if (r.which === 0) {
            this.key = new Until(["</arg_key>"], MAX_NAME, false);
            this.st = G.Key;
            i = r.end;
            break;
          }
          x.args(this.first ? "{}" : "}");
          x.close();
          return this.done(r.end);
        }
        case G.Key: {
          const key = this.key as Until;
          const r = key.feed(s, i);
          if ("more" in r) return this.more(r.more);
          if ("fail" in r) {
            x.broken();
            return this.done(r.fail);
          }
          const name = key.text.trim();
          x.args(`${this.first ? "{" : ", "}${JSON.stringify(name)}: `);
          this.first = false;
          this.value = new ParamValue(x.paramKind(name), name, ["</arg_value>"], false);
          this.st = G.AfterKey;
          i = r.end;
          break;
        }
        case G.AfterKey: {
          const r = expectAfterWs(s, i, ["<arg_value>"]);
          if (r.kind === "more") return this.more(i);
          if (r.kind === "none") {
            x.broken();
            return this.done(r.at);
          }
          i = r.end;
          this.st = G.Value;
          break;
        }
        case G.Value: {
          const r = (this.value as ParamValue).feed(s, i, x);
          if ("more" in r) return this.more(r.more);
          i = r.end;
          this.value = null;
          this.st = G.Between;
          break;
        }
      }
    }
  }
}

// ---- section-style special tokens: Kimi K2, DeepSeek --------------------------------------------

const enum S {
  Section,
  Head,
  Name,
  Fence,
  ArgsStart,
  Args,
  AfterFence,
  AfterCall,
  SkipEnd,
}

interface SectionTokens {
  readonly syntax: TextCallSyntaxName;
  readonly callBegin: string;
  readonly sectionEnd: string;
  /** Between the call's head and its arguments. */
  readonly separator: string;
  readonly callEnd: string;
}

const KIMI: SectionTokens = {
  syntax: "kimi-k2",
  callBegin: "<|tool_call_begin|>",
  sectionEnd: "<|tool_calls_section_end|>",
  separator: "<|tool_call_argument_begin|>",
  callEnd: "<|tool_call_end|>",
};

const DEEPSEEK: SectionTokens = {
  syntax: "deepseek",
  callBegin: "<｜tool▁call▁begin｜>",
  sectionEnd: "<｜tool▁calls▁end｜>",
  separator: "<｜tool▁sep｜>",
  callEnd: "<｜tool▁call▁end｜>",
};

/**
 * A section of calls between special tokens. Kimi K2: `functions.NAME:IDX<|tool_call_argument_begin|>{…}`;
 * DeepSeek V3: `function<｜tool▁sep｜>NAME\n```json\n{…}\n``` `; DeepSeek V3.1: `NAME<｜tool▁sep｜>{…}`.
 */
export class SectionParser extends CallParser {
  private st: S;
  private head: Until | null = null;
  private name = "";
  private tracker: JsonValueTracker | null = null;
  private fenced = false;
  /** The call's id is malformed: its arguments are read to find its end, then it is released as text. */
  private skip = false;

  constructor(
    private readonly tokens: SectionTokens,
    private readonly inSection: boolean,
  ) {
    super();
    this.st = inSection ? S.Section : S.Head;
    if (!inSection) this.head = new Until([tokens.separator]);
  }

  static kimi(inSection: boolean): SectionParser {
    return new SectionParser(KIMI, inSection);
  }

  static deepseek(inSection: boolean): SectionParser {
    return new SectionParser(DEEPSEEK, inSection);
  }

  feed(s: string, i: number, x: ParseContext): number {
    const t = this.tokens;
    while (true) {
      switch (this.st) {
        case S.Section: {
          const r = expectAfterWs(s, i, [t.callBegin, t.sectionEnd]);
          if (r.kind === "more") return this.more(i);
          if (r.kind === "none") return this.reject(r.at);
          if (r.which === 1) return this.done(r.end);
          this.head = new Until([t.separator]);
          this.st = S.Head;
          i = r.end;
          break;
        }
        case S.Head: {
          const head = this.head as Until;
          const r = head.feed(s, i);
          if ("more" in r) return this.more(r.more);
          if ("fail" in r) return this.reject(r.fail);
          const text = head.text.trim();
          i = r.end;
          if (t === DEEPSEEK && text === "function") {
            this.head = new Until(["\n", "`"], MAX_NAME, false);
            this.st = S.Name;
            break;
          }
          const name = t === KIMI ? kimiName(text) : text;
          if (name === null) {
            x.diagnostic("text_call_bad_id", `The text holds a ${t.syntax} tool call whose id \`${text.slice(0, 100)}\` is not of the form functions.NAME:INDEX; it was left as text.`, { id: text.slice(0, 200) });
            this.skip = true;
          } else if (name.length === 0) return this.reject(i);
          this.name = name ?? "";
          this.st = S.ArgsStart;
          break;
        }
        case S.Name: {
          const head = this.head as Until;
          const r = head.feed(s, i);
          if ("more" in r) return this.more(r.more);
          if ("fail" in r) return this.reject(r.fail);
          this.name = head.text.trim();
          if (this.name.length === 0) return this.reject(r.end);
          i = r.which === 1 ? r.end - 1 : r.end;
          this.st = S.Fence;
          break;
        }
        case S.Fence: {
          const r = expectAfterWs(s, i, ["```json", "```"]);
          if (r.kind === "more") return this.more(i);
          if (r.kind === "match") {
            this.fenced = true;
            i = r.end;
          }
          this.st = S.ArgsStart;
          break;
        }
        case S.ArgsStart: {
          const j = skipWs(s, i);
          if (j === s.length) return this.more(i);
          if (s.charCodeAt(j) !== 123) return this.reject(j);
          if (!this.skip && !x.open(this.name, t.syntax)) return this.reject(j);
          this.tracker = new JsonValueTracker(t.callEnd);
          this.st = S.Args;
          i = j;
          break;
        }
        case S.Args: {
          const tracker = this.tracker as JsonValueTracker;
          const end = this.skip ? tracker.feed(s, i) : streamJsonArguments(tracker, s, i, x);
          if (end < 0) return this.more(s.length);
          if (tracker.partial) {
            tracker.partial = false;
            return this.more(end);
          }
          if (this.skip) {
            this.st = S.SkipEnd;
            i = end;
            break;
          }
          x.mark(end);
          i = end;
          // Cut at the call's end token: the arguments did not close (an invalid_json call).
          this.st = this.fenced && !tracker.cut ? S.AfterFence : S.AfterCall;
          break;
        }
        case S.SkipEnd: {
          // Through the call's end token, when it follows: the malformed call is all text.
          const r = expectAfterWs(s, i, [t.callEnd]);
          if (r.kind === "more") return this.more(i);
          i = r.kind === "match" ? r.end : i;
          x.release(i);
          this.skip = false;
          if (!this.inSection) return this.done(i);
          this.st = S.Section;
          break;
        }
        case S.AfterFence: {
          const r = expectAfterWs(s, i, ["```"]);
          if (r.kind === "more") return this.more(i);
          if (r.kind === "match") {
            i = r.end;
            x.mark(i);
          }
          this.st = S.AfterCall;
          break;
        }
        case S.AfterCall: {
          const r = expectAfterWs(s, i, [t.callEnd]);
          if (r.kind === "more") return this.more(i);
          if (r.kind === "match") {
            i = r.end;
            x.mark(i);
          }
          if (!this.inSection) return this.done(i);
          this.fenced = false;
          this.st = S.Section;
          break;
        }
      }
    }
  }
}

/**
 * `functions.get_weather:0` → `get_weather`. The `:index` suffix is required (vLLM and SGLang skip a
 * call without it); the `functions.` prefix is optional. Null for a malformed id.
 */
function kimiName(id: string): string | null {
  const name = id.startsWith("functions.") ? id.slice("functions.".length) : id;
  const colon = name.lastIndexOf(":");
  if (colon <= 0 || !/^\d+$/.test(name.slice(colon + 1))) return null;
  const bare = name.slice(0, colon);
  return /^[^\s:<>]+$/.test(bare) ? bare : null;
}

// ---- Mistral ---------------------------------------------------------------------------------------

const enum M {
  Start,
  ArrayItem,
  ArrayEnvelope,
  ArrayAfter,
  Single,
  Name,
  CallId,
  ArgsStart,
  Args,
}

function isNameChar(c: number): boolean {
  return (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95 || c === 45 || c === 46;
}

/** After `[TOOL_CALLS]`: `[{…}, …]` (tokenizer v3), `{…}`, or `NAME[ARGS]{…}` / `NAME[CALL_ID]id[ARGS]{…}` (v11+). */
export class MistralParser extends CallParser {
  private st = M.Start;
  private envelope: Envelope | null = null;
  private token: Until | null = null;
  private name = "";
  private tracker: JsonValueTracker | null = null;

  feed(s: string, i: number, x: ParseContext): number {
    while (true) {
      switch (this.st) {
        case M.Start: {
          const j = skipWs(s, i);
          if (j === s.length) return j - i > MAX_NAME ? this.reject(j) : this.more(i);
          const c = s.charCodeAt(j);
          i = j;
          // [TOOL_CALLS] is a control token, never text: what follows it is text unless it is a call.
          x.mark(j);
          if (c === 91) {
            this.st = M.ArrayItem;
            i++;
          } else if (c === 123) {
            this.envelope = new Envelope("mistral", ["arguments", "parameters"], false);
            this.st = M.Single;
          } else if (isNameChar(c)) {
            // v11+: NAME[ARGS]{…}, NAME[CALL_ID]id[ARGS]{…}, or NAME{…} (the text vLLM decodes with
            // the [ARGS] special token skipped).
            this.token = new Until(["[ARGS]", "[CALL_ID]", "{"]);
            this.st = M.Name;
          } else return this.reject(j);
          break;
        }
        case M.ArrayItem: {
          const j = skipWs(s, i);
          if (j === s.length) return this.more(i);
          if (s.charCodeAt(j) !== 123) return this.reject(j);
          this.envelope = new Envelope("mistral", ["arguments", "parameters"], false);
          this.st = M.ArrayEnvelope;
          i = j;
          break;
        }
        case M.ArrayEnvelope:
        case M.Single: {
          const envelope = this.envelope as Envelope;
          i = envelope.feed(s, i, x);
          if (envelope.result === "more") return this.more(i);
          if (envelope.result === "reject") return this.reject(i);
          if (envelope.result === "broken") return this.done(i);
          x.close();
          x.mark(i);
          if (this.st === M.Single) return this.done(i);
          this.st = M.ArrayAfter;
          break;
        }
        case M.ArrayAfter: {
          const r = expectAfterWs(s, i, [",", "]"]);
          if (r.kind === "more") return this.more(i);
          if (r.kind === "none") return this.reject(r.at);
          if (r.which === 1) return this.done(r.end);
          this.st = M.ArrayItem;
          i = r.end;
          break;
        }
        case M.Name:
        case M.CallId: {
          const token = this.token as Until;
          const r = token.feed(s, i);
          if ("more" in r) return this.more(r.more);
          if ("fail" in r) return this.reject(r.fail);
          if (this.st === M.Name) {
            this.name = token.text.trim();
            if (!/^[A-Za-z0-9_.-]+$/.test(this.name)) return this.reject(r.end);
          }
          // `{` ends the name without being consumed: the arguments begin there.
          i = r.which === 2 ? r.end - 1 : r.end;
          if (r.which === 1) {
            this.token = new Until(["[ARGS]"]);
            this.st = M.CallId;
          } else this.st = M.ArgsStart;
          break;
        }
        case M.ArgsStart: {
          const j = skipWs(s, i);
          if (j === s.length) return this.more(i);
          if (s.charCodeAt(j) !== 123 || !x.open(this.name, "mistral")) return this.reject(j);
          // The next call's [TOOL_CALLS] ends arguments that never closed (an invalid_json call).
          this.tracker = new JsonValueTracker("[TOOL_CALLS]");
          this.st = M.Args;
          i = j;
          break;
        }
        case M.Args: {
          const tracker = this.tracker as JsonValueTracker;
          const end = streamJsonArguments(tracker, s, i, x);
          if (end < 0) return this.more(s.length);
          if (tracker.partial) {
            tracker.partial = false;
            return this.more(end);
          }
          return this.done(end);
        }
      }
    }
  }
}

// ---- Llama 3.x JSON ------------------------------------------------------------------------------

const enum L {
  Envelope,
  After,
}

/** `<|python_tag|>{"name": …, "parameters": {…}}`, or such objects as the whole message, `;`-separated. */
export class LlamaJsonParser extends CallParser {
  private st = L.Envelope;
  private envelope: Envelope;

  constructor(private readonly bare: boolean) {
    super();
    this.envelope = new Envelope("llama3-json", ["parameters", "arguments"], bare);
  }

  feed(s: string, i: number, x: ParseContext): number {
    while (true) {
      if (this.st === L.Envelope) {
        i = this.envelope.feed(s, i, x);
        const result = this.envelope.result;
        if (result === "more") return this.more(i);
        if (result === "reject") return this.reject(i);
        if (result === "broken") return this.done(i);
        x.close();
        x.mark(i);
        this.st = L.After;
        continue;
      }
      const r = expectAfterWs(s, i, [";", "<|eom_id|>", "<|eot_id|>", "{"]);
      if (r.kind === "more") return this.more(i);
      if (r.kind === "none") return this.done(i);
      if (r.which === 1 || r.which === 2) return this.done(r.end);
      // `;` or a newline (or nothing) between calls: another envelope follows (vLLM llama3_json).
      if (r.which === 3) {
        x.mark(i);
        this.envelope = new Envelope("llama3-json", ["parameters", "arguments"], this.bare);
        this.st = L.Envelope;
        i = r.end - 1;
        continue;
      }
      x.mark(r.end);
      this.envelope = new Envelope("llama3-json", ["parameters", "arguments"], this.bare);
      this.st = L.Envelope;
      i = r.end;
    }
  }
}

// ---- gpt-oss harmony -----------------------------------------------------------------------------

const enum H {
  Name,
  Head,
  ArgsStart,
  Args,
  After,
}

/** After `… to=functions.`: `NAME [<|constrain|>json]<|message|>{…}<|call|>`. */
export class HarmonyParser extends CallParser {
  private st = H.Name;
  private readonly name = new Until([" ", "<", "\t"], MAX_NAME, true);
  private readonly head = new Until(["<|message|>"], 128, false);
  private tracker: JsonValueTracker | null = null;

  feed(s: string, i: number, x: ParseContext): number {
    while (true) {
      switch (this.st) {
        case H.Name: {
          const r = this.name.feed(s, i);
          if ("more" in r) return this.more(r.more);
          if ("fail" in r) return this.reject(r.fail);
          if (this.name.text.length === 0) return this.reject(r.end - 1);
          i = r.end - 1;
          this.st = H.Head;
          break;
        }
        case H.Head: {
          const r = this.head.feed(s, i);
          if ("more" in r) return this.more(r.more);
          if ("fail" in r) return this.reject(r.fail);
          i = r.end;
          this.st = H.ArgsStart;
          break;
        }
        case H.ArgsStart: {
          const j = skipWs(s, i);
          if (j === s.length) return this.more(i);
          if (s.charCodeAt(j) !== 123 || !x.open(this.name.text, "harmony")) return this.reject(j);
          this.tracker = new JsonValueTracker("<|call|>");
          this.st = H.Args;
          i = j;
          break;
        }
        case H.Args: {
          const tracker = this.tracker as JsonValueTracker;
          const end = streamJsonArguments(tracker, s, i, x);
          if (end < 0) return this.more(s.length);
          if (tracker.partial) {
            tracker.partial = false;
            return this.more(end);
          }
          x.mark(end);
          i = end;
          this.st = H.After;
          break;
        }
        case H.After: {
          const r = expectAfterWs(s, i, ["<|call|>"]);
          if (r.kind === "more") return this.more(i);
          return this.done(r.kind === "match" ? r.end : i);
        }
      }
    }
  }
}


// ---- DeepSeek V3.2 / V4 DSML ---------------------------------------------------------------------

const enum D {
  Section,
  Name,
  NameEnd,
  Body,
  Key,
  Attrs,
  Value,
  Json,
  JsonEnd,
}

const DSML = "<｜DSML｜";

/**
 * After `<｜DSML｜function_calls>` (V3.2) or `<｜DSML｜tool_calls>` (V4): `<｜DSML｜invoke name="f">`
 * then `<｜DSML｜parameter name="k" string="true|false">v</｜DSML｜parameter>`… `</｜DSML｜invoke>`,
 * then the section's close. `string="true"` values are strings; `string="false"` values are JSON
 * (kept as the string written, with a diagnostic, when they are not). A JSON object in place of the
 * parameters is the arguments.
 */
export class DsmlParser extends CallParser {
  private st = D.Section;
  private token: Until | null = null;
  private key = "";
  private value: ParamValue | null = null;
  private tracker: JsonValueTracker | null = null;
  private first = true;
  private readonly sectionEnd: string;

  constructor(section: "function_calls" | "tool_calls") {
    super();
    this.sectionEnd = `</｜DSML｜${section}>`;
  }

  private broken(i: number, x: ParseContext): number {
    x.broken();
    return this.done(i);
  }

  feed(s: string, i: number, x: ParseContext): number {
    while (true) {
      switch (this.st) {
        case D.Section: {
          const r = expectAfterWs(s, i, [`${DSML}invoke name="`, this.sectionEnd]);
          if (r.kind === "more") return this.more(i);
          if (r.kind === "none") return this.reject(r.at);
          if (r.which === 1) return this.done(r.end);
          this.token = new Until(['"']);
          this.st = D.Name;
          i = r.end;
          break;
        }
        case D.Name: {
          const token = this.token as Until;
          const r = token.feed(s, i);
          if ("more" in r) return this.more(r.more);
          if ("fail" in r) return this.reject(r.fail);
          if (token.text.length === 0 || /[\s<>]/.test(token.text)) return this.reject(r.end);
          this.st = D.NameEnd;
          i = r.end;
          break;
        }
        case D.NameEnd: {
          const r = expectAfterWs(s, i, [">"]);
          if (r.kind === "more") return this.more(i);
          if (r.kind === "none" || !x.open((this.token as Until).text, "deepseek")) return this.reject(i);
          this.first = true;
          this.st = D.Body;
          i = r.end;
          break;
        }
        case D.Body: {
          if (this.first) {
            const j = skipWs(s, i);
            if (j === s.length) return this.more(i);
            if (s.charCodeAt(j) === 123) {
              this.tracker = new JsonValueTracker(`</｜DSML｜invoke>`);
              this.st = D.Json;
              i = j;
              break;
            }
          }
          const r = expectAfterWs(s, i, [`${DSML}parameter name="`, `</｜DSML｜invoke>`]);
          if (r.kind === "more") return this.more(i);
          if (r.kind === "none") return this.broken(r.at, x);
          if (r.which === 0) {
            this.token = new Until(['"']);
            this.st = D.Key;
            i = r.end;
            break;
          }
          x.args(this.first ? "{}" : "}");
          x.close();
          x.mark(r.end);
          this.st = D.Section;
          i = r.end;
          break;
        }
        case D.Key: {
          const token = this.token as Until;
          const r = token.feed(s, i);
          if ("more" in r) return this.more(r.more);
          if ("fail" in r) return this.broken(r.fail, x);
          this.key = token.text;
          this.token = new Until([">"], 64);
          this.st = D.Attrs;
          i = r.end;
          break;
        }
        case D.Attrs: {
          const token = this.token as Until;
          const r = token.feed(s, i);
          if ("more" in r) return this.more(r.more);
          if ("fail" in r) return this.broken(r.fail, x);
          const attrs = token.text.trim();
          const kind: ParamKind = /^string="true"$/.test(attrs) ? "string" : /^string="false"$/.test(attrs) ? "json" : attrs === "" ? x.paramKind(this.key) : "string";
          x.args(`${this.first ? "{" : ", "}${JSON.stringify(this.key)}: `);
          this.first = false;
          this.value = new ParamValue(kind, this.key, [`</｜DSML｜parameter>`], false);
          this.st = D.Value;
          i = r.end;
          break;
        }
        case D.Value: {
          const r = (this.value as ParamValue).feed(s, i, x);
          if ("more" in r) return this.more(r.more);
          this.value = null;
          this.st = D.Body;
          i = r.end;
          break;
        }
        case D.Json: {
          const tracker = this.tracker as JsonValueTracker;
          const end = streamJsonArguments(tracker, s, i, x);
          if (end < 0) return this.more(s.length);
          if (tracker.partial) {
            tracker.partial = false;
            return this.more(end);
          }
          x.mark(end);
          this.st = D.JsonEnd;
          i = end;
          break;
        }
        case D.JsonEnd: {
          const r = expectAfterWs(s, i, [`</｜DSML｜invoke>`]);
          if (r.kind === "more") return this.more(i);
          if (r.kind === "match") {
            i = r.end;
            x.mark(i);
          }
          this.st = D.Section;
          break;
        }
      }
    }
  }
}

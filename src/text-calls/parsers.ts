import type { ParamKind } from "./options.js";
import { jsonStringBody } from "../json/stringify.js";
import { decodeJsonStringBody, expectAfterWs, isWs, JsonValueTracker, matchAt, MAX_HELD_WS, PARTIAL, Reader, skipWs } from "./scan.js";
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
  /**
   * Text from `position` on is no longer part of a finished call: a later reject re-emits it as
   * text. Calls formed before it (a whole group too) are passed on.
   */
  mark(position: number): void;
  /** The text read since the last mark, up to `position`, is not a call: it is passed on as text. */
  release(position: number): void;
  /** How the open call's parameter is typed by the caller's tool schema. */
  paramKind(key: string): ParamKind;
  diagnostic(code: string, message: string, data?: unknown): void;
  has(syntax: TextCallSyntaxName): boolean;
}

/**
 * The parser of one call syntax, started after its marker: it tells the ParseContext what it
 * reads, and follows the readers' convention (`feed` returns a position, `status` says what it is).
 */
export abstract class CallParser extends Reader {
  abstract feed(s: string, i: number, x: ParseContext): number;

  /**
   * A part of the call (`part`) stopped at `at` short of "done": so does the parser, for more text,
   * or on a reject as not a call (before the call opened) or as a broken call (once `opened`).
   */
  protected stopWith(part: Reader, at: number, x: ParseContext, opened: boolean): number {
    if (part.status === "reject" && opened) return this.broken(at, x);
    this.status = part.status;
    return at;
  }

  /** Optional whitespace and `literal`: the parser ends after them when they follow, else at `i`. */
  protected endAfterOptional(s: string, i: number, literal: string): number {
    const r = expectAfterWs(s, i, [literal]);
    if (r.kind === "more") return this.more(i);
    return this.done(r.kind === "match" ? r.end : i);
  }
}

/** Longest name, key or call id read in a header; longer means "not a call". */
const MAX_NAME = 256;
/**
 * Arguments written before the name are kept until the name comes (the call cannot open without
 * it): at most as much as a held call (extractor's MAX_HELD_CALL), past that the object is text.
 */
const MAX_EARLY_ARGS = 1 << 20;

/** Reads characters up to a terminator literal; names never contain a newline. */
class Until extends Reader {
  text = "";
  /** The terminator that ended the token (an index into `terminators`), once done. */
  which = -1;
  constructor(
    private readonly terminators: readonly string[],
    private readonly limit = MAX_NAME,
    private readonly stopAtNewline = true,
  ) {
    super();
  }

  /**
   * "done" once a terminator matched (at the position after it), "more" when the text ends inside
   * a possible terminator or simply ends, "reject" when the token is too long or hits a newline.
   */
  feed(s: string, i: number): number {
    let k = i;
    while (k < s.length) {
      const c = s.charCodeAt(k);
      if (c === 10 && this.stopAtNewline) return this.reject(k);
      for (let w = 0; w < this.terminators.length; w++) {
        const t = this.terminators[w] as string;
        if (c !== t.charCodeAt(0)) continue;
        const end = matchAt(s, k, t);
        if (end >= 0) {
          this.text += s.slice(i, k);
          this.which = w;
          return this.done(end);
        }
        if (end === PARTIAL) {
          this.text += s.slice(i, k);
          return this.more(k);
        }
      }
      k++;
      if (this.text.length + (k - i) > this.limit) return this.reject(k);
    }
    this.text += s.slice(i, k);
    return this.more(k);
  }
}

/**
 * A call's JSON arguments after optional whitespace: the call opens at their `{` (unless `call` is
 * null: it is open already, or, without `streams`, it is no call and is read only to find its end),
 * they stream to it, and it closes where they end ("done"; `cut` when the stop literal ended them).
 * A reject: no `{`, or a name that is not allowed.
 */
class JsonArguments extends Reader {
  private tracker: JsonValueTracker | null = null;

  constructor(
    private readonly call: { readonly name: string; readonly syntax: TextCallSyntaxName } | null,
    /** The call's end marker: outside a string it ends arguments that never closed (an invalid_json call). */
    private readonly stop: string | null,
    private readonly streams = true,
  ) {
    super();
  }

  get cut(): boolean {
    return this.tracker?.cut ?? false;
  }

  feed(s: string, i: number, x: ParseContext): number {
    if (this.tracker === null) {
      const j = skipWs(s, i);
      if (j === s.length) return this.more(i);
      if (s.charCodeAt(j) !== 123 || (this.call !== null && !x.open(this.call.name, this.call.syntax))) return this.reject(j);
      this.tracker = new JsonValueTracker(this.stop);
      i = j;
    }
    const at = this.tracker.feed(s, i);
    this.status = this.tracker.status;
    if (this.streams) {
      x.args(s.slice(i, at));
      if (this.status === "done") x.close();
    }
    return at;
  }
}

/**
 * Parameters read one by one (XML-like or pythonic) written as the call's JSON arguments object:
 * `{"key": ` before each value, `}` (or `{}`) at the end.
 */
export class ArgumentsObject {
  private first = true;

  get empty(): boolean {
    return this.first;
  }

  key(name: string, x: ParseContext): void {
    x.args(`${this.first ? "{" : ", "}${JSON.stringify(name)}: `);
    this.first = false;
  }

  close(x: ParseContext): void {
    x.args(this.first ? "{}" : "}");
  }
}

// ---- the JSON envelope: {"name": …, "arguments": {…}} ----------------------------------------

const enum EnvelopeState {
  Start,
  KeyOrEnd,
  Key,
  KeyBody,
  Colon,
  ValueStart,
  Name,
  TypeBody,
  Args,
  EarlyArgs,
  SkippedValue,
  AfterValue,
}

/**
 * `{"name": "f", "arguments": {…}}` read incrementally: the call opens when its arguments begin,
 * the arguments stream as they arrive, other keys are skipped. In a marked envelope the arguments
 * may come before the name (vLLM, SGLang and llama.cpp decode the object, so key order is free):
 * they are kept until the name opens the call. Done
 * when the object (or the call's end marker) ends it: the call is then closed and the text marked.
 */
export class Envelope extends Reader {
  private state = EnvelopeState.Start;
  private body = "";
  private key = "";
  private name: string | null = null;
  private tracker: JsonValueTracker | null = null;
  private argsSeen = false;
  /** Arguments read before the name, kept until it comes; null when none were. */
  private early: string | null = null;
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
  ) {
    super();
  }

  private fail(i: number, x: ParseContext, opened: boolean): number {
    return opened ? this.broken(i, x) : this.reject(i);
  }

  private startString(state: EnvelopeState): void {
    this.state = state;
    this.body = "";
    this.escape = false;
  }

  feed(s: string, i: number, x: ParseContext): number {
    while (i < s.length) {
      switch (this.state) {
        case EnvelopeState.Start:
        case EnvelopeState.Colon: {
          i = skipWs(s, i);
          if (i === s.length) break;
          const start = this.state === EnvelopeState.Start;
          if (s.charCodeAt(i) !== (start ? 123 : 58)) return this.fail(i, x, this.argsSeen);
          i++;
          this.state = start ? EnvelopeState.KeyOrEnd : EnvelopeState.ValueStart;
          break;
        }
        case EnvelopeState.KeyOrEnd:
        case EnvelopeState.Key:
        case EnvelopeState.AfterValue: {
          // `"` begins a key, `,` goes on to the next one, `}` ends the object.
          i = skipWs(s, i);
          if (i === s.length) break;
          const c = s.charCodeAt(i);
          if (c === 125 && this.state !== EnvelopeState.Key) return this.end(i + 1, x);
          const after = this.state === EnvelopeState.AfterValue;
          if (c !== (after ? 44 : 34)) return this.fail(i, x, this.argsSeen);
          i++;
          if (after) this.state = EnvelopeState.Key;
          else this.startString(EnvelopeState.KeyBody);
          break;
        }
        case EnvelopeState.KeyBody:
        case EnvelopeState.Name:
        case EnvelopeState.TypeBody: {
          const close = this.readString(s, i);
          if (this.tooLongAt >= 0) return this.fail(this.tooLongAt, x, this.argsSeen);
          if (close < 0) {
            i = s.length;
            break;
          }
          i = close;
          const value = decodeJsonStringBody(this.body);
          if (value === null) return this.fail(i, x, this.argsSeen);
          if (this.state === EnvelopeState.TypeBody) this.state = EnvelopeState.AfterValue;
          else if (this.state === EnvelopeState.KeyBody) {
            this.key = value;
            this.state = EnvelopeState.Colon;
          } else {
            this.name = value;
            this.state = EnvelopeState.AfterValue;
            if (this.early !== null) {
              if (!x.open(value, this.syntax)) return this.fail(i, x, false);
              this.argsSeen = true;
              x.args(this.early);
              this.early = null;
            }
          }
          break;
        }
        case EnvelopeState.ValueStart: {
          i = skipWs(s, i);
          if (i === s.length) break;
          const c = s.charCodeAt(i);
          if (this.key === "name" && this.name === null) {
            if (c !== 34) return this.fail(i, x, this.argsSeen);
            this.startString(EnvelopeState.Name);
            i++;
          } else if (!this.argsSeen && this.early === null && this.argKeys.includes(this.key)) {
            if (c !== 123 && c !== 34) return this.fail(i, x, false);
            this.tracker = new JsonValueTracker(this.stop);
            if (this.name === null) {
              // Bare JSON is a call only when a name opens it (the hold rule of a message start).
              if (this.requireArgs) return this.fail(i, x, false);
              this.early = "";
              this.state = EnvelopeState.EarlyArgs;
            } else {
              // The call opens here, and its arguments then stream.
              if (!x.open(this.name, this.syntax)) return this.fail(i, x, false);
              this.argsSeen = true;
              this.state = EnvelopeState.Args;
            }
          } else if (this.requireArgs && !this.argsSeen) {
            // A bare object at the start of a message is held only while it can be a call:
            // besides name and arguments, only a short string "type" may come first.
            if (this.key !== "type" || c !== 34) return this.fail(i, x, false);
            this.startString(EnvelopeState.TypeBody);
            i++;
          } else {
            this.tracker = new JsonValueTracker();
            this.state = EnvelopeState.SkippedValue;
          }
          break;
        }
        case EnvelopeState.Args:
        case EnvelopeState.EarlyArgs:
        case EnvelopeState.SkippedValue: {
          const tracker = this.tracker as JsonValueTracker;
          const end = tracker.feed(s, i);
          if (this.state === EnvelopeState.Args) x.args(s.slice(i, end));
          else if (this.state === EnvelopeState.EarlyArgs) {
            const early = (this.early ?? "") + s.slice(i, end);
            // Without a name no call is formed: arguments that are cut or too long leave it text.
            if (early.length > MAX_EARLY_ARGS || tracker.cut) return this.fail(i, x, false);
            this.early = early;
          }
          if (tracker.status === "more") return this.more(end);
          // The end marker came before the arguments closed: the call ends there, invalid_json.
          if (tracker.cut) return this.closeCall(end, x);
          i = end;
          this.tracker = null;
          this.state = EnvelopeState.AfterValue;
          break;
        }
      }
    }
    return this.more(i);
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

  /** The object closed at `i`. */
  private end(i: number, x: ParseContext): number {
    if (!this.argsSeen) {
      if (this.name === null || this.requireArgs || !x.open(this.name, this.syntax)) return this.fail(i, x, false);
    }
    return this.closeCall(i, x);
  }

  private closeCall(i: number, x: ParseContext): number {
    x.close();
    x.mark(i);
    return this.done(i);
  }
}

// ---- XML-like parameter values (Qwen3-Coder, DeepSeek DSML, GLM) -----------------------------------

/**
 * One parameter value read up to its end literal. String parameters stream as a JSON string;
 * parameters the schema types otherwise are kept until their end and written as JSON when they
 * parse as JSON (else as the string they are, with a diagnostic); a string that may be null is
 * kept until its end too, and is null when it is the bare word `null`. Done at the position after the
 * consumed end literal, or at one that is left for the caller.
 */
class ParamValue extends Reader {
  private readonly parts: string[] = [];
  private started = false;

  constructor(
    private readonly kind: ParamKind,
    private readonly key: string,
    /** Literals that end the value; the first is consumed, the others are left for the caller. */
    private readonly ends: readonly string[],
    /** Qwen3-Coder writes a newline after `>` and before `</parameter>`: one of each is dropped. */
    private readonly trimNewlines: boolean,
  ) {
    super();
  }

  private out(text: string, x: ParseContext): void {
    if (text.length === 0) return;
    if (this.kind === "string") x.args(jsonStringBody(text));
    else this.parts.push(text);
  }

  feed(s: string, i: number, x: ParseContext): number {
    if (!this.started) {
      if (i >= s.length) return this.more(i);
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
        return this.more(s.length - hold);
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
        if (partial && which < 0) return this.more(k - hold);
        this.finish(x);
        return this.done(which === 0 ? k + (this.ends[0] as string).length : k);
      }
      this.out(s.slice(i, k + 1), x);
      i = k + 1;
    }
    return this.more(s.length);
  }

  private finish(x: ParseContext): void {
    if (this.kind === "string") {
      x.args('"');
      return;
    }
    const raw = this.parts.join("");
    if (this.kind === "string-or-null") {
      x.args(raw.trim() === "null" ? "null" : JSON.stringify(raw));
      return;
    }
    const trimmed = raw.trim();
    let parsed = false;
    try {
      JSON.parse(trimmed);
      parsed = trimmed.length > 0;
    } catch {
      parsed = false;
    }
    if (parsed) x.args(trimmed);
    // A Python literal (Qwen3-Coder writes `True`): passed on as written, so that finalize's named
    // `python_literals` repair makes it JSON, as the servers' parsers read it (a string "False" would
    // be truthy).
    else if (trimmed === "True" || trimmed === "False" || trimmed === "None") x.args(trimmed);
    else {
      x.args(JSON.stringify(raw));
      x.diagnostic("text_call_param_not_json", `The tool schema types parameter \`${this.key}\` as non-string, but its value is not JSON; it was kept as the string the model wrote.`, { key: this.key, value: raw.slice(0, 200) });
    }
  }
}

// ---- <tool_call> … : Hermes JSON, Qwen3-Coder XML or GLM -----------------------------------------

const enum ToolCallTagState {
  Dispatch,
  Envelope,
  AfterEnvelope,
  Inner,
}

/** After `<tool_call>`: a JSON envelope (Hermes), `<function=` (Qwen3-Coder) or a bare name (GLM). */
export class ToolCallTagParser extends CallParser {
  private state = ToolCallTagState.Dispatch;
  private envelope: Envelope | null = null;
  private inner: CallParser | null = null;

  feed(s: string, i: number, x: ParseContext): number {
    while (true) {
      switch (this.state) {
        case ToolCallTagState.Dispatch: {
          const j = skipWs(s, i);
          if (j === s.length) return j - i > MAX_NAME ? this.reject(j) : this.more(i);
          const c = s.charCodeAt(j);
          if (c === 123 && x.has("hermes")) {
            this.envelope = new Envelope("hermes", ["arguments", "parameters"], false, "</tool_call>");
            this.state = ToolCallTagState.Envelope;
            i = j;
          } else if (c === 60) {
            const end = matchAt(s, j, "<function=");
            if (end === PARTIAL) return this.more(i);
            if (end < 0 || !x.has("qwen3-coder")) return this.reject(j);
            this.inner = InvokeParser.qwen3Coder();
            this.state = ToolCallTagState.Inner;
            i = end;
          } else if (x.has("glm") && !isWs(c)) {
            this.inner = InvokeParser.glm();
            this.state = ToolCallTagState.Inner;
            i = j;
          } else return this.reject(j);
          break;
        }
        case ToolCallTagState.Envelope: {
          const envelope = this.envelope as Envelope;
          i = envelope.feed(s, i, x);
          if (envelope.status !== "done") return this.stopWith(envelope, i, x, false);
          this.state = ToolCallTagState.AfterEnvelope;
          break;
        }
        case ToolCallTagState.AfterEnvelope:
          return this.endAfterOptional(s, i, "</tool_call>");
        case ToolCallTagState.Inner: {
          const inner = this.inner as CallParser;
          i = inner.feed(s, i, x);
          this.status = inner.status;
          return i;
        }
      }
    }
  }
}

// ---- XML-like invoke/parameter calls: Qwen3-Coder, DeepSeek DSML, GLM -----------------------------

const DSML = "<｜DSML｜";

/** How a syntax writes a call as markup that names the tool, with markup around each parameter. */
interface InvokeMarkup {
  readonly syntax: TextCallSyntaxName;
  /** A section of calls, each opened by `open` (DSML); without it, one call, read from its name on. */
  readonly section?: { readonly open: string; readonly end: string };
  /** What ends the name, consumed; a `{` among them begins JSON arguments. */
  readonly nameEnds: readonly string[];
  /** What ends the name and is left for the parameters to read (GLM's `<arg_key>`). */
  readonly nameStops?: readonly string[];
  /** What a name may not hold (after trimming, with `trim`). */
  readonly invalidName: RegExp;
  /** Markup between the name's end and the parameters (DSML's `>`): the call opens after it. */
  readonly afterName?: string;
  /** Whether whitespace around a name or key is dropped. */
  readonly trim: boolean;
  /** Whether a key may span lines (GLM: its name ends at a newline). */
  readonly multiline?: boolean;
  readonly parameter: string;
  readonly keyEnd: string;
  /** The key is followed by attributes up to `>` that type the value (DSML's `string="true|false"`). */
  readonly typedByAttributes?: boolean;
  /** Markup between the key and its value (GLM's `<arg_value>`). */
  readonly valueOpen?: string;
  /** What ends a value (the first is consumed; the others begin the next part and are left). */
  readonly valueEnds: readonly string[];
  readonly trimNewlines: boolean;
  readonly end: string;
  /** A JSON object in place of the parameters: read to its close, or cut at `end` outside a string (an invalid_json call). */
  readonly jsonArguments?: "whole" | "cut-at-end";
  /** Markup that may follow the call's end (`</tool_call>` after Qwen3-Coder's `</function>`). */
  readonly trail?: string;
}

const QWEN3_CODER: InvokeMarkup = {
  syntax: "qwen3-coder",
  nameEnds: [">", "{"],
  invalidName: /[\s<>]/,
  trim: true,
  parameter: "<parameter=",
  keyEnd: ">",
  valueEnds: ["</parameter>", "<parameter=", "</function>"],
  trimNewlines: true,
  end: "</function>",
  jsonArguments: "whole",
  trail: "</tool_call>",
};

const GLM: InvokeMarkup = {
  syntax: "glm",
  nameEnds: ["\n"],
  nameStops: ["<arg_key>", "</tool_call>"],
  invalidName: /</,
  trim: true,
  multiline: true,
  parameter: "<arg_key>",
  keyEnd: "</arg_key>",
  valueOpen: "<arg_value>",
  valueEnds: ["</arg_value>"],
  trimNewlines: false,
  end: "</tool_call>",
};

function dsmlMarkup(section: "function_calls" | "tool_calls"): InvokeMarkup {
  return {
    syntax: "deepseek",
    section: { open: `${DSML}invoke name="`, end: `</｜DSML｜${section}>` },
    nameEnds: ['"'],
    invalidName: /[\s<>]/,
    afterName: ">",
    trim: false,
    parameter: `${DSML}parameter name="`,
    keyEnd: '"',
    typedByAttributes: true,
    valueEnds: [`</｜DSML｜parameter>`],
    trimNewlines: false,
    end: `</｜DSML｜invoke>`,
    jsonArguments: "cut-at-end",
  };
}

const DSML_MARKUP = { function_calls: dsmlMarkup("function_calls"), tool_calls: dsmlMarkup("tool_calls") };

const enum InvokeState {
  Section,
  Name,
  AfterName,
  Parameters,
  Key,
  Attributes,
  ValueOpen,
  Value,
  JsonArgs,
  AfterJson,
  Trail,
}

/**
 * A call written as markup around its name and each parameter, in one of three markups.
 * Qwen3-Coder: `<function=NAME>` then `<parameter=KEY>VALUE</parameter>`… `</function>` (or
 * `<function=NAME>{json}</function>`, the form Llama models write on Groq). DeepSeek V3.2 / V4
 * DSML, after `<｜DSML｜function_calls>` (V3.2) or `<｜DSML｜tool_calls>` (V4): `<｜DSML｜invoke name="f">`
 * then `<｜DSML｜parameter name="k" string="true|false">v</｜DSML｜parameter>`… `</｜DSML｜invoke>`,
 * then the section's close. DSML's `string="true"` values are strings; `string="false"` values are
 * JSON (kept as the string written, with a diagnostic, when they are not). GLM 4.5+, after
 * `<tool_call>`: `NAME` `<arg_key>K</arg_key><arg_value>V</arg_value>`… `</tool_call>`.
 */
export class InvokeParser extends CallParser {
  private state: InvokeState;
  private token: Until;
  private name = "";
  private key = "";
  private object = new ArgumentsObject();
  private value: ParamValue | null = null;
  private args: JsonArguments | null = null;

  constructor(private readonly markup: InvokeMarkup) {
    super();
    this.state = markup.section ? InvokeState.Section : InvokeState.Name;
    this.token = this.nameReader();
  }

  private nameReader(): Until {
    const m = this.markup;
    return new Until(m.nameStops ? [...m.nameEnds, ...m.nameStops] : m.nameEnds, MAX_NAME, !m.multiline);
  }

  static qwen3Coder(): InvokeParser {
    return new InvokeParser(QWEN3_CODER);
  }

  static glm(): InvokeParser {
    return new InvokeParser(GLM);
  }

  static dsml(section: "function_calls" | "tool_calls"): InvokeParser {
    return new InvokeParser(DSML_MARKUP[section]);
  }

  /** Opens the call named by the name just read; false when it is not allowed. */
  private open(x: ParseContext): boolean {
    if (!x.open(this.name, this.markup.syntax)) return false;
    this.object = new ArgumentsObject();
    this.state = InvokeState.Parameters;
    return true;
  }

  /** After the call's end (at `i`, marked): the section's next call, or the optional trail. */
  private afterCall(): void {
    this.state = this.markup.section ? InvokeState.Section : InvokeState.Trail;
  }

  private startValue(kind: ParamKind, x: ParseContext): void {
    this.object.key(this.key, x);
    this.value = new ParamValue(kind, this.key, this.markup.valueEnds, this.markup.trimNewlines);
    this.state = this.markup.valueOpen ? InvokeState.ValueOpen : InvokeState.Value;
  }

  feed(s: string, i: number, x: ParseContext): number {
    const m = this.markup;
    while (true) {
      switch (this.state) {
        case InvokeState.Section: {
          const section = m.section as { open: string; end: string };
          const r = expectAfterWs(s, i, [section.open, section.end]);
          if (r.kind === "more") return this.more(i);
          if (r.kind === "none") return this.reject(r.at);
          if (r.which === 1) return this.done(r.end);
          this.token = this.nameReader();
          this.state = InvokeState.Name;
          i = r.end;
          break;
        }
        case InvokeState.Name: {
          const token = this.token;
          let at = token.feed(s, i);
          if (token.status !== "done") return this.stopWith(token, at, x, false);
          // A stop ends the name without being consumed.
          const stop = m.nameStops?.[token.which - m.nameEnds.length];
          if (stop !== undefined) at -= stop.length;
          this.name = m.trim ? token.text.trim() : token.text;
          if (this.name.length === 0 || m.invalidName.test(this.name)) return this.reject(at);
          if (m.afterName !== undefined) this.state = InvokeState.AfterName;
          else if (!this.open(x)) return this.reject(at);
          // `{` ends the name without being consumed: the arguments are JSON.
          i = m.nameEnds[token.which] === "{" ? at - 1 : at;
          break;
        }
        case InvokeState.AfterName: {
          const r = expectAfterWs(s, i, [m.afterName as string]);
          if (r.kind === "more") return this.more(i);
          if (r.kind === "none" || !this.open(x)) return this.reject(i);
          i = r.end;
          break;
        }
        case InvokeState.Parameters: {
          if (this.object.empty && m.jsonArguments) {
            const j = skipWs(s, i);
            if (j === s.length) return this.more(i);
            if (s.charCodeAt(j) === 123) {
              this.args = new JsonArguments(null, m.jsonArguments === "cut-at-end" ? m.end : null);
              this.state = InvokeState.JsonArgs;
              i = j;
              break;
            }
          }
          const r = expectAfterWs(s, i, [m.parameter, m.end]);
          if (r.kind === "more") return this.more(i);
          if (r.kind === "none") return this.broken(r.at, x);
          i = r.end;
          if (r.which === 0) {
            this.token = new Until([m.keyEnd], MAX_NAME, !m.multiline);
            this.state = InvokeState.Key;
            break;
          }
          this.object.close(x);
          x.close();
          x.mark(i);
          this.afterCall();
          break;
        }
        case InvokeState.Key: {
          const at = this.token.feed(s, i);
          if (this.token.status !== "done") return this.stopWith(this.token, at, x, true);
          this.key = m.trim ? this.token.text.trim() : this.token.text;
          i = at;
          if (m.typedByAttributes) {
            this.token = new Until([">"], 64);
            this.state = InvokeState.Attributes;
          } else this.startValue(x.paramKind(this.key), x);
          break;
        }
        case InvokeState.Attributes: {
          const at = this.token.feed(s, i);
          if (this.token.status !== "done") return this.stopWith(this.token, at, x, true);
          const attrs = this.token.text.trim();
          this.startValue(attrs === 'string="true"' ? "string" : attrs === 'string="false"' ? "json" : attrs === "" ? x.paramKind(this.key) : "string", x);
          i = at;
          break;
        }
        case InvokeState.ValueOpen: {
          const r = expectAfterWs(s, i, [m.valueOpen as string]);
          if (r.kind === "more") return this.more(i);
          if (r.kind === "none") return this.broken(r.at, x);
          i = r.end;
          this.state = InvokeState.Value;
          break;
        }
        case InvokeState.Value: {
          const value = this.value as ParamValue;
          i = value.feed(s, i, x);
          if (value.status === "more") return this.more(i);
          this.value = null;
          this.state = InvokeState.Parameters;
          break;
        }
        case InvokeState.JsonArgs: {
          const args = this.args as JsonArguments;
          i = args.feed(s, i, x);
          if (args.status === "more") return this.more(i);
          x.mark(i);
          this.state = InvokeState.AfterJson;
          break;
        }
        case InvokeState.AfterJson: {
          const r = expectAfterWs(s, i, [m.end]);
          if (r.kind === "more") return this.more(i);
          if (r.kind === "match") {
            i = r.end;
            x.mark(i);
          } else if (!m.section) return this.done(i);
          this.afterCall();
          break;
        }
        case InvokeState.Trail:
          return m.trail === undefined ? this.done(i) : this.endAfterOptional(s, i, m.trail);
      }
    }
  }
}

// ---- section-style special tokens: Kimi K2, DeepSeek --------------------------------------------

const enum SectionState {
  Section,
  Head,
  FencedName,
  Fence,
  Args,
  AfterFence,
  AfterCall,
  SkippedCallEnd,
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
  private state: SectionState;
  private head: Until;
  private name = "";
  private args: JsonArguments | null = null;
  private fenced = false;
  /** The call's id is malformed: its arguments are read to find its end, then it is released as text. */
  private skip = false;
  /** Whitespace read before the current call's id (bounded, as held whitespace is). */
  private leadingWs = 0;

  constructor(
    private readonly tokens: SectionTokens,
    private readonly inSection: boolean,
  ) {
    super();
    this.state = inSection ? SectionState.Section : SectionState.Head;
    this.head = new Until([tokens.separator]);
  }

  static kimi(inSection: boolean): SectionParser {
    return new SectionParser(KIMI, inSection);
  }

  static deepseek(inSection: boolean): SectionParser {
    return new SectionParser(DEEPSEEK, inSection);
  }

  private startArgs(): void {
    // A malformed call (`skip`) is no call: its arguments are read only to find its end.
    this.args = new JsonArguments(this.skip ? null : { name: this.name, syntax: this.tokens.syntax }, this.tokens.callEnd, !this.skip);
    this.state = SectionState.Args;
  }

  feed(s: string, i: number, x: ParseContext): number {
    const t = this.tokens;
    while (true) {
      switch (this.state) {
        case SectionState.Section: {
          const r = expectAfterWs(s, i, [t.callBegin, t.sectionEnd]);
          if (r.kind === "more") return this.more(i);
          if (r.kind === "none") return this.reject(r.at);
          if (r.which === 1) return this.done(r.end);
          this.head = new Until([t.separator]);
          this.leadingWs = 0;
          this.state = SectionState.Head;
          i = r.end;
          break;
        }
        case SectionState.Head: {
          if (t === KIMI && this.head.text.length === 0) {
            // Whitespace before the id (`<|tool_call_begin|>\nfunctions.f:0`, or a space a
            // detokenizer puts between special tokens), as vLLM's and SGLang's Kimi parsers allow.
            const j = skipWs(s, i);
            this.leadingWs += j - i;
            if (this.leadingWs > MAX_HELD_WS) return this.reject(j);
            i = j;
            if (i === s.length) return this.more(i);
          }
          const at = this.head.feed(s, i);
          if (this.head.status !== "done") return this.stopWith(this.head, at, x, false);
          const text = this.head.text.trim();
          i = at;
          if (t === DEEPSEEK && text === "function") {
            this.head = new Until(["\n", "`"], MAX_NAME, false);
            this.state = SectionState.FencedName;
            break;
          }
          const name = t === KIMI ? kimiName(text) : text;
          if (name === null) {
            x.diagnostic("text_call_bad_id", `The text holds a ${t.syntax} tool call whose id \`${text.slice(0, 100)}\` is not of the form functions.NAME:INDEX; it was left as text.`, { id: text.slice(0, 200) });
            this.skip = true;
          } else if (name.length === 0) return this.reject(i);
          this.name = name ?? "";
          this.startArgs();
          break;
        }
        case SectionState.FencedName: {
          const at = this.head.feed(s, i);
          if (this.head.status !== "done") return this.stopWith(this.head, at, x, false);
          this.name = this.head.text.trim();
          if (this.name.length === 0) return this.reject(at);
          // "`" ends the name without being consumed: the fence begins there.
          i = this.head.which === 1 ? at - 1 : at;
          this.state = SectionState.Fence;
          break;
        }
        case SectionState.Fence: {
          const r = expectAfterWs(s, i, ["```json", "```"]);
          if (r.kind === "more") return this.more(i);
          if (r.kind === "match") {
            this.fenced = true;
            i = r.end;
          }
          this.startArgs();
          break;
        }
        case SectionState.Args: {
          const args = this.args as JsonArguments;
          i = args.feed(s, i, x);
          if (args.status !== "done") return this.stopWith(args, i, x, false);
          if (this.skip) {
            this.state = SectionState.SkippedCallEnd;
            break;
          }
          x.mark(i);
          // Cut at the call's end token: the arguments did not close (an invalid_json call).
          this.state = this.fenced && !args.cut ? SectionState.AfterFence : SectionState.AfterCall;
          break;
        }
        case SectionState.SkippedCallEnd: {
          // Through the call's end token, when it follows: the malformed call is all text.
          const r = expectAfterWs(s, i, [t.callEnd]);
          if (r.kind === "more") return this.more(i);
          i = r.kind === "match" ? r.end : i;
          x.release(i);
          this.skip = false;
          if (!this.inSection) return this.done(i);
          this.state = SectionState.Section;
          break;
        }
        case SectionState.AfterFence:
        case SectionState.AfterCall: {
          const r = expectAfterWs(s, i, [this.state === SectionState.AfterFence ? "```" : t.callEnd]);
          if (r.kind === "more") return this.more(i);
          if (r.kind === "match") {
            i = r.end;
            x.mark(i);
          }
          if (this.state === SectionState.AfterFence) this.state = SectionState.AfterCall;
          else if (!this.inSection) return this.done(i);
          else {
            this.fenced = false;
            this.state = SectionState.Section;
          }
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

// ---- JSON call lists: Mistral v3, Nemotron, FireFunction v2 --------------------------------------

const enum ListState {
  Item,
  Envelope,
  AfterCall,
}

/**
 * `{…}, {…}]` after a list's `[`: each `{"name": …, "arguments": {…}}` is a call, formed when its
 * object closes; done after the `]`. An empty list, or an item that is not an object, is no call.
 */
class EnvelopeList extends Reader {
  private state = ListState.Item;
  private envelope: Envelope | null = null;

  constructor(
    private readonly syntax: TextCallSyntaxName,
    /** The wrapper's end marker: outside a string it ends arguments that never closed. */
    private readonly stop: string | null,
  ) {
    super();
  }

  feed(s: string, i: number, x: ParseContext): number {
    while (true) {
      switch (this.state) {
        case ListState.Item: {
          const j = skipWs(s, i);
          if (j === s.length) return this.more(i);
          if (s.charCodeAt(j) !== 123) return this.reject(j);
          this.envelope = new Envelope(this.syntax, ["arguments", "parameters"], false, this.stop);
          this.state = ListState.Envelope;
          i = j;
          break;
        }
        case ListState.Envelope: {
          const envelope = this.envelope as Envelope;
          i = envelope.feed(s, i, x);
          if (envelope.status !== "done") {
            this.status = envelope.status;
            return i;
          }
          this.state = ListState.AfterCall;
          break;
        }
        case ListState.AfterCall: {
          const r = expectAfterWs(s, i, [",", "]"]);
          if (r.kind === "more") return this.more(i);
          if (r.kind === "none") return this.reject(r.at);
          if (r.which === 1) return this.done(r.end);
          this.state = ListState.Item;
          i = r.end;
          break;
        }
      }
    }
  }
}

/**
 * A JSON call list in a wrapper, started after its opening marker: Nemotron's
 * `<TOOLCALL>[{…}, …]</TOOLCALL>` (the end marker consumed when present) and FireFunction v2's
 * `functools[{…}, …]` (the marker holds the `[`).
 */
export class WrappedListParser extends CallParser {
  private list: EnvelopeList | null = null;
  private listDone = false;

  private constructor(
    private readonly syntax: TextCallSyntaxName,
    private readonly end: string | null,
    private readonly bracketInMarker: boolean,
  ) {
    super();
  }

  static nemotron(): WrappedListParser {
    return new WrappedListParser("nemotron", "</TOOLCALL>", false);
  }

  static firefunction(): WrappedListParser {
    return new WrappedListParser("firefunction", null, true);
  }

  feed(s: string, i: number, x: ParseContext): number {
    if (this.list === null) {
      if (!this.bracketInMarker) {
        const r = expectAfterWs(s, i, ["["]);
        if (r.kind === "more") return this.more(i);
        if (r.kind === "none") return this.reject(r.at);
        i = r.end;
      }
      this.list = new EnvelopeList(this.syntax, this.end);
    }
    if (!this.listDone) {
      i = this.list.feed(s, i, x);
      if (this.list.status !== "done") return this.stopWith(this.list, i, x, false);
      this.listDone = true;
      x.mark(i);
    }
    return this.end === null ? this.done(i) : this.endAfterOptional(s, i, this.end);
  }
}

// ---- Mistral ---------------------------------------------------------------------------------------

const enum MistralState {
  Start,
  List,
  SingleEnvelope,
  Name,
  CallId,
  Args,
}

function isNameChar(c: number): boolean {
  return (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95 || c === 45 || c === 46;
}

/** After `[TOOL_CALLS]`: `[{…}, …]` (tokenizer v3), `{…}`, or `NAME[ARGS]{…}` / `NAME[CALL_ID]id[ARGS]{…}` (v11+). */
export class MistralParser extends CallParser {
  private state = MistralState.Start;
  private envelope: Envelope | null = null;
  private list: EnvelopeList | null = null;
  private token: Until | null = null;
  private name = "";
  private args: JsonArguments | null = null;

  feed(s: string, i: number, x: ParseContext): number {
    while (true) {
      switch (this.state) {
        case MistralState.Start: {
          const j = skipWs(s, i);
          if (j === s.length) return j - i > MAX_NAME ? this.reject(j) : this.more(i);
          const c = s.charCodeAt(j);
          i = j;
          // [TOOL_CALLS] is a control token, never text: what follows it is text unless it is a call.
          x.mark(j);
          if (c === 91) {
            this.list = new EnvelopeList("mistral", null);
            this.state = MistralState.List;
            i++;
          } else if (c === 123) {
            this.envelope = new Envelope("mistral", ["arguments", "parameters"], false);
            this.state = MistralState.SingleEnvelope;
          } else if (isNameChar(c)) {
            // v11+: NAME[ARGS]{…}, NAME[CALL_ID]id[ARGS]{…}, or NAME{…} (the text vLLM decodes with
            // the [ARGS] special token skipped).
            this.token = new Until(["[ARGS]", "[CALL_ID]", "{"]);
            this.state = MistralState.Name;
          } else return this.reject(j);
          break;
        }
        case MistralState.List:
        case MistralState.SingleEnvelope: {
          const part = (this.state === MistralState.List ? this.list : this.envelope) as Reader & { feed(s: string, i: number, x: ParseContext): number };
          i = part.feed(s, i, x);
          return part.status === "done" ? this.done(i) : this.stopWith(part, i, x, false);
        }
        case MistralState.Name:
        case MistralState.CallId: {
          const token = this.token as Until;
          const at = token.feed(s, i);
          if (token.status !== "done") return this.stopWith(token, at, x, false);
          if (this.state === MistralState.Name) {
            this.name = token.text.trim();
            if (!/^[A-Za-z0-9_.-]+$/.test(this.name)) return this.reject(at);
          }
          // `{` ends the name without being consumed: the arguments begin there.
          i = token.which === 2 ? at - 1 : at;
          if (token.which === 1) {
            this.token = new Until(["[ARGS]"]);
            this.state = MistralState.CallId;
          } else {
            // The next call's [TOOL_CALLS] ends arguments that never closed (an invalid_json call).
            this.args = new JsonArguments({ name: this.name, syntax: "mistral" }, "[TOOL_CALLS]");
            this.state = MistralState.Args;
          }
          break;
        }
        case MistralState.Args: {
          const args = this.args as JsonArguments;
          i = args.feed(s, i, x);
          return args.status === "done" ? this.done(i) : this.stopWith(args, i, x, false);
        }
      }
    }
  }
}

// ---- Llama 3.x JSON ------------------------------------------------------------------------------

/** `<|python_tag|>{"name": …, "parameters": {…}}`, or such objects as the whole message, `;`-separated. */
export class LlamaJsonParser extends CallParser {
  /** The envelope being read, or null between calls. */
  private envelope: Envelope | null;

  constructor(private readonly bare: boolean) {
    super();
    this.envelope = this.nextEnvelope();
  }

  private nextEnvelope(): Envelope {
    return new Envelope("llama3-json", ["parameters", "arguments"], this.bare);
  }

  feed(s: string, i: number, x: ParseContext): number {
    while (true) {
      if (this.envelope !== null) {
        i = this.envelope.feed(s, i, x);
        if (this.envelope.status !== "done") return this.stopWith(this.envelope, i, x, false);
        this.envelope = null;
        continue;
      }
      const r = expectAfterWs(s, i, [";", "<|eom_id|>", "<|eot_id|>", "{"]);
      if (r.kind === "more") return this.more(i);
      if (r.kind === "none") return this.done(i);
      if (r.which === 1 || r.which === 2) return this.done(r.end);
      this.envelope = this.nextEnvelope();
      // `;` or a newline (or nothing) between calls: another envelope follows (vLLM llama3_json).
      if (r.which === 3) {
        x.mark(i);
        i = r.end - 1;
      } else {
        x.mark(r.end);
        i = r.end;
      }
    }
  }
}

// ---- gpt-oss harmony -----------------------------------------------------------------------------

const enum HarmonyState {
  Name,
  Header,
  Args,
  Body,
  AfterArgs,
}

/** What ends a harmony message: `<|call|>` makes it a call; the others leave it text. */
const HARMONY_MESSAGE_ENDS = ["<|call|>", "<|end|>", "<|return|>", "<|start|>", "<|channel|>"];

/** After `… to=functions.`: `NAME [<|constrain|>json]<|message|>{…}<|call|>`. */
export class HarmonyParser extends CallParser {
  private state = HarmonyState.Name;
  private readonly name = new Until([" ", "<", "\t"], MAX_NAME, true);
  private readonly header = new Until(["<|message|>"], 128, false);
  private args: JsonArguments | null = null;
  /** A message body that is not a JSON object: a call (with arguments finalize refuses) only if `<|call|>` ends it. */
  private readonly body = new Until(HARMONY_MESSAGE_ENDS, MAX_EARLY_ARGS, false);
  private objectBody = false;

  feed(s: string, i: number, x: ParseContext): number {
    while (true) {
      switch (this.state) {
        case HarmonyState.Name: {
          const at = this.name.feed(s, i);
          if (this.name.status !== "done") return this.stopWith(this.name, at, x, false);
          // The name's terminator is not consumed: the header goes on there.
          i = at - 1;
          if (this.name.text.length === 0) return this.reject(i);
          this.state = HarmonyState.Header;
          break;
        }
        case HarmonyState.Header: {
          i = this.header.feed(s, i);
          if (this.header.status !== "done") return this.stopWith(this.header, i, x, false);
          this.args = new JsonArguments({ name: this.name.text, syntax: "harmony" }, "<|call|>");
          this.state = HarmonyState.Args;
          break;
        }
        case HarmonyState.Args: {
          if (!this.objectBody) {
            const j = skipWs(s, i);
            if (j === s.length) return this.more(i);
            // The recipient and `<|message|>` already make this a call's envelope: a body that is no
            // object is its arguments all the same, closed by `<|call|>` (the servers give the call).
            if (s.charCodeAt(j) !== 123) {
              this.state = HarmonyState.Body;
              break;
            }
            this.objectBody = true;
          }
          const args = this.args as JsonArguments;
          i = args.feed(s, i, x);
          if (args.status !== "done") return this.stopWith(args, i, x, false);
          x.mark(i);
          this.state = HarmonyState.AfterArgs;
          break;
        }
        case HarmonyState.Body: {
          const at = this.body.feed(s, i);
          if (this.body.status !== "done") return this.stopWith(this.body, at, x, false);
          const end = HARMONY_MESSAGE_ENDS[this.body.which] as string;
          // Another message or its end: the envelope never closed as a call, so it is text.
          if (this.body.which !== 0 || !x.open(this.name.text, "harmony")) return this.reject(at - end.length);
          x.args(this.body.text.trim());
          x.close();
          x.mark(at);
          return this.done(at);
        }
        case HarmonyState.AfterArgs:
          return this.endAfterOptional(s, i, "<|call|>");
      }
    }
  }
}

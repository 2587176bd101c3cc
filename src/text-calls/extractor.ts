import type { Diagnostic, TruncationCause } from "../types.js";
import { resolveTextCallOptions, type ParamKind, type ResolvedTextCallOptions, type TextCallSetting } from "./options.js";
import {
  HarmonyParser,
  LlamaJsonParser,
  MistralParser,
  SectionParser,
  ToolCallTagParser,
  XmlFunctionParser,
  type CallParser,
  type ParseContext,
} from "./parsers.js";
import { PythonicParser } from "./pythonic.js";
import { isWs, matchAt, PARTIAL } from "./scan.js";
import type { TextCallSyntaxName } from "./syntaxes.js";

/** Where the extractor sends what it reads: plain text, and calls with their argument text. */
export interface TextCallSink {
  text(text: string): void;
  open(name: string, syntax: TextCallSyntaxName): void;
  args(fragment: string): void;
  /** `complete: false` with the cause: the stream ended, or the text left the call's markup. */
  close(complete: boolean, cause?: TruncationCause): void;
  diagnostic(diagnostic: Diagnostic): void;
}

interface Marker {
  literal: string;
  syntax: TextCallSyntaxName;
  create: () => CallParser;
}

const MARKERS: readonly Marker[] = [
  { literal: "<tool_call>", syntax: "hermes", create: () => new ToolCallTagParser() },
  { literal: "<function=", syntax: "qwen3-coder", create: () => new XmlFunctionParser(false) },
  { literal: "<|tool_calls_section_begin|>", syntax: "kimi-k2", create: () => SectionParser.kimi(true) },
  { literal: "<|tool_call_begin|>", syntax: "kimi-k2", create: () => SectionParser.kimi(false) },
  { literal: "[TOOL_CALLS]", syntax: "mistral", create: () => new MistralParser() },
  { literal: "<|python_tag|>", syntax: "llama3-json", create: () => new LlamaJsonParser(false) },
  { literal: "<｜tool▁calls▁begin｜>", syntax: "deepseek", create: () => SectionParser.deepseek(true) },
  { literal: "<｜tool▁call▁begin｜>", syntax: "deepseek", create: () => SectionParser.deepseek(false) },
  { literal: "<|start|>assistant<|channel|>commentary to=functions.", syntax: "harmony", create: () => new HarmonyParser() },
  { literal: "<|channel|>commentary to=functions.", syntax: "harmony", create: () => new HarmonyParser() },
  { literal: "<|start|>assistant to=functions.", syntax: "harmony", create: () => new HarmonyParser() },
];

/** `<tool_call>` opens Hermes, Qwen3-Coder and GLM calls alike: it is on when any of them is. */
function markerEnabled(marker: Marker, syntaxes: ReadonlySet<TextCallSyntaxName>): boolean {
  if (marker.literal === "<tool_call>") return syntaxes.has("hermes") || syntaxes.has("qwen3-coder") || syntaxes.has("glm");
  return syntaxes.has(marker.syntax);
}

interface MarkerTable {
  markers: readonly Marker[];
  firstChars: string;
  pairCodes: readonly number[];
}

/** Per set of syntaxes (resolved options share theirs): built once, not for every text block. */
const markerTables = new WeakMap<ReadonlySet<TextCallSyntaxName>, MarkerTable>();

function markerTableFor(syntaxes: ReadonlySet<TextCallSyntaxName>): MarkerTable {
  let table = markerTables.get(syntaxes);
  if (!table) {
    const markers = MARKERS.filter((marker) => markerEnabled(marker, syntaxes));
    table = {
      markers,
      firstChars: [...new Set(markers.map((m) => m.literal[0] as string))].join(""),
      pairCodes: [...new Set(markers.map((m) => m.literal.charCodeAt(0) * 65536 + m.literal.charCodeAt(1)))],
    };
    markerTables.set(syntaxes, table);
  }
  return table;
}

/** The longest marker: no more than this many characters of plain text are ever held back. */
export const LONGEST_MARKER = Math.max(...MARKERS.map((m) => m.literal.length));

/**
 * The incremental text-call extractor for one stream of text. Text before a possible marker is
 * passed on at once; only a suffix that could still start a marker is held back (at most
 * LONGEST_MARKER characters), or a call's short header until it proves to be a call. Inside a
 * call the argument text is passed on as it arrives. The work per `push` is proportional to the
 * text pushed plus the (bounded) text held back.
 */
export class TextCallExtractor implements ParseContext {
  private pending = "";
  private parser: CallParser | null = null;
  private readonly markers: readonly Marker[];
  private readonly firstChars: string;
  /** First and second character codes of the markers, as `first * 65536 + second`. */
  private readonly pairCodes: readonly number[];
  private readonly usualFirstChars: boolean;
  /** Text read by the active parser since the last mark: emitted as text when the parser rejects. */
  private heldRaw = "";
  private rawFrom = 0;
  private callOpen = false;
  private callName = "";
  /** Only whitespace so far: the whole-message syntaxes (bare JSON, pythonic) may still start. */
  private atStart = true;
  private ended = false;

  constructor(
    private readonly options: ResolvedTextCallOptions,
    private readonly sink: TextCallSink,
  ) {
    const table = markerTableFor(options.syntaxes);
    this.markers = table.markers;
    this.firstChars = table.firstChars;
    this.usualFirstChars = table.firstChars === "<[";
    this.pairCodes = table.pairCodes;
  }

  /** Calls this extractor opened so far. */
  callsOpened = 0;

  /** True while a call is open (its arguments are streaming). */
  get inCall(): boolean {
    return this.callOpen;
  }

  /** Characters currently held back. */
  get heldBack(): number {
    return this.pending.length + this.heldRaw.length;
  }

  /**
   * True when `text` is plain text the caller may pass on itself, as it is (the extractor is
   * between calls, holds nothing, and `text` cannot start a marker): the per-delta fast path.
   */
  passesThrough(text: string): boolean {
    return this.parser === null && this.pending.length === 0 && !this.atStart && !this.ended && !this.mayStartMarker(text);
  }

  push(text: string): void {
    if (this.passesThrough(text)) {
      if (text.length > 0) this.sink.text(text);
      return;
    }
    if (this.ended || text.length === 0) return;
    const s = this.pending.length > 0 ? this.pending + text : text;
    this.pending = "";
    this.rawFrom = 0;
    let i = 0;
    while (i < s.length) {
      const parser = this.parser;
      if (!parser) {
        i = this.scanText(s, i);
        continue;
      }
      const at = parser.feed(s, i, this);
      if (parser.status === "more") {
        if (!this.callOpen) this.heldRaw += s.slice(this.rawFrom, at);
        this.pending = s.slice(at);
        this.flush();
        return;
      }
      if (parser.status === "reject") {
        const text = this.callOpen ? "" : this.heldRaw + s.slice(this.rawFrom, at);
        this.parser = null;
        this.heldRaw = "";
        this.emit(text);
      } else {
        this.parser = null;
        this.heldRaw = "";
      }
      i = at;
    }
    // A marker that ends the text: its parser has read nothing yet, but the marker is held.
    if (this.parser && !this.callOpen) this.heldRaw += s.slice(this.rawFrom, i);
    this.flush();
  }

  /**
   * The text is over. Held text is passed on; a call still open is closed as not complete with
   * `cause` (its end never came).
   */
  end(cause: TruncationCause): void {
    if (this.ended) return;
    this.ended = true;
    if (this.parser && this.callOpen) {
      this.callOpen = false;
      this.sink.close(false, cause);
    } else {
      this.emit(this.heldRaw + this.pending);
      this.flush();
    }
    this.parser = null;
    this.pending = "";
    this.heldRaw = "";
  }

  /** Text passed on by one `push`, sent as one piece (before a call opens, or when the push ends). */
  private out = "";

  private flush(): void {
    if (this.out.length > 0) {
      const text = this.out;
      this.out = "";
      this.sink.text(text);
    }
  }

  private emit(text: string): void {
    if (text.length === 0) return;
    if (this.atStart) {
      for (let k = 0; k < text.length; k++) {
        if (!isWs(text.charCodeAt(k))) {
          this.atStart = false;
          break;
        }
      }
    }
    this.out = this.out.length === 0 ? text : this.out + text;
  }

  private activate(parser: CallParser, at: number): void {
    this.parser = parser;
    this.heldRaw = "";
    this.rawFrom = at;
    this.atStart = false;
  }

  /** Plain text from `i`: emits it up to the next marker and starts that marker's parser. */
  private scanText(s: string, i: number): number {
    if (this.atStart) {
      let j = i;
      while (j < s.length && isWs(s.charCodeAt(j))) j++;
      if (j > i) this.emit(s.slice(i, j));
      if (j === s.length) return j;
      const c = s.charCodeAt(j);
      if (c === 123 && this.options.syntaxes.has("llama3-json")) {
        this.activate(new LlamaJsonParser(true), j);
        return j;
      }
      if (c === 91 && this.options.syntaxes.has("pythonic")) {
        const marker = this.markerAt(s, j);
        if (marker === PARTIAL) {
          this.pending = s.slice(j);
          return s.length;
        }
        if (marker === null) {
          this.activate(new PythonicParser(), j);
          return j;
        }
      }
      i = j;
    }
    const n = s.length;
    // Plain text is passed on as one slice (or `s` itself), not piece by piece around each `<`.
    const from = i;
    while (i < n) {
      const k = this.nextCandidate(s, i);
      if (k < 0) break;
      const marker = this.markerAt(s, k);
      if (marker === null) {
        i = k + 1;
        continue;
      }
      if (k > from) this.emit(s.slice(from, k));
      if (marker === PARTIAL) {
        this.pending = s.slice(k);
        return n;
      }
      this.activate(marker.create(), k);
      return k + marker.literal.length;
    }
    this.emit(from === 0 ? s : s.slice(from));
    return n;
  }

  /**
   * Whether `text` may hold the start of a marker: a whole one, or the start of one that the text
   * ends in. No allocation: the `<` and `[` of ordinary text ("a < b", "Array<T>", "[1]", "<tag>")
   * are rejected here without leaving the fast path.
   */
  private mayStartMarker(text: string): boolean {
    const firstChars = this.firstChars;
    // The usual set ("<" and "["): two native searches settle most deltas.
    if (this.usualFirstChars && text.indexOf("<") < 0 && text.indexOf("[") < 0) return false;
    for (let f = 0; f < firstChars.length; f++) {
      // indexOf is native: on text deltas it beats a loop over the characters.
      for (let k = text.indexOf(firstChars[f] as string); k >= 0; k = text.indexOf(firstChars[f] as string, k + 1)) {
        // A marker, or the start of one at the end of the text; "<tag>" or "<|endoftext|>" stay on the fast path.
        if (this.markerAt(text, k) !== null) return true;
      }
    }
    return false;
  }

  private nextCandidate(s: string, i: number): number {
    let best = -1;
    for (let f = 0; f < this.firstChars.length; f++) {
      const k = s.indexOf(this.firstChars[f] as string, i);
      if (k >= 0 && (best < 0 || k < best)) best = k;
    }
    return best;
  }

  /** The marker starting at `k`, PARTIAL when the text ends inside one, null when none. */
  private markerAt(s: string, k: number): Marker | typeof PARTIAL | null {
    // Most `<` and `[` in text start no marker: their first two characters say so at once.
    if (k + 1 < s.length && !this.pairCodes.includes(s.charCodeAt(k) * 65536 + s.charCodeAt(k + 1))) return null;
    let partial = false;
    for (const marker of this.markers) {
      const end = matchAt(s, k, marker.literal);
      if (end >= 0) return marker;
      if (end === PARTIAL) partial = true;
    }
    return partial ? PARTIAL : null;
  }

  // ---- ParseContext ------------------------------------------------------------------------------

  open(name: string, syntax: TextCallSyntaxName): boolean {
    const allowed = this.options.toolNames;
    if (allowed && !allowed.has(name)) {
      this.diagnostic("text_call_unknown_tool", `The text holds a ${syntax} tool call to \`${name}\`, which is not one of the tools offered; it was left as text.`, { name, syntax });
      return false;
    }
    this.callOpen = true;
    this.callsOpened++;
    this.callName = name;
    this.heldRaw = "";
    this.flush();
    this.sink.open(name, syntax);
    return true;
  }

  args(fragment: string): void {
    if (fragment.length > 0) this.sink.args(fragment);
  }

  close(): void {
    this.callOpen = false;
    this.sink.close(true);
  }

  broken(): void {
    this.callOpen = false;
    this.sink.close(false, "markup_broken");
  }

  mark(position: number): void {
    this.heldRaw = "";
    this.rawFrom = position;
  }

  paramKind(key: string): ParamKind {
    return this.options.paramKinds.get(this.callName)?.get(key) ?? "string";
  }

  diagnostic(code: string, message: string, data?: unknown): void {
    this.sink.diagnostic({ code, severity: "warning", message, ...(data === undefined ? {} : { data }) });
  }

  has(syntax: TextCallSyntaxName): boolean {
    return this.options.syntaxes.has(syntax);
  }
}

/** One call found by `extractTextCalls`. */
export interface ExtractedTextCall {
  name: string;
  syntax: TextCallSyntaxName;
  /** The argument text as read (JSON; XML-style parameters written as a JSON object). */
  argumentText: string;
  complete: boolean;
  cause?: TruncationCause;
}

function isResolved(options: TextCallSetting | ResolvedTextCallOptions): options is ResolvedTextCallOptions {
  return typeof options === "object" && !Array.isArray(options) && (options as ResolvedTextCallOptions).syntaxes instanceof Set;
}

/**
 * The extractor run on a whole text at once (a stored message, a provider's failed generation):
 * the text without the calls' markup, the calls, and diagnostics. A call still open at the end is
 * `complete: false` with `cause`. Throws TextCallOptionsError on bad options.
 */
export function extractTextCalls(
  text: string,
  setting: TextCallSetting | ResolvedTextCallOptions = "auto",
  cause: TruncationCause = "stream_ended",
): { text: string; calls: ExtractedTextCall[]; diagnostics: Diagnostic[] } {
  const options = isResolved(setting) ? setting : (resolveTextCallOptions(setting) as ResolvedTextCallOptions);
  const out = { text: "", calls: [] as ExtractedTextCall[], diagnostics: [] as Diagnostic[] };
  let current: ExtractedTextCall | null = null;
  const extractor = new TextCallExtractor(options, {
    text: (t) => {
      out.text += t;
    },
    open: (name, syntax) => {
      current = { name, syntax, argumentText: "", complete: false };
      out.calls.push(current);
    },
    args: (fragment) => {
      if (current) current.argumentText += fragment;
    },
    close: (complete, closeCause) => {
      if (current) {
        current.complete = complete;
        if (closeCause) current.cause = closeCause;
      }
      current = null;
    },
    diagnostic: (d) => out.diagnostics.push(d),
  });
  extractor.push(text);
  extractor.end(cause);
  return out;
}

/**
 * An incremental extractor over one stream of text, for callers outside a decoder: `push` text as
 * it arrives and `end` it; the sink receives plain text, calls and their argument text.
 */
export function createTextCallExtractor(setting: TextCallSetting, sink: TextCallSink): TextCallExtractor {
  return new TextCallExtractor(resolveTextCallOptions(setting) as ResolvedTextCallOptions, sink);
}

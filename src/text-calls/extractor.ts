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
import { isWs, PARTIAL } from "./scan.js";
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

/**
 * Every marker begins with `<` or `[`, and the character after it is one of few: the per-delta
 * scan searches for those two characters with native, constant-pattern searches (measured faster
 * than a search for a pattern held in a variable) and rejects by the next character the `<` and
 * `[` of ordinary text ("a < b", "Array<T>", "[1]", "<em>"). A test holds these to MARKERS.
 */
export function mayFollowAngle(code: number): boolean {
  return code === 116 || code === 102 || code === 124 || code === 0xff5c; // t f | ｜
}

export function mayFollowBracket(code: number): boolean {
  return code === 84; // T
}

/**
 * The enabled markers as a trie over their characters: a marker is found, or ruled out, in the
 * few characters it shares with the text ("<|endoftext|>" fails at its third), without comparing
 * it with each marker in turn. No marker is a prefix of another (a test holds this).
 */
interface MarkerTrie {
  next: Map<number, MarkerTrie>;
  marker: Marker | null;
}

function trieOf(markers: readonly Marker[]): MarkerTrie {
  const root: MarkerTrie = { next: new Map(), marker: null };
  for (const marker of markers) {
    let node = root;
    for (let k = 0; k < marker.literal.length; k++) {
      const code = marker.literal.charCodeAt(k);
      let child = node.next.get(code);
      if (!child) {
        child = { next: new Map(), marker: null };
        node.next.set(code, child);
      }
      node = child;
    }
    node.marker = marker;
  }
  return root;
}

/**
 * Per set of syntaxes, built once: options objects (with the caller's tools) are resolved anew for
 * each decoder, so the set itself is no key. There are few distinct sets in a process.
 */
const markerTries = new Map<string, MarkerTrie>();

function markerTrieFor(syntaxes: ReadonlySet<TextCallSyntaxName>): MarkerTrie {
  const key = [...syntaxes].sort().join(",");
  let trie = markerTries.get(key);
  if (!trie) {
    trie = trieOf(MARKERS.filter((marker) => markerEnabled(marker, syntaxes)));
    markerTries.set(key, trie);
  }
  return trie;
}

/**
 * Walks the trie from `node` over `s` from `k`: the node of the marker found there, the node
 * reached when `s` ends first (a marker may still follow), or null when `s` leaves every marker.
 */
function walk(node: MarkerTrie, s: string, k: number): MarkerTrie | null {
  for (let j = k; j < s.length; j++) {
    const child = node.next.get(s.charCodeAt(j));
    if (child === undefined) return null;
    if (child.marker !== null) return child;
    node = child;
  }
  return node;
}

/** What `plainScan` finds besides the position of a marker start at the end of the text. */
const PLAIN = -1;
const NOT_PLAIN = -2;

/** The literals of every marker, for tests. */
export const MARKER_LITERALS: readonly string[] = MARKERS.map((m) => m.literal);

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
  /**
   * When `pending` is the start of a marker held between calls (the text ended inside it), the
   * trie node it leads to: the next delta continues the walk from there.
   */
  private heldNode: MarkerTrie | null = null;
  private parser: CallParser | null = null;
  private readonly markers: MarkerTrie;
  /** Whether some enabled marker begins with `<`, and with `[`. */
  private readonly angle: boolean;
  private readonly bracket: boolean;
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
    this.markers = markerTrieFor(options.syntaxes);
    this.angle = this.markers.next.has(60);
    this.bracket = this.markers.next.has(91);
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
   * Reads one delta. True when `text` is plain text the caller passes on itself, as it is (the
   * extractor is between calls, holds nothing, and `text` holds no marker and ends in no start
   * of one): the per-delta fast path, one scan and no allocation. Otherwise the extractor has
   * taken the text and sends it on through its sink.
   */
  read(text: string): boolean {
    if (this.parser !== null || this.pending.length !== 0 || this.atStart || this.ended) {
      this.take(text);
      return false;
    }
    const start = this.plainScan(text);
    if (start === PLAIN) return true;
    if (start === NOT_PLAIN) this.take(text);
    else this.hold(text, start);
    return false;
  }

  /**
   * True when `read(text)` would return true: `text` is plain text the caller may pass on itself.
   * Reads nothing; a caller that goes on to `push` the text scans it twice, so prefer `read`.
   */
  passesThrough(text: string): boolean {
    return this.parser === null && this.pending.length === 0 && !this.atStart && !this.ended && this.plainScan(text) === PLAIN;
  }

  /** Reads one delta; everything it passes on goes through the sink. */
  push(text: string): void {
    if (this.read(text) && text.length > 0) this.sink.text(text);
  }

  /** The trie node of the marker start `plainScan` found at the end of its text. */
  private scanNode: MarkerTrie | null = null;

  /**
   * Between calls: PLAIN when `text` holds no marker and ends in no start of one; the position of
   * the start of a marker that the text ends in (its node in `scanNode`); NOT_PLAIN when the
   * text holds a whole marker.
   */
  private plainScan(text: string): number {
    // Constant patterns: measured faster than a search for a pattern held in a variable.
    const angle = this.angle ? text.indexOf("<") : -1;
    const bracket = this.bracket ? text.indexOf("[") : -1;
    if (angle < 0 && bracket < 0) return PLAIN;
    const start = angle < 0 ? PLAIN : this.markerStartFrom(text, angle, "<", mayFollowAngle, text.length);
    if (start === NOT_PLAIN || bracket < 0) return start;
    const before = this.markerStartFrom(text, bracket, "[", mayFollowBracket, start === PLAIN ? text.length : start);
    return before === PLAIN ? start : before;
  }

  /**
   * The first marker candidate from `k` (a `first` there) and before `limit`: NOT_PLAIN for a whole
   * marker, the position of a marker start the text ends in (its node in `scanNode`), or PLAIN.
   * Most candidates are dismissed by the character after them ("a < b", "Array<T>", "<em>", "[1]").
   */
  private markerStartFrom(text: string, k: number, first: string, follows: (code: number) => boolean, limit: number): number {
    for (; k >= 0 && k < limit; k = text.indexOf(first, k + 1)) {
      if (k + 1 < text.length && !follows(text.charCodeAt(k + 1))) continue;
      const found = walk(this.markers, text, k);
      if (found === null) continue;
      if (found.marker !== null) return NOT_PLAIN;
      this.scanNode = found;
      return k;
    }
    return PLAIN;
  }

  /** Passes on the text before `start` and holds the rest, the start of a marker (`scanNode`). */
  private hold(text: string, start: number): void {
    if (start > 0) this.sink.text(text.slice(0, start));
    this.pending = start === 0 ? text : text.slice(start);
    this.heldNode = this.scanNode;
  }

  /** Text for the general scan, when `read` could not settle it alone. */
  private take(text: string): void {
    if (this.ended || text.length === 0) return;
    if (this.parser === null && !this.atStart && this.heldNode !== null && this.releaseHeld(text)) return;
    const s = this.pending.length > 0 ? this.pending + text : text;
    this.pending = "";
    this.heldNode = null;
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
   * The held start of a marker ("a <" held "<") meets the next text. Most often the text does not
   * continue it: the held text was plain, and goes on with `text` when `text` is plain too. False
   * when the general scan must decide (the walk goes on, or a marker may start elsewhere).
   */
  private releaseHeld(text: string): boolean {
    const held = this.pending;
    // A marker could also start inside the held text, after its first character: rare, left to the scan.
    if (held.length > 1 && (held.indexOf("<", 1) >= 0 || held.indexOf("[", 1) >= 0)) return false;
    if (walk(this.heldNode as MarkerTrie, text, 0) !== null || this.plainScan(text) !== PLAIN) return false;
    this.pending = "";
    this.heldNode = null;
    this.sink.text(held + text);
    return true;
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
    this.heldNode = null;
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
    // This loop is plainScan's search written again on purpose: sharing one function with it gives
    // that function the general path's joined strings, and the per-delta path slowed from 29 to 51
    // ns per delta (measured on the bench's deltas).
    const from = i;
    let angle = this.angle ? s.indexOf("<", i) : -1;
    let bracket = this.bracket ? s.indexOf("[", i) : -1;
    while (angle >= 0 || bracket >= 0) {
      let k: number;
      if (bracket < 0 || (angle >= 0 && angle < bracket)) {
        k = angle;
        angle = s.indexOf("<", k + 1);
        if (k + 1 < n && !mayFollowAngle(s.charCodeAt(k + 1))) continue;
      } else {
        k = bracket;
        bracket = s.indexOf("[", k + 1);
        if (k + 1 < n && !mayFollowBracket(s.charCodeAt(k + 1))) continue;
      }
      const found = walk(this.markers, s, k);
      if (found === null) continue;
      if (k > from) this.emit(s.slice(from, k));
      const marker = found.marker;
      if (marker === null) {
        this.pending = s.slice(k);
        this.heldNode = found;
        return n;
      }
      this.activate(marker.create(), k);
      return k + marker.literal.length;
    }
    this.emit(from === 0 ? s : s.slice(from));
    return n;
  }

  /** The marker starting at `k`, PARTIAL when the text ends inside one, null when none. */
  private markerAt(s: string, k: number): Marker | typeof PARTIAL | null {
    const found = k < s.length ? walk(this.markers, s, k) : null;
    return found === null ? null : (found.marker ?? PARTIAL);
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

import type { Diagnostic, TruncationCause } from "../types.js";
import { resolveTextCallOptions, type ParamKind, type ResolvedTextCallOptions, type TextCallSetting } from "./options.js";
import { HarmonyParser, InvokeParser, LlamaJsonParser, MistralParser, SectionParser, ToolCallTagParser, WrappedListParser, type CallParser, type ParseContext } from "./parsers.js";
import { PythonicParser } from "./pythonic.js";
import { isWs, matchAt, MAX_HELD_WS, PARTIAL, skipWs } from "./scan.js";
import type { TextCallSyntaxName } from "./syntaxes.js";
import type { DiagnosticCode } from "../diagnostics/codes.js";

/** Where the extractor sends what it reads: plain text, and calls with their argument text. */
export interface TextCallSink {
  text(text: string): void;
  /** Reasoning written into the text (`<think>…</think>`, `[THINK]…[/THINK]`, harmony's analysis channel). */
  reasoning?(text: string): void;
  open(name: string, syntax: TextCallSyntaxName): void;
  args(fragment: string): void;
  /** `complete: false` with the cause: the stream ended, or the text left the call's markup. */
  close(complete: boolean, cause?: TruncationCause): void;
  diagnostic(diagnostic: Diagnostic): void;
}

/**
 * What a marker starts: a call (its parser), a reasoning region (ended by `close`), the end of a
 * reasoning region the prompt opened (a lone `</think>`), or control markup that is never text.
 */
type MarkerKind = "call" | "reasoning" | "end-reasoning" | "drop";

interface Marker {
  literal: string;
  syntax: TextCallSyntaxName;
  kind?: MarkerKind;
  create: () => CallParser;
  /** For a reasoning marker: the literal that ends the region. */
  close?: string;
}

const noParser = (): CallParser => {
  throw new Error("not a call marker");
};

/** The families whose chat templates open the think block in the prompt (Qwen3, QwQ, DeepSeek-R1). */
const PROMPT_THINK_SYNTAXES: ReadonlySet<TextCallSyntaxName> = new Set(["hermes", "qwen3-coder", "deepseek"]);

/** Reasoning tags: read as reasoning wherever a syntax of these families is on. */
const THINK_SYNTAXES: readonly TextCallSyntaxName[] = ["hermes", "qwen3-coder", "glm", "deepseek", "kimi-k2"];

const REASONING_MARKERS: readonly Marker[] = [
  { literal: "<think>", syntax: "hermes", kind: "reasoning", close: "</think>", create: noParser },
  { literal: "</think>", syntax: "hermes", kind: "end-reasoning", create: noParser },
  { literal: "[THINK]", syntax: "mistral", kind: "reasoning", close: "[/THINK]", create: noParser },
  { literal: "[/THINK]", syntax: "mistral", kind: "end-reasoning", create: noParser },
  { literal: "<|channel|>analysis<|message|>", syntax: "harmony", kind: "reasoning", close: "<|end|>", create: noParser },
  { literal: "<|start|>assistant<|channel|>analysis<|message|>", syntax: "harmony", kind: "reasoning", close: "<|end|>", create: noParser },
  { literal: "<|channel|>final<|message|>", syntax: "harmony", kind: "drop", create: noParser },
  { literal: "<|start|>assistant<|channel|>final<|message|>", syntax: "harmony", kind: "drop", create: noParser },
  // A commentary message with no recipient is a preamble the model shows the user (OpenAI's harmony
  // guide): content, as llama.cpp reads it (only `to=functions.…` makes it a call).
  { literal: "<|channel|>commentary<|message|>", syntax: "harmony", kind: "drop", create: noParser },
  { literal: "<|start|>assistant<|channel|>commentary<|message|>", syntax: "harmony", kind: "drop", create: noParser },
  // The tokens that end a harmony message (`<|return|>` the last one): control tokens, never content.
  { literal: "<|end|>", syntax: "harmony", kind: "drop", create: noParser },
  { literal: "<|return|>", syntax: "harmony", kind: "drop", create: noParser },
];

const CALL_MARKERS: readonly Marker[] = [
  { literal: "<tool_call>", syntax: "hermes", create: () => new ToolCallTagParser() },
  { literal: "<function=", syntax: "qwen3-coder", create: () => InvokeParser.qwen3Coder() },
  { literal: "<|tool_calls_section_begin|>", syntax: "kimi-k2", create: () => SectionParser.kimi(true) },
  { literal: "<|tool_call_begin|>", syntax: "kimi-k2", create: () => SectionParser.kimi(false) },
  { literal: "[TOOL_CALLS]", syntax: "mistral", create: () => new MistralParser() },
  { literal: "<|python_tag|>", syntax: "llama3-json", create: () => new LlamaJsonParser(false) },
  { literal: "<｜tool▁calls▁begin｜>", syntax: "deepseek", create: () => SectionParser.deepseek(true) },
  { literal: "<｜tool▁call▁begin｜>", syntax: "deepseek", create: () => SectionParser.deepseek(false) },
  { literal: "<|start|>assistant<|channel|>commentary to=functions.", syntax: "harmony", create: () => new HarmonyParser() },
  { literal: "<|channel|>commentary to=functions.", syntax: "harmony", create: () => new HarmonyParser() },
  { literal: "<|start|>assistant to=functions.", syntax: "harmony", create: () => new HarmonyParser() },
  { literal: "<|channel|>analysis to=functions.", syntax: "harmony", create: () => new HarmonyParser() },
  { literal: "<|start|>assistant<|channel|>analysis to=functions.", syntax: "harmony", create: () => new HarmonyParser() },
  { literal: "<|python_start|>", syntax: "pythonic", create: () => new PythonicParser(true) },
  { literal: "<｜DSML｜function_calls>", syntax: "deepseek", create: () => InvokeParser.dsml("function_calls") },
  { literal: "<｜DSML｜tool_calls>", syntax: "deepseek", create: () => InvokeParser.dsml("tool_calls") },
  { literal: "<TOOLCALL>", syntax: "nemotron", create: () => WrappedListParser.nemotron() },
];

const MARKERS: readonly Marker[] = [...CALL_MARKERS, ...REASONING_MARKERS];

/**
 * A harmony message ends at `<|end|>` or where the next message's `<|start|>` header begins (a
 * message cannot hold that token; llama.cpp reads an analysis message without `<|end|>` so).
 */
const HARMONY_START = "<|start|>";
const HARMONY_HEADERS: readonly Marker[] = MARKERS.filter((m) => m.syntax === "harmony" && m.literal.startsWith(HARMONY_START));

/** Kimi K2 Thinking writes its calls inside the think block: its call tokens end the region (as llama.cpp reads them). */
const KIMI_LITERALS = new Set(["<|tool_calls_section_begin|>", "<|tool_call_begin|>"]);

/** `<tool_call>` opens Hermes, Qwen3-Coder and GLM calls alike: it is on when any of them is. */
function markerEnabled(marker: Marker, syntaxes: ReadonlySet<TextCallSyntaxName>): boolean {
  if (marker.literal === "<tool_call>") return syntaxes.has("hermes") || syntaxes.has("qwen3-coder") || syntaxes.has("glm");
  if (marker.literal === "<think>" || marker.literal === "</think>") return THINK_SYNTAXES.some((name) => syntaxes.has(name));
  return syntaxes.has(marker.syntax);
}

/**
 * Every marker begins with `<` or `[`, and the character after it is one of few: the per-delta
 * scan searches for those two characters with native, constant-pattern searches (measured faster
 * than a search for a pattern held in a variable) and rejects by the next character the `<` and
 * `[` of ordinary text ("a < b", "Array<T>", "[1]", "<em>"). A test holds these to MARKERS.
 */
export function mayFollowAngle(code: number): boolean {
  return code === 116 || code === 102 || code === 124 || code === 0xff5c || code === 47 || code === 84; // t f | ｜ / T
}

export function mayFollowBracket(code: number): boolean {
  return code === 84 || code === 47; // T /
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
 * The markers read inside a reasoning region that `close` ends: the close itself; Kimi's call
 * tokens (they end the region); with `reasoning: true`, every call marker (calls in reasoning are
 * read, the text around them stays reasoning). `close` null: the prompt opened the region, so the
 * lone close of any syntax on ends it (`</think>`, and Magistral's `[/THINK]`).
 */
function regionTrieFor(syntaxes: ReadonlySet<TextCallSyntaxName>, close: string | null, calls: boolean): MarkerTrie {
  const key = `${[...syntaxes].sort().join(",")}|${close ?? "prompt"}|${calls}`;
  let trie = markerTries.get(key);
  if (!trie) {
    const closers =
      close === null
        ? REASONING_MARKERS.filter((m) => m.kind === "end-reasoning" && markerEnabled(m, syntaxes))
        : [MARKERS.find((m) => m.literal === close && m.kind === "end-reasoning") ?? { literal: close, syntax: "harmony", kind: "end-reasoning", create: noParser }];
    const inside = CALL_MARKERS.filter((m) => markerEnabled(m, syntaxes) && (calls || KIMI_LITERALS.has(m.literal)));
    const headers = close === "<|end|>" ? HARMONY_HEADERS.filter((m) => markerEnabled(m, syntaxes) && !inside.includes(m)) : [];
    trie = trieOf([...inside, ...closers, ...headers]);
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

/**
 * `walk` for the per-delta scan, which passes it the decoders' own strings only. A function of its
 * own so that its loads see only those: the general scan walks joined strings (held text and a
 * delta), and with one function shared by both, V8 read every character of every walk through a
 * megamorphic lookup (measured: about 400 instructions per walk).
 */
function walkDelta(trie: MarkerTrie, text: string, k: number): MarkerTrie | null {
  let node: MarkerTrie | undefined = trie;
  for (let j = k; node !== undefined && node.marker === null && j < text.length; j++) node = node.next.get(text.charCodeAt(j));
  return node ?? null;
}

/** Deltas of at most this many characters are scanned by `hasScanChar` before any native search. */
const SHORT_DELTA = 12;

/** Whether `text` holds a `<`, `[` or `{`: a character the per-delta scan has to look at. */
function hasScanChar(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 60 || c === 91 || c === 123) return true;
  }
  return false;
}

/** What `plainScan` finds besides the position of a marker start at the end of the text. */
const PLAIN = -1;
const NOT_PLAIN = -2;

/** The literals of every marker, for tests. */
export const MARKER_LITERALS: readonly string[] = MARKERS.map((m) => m.literal);

/** The longest marker: no more than this many characters of plain text are ever held back. */
export const LONGEST_MARKER = Math.max(...MARKERS.map((m) => m.literal.length));

/** A call read from text but not yet passed on: it is passed on once its markup closes. */
interface HeldCall {
  name: string;
  syntax: TextCallSyntaxName;
  /** The argument text in the pieces it was read in (passed on as as many deltas). */
  args: string[];
  chars: number;
}

/**
 * A call's argument text held past this many characters is passed on as it arrives (the call is
 * opened, and can no longer turn back into text): the bound on what a call holds back.
 */
export const MAX_HELD_CALL = 1 << 20;

/**
 * While a lone `</think>` may still come (the prompt may have opened the reasoning), text from a
 * call on is held, up to this many characters; past it the held calls and text are passed on.
 */
export const MAX_HELD_REASONING = 1 << 16;

/**
 * Words that open a call only at the start of the message, each matched (and held while partial)
 * the same way: harmony's recipient in the role header (` to=functions.f<|channel|>…`, when the
 * generation prompt holds `<|start|>assistant`) and FireFunction v2's list (its `[` included).
 */
const MESSAGE_START_WORDS: ReadonlyArray<{ literal: string; syntax: TextCallSyntaxName; create: () => CallParser }> = [
  { literal: "to=functions.", syntax: "harmony", create: () => new HarmonyParser() },
  { literal: "functools[", syntax: "firefunction", create: () => WrappedListParser.firefunction() },
];

/**
 * The incremental text-call extractor for one stream of text. Text before a possible marker is
 * passed on at once; only a suffix that could still start a marker is held back (at most
 * LONGEST_MARKER characters), or a call until its markup closes (it is then passed on whole, its
 * argument deltas as read; markup that never forms a call is passed on as text). Reasoning written
 * into the text goes to the sink's `reasoning`. The work per `push` is proportional to the text
 * pushed plus the (bounded) text held back.
 */
export class TextCallExtractor implements ParseContext {
  private pending = "";
  /**
   * When `pending` is the start of a marker held between calls (the text ended inside it), the
   * trie node it leads to: the next delta continues the walk from there.
   */
  private heldNode: MarkerTrie | null = null;
  private parser: CallParser | null = null;
  private readonly baseMarkers: MarkerTrie;
  private markers: MarkerTrie;
  /** Whether some enabled marker begins with `<`, and with `[`. */
  private readonly angle: boolean;
  private readonly bracket: boolean;
  /** With tool names: a `{` or `[` that opens a call to a known tool is read anywhere. */
  private readonly anywhereJson: boolean;
  private readonly anywherePythonic: boolean;
  /** Text read by the active parser since the last mark: emitted as text when the parser rejects. */
  private heldRaw = "";
  private rawFrom = 0;
  /** The string the active parser is reading (positions given to `mark`/`release` index it). */
  private cur = "";
  /** The call being read (opened, markup not yet closed). */
  private call: HeldCall | null = null;
  /** Calls whose markup closed, waiting for their parser to finish (a pythonic list). */
  private closed: HeldCall[] = [];
  /** The call being read grew past MAX_HELD_CALL: it was opened and streams. */
  private streaming = false;
  /** Calls the active parser formed; markup that forms none is text. */
  private formed = 0;
  private brokenSeen = false;
  /** Only whitespace so far: the whole-message syntaxes (bare JSON, pythonic) may still start. */
  private atStart = true;
  private ended = false;
  /** Just after a call: whitespace before the next marker is dropped. */
  private afterCall = false;
  /** The reasoning region being read (its close literal, "prompt" for one the prompt opened), or null. */
  private region: string | null = null;
  /** No reasoning tag seen yet: a lone `</think>` may still end reasoning the prompt opened. */
  private maybeReasoning: boolean;
  /**
   * While `maybeReasoning`, what was read from a call's marker on (the raw text), and what the
   * extractor would have passed on since: both held until a lone `</think>` (then the raw text is
   * reasoning) or the end (then the held output is passed on).
   */
  private shadow: string | null = null;
  private parked: Array<{ kind: "text" | "reasoning"; text: string } | { kind: "call"; call: HeldCall }> = [];
  private parkedCalls = 0;
  /** Text had already been passed on when a lone `</think>` showed it was reasoning. */
  private passedOn = false;

  constructor(
    private readonly options: ResolvedTextCallOptions,
    private readonly sink: TextCallSink,
    /** A reasoning stream (reasoning deltas, read with `reasoning: true`) is reasoning already: no lone `</think>` is awaited. */
    reasoningChannel = false,
  ) {
    this.baseMarkers = markerTrieFor(options.syntaxes);
    this.markers = this.baseMarkers;
    this.anywhereJson = options.toolNames !== null && options.syntaxes.has("llama3-json");
    this.anywherePythonic = options.toolNames !== null && options.syntaxes.has("pythonic");
    this.angle = this.markers.next.has(60);
    this.bracket = this.markers.next.has(91) || this.anywherePythonic;
    this.maybeReasoning = !reasoningChannel && options.thinking === "auto" && (THINK_SYNTAXES.some((name) => options.syntaxes.has(name)) || options.syntaxes.has("mistral"));
    if (!reasoningChannel && options.thinking === "open" && (THINK_SYNTAXES.some((name) => options.syntaxes.has(name)) || options.syntaxes.has("mistral"))) this.enterRegion(null);
  }

  /** Calls this extractor opened so far. */
  callsOpened = 0;

  /** True once markup was read (a call's, a reasoning tag): the text passed on may differ from the text read. */
  changedText = false;

  /** True while a call is open (its arguments are streaming or held). */
  get inCall(): boolean {
    return this.call !== null || this.parser !== null;
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
    if (this.idle) {
      const start = this.plainScan(text);
      if (start === PLAIN) return true;
      if (start !== NOT_PLAIN) {
        this.hold(text, start);
        return false;
      }
    }
    this.take(text);
    this.idle = this.parser === null && this.pending.length === 0 && !this.atStart && !this.ended && this.region === null && this.shadow === null && !this.afterCall;
    return false;
  }

  /**
   * Between calls, holding nothing, past the message start, outside reasoning: the per-delta fast
   * path applies. One flag, set after each general scan, rather than seven checks per delta.
   */
  private idle = false;

  /**
   * True when `read(text)` would return true: `text` is plain text the caller may pass on itself.
   * Reads nothing; a caller that goes on to `push` the text scans it twice, so prefer `read`.
   */
  passesThrough(text: string): boolean {
    return this.idle && this.plainScan(text) === PLAIN;
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
    // A short delta is read in one character loop: each native search costs about as much as
    // reading a dozen characters (the call, and the deltas' two-byte slices unpacked).
    if (text.length <= SHORT_DELTA && !hasScanChar(text)) return PLAIN;
    // Constant patterns: measured faster than a search for a pattern held in a variable.
    const angle = this.angle ? text.indexOf("<") : -1;
    const bracket = this.bracket ? text.indexOf("[") : -1;
    if (this.anywhereJson && text.indexOf("{") >= 0) return NOT_PLAIN;
    if (angle < 0 && bracket < 0) return PLAIN;
    const start = angle < 0 ? PLAIN : this.markerStartFrom(text, angle, true, text.length);
    if (start === NOT_PLAIN || bracket < 0) return start;
    if (this.anywherePythonic) return NOT_PLAIN;
    const before = this.markerStartFrom(text, bracket, false, start === PLAIN ? text.length : start);
    return before === PLAIN ? start : before;
  }

  /**
   * The first marker candidate from `k` (a `<` there, or a `[`) and before `limit`: NOT_PLAIN for a
   * whole marker, the position of a marker start the text ends in (its node in `scanNode`), or
   * PLAIN. Most candidates are dismissed by the character after them ("a < b", "Array<T>", "<em>",
   * "[1]"). A flag rather than the character and its test as arguments: direct calls, constant
   * patterns.
   */
  private markerStartFrom(text: string, k: number, angle: boolean, limit: number): number {
    for (; k >= 0 && k < limit; k = angle ? text.indexOf("<", k + 1) : text.indexOf("[", k + 1)) {
      if (k + 1 < text.length) {
        const next = text.charCodeAt(k + 1);
        if (angle ? !mayFollowAngle(next) : !mayFollowBracket(next)) continue;
      }
      const found = walkDelta(this.markers, text, k);
      if (found === null) continue;
      if (found.marker !== null) return NOT_PLAIN;
      this.scanNode = found;
      return k;
    }
    return PLAIN;
  }

  /** Passes on the text before `start` and holds the rest, the start of a marker (`scanNode`). */
  private hold(text: string, start: number): void {
    this.idle = false;
    if (start > 0) this.sink.text(text.slice(0, start));
    this.pending = start === 0 ? text : text.slice(start);
    this.heldNode = this.scanNode;
  }

  /** Text for the general scan, when `read` could not settle it alone. */
  private take(text: string): void {
    if (this.ended || text.length === 0) return;
    if (this.shadow !== null) this.shadow += text;
    if (this.parser === null && !this.atStart && this.heldNode !== null && this.region === null && this.shadow === null && !this.afterCall && this.releaseHeld(text)) return;
    const s = this.pending.length > 0 ? this.pending + text : text;
    this.pending = "";
    this.heldNode = null;
    this.rawFrom = 0;
    this.cur = s;
    let i = 0;
    while (i < s.length) {
      const parser = this.parser;
      if (!parser) {
        i = this.scanText(s, i);
        continue;
      }
      const at = parser.feed(s, i, this);
      if (parser.status === "more") {
        if (!this.streaming) this.heldRaw += s.slice(this.rawFrom, at);
        this.pending = s.slice(at);
        this.flush();
        this.checkParked();
        return;
      }
      this.finishParser(parser.status === "reject", s.slice(this.rawFrom, at));
      // Settled where the parser ends, not where this text ends: a lone `</think>` later in the same
      // text must find what a delta boundary here would have left (any cutting reads the same).
      this.checkParked();
      i = at;
    }
    // A marker that ends the text: its parser has read nothing yet, but the marker is held.
    if (this.parser && !this.streaming) this.heldRaw += s.slice(this.rawFrom, i);
    this.flush();
    this.checkParked();
  }

  /**
   * The active parser finished. Its calls are passed on when it formed them whole; otherwise (it
   * rejected, or a call's markup broke off) what it read since its last mark is text, byte for byte.
   */
  private finishParser(rejected: boolean, tail: string): void {
    const failed = rejected || this.brokenSeen || this.call !== null;
    if (this.streaming) {
      // A call too large to hold was opened: it can only end, never turn back into text.
      if (this.call !== null) this.sink.close(false, "markup_broken");
      this.streaming = false;
      this.call = null;
      if (failed && rejected) this.emit(tail);
    } else if (failed) {
      this.call = null;
      this.closed = [];
      this.emit(this.heldRaw + tail);
    } else {
      this.commitClosed();
      if (this.formed === 0) this.emit(this.heldRaw + tail);
    }
    this.afterCall = !failed && this.formed > 0;
    this.parser = null;
    this.heldRaw = "";
    this.formed = 0;
    this.brokenSeen = false;
  }

  /** Held calls and text go on once no call is parked, or once too much is held. */
  private checkParked(): void {
    if (this.shadow === null) return;
    if ((this.parkedCalls === 0 && this.parser === null) || this.shadow.length > MAX_HELD_REASONING) this.unpark();
  }

  /**
   * Passes on what was parked while a lone `</think>` could still come. `cut`: the stream was cut
   * (an error, the output limit, no finish) before it came, so the parked calls may be reasoning the
   * model had not closed yet: they go on as calls that are not complete (never runnable), with that
   * cause, rather than as calls that a longer stream would have shown to be reasoning.
   */
  private unpark(cut: TruncationCause | null = null): void {
    this.flush();
    const parked = this.parked;
    this.shadow = null;
    this.parked = [];
    if (this.parkedCalls > 0) this.maybeReasoning = false;
    this.parkedCalls = 0;
    for (const item of parked) {
      if (item.kind === "call") this.sendCall(item.call, cut);
      else if (item.kind === "text") this.sink.text(item.text);
      else this.sendReasoning(item.text);
    }
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
   * The text is over. Held text is passed on. A call whose markup never closed is text when the
   * model stopped normally (`cut` false: it never formed a call); when the text was cut (`cut`:
   * the output limit, an error, a dropped stream) it is reported as not complete, with `cause`.
   */
  end(cause: TruncationCause, cut = cause !== "stream_ended"): void {
    if (this.ended) return;
    this.ended = true;
    this.idle = false;
    if (this.parser && this.streaming) {
      this.streaming = false;
      this.call = null;
      this.sink.close(false, cause);
    } else if (this.parser && cut && this.call !== null && !this.brokenSeen) {
      this.commitClosed();
      const call = this.call;
      this.call = null;
      this.flush();
      this.routeCall(call, cause);
    } else {
      this.call = null;
      this.closed = [];
      this.emit(this.heldRaw + this.pending);
      this.flush();
    }
    this.parser = null;
    this.pending = "";
    this.heldNode = null;
    this.heldRaw = "";
    if (this.shadow !== null) this.unpark(cut ? cause : null);
    if (this.passedOn) {
      this.diagnostic(
        "text_reasoning_passed_on",
        'A lone </think> showed that the text before it was reasoning (the prompt opened the think block); the part of it without a call had already been passed on as text. Set textCalls.thinking to "open" for such a model.',
      );
    }
  }

  /** Text passed on by one `push`, sent as one piece (before a call opens, or when the push ends). */
  private out = "";
  private outReasoning = false;

  private flush(): void {
    if (this.out.length > 0) {
      const text = this.out;
      this.out = "";
      if (this.shadow !== null) this.parked.push({ kind: this.outReasoning ? "reasoning" : "text", text });
      else if (this.outReasoning) this.sendReasoning(text);
      else this.sink.text(text);
    }
  }

  private sendReasoning(text: string): void {
    if (this.sink.reasoning) this.sink.reasoning(text);
  }

  private emit(text: string): void {
    if (text.length === 0) return;
    const reasoning = this.region !== null;
    if (reasoning !== this.outReasoning) {
      this.flush();
      this.outReasoning = reasoning;
    }
    if (this.atStart && !reasoning) {
      for (let k = 0; k < text.length; k++) {
        if (!isWs(text.charCodeAt(k))) {
          this.atStart = false;
          break;
        }
      }
    }
    this.out = this.out.length === 0 ? text : this.out + text;
  }

  private activate(parser: CallParser, s: string, at: number, syntax: TextCallSyntaxName | null = null): void {
    this.changedText = true;
    this.parser = parser;
    this.heldRaw = "";
    this.rawFrom = at;
    const atStart = this.atStart;
    this.atStart = false;
    this.formed = 0;
    this.brokenSeen = false;
    // A call after text while a lone </think> may still come, in a syntax of the models whose prompt
    // opens the think block (Qwen3, DeepSeek-R1): hold from its marker on (see `shadow`). Reasoning
    // never begins with a call, so a call that begins the message is not held.
    if (this.maybeReasoning && !atStart && syntax !== null && PROMPT_THINK_SYNTAXES.has(syntax) && this.region === null && this.shadow === null) {
      this.flush();
      this.shadow = s.slice(at);
    }
  }

  /** Enters a reasoning region that `close` ends (null: the prompt opened it, see regionTrieFor). */
  private enterRegion(close: string | null): void {
    this.flush();
    this.region = close ?? "prompt";
    this.maybeReasoning = false;
    this.markers = regionTrieFor(this.options.syntaxes, close, this.options.reasoning);
  }

  private leaveRegion(): void {
    this.flush();
    this.region = null;
    this.markers = this.baseMarkers;
  }

  /** A marker that is no call: reasoning tags and control markup. Returns the position after it. */
  private control(marker: Marker, s: string, k: number): number {
    this.changedText = true;
    const end = k + marker.literal.length;
    if (marker.kind === "reasoning") {
      if (this.region === null) this.enterRegion(marker.close as string);
      return end;
    }
    if (marker.kind === "end-reasoning") {
      if (this.region !== null) {
        this.leaveRegion();
        return end;
      }
      // A lone close: the prompt opened the reasoning. What is held from a call on was reasoning;
      // text before it was passed on already (a call is held only after some text).
      if (this.maybeReasoning && (this.shadow !== null || !this.atStart)) this.passedOn = true;
      if (this.shadow !== null) {
        const reasoning = this.shadow.slice(0, this.shadow.length - s.length + k);
        const dropped = this.parkedCalls;
        this.out = "";
        this.shadow = null;
        this.parked = [];
        this.parkedCalls = 0;
        this.sendReasoning(reasoning);
        if (dropped > 0) {
          this.diagnostic("text_call_in_reasoning", `${dropped} tool call(s) written before a lone </think> were reasoning, not calls; they were passed on as reasoning.`, { calls: dropped });
        }
      }
      this.maybeReasoning = false;
      this.atStart = true;
      return end;
    }
    return end;
  }

  /** Plain text from `i`: emits it up to the next marker and starts that marker's parser. */
  private scanText(s: string, i: number): number {
    if (this.afterCall) {
      const j = skipWs(s, i);
      if (j === s.length) {
        if (j - i <= MAX_HELD_WS) {
          this.pending = s.slice(i);
          return s.length;
        }
        this.afterCall = false;
      } else {
        const marker = this.markerAt(s, j);
        if (marker === PARTIAL) {
          this.pending = s.slice(i);
          return s.length;
        }
        this.afterCall = false;
        // Whitespace between two calls is no text (servers stream none).
        if (marker !== null && (marker.kind ?? "call") === "call") i = j;
      }
    }
    if (this.atStart && this.region === null) {
      let j = i;
      while (j < s.length && isWs(s.charCodeAt(j))) j++;
      if (j > i) this.emit(s.slice(i, j));
      if (j === s.length) return j;
      const c = s.charCodeAt(j);
      if (c === 123 && this.options.syntaxes.has("llama3-json")) {
        this.activate(new LlamaJsonParser(true), s, j);
        return j;
      }
      if (c === 91 && this.options.syntaxes.has("pythonic")) {
        const marker = this.markerAt(s, j);
        if (marker === PARTIAL) {
          this.pending = s.slice(j);
          return s.length;
        }
        if (marker === null) {
          this.activate(new PythonicParser(), s, j);
          return j;
        }
      }
      for (const word of MESSAGE_START_WORDS) {
        if (c !== word.literal.charCodeAt(0) || !this.options.syntaxes.has(word.syntax)) continue;
        const end = matchAt(s, j, word.literal);
        if (end === PARTIAL) {
          this.pending = s.slice(j);
          return s.length;
        }
        if (end >= 0) {
          this.activate(word.create(), s, j);
          return end;
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
    let brace = this.anywhereJson && this.region === null ? s.indexOf("{", i) : -1;
    while (angle >= 0 || bracket >= 0 || brace >= 0) {
      let k: number;
      if (brace >= 0 && (angle < 0 || brace < angle) && (bracket < 0 || brace < bracket)) {
        k = brace;
        brace = s.indexOf("{", k + 1);
        const known = this.knownJsonCall(s, k);
        if (known === null) continue;
        if (k > from) this.emit(s.slice(from, k));
        if (known === PARTIAL) {
          this.pending = s.slice(k);
          return n;
        }
        this.activate(new LlamaJsonParser(true), s, k);
        return k;
      }
      if (bracket < 0 || (angle >= 0 && angle < bracket)) {
        k = angle;
        angle = s.indexOf("<", k + 1);
        if (k + 1 < n && !mayFollowAngle(s.charCodeAt(k + 1))) continue;
      } else {
        k = bracket;
        bracket = s.indexOf("[", k + 1);
        if (this.anywherePythonic && this.region === null) {
          const known = this.knownPythonicCall(s, k);
          if (known !== null) {
            if (k > from) this.emit(s.slice(from, k));
            if (known === PARTIAL) {
              this.pending = s.slice(k);
              return n;
            }
            this.activate(new PythonicParser(), s, k);
            return k;
          }
        }
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
      if (this.region === "<|end|>" && marker.literal.startsWith(HARMONY_START)) this.leaveRegion();
      if ((marker.kind ?? "call") !== "call") return this.control(marker, s, k);
      // Kimi's call tokens end a reasoning region (Kimi K2 Thinking calls from inside it).
      if (this.region !== null && !this.options.reasoning) this.leaveRegion();
      this.activate(marker.create(), s, k, marker.syntax);
      return k + marker.literal.length;
    }
    this.emit(from === 0 ? s : s.slice(from));
    return n;
  }

  /**
   * `{"name": "KNOWN"` at `k` (a known tool name opens the object): true; PARTIAL when the text
   * ends before that is decided; null when it is not.
   */
  private knownJsonCall(s: string, k: number): true | typeof PARTIAL | null {
    let j = skipWs(s, k + 1);
    if (j === s.length) return j - k > 32 ? null : PARTIAL;
    const key = matchAt(s, j, '"name"');
    if (key === PARTIAL) return PARTIAL;
    if (key < 0) return null;
    j = skipWs(s, key);
    if (j === s.length) return PARTIAL;
    if (s.charCodeAt(j) !== 58) return null;
    j = skipWs(s, j + 1);
    if (j === s.length) return PARTIAL;
    if (s.charCodeAt(j) !== 34) return null;
    const close = s.indexOf('"', j + 1);
    if (close < 0) return s.length - j > 257 ? null : PARTIAL;
    return this.options.toolNames?.has(s.slice(j + 1, close)) ? true : null;
  }

  /** `[KNOWN(` at `k`: as `knownJsonCall`, for a pythonic list. */
  private knownPythonicCall(s: string, k: number): true | typeof PARTIAL | null {
    const j = skipWs(s, k + 1);
    let e = j;
    while (e < s.length && e - j <= 256 && isPyIdent(s.charCodeAt(e))) e++;
    if (e === s.length) return e - k > 300 ? null : PARTIAL;
    if (s.charCodeAt(e) !== 40 || e === j) return null;
    return this.options.toolNames?.has(s.slice(j, e)) ? true : null;
  }

  /** The marker starting at `k`, PARTIAL when the text ends inside one, null when none. */
  private markerAt(s: string, k: number): Marker | typeof PARTIAL | null {
    const found = k < s.length ? walk(this.markers, s, k) : null;
    return found === null ? null : (found.marker ?? PARTIAL);
  }

  // ---- calls: held until their markup closes ------------------------------------------------------

  /** Passes a formed call on (or parks it while a lone </think> may still come). */
  private commitClosed(): void {
    if (this.closed.length === 0) return;
    const closed = this.closed;
    this.closed = [];
    this.flush();
    for (const call of closed) {
      if (this.shadow !== null) {
        this.parked.push({ kind: "call", call });
        this.parkedCalls++;
      } else this.sendCall(call);
    }
  }

  /** A call whose markup closed: complete, unless the stream was cut while it was parked (`cut`). */
  private sendCall(call: HeldCall, cut: TruncationCause | null = null): void {
    this.callsOpened++;
    this.sink.open(call.name, call.syntax);
    for (const fragment of call.args) this.sink.args(fragment);
    if (cut === null) this.sink.close(true);
    else this.sink.close(false, cut);
  }

  /** A call whose markup never closed, reported as cut (`cause`). */
  private routeCall(call: HeldCall, cause: TruncationCause): void {
    if (this.shadow !== null) this.unpark(cause);
    this.sendCall(call, cause);
  }

  // ---- ParseContext ------------------------------------------------------------------------------

  open(name: string, syntax: TextCallSyntaxName): boolean {
    const allowed = this.options.toolNames;
    if (allowed && !allowed.has(name)) {
      this.diagnostic("text_call_unknown_tool", `The text holds a ${syntax} tool call to \`${name}\`, which is not one of the tools offered; it was left as text.`, { name, syntax });
      return false;
    }
    this.call = { name, syntax, args: [], chars: 0 };
    return true;
  }

  args(fragment: string): void {
    if (fragment.length === 0) return;
    if (this.streaming) {
      this.sink.args(fragment);
      return;
    }
    const call = this.call;
    if (call === null) return;
    call.args.push(fragment);
    call.chars += fragment.length;
    if (call.chars > MAX_HELD_CALL) {
      // Too large to hold: the call opens now and streams; it can no longer turn back into text.
      this.commitClosed();
      if (this.shadow !== null) this.unpark();
      this.flush();
      this.callsOpened++;
      this.sink.open(call.name, call.syntax);
      for (const piece of call.args) this.sink.args(piece);
      call.args = [];
      this.streaming = true;
      this.heldRaw = "";
    }
  }

  close(group = false): void {
    const call = this.call;
    if (call === null) return;
    this.call = null;
    this.formed++;
    if (this.streaming) {
      this.streaming = false;
      this.sink.close(true);
      return;
    }
    this.closed.push(call);
    if (!group) this.commitClosed();
  }

  broken(): void {
    if (this.streaming) {
      this.streaming = false;
      this.call = null;
      this.formed++;
      this.sink.close(false, "markup_broken");
      return;
    }
    this.brokenSeen = true;
  }

  mark(position: number): void {
    // A group of calls formed whole (a pythonic list at its `]`) is settled too: it goes on even if
    // the optional markup after it (`<|python_end|>`) never comes.
    this.commitClosed();
    this.heldRaw = "";
    this.rawFrom = position;
  }

  release(position: number): void {
    this.emit(this.heldRaw + this.cur.slice(this.rawFrom, position));
    this.mark(position);
  }

  paramKind(key: string): ParamKind {
    return (this.call !== null ? this.options.paramKinds.get(this.call.name)?.get(key) : undefined) ?? "string";
  }

  diagnostic(code: DiagnosticCode, message: string, data?: unknown): void {
    this.sink.diagnostic({ code, severity: "warning", message, ...(data === undefined ? {} : { data }) });
  }

  has(syntax: TextCallSyntaxName): boolean {
    return this.options.syntaxes.has(syntax);
  }
}

function isPyIdent(c: number): boolean {
  return (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95 || (c >= 48 && c <= 57) || c === 46;
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
 * the text without the calls' markup, the calls, and diagnostics. Throws TextCallOptionsError on
 * bad options.
 *
 * @param text The whole text.
 * @param setting The syntaxes to read and the tools that count, as the `textCalls` decoder option
 *   takes them (default `"auto"`: every syntax, any tool name).
 * @param cause How the text ended (default `stream_ended`: the model stopped on its own). A call
 *   still open at the end is `complete: false` with this cause.
 * @param cut Whether the text was cut short (default: `cause` is not `stream_ended`). Markup that
 *   had not yet become a call's arguments when the text ended is a call (not complete) only in a
 *   cut text; otherwise the model never formed a call and it stays text.
 */
export function extractTextCalls(
  text: string,
  setting: TextCallSetting | ResolvedTextCallOptions = "auto",
  cause: TruncationCause = "stream_ended",
  cut: boolean = cause !== "stream_ended",
): { text: string; reasoning: string; calls: ExtractedTextCall[]; diagnostics: Diagnostic[] } {
  const options = isResolved(setting) ? setting : (resolveTextCallOptions(setting) as ResolvedTextCallOptions);
  const out = { text: "", reasoning: "", calls: [] as ExtractedTextCall[], diagnostics: [] as Diagnostic[] };
  let current: ExtractedTextCall | null = null;
  const extractor = new TextCallExtractor(options, {
    text: (t) => {
      out.text += t;
    },
    reasoning: (t) => {
      out.reasoning += t;
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
  extractor.end(cause, cut);
  return out;
}

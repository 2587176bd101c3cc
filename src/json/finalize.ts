import type { ArgumentSource, Diagnostic, RepairCode, ToolCallError, TruncationCause } from "../types.js";
import { jsonEqual, jsonExtends } from "./equal.js";
import { isPlainObject } from "./shape.js";
import { scanJson } from "./incremental.js";
import { classifyRepair, type LossyRepair } from "./repair.js";
import { describeUnrepresentable, findUnrepresentableNumber, holdsSuspectNumber, isSuspectNumber, type UnrepresentableNumber } from "./number-range.js";

/**
 * Turns a call's argument sources into one decision, following docs/design.md's precedence:
 * final snapshot, delta stream, shape classification, gated repair, start input, empty, error.
 * Pure and synchronous: the same sources always give the same result.
 */

export interface ArgumentSources {
  /** Start input as an object; undefined when absent, null or `{}` (the protocol's "none"). */
  start?: Record<string, unknown>;
  /** Concatenated non-empty delta fragments. */
  deltaText: string;
  /** The delta text already parsed by an exact incremental parser, when the caller has it. */
  deltaValue?: unknown;
  /** A complete snapshot sent at the end: an object, or the text of one. */
  final?: { value: unknown } | { text: string };
}

/**
 * What `finalizeArguments` knows about a call besides its sources: tool name, whether it completed,
 * how the protocol marks "no arguments", limits and earlier repairs.
 */
export interface FinalizeContext {
  toolName: string;
  /** False when the provider never sent the call's end marker. */
  complete: boolean;
  truncationCause?: TruncationCause;
  /** The protocol means "no arguments" when nothing arrives (Anthropic, Chat Completions). */
  emptyMeansNoArguments: boolean;
  /** Repairs already applied while the deltas were received (e.g. a cumulative resend recognized on arrival). */
  priorRepairs?: RepairCode[];
  /** Deepest nesting accepted (limits.maxDepth); deeper arguments fail with `too_deep`. */
  maxDepth?: number;
  /** The text was written by the decoder and is known broken (a Gemini leaf it could not place): no repair. */
  noRepair?: boolean;
}

/**
 * A finalized call's arguments (or null), the source that won, the repairs applied, the error and
 * diagnostics.
 */
export interface FinalizeResult {
  arguments: Record<string, unknown> | null;
  rawArguments: string;
  source: ArgumentSource | null;
  repairs: RepairCode[];
  error: ToolCallError | null;
  diagnostics: Diagnostic[];
  /**
   * Different complete objects glued one after another: `arguments` is the first, these are the
   * others, each to become a call of its own (`split_concatenated_calls`).
   */
  split?: SplitPiece[];
}

/** One of the objects glued after the first (always read from the delta text); `error` when it cannot become a runnable call. */
export interface SplitPiece {
  value: Record<string, unknown>;
  raw: string;
  error?: ToolCallError;
}

const TRUNCATION_TEXT: Record<TruncationCause, string> = {
  max_tokens: "the provider stopped at its output token limit (max_tokens) while the call was being written",
  stream_ended: "the stream ended before the provider closed the call",
  stream_error: "the provider reported an error mid-stream while the call was being written",
  aborted: "the stream was aborted while the call was being written",
  message_restarted: "the provider restarted the message while the call was being written",
  limit_exceeded: "the turn exceeded toolwire's size limit while the call was being written",
  markup_broken: "the text left the tool-call markup before the call's end",
};

/** Deepest nesting of a JSON value, without recursion. */
export function nestingDepth(value: unknown): number {
  return inspectValue(value).depth;
}

/**
 * One walk for what every finalized value is checked for: its deepest nesting, and whether a leaf
 * is a number a double may not hold as written (json/number-range.ts decides from the text).
 */
function inspectValue(value: unknown): { depth: number; suspectNumber: boolean } {
  let deepest = 0;
  let suspectNumber = false;
  const stack: Array<[unknown, number]> = [[value, 0]];
  while (stack.length > 0) {
    const [node, depth] = stack.pop() as [unknown, number];
    if (typeof node !== "object" || node === null) continue;
    const level = depth + 1;
    if (level > deepest) deepest = level;
    for (const child of Array.isArray(node) ? node : Object.values(node)) {
      if (typeof child === "object" && child !== null) stack.push([child, level]);
      else if (!suspectNumber && isSuspectNumber(child)) suspectNumber = true;
    }
  }
  return { depth: deepest, suspectNumber };
}

/** True when `value` nests deeper than `max` (the walk the limits module uses everywhere). */
export { nestsDeeperThan as exceedsDepth } from "../limits.js";

/**
 * Applies the argument precedence (README "Argument precedence") to one call's sources: the first
 * source that parses as one object wins, shapes are classified before any repair, and only complete
 * calls are repaired.
 */
export function finalizeArguments(sources: ArgumentSources, ctx: FinalizeContext): FinalizeResult {
  const result = decide(sources, ctx);
  if (!result.arguments) return result;
  // The objects glued after the first become calls of their own, each held to the number rule by itself.
  if (result.split) result.split = result.split.map((piece) => checkSplitPiece(piece, ctx.toolName));
  const inspected = inspectValue(result.arguments);
  if (ctx.maxDepth !== undefined && inspected.depth > ctx.maxDepth) {
    return {
      ...result,
      arguments: null,
      source: null,
      error: {
        code: "too_deep",
        message: `The arguments for \`${ctx.toolName}\` nest ${inspected.depth} levels deep, more than the ${ctx.maxDepth} accepted. The call was not executed; send flatter arguments.`,
      },
    };
  }
  const problem = inspected.suspectNumber ? findUnrepresentableNumber(result.arguments, result.rawArguments) : undefined;
  if (problem) return { ...result, arguments: null, source: null, error: numberOutOfRange(problem, ctx.toolName) };
  return result;
}

function checkSplitPiece(piece: SplitPiece, toolName: string): SplitPiece {
  if (!holdsSuspectNumber(piece.value)) return piece;
  const problem = findUnrepresentableNumber(piece.value, piece.raw);
  return problem ? { ...piece, error: numberOutOfRange(problem, toolName) } : piece;
}

function numberOutOfRange(problem: UnrepresentableNumber, toolName: string): ToolCallError {
  return {
    code: "number_out_of_range",
    message:
      `The arguments for \`${toolName}\` hold a number that cannot be passed on as written: ${describeUnrepresentable(problem)}. ` +
      `The call was not executed. Send it again with the number within range, or as a string if it must be exact.`,
  };
}

function decide(sources: ArgumentSources, ctx: FinalizeContext): FinalizeResult {
  const diagnostics: Diagnostic[] = [];
  const prior = ctx.priorRepairs ?? [];
  const deltaText = sources.deltaText;
  // A value the incremental parser already completed proves there is text: trimming would flatten
  // a long rope (a copy of the whole arguments) that nobody may ever read.
  const hasDelta = sources.deltaValue !== undefined || deltaText.trim().length > 0;
  const startText = sources.start ? JSON.stringify(sources.start) : "";
  let finalLossy: LossyRepair | undefined;

  if (!ctx.complete) {
    const cause = ctx.truncationCause ?? "stream_ended";
    return {
      arguments: null,
      rawArguments: hasDelta ? deltaText : startText,
      source: null,
      repairs: [],
      error: {
        code: "truncated",
        cause,
        message:
          `The call to \`${ctx.toolName}\` is incomplete: ${TRUNCATION_TEXT[cause]}. ` +
          (cause === "max_tokens"
            ? "It was not executed. Send less per call: split the content over several smaller calls, each well within the output limit " +
              "(the agent may also raise the output token limit, e.g. max_tokens)."
            : "It was not executed. Send the call again with its complete arguments."),
      },
      diagnostics,
    };
  }

  // Rule 1: a final snapshot that parses wins.
  if (sources.final) {
    const finalText = "text" in sources.final ? sources.final.text : undefined;
    const finalValue = "value" in sources.final ? sources.final.value : parseOrUndefined(finalText ?? "");
    if (isPlainObject(finalValue)) {
      if (hasDelta) {
        const deltaValue = parseOrUndefined(deltaText);
        if (!jsonEqual(deltaValue, finalValue)) {
          diagnostics.push({
            code: "final_differs_from_delta",
            severity: "warning",
            message: "The final arguments snapshot differs from the streamed deltas; the snapshot was used.",
            data: { deltaText },
          });
        }
      }
      return {
        arguments: finalValue,
        rawArguments: finalText ?? JSON.stringify(finalValue),
        source: "final",
        repairs: [...prior],
        error: null,
        diagnostics,
      };
    }
    if (finalText !== undefined && finalText.trim() === "" && !hasDelta && !sources.start && ctx.emptyMeansNoArguments) {
      return { arguments: {}, rawArguments: finalText, source: "empty", repairs: [...prior], error: null, diagnostics };
    }
    if (finalText !== undefined && finalText.trim() !== "" && !ctx.noRepair) {
      const repaired = classifyRepair(finalText);
      if (repaired?.kind === "lossless") {
        return { arguments: repaired.value, rawArguments: finalText, source: "final", repairs: [...prior, ...repaired.repairs], error: null, diagnostics };
      }
      if (repaired?.kind === "lossy") finalLossy = repaired;
    }
    diagnostics.push({
      code: "final_unusable",
      severity: "warning",
      message: "The final arguments snapshot is not a JSON object; falling back to the other sources.",
      data: { final: finalText ?? finalValue },
    });
  }

  if (hasDelta) {
    const fromDelta = decideFromDelta(deltaText, sources.deltaValue, sources.start, startText, ctx, diagnostics);
    if (fromDelta && !fromDelta.error) return { ...fromDelta, repairs: [...prior, ...fromDelta.repairs], diagnostics };
    // Rule 5: the deltas are unusable, but a start input exists.
    if (sources.start) {
      diagnostics.push({
        code: "delta_unusable_used_start",
        severity: "warning",
        message: "The streamed arguments are not valid JSON; the complete input sent when the call opened was used instead.",
        data: { deltaText },
      });
      return { arguments: sources.start, rawArguments: startText, source: "start", repairs: [...prior], error: null, diagnostics };
    }
    if (fromDelta) return { ...fromDelta, diagnostics };
    return { ...invalid(deltaText, ctx.toolName), diagnostics };
  }

  if (sources.start) {
    return { arguments: sources.start, rawArguments: startText, source: "start", repairs: [...prior], error: null, diagnostics };
  }
  const finalText = sources.final ? ("text" in sources.final ? sources.final.text : (JSON.stringify(sources.final.value) ?? "")) : "";
  if (finalText.trim() !== "") {
    // A snapshot arrived but is unusable and nothing else did: that is not "no arguments".
    const decided =
      sources.final && "value" in sources.final
        ? notObject(sources.final.value, finalText, ctx.toolName)
        : finalLossy
          ? lossy(finalText, ctx.toolName, finalLossy)
          : invalid(finalText, ctx.toolName);
    return { ...decided, repairs: [...prior], diagnostics };
  }
  if (ctx.emptyMeansNoArguments) {
    return { arguments: {}, rawArguments: deltaText, source: "empty", repairs: [...prior], error: null, diagnostics };
  }
  return {
    arguments: null,
    rawArguments: deltaText,
    source: null,
    repairs: [...prior],
    error: {
      code: "invalid_json",
      message: `The call to \`${ctx.toolName}\` arrived without any arguments. Send the call again with its arguments as one JSON object.`,
    },
    diagnostics,
  };
}

type Decision = Omit<FinalizeResult, "diagnostics">;

/** A lossy repair is reported, never used: invalid_json, with the candidate as `error.suggestion`. */
function lossy(text: string, toolName: string, repair: LossyRepair): Decision {
  const decision = invalid(text, toolName);
  const error = decision.error as ToolCallError;
  const shown = JSON.stringify(repair.suggestion);
  error.message +=
    ` toolwire's closest repair, ${shown.length > 200 ? `${shown.slice(0, 200)}…` : shown}, was not used because ${repair.reason}: ` +
    `it would run a call the model did not write (it is attached as error.suggestion).`;
  error.suggestion = repair.suggestion;
  return decision;
}

function decideFromDelta(
  text: string,
  parsedValue: unknown,
  start: Record<string, unknown> | undefined,
  startText: string,
  ctx: FinalizeContext,
  diagnostics: Diagnostic[],
): Decision | undefined {
  // Rule 2: the delta stream is one JSON object.
  const parsed = parsedValue !== undefined ? { ok: true as const, value: parsedValue } : parseResult(text);
  if (parsed.ok) {
    const value = parsed.value;
    if (isPlainObject(value)) {
      if (start) {
        const same = jsonEqual(start, value);
        diagnostics.push({
          code: same ? "start_input_repeated" : "start_input_superseded",
          severity: same ? "info" : "warning",
          message: same
            ? "The input sent when the call opened was streamed again as deltas; it was counted once."
            : "The input sent when the call opened differs from the streamed arguments; the streamed arguments were used.",
          data: same ? undefined : { start },
        });
      }
      return { arguments: value, rawArguments: text, source: "delta", repairs: [], error: null };
    }
    if (typeof value === "string") {
      const inner = parseOrUndefined(value);
      if (isPlainObject(inner)) {
        return { arguments: inner, rawArguments: text, source: "delta", repairs: ["decoded_string"], error: null };
      }
    }
    return notObject(value, text, ctx.toolName);
  }

  if (ctx.noRepair) return undefined;
  // Rule 3: shapes that are not one object, classified before any generic repair.
  const shaped = classifyShape(text, start, startText);
  if (shaped) return shaped;

  // Rule 4: syntax repair, only because the call is complete (checked by the caller), and only a
  // lossless one yields arguments; a lossy candidate comes back as an error with a suggestion.
  const repaired = classifyRepair(text);
  if (repaired?.kind === "lossless") return { arguments: repaired.value, rawArguments: text, source: "delta", repairs: repaired.repairs, error: null };
  if (repaired?.kind === "lossy") return lossy(text, ctx.toolName, repaired);
  return undefined;
}

function classifyShape(text: string, start: Record<string, unknown> | undefined, startText: string): Decision | undefined {
  const scan = scanJson(text, { multiple: true });
  const values = scan.values;
  if (scan.state !== "error" && scan.state !== "partial" && values.length >= 2 && values.every(isPlainObject)) {
    const objects = values as Record<string, unknown>[];
    const last = objects[objects.length - 1] as Record<string, unknown>;
    if (objects.every((value) => jsonEqual(value, objects[0]))) {
      return { arguments: last, rawArguments: text, source: "delta", repairs: ["collapsed_duplicate"], error: null };
    }
    if (objects.every((value, i) => i === 0 || jsonExtends(objects[i - 1], value))) {
      return { arguments: last, rawArguments: text, source: "delta", repairs: ["cumulative_resend"], error: null };
    }
    // Different complete objects: parallel calls of one tool flattened into one (LiteLLM, relays).
    const ends = scan.valueEnds;
    const pieces: SplitPiece[] = objects.map((value, i) => ({ value, raw: text.slice(i === 0 ? 0 : (ends[i - 1] as number), ends[i]).trim() }));
    const [first, ...rest] = pieces as [SplitPiece, ...SplitPiece[]];
    return { arguments: first.value, rawArguments: first.raw, source: "delta", repairs: ["split_concatenated_calls"], error: null, split: rest };
  }
  if (start) {
    // Kimi-style: the start input holds the beginning of the object and the deltas continue it.
    const trimmed = text.trimStart();
    const open = startText.slice(0, -1);
    const candidates = trimmed.startsWith(",") ? [open + trimmed] : trimmed.startsWith('"') ? [`${open},${trimmed}`] : [];
    for (const candidate of candidates) {
      const value = parseOrUndefined(candidate);
      if (isPlainObject(value) && jsonExtends(start, value)) {
        // The merged text is synthesized, so its canonical serialization is the honest raw form.
        return { arguments: value, rawArguments: JSON.stringify(value), source: "merged", repairs: ["start_continuation"], error: null };
      }
    }
  }
  return undefined;
}

function notObject(value: unknown, text: string, toolName: string): Decision {
  return {
    arguments: null,
    rawArguments: text,
    source: null,
    repairs: [],
    error: {
      code: "not_object",
      message:
        `The arguments for \`${toolName}\` are valid JSON but not an object (got ${describeJsonType(value)}). ` +
        `Send them again as one JSON object whose keys are the parameter names, e.g. {"parameter": "value"}.`,
    },
  };
}

function invalid(text: string, toolName: string): Decision {
  const scan = scanJson(text);
  const keys = isPlainObject(scan.value) ? Object.keys(scan.value) : [];
  let position: number | undefined;
  let what: string;
  if (scan.state === "error" && scan.error) {
    position = scan.error.position;
    what = `${scan.error.message} at character ${position} (near ${JSON.stringify(excerpt(text, position))})`;
  } else if (scan.state === "partial") {
    position = text.length;
    what = "the JSON ends before it is complete (an unterminated string or an unclosed object or array)";
  } else if (scan.values.length > 1 || (scan.state === "complete" && scan.error)) {
    what = "several JSON values were sent one after another";
  } else {
    what = "the text is not a JSON object";
  }
  const example = keys.length > 0 ? `{${keys.map((key) => `${JSON.stringify(key)}: ...`).join(", ")}}` : `{"parameter": "value"}`;
  const error: ToolCallError = {
    code: "invalid_json",
    message:
      `The arguments for \`${toolName}\` are not valid JSON: ${what}. The call was not executed. ` +
      `Send it again with the arguments as one complete JSON object, e.g. ${example}, with every string quoted and special characters escaped.`,
  };
  if (position !== undefined) error.position = position;
  return { arguments: null, rawArguments: text, source: null, repairs: [], error };
}

function excerpt(text: string, position: number): string {
  return text.slice(Math.max(0, position - 20), position + 20);
}

function describeJsonType(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return `a ${typeof value}`;
}

function parseResult(text: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false };
  }
}

function parseOrUndefined(text: string): unknown {
  const result = parseResult(text);
  return result.ok ? result.value : undefined;
}

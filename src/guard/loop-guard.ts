import { buildExample, requirementLines } from "../schema/hints.js";
import type { Schema } from "../schema/json-schema.js";
import type { ValidationResult } from "../schema/validate.js";
import type { ToolCallError } from "../types.js";
import { hashId } from "../util/hash.js";

/**
 * Stops a model that keeps calling a tool the same wrong way. Failures are counted per tool and
 * per error fingerprint (the kind of mistake, not its exact values) since that tool's last
 * success. At `escalateAfter` the message grows the tool's required fields and a valid example
 * built from its schema; at `tripAfter` the decision is `trip` so the agent can stop the loop.
 */

export interface LoopGuardOptions {
  /** Consecutive identical failures before the message escalates (default 3). */
  escalateAfter?: number;
  /** Consecutive identical failures before `trip` (default 5). */
  tripAfter?: number;
  /** Parameter schemas by tool name, for required fields and examples in escalated messages. */
  schemas?: Readonly<Record<string, Schema>> | ((tool: string) => Schema | undefined);
}

/** A failed call: a validation result, a decoder error on the call, or any error text. */
export type GuardFailure = ValidationResult | ToolCallError | string | { message: string; fingerprint?: string };

/**
 * What the agent should do after a failure: `continue` (send the message), `escalate` (the message
 * now says how to call the tool), `trip` (stop calling it).
 */
export type GuardAction = "continue" | "escalate" | "trip";

/**
 * The loop guard's verdict on one failed call: the action, the counts behind it and the message to
 * send back to the model.
 */
export interface GuardDecision {
  action: GuardAction;
  tool: string;
  fingerprint: string;
  /** Consecutive failures of this tool with this fingerprint. */
  count: number;
  /** Consecutive failures of this tool, any fingerprint. */
  toolFailures: number;
  /** What to send back to the model as the tool result. */
  message: string;
  /** True once the guard says stop (same as action === "trip"). */
  trip: boolean;
}

interface ToolState {
  byFingerprint: Map<string, number>;
  failures: number;
}

/** Counts failed calls per tool and per kind of mistake; created by `createLoopGuard`. */
export interface LoopGuard {
  /** Records a failed call and decides what the model is told. */
  failure(tool: string, failure: GuardFailure): GuardDecision;
  /** Records a successful call: the tool's counters reset. */
  success(tool: string): void;
  /** Forgets one tool, or everything. */
  reset(tool?: string): void;
  /** Consecutive failures of a tool since its last success. */
  failures(tool: string): number;
}

/**
 * Creates a loop guard: call `failure(tool, error)` for each failed call and send back the
 * decision's `message`; `success(tool)` resets the tool. Identical failures escalate after
 * `escalateAfter` (3) and trip after `tripAfter` (5).
 */
export function createLoopGuard(options: LoopGuardOptions = {}): LoopGuard {
  const escalateAfter = Math.max(1, options.escalateAfter ?? 3);
  const tripAfter = Math.max(escalateAfter, options.tripAfter ?? 5);
  const state = new Map<string, ToolState>();

  const schemaFor = (tool: string): Schema | undefined => {
    if (!options.schemas) return undefined;
    return typeof options.schemas === "function" ? options.schemas(tool) : options.schemas[tool];
  };

  return {
    failure(tool, failure) {
      const fingerprint = fingerprintOf(failure);
      const entry = state.get(tool) ?? { byFingerprint: new Map(), failures: 0 };
      const count = (entry.byFingerprint.get(fingerprint) ?? 0) + 1;
      entry.byFingerprint.set(fingerprint, count);
      entry.failures++;
      state.set(tool, entry);
      const base = messageOf(failure);
      const action: GuardAction = count >= tripAfter ? "trip" : count >= escalateAfter ? "escalate" : "continue";
      let message = base;
      if (action !== "continue") message = escalate(base, tool, count, schemaFor(tool));
      if (action === "trip") {
        message += `\n\nSTOP: '${tool}' has failed ${count} times in a row with the same error. Do not call it again this way; change approach or report the problem.`;
      }
      return { action, tool, fingerprint, count, toolFailures: entry.failures, message, trip: action === "trip" };
    },
    success(tool) {
      state.delete(tool);
    },
    reset(tool) {
      if (tool === undefined) state.clear();
      else state.delete(tool);
    },
    failures(tool) {
      return state.get(tool)?.failures ?? 0;
    },
  };
}

function escalate(base: string, tool: string, count: number, schema: Schema | undefined): string {
  const lines = [base, "", `This is attempt ${count} with the same mistake. How to call '${tool}':`];
  if (schema !== undefined) {
    try {
      lines.push(...requirementLines(schema).map((l) => `- ${l}`));
      const example = buildExample(schema);
      if (example) lines.push(`A valid call: ${JSON.stringify(example.value)}`);
    } catch {
      // A schema that does not compile cannot yield an example; the requirements above still help.
    }
  }
  if (lines.length === 3) lines.push("- Re-read the tool's parameter descriptions and send every required field with the right type.");
  return lines.join("\n");
}

function isValidationResult(value: unknown): value is ValidationResult {
  return typeof value === "object" && value !== null && "issues" in value && Array.isArray((value as ValidationResult).issues);
}

function isToolCallError(value: unknown): value is ToolCallError {
  return typeof value === "object" && value !== null && "code" in value && "message" in value;
}

function messageOf(failure: GuardFailure): string {
  if (typeof failure === "string") return failure;
  return failure.message;
}

/**
 * The kind of mistake: issue codes and paths for validation results (not the values received),
 * the error code for decoder errors, and the text with numbers, quoted strings and hex runs
 * blanked for free-form errors.
 */
export function fingerprintOf(failure: GuardFailure): string {
  if (typeof failure === "object" && "fingerprint" in failure && typeof failure.fingerprint === "string") return failure.fingerprint;
  if (isValidationResult(failure)) {
    const parts = failure.issues.map((i) => `${i.code}:${i.path.join(".")}:${(i.fields ?? []).join(",")}`).sort();
    return `validation:${hashId(parts.join("|"))}`;
  }
  if (isToolCallError(failure)) return `call:${failure.code}`;
  return `text:${hashId(normalizeText(messageOf(failure)))}`;
}

function normalizeText(text: string): string {
  // The head of an error identifies it; bounding the length also bounds the regex work.
  return text
    .slice(0, 2000)
    .toLowerCase()
    .replace(/"[^"\n]*"|'[^'\n]*'|`[^`\n]*`/g, "<s>")
    .replace(/0x[0-9a-f]+|\b[0-9a-f]{8,}\b/g, "<h>")
    .replace(/\d+/g, "<n>")
    .replace(/\s+/g, " ")
    .trim();
}

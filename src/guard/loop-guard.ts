import { compileSchema } from "../schema/compile.js";
import { buildExample, requirementLines } from "../schema/hints.js";
import { isPlainObject, isSchemaNode, preview, propertyPin, stableStringify, type Schema, type SchemaNode } from "../schema/json-schema.js";
import type { ValidationResult } from "../schema/validate.js";
import type { ToolCallError } from "../types.js";
import { hashId } from "../util/hash.js";

/**
 * Stops a model that keeps calling a tool the wrong way, or the same way. Two breakers, both per
 * tool:
 * - failures: every failed call of a tool counts, whatever the mistake (a missing field, then a
 *   wrong type, then bad JSON is three failures in a row); the tool's next success resets it. At
 *   `escalateAfter` the message grows the tool's required fields (the conditional ones per mode)
 *   and a valid example per mode built from its schema; at `tripAfter` the decision is `trip`.
 * - identical calls: `beforeCall` counts consecutive calls of a tool with equal arguments, success
 *   or not, and from `maxIdenticalCalls` on says `block` (with the reason, and a message to return
 *   to the model instead of running the call). Agents loop on a successful `read_file` or `search`;
 *   a warning the agent ignores changes nothing, so the guard refuses.
 */

/** Defaults of {@link createLoopGuard}; the README's guard section is generated from them. */
export const LOOP_GUARD_DEFAULTS = {
  /** Consecutive failed calls of one tool (any mistake) before the message escalates. */
  escalateAfter: 3,
  /** Consecutive failed calls of one tool before the decision is `trip`. */
  tripAfter: 5,
  /** Consecutive calls of one tool with equal arguments from which `beforeCall` blocks (0: never). */
  maxIdenticalCalls: 3,
} as const;

/**
 * Options of `createLoopGuard`: when to escalate and trip, when to block identical calls, and the
 * tools' schemas for escalated messages.
 */
export interface LoopGuardOptions {
  /** Consecutive failures of a tool, any kind, before the message escalates (default 3). */
  escalateAfter?: number;
  /** Consecutive failures of a tool before `trip` (default 5). */
  tripAfter?: number;
  /**
   * Consecutive calls of a tool with equal arguments at which `beforeCall` blocks (default 3: the
   * third identical call is not run). 0 turns the check off; a function sets it per tool (a
   * `wait` or `poll` tool may legitimately repeat).
   */
  maxIdenticalCalls?: number | ((tool: string) => number);
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
  /** Consecutive failures of this tool, any fingerprint: what escalation and tripping count. */
  toolFailures: number;
  /** What to send back to the model as the tool result. */
  message: string;
  /** True once the guard says stop (same as action === "trip"). */
  trip: boolean;
}

/** Why `beforeCall` refused a call. */
export type CallBlockReason = "identical_calls";

/** What `beforeCall` decided about a call about to run, and why. */
export interface CallDecision {
  /** `run`: execute the call; `block`: do not, send `message` back as its result. */
  action: "run" | "block";
  tool: string;
  /** Consecutive calls of this tool with these arguments, this one included. */
  identicalCalls: number;
  /** Null when the call may run. */
  reason: CallBlockReason | null;
  /** The tool result to send instead of running the call; null when it may run. */
  message: string | null;
  block: boolean;
}

interface ToolState {
  byFingerprint: Map<string, number>;
  failures: number;
}

interface CallStreak {
  key: string;
  count: number;
}

/** Counts failed calls per tool and repeated identical calls; created by `createLoopGuard`. */
export interface LoopGuard {
  /** Records a failed call and decides what the model is told. */
  failure(tool: string, failure: GuardFailure): GuardDecision;
  /** Records a successful call: the tool's failure counters reset (not its identical-call streak). */
  success(tool: string): void;
  /**
   * Records a call about to run and decides whether it may: the same tool with equal arguments
   * (key order does not matter) `maxIdenticalCalls` times in a row is blocked, whatever the
   * earlier results were. A call of the tool with other arguments starts a new streak.
   */
  beforeCall(tool: string, args: unknown): CallDecision;
  /** Forgets one tool, or everything (failures and identical-call streaks). */
  reset(tool?: string): void;
  /** Consecutive failures of a tool since its last success. */
  failures(tool: string): number;
}

/**
 * Creates a loop guard: call `beforeCall(tool, args)` before running a call (it blocks the third
 * identical call in a row), `failure(tool, error)` for each failed call and send back the
 * decision's `message`; `success(tool)` resets the tool. Consecutive failures of a tool, whatever
 * the mistake, escalate after `escalateAfter` (3) and trip after `tripAfter` (5).
 */
export function createLoopGuard(options: LoopGuardOptions = {}): LoopGuard {
  const escalateAfter = Math.max(1, options.escalateAfter ?? LOOP_GUARD_DEFAULTS.escalateAfter);
  const tripAfter = Math.max(escalateAfter, options.tripAfter ?? LOOP_GUARD_DEFAULTS.tripAfter);
  const state = new Map<string, ToolState>();
  const streaks = new Map<string, CallStreak>();

  const schemaFor = (tool: string): Schema | undefined => {
    if (!options.schemas) return undefined;
    return typeof options.schemas === "function" ? options.schemas(tool) : options.schemas[tool];
  };
  const identicalLimit = (tool: string): number => {
    const limit = typeof options.maxIdenticalCalls === "function" ? options.maxIdenticalCalls(tool) : (options.maxIdenticalCalls ?? LOOP_GUARD_DEFAULTS.maxIdenticalCalls);
    return Number.isFinite(limit) && limit > 0 ? Math.max(2, Math.floor(limit)) : Infinity;
  };

  return {
    failure(tool, failure) {
      const fingerprint = fingerprintOf(failure);
      const entry = state.get(tool) ?? { byFingerprint: new Map(), failures: 0 };
      const count = (entry.byFingerprint.get(fingerprint) ?? 0) + 1;
      entry.byFingerprint.set(fingerprint, count);
      entry.failures++;
      state.set(tool, entry);
      const failures = entry.failures;
      const base = messageOf(failure);
      const action: GuardAction = failures >= tripAfter ? "trip" : failures >= escalateAfter ? "escalate" : "continue";
      let message = base;
      if (action !== "continue") message = escalate(base, tool, failures, count === failures, schemaFor(tool));
      if (action === "trip") {
        const same = count === failures ? " with the same error" : "";
        message += `\n\nSTOP: '${tool}' has failed ${failures} times in a row${same}. Do not call it again this way; change approach or report the problem.`;
      }
      return { action, tool, fingerprint, count, toolFailures: failures, message, trip: action === "trip" };
    },
    success(tool) {
      state.delete(tool);
    },
    beforeCall(tool, args) {
      const key = argumentsKey(args);
      const previous = streaks.get(tool);
      const count = previous && previous.key === key ? previous.count + 1 : 1;
      streaks.set(tool, { key, count });
      const limit = identicalLimit(tool);
      if (count < limit) return { action: "run", tool, identicalCalls: count, reason: null, message: null, block: false };
      const message =
        `Not run: this is call ${count} in a row of '${tool}' with the same arguments (${preview(args, 120)}). ` +
        "Repeating it will not give a different result: use the output you already have, call it with different arguments, or do something else.";
      return { action: "block", tool, identicalCalls: count, reason: "identical_calls", message, block: true };
    },
    reset(tool) {
      if (tool === undefined) {
        state.clear();
        streaks.clear();
      } else {
        state.delete(tool);
        streaks.delete(tool);
      }
    },
    failures(tool) {
      return state.get(tool)?.failures ?? 0;
    },
  };
}

let uncomparable = 0;

function argumentsKey(args: unknown): string {
  try {
    return stableStringify(args);
  } catch {
    // A cyclic value cannot come from JSON; it never equals another call.
    return `uncomparable:${++uncomparable}`;
  }
}

function escalate(base: string, tool: string, failures: number, same: boolean, schema: Schema | undefined): string {
  const lead = same ? `This is attempt ${failures} with the same mistake.` : `This is failure ${failures} in a row of '${tool}' (not always the same mistake).`;
  const lines = [base, "", `${lead} How to call '${tool}':`];
  const header = lines.length;
  if (schema !== undefined) {
    try {
      lines.push(...requirementLines(schema).map((l) => `- ${l}`));
      const examples = exampleCalls(schema);
      if (examples.length === 1) lines.push(`A valid call: ${JSON.stringify(examples[0]!.value)}`);
      else for (const example of examples) lines.push(`A valid call with ${example.mode}: ${JSON.stringify(example.value)}`);
    } catch {
      // A schema that does not compile cannot yield an example; the requirements above still help.
    }
  }
  if (lines.length === header) lines.push("- Re-read the tool's parameter descriptions and send every required field with the right type.");
  return lines.join("\n");
}

interface ModeExample {
  /** `mode='replace'`, or "" for a schema without modes. */
  mode: string;
  value: unknown;
}

/**
 * One valid example per mode of a tool whose requirements depend on a discriminator (`mode`
 * pinned per `oneOf`/`anyOf` branch, or per `if`/`then`), else one example. Each is checked
 * against the whole schema; [] when none can be built. Throws SchemaCompileError for a schema
 * that does not compile.
 */
export function exampleCalls(schema: Schema): ModeExample[] {
  const validate = compileSchema(schema).validate;
  const out: ModeExample[] = [];
  if (isSchemaNode(schema)) {
    for (const { key, value } of modesOf(schema)) {
      const narrowed = pinProperty(schema, key, value);
      const built = buildExample(narrowed);
      if (built && validate(built.value)) out.push({ mode: `${key}=${typeof value === "string" ? `'${value}'` : JSON.stringify(value)}`, value: built.value });
    }
  }
  if (out.length > 0) return out;
  const built = buildExample(schema);
  return built ? [{ mode: "", value: built.value }] : [];
}

/** The discriminator values a schema's branches or conditions pin, in order. */
function modesOf(root: SchemaNode): Array<{ key: string; value: unknown }> {
  const found: Array<{ key: string; value: unknown }> = [];
  const seen = new Set<string>();
  const add = (key: string, value: unknown) => {
    const id = `${key}\u0000${stableStringify(value)}`;
    if (seen.has(id)) return;
    seen.add(id);
    found.push({ key, value });
  };
  for (const keyword of ["oneOf", "anyOf"] as const) {
    const branches = root[keyword];
    if (!Array.isArray(branches) || branches.length < 2) continue;
    const first = branches[0];
    if (!isSchemaNode(first) || !isPlainObject(first.properties)) continue;
    const key = Object.keys(first.properties).find((k) => branches.every((b) => propertyPin(b, k) !== null));
    if (key !== undefined) for (const b of branches) add(key, propertyPin(b, key)!.value);
  }
  const conditions = [root, ...(Array.isArray(root.allOf) ? root.allOf : [])];
  for (const node of conditions) {
    if (!isSchemaNode(node) || !isSchemaNode(node.if) || !isPlainObject(node.if.properties)) continue;
    const keys = Object.keys(node.if.properties);
    if (keys.length !== 1) continue;
    const pin = propertyPin(node.if, keys[0]!);
    if (pin) add(keys[0]!, pin.value);
  }
  return found;
}

function pinProperty(root: SchemaNode, key: string, value: unknown): SchemaNode {
  const properties = isPlainObject(root.properties) ? { ...root.properties } : {};
  const current = properties[key];
  properties[key] = { ...(isSchemaNode(current) ? current : {}), const: value };
  const required = Array.isArray(root.required) ? root.required : [];
  return { ...root, properties, required: required.includes(key) ? required : [...required, key] };
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

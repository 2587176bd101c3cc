import { writeFile } from "node:fs/promises";
import { resolve } from "node:path";
import { checkHistory, HISTORY_FORMATS, repairHistory } from "../../history/index.js";
import { ID_RULES, isIdRule } from "../../history/ids.js";
import { isHistoryFormat } from "../../history/model.js";
import type { Edit, Fault, HistoryFormat, HistoryOptions, RepairPolicy } from "../../history/index.js";
import { findTarget } from "../../schema/targets/index.js";
import type { SchemaTarget } from "../../schema/targets/types.js";
import { parseCommandArgs, usageError } from "../args.js";
import { CliError, EXIT, type CliContext } from "../context.js";
import { describeVotes, detectHistoryFormat } from "../history-detect.js";
import { ioReason, readInputText } from "../input.js";
import { plural } from "../../import/text.js";

export const summary = "check or repair the pairing of tool calls and results in a conversation history file";

export const usage = `Usage: toolwire history check|repair <file.json> [--format F] [--policy P] [--ids R] [--thinking T] [--out FILE] [--json]

Checks a conversation history written in a provider's own message format for everything that
makes the provider reject it with a 400 (calls without results, results without calls, results
out of place, duplicate or rejected ids, unusable arguments, empty text, missing thinking or
signatures, …), or repairs it. The file holds the list of messages, or a request body with
"messages" (anthropic, openai-chat, bedrock), "input" (openai-responses) or "contents" (gemini).

  --format F     ${HISTORY_FORMATS.join(", ")}; or a name 'schema --target' accepts for
                 the same API (claude, vertex-anthropic, google, vertex, grok, kimi, llama.cpp, …);
                 default: detected from the messages (Gemini parts, Responses items, Chat roles,
                 Converse blocks, Messages blocks); a --format the messages contradict gets a warning
  --policy P     repair choices, as comma-separated key=value pairs:
                   dangling=insert|drop      call without a result: add an error result (default) or remove the call
                   orphans=text|drop         result without a call: turn it into user text (default) or remove it
                   invalid=placeholder|drop  unusable arguments: placeholder and error result (default) or a note
                   thinking=text|keep        thinking block missing: rewrite that exchange as text (default) or report it
                 or a preset: safe (all defaults), drop (dangling=drop,orphans=drop,invalid=drop)
  --ids R        call-id rule of the target behind the format: ${ID_RULES.join(", ")} (default: the format's own)
  --thinking T   on, off or auto: whether the request enables thinking (default auto: on when the
                 history holds reasoning the provider verifies)
  --out FILE     repair: write the repaired file to FILE; otherwise it goes to stdout and the report to stderr
  --json         check: {"file","format","ok","messages","faults"}; repair: {"file","format","ok","edits","remaining","idMap","history"}

Exit codes: 0 no fault (check) or fully repaired (repair); 1 faults found (check) or left in
place by the policy (repair); 2 usage error (unknown subcommand, flag, format, rule or policy);
3 unreadable, empty or invalid JSON file, no message list in the file, a format the messages
do not show (pass --format), or a history nested deeper than toolwire accepts (too_deep).`;

const LIST_KEYS: Record<HistoryFormat, string> = {
  anthropic: "messages",
  "openai-chat": "messages",
  bedrock: "messages",
  "openai-responses": "input",
  gemini: "contents",
};

const POLICY_VALUES: Record<string, Record<string, Partial<RepairPolicy>>> = {
  dangling: { insert: { danglingCalls: "insert_error_result" }, drop: { danglingCalls: "drop_call" } },
  orphans: { text: { orphanResults: "to_text" }, drop: { orphanResults: "drop" } },
  invalid: { placeholder: { invalidCalls: "placeholder" }, drop: { invalidCalls: "drop" } },
  thinking: { text: { missingThinking: "to_text" }, keep: { missingThinking: "keep" } },
};

export function parsePolicy(text: string | undefined): RepairPolicy {
  if (text === undefined || text === "safe") return {};
  if (text === "drop") return { danglingCalls: "drop_call", orphanResults: "drop", invalidCalls: "drop" };
  const policy: RepairPolicy = {};
  for (const entry of text.split(",").map((item) => item.trim()).filter((item) => item !== "")) {
    const [key, value] = entry.split("=", 2).map((item) => item.trim());
    const choice = key !== undefined && value !== undefined ? POLICY_VALUES[key]?.[value] : undefined;
    if (!choice) {
      const known = Object.entries(POLICY_VALUES).map(([name, values]) => `${name}=${Object.keys(values).join("|")}`);
      throw new CliError(`unknown policy entry '${entry}'. Expected a preset (safe, drop) or ${known.join(", ")}.`, EXIT.usage);
    }
    Object.assign(policy, choice);
  }
  return policy;
}

interface Loaded {
  /** The file's JSON value: the list itself, or the request body holding it. */
  document: unknown;
  messages: unknown[];
  key: string | null;
}

async function readDocument(path: string, shown: string): Promise<unknown> {
  const text = await readInputText({ path, shown });
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new CliError(`'${shown}' is not valid JSON: ${(error as Error).message}`, EXIT.input);
  }
}

function listOf(document: unknown, shown: string, format: HistoryFormat): Loaded {
  if (Array.isArray(document)) return { document, messages: document, key: null };
  const key = LIST_KEYS[format];
  const list = typeof document === "object" && document !== null ? (document as Record<string, unknown>)[key] : undefined;
  if (!Array.isArray(list)) throw new CliError(`'${shown}' holds neither a list of messages nor a request body with a "${key}" list (format ${format}).`, EXIT.input);
  return { document, messages: list, key };
}

/**
 * The format to read the file in: --format when given (with a warning when the messages are
 * plainly another format's), else the one the messages show; neither is an input error.
 */
function chooseFormat(document: unknown, shown: string, given: HistoryFormat | undefined, ctx: CliContext): HistoryFormat {
  const detection = detectHistoryFormat(document);
  if (given !== undefined) {
    if (detection.format !== null && detection.format !== given) {
      ctx.err(`toolwire history: warning: '${shown}' looks like ${detection.format} messages (${describeVotes(detection.votes)}), not ${given}: read as ${given}, as --format says; its findings may mean nothing\n`);
    }
    return given;
  }
  if (detection.format !== null) return detection.format;
  const evidence = Object.keys(detection.votes).length > 0 ? `the messages point to ${describeVotes(detection.votes)}` : "the messages carry nothing only one format has";
  throw new CliError(`cannot tell the format of '${shown}': ${evidence}. Pass --format (${HISTORY_FORMATS.join(", ")}).`, EXIT.input);
}

/**
 * The history format of each schema target, so that --format takes the names --target takes.
 * Null: the target speaks more than one message format (OpenAI: Chat Completions and Responses).
 */
const FORMAT_OF_TARGET: Record<SchemaTarget, HistoryFormat | null> = {
  openai: null,
  "openai-strict": null,
  anthropic: "anthropic",
  "anthropic-strict": "anthropic",
  gemini: "gemini",
  bedrock: "bedrock",
  // OpenAI-compatible servers: their history is Chat Completions messages.
  xai: "openai-chat",
  llamacpp: "openai-chat",
  kimi: "openai-chat",
  fireworks: "openai-chat",
};

/** A history format by its own name, or by any name `schema --target` accepts for the same API. */
export function historyFormat(name: string): HistoryFormat {
  const key = name.trim().toLowerCase();
  if (isHistoryFormat(key)) return key;
  const target = findTarget(key);
  if (target) {
    const format = FORMAT_OF_TARGET[target.name];
    if (format) return format;
    throw new CliError(`'${name}' names more than one history format: use openai-chat (Chat Completions) or openai-responses (Responses).`, EXIT.usage);
  }
  throw new CliError(`unknown format '${name}'. Expected one of: ${HISTORY_FORMATS.join(", ")} (or a schema target name such as claude, google, grok).`, EXIT.usage);
}

function rebuild(loaded: Loaded, messages: unknown[]): unknown {
  if (loaded.key === null) return messages;
  return { ...(loaded.document as Record<string, unknown>), [loaded.key]: messages };
}

function table(rows: Array<{ index: number; code: string; ids: string[]; message: string }>): string[] {
  const codeWidth = Math.max(0, ...rows.map((row) => row.code.length));
  return rows.map((row) => {
    const ids = row.ids.length > 0 ? ` [${row.ids.join(", ")}]` : "";
    return `  message ${String(row.index).padEnd(4)} ${row.code.padEnd(codeWidth)}  ${row.message}${ids}`;
  });
}

export async function run(args: string[], ctx: CliContext): Promise<number> {
  const { positionals, values } = parseCommandArgs("history", args, {
    format: { type: "string" },
    policy: { type: "string" },
    ids: { type: "string" },
    thinking: { type: "string" },
    out: { type: "string" },
    json: { type: "boolean", default: false },
  });
  const [action, file, ...extra] = positionals;
  if (action !== "check" && action !== "repair") throw usageError("history", `expected 'check' or 'repair', got ${action === undefined ? "nothing" : `'${action}'`}`);
  if (file === undefined || extra.length > 0) throw usageError("history", "expected exactly one history file");
  const given = values.format === undefined ? undefined : historyFormat(values.format);
  const options: HistoryOptions = {};
  if (values.ids !== undefined) {
    if (!isIdRule(values.ids)) throw new CliError(`unknown id rule '${values.ids}'. Expected one of: ${ID_RULES.join(", ")}.`, EXIT.usage);
    options.ids = values.ids;
  }
  if (values.thinking !== undefined) {
    if (values.thinking !== "on" && values.thinking !== "off" && values.thinking !== "auto") throw new CliError(`unknown thinking setting '${values.thinking}'. Expected one of: on, off, auto.`, EXIT.usage);
    options.thinking = values.thinking;
  }
  const policy = { ...parsePolicy(values.policy), ...options };
  if (action === "check" && (values.policy !== undefined || values.out !== undefined)) throw usageError("history", "--policy and --out apply to 'repair' only");

  const document = await readDocument(resolve(ctx.cwd, file), file);
  const format = chooseFormat(document, file, given, ctx);
  const loaded = listOf(document, file, format);
  if (action === "check") return check(file, format, loaded, options, values.json, ctx);
  return repair(file, format, loaded, policy, values, ctx);
}

function check(file: string, format: HistoryFormat, loaded: Loaded, options: HistoryOptions, json: boolean, ctx: CliContext): number {
  const faults = checkHistory(loaded.messages, format, options);
  if (json) {
    ctx.out(JSON.stringify({ file, format, ok: faults.length === 0, messages: loaded.messages.length, faults }) + "\n");
  } else {
    const head = faults.length === 0 ? "no faults" : plural(faults.length, "fault");
    ctx.out([`${file} (${format}): ${head} in ${plural(loaded.messages.length, "message")}`, ...table(faults)].join("\n") + "\n");
  }
  return faults.length === 0 ? EXIT.ok : EXIT.findings;
}

async function repair(file: string, format: HistoryFormat, loaded: Loaded, policy: RepairPolicy, values: { out?: string; json: boolean }, ctx: CliContext): Promise<number> {
  const result = repairHistory(loaded.messages, format, policy);
  const history = rebuild(loaded, result.messages);
  const ok = result.remaining.length === 0;
  const report = (edits: Edit[], remaining: Fault[]) => {
    const head = `${file} (${format}): ${edits.length === 0 ? "nothing to repair" : plural(edits.length, "edit")}${remaining.length > 0 ? `, ${plural(remaining.length, "fault")} left by the policy` : ""}`;
    const lines = [head, ...table(edits)];
    if (remaining.length > 0) lines.push("Left in place:", ...table(remaining));
    return lines.join("\n") + "\n";
  };
  if (values.out !== undefined) {
    try {
      await writeFile(resolve(ctx.cwd, values.out), JSON.stringify(history, null, 2) + "\n");
    } catch (error) {
      throw new CliError(`cannot write '${values.out}': ${ioReason(error)}`, EXIT.input);
    }
  }
  if (values.json) {
    ctx.out(JSON.stringify({ file, format, ok, edits: result.edits, remaining: result.remaining, idMap: result.idMap, ...(values.out === undefined ? { history } : { out: values.out }) }) + "\n");
  } else if (values.out !== undefined) {
    ctx.out(report(result.edits, result.remaining));
  } else {
    ctx.err(report(result.edits, result.remaining));
    ctx.out(JSON.stringify(history, null, 2) + "\n");
  }
  return ok ? EXIT.ok : EXIT.findings;
}

import { resolve } from "node:path";
import { checkSchema, type SchemaProblem } from "../../schema/check.js";
import { isPlainObject } from "../../schema/json-schema.js";
import { sanitizeSchema, type SanitizeResult } from "../../schema/sanitize.js";
import { findTarget, SCHEMA_TARGETS, TARGETS } from "../../schema/targets/index.js";
import { detectToolShape, type ToolShape } from "../../schema/tool-shape.js";
import type { SchemaTarget } from "../../schema/targets/types.js";
import { checkTools, sanitizeTools } from "../../schema/tools.js";
import { CliError, EXIT, type CliContext, type CommandRunner } from "../context.js";
import { usageError } from "../args.js";
import { detectHistoryFormat } from "../history-detect.js";
import { readInputText } from "../input.js";

export const summary = "check or sanitize a tool's JSON Schema for a provider (gemini, openai-strict, llamacpp…)";

export const usage = `Usage: toolwire schema check <schema.json> [--target T] [--json]
       toolwire schema sanitize <schema.json> [--target T] [--json]

The file holds a parameter schema, a tool definition (OpenAI, Responses, Anthropic, MCP,
Bedrock toolSpec, Gemini functionDeclarations) or a list of them (also {"tools": [...]}).

  check      list what the target would reject or mishandle; exit 1 when anything is found
  sanitize   print the file with each schema rewritten for the target (changes on stderr);
             exit 1 when problems remain that cannot be fixed

--target defaults to the provider whose tool format the file is in (OpenAI Chat or Responses
tools → openai, Anthropic → anthropic, Gemini → gemini, Bedrock → bedrock); a bare schema, MCP
tools and bare function declarations name none, so they need --target. A --target of another
provider than the tool format gets a warning (the schema is still checked for that target).

Targets: ${SCHEMA_TARGETS.join(", ")}
Aliases: ${SCHEMA_TARGETS.flatMap((t) => TARGETS[t].aliases.map((a) => `${a} → ${t}`)).join(", ")}

Exit codes: 0 ok, 1 findings, 2 usage, 3 unreadable, empty or invalid input (also a
conversation history instead of a schema, no --target for a file that names no provider, and a
schema nested deeper than toolwire accepts: too_deep).
`;

interface Args {
  action: "check" | "sanitize";
  file: string;
  target: string | undefined;
  json: boolean;
}

function parseArgs(argv: string[]): Args {
  let target: string | undefined;
  let json = false;
  const positional: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === "--json") json = true;
    else if (arg === "--target" || arg === "-t") {
      target = argv[++i];
      if (target === undefined) throw usageError("schema", "option --target needs a value");
    } else if (arg.startsWith("--target=")) target = arg.slice("--target=".length);
    else if (arg.startsWith("-") && arg !== "-") throw usageError("schema", `unknown option ${arg}`);
    else positional.push(arg);
  }
  const [action, file, ...extra] = positional;
  if (action !== "check" && action !== "sanitize") throw usageError("schema", `expected 'check' or 'sanitize', got ${action === undefined ? "nothing" : `'${action}'`}`);
  if (file === undefined) throw usageError("schema", "missing <schema.json>");
  if (extra.length > 0) throw usageError("schema", `unexpected argument ${extra[0]}`);
  if (target !== undefined && !findTarget(target)) throw new CliError(`unknown target '${target}'. Expected one of: ${SCHEMA_TARGETS.join(", ")}.`, EXIT.usage);
  return { action, file, target, json };
}

/** Where a schema sits inside the input document, so sanitize can put the rewritten one back. */
interface Located {
  name: string | null;
  schema: unknown;
  replace(schema: unknown): unknown;
}

/** Tool definitions in the document (the library's sanitizeTools/checkTools read them), or null. */
function toolList(doc: unknown): { tools: unknown[]; wrap(tools: unknown[]): unknown } | null {
  const list = Array.isArray(doc) ? doc : isPlainObject(doc) && Array.isArray(doc.tools) ? doc.tools : detectToolShape(doc) !== null ? [doc] : null;
  if (list === null || !list.some((tool) => detectToolShape(tool) !== null) || !list.every(isPlainObject)) return null;
  const wrap = (tools: unknown[]) => (Array.isArray(doc) ? tools : isPlainObject(doc) && Array.isArray(doc.tools) ? { ...doc, tools } : tools[0]);
  return { tools: list, wrap };
}

function locate(doc: unknown): { items: Located[]; rebuild(items: unknown[]): unknown } {
  if (Array.isArray(doc)) {
    const items = doc.map((entry) => locateOne(entry));
    return { items, rebuild: (schemas) => items.map((item, i) => item.replace(schemas[i])) };
  }
  if (isPlainObject(doc) && Array.isArray(doc.tools)) {
    const items = doc.tools.map((entry) => locateOne(entry));
    return { items, rebuild: (schemas) => ({ ...doc, tools: items.map((item, i) => item.replace(schemas[i])) }) };
  }
  const one = locateOne(doc);
  return { items: [one], rebuild: (schemas) => one.replace(schemas[0]) };
}

function locateOne(entry: unknown): Located {
  if (isPlainObject(entry)) {
    const fn = entry.function;
    if (isPlainObject(fn) && "parameters" in fn) {
      return { name: nameOf(fn), schema: fn.parameters, replace: (s) => ({ ...entry, function: { ...fn, parameters: s } }) };
    }
    const spec = entry.toolSpec;
    if (isPlainObject(spec) && isPlainObject(spec.inputSchema) && "json" in spec.inputSchema) {
      const input = spec.inputSchema;
      return { name: nameOf(spec), schema: input.json, replace: (s) => ({ ...entry, toolSpec: { ...spec, inputSchema: { ...input, json: s } } }) };
    }
    for (const key of ["input_schema", "inputSchema", "parameters", "parametersJsonSchema"]) {
      if (key in entry && typeof entry.name === "string") {
        return { name: nameOf(entry), schema: entry[key], replace: (s) => ({ ...entry, [key]: s }) };
      }
    }
  }
  return { name: null, schema: entry, replace: (s) => s };
}

function nameOf(value: Record<string, unknown>): string | null {
  return typeof value.name === "string" ? value.name : null;
}

async function readDocument(file: string, ctx: CliContext): Promise<unknown> {
  const text = await readInputText({ path: resolve(ctx.cwd, file), shown: file });
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new CliError(`'${file}' is not valid JSON: ${error instanceof Error ? error.message : String(error)}`, EXIT.input);
  }
}

/** The provider each tool format belongs to; null for formats every provider's tools share (MCP, bare declarations). */
const TARGET_OF_SHAPE: Record<ToolShape, SchemaTarget | null> = {
  "openai-chat": "openai",
  "openai-responses": "openai",
  anthropic: "anthropic",
  bedrock: "bedrock",
  gemini: "gemini",
  mcp: null,
  function: null,
};

/** The API family of a target: OpenAI-compatible servers take OpenAI's tool format. */
const FAMILY: Record<SchemaTarget, string> = {
  openai: "openai",
  "openai-strict": "openai",
  xai: "openai",
  llamacpp: "openai",
  kimi: "openai",
  fireworks: "openai",
  anthropic: "anthropic",
  "anthropic-strict": "anthropic",
  gemini: "gemini",
  bedrock: "bedrock",
};

/** The target the file's tool format names: one provider for every tool, else null. */
function targetOfDocument(tools: readonly unknown[] | null): SchemaTarget | null {
  if (tools === null) return null;
  const targets = new Set(tools.map((tool) => detectToolShape(tool)).map((shape) => (shape === null ? null : TARGET_OF_SHAPE[shape])));
  return targets.size === 1 ? ([...targets][0] ?? null) : null;
}

/** A conversation history (messages with roles), which a schema never is at its top. */
function looksLikeHistory(doc: unknown): boolean {
  const hasRole = (item: unknown) => isPlainObject(item) && typeof item.role === "string" && ("content" in item || "parts" in item || "tool_calls" in item);
  const list = Array.isArray(doc) ? doc : isPlainObject(doc) ? (doc.messages ?? doc.contents ?? doc.input) : undefined;
  return Array.isArray(list) && list.length > 0 && list.every((item) => hasRole(item) || (isPlainObject(item) && typeof item.type === "string" && /^(message|function_call|function_call_output|reasoning)$/.test(item.type))) && list.some(hasRole);
}

function formatProblem(p: SchemaProblem): string {
  return `  ${p.severity.padEnd(7)} ${p.path}  ${p.message} [${p.rule}${p.fixable ? ", fixable" : ""}]`;
}

export const run: CommandRunner = async (argv, ctx) => {
  const args = parseArgs(argv);
  const doc = await readDocument(args.file, ctx);
  if (looksLikeHistory(doc)) {
    const format = detectHistoryFormat(doc).format;
    throw new CliError(
      `'${args.file}' is a conversation history${format ? ` (${format} messages)` : ""}, not a JSON Schema or tool definitions: check it with 'toolwire history check ${args.file}'`,
      EXIT.input,
    );
  }
  const list = toolList(doc);
  const named = targetOfDocument(list?.tools ?? null);
  let target;
  if (args.target === undefined) {
    if (named === null) throw new CliError(`'${args.file}' does not say which provider it is for (a bare schema, MCP tools or bare function declarations): pass --target (${SCHEMA_TARGETS.join(", ")})`, EXIT.input);
    target = findTarget(named)!;
  } else {
    target = findTarget(args.target)!;
    if (named !== null && FAMILY[named] !== FAMILY[target.name]) {
      ctx.err(`toolwire schema: warning: '${args.file}' holds ${named} tool definitions; checking them for ${target.name}, as --target says\n`);
    }
  }
  const checked = list ? checkTools(list.tools, target.name) : null;
  const { items, rebuild } = checked
    ? { items: checked.map((t): Located => ({ name: t.name, schema: null, replace: (s) => s })), rebuild: (schemas: unknown[]) => schemas }
    : locate(doc);
  const label = (item: Located, i: number) => (item.name ?? (items.length > 1 ? `#${i}` : args.file));

  if (args.action === "check") {
    const results = checked ? checked.map((t) => ({ name: t.name, problems: t.problems })) : items.map((item) => ({ name: item.name, problems: checkSchema(item.schema, target.name) }));
    const total = results.reduce((n, r) => n + r.problems.length, 0);
    if (args.json) {
      ctx.out(JSON.stringify({ target: target.name, file: args.file, problems: total, results }) + "\n");
    } else {
      results.forEach((r, i) => {
        if (r.problems.length === 0) ctx.out(`${label(items[i]!, i)}: ok for ${target.name}\n`);
        else ctx.out(`${label(items[i]!, i)}: ${r.problems.length} problem${r.problems.length === 1 ? "" : "s"} for ${target.name}\n${r.problems.map(formatProblem).join("\n")}\n`);
      });
    }
    return total > 0 ? EXIT.findings : EXIT.ok;
  }

  const sanitized = list ? sanitizeTools(list.tools, target.name) : null;
  const results: SanitizeResult[] = sanitized ? sanitized.entries.map((e) => e.result) : items.map((item) => sanitizeSchema(item.schema, target.name));
  const document = sanitized && list ? list.wrap(sanitized.tools) : rebuild(results.map((r) => r.schema));
  const remaining = results.reduce((n, r) => n + r.problems.filter((p) => p.severity === "error").length, 0);
  if (args.json) {
    ctx.out(
      JSON.stringify({
        target: target.name,
        file: args.file,
        results: results.map((r, i) => ({ name: items[i]!.name, schema: r.schema, changes: r.changes, problems: r.problems, argumentMap: r.argumentMap })),
        document,
      }) + "\n",
    );
  } else {
    ctx.out(JSON.stringify(document, null, 2) + "\n");
    results.forEach((r, i) => {
      const name = label(items[i]!, i);
      if (r.changes.length === 0) ctx.err(`${name}: unchanged for ${target.name}\n`);
      else ctx.err(`${name}: ${r.changes.length} change${r.changes.length === 1 ? "" : "s"} for ${target.name}\n${r.changes.map((c) => `  ${c.path}  ${c.message} [${c.rule}]`).join("\n")}\n`);
      if (r.problems.length > 0) ctx.err(`${name}: still ${r.problems.length} problem${r.problems.length === 1 ? "" : "s"}\n${r.problems.map(formatProblem).join("\n")}\n`);
    });
  }
  return remaining > 0 ? EXIT.findings : EXIT.ok;
};

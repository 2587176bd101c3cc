/**
 * Takes other projects' recorded content out of fuzz regressions (testdata/regressions) that the
 * fuzzer found by mutating an upstream corpus stream, keeping exactly the structure that made them
 * counterexamples.
 *
 *   npx vite-node scripts/anonymize-regression.ts              # every file of testdata/regressions
 *   npx vite-node scripts/anonymize-regression.ts <file>...    # only these
 *   npx vite-node scripts/anonymize-regression.ts --check      # report, write nothing
 *
 * A file is rewritten only when its `# origin:` names an upstream corpus file
 * (`testdata/<provider>/<owner>__<repo>__….ndjson`, the name `npm run import-corpus` gives it);
 * `generated` and hand-written origins, and files already rewritten, are left alone. Per file,
 * every record of both sequences (`source` and `mutated`) is rewritten:
 *
 * - id-like strings (values of id keys such as `id`, `call_id`, `item_id`, `tool_use_id`,
 *   `toolUseId`; signatures, `encrypted_content`, `obfuscation`, Bedrock's `p` padding; any string
 *   starting `toolu_`, `call_`, `msg_`, `resp_`, `fc_`, `rs_`, `chatcmpl-`, …) become synthetic
 *   strings of the same length and prefix: each digit, lower-case and upper-case letter is drawn
 *   anew in its class (a hex letter stays a hex letter), every other character stays. The draw is keyed by the
 *   original (HMAC), and checked one-to-one, so the same id maps to the same id across the whole
 *   file and distinct ids stay distinct. Kimi's structural `functions.<name>:<n>` ids are kept.
 * - free text (text and thinking deltas, message content strings, summaries, citations, titles and
 *   urls, tool descriptions, error messages) keeps its length, case, digits, whitespace and
 *   punctuation: every ASCII letter becomes `x`/`X`, other letters a filler of the same UTF-8
 *   length. The filler does not depend on the position, so deltas still add up to the text a
 *   `done` event repeats. `<tag>` markup (`<think>`) is kept.
 * - call arguments (Anthropic `partial_json` and `input`, Bedrock `toolUse.input`, Responses
 *   argument deltas, `arguments` and custom tool `input`, Gemini `args`, Ollama `arguments`): the
 *   letters of JSON string values become filler, keys, escapes, numbers and literals stay. Fragments
 *   are lexed per call in the unmutated stream's order, and each fragment text maps as it did there,
 *   so fragments still add up to the `done` arguments and every fragment stays as valid (or as
 *   invalid) as it was. A file where one fragment text would map two ways (once inside a key, once
 *   inside a value) keeps its arguments as they are, and says so; Chat's argument fragments are left
 *   alone (no Chat regression comes from the corpus).
 * - record data that is not JSON (a raw string) only gets the id mapping.
 *
 * Every string keeps its UTF-8 and JSON-escaped length, so byte offsets in the plan (truncation,
 * corrupted and invalid UTF-8 bytes, cuts) land where they did; the script checks this per record.
 * The `# origin:` line becomes `upstream corpus file <owner>__<repo>/<file>[#<stream>] (ids and text
 * replaced by scripts/anonymize-regression.ts)`; ids named in `# violation:`/`# note:` are mapped;
 * every other header line stays. The file name is a hash of the content, so the file is written
 * under its new name and the old one removed.
 */
import { createHmac } from "node:crypto";
import { readdirSync, readFileSync, unlinkSync, writeFileSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { formatRegression, parseRegression, regressionFileName, type Regression } from "../src/testing/regressions.js";
import { stringifyJson } from "../src/testing/values.js";
import type { ProviderEvent } from "../src/types.js";
import { CORPUS_TABLE } from "./import-corpus.js";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const REGRESSIONS = join(ROOT, "testdata", "regressions");
const KEY = "toolwire anonymize-regression";

/** Keys whose string value is an id, a signature or an opaque blob. */
const ID_KEYS = new Set([
  "id",
  "call_id",
  "item_id",
  "tool_use_id",
  "toolUseId",
  "tool_id",
  "response_id",
  "previous_response_id",
  "responseId",
  "signature",
  "thoughtSignature",
  "thought_signature",
  "encrypted_content",
  "encrypted_index",
  "redacted_thinking",
  "data",
  "obfuscation",
  "p",
  "system_fingerprint",
]);
/** Keys whose string value is free text (the model's, the user's or the other project's). */
const TEXT_KEYS = new Set([
  "text",
  "thinking",
  "thought",
  "reasoning",
  "reasoning_content",
  "content",
  "refusal",
  "delta",
  "summary",
  "cited_text",
  "title",
  "url",
  "page_age",
  "message",
  "error",
  "detail",
  "instructions",
  "description",
  "definition",
  "finishMessage",
]);
/** Keys holding a call's arguments (objects or JSON fragments): left as they are. */
const ARG_KEYS = new Set(["input", "args", "arguments", "partial_json"]);
/** Prefixes of ids (the part kept). */
const ID_TOKEN = /(?:toolu_|srvtoolu_|tooluse_|call_|chatcmpl-|msg_|resp_|fc_|rs_|ctc_|ws_|req_|fp_)[A-Za-z0-9_-]+/g;
const ID_VALUE = /^(?:toolu_|srvtoolu_|tooluse_|call_|chatcmpl-|msg_|resp_|fc_|rs_|ctc_|ws_|req_)[A-Za-z0-9_-]+$/;
/** Keys whose value is never an id, whatever it starts with (a tool may be named `call_api`). */
const STRUCTURAL_KEYS = new Set(["name", "type", "event", "model", "object", "role", "status"]);
const KIMI_ID = /^functions\.[^:]*:\d+$/;

const DIGITS = "0123456789";
const LOWER = "abcdefghijklmnopqrstuvwxyz";
const UPPER = "ABCDEFGHIJKLMNOPQRSTUVWXYZ";
const HEX_LETTERS = "abcdef";

/** One file's consistent id mapping. */
class IdMap {
  readonly forward = new Map<string, string>();
  private readonly taken = new Set<string>();

  map(original: string): string {
    if (original === "" || KIMI_ID.test(original)) return original;
    const known = this.forward.get(original);
    if (known !== undefined) return known;
    const prefix = /^(?:chatcmpl-(?:tool-)?|[a-z]+_(?:bdrk_|vrtx_)?)/.exec(original)?.[0] ?? "";
    const rest = original.slice(prefix.length);
    const hex = /^[0-9a-f-]+$/.test(rest);
    for (let attempt = 0; ; attempt++) {
      const random = drawer(`${attempt}\u0000${original}`);
      let out = prefix;
      for (const char of rest) {
        if (char >= "0" && char <= "9") out += DIGITS[random(10)];
        else if (char >= "a" && char <= "z") out += hex ? HEX_LETTERS[random(6)] : LOWER[random(26)];
        else if (char >= "A" && char <= "Z") out += UPPER[random(26)];
        else out += char;
      }
      // One-to-one, and never an id of the file left as it was.
      if (this.taken.has(out) || (out !== original && this.forward.has(out))) continue;
      this.forward.set(original, out);
      this.taken.add(out);
      return out;
    }
  }

  /** Replaces the ids a text names (only ids already mapped: a header names what the records hold). */
  known(text: string): string {
    return text.replace(ID_TOKEN, (token) => this.forward.get(token) ?? token);
  }
}

/** A deterministic draw keyed by `seed` (HMAC-SHA256 in counter mode). */
function drawer(seed: string): (n: number) => number {
  let block = Buffer.alloc(0);
  let at = 0;
  let counter = 0;
  return (n) => {
    if (at >= block.length) {
      block = createHmac("sha256", KEY).update(`${counter++}\u0000${seed}`).digest();
      at = 0;
    }
    return (block[at++] as number) % n;
  };
}

/** Letters to filler of the same UTF-8 length and case; `<tag>` markup, digits, punctuation and spaces kept. */
function fillText(text: string): string {
  let out = "";
  let i = 0;
  while (i < text.length) {
    const char = String.fromCodePoint(text.codePointAt(i) as number);
    if (char === "<") {
      const tag = /^<\/?[A-Za-z_][A-Za-z0-9_|-]{0,40}>/.exec(text.slice(i, i + 48));
      if (tag) {
        out += tag[0];
        i += tag[0].length;
        continue;
      }
    }
    i += char.length;
    if (char >= "a" && char <= "z") out += "x";
    else if (char >= "A" && char <= "Z") out += "X";
    else if (char.length === 1 && /\p{L}/u.test(char)) {
      const upper = char.toLowerCase() !== char;
      const code = char.charCodeAt(0);
      out += code < 0x800 ? (upper ? "\u00c9" : "\u00e9") : "\u5b57";
    } else out += char;
  }
  return out;
}

/** Rewrites one record's data in place (iteratively: hostile mutations nest thousands deep). */
function rewriteData(data: unknown, ids: IdMap): unknown {
  if (typeof data === "string") return ids.known(data).replace(ID_TOKEN, (token) => ids.map(token));
  const root: Record<string, unknown> = { data };
  const stack: Array<[Record<string, unknown> | unknown[], string | number, string]> = [[root, "data", ""]];
  while (stack.length > 0) {
    const [parent, key, name] = stack.pop() as [Record<string, unknown> | unknown[], string | number, string];
    const value = (parent as Record<string | number, unknown>)[key];
    if (ARG_KEYS.has(name)) continue;
    if (typeof value === "string") {
      (parent as Record<string | number, unknown>)[key] = rewriteString(value, name, parent, ids);
    } else if (Array.isArray(value)) {
      for (let index = 0; index < value.length; index++) stack.push([value, index, name]);
    } else if (value !== null && typeof value === "object") {
      for (const child of Object.keys(value)) stack.push([value as Record<string, unknown>, child, child]);
    }
  }
  return root.data;
}

function rewriteString(value: string, name: string, parent: Record<string, unknown> | unknown[], ids: IdMap): string {
  const owner = Array.isArray(parent) ? null : parent;
  // Responses' argument deltas (function_call_arguments, custom_tool_call_input) are fragments.
  if (name === "delta" && typeof owner?.type === "string" && /arguments|input/.test(owner.type)) return value;
  if (ID_KEYS.has(name) || (!STRUCTURAL_KEYS.has(name) && ID_VALUE.test(value))) return ids.map(value);
  if (TEXT_KEYS.has(name)) return fillText(value);
  return value;
}


/** One letter to filler of the same UTF-8 length and case; anything else as it is. */
function fillChar(char: string): string {
  if (char >= "a" && char <= "z") return "x";
  if (char >= "A" && char <= "Z") return "X";
  if (char.length === 1 && /\p{L}/u.test(char)) return char.charCodeAt(0) < 0x800 ? (char.toLowerCase() !== char ? "\u00c9" : "\u00e9") : "\u5b57";
  return char;
}

/**
 * An incremental JSON lexer over one call's argument fragments: letters of string values become
 * filler, keys, escapes (`\n`, `\u00e9`), numbers and literals stay. Fed fragment by fragment in
 * the order of the unmutated stream, it maps each fragment as the whole text would be mapped.
 */
class ArgumentLexer {
  private inString = false;
  private isKey = false;
  private afterBackslash = false;
  private hexLeft = 0;
  private expectKey = false;
  private readonly stack: string[] = [];

  feed(fragment: string): string {
    let out = "";
    for (const char of fragment) out += this.step(char);
    return out;
  }

  private step(char: string): string {
    if (this.inString) {
      if (this.afterBackslash) {
        this.afterBackslash = false;
        if (char === "u") this.hexLeft = 4;
        return char;
      }
      if (this.hexLeft > 0) {
        this.hexLeft--;
        return char;
      }
      if (char === "\\") this.afterBackslash = true;
      else if (char === '"') this.inString = false;
      else if (!this.isKey) return fillChar(char);
      return char;
    }
    const top = this.stack[this.stack.length - 1];
    if (char === '"') {
      this.inString = true;
      this.isKey = top === "{" && this.expectKey;
    } else if (char === "{" || char === "[") {
      this.stack.push(char);
      this.expectKey = char === "{";
    } else if (char === "}" || char === "]") {
      this.stack.pop();
    } else if (char === ":") {
      this.expectKey = false;
    } else if (char === ",") {
      this.expectKey = top === "{";
    }
    return char;
  }
}

/** Letters of an arguments object's string values to filler (keys stay); iterative. */
function fillObjectValues(value: unknown): unknown {
  const root: Record<string, unknown> = { value };
  const stack: Array<[Record<string | number, unknown>, string | number]> = [[root, "value"]];
  while (stack.length > 0) {
    const [parent, key] = stack.pop() as [Record<string | number, unknown>, string | number];
    const child = parent[key];
    if (typeof child === "string") parent[key] = [...child].map(fillChar).join("");
    else if (Array.isArray(child)) for (let index = 0; index < child.length; index++) stack.push([child as unknown as Record<number, unknown>, index]);
    else if (child !== null && typeof child === "object") for (const name of Object.keys(child)) stack.push([child as Record<string, unknown>, name]);
  }
  return root.value;
}

interface ArgumentVisitor {
  /** A call starts: its fragments lex from a fresh state, or after `prime` (text the call already holds). */
  reset(key: string, prime?: string): void;
  /** One fragment of a call's JSON arguments. */
  fragment(key: string, text: string): string;
  /** A call's whole JSON arguments text. */
  complete(text: string): string;
  /** Free-text input (a custom tool's). */
  free(text: string): string;
  /** An arguments object. */
  object(value: unknown): unknown;
}

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json => value !== null && typeof value === "object" && !Array.isArray(value);

/** Visits the places a provider's events hold call arguments (Anthropic, Bedrock, Responses, Gemini, Ollama). */
function visitArguments(provider: string, eventName: string | undefined, data: unknown, visit: ArgumentVisitor): void {
  if (!isObject(data)) return;
  // The SSE event name, where the data does not repeat it as `type`.
  const type = typeof data.type === "string" ? data.type : eventName;
  if (provider === "anthropic") {
    const block = data.content_block;
    if (type === "content_block_start" && isObject(block)) {
      // A start with a non-empty input may be continued by its deltas (`,"path":"…"}`, as some
      // compatible servers send): they lex as the text after the object's last member.
      const input = block.input;
      visit.reset(`${String(data.index)}`, isObject(input) && Object.keys(input).length > 0 ? stringifyJson(input).slice(0, -1) : undefined);
      if ("input" in block && isObject(block.input)) block.input = visit.object(block.input);
    }
    const delta = data.delta;
    if (type === "content_block_delta" && isObject(delta) && delta.type === "input_json_delta" && typeof delta.partial_json === "string") delta.partial_json = visit.fragment(`${String(data.index)}`, delta.partial_json);
  } else if (provider === "bedrock") {
    const start = data.contentBlockStart;
    if (isObject(start)) visit.reset(`${String(start.contentBlockIndex)}`);
    const delta = data.contentBlockDelta;
    const toolUse = isObject(delta) && isObject(delta.delta) ? delta.delta.toolUse : undefined;
    if (isObject(delta) && isObject(toolUse) && typeof toolUse.input === "string") toolUse.input = visit.fragment(`${String(delta.contentBlockIndex)}`, toolUse.input);
  } else if (provider === "openai-responses") {
    const item = (value: unknown): void => {
      if (!isObject(value)) return;
      if (value.type === "function_call" && typeof value.arguments === "string") value.arguments = visit.complete(value.arguments);
      if (value.type === "custom_tool_call" && typeof value.input === "string") value.input = visit.free(value.input);
    };
    if (type === "response.output_item.added" && isObject(data.item)) visit.reset(String(data.item.id));
    if (isObject(data.item)) item(data.item);
    if (isObject(data.response) && Array.isArray(data.response.output)) data.response.output.forEach(item);
    if (type === "response.function_call_arguments.delta" && typeof data.delta === "string") data.delta = visit.fragment(String(data.item_id), data.delta);
    if (type === "response.function_call_arguments.done" && typeof data.arguments === "string") data.arguments = visit.complete(data.arguments);
    if (type === "response.custom_tool_call_input.delta" && typeof data.delta === "string") data.delta = visit.free(data.delta);
    if (type === "response.custom_tool_call_input.done" && typeof data.input === "string") data.input = visit.free(data.input);
  } else if (provider === "gemini") {
    for (const candidate of Array.isArray(data.candidates) ? data.candidates : []) {
      const parts = isObject(candidate) && isObject(candidate.content) && Array.isArray(candidate.content.parts) ? candidate.content.parts : [];
      for (const part of parts) if (isObject(part) && isObject(part.functionCall) && isObject(part.functionCall.args)) part.functionCall.args = visit.object(part.functionCall.args);
    }
  } else if (provider === "ollama") {
    const calls = isObject(data.message) && Array.isArray(data.message.tool_calls) ? data.message.tool_calls : [];
    for (const call of calls) if (isObject(call) && isObject(call.function) && isObject(call.function.arguments)) call.function.arguments = visit.object(call.function.arguments);
  }
}

/**
 * Maps the letters of argument string values, consistently: fragments are lexed per call in the
 * unmutated stream's order and the mapping of each fragment text learnt there is applied wherever
 * that text appears (the mutations duplicate, drop and move events, not their text). A fragment
 * text the fuzzer made (a hostile event) is left as it is. Null when a fragment text would map two
 * ways (one key, one value): then the file's arguments are left as they are.
 */
function argumentMapper(provider: string, source: readonly ProviderEvent[]): ArgumentVisitor | null {
  const learnt = new Map<string, string>();
  let ambiguous = false;
  const lexers = new Map<string, ArgumentLexer>();
  const complete = (text: string): string => new ArgumentLexer().feed(text);
  const free = (text: string): string => [...text].map(fillChar).join("");
  for (const event of source) {
    visitArguments(provider, event.event, JSON.parse(stringifyJson(event.data ?? null)), {
      reset: (key, prime) => {
        const lexer = new ArgumentLexer();
        if (prime !== undefined) lexer.feed(prime);
        lexers.set(key, lexer);
      },
      fragment: (key, text) => {
        let lexer = lexers.get(key);
        if (lexer === undefined) lexers.set(key, (lexer = new ArgumentLexer()));
        const mapped = lexer.feed(text);
        const known = learnt.get(text);
        if (known !== undefined && known !== mapped) ambiguous = true;
        learnt.set(text, mapped);
        return mapped;
      },
      complete,
      free,
      object: fillObjectValues,
    });
  }
  if (ambiguous) return null;
  return { reset: () => undefined, fragment: (_key, text) => learnt.get(text) ?? text, complete, free, object: fillObjectValues };
}

function rewriteEvent(provider: string, event: ProviderEvent, ids: IdMap, args: ArgumentVisitor | null): ProviderEvent {
  const before = stringifyJson(event.data ?? null);
  const parsed: unknown = JSON.parse(before);
  if (args !== null) visitArguments(provider, event.event, parsed, args);
  const data = rewriteData(parsed, ids);
  const after = stringifyJson(data);
  if (Buffer.byteLength(after) !== Buffer.byteLength(before)) throw new Error(`a record changed length (${Buffer.byteLength(before)} -> ${Buffer.byteLength(after)} bytes): ${before.slice(0, 200)}`);
  return { ...event, data: data as ProviderEvent["data"] };
}

/** `testdata/<provider>/<owner>__<repo>__<short>.ndjson` -> the corpus file's local name. */
const BY_OUTPUT = new Map(Object.entries(CORPUS_TABLE).map(([local, entry]) => [`testdata/${entry.provider}/${local.split("/")[0] as string}__${entry.short}.ndjson`, local]));

function upstreamOrigin(origin: string): { local: string; stream: string | null } | null {
  const hash = origin.indexOf("#");
  const file = hash === -1 ? origin : origin.slice(0, hash);
  const local = BY_OUTPUT.get(file);
  if (local !== undefined) return { local, stream: hash === -1 ? null : origin.slice(hash + 1) };
  if (/^testdata\/[a-z-]+\/[A-Za-z0-9-]+__[A-Za-z0-9._-]+__/.test(file)) throw new Error(`origin ${origin} looks like a corpus file but is not in scripts/import-corpus.ts CORPUS_TABLE`);
  return null;
}

function anonymize(regression: Regression): Regression | null {
  const from = upstreamOrigin(regression.source.origin);
  if (from === null) return null;
  const ids = new IdMap();
  const args = argumentMapper(regression.provider, regression.source.events);
  if (args === null) console.log(`  ${regression.provider} ${regression.source.origin}: an argument fragment maps two ways; arguments left as they are`);
  const events = regression.source.events.map((event) => rewriteEvent(regression.provider, event, ids, args));
  const mutated = regression.mutated.map((event) => rewriteEvent(regression.provider, event, ids, args));
  const origin = `upstream corpus file ${from.local}${from.stream !== null ? `#${from.stream}` : ""} (ids and text${args !== null ? ", argument values too," : ""} replaced by scripts/anonymize-regression.ts)`;
  return {
    ...regression,
    violation: ids.known(regression.violation),
    ...(regression.note !== undefined ? { note: ids.known(regression.note) } : {}),
    source: { ...regression.source, origin, events },
    mutated,
  };
}

function main(argv: string[]): void {
  const check = argv.includes("--check");
  const paths = argv.filter((arg) => arg !== "--check");
  const files = paths.length > 0 ? paths.map((path) => resolve(path)) : readdirSync(REGRESSIONS).filter((name) => name.endsWith(".ndjson")).sort().map((name) => join(REGRESSIONS, name));
  let rewritten = 0;
  for (const path of files) {
    const regression = parseRegression(readFileSync(path, "utf8"));
    const anonymous = anonymize(regression);
    if (anonymous === null) continue;
    const text = formatRegression(anonymous);
    if (formatRegression(parseRegression(text)) !== text) throw new Error(`${basename(path)}: the rewritten file does not read back as written`);
    const name = regressionFileName(anonymous);
    rewritten++;
    console.log(`${basename(path)} -> ${name}${check ? " (check: not written)" : ""}`);
    if (check) continue;
    writeFileSync(join(dirname(path), name), text);
    if (name !== basename(path)) unlinkSync(path);
  }
  console.log(`${rewritten} of ${files.length} file(s) ${check ? "would be " : ""}rewritten`);
}

// Run as a script (by vite-node, or node on a compiled copy), not when a test imports it.
const entry = process.argv[1];
const invoked = entry !== undefined && (resolve(entry) === fileURLToPath(import.meta.url) || /vite-node(\.m?js)?$/.test(basename(entry)));
if (invoked && process.env.VITEST === undefined) main(process.argv.slice(2).filter((arg) => arg !== "--"));

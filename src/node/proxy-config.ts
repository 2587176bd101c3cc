import { readFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { dirname, resolve } from "node:path";
import { ToolwireError } from "../errors.js";
import { findTarget } from "../schema/targets/index.js";
import { SCHEMA_TARGETS } from "../schema/targets/types.js";
import { isProviderName, PROVIDERS } from "../types.js";
import { toolListOf, type TextCallSetting, type TextCallTool } from "../text-calls/options.js";
import { isTextCallSyntaxName, TEXT_CALL_SYNTAX_NAMES, type TextCallSyntaxName } from "../text-calls/syntaxes.js";
import type { ProxyRoute } from "./proxy.js";
import { isPlainObject } from "../json/shape.js";

/**
 * `toolwire proxy --config toolwire.json`: several upstreams from one process, by path prefix.
 *
 * ```json
 * {
 *   "routes": [
 *     { "prefix": "/anthropic", "upstream": "https://api.anthropic.com" },
 *     { "prefix": "/openai", "upstream": "https://api.openai.com", "target": "openai" },
 *     { "prefix": "/vllm", "upstream": "http://127.0.0.1:8000", "provider": "openai-chat", "repairs": { "schemas": false },
 *       "textCalls": "auto", "tools": "tools.json" }
 *   ]
 * }
 * ```
 *
 * Keys of a route: `prefix`, `upstream` (required), `name`, `stripPrefix` (default true),
 * `provider`, `target`, `repairs` (`schemas`, `history`, `responses`, `recovery`: booleans),
 * `textCalls` (`"auto"` or a list of syntax names: read the calls the model wrote into its text)
 * and `tools` (with `textCalls`: a list of tool definitions, or the path of a JSON file of them,
 * relative to the config file; each request's own tools take their place).
 * Unknown keys are errors (a typo must not silently turn a repair back on).
 */
export interface ProxyConfig {
  routes: ProxyRoute[];
}

/** A config file that cannot be used (unreadable, not JSON, or not the shape above): a ToolwireError with code `invalid_proxy_config`. */
function configError(message: string): ToolwireError {
  return new ToolwireError("invalid_proxy_config", message);
}

const ROUTE_KEYS = new Set(["prefix", "upstream", "name", "stripPrefix", "provider", "target", "repairs", "textCalls", "tools"]);
const REPAIR_KEYS = new Set(["schemas", "history", "responses", "recovery"]);


/** Checks a parsed config (see `ProxyConfig`); throws a ToolwireError (`invalid_proxy_config`) naming the first fault and where it is. */
export function parseProxyConfig(value: unknown, source = "the config", baseDir = process.cwd()): ProxyConfig {
  const fail = (where: string, message: string): never => {
    throw configError(`${source}: ${where}: ${message}`);
  };
  if (!isPlainObject(value)) return fail("top level", "must be an object with a `routes` array");
  for (const key of Object.keys(value)) if (key !== "routes") fail(key, "unknown key (known: routes)");
  const routes = value.routes;
  if (!Array.isArray(routes) || routes.length === 0) return fail("routes", "must be a non-empty array");
  const seen = new Set<string>();
  const out: ProxyRoute[] = [];
  routes.forEach((entry: unknown, index) => {
    const where = `routes[${index}]`;
    if (!isPlainObject(entry)) return fail(where, "must be an object");
    for (const key of Object.keys(entry)) if (!ROUTE_KEYS.has(key)) fail(`${where}.${key}`, `unknown key (known: ${[...ROUTE_KEYS].join(", ")})`);
    const { prefix, upstream, name, stripPrefix, provider, target, repairs, textCalls, tools } = entry;
    if (typeof prefix !== "string" || !prefix.startsWith("/") || /[?#\\\s]/.test(prefix) || prefix.split("/").some((segment) => segment === "." || segment === "..")) return fail(`${where}.prefix`, "must be a path such as \"/anthropic\" (\"/\" for every path)");
    const key = prefix.length > 1 && prefix.endsWith("/") ? prefix.slice(0, -1) : prefix;
    if (seen.has(key)) fail(`${where}.prefix`, `'${prefix}' is the prefix of an earlier route too`);
    seen.add(key);
    if (typeof upstream !== "string") return fail(`${where}.upstream`, "is required: the provider's base URL");
    let url: URL | null = null;
    try {
      url = new URL(upstream);
    } catch {
      // reported below
    }
    if (!url || (url.protocol !== "http:" && url.protocol !== "https:")) fail(`${where}.upstream`, `must be an http(s) URL, got '${upstream}'`);
    if (name !== undefined && (typeof name !== "string" || name === "" || name.length > 64)) fail(`${where}.name`, "must be a short string");
    if (stripPrefix !== undefined && typeof stripPrefix !== "boolean") fail(`${where}.stripPrefix`, "must be true or false");
    if (provider !== undefined && (typeof provider !== "string" || !isProviderName(provider))) fail(`${where}.provider`, `must be one of ${PROVIDERS.join(", ")}`);
    if (target !== undefined && (typeof target !== "string" || !findTarget(target))) fail(`${where}.target`, `must be one of ${SCHEMA_TARGETS.join(", ")}`);
    if (repairs !== undefined) {
      if (!isPlainObject(repairs)) fail(`${where}.repairs`, "must be an object of booleans");
      for (const [repair, on] of Object.entries(repairs as Record<string, unknown>)) {
        if (!REPAIR_KEYS.has(repair)) fail(`${where}.repairs.${repair}`, `unknown repair (known: ${[...REPAIR_KEYS].join(", ")})`);
        if (typeof on !== "boolean") fail(`${where}.repairs.${repair}`, "must be true or false");
      }
    }
    const setting = textCalls === undefined ? undefined : textCallSettingOf(textCalls, tools, baseDir, (key, message) => fail(`${where}.${key}`, message));
    if (textCalls === undefined && tools !== undefined) fail(`${where}.tools`, "types the calls read from text: set textCalls too");
    out.push({
      prefix,
      upstream,
      ...(name !== undefined ? { name: name as string } : {}),
      ...(stripPrefix !== undefined ? { stripPrefix: stripPrefix as boolean } : {}),
      ...(provider !== undefined ? { provider: provider as ProxyRoute["provider"] & string } : {}),
      ...(target !== undefined ? { target: target as string } : {}),
      ...(repairs !== undefined ? { repairs: repairs as ProxyRoute["repairs"] } : {}),
      ...(setting !== undefined ? { textCalls: setting } : {}),
    });
  });
  return { routes: out };
}

/**
 * Reads and checks a JSON config file (see `ProxyConfig`): throws a ToolwireError
 * (`invalid_proxy_config`) for a file that cannot be read, is not JSON, or fails `parseProxyConfig`.
 */
export async function loadProxyConfig(path: string): Promise<ProxyConfig> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    throw configError(`cannot read '${path}': ${(error as NodeJS.ErrnoException).code === "ENOENT" ? "no such file" : (error as Error).message}`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw configError(`'${path}' is not JSON: ${(error as Error).message}`);
  }
  return parseProxyConfig(value, `'${path}'`, dirname(path));
}

/** A route's `textCalls` (`"auto"` or syntax names) with its `tools` (a list, or a JSON file's path). */
function textCallSettingOf(textCalls: unknown, tools: unknown, baseDir: string, fail: (key: string, message: string) => never): TextCallSetting {
  const names = TEXT_CALL_SYNTAX_NAMES.join(", ");
  if (textCalls !== "auto" && !(Array.isArray(textCalls) && textCalls.length > 0 && textCalls.every((syntax) => typeof syntax === "string" && isTextCallSyntaxName(syntax)))) {
    return fail("textCalls", `must be "auto" or a list of syntax names (${names})`);
  }
  const syntaxes = textCalls as "auto" | TextCallSyntaxName[];
  if (tools === undefined) return syntaxes;
  let value: unknown = tools;
  if (typeof tools === "string") {
    const path = resolve(baseDir, tools);
    try {
      value = JSON.parse(readFileSync(path, "utf8"));
    } catch (error) {
      return fail("tools", `cannot read '${path}' as JSON: ${(error as NodeJS.ErrnoException).code === "ENOENT" ? "no such file" : (error as Error).message}`);
    }
  }
  const list = toolListOf(value);
  if ("error" in list) return fail("tools", list.error);
  return { syntaxes, tools: list.tools as TextCallTool[] };
}

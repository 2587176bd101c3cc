import { readFile } from "node:fs/promises";
import { resolve } from "node:path";
import { toolListOf, type TextCallSetting, type TextCallTool } from "../text-calls/options.js";
import { isTextCallSyntaxName, TEXT_CALL_SYNTAX_NAMES, type TextCallSyntaxName } from "../text-calls/syntaxes.js";
import { usageError } from "./args.js";
import { CliError, EXIT } from "./context.js";

/** `--text-calls`: undefined when not given, null for `off`. */
export function parseTextCalls(value: string | undefined): TextCallSetting | null | undefined {
  if (value === undefined) return undefined;
  if (value === "off") return null;
  if (value === "auto") return "auto";
  const names = value.split(",").map((name) => name.trim()).filter((name) => name.length > 0);
  const unknown = names.filter((name) => !isTextCallSyntaxName(name));
  if (names.length === 0 || unknown.length > 0) {
    throw new CliError(`unknown text-call syntax '${unknown.join(", ") || value}'. Use auto, off or: ${TEXT_CALL_SYNTAX_NAMES.join(", ")}.`, EXIT.usage);
  }
  return names as TextCallSyntaxName[];
}

/**
 * `--text-calls X [--tools FILE]` of `command` as one setting (undefined when not given, null for
 * `off`): the syntaxes, with the tools of FILE. `--tools` without `--text-calls` is a usage error.
 */
export async function textCallsOption(command: string, flag: string | undefined, toolsPath: string | undefined, cwd: string): Promise<TextCallSetting | null | undefined> {
  const textCalls = parseTextCalls(flag);
  if (toolsPath === undefined) return textCalls;
  if (textCalls === undefined || textCalls === null) throw usageError(command, "--tools types the calls read from text: use it with --text-calls");
  const tools = await loadToolsFile(toolsPath, cwd);
  return { syntaxes: textCalls === "auto" ? "auto" : (textCalls as TextCallSyntaxName[]), tools };
}

/**
 * `--tools FILE`: the tool definitions a model was offered, as a JSON file in any shape
 * sanitizeTools reads (OpenAI chat or Responses, Anthropic, MCP, Bedrock, Gemini, bare
 * declarations): a list of them, or an object with a `tools` list (a request body). Text calls then
 * take the tools' names and type XML and pythonic parameter values by their schemas, as
 * `textCalls.tools` does in the library. A missing or unreadable file is an input error (exit 3); a
 * file that holds no tool list, or a tool without a name, is a usage error (exit 2).
 */
export async function loadToolsFile(path: string, cwd: string, flag = "--tools"): Promise<TextCallTool[]> {
  let text: string;
  try {
    text = await readFile(resolve(cwd, path), "utf8");
  } catch (error) {
    throw new CliError(`${flag} '${path}': cannot read it (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`, EXIT.input);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new CliError(`${flag} '${path}': not JSON (${(error as Error).message})`, EXIT.usage);
  }
  const list = toolListOf(value);
  if ("error" in list) throw new CliError(`${flag} '${path}': ${list.error}`, EXIT.usage);
  return list.tools;
}

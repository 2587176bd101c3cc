import { readFile } from "node:fs/promises";
import { resolve } from "node:path";
import { readTools, type TextCallTool } from "../text-calls/options.js";
import { CliError, EXIT } from "./context.js";

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
  const list = Array.isArray(value) ? value : typeof value === "object" && value !== null && Array.isArray((value as { tools?: unknown }).tools) ? (value as { tools: unknown[] }).tools : null;
  if (list === null) throw new CliError(`${flag} '${path}': expected a JSON list of tool definitions, or an object with a "tools" list`, EXIT.usage);
  list.forEach((tool, index) => {
    if (readTools(tool) === null) throw new CliError(`${flag} '${path}': tools[${index}] is not a tool definition with a name: ${JSON.stringify(tool)?.slice(0, 120)}`, EXIT.usage);
  });
  return list as TextCallTool[];
}

import { describe, expect, it } from "vitest";
import { isToolwireError } from "../../src/errors.js";
import { checkSchema } from "../../src/schema/check.js";
import { sanitizeSchema } from "../../src/schema/sanitize.js";
import { detectToolShape, ToolDefinitionGivenError } from "../../src/schema/tool-shape.js";
import { checkTools, InvalidToolsError, sanitizeTools } from "../../src/schema/tools.js";

// MCP tools carry validation keywords through to the wire: a domain regex, `format: date-time`,
// HF model ids in an enum (hermes-agent#27197, #28490).
const PARAMS = {
  type: "object",
  properties: {
    url: { type: "string", pattern: "^https?://", format: "uri" },
    since: { type: "string", format: "date-time" },
    model: { type: "string", enum: ["Qwen/Qwen3-8B", "meta-llama/Llama-3"] },
    "filter[id]": { type: "string" },
  },
  required: ["url"],
};

const SHAPES = {
  "openai-chat": { type: "function", function: { name: "fetch", description: "Fetch.", parameters: PARAMS, strict: false } },
  "openai-responses": { type: "function", name: "fetch", description: "Fetch.", parameters: PARAMS },
  anthropic: { name: "fetch", description: "Fetch.", input_schema: PARAMS, cache_control: { type: "ephemeral" } },
  mcp: { name: "fetch", description: "Fetch.", inputSchema: PARAMS, annotations: { readOnlyHint: true } },
  bedrock: { toolSpec: { name: "fetch", description: "Fetch.", inputSchema: { json: PARAMS } } },
  gemini: { functionDeclarations: [{ name: "fetch", description: "Fetch.", parameters: PARAMS }, { name: "noop", description: "No arguments." }] },
  function: { name: "fetch", description: "Fetch.", parameters: PARAMS },
} as const;

/** The value at a path of keys and indexes. */
function at(value: unknown, ...path: Array<string | number>): Record<string, unknown> {
  let current = value;
  for (const key of path) current = (current as Record<string | number, unknown>)[key];
  return current as Record<string, unknown>;
}

function schemaIn(tool: unknown, shape: keyof typeof SHAPES): Record<string, unknown> {
  switch (shape) {
    case "openai-chat":
      return at(tool, "function", "parameters");
    case "anthropic":
      return at(tool, "input_schema");
    case "mcp":
      return at(tool, "inputSchema");
    case "bedrock":
      return at(tool, "toolSpec", "inputSchema", "json");
    case "gemini":
      return at(tool, "functionDeclarations", 0, "parameters");
    default:
      return at(tool, "parameters");
  }
}

describe("detectToolShape", () => {
  it.each(Object.entries(SHAPES))("recognizes %s", (shape, tool) => {
    expect(detectToolShape(tool)).toBe(shape);
  });

  it("never takes a schema for a tool", () => {
    expect(detectToolShape(PARAMS)).toBeNull();
    expect(detectToolShape({ type: "object", properties: { name: { type: "string" }, parameters: {} } })).toBeNull();
    expect(detectToolShape({ properties: {}, name: "x", parameters: {} })).toBeNull();
    expect(detectToolShape({ type: "web_search" })).toBeNull();
    expect(detectToolShape("fetch")).toBeNull();
  });
});

describe("sanitizeTools", () => {
  it.each(Object.keys(SHAPES) as Array<keyof typeof SHAPES>)("xai, %s shape: pattern, every format and slash enums leave the schema; the tool keeps its shape", (shape) => {
    const tool = SHAPES[shape];
    const before = JSON.stringify(tool);
    const result = sanitizeTools([tool], "xai");
    expect(JSON.stringify(tool)).toBe(before);
    const out = result.tools[0] as Record<string, unknown>;
    const schema = schemaIn(out, shape);
    const text = JSON.stringify(schema);
    expect(text).not.toContain('"pattern"');
    expect(text).not.toContain('"format"');
    expect(text).not.toContain('"enum"');
    expect(at(schema, "properties", "model")).toEqual({ type: "string", description: "(one of: Qwen/Qwen3-8B, meta-llama/Llama-3)" });
    expect(checkSchema(schema, "xai")).toEqual([]);
    // Everything around the schema is as it came.
    expect({ ...out, ...strip(shape) }).toEqual({ ...(tool as object), ...strip(shape) });
    expect(result.entries[0]).toMatchObject({ index: 0, name: "fetch", shape });
    expect(result.changes.every((c) => c.tool === "fetch")).toBe(true);
  });

  it("gemini: every declaration with parameters, declarations without them untouched; paths point into the input", () => {
    const result = sanitizeTools([SHAPES.gemini], "gemini");
    expect(result.entries.map((e) => [e.name, e.declaration, e.path])).toEqual([["fetch", 0, "#/0/functionDeclarations/0/parameters"]]);
    expect(at(result.tools[0], "functionDeclarations", 1)).toBe(SHAPES.gemini.functionDeclarations[1]);
    expect(Object.keys(at(result.tools[0], "functionDeclarations", 0, "parameters", "properties"))).toContain("filter_id_");
    expect(result.restoreArguments("fetch", { url: "https://x", filter_id_: "7" })).toEqual({ url: "https://x", "filter[id]": "7" });
    expect(result.argumentMap("nope")).toBeUndefined();
    expect(result.restoreArguments("nope", { a: 1 })).toEqual({ a: 1 });
  });

  it("gemini parametersJsonSchema takes JSON Schema: sanitized with the openai rules, not Gemini's OpenAPI dialect", () => {
    const tool = { functionDeclarations: [{ name: "find", parametersJsonSchema: { type: "object", properties: { q: { anyOf: [{ type: "string" }, { type: "null" }] } } } }] };
    const result = sanitizeTools([tool], "gemini");
    expect(result.entries[0]).toMatchObject({ path: "#/0/functionDeclarations/0/parametersJsonSchema" });
    expect(result.entries[0]!.result.target).toBe("openai");
    expect(at(result.tools[0], "functionDeclarations", 0, "parametersJsonSchema", "properties", "q")).toEqual({ anyOf: [{ type: "string" }, { type: "null" }] });
  });

  it("a mixed list: provider built-ins and schema-less tools pass through and are listed as skipped", () => {
    const builtins = [{ type: "web_search_20250305", name: "web_search", max_uses: 3 }, { googleSearch: {} }, { type: "function", function: { name: "ping" } }];
    const result = sanitizeTools([...builtins, SHAPES.anthropic], "anthropic");
    expect(result.tools.slice(0, 3)).toEqual(builtins);
    expect(result.skipped.map((s) => s.index)).toEqual([0, 1, 2]);
    expect(result.entries.map((e) => e.index)).toEqual([3]);
    expect(result.problems).toEqual([]);
  });

  it("refuses what is not a list of tool objects with a typed error", () => {
    expect(() => sanitizeTools(SHAPES.mcp as never, "openai")).toThrow(InvalidToolsError);
    expect(() => sanitizeTools(SHAPES.mcp as never, "openai")).toThrow("one tool: pass [tool]");
    expect(() => sanitizeTools({ tools: [] } as never, "openai")).toThrow("pass body.tools");
    expect(() => sanitizeTools([null], "openai")).toThrow("tools[0] is null");
  });

  it("checkTools reports per schema, like checkSchema", () => {
    const checked = checkTools([SHAPES["openai-responses"], SHAPES.bedrock], "xai");
    expect(checked.map((c) => [c.name, c.shape, c.path])).toEqual([
      ["fetch", "openai-responses", "#/0/parameters"],
      ["fetch", "bedrock", "#/1/toolSpec/inputSchema/json"],
    ]);
    expect(checked[0]!.problems.map((p) => p.rule)).toEqual(expect.arrayContaining(["xai-keywords", "slash-enum"]));
  });
});

describe("sanitizeSchema / checkSchema given a whole tool definition", () => {
  it.each(Object.entries(SHAPES))("%s: refuses with a typed error pointing to sanitizeTools", (shape, tool) => {
    let thrown: unknown;
    try {
      sanitizeSchema(tool, "anthropic");
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(ToolDefinitionGivenError);
    expect(isToolwireError(thrown)).toBe(true);
    expect(thrown).toMatchObject({ code: "schema_is_tool_definition", shape });
    expect((thrown as Error).message).toContain("use sanitizeTools([tool], target)");
    expect(() => checkSchema(tool, "gemini")).toThrow(ToolDefinitionGivenError);
  });
});

function strip(shape: keyof typeof SHAPES): Record<string, unknown> {
  // Placeholders for the keys that hold the schema, so the rest of the tool can be compared.
  switch (shape) {
    case "openai-chat":
      return { function: null };
    case "anthropic":
      return { input_schema: null };
    case "mcp":
      return { inputSchema: null };
    case "bedrock":
      return { toolSpec: null };
    case "gemini":
      return { functionDeclarations: null };
    default:
      return { parameters: null };
  }
}

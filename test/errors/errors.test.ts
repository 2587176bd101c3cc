import { describe, expect, it } from "vitest";
import { ToolwireError, isToolwireError } from "../../src/errors.js";
import * as root from "../../src/index.js";
import * as fetchEntry from "../../src/fetch/index.js";
import * as guard from "../../src/guard/index.js";
import * as history from "../../src/history/index.js";
import * as node from "../../src/node/index.js";
import * as schema from "../../src/schema/index.js";
import * as testing from "../../src/testing/index.js";
import { base64ToBytes, encodeEventStreamMessage } from "../../src/framing/aws-eventstream.js";
import { ImportError } from "../../src/import/errors.js";
import { importFile } from "../../src/import/index.js";
import { stableStringify } from "../../src/schema/json-schema.js";
import { compileSchema } from "../../src/schema/compile.js";
import { compilePattern } from "../../src/schema/regex.js";
import { loadReplayStreams } from "../../src/node/replay-server.js";
import { CliError, EXIT } from "../../src/cli/context.js";

/** Runs `fn` and returns what it threw (sync or async). */
async function thrown(fn: () => unknown): Promise<unknown> {
  try {
    await fn();
  } catch (error) {
    return error;
  }
  throw new Error("expected a throw");
}

function expectToolwireError(error: unknown, code: string): void {
  expect(isToolwireError(error), String(error)).toBe(true);
  expect(error).toBeInstanceOf(ToolwireError);
  expect((error as ToolwireError).code).toBe(code);
  expect((error as ToolwireError).message.length).toBeGreaterThan(0);
}

/** Each public error class, made the way the library makes it: through a real throw path. */
const THROW_PATHS: Record<string, () => unknown> = {
  ToolwireError: () => {
    throw new ToolwireError("example", "an example");
  },
  UnsupportedProviderError: () => root.createDecoder("cohere" as root.ProviderName),
  ProviderDetectionError: () => root.detectProvider([{ data: { hello: "world" } }]),
  RecordFormatError: () => root.parseRecords("{not json"),
  EventStreamError: () => encodeEventStreamMessage({ "": "empty name" }, "{}"),
  UnknownTargetError: () => schema.sanitizeSchema({ type: "object" }, "no-such-target" as schema.SchemaTarget),
  InvalidToolsError: () => schema.sanitizeTools("not a list" as unknown as unknown[], "openai"),
  ToolDefinitionGivenError: () => schema.sanitizeSchema({ type: "function", function: { name: "add", parameters: { type: "object" } } }, "openai"),
  SchemaCompileError: () => compileSchema({ type: "object", properties: { a: { type: 12 } } } as unknown as schema.Schema),
  ReplayLoadError: () => loadReplayStreams(["/no/such/toolwire/recordings"]),
  RegressionFormatError: () => testing.parseRegression("not a regression file"),
  TextCallOptionsError: () => root.createDecoder("openai-chat", { textCalls: ["no-such-syntax"] as unknown as root.DecoderOptions["textCalls"] }),
  UnsupportedPatternError: () => compilePattern("(a)\\1"),
  TooDeepError: () => schema.checkSchema(JSON.parse(`${"[".repeat(300)}${"]".repeat(300)}`) as unknown, "openai"),
};

const ENTRIES = { root, fetch: fetchEntry, guard, history, node, schema, testing };

type ErrorClass = abstract new (...args: never[]) => Error;

function errorClasses(): Array<[string, string, ErrorClass]> {
  const found: Array<[string, string, ErrorClass]> = [];
  for (const [entry, exports] of Object.entries(ENTRIES)) {
    for (const [name, value] of Object.entries(exports)) {
      if (typeof value === "function" && (value === Error || value.prototype instanceof Error)) found.push([entry, name, value as ErrorClass]);
    }
  }
  return found;
}

describe("one error base class", () => {
  it("the root exports ToolwireError and isToolwireError", () => {
    expect(root.ToolwireError).toBe(ToolwireError);
    expect(root.isToolwireError).toBe(isToolwireError);
  });

  it("finds the error classes of every entry point", () => {
    expect(errorClasses().map(([, name]) => name)).toEqual(expect.arrayContaining(["ToolwireError", "UnsupportedProviderError", "UnknownTargetError", "ReplayLoadError", "RegressionFormatError"]));
  });

  it.each(errorClasses())("%s exports %s: a ToolwireError with a snake_case code, thrown by a real path", async (_entry, name, cls) => {
    expect(cls === ToolwireError || cls.prototype instanceof ToolwireError, `${name} must extend ToolwireError`).toBe(true);
    const path = THROW_PATHS[name];
    expect(path, `add a throw path for ${name} to THROW_PATHS`).toBeDefined();
    const error = await thrown(path as () => unknown);
    expect(error).toBeInstanceOf(cls);
    expect(isToolwireError(error)).toBe(true);
    expect((error as Error).name).toBe(name);
    expect((error as ToolwireError).code).toMatch(/^[a-z][a-z0-9]*(_[a-z0-9]+)*$/);
  });

  it("isToolwireError recognizes an error from another copy of the package by its brand", () => {
    const foreign = Object.assign(new Error("from another copy"), { code: "x" });
    expect(isToolwireError(foreign)).toBe(false);
    Object.defineProperty(foreign, Symbol.for("toolwire.error"), { value: true });
    expect(isToolwireError(foreign)).toBe(true);
    expect(isToolwireError(null)).toBe(false);
    expect(isToolwireError("toolwire")).toBe(false);
  });

  it("keeps the cause of a wrapped error", async () => {
    const error = await thrown(THROW_PATHS.SchemaCompileError as () => unknown);
    expect((error as Error).cause).toBeInstanceOf(Error);
  });
});

describe("the codes of each throw path", () => {
  it("provider detection: none recognized vs several matching", async () => {
    expectToolwireError(await thrown(() => root.detectProvider([])), "provider_not_recognized");
    const ambiguous = await thrown(() =>
      root.detectProvider([
        { event: "message_start", data: { type: "message_start", message: { id: "msg_1", type: "message", role: "assistant", content: [] } } },
        { data: { id: "chatcmpl-1", object: "chat.completion.chunk", choices: [{ index: 0, delta: { content: "hi" } }] } },
      ]),
    );
    expectToolwireError(ambiguous, "provider_ambiguous");
    expect((ambiguous as root.ProviderDetectionError).candidates.length).toBeGreaterThan(1);
  });

  it("event-stream headers that cannot be encoded", async () => {
    expectToolwireError(await thrown(() => encodeEventStreamMessage({ ["x".repeat(256)]: "long name" }, "{}")), "invalid_header");
    expectToolwireError(await thrown(() => encodeEventStreamMessage({ h: "v".repeat(70_000) }, "{}")), "invalid_header");
    expectToolwireError(await thrown(() => encodeEventStreamMessage({ id: { type: "uuid", value: "not-a-uuid" } }, "{}")), "invalid_header");
  });

  it("base64 that is not base64", async () => {
    expectToolwireError(await thrown(() => base64ToBytes("not base64!")), "invalid_base64");
    expect([...base64ToBytes("AQI=")]).toEqual([1, 2]);
  });

  it("a cyclic value cannot be serialized stably", async () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expectToolwireError(await thrown(() => stableStringify(cyclic)), "cyclic_value");
  });

  it("decodeStream: a source of the wrong kind, items of the wrong kind, or mixed items", async () => {
    const drain = async (source: unknown): Promise<void> => {
      for await (const _ of root.decodeStream("openai-chat", source as root.StreamSource)) void _;
    };
    expectToolwireError(await thrown(() => drain(42)), "invalid_source");
    async function* nulls(): AsyncGenerator<unknown> {
      yield null;
    }
    expectToolwireError(await thrown(() => drain(nulls())), "invalid_source");
    async function* mixed(): AsyncGenerator<unknown> {
      yield "data: {}\n\n";
      yield { id: "chatcmpl-1", choices: [] };
    }
    expectToolwireError(await thrown(() => drain(mixed())), "mixed_source");
    async function* mixedTheOtherWay(): AsyncGenerator<unknown> {
      yield { id: "chatcmpl-1", choices: [] };
      yield new TextEncoder().encode("data: {}\n\n");
    }
    expectToolwireError(await thrown(() => drain(mixedTheOtherWay())), "mixed_source");
  });

  it("the reasons a source is cancelled with: stalled, past its deadline, or no longer read", async () => {
    const reasons: unknown[] = [];
    const silent = (): ReadableStream<Uint8Array> => new ReadableStream({ cancel: (reason) => void reasons.push(reason) });
    await root.collectTurn("openai-chat", silent(), { idleTimeoutMs: 20 });
    await root.collectTurn("openai-chat", silent(), { deadlineMs: 20 });
    const chatty = new ReadableStream<Uint8Array>({
      pull: (controller) => controller.enqueue(new TextEncoder().encode('data: {"id":"c","choices":[{"index":0,"delta":{"content":"hi"}}]}\n\n')),
      cancel: (reason) => void reasons.push(reason),
    });
    for await (const event of root.decodeStream("openai-chat", chatty)) if (event.type === "text_delta") break;
    expect(reasons).toHaveLength(3);
    expectToolwireError(reasons[0], "idle_timeout");
    expectToolwireError(reasons[1], "deadline_exceeded");
    expectToolwireError(reasons[2], "consumer_stopped");
  });

  it("importing with a provider name that does not exist", async () => {
    const error = await thrown(() => importFile("x.sse", new TextEncoder().encode("data: {}\n\n"), { provider: "cohere" as root.ProviderName }));
    expectToolwireError(error, "unsupported_provider");
    expect(error).toBeInstanceOf(root.UnsupportedProviderError);
  });

  it("ImportError and CliError carry their codes", async () => {
    const imported = await thrown(() => importFile("x.bin", new Uint8Array([0, 1, 2, 3, 255])));
    expect(imported).toBeInstanceOf(ImportError);
    expectToolwireError(imported, "unrecognized_format");
    expectToolwireError(new CliError("bad flag"), "usage_error");
    expectToolwireError(new CliError("unreadable", EXIT.input), "input_error");
  });
});

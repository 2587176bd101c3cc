import Anthropic from "@anthropic-ai/sdk";
import { mkdtempSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startProxyCommand } from "../../src/cli/commands/proxy.js";
import { startServe } from "../../src/cli/commands/serve.js";
import type { CliContext } from "../../src/cli/context.js";
import { isToolwireError } from "../../src/errors.js";
import { parseProxyConfig } from "../../src/node/proxy-config.js";
import { anthropicTextBody, chatTextBody, decodeBytes, TEXT_CALL_TOOLS } from "../reencode/support.js";
import { cli } from "./support.js";

/**
 * `--text-calls` and `--tools` of `toolwire proxy` and `toolwire serve`, and the routes' `textCalls`
 * and `tools` in a proxy config: usage and input errors, and each flag end to end over loopback.
 */

const QWEN_XML = "Sure.<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n<parameter=days>\n3\n</parameter>\n</function>\n</tool_call>";
const dir = mkdtempSync(join(tmpdir(), "toolwire-text-calls-flags-"));
writeFileSync(join(dir, "tools.json"), JSON.stringify({ tools: TEXT_CALL_TOOLS }));
writeFileSync(join(dir, "not-tools.json"), JSON.stringify({ name: 1 }));

function context(): CliContext {
  return { out: () => {}, err: () => {}, cwd: dir };
}

let upstream: Server;
let upstreamUrl: string;
beforeAll(async () => {
  upstream = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.end(chatTextBody([QWEN_XML.slice(0, 20), QWEN_XML.slice(20)]));
    });
  });
  await new Promise<void>((resolve) => upstream.listen(0, "127.0.0.1", resolve));
  upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise<void>((resolve) => (upstream ? upstream.close(() => resolve()) : resolve()));
});

describe("--text-calls and --tools: errors", () => {
  it.each([
    [["proxy", "--upstream", "http://127.0.0.1:9", "--tools", "tools.json"], 2, /--tools types the calls read from text: use it with --text-calls/],
    [["proxy", "--upstream", "http://127.0.0.1:9", "--text-calls", "hermes,nope"], 2, /unknown text-call syntax 'nope'/],
    [["proxy", "--upstream", "http://127.0.0.1:9", "--text-calls", "auto", "--tools", "missing.json"], 3, /--tools 'missing.json': cannot read it \(ENOENT\)/],
    [["proxy", "--upstream", "http://127.0.0.1:9", "--text-calls", "auto", "--tools", "not-tools.json"], 2, /expected a JSON list of tool definitions/],
    [["serve", "tools.json", "--tools", "tools.json"], 2, /use it with --text-calls/],
    [["serve", "tools.json", "--text-calls", "nope"], 2, /unknown text-call syntax/],
  ])("%j exits %i", async (args, code, message) => {
    const run = await cli(args, { cwd: dir });
    expect(run.err).toMatch(message);
    expect(run.code).toBe(code);
  });

  it("the usages name both flags", async () => {
    for (const command of ["proxy", "serve"]) {
      const { out } = await cli([command, "--help"]);
      expect(out).toContain("--text-calls X");
      expect(out).toContain("--tools FILE");
    }
  });

  it.each([
    [{ textCalls: "everything" }, /routes\[0\]\.textCalls: must be "auto" or a list of syntax names/],
    [{ textCalls: [] }, /routes\[0\]\.textCalls/],
    [{ tools: [] }, /routes\[0\]\.tools: types the calls read from text: set textCalls too/],
    [{ textCalls: "auto", tools: "nowhere.json" }, /routes\[0\]\.tools: cannot read '.*nowhere\.json' as JSON: no such file/],
    [{ textCalls: "auto", tools: [{ description: "no name" }] }, /routes\[0\]\.tools: tools\[0\] is not a tool definition with a name/],
  ])("a route with %j is refused", (extra, message) => {
    let thrown: unknown;
    try {
      parseProxyConfig({ routes: [{ prefix: "/vllm", upstream: "http://127.0.0.1:8000", ...extra }] }, "the config", dir);
    } catch (error) {
      thrown = error;
    }
    expect(isToolwireError(thrown) && thrown.code).toBe("invalid_proxy_config");
    expect((thrown as Error).message).toMatch(message);
  });

  it("a route's tools may be inline or a file beside the config", () => {
    const config = parseProxyConfig({ routes: [{ prefix: "/a", upstream: "http://127.0.0.1:1", textCalls: "auto", tools: "tools.json" }, { prefix: "/b", upstream: "http://127.0.0.1:2", textCalls: ["hermes"], tools: TEXT_CALL_TOOLS }, { prefix: "/c", upstream: "http://127.0.0.1:3", textCalls: "auto" }] }, "the config", dir);
    expect(config.routes.map((route) => route.textCalls)).toEqual([{ syntaxes: "auto", tools: TEXT_CALL_TOOLS }, { syntaxes: ["hermes"], tools: TEXT_CALL_TOOLS }, "auto"]);
  });
});

describe("--text-calls and --tools end to end", () => {
  it("proxy --text-calls auto --tools FILE: the openai SDK gets the call typed by the file", async () => {
    const proxy = await startProxyCommand(["--upstream", upstreamUrl, "--text-calls", "auto", "--tools", "tools.json"], context());
    try {
      const client = new OpenAI({ apiKey: "sk-test", baseURL: `${proxy.url}/v1`, maxRetries: 0 });
      const completion = await client.chat.completions.stream({ model: "qwen", messages: [{ role: "user", content: "weather?" }] }).finalChatCompletion();
      const call = completion.choices[0]?.message.tool_calls?.[0];
      expect(completion.choices[0]?.message.content).toBe("Sure.");
      expect(call?.type === "function" ? JSON.parse(call.function.arguments) : null).toEqual({ city: "Paris", days: 3 });
      expect(completion.choices[0]?.finish_reason).toBe("tool_calls");
    } finally {
      await proxy.close();
    }
  });

  it("proxy --config: a route's textCalls and tools file", async () => {
    writeFileSync(join(dir, "routes.json"), JSON.stringify({ routes: [{ prefix: "/vllm", upstream: upstreamUrl, textCalls: ["qwen3-coder"], tools: "tools.json" }] }));
    const proxy = await startProxyCommand(["--config", "routes.json"], context());
    try {
      const response = await fetch(`${proxy.url}/vllm/v1/chat/completions`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model: "qwen", stream: true, messages: [] }) });
      const turn = decodeBytes("openai-chat", new Uint8Array(await response.arrayBuffer()));
      expect(turn.toolCalls.map((call) => call.arguments)).toEqual([{ city: "Paris", days: 3 }]);
    } finally {
      await proxy.close();
    }
  });

  it("serve --text-calls auto --tools FILE: streamed and whole responses carry the call", async () => {
    const events = new TextDecoder()
      .decode(new TextEncoder().encode(chatTextBody([QWEN_XML.slice(0, 30), QWEN_XML.slice(30)])))
      .split("\n\n")
      .filter((block) => block.startsWith("data: "))
      .map((block) => block.slice(6));
    writeFileSync(join(dir, "qwen.ndjson"), events.map((data) => JSON.stringify({ provider: "openai-chat", sequence: "qwen-xml", data: data === "[DONE]" ? data : JSON.parse(data) })).join("\n") + "\n");
    const server = await startServe(["qwen.ndjson", "--text-calls", "auto", "--tools", "tools.json"], context());
    try {
      const client = new OpenAI({ apiKey: "sk-test", baseURL: `${server.url}/v1`, maxRetries: 0 });
      const streamed = await client.chat.completions.stream({ model: "qwen", messages: [{ role: "user", content: "weather?" }] }).finalChatCompletion();
      const call = streamed.choices[0]?.message.tool_calls?.[0];
      expect(call?.type === "function" ? JSON.parse(call.function.arguments) : null).toEqual({ city: "Paris", days: 3 });
      expect(streamed.choices[0]?.message.content).toBe("Sure.");
      const whole = await client.chat.completions.create({ model: "qwen", messages: [{ role: "user", content: "weather?" }] });
      const wholeCall = whole.choices[0]?.message.tool_calls?.[0];
      expect(wholeCall?.type === "function" ? JSON.parse(wholeCall.function.arguments) : null).toEqual({ city: "Paris", days: 3 });
      expect(whole.choices[0]?.message.content).toBe("Sure.");
      expect(whole.choices[0]?.finish_reason).toBe("tool_calls");
    } finally {
      await server.close();
    }
  });

  it("serve --text-calls auto: an Ollama recording's call arrives in message.tool_calls", async () => {
    const pieces = [QWEN_XML.slice(0, 25), QWEN_XML.slice(25)];
    const records = [...pieces.map((content) => ({ model: "qwen3", message: { role: "assistant", content }, done: false })), { model: "qwen3", message: { role: "assistant", content: "" }, done: true, done_reason: "stop" }];
    writeFileSync(join(dir, "ollama.ndjson"), records.map((data) => JSON.stringify({ provider: "ollama", sequence: "ollama-xml", data })).join("\n") + "\n");
    const server = await startServe(["ollama.ndjson", "--text-calls", "auto", "--tools", "tools.json"], context());
    try {
      const response = await fetch(`${server.url}/api/chat`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model: "qwen3", messages: [] }) });
      const turn = decodeBytes("ollama", new Uint8Array(await response.arrayBuffer()));
      expect(turn.text).toBe("Sure.");
      expect(turn.toolCalls.map((call) => call.arguments)).toEqual([{ city: "Paris", days: 3 }]);
    } finally {
      await server.close();
    }
  });

  it("serve --text-calls auto: an Anthropic Messages recording's call arrives as a tool_use block, streamed and whole", async () => {
    const events = anthropicTextBody([QWEN_XML.slice(0, 30), QWEN_XML.slice(30)])
      .split("\n\n")
      .filter((block) => block.includes("data: "))
      .map((block) => JSON.parse(block.slice(block.indexOf("data: ") + 6)) as Record<string, unknown>);
    writeFileSync(join(dir, "messages.ndjson"), events.map((data) => JSON.stringify({ provider: "anthropic", sequence: "messages-xml", event: data.type, data })).join("\n") + "\n");
    const server = await startServe(["messages.ndjson", "--text-calls", "auto", "--tools", "tools.json"], context());
    try {
      const client = new Anthropic({ apiKey: "sk-ant-test", baseURL: server.url, maxRetries: 0 });
      const request = { model: "qwen", max_tokens: 100, messages: [{ role: "user" as const, content: "weather?" }] };
      for (const message of [await client.messages.stream(request).finalMessage(), await client.messages.create(request)]) {
        expect(message.content.map((block) => (block.type === "tool_use" ? [block.name, block.input] : block.type === "text" ? block.text : block.type))).toEqual(["Sure.", ["get_weather", { city: "Paris", days: 3 }]]);
        expect(message.stop_reason).toBe("tool_use");
      }
    } finally {
      await server.close();
    }
  });
});

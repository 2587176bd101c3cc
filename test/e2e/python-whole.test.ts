import { execFile } from "node:child_process";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startProxy, type ProxyServer } from "../../src/node/proxy.js";
import { repairWholeResponse } from "../../src/reencode/whole.js";
import type { ProviderName } from "../../src/types.js";
import { anthropicDuplicateIds, chatCompletion, runnable } from "../reencode/whole-support.js";
import { findPython } from "./python.js";

/**
 * The agents non-streamed repair is for: a Python client that posts with `stream` off and reads
 * the JSON as it comes (standard library only), through `toolwire proxy` in front of an upstream
 * answering with quirky whole bodies of four protocols. It runs when python3 exists.
 */

const run = promisify(execFile);

const PYTHON = await findPython();

const BODIES: Record<string, { provider: ProviderName; body: Record<string, unknown> }> = {
  "/v1/chat/completions": {
    provider: "openai-chat",
    body: chatCompletion("chatcmpl-py", [
      ["call_0", "search", "{'q': 'python', 'exact': True}"],
      ["call_0", "open", '{"url": "https://example.com"}{"url": "https://example.org"}'],
      ["call_2", "write", '{"path": '],
    ]),
  },
  "/v1/messages": {
    provider: "anthropic",
    body: anthropicDuplicateIds("msg_py"),
  },
  "/v1beta/models/gemini-2.5-flash:generateContent": {
    provider: "gemini",
    body: { candidates: [{ content: { role: "model", parts: [{ functionCall: { name: "add", args: { a: 2, b: 3 } }, thoughtSignature: "c2ln" }, { functionCall: { name: "multiply", args: '{"a": 2, "b": 3}' } }] }, finishReason: "STOP" }], responseId: "r-py" },
  },
  "/api/chat": {
    provider: "ollama",
    body: { model: "qwen3:8b", created_at: "2025-06-23T11:09:03Z", message: { role: "assistant", content: "", tool_calls: [{ function: { name: "getTime", arguments: {} } }] }, done: true, done_reason: "stop" },
  },
};

/** Posts `stream: false` to each path and prints the calls of the JSON as a naive client reads it. */
const CLIENT = String.raw`
import json, sys, urllib.request
base = sys.argv[1]
for path in sys.argv[2:]:
    request = urllib.request.Request(base + path, data=json.dumps({"model": "m", "stream": False, "messages": []}).encode(), headers={"content-type": "application/json", "authorization": "Bearer sk-py-secret"})
    with urllib.request.urlopen(request) as response:
        body = json.loads(response.read())
        repairs = response.headers.get("x-toolwire-repairs")
    if "choices" in body:
        calls = [{"id": c["id"], "name": c["function"]["name"], "arguments": json.loads(c["function"]["arguments"])} for c in body["choices"][0]["message"].get("tool_calls") or []]
    elif "content" in body:
        calls = [{"id": b["id"], "name": b["name"], "arguments": b["input"]} for b in body["content"] if b["type"] == "tool_use"]
    elif "candidates" in body:
        calls = [{"id": p["functionCall"].get("id"), "name": p["functionCall"]["name"], "arguments": p["functionCall"]["args"]} for p in body["candidates"][0]["content"]["parts"] if "functionCall" in p]
    else:
        calls = [{"id": c.get("id"), "name": c["function"]["name"], "arguments": c["function"]["arguments"]} for c in body["message"].get("tool_calls") or []]
    print(json.dumps({"path": path, "calls": calls, "repairs": repairs}))
`;

let upstream: Server;
let proxy: ProxyServer;

beforeAll(async () => {
  if (!PYTHON) return;
  upstream = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      const found = BODIES[req.url ?? ""];
      res.writeHead(found ? 200 : 404, { "content-type": "application/json" });
      res.end(JSON.stringify(found?.body ?? { error: "not found" }));
    });
  });
  await new Promise<void>((resolve) => upstream.listen(0, "127.0.0.1", resolve));
  proxy = await startProxy({ upstream: `http://127.0.0.1:${(upstream.address() as AddressInfo).port}` });
});

afterAll(async () => {
  await proxy?.close();
  upstream?.closeAllConnections();
  await new Promise((resolve) => (upstream ? upstream.close(resolve) : resolve(undefined)));
});

describe.skipIf(!PYTHON)("a plain Python client, stream off, through toolwire proxy", () => {
  it("reads exactly the calls toolwire decodes, in the JSON it parses itself, with the repair codes in the header", async () => {
    const paths = Object.keys(BODIES);
    const { stdout } = await run(PYTHON as string, ["-c", CLIENT, proxy.url, ...paths], { timeout: 60_000 });
    const lines = stdout
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as { path: string; calls: Array<{ id: string | null; name: string; arguments: unknown }>; repairs: string | null });
    expect(lines.map((line) => line.path)).toEqual(paths);
    for (const line of lines) {
      const { provider, body } = BODIES[line.path] as { provider: ProviderName; body: Record<string, unknown> };
      const decoded = repairWholeResponse(provider, body);
      expect(line.calls, line.path).toEqual(runnable(decoded.turn));
      expect(line.repairs, line.path).toBeTruthy();
    }
  });
});

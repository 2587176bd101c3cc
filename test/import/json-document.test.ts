import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { run } from "../../src/cli/commands/import.js";
import { CliError, EXIT, type CliContext } from "../../src/cli/context.js";
import { detectFormat, importFile } from "../../src/import/index.js";
import { replayEvents } from "../../src/replay.js";
import { importError } from "./corpus.js";

/** Text that opens with '{': one JSON document (a container, known or not) or JSON per line. */

const utf8 = (text: string): Uint8Array => new TextEncoder().encode(text);

describe("JSON documents of no known container", () => {
  it("a pretty-printed object is named as an unknown container, with what was expected and its keys", () => {
    const error = importError("trace.json", utf8(JSON.stringify({ spans: [], meta: { v: 1 } }, null, 2)));
    expect(error.code).toBe("unrecognized_format");
    expect(error.message).toBe(
      'trace.json: a JSON document of an unknown container format: expected a HAR 1.2 file ({log: {entries}}), a ddapm-test-agent cassette ({request, response: {status, headers, body}}), a Google GenAI SDK replay ({recordID or replay_id, interactions[].response.bodySegments}) or a VCR.py JSON cassette ({interactions[].response.body.string}); its top-level keys are "spans", "meta"',
    );
    expect(detectFormat("trace.json", utf8(JSON.stringify({ a: 1 }, null, 1)))).toBe("json-document");
  });

  it("lists at most eight keys", () => {
    const doc = Object.fromEntries(Array.from({ length: 11 }, (_, i) => [`k${i}`, i]));
    expect(importError("x.json", utf8(JSON.stringify(doc, null, 2))).message).toMatch(/its top-level keys are "k0", "k1", "k2", "k3", "k4", "k5", "k6", "k7" and 3 more$/);
  });

  it("text that is neither JSON per line nor one JSON document says both, as malformed", () => {
    const error = importError("broken.json", utf8('{\n  "a": [1, 2\n}\n'));
    expect(error.code).toBe("malformed");
    expect(error.message).toMatch(/^broken\.json: neither JSON per line \(the first line, "\{", is not a complete JSON value\) nor one JSON document \(.+\)$/);
  });

  it("an object alone on one line is still JSON per line (a one-event stream), as before", () => {
    expect(detectFormat("one.json", utf8('{"model":"m","done":true}\n'))).toBe("json-lines");
    expect(importFile("one.json", utf8('{"model":"m","done":true}')).streams[0]?.events).toEqual([{ data: { model: "m", done: true } }]);
  });

  it("JSON per line is never taken for a JSON document (property)", () => {
    // Keys of the known containers excluded: a one-line HAR or replay is that container, by design.
    const containerKeys = ["log", "request", "response", "interactions", "recordID", "replay_id"];
    const key = fc.string({ maxLength: 6 }).filter((k) => !containerKeys.includes(k));
    const line = fc.dictionary(key, fc.jsonValue({ maxDepth: 2 }), { maxKeys: 4 });
    fc.assert(
      fc.property(fc.array(line, { minLength: 1, maxLength: 6 }), (objects) => {
        const text = objects.map((object) => JSON.stringify(object)).join("\n") + "\n";
        expect(["json-lines", "records"]).toContain(detectFormat("x.txt", utf8(text)));
      }),
    );
  });

  it("a VCR.py cassette serialized as JSON is read like the YAML one", () => {
    const sse =
      'data: {"id":"c","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"lookup","arguments":"{\\"q\\":\\"kiwi\\"}"}}]},"finish_reason":null}]}\n\n' +
      'data: {"id":"c","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}\n\n';
    const doc = {
      version: 1,
      interactions: [
        {
          request: { method: "POST", uri: "https://api.example.test/v1/chat/completions", body: "{}", headers: {} },
          response: { status: { code: 200, message: "OK" }, headers: { "Content-Type": ["text/event-stream"] }, body: { string: sse } },
        },
      ],
    };
    const result = importFile("cassette.json", utf8(JSON.stringify(doc, null, 2)));
    expect(result.format).toBe("vcr.py");
    expect(result.notes[0]).toBe("vcr.py cassette serialized as JSON");
    expect(replayEvents(result.streams[0]!).toolCalls.map((call) => [call.name, call.arguments])).toEqual([["lookup", { q: "kiwi" }]]);
  });
});

describe("toolwire import on a JSON document of no known container", () => {
  const dir = mkdtempSync(join(tmpdir(), "toolwire-json-doc-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "x", version: "1.0.0" }, null, 2));

  it("exits 3 naming the document's kind, not a JSON-per-line line", async () => {
    const ctx: CliContext = { cwd: dir, out: () => undefined, err: () => undefined };
    let caught: unknown = null;
    try {
      await run(["package.json"], ctx);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(CliError);
    expect((caught as CliError).exitCode).toBe(EXIT.input);
    expect((caught as CliError).message).toMatch(/^'package\.json': a JSON document of an unknown container format: expected a HAR 1\.2 file/);
    expect((caught as CliError).message).not.toMatch(/line 1/);
  });
});

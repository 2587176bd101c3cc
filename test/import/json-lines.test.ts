import { describe, expect, it } from "vitest";
import { ImportError, importFile } from "../../src/import/index.js";
import { describeCorpus } from "../helpers/corpus.js";
import { corpusFile, utf8 } from "./corpus.js";

describeCorpus("upstream", "JSON per line: vercel/ai *.chunks.txt (corpus)", () => {
  it("imports an Anthropic chunks file as bare payloads without event names", () => {
    const { name, bytes } = corpusFile("vercel__ai/packages__anthropic__src____fixtures____anthropic-tool-no-args.chunks.txt");
    const result = importFile(name, bytes);
    expect(result.format).toBe("json-lines");
    expect(result.notes).toEqual([]);
    const events = result.streams[0]!.events;
    expect(events).toHaveLength(13);
    expect(events.every((e) => e.event === undefined)).toBe(true);
    expect((events[0]?.data as { type: string }).type).toBe("message_start");
    expect((events.at(-1)?.data as { type: string }).type).toBe("message_stop");
  });

  it("keeps Bedrock SDK-wrapped events ({\"contentBlockDelta\": …}) as they are", () => {
    const { name, bytes } = corpusFile("vercel__ai/packages__amazon-bedrock__src____fixtures____amazon-bedrock-json-with-tools.1.chunks.txt");
    const events = importFile(name, bytes).streams[0]!.events;
    expect(events).toHaveLength(12);
    expect(Object.keys(events[0]!.data as object)).toEqual(["contentBlockDelta"]);
    expect(Object.keys(events.at(-1)!.data as object)).toEqual(["messageStop"]);
  });

  it("keeps the broken JSON lines of parallel-tool-call-wrapper as string payloads, with a note", () => {
    const { name, bytes } = corpusFile("vercel__ai/packages__openai__src__responses____fixtures____parallel-tool-call-wrapper.1.chunks.txt");
    const result = importFile(name, bytes);
    const events = result.streams[0]!.events;
    expect(events).toHaveLength(6);
    expect(typeof events[0]?.data).toBe("string");
    expect(events[0]?.data as string).toMatch(/^\{"type":"response.created"/);
    expect(typeof events[5]?.data).toBe("string");
    expect((events[1]?.data as { type: string }).type).toBe("response.output_item.added");
    expect(result.notes).toEqual(["2 lines not valid JSON, kept as string payloads (line 1, 6)"]);
  });
});

describe("JSON per line (synthetic)", () => {
  it("skips blank lines and tolerates a missing final newline", () => {
    const result = importFile("x.chunks.txt", utf8('{"a":1}\n\n{"b":2}'));
    expect(result.streams).toEqual([{ sequence: null, provider: null, events: [{ data: { a: 1 } }, { data: { b: 2 } }] }]);
  });

  it("is chosen by content for other names when no line is a wrapped record", () => {
    expect(importFile("stream.jsonl", utf8('{"model":"m","done":false}\n')).format).toBe("json-lines");
    expect(importFile("stream.jsonl", utf8('{"data":{"model":"m"}}\n')).format).toBe("records");
  });
});

describe("JSON per line: strictness", () => {
  it("rejects a broken line in a file that was only sniffed as JSON lines, naming the line", () => {
    const broken = utf8('{"a":1}\n{"b":\n');
    expect(() => importFile("stream.jsonl", broken)).toThrow(ImportError);
    expect(() => importFile("stream.jsonl", broken)).toThrow(/^stream\.jsonl: line 2: not JSON .*one complete JSON value per line/);
  });

  // Issue 28 changed this: a pretty-printed JSON document used to be blamed on JSON-per-line framing
  // ("line 1: not JSON"); it is now named for what it is, a JSON document of an unknown container.
  it("names a pretty-printed JSON document of no known container instead of blaming line 1", () => {
    const pretty = utf8('{\n  "name": "toolwire"\n}\n');
    expect(() => importFile("package.json", pretty)).toThrow(ImportError);
    expect(() => importFile("package.json", pretty)).toThrow(/^package\.json: a JSON document of an unknown container format: expected a HAR 1\.2 file/);
  });

  it("keeps a broken line of a *.chunks.txt file as a string payload", () => {
    const result = importFile("x.chunks.txt", utf8('{"a":1}\n{"b":\n'));
    expect(result.streams[0]?.events).toEqual([{ data: { a: 1 } }, { data: '{"b":' }]);
    expect(result.notes).toEqual(["1 line not valid JSON, kept as string payload (line 2)"]);
  });
});

import { describe, expect, it } from "vitest";
import { ImportError, importFile } from "../../src/import/index.js";
import { describeCorpus } from "../helpers/corpus.js";
import { corpusFile, utf8 } from "./corpus.js";

describeCorpus("upstream", "kilroy {sequence,event,data} NDJSON (corpus)", () => {
  it("is read as records: six labelled sequences, comments kept as notes", () => {
    const { name, bytes } = corpusFile("danshapiro__kilroy/internal__llm__providers__anthropic__testdata__kimi_tool_call_sequences.ndjson");
    const result = importFile(name, bytes, { provider: "anthropic" });
    expect(result.format).toBe("records");
    expect(result.streams.map((s) => [s.sequence, s.provider, s.events.length])).toEqual([
      ["start_input_plus_delta_duplicate", "anthropic", 5],
      ["delta_only_valid_json", "anthropic", 6],
      ["start_input_only_valid_json", "anthropic", 4],
      ["start_input_null_plus_delta_valid_json", "anthropic", 5],
      ["start_input_plus_delta_continuation_invalid_json", "anthropic", 5],
      ["start_input_empty_object_plus_delta_valid_json", "anthropic", 5],
    ]);
    for (const stream of result.streams) {
      expect(stream.events[0]?.event).toBe("content_block_start");
      expect(stream.events.at(-1)?.event).toBe("message_stop");
    }
    expect(result.notes[0]).toBe("source comment: Sequence: start-input + full delta duplicate (expected invalid today)");
    expect(result.notes).toHaveLength(6);
  });
});

describe("records (synthetic)", () => {
  it("reports a malformed record line with its line number", () => {
    try {
      importFile("x.ndjson", utf8('# header\n{"sequence":"a","data":{}}\n{"sequence":"a","data":\n'));
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(ImportError);
      expect((error as ImportError).code).toBe("malformed");
      expect((error as ImportError).message).toMatch(/^x\.ndjson: line 3: not a JSON value/);
    }
  });

  it("lets an explicit provider override the records' own and says so", () => {
    const result = importFile("x.ndjson", utf8('{"provider":"gemini","data":{}}\n'), { provider: "anthropic" });
    expect(result.streams[0]?.provider).toBe("anthropic");
    expect(result.notes).toEqual(["provider anthropic given explicitly; the container suggested gemini"]);
  });
});

import { describe, expect, it } from "vitest";
import { isToolwireError } from "../../src/errors.js";
import { checkHistory, convertHistory, encodeToolResults, encodeTurn, fromNeutral, HISTORY_FORMATS, repairHistory, toNeutral, type HistoryFormat } from "../../src/history/index.js";
import { fromAnthropic, toAnthropic } from "../../src/history/formats/anthropic.js";
import { fromOpenAIChat, toOpenAIChat } from "../../src/history/formats/openai-chat.js";
import { createDecoder } from "../../src/providers/registry.js";

/** The public conversion pair takes the format as an argument; a format that is not one is a typed error. */

const BAD = "cohere" as HistoryFormat;

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (error) {
    expect(isToolwireError(error), String(error)).toBe(true);
    return (error as { code: string }).code;
  }
  throw new Error("expected a throw");
}

describe("toNeutral / fromNeutral with a format argument", () => {
  const anthropic = [
    { role: "user", content: "Add 2 and 3." },
    { role: "assistant", content: [{ type: "tool_use", id: "toolu_1", name: "add", input: { a: 2, b: 3 } }] },
    { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_1", content: "5" }] },
  ];
  const chat = [
    { role: "user", content: "Add 2 and 3." },
    { role: "assistant", content: null, tool_calls: [{ id: "call_1", type: "function", function: { name: "add", arguments: '{"a":2,"b":3}' } }] },
    { role: "tool", tool_call_id: "call_1", content: "5" },
  ];

  it("are the per-format converters", () => {
    expect(toNeutral(anthropic, "anthropic")).toEqual(fromAnthropic(anthropic));
    expect(fromNeutral(toNeutral(anthropic, "anthropic"), "anthropic")).toEqual(toAnthropic(fromAnthropic(anthropic)));
    expect(toNeutral(chat, "openai-chat")).toEqual(fromOpenAIChat(chat));
    expect(fromNeutral(toNeutral(chat, "openai-chat"), "openai-chat")).toEqual(toOpenAIChat(fromOpenAIChat(chat)));
  });

  it.each(HISTORY_FORMATS)("%s: an empty history converts both ways", (format) => {
    expect(fromNeutral(toNeutral([], format), format)).toEqual([]);
  });

  it("a format that is not one is unknown_history_format, for every function taking a format", () => {
    const turn = createDecoder("anthropic").finish();
    expect(codeOf(() => toNeutral([], BAD))).toBe("unknown_history_format");
    expect(codeOf(() => fromNeutral([], BAD))).toBe("unknown_history_format");
    expect(codeOf(() => checkHistory([], BAD))).toBe("unknown_history_format");
    expect(codeOf(() => repairHistory([], BAD))).toBe("unknown_history_format");
    expect(codeOf(() => convertHistory([], "anthropic", BAD))).toBe("unknown_history_format");
    expect(codeOf(() => convertHistory([], BAD, "anthropic"))).toBe("unknown_history_format");
    expect(codeOf(() => encodeTurn(turn, BAD))).toBe("unknown_history_format");
    expect(codeOf(() => encodeToolResults([], BAD))).toBe("unknown_history_format");
  });

  it("names the valid formats", () => {
    try {
      toNeutral([], BAD);
    } catch (error) {
      for (const format of HISTORY_FORMATS) expect((error as Error).message).toContain(format);
    }
  });
});

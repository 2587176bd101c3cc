import { describe, expect, it } from "vitest";
import { checkHistory, repairHistory } from "../../src/history/index.js";
import { idProblem, mintId, originalId } from "../../src/history/ids.js";

describe("id rules", () => {
  it.each([
    ["anthropic", "toolu_01A-b", null],
    ["anthropic", "functions.read:0", "the id must match ^[a-zA-Z0-9_-]+$"],
    ["anthropic", "", "the id is empty"],
    ["openai", "x".repeat(40), null],
    ["openai", "x".repeat(41), "the id is 41 characters long; the maximum is 40"],
    ["bedrock", "functions.glob_search:0", null],
    ["bedrock", "a b", "the id must match ^[a-zA-Z0-9_.:-]+$"],
    ["bedrock", "x".repeat(65), "the id is 65 characters long; the maximum is 64"],
    ["mistral", "eKp7ETcvQ", null],
    ["mistral", "call_search", "the id must be exactly 9 characters of a-z, A-Z, 0-9"],
    ["kimi", "functions.read:3", null],
    ["kimi", "call_1", "the id must have the form functions.read:<index>"],
    ["none", "anything goes", null],
  ] as const)("%s accepts %j: %j", (rule, id, problem) => {
    expect(idProblem(id, rule, { name: "read", ordinal: 0 })).toBe(problem);
  });

  it("mints ids the rule accepts, deterministically, avoiding taken ones", () => {
    const taken = new Set(["functions_read_0"]);
    for (const rule of ["anthropic", "openai", "bedrock", "kimi", "mistral", "none"] as const) {
      const first = mintId("functions.read:0", rule, { name: "read", ordinal: 4 }, taken);
      expect(idProblem(first, rule, { name: "read", ordinal: 4 })).toBeNull();
      expect(taken.has(first)).toBe(false);
      expect(mintId("functions.read:0", rule, { name: "read", ordinal: 4 }, taken)).toBe(first);
    }
    expect(mintId("functions.read:0", "anthropic", { name: "read", ordinal: 0 }, new Set())).toBe("functions_read_0");
    expect(mintId("call_1", "kimi", { name: "read", ordinal: 2 }, new Set(["functions.read:2"]))).toBe("functions.read:3");
  });
});

describe("id remapping in repair", () => {
  const history = [
    { role: "user", content: "go" },
    {
      role: "assistant",
      content: [
        { type: "tool_use", id: "functions.read:0", name: "read", input: { path: "a" } },
        { type: "tool_use", id: "toolu_dup", name: "read", input: { path: "b" } },
      ],
    },
    {
      role: "user",
      content: [
        { type: "tool_result", tool_use_id: "functions.read:0", content: "A" },
        { type: "tool_result", tool_use_id: "toolu_dup", content: "B" },
      ],
    },
    { role: "assistant", content: [{ type: "tool_use", id: "toolu_dup", name: "read", input: { path: "c" } }] },
    { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_dup", content: "C" }] },
  ];

  it("renames a call and its result alike, keeps the first of duplicated ids, and maps back", () => {
    const repaired = repairHistory(history, "anthropic");
    expect(checkHistory(repaired.messages, "anthropic")).toEqual([]);
    const [, first, firstResults, second, secondResults] = repaired.messages as Array<{ content: Array<{ id?: string; tool_use_id?: string }> }>;
    const newRead = first?.content[0]?.id as string;
    const newDup = second?.content[0]?.id as string;
    expect(newRead).toBe("functions_read_0");
    expect(first?.content[1]?.id).toBe("toolu_dup");
    expect(newDup).not.toBe("toolu_dup");
    expect(firstResults?.content.map((block) => block.tool_use_id)).toEqual([newRead, "toolu_dup"]);
    expect(secondResults?.content[0]?.tool_use_id).toBe(newDup);
    expect(originalId(repaired.idMap, newRead)).toBe("functions.read:0");
    expect(originalId(repaired.idMap, newDup)).toBe("toolu_dup");
    expect(originalId(repaired.idMap, "toolu_dup")).toBe("toolu_dup");
    // A duplicated original has several new ids: only unambiguous originals map forward.
    expect(repaired.idMap.fromOriginal).toEqual({ "functions.read:0": "functions_read_0" });
  });

  it("is deterministic: the same history always gets the same ids", () => {
    expect(repairHistory(history, "anthropic")).toEqual(repairHistory(structuredClone(history), "anthropic"));
  });

  it("applies the target's rule when told (Kimi ids for an OpenAI-compatible Kimi endpoint)", () => {
    const chat = [
      { role: "user", content: "go" },
      { role: "assistant", content: null, tool_calls: [{ id: "call_abc", type: "function", function: { name: "read", arguments: "{}" } }] },
      { role: "tool", tool_call_id: "call_abc", content: "A" },
    ];
    expect(checkHistory(chat, "openai-chat")).toEqual([]);
    const repaired = repairHistory(chat, "openai-chat", { ids: "kimi" });
    expect(repaired.messages).toEqual([
      { role: "user", content: "go" },
      { role: "assistant", content: null, tool_calls: [{ id: "functions.read:0", type: "function", function: { name: "read", arguments: "{}" } }] },
      { role: "tool", tool_call_id: "functions.read:0", content: "A" },
    ]);
  });
});

describe("Kimi target", () => {
  it("rejects empty text beside tool calls; repair sends null content", () => {
    const chat = [
      { role: "user", content: "go" },
      { role: "assistant", content: "", tool_calls: [{ id: "functions.read:0", type: "function", function: { name: "read", arguments: "{}" } }] },
      { role: "tool", tool_call_id: "functions.read:0", content: "A" },
    ];
    expect(checkHistory(chat, "openai-chat")).toEqual([]);
    expect(checkHistory(chat, "openai-chat", { ids: "kimi" }).map((fault) => fault.code)).toEqual(["empty_text"]);
    const repaired = repairHistory(chat, "openai-chat", { ids: "kimi" });
    expect(repaired.messages[1]).toEqual({ role: "assistant", content: null, tool_calls: chat[1]?.tool_calls });
  });
});

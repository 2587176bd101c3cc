/**
 * Calls that share an id (a provider or proxy reusing `call_x`, an agent replaying a turn) keep
 * their own results: results pair with calls by position within the turn, never crosswise, and
 * the repaired history gives every call a unique id that the id map leads back to the sent one.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { checkHistory, fromNeutral, HISTORY_FORMATS, repairHistory, toNeutral, type HistoryFormat, type Message } from "../../src/history/index.js";
import { originalId } from "../../src/history/ids.js";
import { type ToolCallPart, type ToolResultPart } from "../../src/history/model.js";
import { arbPlan, build } from "./arbitraries.js";

const RUNS = Number(process.env.HISTORY_RUNS ?? 50);

/** Each call's result content names the call's arguments, so a pairing can be read back. */
function pairs(messages: unknown[], format: HistoryFormat): Array<{ id: string; call: string; result: string | null }> {
  const neutral = toNeutral(messages, format);
  const results = new Map<string, string>();
  for (const message of neutral) {
    for (const part of message.parts) {
      if (part.type === "tool_result") results.set(part.callId, typeof part.content === "string" ? part.content : JSON.stringify(part.content));
    }
  }
  return neutral.flatMap((message) =>
    message.parts
      .filter((part): part is ToolCallPart => part.type === "tool_call")
      .map((call) => ({ id: call.id, call: String(call.arguments?.path), result: results.get(call.id) ?? null })),
  );
}

const SAME_TURN: Record<HistoryFormat, unknown[]> = {
  anthropic: [
    { role: "user", content: "read a and b" },
    {
      role: "assistant",
      content: [
        { type: "tool_use", id: "toolu_x", name: "read", input: { path: "a" } },
        { type: "tool_use", id: "toolu_x", name: "read", input: { path: "b" } },
      ],
    },
    {
      role: "user",
      content: [
        { type: "tool_result", tool_use_id: "toolu_x", content: "A" },
        { type: "tool_result", tool_use_id: "toolu_x", content: "B" },
      ],
    },
  ],
  "openai-chat": [
    { role: "user", content: "read a and b" },
    {
      role: "assistant",
      content: null,
      tool_calls: [
        { id: "call_x", type: "function", function: { name: "read", arguments: '{"path":"a"}' } },
        { id: "call_x", type: "function", function: { name: "read", arguments: '{"path":"b"}' } },
      ],
    },
    { role: "tool", tool_call_id: "call_x", content: "A" },
    { role: "tool", tool_call_id: "call_x", content: "B" },
  ],
  "openai-responses": [
    { role: "user", content: "read a and b" },
    { type: "function_call", call_id: "call_x", name: "read", arguments: '{"path":"a"}' },
    { type: "function_call", call_id: "call_x", name: "read", arguments: '{"path":"b"}' },
    { type: "function_call_output", call_id: "call_x", output: "A" },
    { type: "function_call_output", call_id: "call_x", output: "B" },
  ],
  gemini: [
    { role: "user", parts: [{ text: "read a and b" }] },
    {
      role: "model",
      parts: [{ functionCall: { id: "x", name: "read", args: { path: "a" } } }, { functionCall: { id: "x", name: "read", args: { path: "b" } } }],
    },
    {
      role: "user",
      parts: [
        { functionResponse: { id: "x", name: "read", response: { output: "A" } } },
        { functionResponse: { id: "x", name: "read", response: { output: "B" } } },
      ],
    },
  ],
  bedrock: [
    { role: "user", content: [{ text: "read a and b" }] },
    {
      role: "assistant",
      content: [{ toolUse: { toolUseId: "tooluse_x", name: "read", input: { path: "a" } } }, { toolUse: { toolUseId: "tooluse_x", name: "read", input: { path: "b" } } }],
    },
    {
      role: "user",
      content: [{ toolResult: { toolUseId: "tooluse_x", content: [{ text: "A" }] } }, { toolResult: { toolUseId: "tooluse_x", content: [{ text: "B" }] } }],
    },
  ],
};

const resultText = (text: string, format: HistoryFormat) => (format === "bedrock" ? JSON.stringify([{ type: "text", text }]) : text);

describe.each(HISTORY_FORMATS)("duplicate call ids in one turn (%s)", (format) => {
  const history = SAME_TURN[format];

  it("the check reports the duplicate and nothing crosswise", () => {
    expect(checkHistory(history, format).map((fault) => fault.code)).toEqual(["duplicate_call_id"]);
  });

  it("repair pairs a←A and b←B under unique ids the id map leads back to the sent id", () => {
    const repaired = repairHistory(history, format);
    expect(repaired.remaining).toEqual([]);
    expect(checkHistory(repaired.messages, format)).toEqual([]);
    const after = pairs(repaired.messages, format);
    expect(after.map(({ call, result }) => [call, result])).toEqual([
      ["a", resultText("A", format)],
      ["b", resultText("B", format)],
    ]);
    const [first, second] = after.map((pair) => pair.id) as [string, string];
    const sent = pairs(history, format)[0]?.id as string;
    expect(first).toBe(sent);
    expect(second).not.toBe(sent);
    expect(originalId(repaired.idMap, first)).toBe(sent);
    expect(originalId(repaired.idMap, second)).toBe(sent);
    expect(repaired.idMap.toOriginal).toEqual({ [second]: sent });
    // The sent id stands for two calls now: it has no single replacement to map forward to.
    expect(repaired.idMap.fromOriginal).toEqual({});
    expect(repaired.edits.map((edit) => [edit.code, edit.ids])).toEqual([["id_remapped", [sent, second]]]);
  });
});

describe("duplicate call ids across turns", () => {
  it("a reused id answered in each turn keeps each turn's result (anthropic)", () => {
    const history = [
      { role: "user", content: "go" },
      { role: "assistant", content: [{ type: "tool_use", id: "toolu_x", name: "read", input: { path: "a" } }] },
      { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_x", content: "A" }] },
      {
        role: "assistant",
        content: [
          { type: "tool_use", id: "toolu_x", name: "read", input: { path: "b" } },
          { type: "tool_use", id: "toolu_x", name: "read", input: { path: "c" } },
        ],
      },
      {
        role: "user",
        content: [
          { type: "tool_result", tool_use_id: "toolu_x", content: "B" },
          { type: "tool_result", tool_use_id: "toolu_x", content: "C" },
        ],
      },
    ];
    const repaired = repairHistory(history, "anthropic");
    expect(checkHistory(repaired.messages, "anthropic")).toEqual([]);
    expect(pairs(repaired.messages, "anthropic").map(({ call, result }) => [call, result])).toEqual([
      ["a", "A"],
      ["b", "B"],
      ["c", "C"],
    ]);
    const ids = pairs(repaired.messages, "anthropic").map((pair) => pair.id);
    expect(new Set(ids).size).toBe(3);
    for (const id of ids) expect(originalId(repaired.idMap, id)).toBe("toolu_x");
  });

  it("a result missing for the first of two same-id calls goes to the first, the second gets an error result (openai-chat)", () => {
    const history = [
      { role: "user", content: "go" },
      {
        role: "assistant",
        content: null,
        tool_calls: [
          { id: "call_x", type: "function", function: { name: "read", arguments: '{"path":"a"}' } },
          { id: "call_x", type: "function", function: { name: "read", arguments: '{"path":"b"}' } },
        ],
      },
      { role: "tool", tool_call_id: "call_x", content: "A" },
    ];
    const repaired = repairHistory(history, "openai-chat");
    const after = pairs(repaired.messages, "openai-chat");
    expect(after[0]).toMatchObject({ call: "a", result: "A" });
    expect(after[1]?.result).toContain("No result was recorded");
  });
});

describe("minted ids for many calls sharing one id", () => {
  it("the none rule numbers them in order (openai-responses), each result following its call", () => {
    const items: unknown[] = [{ role: "user", content: "go" }];
    for (let i = 0; i < 5; i++) {
      items.push({ type: "function_call", call_id: "call_dup", name: "read", arguments: `{"path":"f${i}"}` });
      items.push({ type: "function_call_output", call_id: "call_dup", output: `r${i}` });
    }
    const repaired = repairHistory(items, "openai-responses");
    expect(pairs(repaired.messages, "openai-responses").map(({ id, call, result }) => [id, call, result])).toEqual([
      ["call_dup", "f0", "r0"],
      ["call_dup_2", "f1", "r1"],
      ["call_dup_3", "f2", "r2"],
      ["call_dup_4", "f3", "r3"],
      ["call_dup_5", "f4", "r4"],
    ]);
  });

  it("the kimi rule skips numbers already taken by sent ids", () => {
    const chat = [
      { role: "user", content: "go" },
      {
        role: "assistant",
        content: null,
        tool_calls: ["functions.read:1", "functions.read:1", "functions.read:2", "x", "x"].map((id, i) => ({ id, type: "function", function: { name: "read", arguments: `{"path":"f${i}"}` } })),
      },
      ...["functions.read:1", "functions.read:1", "functions.read:2", "x", "x"].map((id, i) => ({ role: "tool", tool_call_id: id, content: `r${i}` })),
    ];
    const repaired = repairHistory(chat, "openai-chat", { ids: "kimi" });
    const after = pairs(repaired.messages, "openai-chat");
    expect(after.map(({ call, result }) => [call, result])).toEqual([0, 1, 2, 3, 4].map((i) => [`f${i}`, `r${i}`]));
    expect(new Set(after.map((pair) => pair.id)).size).toBe(5);
    expect(checkHistory(repaired.messages, "openai-chat", { ids: "kimi" })).toEqual([]);
  });
});

/**
 * Renames the calls of a valid generated history onto a few shared ids (results follow their
 * calls), so that one id is used by several calls of a turn and of the history.
 */
function withSharedIds(messages: Message[], shared: readonly number[]): Message[] {
  let count = 0;
  const renamed = new Map<string, string>();
  for (const message of messages) {
    for (const part of message.parts) {
      if (part.type !== "tool_call") continue;
      const id = `dup${shared[count % shared.length]}`;
      renamed.set(part.id, id);
      part.id = id;
      delete part.syntheticId;
      count++;
    }
  }
  for (const message of messages) {
    for (const part of message.parts) {
      if (part.type !== "tool_result") continue;
      const call = renamed.get(part.callId);
      if (call === undefined) continue;
      part.callId = call;
      delete part.syntheticId;
    }
  }
  return messages;
}

describe.each(HISTORY_FORMATS)("property: shared ids never pair crosswise (%s)", (format) => {
  it("after repair, every call's result is the one sent for it, ids are unique and map back to the sent ids", () => {
    fc.assert(
      fc.property(arbPlan, fc.array(fc.integer({ min: 0, max: 1 }), { minLength: 1, maxLength: 4 }), (plan, shared) => {
        const neutral = build({ ...plan, geminiIds: true }, format);
        // Results name their calls' arguments before the ids are shared.
        const byId = new Map<string, ToolCallPart>();
        let count = 0;
        for (const message of neutral) {
          for (const part of message.parts) {
            if (part.type === "tool_call") {
              part.arguments = { path: `call${count++}` };
              byId.set(part.id, part);
            }
          }
        }
        for (const message of neutral) {
          for (const part of message.parts) {
            if (part.type === "tool_result") part.content = resultContent(format, String(byId.get(part.callId)?.arguments?.path));
          }
        }
        const sentIds = [...byId.values()].map((_, index) => `dup${shared[index % shared.length]}`);
        const history = fromNeutral(withSharedIds(neutral, shared), format);
        const repaired = repairHistory(history, format);
        const after = pairs(repaired.messages, format);
        expect(after.map((pair) => pair.call)).toEqual(sentIds.map((_, index) => `call${index}`));
        for (const pair of after) expect(pair.result).toBe(format === "bedrock" ? JSON.stringify([{ type: "text", text: `result of ${pair.call}` }]) : `result of ${pair.call}`);
        expect(new Set(after.map((pair) => pair.id)).size).toBe(after.length);
        after.forEach((pair, index) => expect(originalId(repaired.idMap, pair.id)).toBe(sentIds[index]));
        for (const [original, replacement] of Object.entries(repaired.idMap.fromOriginal)) expect(repaired.idMap.toOriginal[replacement]).toBe(original);
        expect(checkHistory(repaired.messages, format).filter((fault) => fault.code === "duplicate_call_id" || fault.code === "duplicate_result")).toEqual([]);
      }),
      { numRuns: RUNS },
    );
  });
});

function resultContent(format: HistoryFormat, path: string): ToolResultPart["content"] {
  return format === "bedrock" ? [{ type: "text", text: `result of ${path}` }] : `result of ${path}`;
}

import { describe, expect, it } from "vitest";
import { createDecoder } from "../../src/providers/registry.js";
import { toReplayJson } from "../../src/replay.js";
import type { CodecEvent, DecodedTurn, ProviderEvent, ProviderName, ToolCall } from "../../src/types.js";
import { a, toolStream } from "../helpers/anthropic-events.js";
import { b } from "../helpers/bedrock-events.js";
import { g } from "../helpers/gemini-events.js";
import { c, chatStream, r } from "../helpers/openai-events.js";

/**
 * Issue 17, identity: no call lost, no two calls sharing an id. One rule in the TurnBuilder for
 * every provider: a later call sent with an id an earlier call has gets `<sent>_tw<n>`, keeps the
 * sent id as `providerId`, carries the repair `minted_id`, and a `call_id_duplicate` diagnostic
 * names both ids.
 */

function decode(provider: ProviderName, events: ProviderEvent[]): { turn: DecodedTurn; events: CodecEvent[] } {
  const decoder = createDecoder(provider);
  const out: CodecEvent[] = [];
  for (const event of events) out.push(...decoder.push(event));
  out.push(...decoder.end());
  return { turn: decoder.finish(), events: out };
}

const facts = (calls: ToolCall[]) => calls.map((call) => ({ id: call.id, providerId: call.providerId, name: call.name, arguments: call.arguments, repairs: call.repairs }));

const ollamaLine = (message: Record<string, unknown>, extra: Record<string, unknown> = {}): ProviderEvent => ({
  data: { model: "m", created_at: "2025-01-01T00:00:00Z", message: { role: "assistant", content: "", ...message }, done: false, ...extra },
});

/** Two calls sent with the id `dup`, arguments {n:1} then {n:2}, in each provider's wire shape. */
const duplicateStreams: Record<ProviderName, ProviderEvent[]> = {
  anthropic: [a.messageStart(), ...toolStream(0, "dup", "a", ['{"n":1}']).slice(1, 4), ...toolStream(1, "dup", "b", ['{"n":2}']).slice(1, 4), a.messageDelta("tool_use"), a.messageStop()],
  bedrock: [b.messageStart(), b.toolStart(0, "dup", "a"), b.input(0, '{"n":1}'), b.stop(0), b.toolStart(1, "dup", "b"), b.input(1, '{"n":2}'), b.stop(1), b.messageStop("tool_use")],
  "openai-chat": chatStream([c.open(0, "dup", "a"), c.args(0, '{"n":1}'), c.open(1, "dup", "b"), c.args(1, '{"n":2}')]),
  "openai-responses": [
    r.created(),
    r.callAdded(0, "fc_1", "dup", "a"),
    r.argsDelta(0, "fc_1", '{"n":1}'),
    r.callDone(0, "fc_1", "dup", "a", '{"n":1}'),
    r.callAdded(1, "fc_2", "dup", "b"),
    r.argsDelta(1, "fc_2", '{"n":2}'),
    r.callDone(1, "fc_2", "dup", "b", '{"n":2}'),
    r.completed(),
  ],
  gemini: [g.chunk([g.call("a", { n: 1 }, { id: "dup" }), g.call("b", { n: 2 }, { id: "dup" })], { finishReason: "STOP" })],
  ollama: [
    ollamaLine({ tool_calls: [{ id: "dup", function: { name: "a", arguments: { n: 1 } } }, { id: "dup", function: { name: "b", arguments: { n: 2 } } }] }),
    ollamaLine({}, { done: true, done_reason: "stop" }),
  ],
};

describe("duplicate ids within one turn: one rule for every provider", () => {
  it.each(Object.keys(duplicateStreams) as ProviderName[])("%s: the second call gets a minted id, keeps the sent one, and a diagnostic names both", (provider) => {
    const { turn, events } = decode(provider, duplicateStreams[provider]);
    expect(facts(turn.toolCalls)).toEqual([
      { id: "dup", providerId: undefined, name: "a", arguments: { n: 1 }, repairs: [] },
      { id: "dup_tw2", providerId: "dup", name: "b", arguments: { n: 2 }, repairs: ["minted_id"] },
    ]);
    const diagnostic = turn.diagnostics.find((d) => d.code === "call_id_duplicate");
    expect(diagnostic).toMatchObject({ callIndex: 1, data: { id: "dup", minted: "dup_tw2", firstCallIndex: 0 } });
    expect(diagnostic?.message).toContain("dup");
    expect(diagnostic?.message).toContain("dup_tw2");
    // The live events already carry the unique id.
    const starts = events.filter((e): e is Extract<CodecEvent, { type: "tool_call_start" }> => e.type === "tool_call_start");
    expect(starts.map((e) => e.id)).toEqual(["dup", "dup_tw2"]);
  });

  it("a minted id never equals an id the provider sends later in the turn: the earlier call is minted another", () => {
    // Anthropic block without an id: toolwire mints one; a later block is sent with exactly that id.
    const minted = decode("anthropic", [a.messageStart(), ...toolStream(0, "", "a", ['{"n":1}']).slice(1, 4), a.messageDelta("tool_use"), a.messageStop()]).turn.toolCalls[0]?.id as string;
    expect(minted).toMatch(/^toolu_tw_/);
    const { turn } = decode("anthropic", [
      a.messageStart(),
      ...toolStream(0, "", "a", ['{"n":1}']).slice(1, 4),
      ...toolStream(1, minted, "b", ['{"n":2}']).slice(1, 4),
      a.messageDelta("tool_use"),
      a.messageStop(),
    ]);
    expect(turn.toolCalls.map((call) => call.id)).toEqual([`${minted}_tw2`, minted]);
    expect(turn.toolCalls[1]?.providerId).toBeUndefined();
    expect(turn.diagnostics.find((d) => d.code === "call_id_reminted")).toMatchObject({ callIndex: 0, data: { id: minted, minted: `${minted}_tw2` } });
  });

  it("a minted suffix that the provider also sent is skipped", () => {
    const { turn } = decode("openai-responses", [
      r.created(),
      r.callDone(0, "fc_1", "x", "a", "{}"),
      r.callDone(1, "fc_2", "x_tw2", "a", "{}"),
      r.callDone(2, "fc_3", "x", "a", "{}"),
      r.completed(),
    ]);
    expect(turn.toolCalls.map((call) => [call.id, call.providerId])).toEqual([
      ["x", undefined],
      ["x_tw2", undefined],
      ["x_tw3", "x"],
    ]);
  });

  it("N calls sharing one id get N distinct ids", () => {
    const entries = Array.from({ length: 50 }, (_, i) => ({ id: "same", function: { name: "f", arguments: { i } } }));
    const { turn } = decode("ollama", [ollamaLine({ tool_calls: entries }), ollamaLine({}, { done: true, done_reason: "stop" })]);
    expect(new Set(turn.toolCalls.map((call) => call.id)).size).toBe(50);
    expect(turn.toolCalls.slice(1).every((call) => call.providerId === "same")).toBe(true);
  });
});

describe("Chat Completions: one id at two indexes", () => {
  it("{index:0,id:call_x,name:a} then {index:1,id:call_x,name:b} are two valid calls", () => {
    const { turn } = decode(
      "openai-chat",
      chatStream([c.tools(c.entry({ index: 0, id: "call_x", type: "function", name: "a", args: '{"n":1}' })), c.tools(c.entry({ index: 1, id: "call_x", type: "function", name: "b", args: '{"n":2}' }))]),
    );
    expect(facts(turn.toolCalls)).toEqual([
      { id: "call_x", providerId: undefined, name: "a", arguments: { n: 1 }, repairs: [] },
      { id: "call_x_tw2", providerId: "call_x", name: "b", arguments: { n: 2 }, repairs: ["minted_id"] },
    ]);
    expect(turn.toolCalls.every((call) => call.error === null && call.complete)).toBe(true);
    expect(turn.diagnostics.map((d) => d.code)).toEqual(expect.arrayContaining(["call_id_reused", "call_id_duplicate"]));
  });

  it("the same id and name at another index after finished arguments is a second call; continuation fragments follow their index", () => {
    const { turn } = decode(
      "openai-chat",
      chatStream([
        c.tools(c.entry({ index: 0, id: "call_x", type: "function", name: "read", args: "" })),
        c.tools(c.entry({ index: 1, id: "call_x", type: "function", name: "read", args: "" })),
        c.tools(c.entry({ index: 0, id: "call_x", args: '{"p":' })),
        c.tools(c.entry({ index: 1, args: '{"p":' })),
        c.args(0, '"a"}'),
        c.args(1, '"b"}'),
      ]),
    );
    expect(turn.toolCalls.map((call) => [call.id, call.arguments])).toEqual([
      ["call_x", { p: "a" }],
      ["call_x_tw2", { p: "b" }],
    ]);
  });

  it("a known id on a continuation chunk at its own index still continues the call (no name: no header)", () => {
    const { turn } = decode("openai-chat", chatStream([c.open(0, "call_1", "f"), c.tools(c.entry({ index: 0, id: "call_1", args: '{"a"' })), c.tools(c.entry({ index: 0, id: "call_1", args: ":1}" }))]));
    expect(facts(turn.toolCalls)).toEqual([{ id: "call_1", providerId: undefined, name: "f", arguments: { a: 1 }, repairs: [] }]);
  });

  it.each(["null", "None", "undefined", ""])("the placeholder id %j on continuation chunks is no id: one call, as the official openai package decodes it", (placeholder) => {
    const { turn } = decode(
      "openai-chat",
      chatStream([c.open(0, "call_1", "write"), c.tools(c.entry({ index: 0, id: placeholder, args: '{"path":' })), c.tools(c.entry({ index: 0, id: placeholder, args: '"a.py"}' }))]),
    );
    expect(facts(turn.toolCalls)).toEqual([{ id: "call_1", providerId: undefined, name: "write", arguments: { path: "a.py" }, repairs: [] }]);
    if (placeholder !== "") expect(turn.diagnostics.map((d) => d.code)).toContain("call_id_placeholder");
  });

  it("a placeholder id on the opening chunk is minted like a missing one", () => {
    const { turn } = decode("openai-chat", chatStream([c.tools(c.entry({ index: 0, id: "null", type: "function", name: "f", args: '{"a":1}' }))]));
    expect(turn.toolCalls[0]?.id).toMatch(/^call_tw_/);
    expect(turn.toolCalls[0]?.providerId).toBeUndefined();
  });
});

describe("two different complete objects glued at one call become two calls", () => {
  const glued = '{"path":"a.py"}{"path":"b.py"}';
  const gluedStreams: Array<[ProviderName, ProviderEvent[]]> = [
    ["openai-chat", chatStream([c.open(0, "call_1", "read"), c.args(0, '{"path":"a.py"}'), c.args(0, '{"path":"b.py"}')])],
    ["anthropic", [a.messageStart(), ...toolStream(0, "toolu_1", "read", [glued.slice(0, 20), glued.slice(20)]).slice(1, 5), a.messageDelta("tool_use"), a.messageStop()]],
    ["bedrock", [b.messageStart(), b.toolStart(0, "call_1", "read"), b.input(0, glued), b.stop(0), b.messageStop("tool_use")]],
    ["openai-responses", [r.created(), r.callAdded(0, "fc_1", "call_1", "read"), r.argsDelta(0, "fc_1", glued), r.argsDone(0, "fc_1", glued), r.completed()]],
  ];

  it.each(gluedStreams)("%s: the second has the same name, a minted id and the repair split_concatenated_calls", (provider, events) => {
    const { turn, events: out } = decode(provider, events);
    const sent = turn.toolCalls[0]?.id as string;
    expect(facts(turn.toolCalls)).toEqual([
      { id: sent, providerId: undefined, name: "read", arguments: { path: "a.py" }, repairs: ["split_concatenated_calls"] },
      { id: `${sent}_tw2`, providerId: sent, name: "read", arguments: { path: "b.py" }, repairs: ["split_concatenated_calls", "minted_id"] },
    ]);
    expect(turn.toolCalls.map((call) => call.rawArguments)).toEqual(['{"path":"a.py"}', '{"path":"b.py"}']);
    expect(turn.toolCalls.every((call) => call.complete && call.error === null)).toBe(true);
    expect(turn.blocks.filter((block) => block.type === "tool_call")).toHaveLength(2);
    const ends = out.filter((e): e is Extract<CodecEvent, { type: "tool_call_end" }> => e.type === "tool_call_end");
    expect(ends.map((e) => e.call.id)).toEqual([sent, `${sent}_tw2`]);
    expect(turn.diagnostics.map((d) => d.code)).toContain("split_concatenated_calls");
  });

  it("identical repeats keep collapsing into one call", () => {
    const { turn } = decode("openai-chat", chatStream([c.open(0, "call_1", "read"), c.args(0, '{"path":"a.py"}{"path":"a.py"}')]));
    expect(facts(turn.toolCalls)).toEqual([{ id: "call_1", providerId: undefined, name: "read", arguments: { path: "a.py" }, repairs: ["collapsed_duplicate"] }]);
  });

  it.each(['{"path":"a.py"}{"path":', '{"path":"a.py"}{path b.py}', '{"path":"a.py"}["b.py"]'])("anything short of that stays one invalid_json call: %s", (text) => {
    const { turn } = decode("openai-chat", chatStream([c.open(0, "call_1", "read"), c.args(0, text)]));
    expect(turn.toolCalls).toHaveLength(1);
    expect(turn.toolCalls[0]).toMatchObject({ arguments: null, error: { code: "invalid_json" } });
  });
});

describe("the replay --json contract", () => {
  it("gains providerId only as an optional field; the existing fields stay", () => {
    const line = toReplayJson(decode("ollama", duplicateStreams.ollama).turn);
    expect(Object.keys(line.toolCalls[0] ?? {}).sort()).toEqual(["arguments", "complete", "error", "id", "index", "name", "rawArguments", "repairs", "source"]);
    expect(line.toolCalls[1]).toMatchObject({ id: "dup_tw2", providerId: "dup", repairs: ["minted_id"] });
    expect("textSyntax" in (line.toolCalls[1] ?? {})).toBe(false);
  });
});

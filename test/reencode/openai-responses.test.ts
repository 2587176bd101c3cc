import { describe, expect, it } from "vitest";
import type { ProviderEvent } from "../../src/types.js";
import { decodeBytes, reencode, sseBody } from "./support.js";

/** The Responses re-encoder on hand-built streams: a call cut by max_output_tokens, duplicate call ids. */

const encoder = new TextEncoder();
let seq = 0;
const ev = (type: string, fields: Record<string, unknown>): ProviderEvent => ({ event: type, data: { type, sequence_number: seq++, ...fields } });
const fnItem = (id: string, callId: string, name: string, args: string, status = "completed") => ({ id, type: "function_call", status, arguments: args, call_id: callId, name });

function call(outputIndex: number, id: string, callId: string, args: string, done = true): ProviderEvent[] {
  const events = [
    ev("response.output_item.added", { output_index: outputIndex, item: fnItem(id, callId, "shell", "", "in_progress") }),
    ev("response.function_call_arguments.delta", { item_id: id, output_index: outputIndex, delta: args.slice(0, 5) }),
    ev("response.function_call_arguments.delta", { item_id: id, output_index: outputIndex, delta: args.slice(5, done ? undefined : -3) }),
  ];
  if (done) events.push(ev("response.function_call_arguments.done", { item_id: id, output_index: outputIndex, arguments: args }), ev("response.output_item.done", { output_index: outputIndex, item: fnItem(id, callId, "shell", args) }));
  return events;
}

function events(second: { callId: string; done: boolean }, terminal: "completed" | "incomplete"): ProviderEvent[] {
  const first = '{"command":"ls"}';
  const other = '{"command":"cat README.md"}';
  const output = [fnItem("fc_1", "call_1", "shell", first), fnItem("fc_2", second.callId, "shell", second.done ? other : other.slice(0, -3), second.done ? "completed" : "in_progress")];
  return [
    ev("response.created", { response: { id: "resp_1", status: "in_progress", output: [] } }),
    ...call(0, "fc_1", "call_1", first),
    ...call(1, "fc_2", second.callId, other, second.done),
    terminal === "completed"
      ? ev("response.completed", { response: { id: "resp_1", status: "completed", output } })
      : ev("response.incomplete", { response: { id: "resp_1", status: "incomplete", incomplete_details: { reason: "max_output_tokens" }, output } }),
  ];
}

describe("Responses re-encoding", () => {
  it("passes a clean stream as it came", () => {
    const body = encoder.encode(sseBody("openai-responses", events({ callId: "call_2", done: true }, "completed")));
    const { output, reencoder } = reencode("openai-responses", body, [7]);
    expect(reencoder.repairs).toEqual([]);
    expect(new TextDecoder().decode(output)).toBe(new TextDecoder().decode(body));
  });

  it("withholds a call cut by max_output_tokens, also from the terminal response's output", () => {
    const body = encoder.encode(sseBody("openai-responses", events({ callId: "call_2", done: false }, "incomplete")));
    const original = decodeBytes("openai-responses", body);
    expect(original.toolCalls.map((c) => c.error?.code ?? null)).toEqual([null, "truncated"]);
    const { output, reencoder } = reencode("openai-responses", body, [13]);
    const text = new TextDecoder().decode(output);
    expect(text).not.toContain("fc_2");
    expect(decodeBytes("openai-responses", output).toolCalls.map((c) => c.id)).toEqual(["call_1"]);
    expect(reencoder.repairs).toContainEqual(expect.objectContaining({ action: "withheld", code: "truncated" }));
  });

  it("gives a duplicate call id the id toolwire minted, in the events and in the terminal output", () => {
    const body = encoder.encode(sseBody("openai-responses", events({ callId: "call_1", done: true }, "completed")));
    const original = decodeBytes("openai-responses", body);
    const ids = original.toolCalls.map((c) => c.id);
    const { output } = reencode("openai-responses", body);
    const again = decodeBytes("openai-responses", output);
    expect(again.toolCalls.map((c) => ({ id: c.id, arguments: c.arguments }))).toEqual(original.toolCalls.map((c) => ({ id: c.id, arguments: c.arguments })));
    // The decoder mints an id for the repeat: the client must see it too, in every place it reads ids from.
    expect(new Set(ids).size).toBe(2);
    const completed = new TextDecoder().decode(output).split("\n\n").find((event) => event.includes("response.completed")) ?? "";
    expect(completed).toContain(ids[1] as string);
    expect(again.toolCalls.every((c) => c.repairs.length === 0)).toBe(true);
  });

  it("re-sends a rewritten call as a function_call even when its output_item.done names a damaged type", () => {
    // Found by fuzzing: an invalid UTF-8 byte inside "function_call" of the done item. The decoder
    // keeps the call the added item opened; the re-sent item must still read as a call.
    const stream = events({ callId: "call_1", done: true }, "completed").map((event) => {
      const data = event.data as { type: string; item?: { id: string; type: string } };
      return data.type === "response.output_item.done" && data.item?.id === "fc_2" ? { ...event, data: { ...data, item: { ...data.item, type: "functi\ufffdon_call" } } } : event;
    });
    const body = encoder.encode(sseBody("openai-responses", stream));
    const original = decodeBytes("openai-responses", body);
    expect(original.toolCalls).toHaveLength(2);
    const { output, reencoder } = reencode("openai-responses", body, [11]);
    expect(reencoder.repairs).toContainEqual(expect.objectContaining({ action: "rewritten" }));
    const again = decodeBytes("openai-responses", output);
    expect(again.toolCalls.map((c) => ({ id: c.id, name: c.name, arguments: c.arguments }))).toEqual(original.toolCalls.map((c) => ({ id: c.id, name: c.name, arguments: c.arguments })));
  });

  it("makes calls that only the terminal response holds agree with the decoder: invalid ones withheld, repaired ones rewritten", () => {
    // Found by fuzzing: the call items' own events never came, only response.completed lists them.
    const bad = '{"command" "ls"}';
    const output = [fnItem("fc_1", "call_1", "shell", bad), fnItem("fc_2", "call_2", "shell", '{"command":"pwd"}'), fnItem("fc_3", "call_2", "shell", '{"command":"id"}')];
    const stream = [ev("response.created", { response: { id: "resp_1", status: "in_progress", output: [] } }), ev("response.completed", { response: { id: "resp_1", status: "completed", output } })];
    const body = encoder.encode(sseBody("openai-responses", stream));
    const original = decodeBytes("openai-responses", body);
    expect(original.toolCalls.map((c) => c.error?.code ?? null)).toEqual(["invalid_json", null, null]);
    const runnable = original.toolCalls.filter((c) => c.arguments !== null).map((c) => ({ id: c.id, arguments: c.arguments }));
    expect(new Set(runnable.map((c) => c.id)).size).toBe(2);
    for (const sizes of [[body.length], [7]]) {
      const { output: reencoded, reencoder } = reencode("openai-responses", body, sizes);
      const again = decodeBytes("openai-responses", reencoded);
      expect(again.toolCalls.map((c) => ({ id: c.id, arguments: c.arguments }))).toEqual(runnable);
      expect(again.toolCalls.every((c) => c.error === null && c.repairs.length === 0)).toBe(true);
      expect(new TextDecoder().decode(reencoded)).not.toContain("fc_1");
      expect(reencoder.repairs).toContainEqual(expect.objectContaining({ action: "withheld", code: "invalid_json" }));
    }
  });

  it("withholds a closed call whose arguments are not JSON, decided when the response ends", () => {
    const bad = '{"command" "ls"}';
    const stream = [
      ev("response.created", { response: { id: "resp_1", status: "in_progress", output: [] } }),
      ...call(0, "fc_1", "call_1", bad),
      ...call(1, "fc_2", "call_2", '{"command":"pwd"}'),
      ev("response.completed", { response: { id: "resp_1", status: "completed", output: [fnItem("fc_1", "call_1", "shell", bad), fnItem("fc_2", "call_2", "shell", '{"command":"pwd"}')] } }),
    ];
    const body = encoder.encode(sseBody("openai-responses", stream));
    expect(decodeBytes("openai-responses", body).toolCalls.map((c) => c.error?.code ?? null)).toEqual(["invalid_json", null]);
    for (const sizes of [[body.length], [9]]) {
      const { output, reencoder } = reencode("openai-responses", body, sizes);
      const again = decodeBytes("openai-responses", output);
      expect(again.toolCalls.map((c) => [c.id, c.arguments])).toEqual([["call_2", { command: "pwd" }]]);
      expect(new TextDecoder().decode(output)).not.toContain("fc_1");
      expect(reencoder.repairs).toContainEqual(expect.objectContaining({ action: "withheld", code: "invalid_json" }));
    }
  });
});

describe("Responses re-encoding: an item at an output_index an earlier call had", () => {
  it("is decided by its own call, never by the earlier one's (which would deliver that call twice)", () => {
    const first = '{"command":"ls"}';
    const stream = [
      ev("response.created", { response: { id: "resp_2", status: "in_progress", output: [] } }),
      ev("response.output_item.done", { output_index: 0, item: fnItem("fc_done_only", "call_1", "shell", first) }),
      ...call(0, "fc_2", "call_2", '{"command":"cat README.md"}', false),
    ];
    const body = encoder.encode(sseBody("openai-responses", stream));
    const original = decodeBytes("openai-responses", body);
    expect(original.toolCalls.map((c) => [c.id, c.arguments])).toEqual([
      ["call_1", { command: "ls" }],
      ["call_2", null],
    ]);
    const { output, reencoder } = reencode("openai-responses", body, [9]);
    expect(decodeBytes("openai-responses", output).toolCalls.map((c) => [c.id, c.arguments])).toEqual([["call_1", { command: "ls" }]]);
    expect(reencoder.repairs).toEqual([expect.objectContaining({ action: "withheld", code: "truncated", id: "call_2" })]);
  });
});

describe("Responses re-encoding: items the decoder knows by id alone", () => {
  const withoutIndex = (events: ProviderEvent[]): ProviderEvent[] =>
    events.map((event) => {
      const { output_index: _index, ...data } = event.data as Record<string, unknown>;
      return { ...event, data };
    });

  it("holds a call item sent without output_index: withheld when cut, delivered when whole", () => {
    const whole = [ev("response.created", { response: { id: "resp_3", status: "in_progress", output: [] } }), ...withoutIndex(call(0, "fc_w", "call_w", '{"command":"ls"}'))];
    const cut = [ev("response.created", { response: { id: "resp_4", status: "in_progress", output: [] } }), ...withoutIndex(call(0, "fc_c", "call_c", '{"command":"rm -rf build"}', false))];
    for (const sizes of [[1 << 20], [11]]) {
      const a = reencode("openai-responses", encoder.encode(sseBody("openai-responses", whole)), sizes);
      expect(decodeBytes("openai-responses", a.output).toolCalls.map((c) => [c.id, c.arguments])).toEqual([["call_w", { command: "ls" }]]);
      const b = reencode("openai-responses", encoder.encode(sseBody("openai-responses", cut)), sizes);
      expect(decodeBytes("openai-responses", b.output).toolCalls).toEqual([]);
      expect(b.reencoder.repairs).toEqual([expect.objectContaining({ action: "withheld", code: "truncated", id: "call_c" })]);
    }
  });

  it("does not forward a second output_item.added for the same item, which the decoder ignores", () => {
    const events = call(0, "fc_d", "call_d", '{"command":"ls"}');
    const stream = [ev("response.created", { response: { id: "resp_5", status: "in_progress", output: [] } }), events[0] as ProviderEvent, ...events];
    const { output, reencoder } = reencode("openai-responses", encoder.encode(sseBody("openai-responses", stream)), [13]);
    expect(new TextDecoder().decode(output).match(/response\.output_item\.added/g)).toHaveLength(2);
    expect(reencoder.repairs).toEqual([expect.objectContaining({ action: "withheld", code: "item_added_twice" })]);
    expect(decodeBytes("openai-responses", output).toolCalls.map((c) => [c.id, c.arguments])).toEqual([["call_d", { command: "ls" }]]);
  });
});

describe("Responses re-encoding: events naming an item the decoder knows, at a held call's output_index", () => {
  const created = (id: string): ProviderEvent => ev("response.created", { response: { id, status: "in_progress", output: [] } });
  const calls = (bytes: Uint8Array) => decodeBytes("openai-responses", bytes).toolCalls.map((c) => [c.id, c.arguments]);

  it("does not end the held call with the repeated done of a call that arrived whole (found by fuzzing)", () => {
    const whole = ev("response.output_item.done", { output_index: 0, item: fnItem("fc_whole", "call_x", "x", "{}") });
    const stream = [created("resp_7"), whole, ...call(0, "fc_add", "call_add", '{"a":2,"b":3}').slice(0, -1), { ...whole, data: { ...(whole.data as object), sequence_number: seq++ } }];
    const input = encoder.encode(sseBody("openai-responses", stream));
    expect(calls(input)).toEqual([["call_x", {}], ["call_add", { a: 2, b: 3 }]]);
    for (const sizes of [[1 << 20], [7]]) {
      const { output, reencoder } = reencode("openai-responses", input, sizes);
      expect(calls(output)).toEqual([["call_x", {}], ["call_add", { a: 2, b: 3 }]]);
      // The add call never got its own output_item.done: it goes out rewritten when the stream ends.
      expect(reencoder.repairs.map((r) => [r.action, r.code])).toEqual([["withheld", "item_done_twice"], ["rewritten", "source_final"]]);
      expect(new TextDecoder().decode(output).match(/"fc_whole"/g)).toHaveLength(1);
    }
  });

  it("withholds an output_item.added without id at an index the decoder has an item for, and a done for an index whose call is over", () => {
    const idless = { type: "function_call", status: "in_progress", arguments: "", call_id: "call_dup", name: "shell" };
    const stream = [
      created("resp_9"),
      ...call(0, "fc_first", "call_first", '{"command":"ls"}'),
      ev("response.output_item.added", { output_index: 0, item: idless }),
      ev("response.output_item.done", { output_index: 0, item: fnItem("fc_unknown", "call_late", "shell", '{"command":"rm -rf /"}') }),
    ];
    const input = encoder.encode(sseBody("openai-responses", stream));
    // The decoder ignores both: the first call is the only one.
    expect(calls(input)).toEqual([["call_first", { command: "ls" }]]);
    const { output, reencoder } = reencode("openai-responses", input, [1 << 20]);
    expect(calls(output)).toEqual([["call_first", { command: "ls" }]]);
    expect(reencoder.repairs.map((r) => [r.action, r.code])).toEqual([["withheld", "item_added_twice"], ["withheld", "item_done_twice"]]);
    expect(new TextDecoder().decode(output)).not.toContain("rm -rf");
  });

  it("passes a message item's events at the index of a held call on as they are, and delivers the call", () => {
    const stream = [
      created("resp_8"),
      ev("response.output_item.added", { output_index: 0, item: { id: "msg_1", type: "message", status: "in_progress", role: "assistant", content: [] } }),
      ...call(0, "fc_s", "call_s", '{"command":"ls"}').slice(0, 3),
      ev("response.output_text.delta", { item_id: "msg_1", output_index: 0, content_index: 0, delta: "Listing." }),
      ev("response.output_item.done", { output_index: 0, item: { id: "msg_1", type: "message", status: "completed", role: "assistant", content: [{ type: "output_text", text: "Listing." }] } }),
      ...call(0, "fc_s", "call_s", '{"command":"ls"}').slice(3),
    ];
    const input = encoder.encode(sseBody("openai-responses", stream));
    const original = decodeBytes("openai-responses", input);
    expect(original.text).toBe("Listing.");
    const { output } = reencode("openai-responses", input, [1 << 20]);
    const decoded = decodeBytes("openai-responses", output);
    expect(decoded.text).toBe("Listing.");
    expect(decoded.toolCalls.map((c) => [c.id, c.arguments])).toEqual(original.toolCalls.map((c) => [c.id, c.arguments]));
  });
});

describe("Responses re-encoding: two items at one output_index", () => {
  it("each item is decided by its own calls (matched by item id), never by the other's", () => {
    const stream = [
      ev("response.created", { response: { id: "resp_6", status: "in_progress", output: [] } }),
      ev("response.output_item.added", { output_index: 0, item: fnItem("fc_other", "call_1", "shell", "", "in_progress") }),
      ...call(0, "fc_real", "call_1", '{"command":"ls"}'),
    ];
    const body = encoder.encode(sseBody("openai-responses", stream));
    const original = decodeBytes("openai-responses", body);
    const runnableOf = (turn: typeof original) => turn.toolCalls.filter((c) => c.arguments !== null).map((c) => [c.id, c.name, c.arguments]);
    expect(runnableOf(original)).toEqual([["call_1_tw2", "shell", { command: "ls" }]]);
    for (const sizes of [[1 << 20], [7]]) {
      const { output } = reencode("openai-responses", body, sizes);
      expect(runnableOf(decodeBytes("openai-responses", output))).toEqual(runnableOf(original));
    }
  });
});

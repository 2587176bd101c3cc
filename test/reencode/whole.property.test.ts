import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { repairWholeResponse } from "../../src/reencode/whole.js";
import type { ProviderName } from "../../src/types.js";
import { expectSoundRepair, runnable } from "./whole-support.js";

/**
 * For any generated whole Chat or Anthropic response with the quirks servers send (duplicate,
 * missing and placeholder ids, arguments that need a lossless repair, glued objects, invalid or
 * cut arguments, non-object arguments, every stop reason): the repaired body decodes to exactly
 * the runnable calls toolwire decodes from the original, each well-formed, a body that needed no
 * fix comes back as the same object, and repairing the repaired body changes nothing (under a
 * length stop it only withholds the call that became last: see `expectSoundRepair`).
 */

const args = fc.dictionary(fc.constantFrom("path", "command", "n", "flag", "items"), fc.oneof(fc.string({ maxLength: 12 }), fc.integer(), fc.boolean(), fc.array(fc.integer(), { maxLength: 3 })), { minKeys: 0, maxKeys: 3 });

type ArgumentsForm = "json" | "spaced" | "single_quotes" | "trailing_comma" | "glued" | "cut" | "invalid" | "not_object" | "empty";

/** The arguments text a server may send for `value`. */
function argumentsText(value: Record<string, unknown>, form: ArgumentsForm): string {
  const json = JSON.stringify(value);
  switch (form) {
    case "json":
      return json;
    case "spaced":
      return JSON.stringify(value, null, 1);
    case "single_quotes":
      return json.replace(/"/g, "'");
    case "trailing_comma":
      return Object.keys(value).length > 0 ? `${json.slice(0, -1)},}` : json;
    case "glued":
      return `${json}{"n":2}`;
    case "cut":
      return json.slice(0, Math.max(1, json.length - 3));
    case "invalid":
      return `{${json}`;
    case "not_object":
      return "[1,2]";
    case "empty":
      return "";
  }
}

const forms = fc.constantFrom<ArgumentsForm>("json", "json", "json", "spaced", "single_quotes", "trailing_comma", "glued", "cut", "invalid", "not_object", "empty");
const ids = fc.constantFrom<"unique" | "duplicate" | "missing" | "placeholder">("unique", "unique", "unique", "duplicate", "missing", "placeholder");
const names = fc.constantFrom("read_file", "search", "run", "");

const chatBody = fc
  .record({
    content: fc.option(fc.string({ maxLength: 12 }), { nil: null }),
    calls: fc.array(fc.record({ args, form: forms, id: ids, name: names, asObject: fc.boolean() }), { maxLength: 4 }),
    finish: fc.constantFrom("tool_calls", "stop", "length", "eos", null),
    usage: fc.boolean(),
  })
  .map(({ content, calls, finish, usage }) => ({
    id: "chatcmpl-gen",
    object: "chat.completion",
    model: "m",
    choices: [
      {
        index: 0,
        message: {
          role: "assistant",
          content,
          ...(calls.length > 0
            ? {
                tool_calls: calls.map((call, n) => ({
                  ...(call.id === "unique" ? { id: `call_${n}` } : call.id === "duplicate" ? { id: "call_0" } : call.id === "placeholder" ? { id: "None" } : {}),
                  type: "function",
                  // Some servers (LiteLLM over Ollama) send arguments as an object.
                  function: { name: call.name, arguments: call.asObject && call.form === "json" ? call.args : argumentsText(call.args, call.form) },
                })),
              }
            : {}),
        },
        finish_reason: finish,
      },
    ],
    ...(usage ? { usage: { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 } } : {}),
  }));

const anthropicBody = fc
  .record({
    text: fc.option(fc.string({ minLength: 1, maxLength: 12 }), { nil: undefined }),
    calls: fc.array(fc.record({ args, form: forms, id: ids, name: names, asString: fc.boolean(), textAfter: fc.boolean() }), { maxLength: 4 }),
    stop: fc.constantFrom("tool_use", "end_turn", "max_tokens", "pause_turn"),
  })
  .map(({ text, calls, stop }) => {
    const content: unknown[] = text !== undefined ? [{ type: "text", text }] : [];
    calls.forEach((call, n) => {
      content.push({
        type: "tool_use",
        ...(call.id === "unique" ? { id: `toolu_${n}` } : call.id === "duplicate" ? { id: "toolu_0" } : call.id === "placeholder" ? { id: "null" } : {}),
        name: call.name,
        // The API sends an object; compatible servers send the JSON text.
        input: call.asString ? argumentsText(call.args, call.form) : call.form === "not_object" ? [1, 2] : call.args,
      });
      if (call.textAfter) content.push({ type: "text", text: "and then" });
    });
    return { id: "msg_gen", type: "message", role: "assistant", model: "m", content, stop_reason: stop, stop_sequence: null, usage: { input_tokens: 1, output_tokens: 2 } };
  });

const callId = (id: "unique" | "duplicate" | "missing" | "placeholder", n: number, prefix: string, key: string): Record<string, unknown> =>
  id === "unique" ? { [key]: `${prefix}${n}` } : id === "duplicate" ? { [key]: `${prefix}0` } : id === "placeholder" ? { [key]: "null" } : {};

const call = fc.record({ args, form: forms, id: ids, name: names, asText: fc.boolean() });

const responsesBody = fc.record({ calls: fc.array(call, { maxLength: 4 }), incomplete: fc.boolean(), reasoning: fc.boolean() }).map(({ calls, incomplete, reasoning }) => ({
  id: "resp_gen",
  object: "response",
  status: incomplete ? "incomplete" : "completed",
  ...(incomplete ? { incomplete_details: { reason: "max_output_tokens" } } : {}),
  output: [
    ...(reasoning ? [{ id: "rs_1", type: "reasoning", summary: [] }] : []),
    ...calls.map((c, n) => ({ id: `fc_${n}`, type: "function_call", status: incomplete && n === calls.length - 1 ? "incomplete" : "completed", ...callId(c.id, n, "call_", "call_id"), name: c.name, arguments: argumentsText(c.args, c.form) })),
  ],
}));

const converseBody = fc.record({ calls: fc.array(call, { maxLength: 4 }), stop: fc.constantFrom("tool_use", "end_turn", "max_tokens") }).map(({ calls, stop }) => ({
  output: { message: { role: "assistant", content: [{ text: "ok" }, ...calls.map((c, n) => ({ toolUse: { ...callId(c.id, n, "tooluse_", "toolUseId"), name: c.name, input: c.asText ? argumentsText(c.args, c.form) : c.args } }))] } },
  stopReason: stop,
  usage: { inputTokens: 1, outputTokens: 1, totalTokens: 2 },
}));

const geminiBody = fc.record({ calls: fc.array(call, { maxLength: 4 }), finish: fc.constantFrom("STOP", "MAX_TOKENS"), signature: fc.boolean() }).map(({ calls, finish, signature }) => ({
  candidates: [
    {
      content: { role: "model", parts: calls.map((c, n) => ({ functionCall: { ...callId(c.id, n, "fc_", "id"), name: c.name, args: c.asText ? argumentsText(c.args, c.form) : c.args }, ...(signature && n === 0 ? { thoughtSignature: "c2ln" } : {}) })) },
      finishReason: finish,
      index: 0,
    },
  ],
  responseId: "r_gen",
}));

const ollamaBody = fc.array(call, { maxLength: 4 }).map((calls) => ({
  model: "m",
  created_at: "2025-01-01T00:00:00Z",
  message: { role: "assistant", content: "", tool_calls: calls.map((c, n) => ({ ...callId(c.id, n, "call_", "id"), function: { index: n, name: c.name, arguments: c.asText ? argumentsText(c.args, c.form) : c.args } })) },
  done: true,
  done_reason: "stop",
}));

function property(provider: ProviderName, body: Record<string, unknown>, compare: { addMissingIds?: boolean } = {}): void {
  const repair = expectSoundRepair(provider, body, compare);
  // Nothing delivered is withheld by the decoder, and nothing the decoder withheld is delivered.
  const delivered = runnable(repair.turn).map((call) => call.id);
  const withheld = (repair.turn?.toolCalls ?? []).filter((call) => call.arguments === null).map((call) => call.id);
  const reportedWithheld = repair.repairs.filter((report) => report.action === "withheld").map((report) => report.id);
  expect(reportedWithheld.sort()).toEqual([...withheld].sort());
  expect(delivered.some((id) => id !== undefined && withheld.includes(id))).toBe(false);
  // Unchanged exactly when every call was decoded as sent.
  if (!repair.changed) expect(repair.repairs).toEqual([]);
}

describe("repairWholeResponse, generated bodies", () => {
  it("Chat Completions", () => {
    fc.assert(fc.property(chatBody, (body) => property("openai-chat", body)), { numRuns: 400 });
  });

  it("Anthropic Messages", () => {
    fc.assert(fc.property(anthropicBody, (body) => property("anthropic", body)), { numRuns: 400 });
  });

  it("Responses, Bedrock Converse, Gemini (Gemini API and Vertex) and Ollama", () => {
    fc.assert(fc.property(responsesBody, (body) => property("openai-responses", body)), { numRuns: 200 });
    fc.assert(fc.property(converseBody, (body) => property("bedrock", body)), { numRuns: 200 });
    fc.assert(fc.property(geminiBody, fc.boolean(), (body, vertex) => property("gemini", body, { addMissingIds: !vertex })), { numRuns: 200 });
    fc.assert(fc.property(ollamaBody, (body) => property("ollama", body)), { numRuns: 200 });
  });

  it("never throws, for any JSON value, in any protocol", () => {
    fc.assert(
      fc.property(fc.constantFrom<ProviderName>("anthropic", "openai-chat", "openai-responses", "gemini", "bedrock", "ollama"), fc.jsonValue({ maxDepth: 5 }), (provider, value) => {
        const repair = repairWholeResponse(provider, value);
        if (!repair.changed) expect(repair.body).toBe(value);
      }),
      { numRuns: 300 },
    );
  });
});

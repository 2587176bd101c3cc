import { readFileSync } from "node:fs";
import { join } from "node:path";
import YAML from "yaml";
import { describe, expect, it } from "vitest";
import { describeCorpus } from "../helpers/corpus.js";
import { expectedStreamOf, type Expectation } from "../../src/conformance/expectation.js";
import { replayEvents } from "../../src/replay.js";
import type { DecodedTurn } from "../../src/types.js";
import { CORPUS, testdataFiles } from "../helpers/testdata.js";

/**
 * Every recorded Anthropic-protocol stream decodes to the calls its provider returned.
 * Three independent checks: the reviewed expectation beside each file, the follow-up request of
 * each cassette (the client sent the assistant's tool_use blocks back, so the recording itself
 * says what the calls were), and hand-read assertions for files without a follow-up.
 */

const files = testdataFiles("anthropic");
const decoded = new Map(files.map((file) => [file.name, file.streams.map((stream) => replayEvents(stream, { provider: "anthropic" }))]));
const turnsOf = (name: string): DecodedTurn[] => {
  const turns = decoded.get(name);
  if (!turns) throw new Error(`no testdata file ${name}`);
  return turns;
};

describe("every Anthropic testdata file matches its reviewed expectation", () => {
  it.each(files.map((file) => [file.name, file] as const))("%s", (_name, file) => {
    const expectation = JSON.parse(readFileSync(file.expectationPath, "utf8")) as Expectation;
    expect(expectation.verifiedBy).not.toMatch(/DRAFT/);
    expect(turnsOf(file.name).map(expectedStreamOf)).toEqual(expectation.streams);
  });

  it("no recorded stream fails to decode and no recorded call is invalid (the project's own streams include invalid calls on purpose)", () => {
    for (const turns of files.filter((file) => file.upstream !== null).map((file) => turnsOf(file.name))) {
      for (const turn of turns) {
        expect(turn.diagnostics.filter((d) => d.code === "internal_error")).toEqual([]);
        for (const call of turn.toolCalls) expect(call.error?.code ?? "ok").not.toBe("invalid_json");
      }
    }
  });
});

describeCorpus("upstream", "the upstream corpus: Anthropic recordings", () => {
  interface Block {
    type: string;
    id?: string;
    name?: string;
    input?: unknown;
  }

  /** tool_use / server_tool_use blocks in the assistant messages of a cassette request. */
  function requestCalls(request: Record<string, unknown>): Block[] {
    let body: unknown = request.parsed_body ?? request.body;
    if (typeof body === "string") body = JSON.parse(body);
    if (body && typeof body === "object" && typeof (body as { string?: unknown }).string === "string") body = JSON.parse((body as { string: string }).string);
    const messages = ((body as { messages?: Array<{ role: string; content: unknown }> }).messages ?? []).filter((m) => m.role === "assistant");
    return messages.flatMap((m) => (Array.isArray(m.content) ? (m.content as Block[]) : [])).filter((b) => b.type === "tool_use" || b.type === "server_tool_use");
  }

  describe("the recording's follow-up request is the oracle", () => {
    const cassettes = files.filter((file) => file.upstream?.endsWith(".yaml"));

    it("covers every cassette with tool calls", () => {
      expect(cassettes.map((file) => file.name).length).toBeGreaterThanOrEqual(6);
    });

    it.each(cassettes.map((file) => [file.name, file] as const))("%s", (_name, file) => {
      const doc = YAML.parse(readFileSync(join(CORPUS as string, file.upstream as string), "utf8")) as { interactions: Array<{ request: Record<string, unknown> }> };
      const turns = turnsOf(file.name);
      let checked = 0;
      for (let i = 0; i + 1 < doc.interactions.length; i++) {
        const before = new Set(requestCalls(doc.interactions[i]?.request ?? {}).map((b) => b.id));
        const returned = requestCalls(doc.interactions[i + 1]?.request ?? {}).filter((b) => !before.has(b.id));
        const turn = turns.find((t) => t.sequence === `interaction-${i}`);
        expect(turn).toBeDefined();
        const decodedCalls = [...(turn as DecodedTurn).toolCalls, ...(turn as DecodedTurn).serverToolCalls].sort((x, y) => (x.providerIndex ?? 0) - (y.providerIndex ?? 0));
        // The follow-up may resend only the tail of a paused turn; every call it carries must match ours.
        for (const block of returned) {
          const call = decodedCalls.find((c) => c.id === block.id);
          expect(call, `call ${block.id} of interaction-${i}`).toBeDefined();
          expect([call?.name, call?.arguments, call?.kind]).toEqual([block.name, block.input, block.type === "tool_use" ? "client" : "server"]);
          checked++;
        }
      }
      expect(checked).toBeGreaterThan(0);
    });
  });

  describe("hand-read recordings", () => {
    it("Anthropic SDK fixture: one get_weather call split mid-word", () => {
      const [turn] = turnsOf("anthropics__anthropic-sdk-typescript__tool_use_response.ndjson");
      expect(turn?.toolCalls).toEqual([expect.objectContaining({ id: "toolu_01NRLabsLyVHZPKxbKvkfSMn", name: "get_weather", arguments: { location: "Paris" }, source: "delta", complete: true })]);
      expect(turn?.finishReason).toBe("tool_calls");
    });

    it("Anthropic SDK fixture: max_tokens mid-string truncates the call, text is kept", () => {
      const [turn] = turnsOf("anthropics__anthropic-sdk-typescript__incomplete_partial_json_response.ndjson");
      const call = turn?.toolCalls[0];
      expect(call).toMatchObject({ id: "toolu_01EKqbqmZrGRXy18eN7m9kvY", name: "make_file", complete: false, arguments: null, error: { code: "truncated", cause: "max_tokens" } });
      expect(call?.rawArguments.endsWith('\n"Filing taxes')).toBe(true);
      expect(turn?.finishReason).toBe("length");
      expect(turn?.text.length).toBeGreaterThan(0);
    });

    it("Kimi: all six sequences, the continuation merged", () => {
      const turns = turnsOf("danshapiro__kilroy__kimi_tool_call_sequences.ndjson");
      expect(turns.map((t) => [t.sequence, t.toolCalls[0]?.id, t.toolCalls[0]?.arguments, t.toolCalls[0]?.source])).toEqual([
        ["start_input_plus_delta_duplicate", "toolu_1", { command: "rg --files demo/rogue/original-rogue/*.c" }, "delta"],
        ["delta_only_valid_json", "toolu_2", { pattern: "*.c", path: "demo/rogue/original-rogue" }, "delta"],
        ["start_input_only_valid_json", "toolu_3", { command: "ls demo/rogue/original-rogue" }, "start"],
        ["start_input_null_plus_delta_valid_json", "toolu_4", { command: "echo ok" }, "delta"],
        ["start_input_plus_delta_continuation_invalid_json", "toolu_5", { pattern: "*.c", path: "demo/rogue/original-rogue" }, "merged"],
        ["start_input_empty_object_plus_delta_valid_json", "toolu_6", { command: "echo hi" }, "delta"],
      ]);
      expect(turns.every((t) => t.toolCalls[0]?.complete && t.toolCalls[0].error === null)).toBe(true);
    });

    it("vercel: a ping between two deltas of one block", () => {
      const [turn] = turnsOf("vercel__ai__anthropic-json-tool.2.ndjson");
      expect(turn?.toolCalls[0]).toMatchObject({ name: "json", arguments: { elements: [{ location: "San Francisco", temperature: 58, condition: "sunny" }] } });
    });

    it("vercel: a parameterless tool with a lone empty delta is {} from the empty source", () => {
      const [turn] = turnsOf("vercel__ai__anthropic-tool-no-args.ndjson");
      expect(turn?.toolCalls[0]).toMatchObject({ name: "updateIssueList", arguments: {}, source: "empty", complete: true, error: null });
    });

    it("vercel: a spliced second message_start keeps only the second attempt", () => {
      const [turn] = turnsOf("vercel__ai__spliced-message-start.ndjson");
      expect(turn?.toolCalls).toHaveLength(1);
      expect(turn?.toolCalls[0]).toMatchObject({ id: "toolu_second", arguments: { value: "Sparkle Day" } });
      expect(turn?.blocks[0]).toMatchObject({ type: "thinking", thinking: "Let me call the tool.", signature: "sig-second" });
      expect(turn?.diagnostics.map((d) => d.code)).toContain("message_restarted");
    });

    it("vercel: programmatic tool calling, 14 client calls with a caller, across 15 responses", () => {
      const turns = turnsOf("vercel__ai__anthropic-programmatic-tool-calling.1.ndjson");
      const calls = turns.flatMap((t) => t.toolCalls);
      expect(calls).toHaveLength(14);
      expect(calls.every((c) => c.name === "rollDie" && c.complete && c.providerFields?.caller !== undefined)).toBe(true);
      expect(calls.map((c) => (c.arguments as { player: string }).player)).toEqual(Array.from({ length: 14 }, (_, i) => `player${(i % 2) + 1}`));
      expect(turns[0]?.serverToolCalls[0]).toMatchObject({ name: "code_execution", kind: "server" });
    });

    it("thinking blocks keep their signature for history replay", () => {
      const [turn] = turnsOf("charmbracelet__fantasy__TestAnthropicThinking__claude-sonnet-4__thinking-streaming.ndjson");
      const thinking = turn?.blocks.find((b) => b.type === "thinking");
      expect(thinking).toMatchObject({ type: "thinking" });
      expect((thinking as { signature: string }).signature.length).toBeGreaterThan(20);
      expect(turn?.reasoning.length).toBeGreaterThan(0);
    });
  });
});

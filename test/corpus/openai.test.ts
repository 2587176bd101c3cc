import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { describeCorpus } from "../helpers/corpus.js";
import { createByteDecoder } from "../../src/adapters/bytes.js";
import { expectedStreamOf, type Expectation } from "../../src/conformance/expectation.js";
import { detectProvider } from "../../src/providers/detect.js";
import { replayEvents } from "../../src/replay.js";
import type { DecodedTurn, ProviderName } from "../../src/types.js";
import { followUpCalls, type SentBackCall } from "../helpers/followup-oracle.js";
import { CORPUS, testdataFiles, type TestdataFile } from "../helpers/testdata.js";
import { cassetteBodies, unnamed } from "./support.js";

/**
 * Every OpenAI-protocol stream in testdata/ (Chat Completions and Responses, recorded and
 * hand-written) decodes to the calls its provider sent. Checked three ways: the reviewed
 * expectation beside each file; for cassettes, the follow-up request, in which the recording
 * client sent the assistant's calls back (an oracle independent of toolwire); and hand-read
 * assertions on the files that have neither.
 */

const PROVIDERS = ["openai-chat", "openai-responses"] as const;
const filesOf = new Map<ProviderName, TestdataFile[]>(PROVIDERS.map((provider) => [provider, testdataFiles(provider)]));
const decoded = new Map<string, DecodedTurn[]>();
for (const [provider, files] of filesOf) {
  for (const file of files) decoded.set(`${provider}/${file.name}`, file.streams.map((stream) => replayEvents(stream, { provider })));
}
const turnsOf = (provider: ProviderName, name: string): DecodedTurn[] => {
  const turns = decoded.get(`${provider}/${name}`);
  if (!turns) throw new Error(`no testdata file ${provider}/${name}`);
  return turns;
};

describe.each(PROVIDERS)("every %s testdata file matches its reviewed expectation", (provider) => {
  const files = filesOf.get(provider) ?? [];

  it.each(files.map((file) => [file.name, file] as const))("%s", (_name, file) => {
    const expectation = JSON.parse(readFileSync(file.expectationPath, "utf8")) as Expectation;
    expect(expectation.provider).toBe(provider);
    expect(expectation.verifiedBy ?? "").not.toMatch(/DRAFT|^$/);
    expect(turnsOf(provider, file.name).map(expectedStreamOf)).toEqual(expectation.streams);
  });

  it("no stream hits an internal error, and the provider is recognized from the payloads alone", () => {
    for (const file of files) {
      for (const [i, turn] of turnsOf(provider, file.name).entries()) {
        expect(turn.diagnostics.filter((d) => d.code === "internal_error")).toEqual([]);
        expect(detectProvider(file.streams[i]?.events ?? [])).toBe(provider);
      }
    }
  });
});

describeCorpus("upstream", "the upstream corpus: OpenAI recordings", () => {
  describe("every OpenAI-protocol file of the upstream corpus is imported", () => {
    it("MANIFEST rows for OpenAI Chat, compatible hosts, llama.cpp and Responses each have a testdata file", () => {
      const manifest = readFileSync(join(CORPUS as string, "MANIFEST.md"), "utf8");
      const rows = [...manifest.matchAll(/^\| (\d+) \| `([^`]+)` \| [^|]+\| [^|]+\| [^|]+\| [^|]+\| ([^|]+)\|/gm)];
      const openai = rows.filter((row) => /OpenAI|llama\.cpp/.test(row[3] as string)).map((row) => row[2] as string);
      expect(openai.length).toBe(29);
      const imported = new Set([...filesOf.values()].flat().map((file) => file.upstream));
      expect(openai.filter((local) => !imported.has(local))).toEqual([]);
    });
  });

  /** Deliberate, explained differences between a follow-up request and the stream it follows. */
  function sameId(file: string, turn: DecodedTurn, decodedId: string, sentId: string): boolean {
    // pydantic-ai namespaces Bedrock Mantle's reused call ids (call_0, call_1 in every turn) with the response id.
    if (file.includes("bedrock_mantle")) return sentId === `${turn.messageId}:${decodedId}`;
    // The simonw variants share one follow-up body whose id is "0"; variant c's stream says llm_version:0 (checked below).
    if (file.includes("test_tools_streaming_variant_c")) return sentId === "0" && decodedId === "llm_version:0";
    return sentId === decodedId;
  }

  describe("the recording's follow-up request is the oracle", () => {
    const cassettes = PROVIDERS.flatMap((provider) => (filesOf.get(provider) ?? []).filter((file) => file.upstream?.endsWith(".yaml")).map((file) => [provider, file] as const));

    /** Single-interaction cassettes: nothing was sent back, their expectation is hand-read. */
    const NO_FOLLOW_UP = ["pydantic__pydantic-ai__test_openai_responses__test_openai_responses_streaming_usage.ndjson"];

    it("covers the cassettes", () => {
      expect(cassettes.length).toBe(18);
    });

    it.each(cassettes.map(([provider, file]) => [file.name, provider, file] as const))("%s", (_name, provider, file) => {
      const sentBack = followUpCalls(join(CORPUS as string, file.upstream as string));
      if (sentBack.size === 0) {
        expect(NO_FOLLOW_UP).toContain(file.name);
        return;
      }
      const turns = turnsOf(provider, file.name);
      let checked = 0;
      for (const [sequence, calls] of sentBack) {
        const turn = turns.find((t) => t.sequence === sequence) as DecodedTurn;
        expect(turn, sequence).toBeDefined();
        if (turn.status === "error") {
          // Groq's tool_use_failed: the stream sent no call; the client built one from failed_generation.
          expect(turn.toolCalls).toEqual([]);
          expect(JSON.stringify(turn.error?.raw)).toContain("failed_generation");
          continue;
        }
        expect(turn.toolCalls.length, sequence).toBe(calls.length);
        calls.forEach((sent: SentBackCall, i) => {
          const call = turn.toolCalls[i];
          expect(call?.complete).toBe(true);
          expect(sameId(file.name, turn, call?.id ?? "", sent.id), `${sequence} call ${i}: ${call?.id} vs ${sent.id}`).toBe(true);
          expect([call?.name, call?.arguments]).toEqual([sent.name, sent.arguments]);
          checked++;
        });
      }
      expect(checked).toBeGreaterThan(0);
    });

    it("simonw variant c: the id the stream carries is llm_version:0", () => {
      const [first] = (filesOf.get("openai-chat") ?? []).find((file) => file.name.includes("variant_c"))?.streams ?? [];
      expect(JSON.stringify(first?.events)).toContain('"id":"llm_version:0"');
    });
  });

  describe("the raw upstream bodies decode like the imported records", () => {
    const raw = PROVIDERS.flatMap((provider) =>
      (filesOf.get(provider) ?? []).filter((file) => file.upstream?.endsWith(".yaml") || file.upstream?.endsWith(".sse")).map((file) => [file.name, provider, file] as const),
    );

    it.each(raw)("%s", (_name, provider, file) => {
      const local = file.upstream as string;
      const bodies = local.endsWith(".sse") ? [readFileSync(join(CORPUS as string, local), "utf8")] : cassetteBodies(local);
      const turns = turnsOf(provider, file.name);
      expect(bodies.length).toBe(turns.length);
      bodies.forEach((body, i) => {
        const decoder = createByteDecoder(provider);
        decoder.push(typeof body === "string" ? body : new Uint8Array(body));
        const turn = decoder.finish();
        // Framing findings (a hand-edited line SSE ignores) are noted in the file header by the importer instead.
        const framing = turn.diagnostics.filter((d) => d.code.startsWith("sse_"));
        for (const diagnostic of framing) expect(file.text).toContain(`SSE framing: ${diagnostic.message}`);
        expect(unnamed({ ...turn, diagnostics: turn.diagnostics.filter((d) => !framing.includes(d)) })).toEqual(unnamed(turns[i] as DecodedTurn));
      });
    });
  });

  describe("hand-read recordings without a follow-up request", () => {
    const chat = (name: string) => turnsOf("openai-chat", name);
    const responses = (name: string) => turnsOf("openai-responses", name);

    it("pydantic temporal interaction-2: final_result from ~50 fragments", () => {
      const turn = chat("pydantic__pydantic-ai__test_temporal__test_complex_agent_run.ndjson")[2];
      expect(turn?.toolCalls[0]).toMatchObject({ id: "call_CCGIWaMeYWmxOQ91orkmTvzn", name: "final_result", complete: true, source: "delta" });
      expect((turn?.toolCalls[0]?.arguments as { answers: unknown[] }).answers).toHaveLength(3);
    });

    it("Groq tool_use_failed: status error, reasoning kept, no call", () => {
      const [turn] = chat("pydantic__pydantic-ai__test_groq__test_tool_use_failed_error_streaming.ndjson");
      expect(turn).toMatchObject({ status: "error", finishReason: "error", error: { type: "invalid_request_error" }, toolCalls: [] });
      expect(turn?.reasoning.length).toBeGreaterThan(0);
    });

    it("Alibaba: id only on the first fragment, id \"\" on continuations", () => {
      const [turn] = chat("vercel__ai__alibaba-tool-call.ndjson");
      expect(turn?.toolCalls).toEqual([expect.objectContaining({ id: "call_eee11723464a4b9eb8cee71d", name: "weather", arguments: { location: "San Francisco" } })]);
      expect(turn?.diagnostics).toEqual([]);
    });

    it("Anthropic's compat endpoint: the call at index 1", () => {
      const [turn] = chat("vercel__ai__anthropic-fallback-tool-call.ndjson");
      expect(turn?.toolCalls[0]).toMatchObject({ id: "toolu_sanitized", name: "read_file", arguments: { path: "a.txt" }, providerIndex: 1 });
      expect(turn?.text).toBe("Reading it.");
    });

    it("DeepSeek and xAI: reasoning kept apart from text", () => {
      for (const name of ["vercel__ai__deepseek-tool-call.ndjson", "vercel__ai__xai-tool-call.ndjson"]) {
        const [turn] = chat(name);
        expect(turn?.text).toBe("");
        expect(turn?.reasoning.length).toBeGreaterThan(100);
        expect(turn?.toolCalls[0]).toMatchObject({ name: "weather", arguments: { location: "San Francisco" } });
      }
    });

    it("OpenAI Responses usage fixture: six deltas, reasoning item with encrypted content", () => {
      const [turn] = responses("pydantic__pydantic-ai__test_openai_responses__test_openai_responses_streaming_usage.ndjson");
      expect(turn?.toolCalls[0]).toMatchObject({ id: "call_CWXgs68YprAjp6t0371hiPOI", name: "final_result", arguments: { result: 6666 }, source: "final" });
      expect(turn?.blocks[0]).toMatchObject({ type: "reasoning", id: "rs_0050471a34b36ae60068c97bac4dcc819595fd0f80d6b3c405" });
      expect((turn?.blocks[0] as { encryptedContent?: string }).encryptedContent).toMatch(/^gAAAA/);
      expect(turn?.usage).toMatchObject({ reasoningTokens: 448 });
    });

    it("LM Studio: no argument deltas, the .done arguments are the final source", () => {
      const [turn] = responses("vercel__ai__lmstudio-tool-call.1.ndjson");
      expect(turn?.toolCalls[0]).toMatchObject({ id: "call_2025306790300011", name: "weather", arguments: { location: "San Francisco" }, source: "final" });
      expect(turn?.reasoning.length).toBeGreaterThan(100);
    });

    it("custom tool: free-text SQL as {input}", () => {
      const [turn] = responses("vercel__ai__openai-custom-tool.1.ndjson");
      expect(turn?.toolCalls[0]).toMatchObject({ id: "call_custom_sql_001", name: "write_sql", arguments: { input: "SELECT * FROM users WHERE age > 25" }, providerFields: { customToolInput: true } });
    });

    it("mid-stream error: nested error object then response.failed", () => {
      const [turn] = responses("vercel__ai__openai-error.1.ndjson");
      expect(turn).toMatchObject({ status: "error", error: { type: "insufficient_quota" }, toolCalls: [] });
    });

    it("parallel wrapper: expanded; the fixture's malformed terminal line leaves the turn incomplete", () => {
      const [turn] = responses("vercel__ai__parallel-tool-call-wrapper.1.ndjson");
      expect(turn?.toolCalls.map((call) => [call.name, call.arguments])).toEqual([
        ["weather", { location: "San Francisco" }],
        ["cityAttractions", { city: "Rome" }],
      ]);
      expect(turn?.status).toBe("incomplete");
      expect(turn?.diagnostics.map((d) => d.code)).toEqual(["non_json_data", "parallel_wrapper_expanded", "non_json_data", "stream_ended_without_terminal_event"]);
    });
  });
});

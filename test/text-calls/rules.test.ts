import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { extractTextCalls, MAX_HELD_CALL, MAX_HELD_REASONING, TextCallExtractor, type ExtractedTextCall } from "../../src/text-calls/extractor.js";
import { resolveTextCallOptions, type TextCallSetting } from "../../src/text-calls/options.js";
import { cutText, renderTextCall, type TextCallSpec } from "../../src/testing/text-calls.js";
import { createDecoder } from "../../src/providers/registry.js";
import type { ProviderEvent } from "../../src/types.js";
import { c, chatStream } from "../helpers/openai-events.js";

/**
 * Issue 30: read what the server-side parsers (vLLM, SGLang, llama.cpp) read, and nothing they
 * reject. Each case names the public parser test or chat template it follows.
 */

function run(pieces: readonly string[], setting: TextCallSetting = "auto", cause: "stream_ended" | "max_tokens" = "stream_ended") {
  const out = { text: "", reasoning: "", calls: [] as ExtractedTextCall[], diagnostics: [] as string[] };
  let current: ExtractedTextCall | null = null;
  const extractor = new TextCallExtractor(resolveTextCallOptions(setting)!, {
    text: (t) => void (out.text += t),
    reasoning: (t) => void (out.reasoning += t),
    open: (name, syntax) => {
      current = { name, syntax, argumentText: "", complete: false };
      out.calls.push(current);
    },
    args: (f) => void ((current as ExtractedTextCall).argumentText += f),
    close: (complete, why) => {
      (current as ExtractedTextCall).complete = complete;
      if (why) (current as ExtractedTextCall).cause = why;
      current = null;
    },
    diagnostic: (d) => out.diagnostics.push(d.code),
  });
  for (const piece of pieces) extractor.push(piece);
  extractor.end(cause);
  return out;
}

/** Every split gives the same text, reasoning and calls as the whole text. */
function chunked(text: string, setting: TextCallSetting = "auto") {
  const whole = run([text], setting);
  fc.assert(
    fc.property(fc.array(fc.nat({ max: text.length }), { maxLength: 24 }), (cuts) => {
      const pieces = run(cutText(text, cuts), setting);
      expect({ text: pieces.text, reasoning: pieces.reasoning, calls: pieces.calls }).toEqual({ text: whole.text, reasoning: whole.reasoning, calls: whole.calls });
    }),
    { numRuns: 60 },
  );
  expect(run([...text], setting)).toEqual(whole);
  return whole;
}

const args = (call: ExtractedTextCall) => JSON.parse(call.argumentText) as unknown;
const named = (calls: readonly ExtractedTextCall[]) => calls.map((call) => [call.name, call.complete]);

describe("one rule for every syntax (issue 30)", () => {
  // Where the shortest prefix that forms the call ends: cut before it, no call has formed.
  const formedAt = (call: TextCallSpec, text: string): number => {
    switch (call.syntax) {
      case "hermes":
      case "nemotron":
      case "firefunction":
        return text.lastIndexOf("}") + 1;
      case "qwen3-coder":
        return text.indexOf("</function>") + "</function>".length;
      case "kimi-k2":
        return text.indexOf("<|tool_call_end|>");
      case "mistral":
        return call.variant === "v11" ? text.length : text.length - 1;
      case "llama3-json":
        return call.variant === "bare" ? text.length : text.indexOf("<|eom_id|>");
      case "deepseek":
        return call.variant === "v31" ? text.indexOf("<｜tool▁call▁end｜>") : text.indexOf("\n```<｜tool▁call▁end｜>");
      case "harmony":
        return text.indexOf("<|call|>");
      default:
        return text.length; // glm (`</tool_call>`), pythonic (`]`)
    }
  };
  const spec = fc
    .record({
      syntax: fc.constantFrom("hermes", "qwen3-coder", "glm", "kimi-k2", "mistral", "llama3-json", "pythonic", "deepseek", "harmony", "nemotron", "firefunction" as const),
      name: fc.stringMatching(/^[a-z_][a-z0-9_]{0,8}$/),
      value: fc.oneof(fc.stringMatching(/^[a-z ]{1,8}$/), fc.integer()),
      variant: fc.constantFrom("array", "v11", "v3", "v31", "tag", "bare", undefined),
    })
    .map(({ syntax, name, value, variant }) => {
      const call: TextCallSpec = { syntax, name, args: { k: syntax === "qwen3-coder" || syntax === "glm" ? String(value) : value } };
      const fits = (syntax === "mistral" && (variant === "array" || variant === "v11")) || (syntax === "deepseek" && (variant === "v3" || variant === "v31")) || (syntax === "llama3-json" && (variant === "tag" || variant === "bare"));
      if (fits) call.variant = variant as string;
      return call;
    });
  // `[TOOL_CALLS]` is a control token, never text: dropped with the whitespace after it once text follows.
  const unchanged = (text: string) => text.replace(/\[TOOL_CALLS\]\s*(?=\S)/g, "");

  it("a text with no complete, well-formed call comes back unchanged, with no call, under any chunking", () => {
    fc.assert(
      fc.property(
        fc.stringMatching(/^[A-Za-z ,.!?]{0,12}$/),
        spec,
        fc.nat(),
        fc.stringMatching(/^[a-z ,.]{0,12}$/),
        fc.array(fc.nat({ max: 300 }), { maxLength: 16 }),
        (before, call, at, after, cuts) => {
          const rendered = renderTextCall(call);
          const prefix = rendered.slice(0, at % Math.max(1, formedAt(call, rendered)));
          // Bare JSON and pythonic lists are read at the message start only (no tool names here).
          const head = call.syntax === "pythonic" || call.syntax === "firefunction" || call.variant === "bare" ? "" : before;
          const text = head + prefix + after;
          for (const pieces of [[text], cutText(text, cuts)]) {
            const out = run(pieces);
            expect(out.calls).toEqual([]);
            expect(out.text).toBe(unchanged(text));
          }
        },
      ),
      { numRuns: 600 },
    );
  });

  it("cut by the output limit instead, the same prefix is a call that is not complete (never runnable)", () => {
    const out = run(['Sure. <tool_call>{"name": "f", "arguments": {"a": "unterminated'], "auto", "max_tokens");
    expect(out.calls).toEqual([{ name: "f", syntax: "hermes", argumentText: '{"a": "unterminated', complete: false, cause: "max_tokens" }]);
    expect(out.text).toBe("Sure. ");
  });

  it("a closed envelope with bad arguments is an invalid call that ends at its own end marker (vLLM test_kimi_k2 invalid_json_still_extracted)", () => {
    const kimi = chunked('On it. <|tool_calls_section_begin|><|tool_call_begin|>functions.lookup:0 <|tool_call_argument_begin|>{"term": "tides"<|tool_call_end|><|tool_call_begin|>functions.fetch:1 <|tool_call_argument_begin|>{"url": "a.example"}<|tool_call_end|><|tool_calls_section_end|>');
    expect(named(kimi.calls)).toEqual([["lookup", true], ["fetch", true]]);
    expect(kimi.calls[0]?.argumentText).toBe('{"term": "tides"');
    expect(kimi.text).toBe("On it. ");
    const hermes = chunked('<tool_call>{"name": "f", "arguments": {"a": 1</tool_call> then');
    expect(hermes.calls.map((call) => call.argumentText)).toEqual(['{"a": 1']);
    expect(hermes.text).toBe(" then");
    const mistral = chunked('[TOOL_CALLS]a{"x": 1[TOOL_CALLS]b{"y": 2}');
    expect(mistral.calls.map((call) => [call.name, call.argumentText])).toEqual([
      ["a", '{"x": 1'],
      ["b", '{"y": 2}'],
    ]);
  });

  const decodeText = (text: string) => {
    const pieces: ProviderEvent[] = [];
    for (let i = 0; i < text.length; i += 5) pieces.push(c.text(text.slice(i, i + 5)));
    const decoder = createDecoder("openai-chat", { textCalls: "auto" });
    for (const event of chatStream(pieces, "stop")) decoder.push(event);
    return decoder.finish();
  };

  it("through a decoder the invalid call is invalid_json, never runnable, and leaves the finish reason alone", () => {
    const turn = decodeText('<|tool_call_begin|>functions.bad:0<|tool_call_argument_begin|>{"a": 1,, "b"<|tool_call_end|>');
    expect(turn.toolCalls).toMatchObject([{ name: "bad", complete: true, arguments: null, error: { code: "invalid_json" } }]);
    expect(turn.toolCalls[0]?.error?.message).toMatch(/Send it again/);
    expect(turn.finishReason).toBe("stop");
  });

  it("arguments missing only their closing brackets go through the same finalize rules as a wire call (a named lossless repair)", () => {
    const turn = decodeText('<|tool_call_begin|>functions.f:0<|tool_call_argument_begin|>{"a": 1<|tool_call_end|>');
    expect(turn.toolCalls).toMatchObject([{ name: "f", complete: true, arguments: { a: 1 }, error: null }]);
    expect(turn.toolCalls[0]?.repairs.length).toBeGreaterThan(0);
  });

  it("a Kimi id that is not functions.NAME:INDEX is text, with a diagnostic (vLLM test_invalid_funcall_id_skipped)", () => {
    const out = chunked('<|tool_calls_section_begin|><|tool_call_begin|>functions.scan.3 <|tool_call_argument_begin|>{"a": 1}<|tool_call_end|><|tool_call_begin|>functions.index:1 <|tool_call_argument_begin|>{"b": 2}<|tool_call_end|><|tool_calls_section_end|>');
    expect(named(out.calls)).toEqual([["index", true]]);
    expect(out.text).toContain("functions.scan.3");
    expect(out.diagnostics).toContain("text_call_bad_id");
  });

  it("unparsable pythonic lists, and any list whose values are no literals, are all text (vLLM test_unrecoverable_block_still_reports_no_tool_call)", () => {
    for (const text of ["[say(t='it's'), say(t='a 'b' c')]", "[f(a=1), g(b=os.system)]", "[f(a=1), g(b=2"]) {
      const out = chunked(text);
      expect(out.calls).toEqual([]);
      expect(out.text).toBe(text);
    }
  });

  it("[TOOL_CALLS] before prose is dropped, the prose is text (vLLM test_extract_tool_calls_pre_v11_regex_fallback_fails)", () => {
    expect(chunked("[TOOL_CALLS]  no call here, sorry").text).toBe("no call here, sorry");
  });
});

describe("format variants (issue 30)", () => {
  it("Mistral v11+ without [ARGS], as vLLM decodes that tokenizer (test_mistral_tool_parser multiple_tool_calls)", () => {
    const out = chunked('x{y[TOOL_CALLS]scale{"by": 1.5}[TOOL_CALLS]shift{"by": -2, "s": "}{"}');
    expect(out.calls.map((call) => [call.name, args(call)])).toEqual([
      ["scale", { by: 1.5 }],
      ["shift", { by: -2, s: "}{" }],
    ]);
    expect(out.text).toBe("x{y");
  });

  it("Llama 4 pythonic lists in <|python_start|>…<|python_end|>, also mid-text (SGLang test_detect_and_parse_with_python_start_and_end_token)", () => {
    const out = chunked("Asking the tide table. <|python_start|>[tides(port='Brest', hours=6)]<|python_end|> Back soon.");
    expect(out.calls.map((call) => [call.name, args(call)])).toEqual([["tides", { port: "Brest", hours: 6 }]]);
    expect(out.text).toBe("Asking the tide table.  Back soon.");
  });

  it("Llama 3 JSON calls separated by newlines (vLLM test_extract_tool_calls_streaming_parallel_separators)", () => {
    const out = chunked('{"name": "find", "parameters": {"q": "ferns"}}\n{"name": "count", "parameters": {}}');
    expect(out.calls.map((call) => call.name)).toEqual(["find", "count"]);
    expect(out.text).toBe("");
  });

  it("harmony: the recipient in the role header, at the message start, and calls in the analysis channel (llama.cpp test-chat gpt-oss)", () => {
    for (const text of [
      ' to=functions.lookup<|channel|>analysis<|message|>{"id": 7}',
      '<|channel|>analysis to=functions.lookup<|message|>{"id": 7}',
      '<|start|>assistant to=functions.lookup<|channel|>commentary json<|message|>{"id": 7}<|call|>',
    ]) {
      const out = chunked(text);
      expect(out.calls.map((call) => [call.name, args(call)])).toEqual([["lookup", { id: 7 }]]);
      expect(out.text.trim()).toBe("");
    }
  });

  it("harmony's analysis channel is reasoning and its final header is markup (SGLang test_gpt_oss_detector)", () => {
    const out = chunked('<|channel|>analysis<|message|>Need the list.<|end|><|start|>assistant<|channel|>commentary to=functions.ls <|constrain|>json<|message|>{"dir": "/"}<|call|><|start|>assistant<|channel|>final<|message|>Listed.');
    expect(out.reasoning).toBe("Need the list.");
    expect(out.text).toBe("Listed.");
    expect(out.calls.map((call) => call.name)).toEqual(["ls"]);
  });

  it("DeepSeek V3.2 DSML, typed by string=\"true|false\" (vLLM deepseekv32 / SGLang DeepSeekV32Detector tests)", () => {
    const out = chunked(
      'Checking.\n\n<｜DSML｜function_calls>\n<｜DSML｜invoke name="tides">\n<｜DSML｜parameter name="port" string="true">港</｜DSML｜parameter>\n<｜DSML｜parameter name="hours" string="false">6</｜DSML｜parameter>\n</｜DSML｜invoke>\n</｜DSML｜function_calls>',
    );
    expect(out.calls.map((call) => [call.name, args(call)])).toEqual([["tides", { port: "港", hours: 6 }]]);
    expect(out.text).toBe("Checking.\n\n");
  });

  it("a stray </tool_call> after a Qwen3-Coder call without its opening tag is markup (llama.cpp Qwen3-Coder peg_tester)", () => {
    const out = chunked("Running it.\n<function=run>\n<parameter=cmd>\nmake\n</parameter>\n</function>\n</tool_call>");
    expect(out.calls.map((call) => call.name)).toEqual(["run"]);
    expect(out.text).toBe("Running it.\n");
  });

  it("whitespace between two calls is no text (vLLM test_qwen3coder parallel_tools)", () => {
    const call = (city: string) => `<tool_call>\n<function=w>\n<parameter=city>\n${city}\n</parameter>\n</function>\n</tool_call>`;
    const out = chunked(`${call("Dallas")}\n${call("Orlando")}`);
    expect(out.calls.length).toBe(2);
    expect(out.text).toBe("");
  });
});

describe("reasoning written into the text (issue 30)", () => {
  it("a [TOOL_CALLS] inside [THINK]…[/THINK] is reasoning (llama.cpp Ministral-3-14B-Reasoning: fake tool call marker in reasoning)", () => {
    const out = chunked('[THINK]Perhaps [TOOL_CALLS]g[ARGS]{"n":2} first? No.[/THINK][TOOL_CALLS]g[ARGS]{"n": 3}');
    expect(out.calls.map((call) => [call.name, args(call)])).toEqual([["g", { n: 3 }]]);
    expect(out.reasoning).toBe('Perhaps [TOOL_CALLS]g[ARGS]{"n":2} first? No.');
    expect(out.text).toBe("");
  });

  it("a <tool_call> before a lone </think> is reasoning (llama.cpp Reka-Edge: fake tool call marker in reasoning)", () => {
    const out = chunked('Maybe <tool_call>\n{"name": "g", "arguments": {"n": 2}}</tool_call> or not\n</think>\n\n<tool_call>\n{"name": "g", "arguments": {"n": 3}}</tool_call>');
    expect(out.calls.map((call) => args(call))).toEqual([{ n: 3 }]);
    expect(out.reasoning).toBe('<tool_call>\n{"name": "g", "arguments": {"n": 2}}</tool_call> or not\n');
    expect(out.diagnostics).toContain("text_call_in_reasoning");
  });

  it("with reasoning: true, calls in reasoning are read; the text around them stays reasoning", () => {
    const out = chunked('<think>need it <tool_call>{"name": "f", "arguments": {}}</tool_call> ok</think>Answer.', { reasoning: true });
    expect(out.calls.map((call) => call.name)).toEqual(["f"]);
    expect(out.reasoning).toBe("need it  ok");
    expect(out.text).toBe("Answer.");
  });

  it("Kimi K2 Thinking's call tokens end the think block (llama.cpp Kimi-K2-Thinking: call inside thinking block)", () => {
    const out = chunked('<think>Both, then<|tool_call_begin|>functions.a:0<|tool_call_argument_begin|>{"x": 1}<|tool_call_begin|>functions.b:1<|tool_call_argument_begin|>{}');
    expect(out.calls.map((call) => call.name)).toEqual(["a", "b"]);
    expect(out.reasoning).toBe("Both, then");
  });

  it('thinking "open": the text is reasoning until </think> (Qwen3 / DeepSeek-R1 templates open it in the prompt)', () => {
    const out = chunked('I should call f <tool_call>{"name": "f", "arguments": {}}</tool_call></think>Result: <tool_call>{"name": "g", "arguments": {}}</tool_call>', { thinking: "open" });
    expect(out.calls.map((call) => call.name)).toEqual(["g"]);
    expect(out.reasoning).toBe('I should call f <tool_call>{"name": "f", "arguments": {}}</tool_call>');
    expect(out.text).toBe("Result: ");
  });

  it('thinking "closed": calls go on as soon as their markup closes, before the text ends', () => {
    const seen: string[] = [];
    const extractor = new TextCallExtractor(resolveTextCallOptions({ thinking: "closed" })!, {
      text: () => seen.push("text"),
      open: () => seen.push("open"),
      args: () => undefined,
      close: () => seen.push("close"),
      diagnostic: () => undefined,
    });
    extractor.push('Sure. <tool_call>{"name": "f", "arguments": {}}</tool_call>');
    expect(seen).toContain("close");
    // Under "auto" the same call waits: a lone </think> could still show it was reasoning.
    const held: string[] = [];
    const auto = new TextCallExtractor(resolveTextCallOptions("auto")!, { text: () => held.push("text"), open: () => held.push("open"), args: () => undefined, close: () => held.push("close"), diagnostic: () => undefined });
    auto.push('Sure. <tool_call>{"name": "f", "arguments": {}}</tool_call>');
    expect(held).not.toContain("open");
    auto.end("stream_ended");
    expect(held).toContain("close");
  });

  it('a lone </think> is markup; only under "auto" does it say that text before it was passed on', () => {
    expect(chunked("Plan first.</think>Answer.")).toMatchObject({ text: "Plan first.Answer.", diagnostics: ["text_reasoning_passed_on"] });
    expect(chunked("Plan first.</think>Answer.", { thinking: "closed" })).toMatchObject({ text: "Plan first.Answer.", diagnostics: [] });
    expect(chunked("<think>a</think>b</think>c")).toMatchObject({ text: "bc", reasoning: "a", diagnostics: [] });
  });

  it("what a lone </think> may still claim is bounded: past MAX_HELD_REASONING the held call goes on", () => {
    const opened: string[] = [];
    const extractor = new TextCallExtractor(resolveTextCallOptions("auto")!, { text: () => undefined, open: (name) => opened.push(name), args: () => undefined, close: () => undefined, diagnostic: () => undefined });
    extractor.push('Sure. <tool_call>{"name": "f", "arguments": {}}</tool_call>');
    expect(opened).toEqual([]);
    extractor.push("x".repeat(MAX_HELD_REASONING + 1));
    expect(opened).toEqual(["f"]);
  });

  it("a bad thinking setting is a typed error", () => {
    expect(() => resolveTextCallOptions({ thinking: "maybe" as "auto" })).toThrow(/textCalls.thinking/);
  });
});

describe("calls after prose, with the caller's tool names (issue 30)", () => {
  it("bare Llama 3 JSON after a sentence, where a known tool name opens it (vLLM test_extract_tool_calls_simple)", () => {
    const text = 'Calling it now: {"name": "count", "parameters": {}} More after.';
    const out = chunked(text, { toolNames: ["count"] });
    expect(out.calls.map((call) => call.name)).toEqual(["count"]);
    expect(out.text).toBe("Calling it now:  More after.");
    // Without names, today's rule: read at the message start only.
    expect(run([text]).calls).toEqual([]);
    // An object naming another tool, or no tool, is text.
    expect(chunked('See {"name": "other", "parameters": {}} and {"a": 1}.', { toolNames: ["count"] }).text).toBe('See {"name": "other", "parameters": {}} and {"a": 1}.');
  });

  it("a pythonic list after a sentence, where a known tool name opens it (SGLang test_parse_streaming_complete_tool_call)", () => {
    const text = "One call: [tides(port='Oban', hours=3)]";
    const out = chunked(text, { toolNames: ["tides"] });
    expect(out.calls.map((call) => [call.name, args(call)])).toEqual([["tides", { port: "Oban", hours: 3 }]]);
    expect(out.text).toBe("One call: ");
    expect(run([text]).calls).toEqual([]);
    expect(chunked("See [1] and [other(x=1)] and [tides].", { toolNames: ["tides"] }).text).toBe("See [1] and [other(x=1)] and [tides].");
  });
});

describe("bounds", () => {
  it("a call's argument text past MAX_HELD_CALL is opened and streams; it can then only be truncated", () => {
    const big = "x".repeat(MAX_HELD_CALL + 10);
    const out = run(['<tool_call>{"name": "f", "arguments": {"a": "', big, '"}}</tool_call>']);
    expect(out.calls.map((call) => [call.name, call.complete, call.argumentText.length])).toEqual([["f", true, big.length + 9]]);
    const broken = run(['<tool_call>{"name": "f", "arguments": {"a": "', big]);
    expect(broken.calls.map((call) => [call.name, call.complete, call.cause])).toEqual([["f", false, "stream_ended"]]);
  });

  it("extractTextCalls takes the cut flag: a call still open is text at a normal stop, not complete when cut", () => {
    const text = '<tool_call>{"name": "f", "arguments": {"a": 1';
    expect(extractTextCalls(text).calls).toEqual([]);
    expect(extractTextCalls(text, "auto", "stream_ended", true).calls).toMatchObject([{ name: "f", complete: false }]);
  });
});

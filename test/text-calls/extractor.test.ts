import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { extractTextCalls, LONGEST_MARKER, MARKER_LITERALS, mayFollowAngle, mayFollowBracket, TextCallExtractor, type ExtractedTextCall } from "../../src/text-calls/extractor.js";
import { resolveTextCallOptions, TextCallOptionsError, type TextCallSetting } from "../../src/text-calls/options.js";
import { cutText, plainText, textCallDocument, wholeMessageTextCall, type TextCallDocument } from "../../src/testing/text-calls.js";
import { isToolwireError } from "../../src/errors.js";

const AUTO = resolveTextCallOptions("auto")!;

function options(setting: TextCallSetting) {
  return resolveTextCallOptions(setting)!;
}

/** Runs the extractor over pieces, recording what it passes on and the most text it ever held back. */
function run(pieces: readonly string[], opts = AUTO) {
  let text = "";
  const calls: ExtractedTextCall[] = [];
  let current: ExtractedTextCall | null = null;
  let maxHeld = 0;
  const extractor = new TextCallExtractor(opts, {
    text: (t) => {
      text += t;
    },
    open: (name, syntax) => {
      current = { name, syntax, argumentText: "", complete: false };
      calls.push(current);
    },
    args: (fragment) => {
      (current as ExtractedTextCall).argumentText += fragment;
    },
    close: (complete, cause) => {
      (current as ExtractedTextCall).complete = complete;
      if (cause) (current as ExtractedTextCall).cause = cause;
      current = null;
    },
    diagnostic: () => undefined,
  });
  for (const piece of pieces) {
    extractor.push(piece);
    if (!extractor.inCall) maxHeld = Math.max(maxHeld, extractor.heldBack);
  }
  extractor.end("stream_ended");
  return { text, calls, maxHeld };
}

const call = (name: string, syntax: string, args: unknown, complete = true) => ({ name, syntax, args, complete });

function summary(calls: readonly ExtractedTextCall[]) {
  return calls.map((c) => {
    let args: unknown = c.argumentText;
    try {
      args = JSON.parse(c.argumentText);
    } catch {
      /* kept as text */
    }
    return { name: c.name, syntax: c.syntax, args, complete: c.complete };
  });
}

describe("text-call syntaxes (formats from the models' templates and vLLM/SGLang parser tests)", () => {
  const cases: Array<[string, string, string, ReturnType<typeof call>[]]> = [
    [
      "hermes: markup inside a JSON string does not end the call",
      'Let me check.\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris </tool_call> x"}}\n</tool_call>\nDone.',
      "Let me check.\n\nDone.",
      [call("get_weather", "hermes", { city: "Paris </tool_call> x" })],
    ],
    [
      "qwen3-coder XML with the <tool_call> wrapper: values are strings, one newline each side dropped",
      "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n<parameter=days>\n3\n</parameter>\n</function>\n</tool_call>",
      "",
      [call("get_weather", "qwen3-coder", { city: "Paris", days: "3" })],
    ],
    ["qwen3-coder XML without the wrapper", "x <function=f>\n<parameter=a>\nline1\nline2\n\n</parameter>\n</function> y", "x  y", [call("f", "qwen3-coder", { a: "line1\nline2\n" })]],
    ["<function=NAME>{json}</function> (Llama on Groq)", '<function=get_weather>{"city": "x"}</function>', "", [call("get_weather", "qwen3-coder", { city: "x" })]],
    [
      "glm (SGLang glm4_moe test)",
      "Let me search for that.\n<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Beijing</arg_value>\n<arg_key>date</arg_key>\n<arg_value>2024-12-25</arg_value>\n</tool_call>\nThe weather will be...",
      "Let me search for that.\n\nThe weather will be...",
      [call("get_weather", "glm", { city: "Beijing", date: "2024-12-25" })],
    ],
    [
      "kimi-k2 section with two calls (SGLang kimik2 test)",
      'Let me help you with that.\n<|tool_calls_section_begin|>\n<|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>{"location": "Tokyo", "units": "celsius"}<|tool_call_end|>\n<|tool_call_begin|>functions.f:1<|tool_call_argument_begin|>{}<|tool_call_end|>\n<|tool_calls_section_end|>\nThe weather in Tokyo is...',
      "Let me help you with that.\n\nThe weather in Tokyo is...",
      [call("get_weather", "kimi-k2", { location: "Tokyo", units: "celsius" }), call("f", "kimi-k2", {})],
    ],
    ["mistral v3 list", '[TOOL_CALLS][{"name": "a", "arguments": {"x": 1}}, {"name": "b", "arguments": {}}]', "", [call("a", "mistral", { x: 1 }), call("b", "mistral", {})]],
    [
      "mistral v11 with and without a call id",
      'Sure. [TOOL_CALLS]get_weather[ARGS]{"city": "Paris"}[TOOL_CALLS]f[CALL_ID]abc123456[ARGS]{}',
      "Sure. ",
      [call("get_weather", "mistral", { city: "Paris" }), call("f", "mistral", {})],
    ],
    ["llama3 python_tag, two calls separated by ;", '<|python_tag|>{"name": "f", "parameters": {"a": 1}}; {"name": "g", "parameters": {}}', "", [call("f", "llama3-json", { a: 1 }), call("g", "llama3-json", {})]],
    ["llama3 bare JSON as the whole message", '  {"name": "f", "parameters": {"a": "b"}}', "  ", [call("f", "llama3-json", { a: "b" })]],
    ["a JSON answer is not a call", '{"result": 5}', '{"result": 5}', []],
    [
      "pythonic: Python literals become JSON",
      "[get_weather(city=\"SF\", metric='celsius', n=True, l=[1, (2, 3)], d={\"k\": None}), noargs()]",
      "",
      [call("get_weather", "pythonic", { city: "SF", metric: "celsius", n: true, l: [1, [2, 3]], d: { k: null } }), call("noargs", "pythonic", {})],
    ],
    ["pythonic: a bracketed reference is text", "[1] reference", "[1] reference", []],
    ["pythonic: a markdown link is text", "[see](http://x.y) and [word(text)]", "[see](http://x.y) and [word(text)]", []],
    [
      "deepseek v3.1 (vLLM deepseekv31 test)",
      'normal text<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>foo<｜tool▁sep｜>{"x":1}<｜tool▁call▁end｜><｜tool▁call▁begin｜>bar<｜tool▁sep｜>{"y":2}<｜tool▁call▁end｜><｜tool▁calls▁end｜> some suffix text',
      "normal text some suffix text",
      [call("foo", "deepseek", { x: 1 }), call("bar", "deepseek", { y: 2 })],
    ],
    [
      "deepseek v3 with a json fence",
      'Let me help you with that.\n<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n{"location": "Tokyo", "units": "celsius"}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>\nThe weather in Tokyo is...',
      "Let me help you with that.\n\nThe weather in Tokyo is...",
      [call("get_weather", "deepseek", { location: "Tokyo", units: "celsius" })],
    ],
    [
      "harmony commentary channel",
      '<|channel|>analysis<|message|>Need weather.<|end|><|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{"location":"SF"}<|call|>',
      // The analysis channel is reasoning (issue 30): it leaves the text.
      "",
      [call("get_weather", "harmony", { location: "SF" })],
    ],
    ["harmony with the recipient in the role", '<|start|>assistant to=functions.lookup<|channel|>commentary json<|message|>{"q": 1}', "", [call("lookup", "harmony", { q: 1 })]],
    ["text near markers passes through", "a < b and [c] <tool_ and <|foo|> <｜x｜>", "a < b and [c] <tool_ and <|foo|> <｜x｜>", []],
  ];

  for (const [title, input, text, calls] of cases) {
    it(title, () => {
      const whole = extractTextCalls(input, AUTO);
      expect(whole.text).toBe(text);
      expect(summary(whole.calls)).toEqual(calls);
      // One character per delta gives the same result.
      const byChar = run([...input]);
      expect(byChar.text).toBe(text);
      expect(summary(byChar.calls)).toEqual(calls);
    });
  }
});

describe("safety", () => {
  it("a call cut by the end of the stream is not complete, with the cause", () => {
    const out = extractTextCalls('<tool_call>\n{"name": "f", "arguments": {"a": "unterminated', AUTO, "max_tokens");
    expect(out.calls).toEqual([{ name: "f", syntax: "hermes", argumentText: '{"a": "unterminated', complete: false, cause: "max_tokens" }]);
  });

  it("a call whose markup breaks off never formed a call: all of it is text, byte for byte (issue 30)", () => {
    const input = "<function=f>\n<parameter=a>\n1\n</parameter>\nsorry, I meant";
    const out = extractTextCalls(input, AUTO);
    expect(out.calls).toEqual([]);
    expect(out.text).toBe(input);
  });

  it("only the caller's tool names become calls; others stay text with a diagnostic", () => {
    const input = 'a<tool_call>{"name": "rm_rf", "arguments": {}}</tool_call>b<tool_call>{"name": "ls", "arguments": {}}</tool_call>';
    const out = extractTextCalls(input, options({ toolNames: ["ls"] }));
    expect(out.calls.map((c) => c.name)).toEqual(["ls"]);
    expect(out.text).toBe('a<tool_call>{"name": "rm_rf", "arguments": {}}</tool_call>b');
    expect(out.diagnostics.map((d) => d.code)).toEqual(["text_call_unknown_tool"]);
  });

  it("only the named syntaxes are read", () => {
    const input = '<tool_call>{"name": "f", "arguments": {}}</tool_call>[TOOL_CALLS]g[ARGS]{}';
    const out = extractTextCalls(input, options(["mistral"]));
    expect(out.calls.map((c) => c.name)).toEqual(["g"]);
    expect(out.text).toBe('<tool_call>{"name": "f", "arguments": {}}</tool_call>');
  });

  it("tool schemas type XML parameter values; a value that is not JSON stays the string it is", () => {
    const tools = [{ type: "function", function: { name: "f", parameters: { type: "object", properties: { n: { type: "integer" }, tags: { type: "array" }, s: { type: "string" }, b: { type: "boolean" } } } } }];
    const input = "<function=f>\n<parameter=n>\n42\n</parameter>\n<parameter=tags>\n[\"a\", \"b\"]\n</parameter>\n<parameter=s>\n42\n</parameter>\n<parameter=b>\nyes\n</parameter>\n</function>";
    const out = extractTextCalls(input, options({ tools }));
    expect(JSON.parse(out.calls[0]!.argumentText)).toEqual({ n: 42, tags: ["a", "b"], s: "42", b: "yes" });
    expect(out.diagnostics.map((d) => d.code)).toEqual(["text_call_param_not_json"]);
  });

  it("bad options are a typed error", () => {
    expect(() => resolveTextCallOptions(["nope" as never])).toThrow(TextCallOptionsError);
    try {
      resolveTextCallOptions({ syntaxes: 5 as never });
    } catch (error) {
      expect(isToolwireError(error) && error.code).toBe("invalid_text_call_options");
    }
    expect(() => resolveTextCallOptions({ tools: [{ nope: 1 }] })).toThrow(/no name/);
    expect(() => resolveTextCallOptions({ toolNames: [1 as never] })).toThrow(TextCallOptionsError);
  });

  it("a long JSON answer at the start of a message is released once it cannot be a call", () => {
    const out = run(['{"type": "function", "other": ', '"', "a".repeat(10_000), '"}'], AUTO);
    expect(out.calls).toEqual([]);
    expect(out.maxHeld).toBeLessThan(40);
  });
});

describe("the per-delta scan", () => {
  it("searches for every marker: each begins with < or [, and its next character passes the scan's check", () => {
    for (const literal of MARKER_LITERALS) {
      const follows = literal[0] === "<" ? mayFollowAngle : literal[0] === "[" ? mayFollowBracket : null;
      expect(follows, literal).not.toBeNull();
      expect(follows?.(literal.charCodeAt(1)), literal).toBe(true);
    }
  });

  it("no marker is a prefix of another (the trie stops at the first marker it completes)", () => {
    for (const a of MARKER_LITERALS) for (const b of MARKER_LITERALS) if (a !== b) expect(b.startsWith(a), `${a} / ${b}`).toBe(false);
  });

  it("a held marker start that the next delta does not continue is passed on as text, with that delta", () => {
    const seen: string[] = [];
    const extractor = new TextCallExtractor(AUTO, { text: (t) => seen.push(t), open: () => undefined, args: () => undefined, close: () => undefined, diagnostic: () => undefined });
    extractor.push("x"); // the start of the message, where bare JSON may begin, is read apart
    expect(extractor.read("if a <")).toBe(false);
    expect(extractor.heldBack).toBe(1);
    expect(extractor.read(" b then")).toBe(false);
    expect(extractor.heldBack).toBe(0);
    expect(seen).toEqual(["x", "if a ", "< b then"]);
    expect(extractor.passesThrough(" plain")).toBe(true);
    expect(extractor.passesThrough(" a <")).toBe(false);
    expect(extractor.heldBack).toBe(0);
    expect(extractor.read(" plain")).toBe(true);
  });

  it("<tag>, <|endoftext|> and [Table] are plain text without being held", () => {
    const out = run(["x", "a <tag> b", " <|endoftext|> c", " [Table 1] d", " [T"]);
    expect(out.text).toBe("xa <tag> b <|endoftext|> c [Table 1] d [T");
    expect(out.maxHeld).toBe(2);
  });

  it("a marker that starts inside a held marker start is found", () => {
    // "<|start|>assistant<|" may begin a harmony call; the Kimi call starts at its second "<".
    const pieces = ["x <|start|>assistant<|", 'tool_call_begin|>functions.f:0<|tool_call_argument_begin|>{"a": 1}<|tool_call_end|> y'];
    const out = run(pieces);
    expect(summary(out.calls)).toEqual([call("f", "kimi-k2", { a: 1 })]);
    expect(out.text).toBe(extractTextCalls(pieces.join(""), AUTO).text);
  });

  it("a [ start before a < start holds from the [", () => {
    const out = run(["x", "see [T", "OOL_CALLS]f[ARGS]{}"], options(["mistral", "hermes"]));
    expect(summary(out.calls)).toEqual([call("f", "mistral", {})]);
    expect(out.text).toBe("xsee ");
  });
});

describe("properties", () => {
  const check = (doc: TextCallDocument, cuts: number[]) => {
    const whole = extractTextCalls(doc.text, AUTO);
    const pieces = run(cutText(doc.text, cuts));
    expect(pieces.text).toBe(whole.text);
    expect(pieces.calls).toEqual(whole.calls);
    expect(whole.text).toBe(doc.plainText);
    expect(whole.calls.map((c) => ({ name: c.name, args: JSON.parse(c.argumentText) as unknown, complete: c.complete }))).toEqual(doc.calls.map((c) => ({ name: c.name, args: c.args, complete: true })));
  };

  it("any chunking gives the same calls and the same surrounding text, and finds the calls written", () => {
    fc.assert(
      fc.property(textCallDocument(), fc.array(fc.nat({ max: 400 }), { maxLength: 30 }), (doc, cuts) => check(doc, cuts)),
      { numRuns: 300 },
    );
  });

  it("one character per delta gives the same result", () => {
    fc.assert(
      fc.property(textCallDocument(), (doc) => check(doc, Array.from({ length: doc.text.length }, (_, k) => k))),
      { numRuns: 100 },
    );
  });

  it("whole-message syntaxes (bare Llama JSON, pythonic) under any chunking", () => {
    fc.assert(
      fc.property(wholeMessageTextCall(), fc.array(fc.nat({ max: 300 }), { maxLength: 20 }), (doc, cuts) => check(doc, cuts)),
      { numRuns: 200 },
    );
  });

  it("text with no marker passes through unchanged, never held back longer than the longest marker", () => {
    fc.assert(
      fc.property(plainText(), fc.array(fc.nat({ max: 200 }), { maxLength: 20 }), (text, cuts) => {
        const out = run(cutText(text, cuts));
        expect(out.calls).toEqual([]);
        expect(out.text).toBe(text);
        expect(out.maxHeld).toBeLessThanOrEqual(LONGEST_MARKER);
      }),
      { numRuns: 300 },
    );
  });

  it("plain text: after every delta, the text passed on plus the text held back is exactly the text so far", () => {
    fc.assert(
      fc.property(plainText(), fc.array(fc.nat({ max: 200 }), { maxLength: 40 }), (text, cuts) => {
        let passed = "";
        const extractor = new TextCallExtractor(AUTO, {
          text: (t) => {
            passed += t;
          },
          open: () => expect.unreachable("no call in plain text"),
          args: () => undefined,
          close: () => undefined,
          diagnostic: () => undefined,
        });
        // A first delta that is not whitespace ends the message start: the fast paths apply after it.
        let sofar = "x";
        extractor.push("x");
        for (const piece of cutText(text, cuts)) {
          extractor.push(piece);
          sofar += piece;
          expect(passed.length + extractor.heldBack).toBe(sofar.length);
          expect(sofar.startsWith(passed)).toBe(true);
        }
        extractor.end("stream_ended");
        expect(passed).toBe(sofar);
      }),
      { numRuns: 300 },
    );
  });

  it("any chunking after plain text, down to one character per delta, reads the same calls and text", () => {
    fc.assert(
      fc.property(textCallDocument(), fc.array(fc.nat({ max: 60 }), { maxLength: 60 }), (doc, cuts) => {
        const text = `x ${doc.text}`;
        const whole = extractTextCalls(text, AUTO);
        const pieces = run(cutText(text, cuts));
        expect(pieces.text).toBe(whole.text);
        expect(pieces.calls).toEqual(whole.calls);
        expect(whole.text).toBe(`x ${doc.plainText}`);
      }),
      { numRuns: 300 },
    );
  });

  it("extraction is idempotent: the text it passes on holds no further calls", () => {
    fc.assert(
      fc.property(textCallDocument(), (doc) => {
        const once = extractTextCalls(doc.text, AUTO);
        const twice = extractTextCalls(once.text, AUTO);
        expect(twice.text).toBe(once.text);
        expect(twice.calls).toEqual([]);
      }),
      { numRuns: 200 },
    );
  });
});

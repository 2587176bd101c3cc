import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { IncrementalJsonParser, scanJson, type IncrementalJsonOptions } from "../../src/json/incremental.js";

function feed(fragments: readonly string[], options?: IncrementalJsonOptions): IncrementalJsonParser {
  const parser = new IncrementalJsonParser(options);
  for (const fragment of fragments) parser.push(fragment);
  return parser;
}

function chars(text: string): string[] {
  return text.split("");
}

/** Splits at the given offsets (taken modulo the length), so any split of any text can be generated. */
function splitAt(text: string, cuts: readonly number[]): string[] {
  if (text.length === 0) return [];
  const points = [...new Set(cuts.map((cut) => cut % (text.length + 1)))].sort((a, b) => a - b);
  const out: string[] = [];
  let last = 0;
  for (const point of points) {
    out.push(text.slice(last, point));
    last = point;
  }
  out.push(text.slice(last));
  return out;
}

function parseOrFail(text: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch {
    return { ok: false };
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * A preview is consistent with the final value when everything it shows is final except the one
 * member still being written, which must be a prefix of its final form.
 */
function consistentPreview(preview: unknown, final: unknown): boolean {
  if (preview === undefined) return true;
  if (typeof final === "string") return typeof preview === "string" && final.startsWith(preview);
  if (Array.isArray(final)) {
    if (!Array.isArray(preview) || preview.length > final.length) return false;
    for (let i = 0; i < preview.length; i++) {
      const ok = i === preview.length - 1 ? consistentPreview(preview[i], final[i]) : deepEqual(preview[i], final[i]);
      if (!ok) return false;
    }
    return true;
  }
  if (isRecord(final)) {
    if (!isRecord(preview)) return false;
    // Integer-like keys are enumerated first, so the member being written is not always the last key.
    let unfinished = 0;
    for (const key of Object.keys(preview)) {
      if (!Object.prototype.hasOwnProperty.call(final, key)) return false;
      if (deepEqual(preview[key], final[key])) continue;
      if (++unfinished > 1 || !consistentPreview(preview[key], final[key])) return false;
    }
    return true;
  }
  return Object.is(preview, final);
}

function deepEqual(a: unknown, b: unknown): boolean {
  if (Array.isArray(a)) return Array.isArray(b) && a.length === b.length && a.every((item, i) => deepEqual(item, b[i]));
  if (isRecord(a)) {
    if (!isRecord(b)) return false;
    const keys = Object.keys(a);
    return keys.length === Object.keys(b).length && keys.every((key) => Object.prototype.hasOwnProperty.call(b, key) && deepEqual(a[key], b[key]));
  }
  return Object.is(a, b);
}

describe("values", () => {
  it.each([
    ['{"a":1,"b":[true,false,null],"c":{"d":"e"}}'],
    ["[]"],
    ["{}"],
    ['  \n\t\r {"x" : [ 1 , -2.5e+3 , 0 , -0 , 1E-7 , 0.5 ] }  \n'],
    ['"just a string"'],
    ["true"],
    ["null"],
    ['[[[]],[{}],{"a":[]}]'],
    ['{"a":1e400,"b":-1e-400,"c":12345678901234567890}'],
  ])("parses %s like JSON.parse, whole and one char at a time", (text) => {
    const whole = scanJson(text);
    expect(whole.state).toBe("complete");
    expect(whole.value).toEqual(JSON.parse(text));
    const split = feed(chars(text));
    split.flush();
    expect(split.state).toBe("complete");
    expect(split.value).toEqual(JSON.parse(text));
    expect(split.values).toEqual([JSON.parse(text)]);
  });

  it("completes a top-level number only at end()", () => {
    const parser = feed(["1", "2"]);
    expect(parser.state).toBe("partial");
    expect(parser.value).toBeUndefined();
    parser.flush();
    expect(parser.state).toBe("complete");
    expect(parser.value).toBe(12);
    expect(parser.valueEnds).toEqual([2]);
  });

  it("does not invent closers or complete a cut-off number at end()", () => {
    for (const text of ['{"a":1', "[1,", '"abc', "-", "1.", "1e", "tru"]) {
      const parser = scanJson(text);
      expect(parser.state, text).toBe("partial");
      expect(parser.error, text).toBeNull();
    }
  });

  it("reports empty for whitespace only", () => {
    expect(scanJson("").state).toBe("empty");
    expect(scanJson(" \n\t\r").state).toBe("empty");
    expect(scanJson(" \n").value).toBeUndefined();
  });

  it("lets the last duplicate key win, keeping the first position", () => {
    const text = '{"a":1,"b":2,"a":3}';
    const value = scanJson(text).value;
    expect(value).toEqual(JSON.parse(text));
    expect(Object.keys(value as object)).toEqual(["a", "b"]);
  });

  it("counts the characters fed", () => {
    const parser = feed(["{", '"a"', ":1}  "]);
    expect(parser.length).toBe(9);
    expect(parser.valueEnds).toEqual([7]);
  });
});

describe("syntax errors", () => {
  const cases: [string, string | RegExp, number][] = [
    ['{"a":1 "b":2}', "Expected ',' or '}' after a property value", 7],
    ["[1 2]", "Expected ',' or ']' after an array element", 3],
    ['{"a" 1}', "Expected ':' after a property name", 5],
    ["{a:1}", /^Expected a double-quoted property name or '}'/, 1],
    ['{"a":1,}', /^Expected a double-quoted property name after ','/, 7],
    ["[1,]", "Unexpected character ']' where a value was expected", 3],
    ["[,1]", "Unexpected character ',' where a value was expected", 1],
    ["x", "Unexpected character 'x'", 0],
    ["'a'", "Unexpected character '''", 0],
    ["\u00a0{}", /^Unexpected character/, 0],
    ["\f{}", "Unexpected character U+000C", 0],
    ['"\\d"', "Bad escape \\d in a string", 2],
    ['"\\x41"', "Bad escape \\x in a string", 2],
    ['"\\u12g4"', /^Bad Unicode escape in a string/, 5],
    ['"a\nb"', "Unescaped control character in a string", 2],
    ['"a\u0000b"', "Unescaped control character in a string", 2],
    ["01", "Leading zeros are not allowed in a number", 1],
    ["-01", "Leading zeros are not allowed in a number", 2],
    ["-a", "No number after minus sign", 1],
    ["[1.]", "Unterminated fractional number", 3],
    ["[1e+]", "Exponent part is missing a number", 4],
    ["[1e]", "Exponent part is missing a number", 3],
    ["[+1]", "Unexpected character '+' where a value was expected", 1],
    ["[.5]", "Unexpected character '.' where a value was expected", 1],
    ["tru e", /^Unexpected character ' ' in the literal 'true'/, 3],
    ["nul", "", -1],
    ["[NaN]", "Unexpected character 'N' where a value was expected", 1],
    ['{"a":1} x', "Unexpected non-whitespace character 'x' after JSON", 8],
    ["{}{}", "Unexpected non-whitespace character '{' after JSON", 2],
    ["1 2", "Unexpected non-whitespace character '2' after JSON", 2],
    ["[1]]", "Unexpected non-whitespace character ']' after JSON", 3],
    ['{"a":1]', "Expected ',' or '}' after a property value", 6],
    ['["a"}', "Expected ',' or ']' after an array element", 4],
  ];

  it.each(cases)("%j → %s at %d", (text, message, position) => {
    expect(parseOrFail(text).ok).toBe(false);
    const parser = scanJson(text);
    if (position < 0) {
      expect(parser.state).toBe("partial");
      return;
    }
    expect(parser.state).toBe("error");
    if (typeof message === "string") expect(parser.error?.message).toBe(message);
    else expect(parser.error?.message).toMatch(message);
    expect(parser.error?.position).toBe(position);
    // The same error, at the same offset, whatever the fragmentation.
    const split = feed(chars(text));
    expect(split.error).toEqual(parser.error);
  });

  it("reports positions in the total text and ignores pushes after an error", () => {
    const parser = feed(['{"a":', "1 2}"]);
    expect(parser.error).toEqual({ message: "Expected ',' or '}' after a property value", position: 7 });
    const length = parser.length;
    parser.push("}");
    parser.flush();
    expect(parser.state).toBe("error");
    expect(parser.length).toBe(length);
    expect(parser.value).toEqual({ a: 1 });
  });
});

describe("strings", () => {
  it("shows an unfinished string as far as it has arrived", () => {
    const parser = feed(['{"t":"hel']);
    expect(parser.value).toEqual({ t: "hel" });
    expect(parser.inString).toBe(true);
    parser.push('lo"');
    expect(parser.value).toEqual({ t: "hello" });
    expect(parser.inString).toBe(false);
  });

  it("shows a property once its key is complete and its value has started", () => {
    const parser = feed(['{"t']);
    expect(parser.value).toEqual({});
    parser.push('itle"');
    expect(parser.value).toEqual({});
    parser.push(': "');
    expect(parser.value).toEqual({ title: "" });
  });

  it("holds back a split escape until it completes", () => {
    const parser = feed(['["ab\\']);
    expect(parser.value).toEqual(["ab"]);
    parser.push("n");
    expect(parser.value).toEqual(["ab\n"]);
    parser.push("\\u00");
    expect(parser.value).toEqual(["ab\n"]);
    parser.push("e");
    expect(parser.value).toEqual(["ab\n"]);
    parser.push("9");
    expect(parser.value).toEqual(["ab\né"]);
    parser.push('"]');
    expect(parser.state).toBe("complete");
  });

  it("decodes every escape like JSON.parse", () => {
    const text = '"\\"\\\\\\/\\b\\f\\n\\r\\t\\u0041\\u00e9\\u20AC\\uD83D\\uDE00\\ud800x\\udc00"';
    expect(scanJson(text).value).toBe(JSON.parse(text));
    expect(feed(chars(text)).value).toBe(JSON.parse(text));
  });

  it("keeps a surrogate pair whole in every preview, escaped or raw", () => {
    for (const text of ['"a\\ud83d\\ude00b"', '"a😀b"', '"a\\ud83d😀\\ude00"']) {
      const expected = JSON.parse(text) as string;
      for (let cut = 0; cut <= text.length; cut++) {
        for (let cut2 = cut; cut2 <= text.length; cut2++) {
          const parser = new IncrementalJsonParser();
          for (const fragment of [text.slice(0, cut), text.slice(cut, cut2), text.slice(cut2)]) {
            parser.push(fragment);
            const preview = parser.value;
            if (preview === undefined) continue;
            expect(typeof preview).toBe("string");
            const s = preview as string;
            expect(expected.startsWith(s)).toBe(true);
            if (parser.inString && s.length > 0) {
              // A preview may end in a high surrogate only when it is a lone one in the final text.
              const last = s.charCodeAt(s.length - 1);
              const next = expected.charCodeAt(s.length);
              const splitPair = last >= 0xd800 && last <= 0xdbff && next >= 0xdc00 && next <= 0xdfff;
              expect(splitPair).toBe(false);
            }
          }
          expect(parser.value).toBe(expected);
        }
      }
    }
  });

  it("keeps lone surrogates exactly as JSON.parse does", () => {
    for (const text of ['"\\ud800"', '"\\udc00\\ud800"', '"x\ud800"', '["\\ud800",1]']) {
      expect(scanJson(text).value).toEqual(JSON.parse(text));
      expect(feed(chars(text)).value).toEqual(JSON.parse(text));
    }
  });
});

describe("numbers and literals", () => {
  it("appear only once terminated", () => {
    const parser = feed(['{"a":12']);
    expect(parser.value).toEqual({});
    expect(parser.path).toEqual(["a"]);
    parser.push("3");
    expect(parser.value).toEqual({});
    parser.push(',"b":tr');
    expect(parser.value).toEqual({ a: 123 });
    parser.push("ue");
    expect(parser.value).toEqual({ a: 123, b: true });
  });

  it("converts integers of every length exactly, including -0 and beyond 2^53", () => {
    const text =
      "[0,-0,7,-7,123456789012345,-123456789012345,1234567890123456,9007199254740993,-9007199254740993," +
      "99999999999999999999,1.5,-0.0,0e0,1E+2,2e-2,123456789012345.5,1e400]";
    const expected = JSON.parse(text) as unknown[];
    for (const parser of [scanJson(text), feed(chars(text))]) {
      const value = parser.value as unknown[];
      expect(value).toHaveLength(expected.length);
      value.forEach((item, i) => expect(Object.is(item, expected[i]), String(expected[i])).toBe(true));
    }
    expect(Object.is(scanJson("-0").value, -0)).toBe(true);
    expect(scanJson("1234567890123456789").value).toBe(Number("1234567890123456789"));
  });

  it("arrays grow in place", () => {
    const parser = feed(["[1,"]);
    const root = parser.value;
    expect(root).toEqual([1]);
    parser.push('"x');
    expect(root).toEqual([1, "x"]);
    parser.push('",[');
    expect(root).toEqual([1, "x", []]);
    parser.push("]]");
    expect(parser.value).toBe(root);
  });
});

describe("prototype safety", () => {
  it("stores __proto__, constructor and prototype as own data properties", () => {
    const text = '{"__proto__":{"polluted":true},"constructor":{"prototype":1},"prototype":"p","a":{"__proto__":[1]}}';
    for (const parser of [scanJson(text), feed(chars(text))]) {
      const value = parser.value as Record<string, unknown>;
      expect(Object.getPrototypeOf(value)).toBe(Object.prototype);
      expect(Object.keys(value)).toEqual(["__proto__", "constructor", "prototype", "a"]);
      const descriptor = Object.getOwnPropertyDescriptor(value, "__proto__");
      expect(descriptor).toEqual({ value: { polluted: true }, enumerable: true, writable: true, configurable: true });
      expect((value as { polluted?: unknown }).polluted).toBeUndefined();
      expect(({} as { polluted?: unknown }).polluted).toBeUndefined();
      const inner = value.a as Record<string, unknown>;
      expect(Object.getPrototypeOf(inner)).toBe(Object.prototype);
      expect(Array.isArray(Object.getOwnPropertyDescriptor(inner, "__proto__")?.value)).toBe(true);
      expect(value).toEqual(JSON.parse(text));
    }
  });

  it("previews an unfinished __proto__ string without touching the prototype", () => {
    const parser = feed(['{"__proto__":"ab']);
    const value = parser.value as Record<string, unknown>;
    expect(Object.getPrototypeOf(value)).toBe(Object.prototype);
    expect(Object.getOwnPropertyDescriptor(value, "__proto__")?.value).toBe("ab");
  });
});

describe("nesting", () => {
  it("scans 100k nested arrays without recursion, materializing up to maxDepth", () => {
    const n = 100_000;
    const parser = new IncrementalJsonParser();
    parser.push("[".repeat(n));
    expect(parser.depth).toBe(n);
    expect(parser.state).toBe("partial");
    expect(parser.depthExceeded).toBe(true);
    expect(parser.path.length).toBe(n - 1);
    parser.push("]".repeat(n));
    expect(parser.state).toBe("complete");
    expect(parser.depth).toBe(0);
    let level = 0;
    let node: unknown = parser.value;
    while (Array.isArray(node)) {
      expect(node).toHaveLength(1);
      node = node[0];
      level++;
    }
    // The 257th array is scanned but not built: its slot in the 256th holds undefined.
    expect(level).toBe(256);
    expect(node).toBeUndefined();
  });

  it("scans 100k nested objects and still finds an error at the bottom", () => {
    const n = 100_000;
    const parser = feed(['{"a":'.repeat(n), "1", "}".repeat(n - 1), "]"]);
    expect(parser.error).toEqual({ message: "Expected ',' or '}' after a property value", position: 5 * n + n });
  });

  it("maxDepth omits deeper containers from objects and leaves undefined in arrays", () => {
    const text = '{"a":{"b":{"c":1},"d":2},"arr":[[1],[[2]],3,"s"]}';
    const parser = scanJson(text, { maxDepth: 2 });
    expect(parser.state).toBe("complete");
    expect(parser.depthExceeded).toBe(true);
    expect(parser.value).toStrictEqual({ a: { d: 2 }, arr: [undefined, undefined, 3, "s"] });
    const unlimited = scanJson(text, { maxDepth: 4 });
    expect(unlimited.depthExceeded).toBe(false);
    expect(unlimited.value).toEqual(JSON.parse(text));
  });

  it("tracks the exact path and errors beyond maxDepth", () => {
    const parser = feed(['{"a":[{"b":{"c":"x'], { maxDepth: 1 });
    expect(parser.value).toEqual({});
    expect(parser.path).toEqual(["a", 0, "b", "c"]);
    parser.push('"}}],"z":1 x');
    expect(parser.error?.message).toBe("Expected ',' or '}' after a property value");
    expect(parser.value).toEqual({ z: 1 });
  });
});

describe("path", () => {
  it("follows the member being written", () => {
    const steps: [string, (string | number)[]][] = [
      ["{", []],
      ['"to', []],
      ['dos"', ["todos"]],
      [":", ["todos"]],
      ["[", ["todos"]],
      ["{", ["todos", 0]],
      ['"title":"a', ["todos", 0, "title"]],
      ['"}', ["todos", 0]],
      [",", ["todos"]],
      ["{", ["todos", 1]],
      ['"done":tr', ["todos", 1, "done"]],
      ["ue,", ["todos", 1]],
      ['"n":12', ["todos", 1, "n"]],
      ["}]", ["todos"]],
      ["}", []],
    ];
    const parser = new IncrementalJsonParser();
    for (const [fragment, path] of steps) {
      parser.push(fragment);
      expect(parser.path, JSON.stringify(fragment)).toEqual(path);
    }
    expect(parser.state).toBe("complete");
  });
});

describe("multiple", () => {
  it.each([['{"a":1}{"b":2}'], ['{"a":1} {"b":2}'], ['{"a":1}\n{"b":2}\n'], ['  {"a":1}\r\n\t{"b":2}']])("splits %j", (text) => {
    for (const parser of [scanJson(text, { multiple: true }), feed(chars(text), { multiple: true })]) {
      expect(parser.state).toBe("complete");
      expect(parser.values).toEqual([{ a: 1 }, { b: 2 }]);
      expect(parser.value).toEqual({ b: 2 });
      const ends = parser.valueEnds;
      expect(ends).toHaveLength(2);
      expect(text.slice(0, ends[0]).trim()).toBe('{"a":1}');
      expect(text.slice(ends[0], ends[1]).trim()).toBe('{"b":2}');
    }
  });

  it("accepts scalars and reports each value's end", () => {
    const parser = scanJson('1 "x"[2]true -3.5', { multiple: true });
    expect(parser.values).toEqual([1, "x", [2], true, -3.5]);
    expect(parser.valueEnds).toEqual([1, 5, 8, 12, 17]);
  });

  it("is partial while a later value is open and errors on junk between values", () => {
    const parser = feed(['{"a":1}', '{"b"'], { multiple: true });
    expect(parser.state).toBe("partial");
    expect(parser.values).toEqual([{ a: 1 }]);
    expect(parser.value).toEqual({});
    expect(scanJson('{"a":1},{"b":2}', { multiple: true }).error?.message).toBe(
      "Unexpected character ',' where a value was expected",
    );
  });

  it("without multiple keeps only the first value", () => {
    const parser = scanJson('{"a":1}{"b":2}');
    expect(parser.state).toBe("error");
    expect(parser.values).toEqual([{ a: 1 }]);
    expect(parser.value).toEqual({ a: 1 });
  });
});

describe("linear cost", () => {
  it("streams a 2 MB string in 16-char fragments", () => {
    // A chunk mixing plain runs, escapes and a surrogate pair, so every path of the string scanner runs.
    const chunk = 'abcdefghij\\n\\"KLMNOP\\u00e9 qrstuvwxyz😀0123456789\\\\';
    const repeats = Math.ceil((2 * 1024 * 1024) / chunk.length);
    const text = `{"big":"${chunk.repeat(repeats)}","after":1}`;
    const parser = new IncrementalJsonParser();
    const root = parser.value;
    expect(root).toBeUndefined();
    let pushes = 0;
    for (let i = 0; i < text.length; i += 16) {
      parser.push(text.slice(i, i + 16));
      pushes++;
    }
    expect(pushes).toBe(Math.ceil(text.length / 16));
    expect(parser.length).toBe(text.length);
    expect(parser.state).toBe("complete");
    const value = parser.value as { big: string; after: number };
    const expected = JSON.parse(text) as { big: string; after: number };
    expect(value.big.length).toBe(expected.big.length);
    expect(value.big === expected.big).toBe(true);
    expect(value.after).toBe(1);
  });

  it("streams an array of 200k elements in small fragments", () => {
    const items = Array.from({ length: 200_000 }, (_, i) => (i % 3 === 0 ? i : i % 3 === 1 ? `s${i}` : { k: i }));
    const text = JSON.stringify(items);
    const parser = new IncrementalJsonParser();
    for (let i = 0; i < text.length; i += 7) parser.push(text.slice(i, i + 7));
    expect(parser.state).toBe("complete");
    expect(parser.value).toEqual(items);
  });
});

// Properties. String units include controls, lone surrogates and astral characters so that escapes,
// split pairs and multi-unit characters all occur.
const stringUnit = fc.oneof(
  { weight: 6, arbitrary: fc.string({ unit: "grapheme-ascii", minLength: 1, maxLength: 1 }) },
  { weight: 1, arbitrary: fc.constantFrom("\u0000", "\n", "\u001f", '"', "\\", "/", "\u2028", "\ud800", "\udc00", "😀", "é") },
  { weight: 1, arbitrary: fc.string({ unit: "binary", minLength: 1, maxLength: 1 }) },
);
const jsonValue = fc.jsonValue({ maxDepth: 4, stringUnit });
const specialKey = fc.constantFrom("__proto__", "constructor", "prototype", "toString", "hasOwnProperty", "", "a");
const entry = fc.tuple(fc.oneof(specialKey, fc.string({ unit: stringUnit })), jsonValue);
const objectText = (entries: [string, unknown][]): string => `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${JSON.stringify(v)}`).join(",")}}`;
const objectWithSpecialKeys = fc.uniqueArray(entry, { maxLength: 6, selector: ([k]) => k }).map(objectText);
// Duplicate keys make earlier previews legitimately inconsistent with the final value (last wins),
// so they only feed the properties about final values.
const objectWithDuplicateKeys = fc.array(fc.tuple(specialKey, jsonValue), { minLength: 2, maxLength: 6 }).map(objectText);
const jsonText = fc.oneof(
  jsonValue.map((v) => JSON.stringify(v)),
  jsonValue.map((v) => ` ${JSON.stringify(v, null, 2)}\n`),
  objectWithSpecialKeys,
);
const cuts = fc.array(fc.nat(), { maxLength: 12 });

describe("properties", () => {
  it("any JSON text, any split: final value equals JSON.parse and state is complete", () => {
    fc.assert(
      fc.property(fc.oneof(jsonText, objectWithDuplicateKeys), cuts, (text, points) => {
        const parser = feed(splitAt(text, points));
        parser.flush();
        expect(parser.state).toBe("complete");
        expect(parser.error).toBeNull();
        expect(parser.value).toEqual(JSON.parse(text));
        expect(parser.values).toHaveLength(1);
        expect(parser.valueEnds).toEqual([text.trimEnd().length]);
        expect(parser.depth).toBe(0);
      }),
      { numRuns: 400 },
    );
  });

  it("every intermediate preview is consistent with the final value, with one root identity", () => {
    fc.assert(
      fc.property(jsonText, cuts, (text, points) => {
        const expected = JSON.parse(text) as unknown;
        const parser = new IncrementalJsonParser();
        let root: unknown;
        for (const fragment of splitAt(text, points)) {
          parser.push(fragment);
          const preview = parser.value;
          expect(consistentPreview(preview, expected)).toBe(true);
          if (typeof preview === "object" && preview !== null) {
            root ??= preview;
            expect(preview).toBe(root);
          }
        }
        parser.flush();
        expect(parser.value).toEqual(expected);
      }),
      { numRuns: 300 },
    );
  });

  it("no prefix of a valid text is an error, and a proper prefix of an object is not complete", () => {
    fc.assert(
      fc.property(objectWithSpecialKeys, fc.nat(), (text, at) => {
        const cut = at % (text.length + 1);
        const parser = scanJson(text.slice(0, cut));
        expect(parser.error).toBeNull();
        if (cut < text.length) expect(parser.state).not.toBe("complete");
      }),
      { numRuns: 300 },
    );
  });

  const junk = fc
    .array(
      fc.constantFrom("{", "}", "[", "]", ",", ":", '"', "\\", "u", "0", "1", "9", "-", "+", ".", "e", "E", "t", "r", "f", "a", "l", "s", "n", " ", "\n", "\u0001", "x", "A"),
      { maxLength: 16 },
    )
    .map((parts) => parts.join(""));
  const mutated = fc
    .tuple(
      jsonText,
      fc.array(fc.tuple(fc.nat(), fc.constantFrom("del", "ins", "rep"), fc.constantFrom("{", "}", "]", ",", ":", '"', "\\", "0", "-", ".", "e", "x", " ", "\n")), {
        minLength: 1,
        maxLength: 3,
      }),
    )
    .map(([text, edits]) => {
      let out = text;
      for (const [at, op, ch] of edits) {
        const i = at % (out.length + 1);
        out = op === "del" ? out.slice(0, i) + out.slice(i + 1) : op === "ins" ? out.slice(0, i) + ch + out.slice(i) : out.slice(0, i) + ch + out.slice(i + 1);
      }
      return out;
    });

  it("agrees with JSON.parse on arbitrary and mutated texts, whatever the split", () => {
    fc.assert(
      fc.property(fc.oneof(junk, mutated), cuts, (text, points) => {
        const whole = scanJson(text);
        const parser = feed(splitAt(text, points));
        parser.flush();
        const parsed = parseOrFail(text);
        if (parsed.ok) {
          expect(parser.state).toBe("complete");
          expect(parser.value).toEqual(parsed.value);
        } else {
          expect(parser.state).not.toBe("complete");
        }
        expect(parser.state).toBe(whole.state);
        expect(parser.error).toEqual(whole.error);
      }),
      { numRuns: 1500 },
    );
  });

  it("an error is reported at the first character that no valid text could continue with", () => {
    fc.assert(
      fc.property(fc.oneof(junk, mutated), (text) => {
        const parser = scanJson(text);
        if (parser.state !== "error" || parser.error === null) return;
        const position = parser.error.position;
        expect(position).toBeLessThan(text.length);
        expect(feed([text.slice(0, position)]).state).not.toBe("error");
        expect(feed([text.slice(0, position + 1)]).error).toEqual(parser.error);
      }),
      { numRuns: 800 },
    );
  });

  it("multiple: concatenated values split back into the originals", () => {
    const separator = fc.constantFrom("", " ", "\n", "\r\n", "\t ");
    fc.assert(
      fc.property(fc.array(fc.tuple(jsonValue, separator), { minLength: 1, maxLength: 5 }), cuts, (items, points) => {
        // Adjacent numbers or literals need a separator to stay apart, as they would in JSON Lines.
        const text = items.map(([v, sep], i) => (i === 0 ? "" : sep === "" ? " " : sep) + JSON.stringify(v)).join("");
        const parser = feed(splitAt(text, points), { multiple: true });
        parser.flush();
        expect(parser.state).toBe("complete");
        expect(parser.values).toEqual(items.map(([v]) => JSON.parse(JSON.stringify(v)) as unknown));
        const ends = parser.valueEnds;
        let previous = 0;
        ends.forEach((end, i) => {
          expect(JSON.parse(text.slice(previous, end))).toEqual(parser.values[i]);
          previous = end;
        });
      }),
      { numRuns: 200 },
    );
  });
});

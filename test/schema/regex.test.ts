import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { isToolwireError } from "../../src/errors.js";
import { checkSchema, SchemaCompileError, UnsupportedPatternError, validateArguments } from "../../src/schema/index.js";
import { compilePattern, translatePattern } from "../../src/schema/regex.js";
import { explainValue } from "../../src/schema/validate.js";

/**
 * Schema patterns run on RE2 (linear time). The four schemas below hang a backtracking engine
 * (each added character doubles `RegExp`'s time); here they must simply give the right answer.
 * Speed is measured in bench/regex.ts, not here.
 */
describe("super-linear schema patterns finish with the right verdict", () => {
  it("pattern (a+)+$ against 'a'×26 + '!'", () => {
    const schema = { type: "object", properties: { s: { type: "string", pattern: "(a+)+$" } } };
    const result = validateArguments(schema, { s: "a".repeat(26) + "!" });
    expect(result.valid).toBe(false);
    expect(result.issues).toEqual([expect.objectContaining({ code: "pattern", path: ["s"], expected: "(a+)+$" })]);
    expect(validateArguments(schema, { s: "b" + "a".repeat(26) }).valid).toBe(true);
  });

  it("pattern ^(\\w+\\s?)*$ against 30 words and a '!'", () => {
    const schema = { type: "object", properties: { s: { type: "string", pattern: "^(\\w+\\s?)*$" } } };
    const words = Array.from({ length: 30 }, (_, i) => `word${i}`).join(" ");
    expect(validateArguments(schema, { s: words + "!" }).issues).toEqual([expect.objectContaining({ code: "pattern", path: ["s"] })]);
    expect(validateArguments(schema, { s: words }).valid).toBe(true);
  });

  it("patternProperties ^(a|aa)+$", () => {
    const schema = { type: "object", patternProperties: { "^(a|aa)+$": { type: "number" } }, additionalProperties: false };
    const longKey = "a".repeat(40);
    expect(validateArguments(schema, { [longKey + "!"]: 1 }).issues).toEqual([expect.objectContaining({ code: "unknown_field", received: longKey + "!" })]);
    expect(validateArguments(schema, { [longKey]: 1 }).valid).toBe(true);
    // The explanation walk matches keys with the same engine: the key's schema applies.
    expect(explainValue(schema, { [longKey]: "one" })).toEqual([expect.objectContaining({ code: "type", path: [longKey], expected: ["number"] })]);
  });

  it("propertyNames (x+x+)+y", () => {
    const schema = { type: "object", propertyNames: { pattern: "(x+x+)+y" } };
    const key = "x".repeat(40);
    expect(validateArguments(schema, { [key]: 1 }).issues).toEqual([
      expect.objectContaining({ code: "pattern", received: key, message: `the key '${key}' must match the pattern (x+x+)+y; received string "${key}"` }),
    ]);
    expect(validateArguments(schema, { ["x".repeat(40) + "y"]: 1 }).valid).toBe(true);
  });
});

describe("ECMA-262 meaning on RE2", () => {
  it.each([
    // [pattern, input, matches] — each row is what RegExp(pattern, "u") answers.
    ["^\\s$", "\u00a0", true],
    ["^\\s$", "\ufeff", true],
    ["^\\s$", "\u2028", true],
    ["^\\s$", "\u000b", true],
    ["^\\S$", "\u00a0", false],
    ["^[\\s]$", "\u3000", true],
    ["^[^\\s]$", "\u3000", false],
    ["^[\\S]$", "x", true],
    ["^.$", "\r", false],
    ["^.$", "\u2029", false],
    ["^.$", "😀", true],
    ["^a$", "a\n", false],
    ["^\\d$", "٣", false],
    ["^\\w$", "é", false],
    ["[]", "a", false],
    ["^[^]$", "\n", true],
    ["^\\u00e9$", "é", true],
    ["^\\u{1F600}$", "😀", true],
    ["^\\uD83D\\uDE00$", "😀", true],
    ["^[\\uD83D\\uDE00]$", "😀", true],
    ["^\\p{Letter}+$", "Ωé", true],
    ["^\\p{Lu}$", "a", false],
    ["^\\p{gc=Decimal_Number}$", "٣", true],
    ["^\\p{Script=Greek}$", "α", true],
    ["^\\P{ASCII}$", "é", true],
    ["^\\cJ$", "\n", true],
    ["^[\\b]$", "\b", true],
    ["^\\0$", "\u0000", true],
    ["^(?<year>\\d{4})-\\d\\d$", "2026-11", true],
    ["^[a\\-z]+$", "-a", true],
    ["^[[:a]+$", "[:", true],
    ["^\\/\\.$", "/.", true],
    ["\\bword\\b", "a word.", true],
    ["^[a-c]{2,3}$", "abcd", false],
  ] as const)("%s on %j → %s", (pattern, input, expected) => {
    expect(new RegExp(pattern, "u").test(input)).toBe(expected);
    expect(compilePattern(pattern).test(input)).toBe(expected);
  });

  it.each([
    ["(a)\\1", "backreference"],
    ["(?<x>a)\\k<x>", "backreference"],
    ["a(?=b)", "lookahead"],
    ["a(?!b)", "lookahead"],
    ["(?<=a)b", "lookbehind"],
    ["(?<!a)b", "lookbehind"],
    ["a{1001}", "above 1000"],
    ["\\p{Ideographic}", "Ideographic"],
    ["\\p{Script_Extensions=Greek}", "Script_Extensions"],
    ["(unclosed", "not a valid ECMA-262 regular expression"],
    ["a{,5}", "not a valid ECMA-262 regular expression"],
  ])("refuses %s (%s) with a typed error", (pattern, reason) => {
    const error = (() => {
      try {
        compilePattern(pattern);
      } catch (caught) {
        return caught;
      }
      return null;
    })();
    expect(error).toBeInstanceOf(UnsupportedPatternError);
    expect(isToolwireError(error) && error.code).toBe("unsupported_pattern");
    expect((error as UnsupportedPatternError).reason).toContain(reason);
    expect(translatePattern(pattern)).toEqual({ ok: false, reason: (error as UnsupportedPatternError).reason });
  });

  it("refuses inline modifier groups, which would change the translation's meaning (Node 20 rejects them as syntax)", () => {
    const verdict = translatePattern("(?s:.)");
    expect(verdict.ok).toBe(false);
    expect(verdict.ok ? "" : verdict.reason).toMatch(/inline modifier group|not a valid ECMA-262/);
  });

  it("a schema with a refused pattern throws SchemaCompileError naming it, never falls back to RegExp", () => {
    const schema = { type: "object", properties: { id: { type: "string", pattern: "^(\\w)\\1$" } } };
    let thrown: unknown;
    try {
      validateArguments(schema, { id: "aa" });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(SchemaCompileError);
    expect((thrown as Error).message).toContain("^(\\\\w)\\\\1$");
    expect((thrown as Error).message).toContain("backreference");
    expect((thrown as Error).cause).toBeInstanceOf(UnsupportedPatternError);
  });

  it("checkSchema reports each refused pattern where it is, as an error of rule pattern-engine", () => {
    const schema = {
      type: "object",
      properties: { a: { type: "string", pattern: "(?=x)" }, b: { type: "string", pattern: "^ok$" } },
      patternProperties: { "^(a)\\1$": { type: "string" } },
      propertyNames: { pattern: "(?<!x)y" },
    };
    const problems = checkSchema(schema, "openai").filter((problem) => problem.rule === "pattern-engine");
    expect(problems.map((problem) => [problem.path, problem.severity, problem.fixable])).toEqual([
      ["#/patternProperties/^(a)\\1$", "error", false],
      ["#/properties/a/pattern", "error", false],
      ["#/propertyNames/pattern", "error", false],
    ]);
    expect(problems[0]?.message).toContain("backreference");
    expect(checkSchema({ type: "object", properties: { b: { type: "string", pattern: "^ok$" } } }, "openai")).toEqual([]);
  });
});

/** Patterns without nested quantifiers, so that RegExp answers quickly for the comparison. */
const atom = fc.constantFrom("a", "b", "c", ".", "\\d", "\\w", "\\s", "\\S", "\\W", "[abc]", "[^a]", "[a-c1]", "[\\s.]", "\\.", "[]", "[^]", "\\u0061", "(?:ab|c)", "\\b", "\\B", " ");
const quantifier = fc.constantFrom("", "", "*", "+", "?", "{1,3}", "{2}", "*?", "+?");
const sequence = fc.array(fc.tuple(atom, quantifier), { minLength: 1, maxLength: 4 }).map((parts) =>
  parts.map(([text, q]) => (text === "\\b" || text === "\\B" ? text : text + q)).join(""),
);
const pattern = fc
  .tuple(fc.boolean(), fc.array(sequence, { minLength: 1, maxLength: 3 }), fc.boolean())
  .map(([start, alternatives, end]) => `${start ? "^" : ""}${alternatives.length > 1 ? `(?:${alternatives.join("|")})` : alternatives[0]}${end ? "$" : ""}`);
const input = fc.string({ unit: fc.constantFrom("a", "b", "c", "1", "_", ".", " ", "\n", "\r", "\t", "!", "\u00a0", "é"), maxLength: 12 });

describe("property: RE2 agrees with RegExp", () => {
  it("for any pattern RE2 accepts and any input, compilePattern(p).test(s) === new RegExp(p, 'u').test(s)", () => {
    fc.assert(
      fc.property(pattern, input, (source, text) => {
        expect(compilePattern(source).test(text)).toBe(new RegExp(source, "u").test(text));
      }),
      { numRuns: 500 },
    );
  });
});

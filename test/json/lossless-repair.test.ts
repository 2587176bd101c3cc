import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { jsonEqual } from "../../src/json/equal.js";
import { finalizeArguments } from "../../src/json/finalize.js";
import { classifyRepair, repairArguments, tokenDifference } from "../../src/json/repair.js";
import { argumentsObject } from "../../src/testing/generators.js";

/**
 * Issue 17, "Repair may not invent": only lossless repairs yield runnable arguments. Lossless:
 * quoting a bare word, requoting or escaping a string, dropping a trailing comma, a code fence or
 * a special-token tail, writing Python literals as JSON, adding the outer object's missing closing
 * brace. Anything that drops, invents or reorders a token is lossy: invalid_json, with the
 * candidate as error.suggestion.
 */

const decide = (text: string) => finalizeArguments({ deltaText: text }, { toolName: "shell", complete: true, emptyMeansNoArguments: true });

describe("lossy repairs are suggestions, never arguments", () => {
  it("the issue's example: a key and a value the model never wrote are not run", () => {
    const text = '{"cmd":"ls" "x" :: }}}';
    const result = decide(text);
    expect(result).toMatchObject({ arguments: null, source: null, error: { code: "invalid_json" } });
    expect(result.error?.suggestion).toBeDefined();
    expect(result.error?.message).toContain("closest repair");
    expect(result.error?.message).toContain("was not used");
    expect(result.error?.message).toContain(JSON.stringify(result.error?.suggestion));
    expect(repairArguments(text)).toBeUndefined();
  });

  it.each([
    ['{"a":1 "b":2}', "a missing comma"],
    ['{"a" 1}', "a missing colon"],
    ['{"a": hello world}', "two bare words joined into one string"],
    ['{"a":1,,"b":2}', "a doubled comma dropped"],
    ['{"a": "x" + "y"}', "string concatenation"],
    ['{"a": undefined}', "undefined turned into null"],
    ['{"a": 1} // comment', "a comment dropped"],
    ['"a":1}', "an opening brace invented"],
    ['{"a":{"b":1,"c":2}', "a brace that is not the outer one"],
  ])("%s (%s) is not runnable", (text) => {
    const result = decide(text);
    expect(result.arguments).toBeNull();
    expect(result.error?.code).toBe("invalid_json");
  });

  it.each([
    ['{"path": "a.txt", "mode": replace}', { path: "a.txt", mode: "replace" }, ["jsonrepair"]],
    ["{path: 'a.txt'}", { path: "a.txt" }, ["single_quotes", "jsonrepair"]],
    ['{"a": True, "b": [None, False],}', { a: true, b: [null, false] }, ["python_literals", "trailing_comma"]],
    ['```json\n{"a": 1, "b": "x"\n```', { a: 1, b: "x" }, ["strip_code_fence", "missing_closing_brace"]],
    ['{"a":"line\nbreak"}', { a: "line\nbreak" }, ["jsonrepair"]],
    ['{"a":1}<|call|>', { a: 1 }, ["strip_special_tokens"]],
  ] as const)("%s is lossless", (text, value, repairs) => {
    const result = decide(text);
    expect(result.arguments).toEqual(value);
    expect(result.repairs).toEqual(repairs);
    expect(result.error).toBeNull();
  });

  it("the token comparison names what a lossy candidate changes", () => {
    expect(tokenDifference('{"a":1 "b":2}', '{"a":1,"b":2}')).toContain('","');
    expect(tokenDifference("{a: 'x',}", '{"a":"x"}')).toBeNull();
  });
});

// ---------------------------------------------------------------------------------------------
// Properties.

/** Rewrites JSON text outside strings, token by token (a linear scan, strings copied whole). */
function mapTokens(text: string, visit: (token: string, kind: "string" | "other", next: string) => string): string {
  const out: string[] = [];
  let i = 0;
  while (i < text.length) {
    let j = i;
    let kind: "string" | "other";
    if (text[i] === '"') {
      j = i + 1;
      while (text[j] !== '"') j += text[j] === "\\" ? 2 : 1;
      j++;
      kind = "string";
    } else {
      j = i + 1;
      if (/[A-Za-z0-9.+-]/.test(text[i] as string)) while (j < text.length && /[A-Za-z0-9.+-]/.test(text[j] as string)) j++;
      kind = "other";
    }
    out.push(visit(text.slice(i, j), kind, text[j] ?? ""));
    i = j;
  }
  return out.join("");
}

const PY: Record<string, string> = { true: "True", false: "False", null: "None" };

interface Mutation {
  fence: boolean;
  specialTail: boolean;
  python: boolean;
  singleQuotes: boolean;
  trailingCommas: boolean;
  dropBrace: boolean;
}

function mutate(value: Record<string, unknown>, m: Mutation): string {
  let text = JSON.stringify(value);
  const lastValue = Object.values(value).at(-1);
  const dropBrace = m.dropBrace && Object.keys(value).length > 0 && (typeof lastValue !== "object" || lastValue === null);
  text = mapTokens(text, (token, kind, next) => {
    if (kind === "string") {
      if (!m.singleQuotes) return token;
      const body = token.slice(1, -1).replace(/\\"|'/g, (hit) => (hit === "'" ? "\\'" : '"'));
      return `'${body}'`;
    }
    if (m.python && Object.hasOwn(PY, token)) return PY[token] as string;
    if (m.trailingCommas && (next === "}" || next === "]") && token !== "{" && token !== "[") return `${token},`;
    return token;
  });
  if (dropBrace) text = text.replace(/,?\}$/, "");
  if (m.specialTail) text += "<|im_end|>";
  if (m.fence) text = "```json\n" + text + "\n```";
  return text;
}

const mutation: fc.Arbitrary<Mutation> = fc.record({
  fence: fc.boolean(),
  specialTail: fc.boolean(),
  python: fc.boolean(),
  singleQuotes: fc.boolean(),
  trailingCommas: fc.boolean(),
  dropBrace: fc.boolean(),
});

describe("properties of repair", () => {
  it("for any valid object, the lossless mutations repair back to exactly it", () => {
    fc.assert(
      fc.property(argumentsObject(), mutation, (value, m) => {
        const text = mutate(value, m);
        const result = decide(text);
        expect(result.error, text).toBeNull();
        expect(jsonEqual(result.arguments, value), text).toBe(true);
      }),
      { numRuns: 400 },
    );
  });

  /** One token deleted, or one of a few tokens inserted between two tokens (spaced, so it stays a token of its own). */
  const edit = fc.record({ at: fc.nat(), insert: fc.option(fc.constantFrom(":", ",", '"x"', "x", "}", "{", "]", "[", "1"), { nil: undefined }) });

  it("a one-token edit that breaks the JSON never yields runnable arguments other than the original", () => {
    fc.assert(
      fc.property(argumentsObject(), edit, (value, { at, insert }) => {
        const tokens: string[] = [];
        mapTokens(JSON.stringify(value), (token) => {
          tokens.push(token);
          return token;
        });
        const k = at % tokens.length;
        // Deleting an array's or object's last element leaves `,` before the closer: exactly a
        // trailing comma, which is lossless by rule. Such an edit is indistinguishable, so skipped.
        if (insert === undefined && tokens[k - 1] === "," && (tokens[k + 1] === "}" || tokens[k + 1] === "]")) return;
        const edited = insert === undefined ? [...tokens.slice(0, k), ...tokens.slice(k + 1)] : [...tokens.slice(0, k), ` ${insert} `, ...tokens.slice(k)];
        const text = edited.join("");
        try {
          JSON.parse(text);
          return; // still valid JSON: nothing to repair
        } catch {
          // broken: the case this property is about
        }
        const outcome = classifyRepair(text);
        if (outcome?.kind === "lossless") expect(jsonEqual(outcome.value, value), text).toBe(true);
        const result = decide(text);
        if (result.arguments !== null && !result.repairs.includes("split_concatenated_calls")) expect(jsonEqual(result.arguments, value), text).toBe(true);
      }),
      { numRuns: 600 },
    );
  });
});

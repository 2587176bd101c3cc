/**
 * Numbers a JavaScript value cannot hold as the model wrote them. JSON numbers have no limit, but a
 * parsed value is a double: `1e999` becomes `Infinity`, which `JSON.stringify` writes as `null`, and
 * the integer `12345678901234567890` becomes `12345678901234567000`. Either way the arguments an
 * agent runs or forwards would not be the call the model sent, silently.
 *
 * Decimals are read to the nearest double, as every JSON parser reads them; only a value beyond the
 * double's range, and an integer literal beyond ±2^53 that the double would give back with other
 * digits, are refused.
 * Whole objects a caller parsed before toolwire saw them (an SDK's events) have lost an integer's
 * digits already: only an out-of-range value (`Infinity`) can be found in them.
 */

/** What was refused and where, for the call's error message. */
export interface UnrepresentableNumber {
  /** Where the number sits in the arguments, as a JSON-path-like string (`$.a[2].b`). */
  path: string;
  /** The number as the model wrote it, when the text holds it. */
  written: string | undefined;
  /** `overflow`: beyond ±1.8e308; `inexact_integer`: an integer literal the double rounds to other digits. */
  reason: "overflow" | "inexact_integer";
  /** The value a double holds for it (`Infinity`, or the rounded integer). */
  value: number;
}

const MAX_EXACT = Number.MAX_SAFE_INTEGER;

/**
 * True when `value` is a number that could be unrepresentable: beyond the exact integers, or not
 * finite. The cheap test the argument walk applies to every leaf; the text decides after it.
 */
export function isSuspectNumber(value: unknown): boolean {
  return typeof value === "number" && (value > MAX_EXACT || value < -MAX_EXACT || value !== value);
}

/** True when a number in `value` satisfies `test`, without recursion and without building paths. */
export function holdsNumber(value: unknown, test: (n: number) => boolean): boolean {
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const node = stack.pop();
    if (typeof node === "number" && test(node)) return true;
    if (typeof node === "object" && node !== null) for (const child of Array.isArray(node) ? node : Object.values(node)) stack.push(child);
  }
  return false;
}

/** True when a leaf of `value` is a suspect number (`isSuspectNumber`). */
export function holdsSuspectNumber(value: unknown): boolean {
  return holdsNumber(value, isSuspectNumber);
}

/**
 * The first number in `value` that the model's text `text` does not give exactly, or undefined.
 * Called only when a walk found a suspect number, so its cost is off the common path.
 */
export function findUnrepresentableNumber(value: unknown, text: string): UnrepresentableNumber | undefined {
  const overflowPath = pathOf(value, (n) => !Number.isFinite(n));
  if (overflowPath) {
    const written = firstNumberToken(text, (token) => !Number.isFinite(Number(token)));
    return { path: overflowPath.path, written, reason: "overflow", value: overflowPath.value };
  }
  const inexact = firstNumberToken(text, isInexactInteger);
  if (inexact === undefined) return undefined;
  const rounded = Number(inexact);
  const found = pathOf(value, (n) => n === rounded);
  return { path: found?.path ?? "$", written: inexact, reason: "inexact_integer", value: rounded };
}

/** The sentence a call's error gives the model about the number. */
export function describeUnrepresentable(problem: UnrepresentableNumber): string {
  const where = problem.path === "$" ? "" : ` at ${problem.path}`;
  if (problem.reason === "inexact_integer") {
    return `the integer ${problem.written ?? String(problem.value)}${where} is beyond ±9007199254740991 (2^53 − 1) and would be read as ${String(problem.value)}`;
  }
  // An object parsed before toolwire saw it no longer has the text: only where, and what it became.
  return problem.written === undefined
    ? `a number${where} is beyond the range of a 64-bit float (about ±1.8e308) and was read as ${String(problem.value)}, which JSON cannot hold`
    : `the number ${problem.written}${where} is beyond the range of a 64-bit float (about ±1.8e308) and would be read as ${String(problem.value)}, which JSON cannot hold`;
}

function isInexactInteger(token: string): boolean {
  const digits = token.charCodeAt(0) === 0x2d ? token.length - 1 : token.length;
  if (digits <= 15) return false;
  for (let i = 0; i < token.length; i++) {
    const c = token.charCodeAt(i);
    if (c === 0x2e || c === 0x65 || c === 0x45) return false;
  }
  const rounded = Number(token);
  // Lossless when the double is the integer, or when writing it back gives the digits the model wrote.
  return Number.isFinite(rounded) && BigInt(token) !== BigInt(rounded) && String(rounded) !== token;
}

/**
 * The first number token outside strings that satisfies `test`. A token starts only where a JSON
 * value can (after `[`, `,`, `:` or at the start), so digits in a bare word are not read as one.
 */
function firstNumberToken(text: string, test: (token: string) => boolean): string | undefined {
  let inString = false;
  let valueMayStart = true;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++;
      else if (c === 0x22) inString = false;
      continue;
    }
    if (c === 0x22) {
      inString = true;
      valueMayStart = false;
    } else if (c === 0x5b || c === 0x2c || c === 0x3a || c === 0x7b) {
      valueMayStart = true;
    } else if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) {
      // whitespace keeps whether a value may start
    } else if (valueMayStart && (c === 0x2d || (c >= 0x30 && c <= 0x39))) {
      let end = i + 1;
      while (end < text.length && isNumberChar(text.charCodeAt(end))) end++;
      const token = text.slice(i, end);
      if (test(token)) return token;
      i = end - 1;
      valueMayStart = false;
    } else {
      valueMayStart = false;
    }
  }
  return undefined;
}

function isNumberChar(c: number): boolean {
  return (c >= 0x30 && c <= 0x39) || c === 0x2e || c === 0x65 || c === 0x45 || c === 0x2b || c === 0x2d;
}

/** The path of the first number (depth first, in key order) that satisfies `test`, without recursion. */
function pathOf(value: unknown, test: (n: number) => boolean): { path: string; value: number } | undefined {
  const stack: Array<[unknown, string]> = [[value, "$"]];
  while (stack.length > 0) {
    const [node, path] = stack.pop() as [unknown, string];
    if (typeof node === "number") {
      if (test(node)) return { path, value: node };
      continue;
    }
    if (typeof node !== "object" || node === null) continue;
    const children: Array<[unknown, string]> = Array.isArray(node)
      ? node.map((child, i) => [child, `${path}[${i}]`])
      : Object.entries(node).map(([key, child]) => [child, /^[A-Za-z_$][\w$]*$/.test(key) ? `${path}.${key}` : `${path}[${JSON.stringify(key)}]`]);
    for (let i = children.length - 1; i >= 0; i--) stack.push(children[i] as [unknown, string]);
  }
  return undefined;
}

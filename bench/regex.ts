import type { SchemaNode } from "../src/schema/json-schema.js";
import { validateArguments } from "../src/schema/validate.js";
import { cpuMs, median } from "./cpu.js";

/**
 * `npm run bench:regex`: validateArguments on the schemas whose patterns take a backtracking
 * engine exponential time (issue 17), with 10 KB inputs. Schema patterns run on RE2, so each call
 * must take under 10 ms of CPU time. Reports the median of 21 runs after a warm-up (the schema
 * is compiled once and cached, as in an agent's loop) and exits 1 when a case is over budget.
 */

const SIZE = 10 * 1024;
const BUDGET_MS = 10;
const RUNS = 21;

const words = (() => {
  let text = "";
  for (let i = 0; text.length < SIZE; i++) text += `word${i} `;
  return text.slice(0, SIZE);
})();

const CASES: Array<{ name: string; schema: SchemaNode; args: unknown; valid: boolean }> = [
  {
    name: "pattern (a+)+$, 'a'×10 KB + '!'",
    schema: { type: "object", properties: { s: { type: "string", pattern: "(a+)+$" } } },
    args: { s: "a".repeat(SIZE) + "!" },
    valid: false,
  },
  {
    name: "pattern ^(\\w+\\s?)*$, 10 KB of words + '!'",
    schema: { type: "object", properties: { s: { type: "string", pattern: "^(\\w+\\s?)*$" } } },
    args: { s: words + "!" },
    valid: false,
  },
  {
    name: "patternProperties ^(a|aa)+$, a 10 KB key + '!'",
    schema: { type: "object", patternProperties: { "^(a|aa)+$": { type: "number" } }, additionalProperties: false },
    args: { ["a".repeat(SIZE) + "!"]: 1 },
    valid: false,
  },
  {
    name: "propertyNames (x+x+)+y, a 10 KB key",
    schema: { type: "object", propertyNames: { pattern: "(x+x+)+y" } },
    args: { ["x".repeat(SIZE)]: 1 },
    valid: false,
  },
];

let failed = 0;
console.log(`schema regex benchmark (validateArguments, CPU time, median of ${RUNS}), node ${process.version}\n`);
for (const c of CASES) {
  let result: ReturnType<typeof validateArguments> | undefined;
  const first = cpuMs(() => (result = validateArguments(c.schema, c.args)));
  if (result?.valid !== c.valid) throw new Error(`${c.name}: expected valid=${c.valid}`);
  for (let i = 0; i < 3; i++) validateArguments(c.schema, c.args);
  const times = Array.from({ length: RUNS }, () => cpuMs(() => validateArguments(c.schema, c.args)));
  const ms = median(times);
  const ok = ms < BUDGET_MS;
  if (!ok) failed++;
  console.log(`  ${c.name.padEnd(52)} ${ms.toFixed(2).padStart(7)} ms  (max ${Math.max(...times).toFixed(2)} ms; first call, compiling the schema: ${first.toFixed(1)} ms)  ${ok ? "ok" : "OVER"} < ${BUDGET_MS} ms`);
}
console.log(failed === 0 ? `\nall ${CASES.length} cases under ${BUDGET_MS} ms` : `\n${failed} case(s) over ${BUDGET_MS} ms`);
if (failed > 0) process.exitCode = 1;

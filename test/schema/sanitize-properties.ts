import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { checkSchema } from "../../src/schema/check.js";
import { compileSchema } from "../../src/schema/compile.js";
import { stableStringify, type SchemaNode } from "../../src/schema/json-schema.js";
import { carryToolArguments, restoreToolArguments, sanitizeSchema, targetSchemaAsJsonSchema } from "../../src/schema/sanitize.js";
import { sanitizeTools } from "../../src/schema/tools.js";
import { instanceArb, toolSchemaArb } from "./arbitraries.js";

function deepFreeze<T>(value: T): T {
  if (typeof value === "object" && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}

function valid(schema: unknown, value: unknown): boolean {
  return compileSchema(schema as SchemaNode).validate(value) === true;
}

/** Up to `tries` instances following the schema that ajv accepts under it. */
function validInstances(schema: SchemaNode, gen: fc.GeneratorValue, tries = 12): unknown[] {
  const out: unknown[] = [];
  for (let i = 0; i < tries && out.length < 4; i++) {
    const candidate = gen(() => instanceArb(schema, schema));
    if (valid(schema, candidate)) out.push(candidate);
  }
  return out;
}

const RUNS = Number(process.env.TOOLWIRE_PROPERTY_RUNS ?? 40);

/** The sanitizer's properties for `targets` (split across files to keep each file quick). */
export function sanitizerProperties(targets: readonly string[]): void {
describe.each(targets)("sanitizeSchema(…, %s) on generated tool schemas", (target) => {
  it("produces a schema checkSchema accepts, idempotently, without touching its input", () => {
    fc.assert(
      fc.property(toolSchemaArb, (schema) => {
        const frozen = deepFreeze(structuredClone(schema));
        const before = stableStringify(frozen);
        const result = sanitizeSchema(frozen, target);
        expect(stableStringify(frozen)).toBe(before);
        const remaining = checkSchema(result.schema, target).filter((p) => p.fixable || p.severity === "error");
        expect(remaining, JSON.stringify(result.schema)).toEqual([]);
        const again = sanitizeSchema(result.schema, target);
        expect(again.changes).toEqual([]);
        expect(stableStringify(again.schema)).toBe(stableStringify(result.schema));
      }),
      { numRuns: RUNS, endOnFailure: true },
    );
  });

  it("with rootCombinators 'keep': passes the target's check under the same option, idempotently, and keeps every valid instance valid", () => {
    const options = { rootCombinators: "keep" } as const;
    fc.assert(
      fc.property(toolSchemaArb, fc.gen(), (schema, gen) => {
        const result = sanitizeSchema(schema, target, options);
        const remaining = checkSchema(result.schema, target, options).filter((p) => p.fixable || p.severity === "error");
        expect(remaining, JSON.stringify(result.schema)).toEqual([]);
        const again = sanitizeSchema(result.schema, target, options);
        expect(again.changes).toEqual([]);
        expect(stableStringify(again.schema)).toBe(stableStringify(result.schema));
        const targetSchema = targetSchemaAsJsonSchema(result.schema, target);
        for (const instance of validInstances(schema, gen, 6)) {
          const carried = carryToolArguments(result, instance);
          expect(valid(targetSchema, carried), `carried ${JSON.stringify(carried)} invalid under ${JSON.stringify(targetSchema)}`).toBe(true);
        }
      }),
      { numRuns: Math.ceil(RUNS / 2), endOnFailure: true },
    );
  });

  it("sanitizeTools puts exactly sanitizeSchema's output into every tool shape", () => {
    fc.assert(
      fc.property(toolSchemaArb, (schema) => {
        const expected = stableStringify(sanitizeSchema(schema, target).schema);
        const tools = [
          { type: "function", function: { name: "t0", parameters: schema } },
          { type: "function", name: "t1", parameters: schema },
          { name: "t2", input_schema: schema },
          { name: "t3", inputSchema: schema },
          { toolSpec: { name: "t4", inputSchema: { json: schema } } },
          { functionDeclarations: [{ name: "t5", parameters: schema }] },
        ];
        const result = sanitizeTools(tools, target);
        expect(result.entries.map((e) => e.name)).toEqual(["t0", "t1", "t2", "t3", "t4", "t5"]);
        for (const entry of result.entries) expect(stableStringify(entry.result.schema)).toBe(expected);
        const again = sanitizeTools(result.tools, target);
        expect(again.changes).toEqual([]);
      }),
      { numRuns: Math.ceil(RUNS / 4), endOnFailure: true },
    );
  });

  it("carries valid instances into valid target instances and restores them to valid originals", () => {
    fc.assert(
      fc.property(toolSchemaArb, fc.gen(), (schema, gen) => {
        const result = sanitizeSchema(schema, target);
        const targetSchema = targetSchemaAsJsonSchema(result.schema, target);
        for (const instance of validInstances(schema, gen)) {
          const carried = carryToolArguments(result, instance);
          expect(valid(targetSchema, carried), `carried ${JSON.stringify(carried)} invalid under ${JSON.stringify(targetSchema)}`).toBe(true);
          const restored = restoreToolArguments(result, carried);
          expect(valid(schema, restored), `restored ${JSON.stringify(restored)} from ${JSON.stringify(instance)}`).toBe(true);
          if (result.argumentMap.length === 0) expect(restored).toEqual(instance);
        }
      }),
      { numRuns: RUNS, endOnFailure: true },
    );
  });
});
}

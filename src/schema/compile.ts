import { Ajv2020, type ErrorObject, type ValidateFunction } from "ajv/dist/2020.js";
import { assertSchemaDepth, declaredTypes, isPlainObject, isSchemaNode, stableStringify, transformNodes, type Schema, type SchemaNode } from "./json-schema.js";
import { ToolwireError } from "../errors.js";
import { linearRegExpEngine, UnsupportedPatternError } from "./regex.js";

/**
 * One ajv (draft 2020-12) compilation per schema, cached twice: by object identity (WeakMap, the
 * common case of a tool registry passing the same object every turn) and by stable serialization
 * (schemas rebuilt per request, e.g. from MCP listings). Treat a schema as immutable once used.
 */

/** A schema the validator cannot compile (code `invalid_schema`); the schema is kept on the error. */
export class SchemaCompileError extends ToolwireError {
  constructor(
    message: string,
    readonly schema: unknown,
    options?: { cause?: unknown },
  ) {
    super("invalid_schema", message, options);
  }
}

export interface Compiled {
  validate: ValidateFunction;
  /** The root schema this was compiled against (for `$ref` resolution in derived schemas). */
  root: Schema;
}

const MAX_KEYED_ENTRIES = 512;

const byIdentity = new WeakMap<object, Compiled>();
const byKey = new Map<string, Compiled>();

// Linear patterns only: each quantified group is followed by a fixed separator.
const FORMATS: Record<string, RegExp | ((value: string) => boolean)> = {
  date: (value) => isDate(value),
  time: /^\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:[zZ]|[+-]\d{2}:\d{2})?$/,
  "date-time": (value) => {
    const t = value.search(/[tT ]/);
    return t === 10 && isDate(value.slice(0, 10)) && /^\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:[zZ]|[+-]\d{2}:\d{2})$/.test(value.slice(11));
  },
  uuid: /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/,
  email: /^[^\s@]+@[^\s@.]+(?:\.[^\s@.]+)+$/,
  ipv4: /^(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)$/,
};

function isDate(value: string): boolean {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value);
  if (!m) return false;
  const year = Number(m[1]);
  const month = Number(m[2]);
  const day = Number(m[3]);
  if (month < 1 || month > 12 || day < 1) return false;
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  const days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1]!;
  return day <= days;
}

let sharedAjv: Ajv2020 | null = null;

/** Every schema pattern runs on the linear-time engine (see regex.ts), never on `RegExp`. */
function newAjv(): Ajv2020 {
  const instance = new Ajv2020({ allErrors: true, strict: false, verbose: true, logger: false, validateSchema: true, code: { regExp: linearRegExpEngine } });
  for (const [name, format] of Object.entries(FORMATS)) instance.addFormat(name, format);
  return instance;
}

function ajv(): Ajv2020 {
  sharedAjv ??= newAjv();
  return sharedAjv;
}

/**
 * Schemas with an `$id` share ajv's registry; two different schemas with the same `$id` would
 * collide, so each `$id`-bearing schema gets a private instance.
 */
function compileFresh(original: Schema): ValidateFunction {
  const schema = forDraft2020(original);
  const hasId = isSchemaNode(schema) && typeof schema.$id === "string";
  const instance = hasId ? newAjv() : ajv();
  try {
    return instance.compile(schema as SchemaNode);
  } catch (error) {
    // A pattern the linear-time engine refuses makes the schema unusable: say which and why.
    if (error instanceof UnsupportedPatternError) throw new SchemaCompileError(`Unsupported JSON Schema: ${error.message}`, schema, { cause: error });
    throw new SchemaCompileError(`Invalid JSON Schema: ${error instanceof Error ? error.message : String(error)}`, schema, { cause: error });
  }
}

/**
 * Tool schemas in the wild are often older drafts or OpenAPI: `$schema` naming draft-07 (which a
 * 2020-12 validator would try to load), tuple `items: [...]`, draft-04 boolean exclusive bounds,
 * `dependencies`, OpenAPI's `nullable: true`. They are read as their authors meant, in 2020-12
 * terms, on a copy.
 */
export function forDraft2020(schema: Schema): Schema {
  if (!isSchemaNode(schema)) return schema;
  const root = transformNodes(schema, (node) => {
    let out: SchemaNode | null = null;
    const edit = () => (out ??= { ...node });
    if (Array.isArray(node.items)) {
      const o = edit();
      o.prefixItems = node.items;
      delete o.items;
      if ("additionalItems" in node) {
        o.items = node.additionalItems;
        delete o.additionalItems;
      }
    }
    for (const [bound, limit] of [
      ["exclusiveMinimum", "minimum"],
      ["exclusiveMaximum", "maximum"],
    ] as const) {
      if (typeof node[bound] !== "boolean") continue;
      const o = edit();
      if (node[bound] === true && typeof node[limit] === "number") {
        o[bound] = node[limit];
        delete o[limit];
      } else delete o[bound];
    }
    if (isPlainObject(node.dependencies)) {
      const o = edit();
      const required: Record<string, unknown> = {};
      const schemas: Record<string, unknown> = {};
      for (const [key, dep] of Object.entries(node.dependencies)) (Array.isArray(dep) ? required : schemas)[key] = dep;
      delete o.dependencies;
      if (Object.keys(required).length > 0) o.dependentRequired = { ...(isPlainObject(node.dependentRequired) ? node.dependentRequired : {}), ...required };
      if (Object.keys(schemas).length > 0) o.dependentSchemas = { ...(isPlainObject(node.dependentSchemas) ? node.dependentSchemas : {}), ...schemas };
    }
    if (node.nullable === true) {
      const o = edit();
      delete o.nullable;
      const types = declaredTypes(node);
      if (types && !types.includes("null")) o.type = [...types, "null"];
      if (Array.isArray(node.enum) && !node.enum.includes(null)) o.enum = [...node.enum, null];
      if (!types && Array.isArray(node.anyOf)) o.anyOf = [...node.anyOf, { type: "null" }];
    }
    return out ?? node;
  }) as SchemaNode;
  if (typeof root.$schema === "string" && !root.$schema.includes("2020-12")) {
    const copy = { ...root };
    delete copy.$schema;
    return copy;
  }
  return root;
}

/**
 * Compiles (or returns the cached compilation of) a root schema. Throws SchemaCompileError, or
 * TooDeepError for a schema nested deeper than MAX_SCHEMA_DEPTH.
 */
export function compileSchema(schema: Schema): Compiled {
  if (typeof schema === "object" && schema !== null) {
    const hit = byIdentity.get(schema);
    if (hit) return hit;
  }
  assertSchemaDepth(schema);
  const key = stableStringify(schema);
  let compiled = byKey.get(key);
  if (compiled) {
    // Refresh LRU position.
    byKey.delete(key);
    byKey.set(key, compiled);
  } else {
    compiled = { validate: compileFresh(schema), root: schema };
    byKey.set(key, compiled);
    if (byKey.size > MAX_KEYED_ENTRIES) {
      const oldest = byKey.keys().next().value;
      if (oldest !== undefined) {
        const evicted = byKey.get(oldest);
        byKey.delete(oldest);
        if (evicted && evicted.validate.schema !== undefined) sharedAjv?.removeSchema(evicted.validate.schema as SchemaNode);
      }
    }
  }
  if (typeof schema === "object" && schema !== null) byIdentity.set(schema, compiled);
  return compiled;
}

const derived = new WeakMap<object, WeakMap<object, ValidateFunction>>();

/**
 * Compiles a node taken from inside `root` (a branch of an `anyOf`, a `then`…) so that its local
 * `#/$defs/…` references still resolve: the root's definitions are carried along.
 */
export function compileDerived(root: Schema, node: Schema): ValidateFunction {
  if (typeof node === "boolean") return compileSchema(node).validate;
  const rootKey = typeof root === "object" && root !== null ? root : derivedBooleanRoot;
  let perRoot = derived.get(rootKey);
  if (!perRoot) {
    perRoot = new WeakMap();
    derived.set(rootKey, perRoot);
  }
  const hit = perRoot.get(node);
  if (hit) return hit;
  const wrapper: SchemaNode = { ...node };
  delete wrapper.$id;
  if (isSchemaNode(root)) {
    if (root.$defs !== undefined && wrapper.$defs === undefined) wrapper.$defs = root.$defs;
    if (root.definitions !== undefined && wrapper.definitions === undefined) wrapper.definitions = root.definitions;
  }
  const validate = compileSchema(wrapper).validate;
  perRoot.set(node, validate);
  return validate;
}

/** Whether `value` is valid under `node`, which is `root` itself or a schema inside it. */
export function validUnder(root: Schema, node: Schema, value: unknown): boolean {
  return (node === root ? compileSchema(node).validate : compileDerived(root, node))(value) === true;
}

const derivedBooleanRoot = {};

/** Validates the schema document itself against the draft 2020-12 meta-schema. */
export function metaValidate(schema: unknown): ErrorObject[] {
  assertSchemaDepth(schema);
  const instance = ajv();
  try {
    const ok = instance.validateSchema(forDraft2020(schema as Schema) as SchemaNode);
    if (ok) return [];
  } catch (error) {
    return [{ keyword: "$schema", instancePath: "", schemaPath: "#", params: {}, message: error instanceof Error ? error.message : String(error) }];
  }
  return [...(instance.errors ?? [])];
}

export type { ErrorObject };

/**
 * Value helpers for the fuzzer that must survive the values it produces: hostile arguments nest far
 * deeper than `JSON.stringify` or any recursive comparison can follow (V8 overflows its stack a
 * few thousand levels down), so everything here walks with an explicit stack.
 */

import { stringifyJson } from "../json/stringify.js";

/** `JSON.stringify(value)` for JSON data, without recursion (see json/stringify.ts). */
export { stringifyJson };

/**
 * The first difference between two JSON-like values, as a path and a short reason, or null when
 * they are equal. Object keys holding `undefined` count as absent, as in `toEqual`.
 */
export function firstDifference(a: unknown, b: unknown, maxNodes = Number.POSITIVE_INFINITY): string | null {
  const stack: Array<[unknown, unknown, string]> = [[a, b, "$"]];
  let visited = 0;
  while (stack.length > 0) {
    const [x, y, path] = stack.pop() as [unknown, unknown, string];
    if (++visited > maxNodes) return null;
    if (Object.is(x, y) || (x === 0 && y === 0)) continue;
    if (typeof x !== "object" || typeof y !== "object" || x === null || y === null) {
      return `${path}: ${preview(x)} vs ${preview(y)}`;
    }
    if (ArrayBuffer.isView(x) || ArrayBuffer.isView(y)) {
      if (!ArrayBuffer.isView(x) || !ArrayBuffer.isView(y)) return `${path}: bytes vs ${preview(ArrayBuffer.isView(x) ? y : x)}`;
      const xs = new Uint8Array(x.buffer, x.byteOffset, x.byteLength);
      const ys = new Uint8Array(y.buffer, y.byteOffset, y.byteLength);
      if (xs.length !== ys.length || xs.some((byte, i) => byte !== ys[i])) return `${path}: different bytes`;
      continue;
    }
    const xArray = Array.isArray(x);
    if (xArray !== Array.isArray(y)) return `${path}: ${xArray ? "array" : "object"} vs ${xArray ? "object" : "array"}`;
    if (xArray) {
      const xs = x as unknown[];
      const ys = y as unknown[];
      if (xs.length !== ys.length) return `${path}: length ${xs.length} vs ${ys.length}`;
      for (let i = xs.length - 1; i >= 0; i--) stack.push([xs[i], ys[i], `${path}[${i}]`]);
      continue;
    }
    const xo = x as Record<string, unknown>;
    const yo = y as Record<string, unknown>;
    const xKeys = Object.keys(xo).filter((key) => xo[key] !== undefined);
    const yKeys = Object.keys(yo).filter((key) => yo[key] !== undefined);
    const yKeySet = new Set(yKeys);
    for (const key of xKeys) if (!yKeySet.has(key)) return `${path}.${key}: present vs absent`;
    if (xKeys.length !== yKeys.length) {
      const xKeySet = new Set(xKeys);
      const extra = yKeys.find((key) => !xKeySet.has(key));
      return `${path}.${String(extra)}: absent vs present`;
    }
    for (let i = xKeys.length - 1; i >= 0; i--) {
      const key = xKeys[i] as string;
      stack.push([xo[key], yo[key], `${path}.${key}`]);
    }
  }
  return null;
}

function preview(value: unknown): string {
  if (typeof value === "string") return JSON.stringify(value.length > 60 ? value.slice(0, 60) + "…" : value);
  if (typeof value === "object" && value !== null) return Array.isArray(value) ? "[array]" : "{object}";
  return String(value);
}

/**
 * Visits every object and array inside `value` (itself included), without recursion. The visitor
 * gets the container and its path; returning false stops the walk.
 */
export function walkContainers(value: unknown, visit: (container: object, path: string) => boolean | void, maxNodes = 1_000_000): void {
  const stack: Array<[unknown, string]> = [[value, "$"]];
  let visited = 0;
  while (stack.length > 0 && visited < maxNodes) {
    const [node, path] = stack.pop() as [unknown, string];
    if (typeof node !== "object" || node === null || ArrayBuffer.isView(node)) continue;
    visited++;
    if (visit(node, path) === false) return;
    if (Array.isArray(node)) {
      for (let i = node.length - 1; i >= 0; i--) stack.push([node[i], `${path}[${i}]`]);
    } else {
      for (const key of Object.keys(node)) stack.push([(node as Record<string, unknown>)[key], `${path}.${key}`]);
    }
  }
}

/** Structured copy of JSON data (deep values included). */
export function cloneJson<T>(value: T): T {
  if (typeof value !== "object" || value === null) return value;
  const root: { v: unknown } = { v: undefined };
  const stack: Array<[unknown, Record<string, unknown> | unknown[], string | number]> = [[value, root as unknown as Record<string, unknown>, "v"]];
  while (stack.length > 0) {
    const [source, parent, key] = stack.pop() as [unknown, Record<string, unknown> | unknown[], string | number];
    let copy: unknown = source;
    if (typeof source === "object" && source !== null) {
      if (ArrayBuffer.isView(source)) {
        copy = (source as unknown as Uint8Array).slice();
      } else if (Array.isArray(source)) {
        const array: unknown[] = new Array(source.length);
        for (let i = source.length - 1; i >= 0; i--) stack.push([source[i], array, i]);
        copy = array;
      } else {
        const object: Record<string, unknown> = {};
        // Pushed in reverse so that keys are created in their original order.
        const keys = Object.keys(source);
        for (let i = keys.length - 1; i >= 0; i--) stack.push([(source as Record<string, unknown>)[keys[i] as string], object, keys[i] as string]);
        copy = object;
      }
    }
    setOwn(parent, key, copy);
  }
  return root.v as T;
}

/** Assignment that keeps `__proto__` and friends as plain own data. */
export function setOwn(target: Record<string, unknown> | unknown[], key: string | number, value: unknown): void {
  if (typeof key === "number") {
    (target as unknown[])[key] = value;
  } else if (key === "__proto__" || key === "constructor" || key === "prototype") {
    Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  } else {
    (target as Record<string, unknown>)[key] = value;
  }
}

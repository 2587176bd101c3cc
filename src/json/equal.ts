/** Structural equality for JSON values (objects compared by own keys, order-insensitive). */
export function jsonEqual(a: unknown, b: unknown): boolean {
  // Explicit stack: argument objects may be nested far deeper than the JS call stack allows.
  const stack: Array<[unknown, unknown]> = [[a, b]];
  while (stack.length > 0) {
    const [x, y] = stack.pop() as [unknown, unknown];
    if (x === y) continue;
    if (typeof x !== "object" || typeof y !== "object" || x === null || y === null) return false;
    const xArray = Array.isArray(x);
    if (xArray !== Array.isArray(y)) return false;
    if (xArray) {
      const xs = x as unknown[];
      const ys = y as unknown[];
      if (xs.length !== ys.length) return false;
      for (let i = 0; i < xs.length; i++) stack.push([xs[i], ys[i]]);
      continue;
    }
    const xKeys = Object.keys(x);
    const yObject = y as Record<string, unknown>;
    if (xKeys.length !== Object.keys(yObject).length) return false;
    for (const key of xKeys) {
      if (!Object.prototype.hasOwnProperty.call(yObject, key)) return false;
      stack.push([(x as Record<string, unknown>)[key], yObject[key]]);
    }
  }
  return true;
}

/**
 * True when `later` contains everything `earlier` has, with string values allowed to have grown
 * (the shape of a provider that resends the whole arguments so far on every chunk).
 */
export function jsonExtends(earlier: unknown, later: unknown): boolean {
  const stack: Array<[unknown, unknown]> = [[earlier, later]];
  while (stack.length > 0) {
    const [x, y] = stack.pop() as [unknown, unknown];
    if (x === y) continue;
    if (typeof x === "string" && typeof y === "string") {
      if (!y.startsWith(x)) return false;
      continue;
    }
    if (typeof x !== "object" || typeof y !== "object" || x === null || y === null) return false;
    if (Array.isArray(x)) {
      if (!Array.isArray(y) || y.length < x.length) return false;
      for (let i = 0; i < x.length; i++) stack.push([x[i], y[i]]);
      continue;
    }
    if (Array.isArray(y)) return false;
    const yObject = y as Record<string, unknown>;
    for (const key of Object.keys(x)) {
      if (!Object.prototype.hasOwnProperty.call(yObject, key)) return false;
      stack.push([(x as Record<string, unknown>)[key], yObject[key]]);
    }
  }
  return true;
}

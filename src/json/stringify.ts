/**
 * JSON text without recursion: values nested deeper than `JSON.stringify` can follow (hostile
 * streams) still serialize, with the same output.
 */

/** Text as the inside of a JSON string literal; per character, so it can be applied fragment by fragment. */
export function jsonStringBody(text: string): string {
  return JSON.stringify(text).slice(1, -1);
}

/** `JSON.stringify(value)`, and without recursion when the value nests deeper than it follows (a hostile body or stream). */
export function jsonText(value: unknown): string {
  try {
    return JSON.stringify(value);
  } catch {
    return stringifyJson(value);
  }
}

/** `JSON.stringify(value)` for JSON data, without recursion. Same output for the values it accepts. */
export function stringifyJson(value: unknown): string {
  const out: string[] = [];
  // Work items: a value to write, or a literal piece of punctuation.
  const stack: Array<{ value: unknown } | string> = [{ value }];
  while (stack.length > 0) {
    const item = stack.pop() as { value: unknown } | string;
    if (typeof item === "string") {
      out.push(item);
      continue;
    }
    const v = item.value;
    if (v === null || typeof v !== "object") {
      // Leaves are safe to hand to JSON.stringify: it recurses only into containers.
      out.push(typeof v === "undefined" || typeof v === "function" || typeof v === "symbol" ? "null" : (JSON.stringify(v) ?? "null"));
      continue;
    }
    if (ArrayBuffer.isView(v)) {
      // Typed arrays serialize as index-keyed objects in JSON.stringify; keep that shape.
      const view = v as unknown as ArrayLike<number>;
      const entries: Record<string, number> = {};
      for (let i = 0; i < view.length; i++) entries[String(i)] = view[i] as number;
      stack.push({ value: entries });
      continue;
    }
    if (Array.isArray(v)) {
      stack.push("]");
      for (let i = v.length - 1; i >= 0; i--) {
        stack.push({ value: v[i] });
        if (i > 0) stack.push(",");
      }
      out.push("[");
      continue;
    }
    const keys = Object.keys(v).filter((key) => {
      const member = (v as Record<string, unknown>)[key];
      return member !== undefined && typeof member !== "function" && typeof member !== "symbol";
    });
    stack.push("}");
    for (let i = keys.length - 1; i >= 0; i--) {
      const key = keys[i] as string;
      stack.push({ value: (v as Record<string, unknown>)[key] });
      stack.push(JSON.stringify(key) + ":");
      if (i > 0) stack.push(",");
    }
    out.push("{");
  }
  return out.join("");
}

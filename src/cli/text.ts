/** Fits one line into `width` columns, ending it with "…" when it is cut. Code points, not UTF-16 units. */
export function fitLine(line: string, width: number): string {
  if (line.length <= width) return line;
  const chars = Array.from(line);
  return chars.length <= width ? line : `${chars.slice(0, Math.max(1, width - 1)).join("")}…`;
}

/**
 * Text safe to print on a terminal: control characters (but newline and tab), DEL, C1 controls,
 * lone surrogates and U+FFFD (what undecodable bytes became) are written as escapes, so binary
 * garbage quoted in a message can neither garble nor drive the terminal.
 */
export function printable(text: string): string {
  let out = "";
  for (const char of text) {
    const code = char.codePointAt(0) as number;
    if (code === 0x0a || code === 0x09) out += char;
    else if (code < 0x20 || (code >= 0x7f && code <= 0x9f)) out += `\\x${code.toString(16).padStart(2, "0")}`;
    else if ((code >= 0xd800 && code <= 0xdfff) || code === 0xfffd) out += `\\u${code.toString(16)}`;
    else out += char;
  }
  return out;
}

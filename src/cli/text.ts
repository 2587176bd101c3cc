/** Fits one line into `width` columns, ending it with "…" when it is cut. Code points, not UTF-16 units. */
export function fitLine(line: string, width: number): string {
  if (line.length <= width) return line;
  const chars = Array.from(line);
  return chars.length <= width ? line : `${chars.slice(0, Math.max(1, width - 1)).join("")}…`;
}

/** JSON's four whitespace characters (RFC 8259): space, tab, line feed, carriage return. */
export function isJsonSpace(code: number): boolean {
  return code === 0x20 || code === 0x0a || code === 0x0d || code === 0x09;
}

/** The first character of `text` that is not JSON whitespace, or "" when there is none. */
export function firstNonSpace(text: string): string {
  for (let i = 0; i < text.length; i++) if (!isJsonSpace(text.charCodeAt(i))) return text[i] as string;
  return "";
}

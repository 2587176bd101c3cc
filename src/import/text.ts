const strictUtf8 = new TextDecoder("utf-8", { fatal: true });

/** UTF-8 text of `bytes`, or null when they are not valid UTF-8 (binary bodies, compressed data). */
export function utf8OrNull(bytes: Uint8Array): string | null {
  try {
    return strictUtf8.decode(bytes);
  } catch {
    return null;
  }
}

export function startsWithBytes(bytes: Uint8Array, prefix: readonly number[]): boolean {
  if (bytes.length < prefix.length) return false;
  for (let i = 0; i < prefix.length; i++) if (bytes[i] !== prefix[i]) return false;
  return true;
}

export const GZIP_MAGIC = [0x1f, 0x8b] as const;

export function plural(count: number, word: string): string {
  return `${count} ${word}${count === 1 ? "" : "s"}`;
}

export function quoteShort(text: string, max = 60): string {
  return JSON.stringify(text.length > max ? text.slice(0, max) + "…" : text);
}

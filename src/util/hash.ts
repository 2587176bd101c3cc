/**
 * A small, deterministic, non-cryptographic 53-bit string hash (two interleaved 32-bit
 * multiply-xorshift lanes). Used to mint stable call ids: the same stream always yields the
 * same ids, in every runtime, with no dependency on a crypto API.
 */
export function hash53(text: string, seed = 0): number {
  let h1 = 0xdeadbeef ^ seed;
  let h2 = 0x41c6ce57 ^ seed;
  for (let i = 0; i < text.length; i++) {
    const ch = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ ch, 2654435761);
    h2 = Math.imul(h2 ^ ch, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return 4294967296 * (2097151 & h2) + (h1 >>> 0);
}

/** `hash53` as a fixed-width base-36 string (11 chars), safe in every provider's id alphabet. */
export function hashId(text: string): string {
  return hash53(text).toString(36).padStart(11, "0");
}

/** Deterministic id for a call the provider sent without one: `<prefix><hash of name, arguments, position>`. */
export function mintCallId(prefix: string, name: string, argumentsText: string, position: number): string {
  return `${prefix}${hashId(`${name}\u0000${argumentsText}\u0000${position}`)}`;
}

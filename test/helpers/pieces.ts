/** `bytes` cut after every `sizes[i % n]` bytes (each at least 1), in order: a body as a network might deliver it. */
export function* cyclicPieces(bytes: Uint8Array, sizes: readonly number[]): Generator<Uint8Array> {
  let offset = 0;
  let turn = 0;
  while (offset < bytes.length) {
    const size = Math.max(1, sizes[turn++ % sizes.length] as number);
    yield bytes.subarray(offset, offset + size);
    offset += size;
  }
}

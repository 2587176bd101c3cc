import { concatBytes } from "../util/bytes.js";
import { ImportError } from "./errors.js";
import { GZIP_MAGIC, startsWithBytes } from "./text.js";

/** Content codings the web-standard DecompressionStream reads. */
export type ContentCoding = "gzip" | "deflate";

/** Refuses to inflate past this: a small compressed body can expand without bound. */
export const MAX_INFLATED_BYTES = 512 * 1024 * 1024;

/**
 * The coding a body needs undone: gzip when it starts with gzip's magic bytes (whatever the
 * headers say), else the declared `Content-Encoding` when it is one DecompressionStream knows.
 */
export function codingOf(body: Uint8Array, declared: string): ContentCoding | null {
  if (startsWithBytes(body, GZIP_MAGIC)) return "gzip";
  const coding = declared.trim().toLowerCase();
  if (coding === "gzip" || coding === "x-gzip") return "gzip";
  if (coding === "deflate") return "deflate";
  return null;
}

/** Decompresses with the built-in DecompressionStream (Node ≥ 18, browsers, Deno, Bun). */
export async function inflate(bytes: Uint8Array, coding: ContentCoding, file: string, label = ""): Promise<Uint8Array> {
  const parts: Uint8Array[] = [];
  let total = 0;
  try {
    const stream = new Blob([bytes as Uint8Array<ArrayBuffer>]).stream().pipeThrough(new DecompressionStream(coding));
    const reader = stream.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      total += value.length;
      if (total > MAX_INFLATED_BYTES) {
        await reader.cancel();
        throw new ImportError(`${label}the ${coding} body inflates past ${MAX_INFLATED_BYTES} bytes; not read`, "malformed", file);
      }
      parts.push(value);
    }
  } catch (error) {
    if (error instanceof ImportError) throw error;
    throw new ImportError(`${label}the ${coding} body cannot be decompressed: ${error instanceof Error ? error.message : String(error)}`, "malformed", file);
  }
  return concatBytes(parts);
}

/**
 * Hands compressed response bodies their decompressed bytes during a synchronous import. The
 * import runs once collecting the bodies that need it, they are inflated (asynchronously), and
 * the import runs again with the results, served in the same order.
 */
export interface BodyInflater {
  /** The decompressed body, or null when it is not available (yet). */
  take(body: Uint8Array, coding: ContentCoding): Uint8Array | null;
}

export class CollectingInflater implements BodyInflater {
  readonly pending: Array<{ body: Uint8Array; coding: ContentCoding }> = [];
  take(body: Uint8Array, coding: ContentCoding): null {
    this.pending.push({ body, coding });
    return null;
  }
}

export class ReadyInflater implements BodyInflater {
  private next = 0;
  constructor(private readonly inflated: readonly Uint8Array[]) {}
  take(): Uint8Array | null {
    return this.inflated[this.next++] ?? null;
  }
}

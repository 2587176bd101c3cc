import { createWriteStream } from "node:fs";
import { mkdir } from "node:fs/promises";
import { dirname } from "node:path";

/** Options of `fileSink`. */
export interface FileSinkOptions {
  /** Add to the end of an existing file (several turns, one file) instead of replacing it. */
  append?: boolean;
}

/**
 * A `record` sink that writes to a file: `record(response, await fileSink("turns/1.ndjson"))`.
 * Parent directories are created. The file is closed when the recording ends (unless the
 * recording was made with `preventClose`).
 */
export async function fileSink(path: string, options: FileSinkOptions = {}): Promise<WritableStream<string>> {
  await mkdir(dirname(path), { recursive: true });
  const file = createWriteStream(path, { flags: options.append ? "a" : "w", encoding: "utf8" });
  await new Promise<void>((resolve, reject) => {
    file.once("open", () => resolve());
    file.once("error", reject);
  });
  return new WritableStream<string>({
    write(chunk) {
      return new Promise<void>((resolve, reject) => {
        file.write(chunk, (error) => (error ? reject(error) : resolve()));
      });
    },
    close() {
      return new Promise<void>((resolve, reject) => {
        file.end((error?: Error | null) => (error ? reject(error) : resolve()));
      });
    },
    abort() {
      file.destroy();
    },
  });
}

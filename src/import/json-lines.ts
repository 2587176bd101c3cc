import type { ProviderEvent } from "../types.js";
import { ImportError } from "./errors.js";
import { plural, quoteShort } from "./text.js";

/**
 * JSON per line with the SSE framing stripped (vercel/ai `*.chunks.txt`): each line is one
 * `data:` payload. A line that is not JSON is kept as a string payload, exactly as the SSE
 * framer keeps a `data:` line that is not JSON, so the decoder sees what a live stream would.
 */
export function jsonLinesToEvents(text: string, file: string, notes: string[], options: { lenient: boolean }): ProviderEvent[] {
  const events: ProviderEvent[] = [];
  const broken: number[] = [];
  const lines = text.split("\n");
  lines.forEach((raw, i) => {
    const line = raw.endsWith("\r") ? raw.slice(0, -1) : raw;
    if (line.trim() === "") return;
    try {
      events.push({ data: JSON.parse(line) as unknown });
    } catch (error) {
      // Only a file that says it is JSON per line (*.chunks.txt) earns the benefit of the doubt;
      // for a sniffed one, a broken line more likely means it is not JSON lines at all.
      if (!options.lenient) {
        const reason = error instanceof Error ? error.message : String(error);
        throw new ImportError(
          `line ${i + 1}: not JSON (${reason}): ${quoteShort(line)}; JSON-per-line files need one complete JSON value per line`,
          "malformed",
          file,
        );
      }
      broken.push(i + 1);
      events.push({ data: line });
    }
  });
  if (broken.length > 0) {
    notes.push(`${plural(broken.length, "line")} not valid JSON, kept as string payload${broken.length === 1 ? "" : "s"} (line ${broken.join(", ")})`);
  }
  return events;
}

import type { ProviderEvent } from "../types.js";

/**
 * Newline-delimited JSON framing (Ollama's /api/chat): one payload per line, bytes split
 * anywhere. A line that is not JSON is passed on as a string for the decoder to report.
 */
export interface NdjsonFramer {
  push(chunk: Uint8Array | string): ProviderEvent[];
  finish(): ProviderEvent[];
}

export function createNdjsonFramer(): NdjsonFramer {
  const decoder = new TextDecoder("utf-8");
  let partial = "";

  const lines = (text: string): ProviderEvent[] => {
    const events: ProviderEvent[] = [];
    let start = 0;
    let newline = text.indexOf("\n");
    while (newline >= 0) {
      pushLine(text.slice(start, newline), events);
      start = newline + 1;
      newline = text.indexOf("\n", start);
    }
    partial = text.slice(start);
    return events;
  };

  return {
    push(chunk) {
      const text = typeof chunk === "string" ? chunk : decoder.decode(chunk, { stream: true });
      if (text.indexOf("\n") < 0) {
        partial += text;
        return [];
      }
      return lines(partial + text);
    },
    finish() {
      const rest = partial + decoder.decode();
      partial = "";
      const events: ProviderEvent[] = [];
      pushLine(rest, events);
      return events;
    },
  };
}

function pushLine(raw: string, events: ProviderEvent[]): void {
  const line = raw.endsWith("\r") ? raw.slice(0, -1) : raw;
  if (line.trim() === "") return;
  try {
    events.push({ data: JSON.parse(line) });
  } catch {
    events.push({ data: line });
  }
}

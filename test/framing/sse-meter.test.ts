import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { SseSizeMeter } from "../../src/framing/sse-meter.js";

/**
 * The obvious model of the limit, line by line over the whole text: where the first line that
 * passes it starts, and the character whose arrival makes it pass.
 */
function reference(text: string, max: number): { lineStart: number; crossing: number } | null {
  let eventChars = 0;
  const line = /([^\r\n]*)(\r\n|\r|\n|$)/g;
  for (let match = line.exec(text); match !== null; match = line.exec(text)) {
    const content = match[1] as string;
    const start = match.index;
    const comment = content.startsWith(":");
    const budget = comment ? max : Math.min(max, max - eventChars);
    if (content.length > budget) return { lineStart: start, crossing: start + budget };
    if (content.length === 0 && match[2] !== "") eventChars = 0;
    else if (!comment) eventChars += content.length;
    if (match[2] === "") break;
  }
  return null;
}

/** Feeds `chunks`; the absolute position the meter reports (chunk start + offset) and the chunk it came in. */
function run(chunks: string[], max: number): { at: number; chunk: number } | null {
  const meter = new SseSizeMeter(max);
  let base = 0;
  for (let i = 0; i < chunks.length; i++) {
    const chunk = chunks[i] as string;
    const offset = meter.feed(chunk);
    if (offset >= 0) return { at: base + offset, chunk: i };
    base += chunk.length;
  }
  return null;
}

function cut(text: string, points: number[]): string[] {
  const at = [...new Set(points.map((p) => p % (text.length + 1)))].sort((x, y) => x - y);
  return [...at, text.length].map((end, i) => text.slice(i === 0 ? 0 : (at[i - 1] as number), end));
}

const MAX = 30;
const lineText = fc.oneof(
  fc.integer({ min: 0, max: MAX + 4 }).map((n) => `data: ${"x".repeat(n)}`),
  fc.integer({ min: 0, max: MAX + 4 }).map((n) => `:${"k".repeat(n)}`),
  fc.constant("event: e"),
  fc.constant(""),
);
const ending = fc.constantFrom("\n", "\r", "\r\n");
const body = fc.array(fc.tuple(lineText, ending), { maxLength: 14 }).map((lines) => lines.map(([l, e]) => l + e).join(""));

describe("SSE size meter", () => {
  it("agrees with the line-by-line model on the whole text and on any chunking", () => {
    fc.assert(
      fc.property(body, fc.array(fc.nat(), { maxLength: 8 }), (text, points) => {
        const expected = reference(text, MAX);
        const whole = run([text], MAX);
        expect(whole?.at ?? null).toBe(expected?.lineStart ?? null);
        const chunks = cut(text, points);
        const split = run(chunks, MAX);
        if (!expected) {
          expect(split).toBeNull();
          return;
        }
        // Found in the chunk holding the character that passes the limit, at the line's start
        // (or at that chunk's start when the line began in an earlier one).
        let base = 0;
        let holding = 0;
        while (base + (chunks[holding] as string).length <= expected.crossing) base += (chunks[holding++] as string).length;
        expect(split).toEqual({ chunk: holding, at: Math.max(base, expected.lineStart) });
      }),
      { numRuns: 1000 },
    );
  });

  it("reads a chunk that cannot pass the limit from its last blank line only, keeping CRLF split across chunks", () => {
    const meter = new SseSizeMeter(20);
    expect(meter.feed("data: 12345\r\n\r")).toBe(-1);
    // The LF completes the CRLF of the blank line: it is not another line.
    expect(meter.feed("\ndata: 1234567890")).toBe(-1);
    expect(meter.feed("1234\r\n")).toBe(-1);
    expect(meter.feed("data: x\n")).toBe(0);
  });

  it("a long comment line passes the limit too", () => {
    expect(new SseSizeMeter(10).feed(`:${"k".repeat(10)}\n`)).toBe(0);
  });
});

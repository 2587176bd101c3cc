import { createParser } from "eventsource-parser";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { createByteDecoder } from "../../src/adapters/bytes.js";
import { createSseFramer } from "../../src/framing/sse.js";
import type { Diagnostic, ProviderEvent } from "../../src/types.js";
import { splitAt } from "../helpers/properties.js";

function frame(chunks: Array<string | Uint8Array>, maxLineChars: number): { events: ProviderEvent[]; diagnostics: Diagnostic[] } {
  const framer = createSseFramer({ maxLineChars });
  const events: ProviderEvent[] = [];
  for (const chunk of chunks) events.push(...framer.push(chunk));
  events.push(...framer.flush());
  return { events, diagnostics: framer.diagnostics };
}

const LIMIT = 40;
// Lines around the limit, ended by LF, CR or CRLF, so that both the per-chunk shortcut (the chunk
// cannot hold a line past the limit) and the per-line measure are exercised.
const line = fc.tuple(fc.integer({ min: 0, max: LIMIT + 8 }), fc.constantFrom("\n", "\r", "\r\n")).map(([length, end]) => `data: ${"x".repeat(length)}${end}`);
const body = fc.array(fc.oneof(line, fc.constant("\n")), { maxLength: 12 }).map((lines) => lines.join(""));

describe("SSE framing: the line limit", () => {
  it("the outcome does not depend on how the text is chunked", () => {
    fc.assert(
      fc.property(body, fc.array(fc.nat(), { maxLength: 10 }), (text, points) => {
        expect(frame(splitAt(new TextEncoder().encode(text), points), LIMIT)).toEqual(frame([text], LIMIT));
      }),
      { numRuns: 500 },
    );
  });

  it("an event piling up data lines, then a line over the limit after a CR, stops the stream without throwing", () => {
    // Found by the property above (seed 982900825): the parser's own backstop tripped while the
    // text before the long line was fed, and the CR that ends that text was then fed to a parser
    // that had terminated, which throws.
    const text = `data: ${"x".repeat(12)}\ndata: ${"x".repeat(11)}\ndata: ${"x".repeat(33)}\ndata: ${"x".repeat(30)}\ndata: x\rdata: ${"x".repeat(35)}\n`;
    expect(frame([text], LIMIT)).toEqual({ events: [], diagnostics: [expect.objectContaining({ code: "sse_buffer_exceeded" })] });
    const decoder = createByteDecoder("anthropic", { limits: { maxLineChars: LIMIT } });
    expect(() => decoder.push(text)).not.toThrow();
    expect(decoder.finish().diagnostics.map((d) => d.code)).toContain("sse_buffer_exceeded");
  });

  it("a line exactly at the limit passes and one character more stops the stream", () => {
    const atLimit = `data: ${"x".repeat(LIMIT - 6)}\n\n`;
    expect(frame([atLimit], LIMIT)).toEqual({ events: [{ data: "x".repeat(LIMIT - 6) }], diagnostics: [] });
    const over = frame([`data: ${"x".repeat(LIMIT - 5)}\n\n`], LIMIT);
    expect(over.events).toEqual([]);
    expect(over.diagnostics.map((d) => d.code)).toEqual(["sse_buffer_exceeded"]);
  });

  it("a long line split across many small chunks is still measured as one line", () => {
    const text = `data: ${"x".repeat(LIMIT)}\n\n`;
    const chunks = text.match(/[\s\S]{1,3}/g) ?? [];
    expect(frame(chunks, LIMIT).diagnostics.map((d) => d.code)).toEqual(["sse_buffer_exceeded"]);
  });
});

describe("SSE framing: line ends", () => {
  /** What eventsource-parser itself reads from the whole text, CR line ends and all. */
  function reference(text: string): Array<{ event: string | undefined; data: string }> {
    const out: Array<{ event: string | undefined; data: string }> = [];
    const parser = createParser({ onEvent: (message) => out.push({ event: message.event, data: message.data }) });
    parser.feed(text);
    parser.feed("\n\n");
    return out;
  }
  const framed = (chunks: Array<string | Uint8Array>) => frame(chunks, 1 << 20).events.map((e) => ({ event: e.event, data: e.data }));
  const ending = fc.constantFrom("\n", "\r", "\r\n");
  const field = fc.oneof(
    // No quote or bracket: the data stays text, compared as it came.
    fc.string({ maxLength: 6 }).map((s) => `data: ${s.replace(/[\r\n"{[]/g, "")}`),
    fc.constantFrom("event: delta", ": comment", "data:", "id: 7", ""),
  );
  const text = fc.array(fc.tuple(field, ending), { maxLength: 14 }).map((lines) => lines.map(([f, e]) => f + e).join(""));

  it("CR, LF and CRLF line ends give the events eventsource-parser reads from the whole text, under any chunking", () => {
    fc.assert(
      fc.property(text, fc.array(fc.nat(), { maxLength: 10 }), (body, points) => {
        const want = reference(body);
        expect(framed([body])).toEqual(want);
        expect(framed(splitAt(new TextEncoder().encode(body), points))).toEqual(want);
      }),
      { numRuns: 500 },
    );
  });

  it("a CRLF split between chunks is one line end, an empty chunk between its halves included", () => {
    const want = [{ event: undefined, data: "a" }, { event: undefined, data: "b" }];
    expect(framed(["data: a\r", "\ndata: b\r\n\r\n"])).toEqual(reference("data: a\r\ndata: b\r\n\r\n"));
    expect(framed(["data: a\r", "", "\n\r\ndata: b\r", "\n\r", "\n"])).toEqual(want);
    expect(framed(["data: a\r\r", "data: b\r\r"])).toEqual(want);
  });

  it("a body of CR-only lines pushed at once is read whole (the parser gets LF line ends)", () => {
    let body = "";
    for (let i = 0; i < 2000; i++) body += `data: {"n":${i}}\r\r`;
    const events = frame([body], 1 << 20).events;
    expect(events).toHaveLength(2000);
    expect(events[1999]?.data).toEqual({ n: 1999 });
  });
});

/**
 * SSE line ends as LF only. eventsource-parser reads LF-only text in one pass, but on text with a
 * CR it searches for the next CR and the next LF from every line: on a body whose lines end in CR
 * alone, each search for an LF runs to the end of the text, so a chunk costs its lines times its
 * length (measured: 5 s for 3.8 MB pushed at once, against 73 ms with LF line ends). SSE reads
 * CRLF, CR and LF alike as one line end, so writing each as LF changes no event.
 */
export class LineEndNormalizer {
  /** The last text ended in CR: an LF that begins the next text is the rest of that CRLF. */
  private afterCR = false;

  normalize(text: string): string {
    if (text.length === 0) return text;
    const start = this.afterCR && text.charCodeAt(0) === LF ? 1 : 0;
    this.afterCR = text.charCodeAt(text.length - 1) === CR;
    if (text.indexOf("\r", start) < 0) return start === 0 ? text : text.slice(start);
    return (start === 0 ? text : text.slice(start)).replace(CR_LINE_END, "\n");
  }
}

const LF = 0x0a;
const CR = 0x0d;
const CR_LINE_END = /\r\n?/g;

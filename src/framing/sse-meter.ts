/**
 * Measures an SSE body against `maxLineChars` the same way however it is chunked: no line, and no
 * event (the characters of its lines, line endings and comment lines left out), may pass `max`
 * characters. `feed` returns -1 while everything fits, else the offset in `text` where the first
 * line that passes the limit starts (0 when it started in an earlier chunk). Once over, it stays over.
 *
 * Why the framer measures events itself: eventsource-parser's `maxBufferSize` is checked when a
 * `feed` call ends, so whether it trips depends on where the chunks end. Here the point of failure
 * is a property of the text alone, and it always comes before the parser's own limit can.
 *
 * Cost: a chunk that cannot reach the limit (the common case, a limit far above the chunk size) is
 * only measured from its last blank line on, found by native searches; otherwise each line end is
 * found once. Linear either way.
 */
export class SseSizeMeter {
  /** Characters of the line being read (it started in an earlier chunk when `feed` begins). */
  private current = 0;
  private currentIsComment = false;
  /** Characters of the completed, non-comment lines of the event being read. */
  private eventChars = 0;
  /** The last character read ended a line with CR: an LF next completes that CRLF. */
  private pendingCr = false;
  private over = false;

  constructor(private readonly max: number) {}

  feed(text: string): number {
    if (this.over) return 0;
    const n = text.length;
    if (n === 0) return -1;
    if (this.eventChars + this.current + n <= this.max) {
      // Nothing in this chunk can pass the limit: only the state at its end matters, and everything
      // before the last blank line in it is a finished event.
      const blank = this.lastBlankLineEnd(text);
      if (blank >= 0) {
        this.current = 0;
        this.currentIsComment = false;
        this.eventChars = 0;
        this.pendingCr = blank === n && text.charCodeAt(n - 1) === 0x0d;
        return this.measure(text, blank);
      }
    }
    return this.measure(text, 0);
  }

  /**
   * Where the last blank line of `text` ends (its line end included), or -1. A blank line is a
   * line end right after another: `\n\n`, `\n\r`, `\r\r` (never `\r\n`, which is one line end).
   */
  private lastBlankLineEnd(text: string): number {
    let at = text.lastIndexOf("\n\n");
    if (text.indexOf("\r") >= 0) at = Math.max(at, text.lastIndexOf("\n\r"), text.lastIndexOf("\r\r"));
    if (at >= 0) {
      const start = at + 1;
      return text.charCodeAt(start) === 0x0d && text.charCodeAt(start + 1) === 0x0a ? start + 2 : start + 1;
    }
    // A blank line whose first line end closed the previous chunk (at the very start, a leading
    // line end is a blank line too: there is no event to reset yet).
    const first = text.charCodeAt(0);
    if (this.current === 0 && (first === 0x0d || (first === 0x0a && !this.pendingCr))) {
      return first === 0x0d && text.charCodeAt(1) === 0x0a ? 2 : 1;
    }
    return -1;
  }

  /** Measures `text` from `from` line by line, continuing the state there. */
  private measure(text: string, from: number): number {
    const n = text.length;
    let start = from;
    let nextLf = text.indexOf("\n", start);
    let nextCr = text.indexOf("\r", start);
    while (start < n) {
      if (nextLf >= 0 && nextLf < start) nextLf = text.indexOf("\n", start);
      if (nextCr >= 0 && nextCr < start) nextCr = text.indexOf("\r", start);
      const end = nextLf < 0 ? nextCr : nextCr < 0 ? nextLf : Math.min(nextLf, nextCr);
      if (this.pendingCr && end === start && text.charCodeAt(start) === 0x0a) {
        // The LF of a CRLF whose CR ended the previous chunk.
        this.pendingCr = false;
        start++;
        continue;
      }
      this.pendingCr = false;
      if (this.current === 0 && end !== start) this.currentIsComment = text.charCodeAt(start) === 0x3a;
      const lineStart = this.current > 0 ? 0 : start;
      const length = this.current + (end < 0 ? n : end) - start;
      // Comment lines (keep-alives) belong to no event, but no line may pass the limit.
      if (length > this.max || (!this.currentIsComment && this.eventChars + length > this.max)) {
        this.over = true;
        return lineStart;
      }
      if (end < 0) {
        this.current = length;
        return -1;
      }
      if (length === 0) {
        this.eventChars = 0;
      } else if (!this.currentIsComment) {
        this.eventChars += length;
      }
      this.current = 0;
      this.currentIsComment = false;
      const crlf = text.charCodeAt(end) === 0x0d && text.charCodeAt(end + 1) === 0x0a;
      if (text.charCodeAt(end) === 0x0d && end + 1 === n) this.pendingCr = true;
      start = end + (crlf ? 2 : 1);
    }
    return -1;
  }
}

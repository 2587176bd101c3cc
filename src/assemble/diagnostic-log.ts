import type { CodecEvent, Diagnostic } from "../types.js";
import { bounded } from "./verbatim.js";

/**
 * Diagnostics kept per code. A stream of garbage lines yields one diagnostic per line, each many
 * times the size of its line: past this count they are only counted, in `diagnostics_suppressed`.
 */
const DIAGNOSTICS_PER_CODE = 100;

/** A turn's diagnostics, each kept with its event up to DIAGNOSTICS_PER_CODE of one code. */
export class DiagnosticLog {
  readonly kept: Diagnostic[] = [];
  private readonly counts = new Map<string, number>();
  private suppressed: Diagnostic | null = null;

  /** Keeps `diagnostic` and appends its event to `out`, or only counts it past the cap. */
  add(diagnostic: Diagnostic, out: CodecEvent[]): void {
    const seen = (this.counts.get(diagnostic.code) ?? 0) + 1;
    this.counts.set(diagnostic.code, seen);
    if (seen > DIAGNOSTICS_PER_CODE) {
      if (!this.suppressed) {
        this.suppressed = {
          code: "diagnostics_suppressed",
          severity: "warning",
          message: `More than ${DIAGNOSTICS_PER_CODE} diagnostics of one kind; the rest are only counted (data.counts).`,
          data: { counts: {} as Record<string, number> },
        };
        this.add(this.suppressed, out);
      }
      const counts = (this.suppressed.data as { counts: Record<string, number> }).counts;
      Object.defineProperty(counts, diagnostic.code, { value: (Object.hasOwn(counts, diagnostic.code) ? (counts[diagnostic.code] as number) : 0) + 1, enumerable: true, writable: true, configurable: true });
      return;
    }
    if (diagnostic.data !== undefined) diagnostic.data = bounded(diagnostic.data, "The data");
    this.kept.push(diagnostic);
    out.push({ type: "diagnostic", diagnostic });
  }
}

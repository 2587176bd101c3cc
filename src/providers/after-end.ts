import type { Diagnostic } from "../types.js";
import type { DiagnosticCode } from "../diagnostics/codes.js";

/**
 * Reports events that arrive after a stream's end (its stop event, `[DONE]`, an error, a terminal
 * response), which the decoders ignore: once per diagnostic code, with the first event's type and
 * a count kept up to date (`data: { count, firstType }`). One diagnostic per event would repeat
 * itself as many times as a broken server keeps sending.
 */
export function afterEndReporter(report: (diagnostic: Diagnostic) => void): (code: DiagnosticCode, end: string, type: string) => void {
  const seen = new Map<string, { count: number; firstType: string }>();
  return (code, end, type) => {
    const first = seen.get(code);
    if (first) {
      first.count++;
      return;
    }
    const entry = { count: 1, firstType: type };
    seen.set(code, entry);
    report({ code, severity: "warning", message: `Events arrived after ${end} (the first: ${type}); they were ignored.`, data: entry });
  };
}

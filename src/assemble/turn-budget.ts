import type { Diagnostic } from "../types.js";

/** Characters of text, reasoning and arguments a turn holds, against `limits.maxTurnChars`. */
export class TurnBudget {
  private held = 0;
  /** Past the limit nothing more is kept, and the turn ends incomplete. */
  exceeded = false;

  constructor(
    private readonly maxTurnChars: number,
    private readonly host: { diagnostic(diagnostic: Diagnostic): void },
  ) {}

  /** Counts `chars` held; false (and nothing counted) once the turn is over the limit. */
  admit(chars: number): boolean {
    if (this.exceeded) return false;
    if (this.held + chars > this.maxTurnChars) {
      this.exceeded = true;
      this.host.diagnostic({
        code: "turn_too_large",
        severity: "error",
        message: `The turn exceeded ${this.maxTurnChars} characters of text and arguments; the rest of the stream was not kept and the turn is incomplete.`,
      });
      return false;
    }
    this.held += chars;
    return true;
  }
}

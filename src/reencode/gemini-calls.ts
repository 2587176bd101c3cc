import { stringField } from "../providers/fields.js";
import { isPlainObject } from "./common.js";

/** A call as the decoder opens it from Gemini `functionCall` parts: where its parts stand, and how they were sent. */
export interface CallTrack<Ref> {
  refs: Ref[];
  /** The id on the part that opened the call, null when none was sent. */
  sentId: string | null;
  /** Every part is in the shape clients read as the call (object or absent `args`; no `args` beside streamed leaves). */
  plain: boolean;
}

/**
 * Follows `functionCall` parts the way the decoder reads them (src/providers/gemini.ts), for the
 * stream and the whole-body re-encoders alike: a named part opens a call, streamed over the parts
 * after it while `willContinue` says so; an unnamed part continues the call still streaming, or
 * opens one when it carries arguments.
 */
export class CallPartReader<Ref, Track extends CallTrack<Ref>> {
  private open: Track | null = null;

  /** `start`: a new track for the call a part opens. */
  constructor(private readonly start: (sentId: string | null, ref: Ref) => Track) {}

  /** One `functionCall` part: the call it opens or continues, null when it belongs to none. */
  read(fc: Record<string, unknown>, ref: Ref): Track | null {
    const continues = fc.willContinue === true;
    const hasPartial = fc.partialArgs !== undefined;
    const args = fc.args === null ? undefined : fc.args;
    let track: Track;
    if (stringField(fc, "name") !== null) {
      // A new call supersedes one still streaming (the decoder closes that one as truncated).
      this.open = null;
      track = this.start(stringField(fc, "id"), ref);
      if (!continues && !hasPartial) {
        track.plain = args === undefined || isPlainObject(args);
        return track;
      }
      // Arguments beside the opening of a streamed call are its start input, which clients skip.
    } else if (this.open === null) {
      if (!hasPartial && args === undefined) return null;
      track = this.start(stringField(fc, "id"), ref);
    } else {
      track = this.open;
      track.refs.push(ref);
    }
    if (args !== undefined) track.plain = false;
    this.open = continues ? track : null;
    return track;
  }
}

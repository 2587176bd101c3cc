/** A point in the stream the decoder has not decided yet (a call whose verdict is still to come). */
export interface Hold<Out> {
  /** Whether the decoder has decided it (asked after every event; at the end of the body it is decided anyway). */
  decided(): boolean;
  /** Writes what the decision releases (the held call, as sent, rewritten or withheld). */
  release(out: Out[]): void;
}

/**
 * The one "hold until decided" engine every re-encoder runs its events through. Events are decoded
 * as they arrive (the decoder must see them in order, whatever is held) and handed to the
 * protocol's `handle` in order. `handle` writes what can be forwarded now, or `hold`s on a call the
 * decoder has not decided yet: every event after it then waits, decoded already, until the
 * decision comes (or the body ends, `flush`), when the hold releases what it held and the waiting
 * events are handled in order (one of them may hold again). Whether a call is delivered changes
 * how the events after it are written (renumbered blocks, a stop reason), so they wait rather than
 * pass it.
 */
export class HoldQueue<Item, Out> {
  private current: Hold<Out> | null = null;
  private waiting: Item[] = [];
  /** Set by `holdToEnd`: how an event after the stream's last one goes out (as it came). */
  private forwardRest: ((item: Item, out: Out[]) => void) | null = null;

  constructor(private readonly handle: (item: Item, out: Out[]) => void) {}

  /** Whether events wait behind an undecided call (bytes written after them must wait too). */
  get holding(): boolean {
    return this.current !== null;
  }

  /** Called from `handle`: the events after the one being handled wait until `hold` is decided. */
  hold(hold: Hold<Out>): void {
    this.current = hold;
  }

  /**
   * Called from `handle` for the stream's last event (Chat's `[DONE]`, Responses' terminal event)
   * while calls are undecided that the decoder decides only with the end of the body: `release`
   * writes it then, and every event after it goes out as it came (`forward`), unhandled.
   */
  holdToEnd(release: (out: Out[]) => void, forward: (item: Item, out: Out[]) => void): void {
    this.current = { decided: () => false, release };
    this.forwardRest = forward;
  }

  /** Whether the stream's last event was held by `holdToEnd` (its release ends the turn). */
  get heldToEnd(): boolean {
    return this.forwardRest !== null;
  }

  /** One event, decoded already: handled now, or queued behind the hold. */
  push(item: Item, out: Out[]): void {
    if (this.current === null) (this.forwardRest ?? this.handle)(item, out);
    else this.waiting.push(item);
    if (this.current !== null) this.settle(out, false);
  }

  /** Releases every hold that is decided (all of them `atEnd`) and handles the events behind it. */
  settle(out: Out[], atEnd: boolean): void {
    while (this.current !== null) {
      const hold = this.current;
      if (!atEnd && !hold.decided()) return;
      this.current = null;
      hold.release(out);
      const waiting = this.waiting;
      this.waiting = [];
      for (const item of waiting) {
        // Another call holds now: the rest waits behind it.
        if (this.current !== null) this.waiting.push(item);
        else (this.forwardRest ?? this.handle)(item, out);
      }
    }
  }
}

/** One tool-use block's events, held from its start to its stop (Anthropic, Bedrock). */
export interface HeldBlock<Wire> {
  /** The events as they came: a long call holds many, and their payloads are read again only to renumber. */
  events: Wire[];
  /** The block's start as sent (Anthropic's `content_block`, Bedrock's `start.toolUse`). */
  start: Record<string, unknown>;
  /** Every delta was a plain delta of input text. */
  plainDeltas: boolean;
}

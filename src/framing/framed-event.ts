import type { ProviderEvent } from "../types.js";

/**
 * Events that carry a proof of how deep they can nest, so that the decoder's per-event depth guard
 * (`nestsDeeperThan` in providers/codec.ts) can skip its walk on the common small event.
 *
 * JSON text of L characters nests at most L/2 levels: each level needs an opening and a closing
 * bracket. A framer that parsed an event from a shorter text than `2 * SHALLOW_DEPTH` characters
 * builds it with `framedEvent`, which marks it on the prototype: the event's own keys stay exactly
 * `data` and `event`, so it serializes and compares like any other event.
 */
export const SHALLOW_DEPTH = 1024;

const SHALLOW = Symbol("toolwire.provablyShallow");

class ShortTextEvent implements ProviderEvent {
  data: unknown;
  declare event?: string;
  constructor(data: unknown, event: string | undefined) {
    this.data = data;
    if (event !== undefined) this.event = event;
  }
}
Object.defineProperty(ShortTextEvent.prototype, SHALLOW, { value: true });

/** The event for `data` parsed from `textLength` characters of JSON (or kept as that text). */
export function framedEvent(data: unknown, event: string | undefined, textLength: number): ProviderEvent {
  if (textLength < 2 * SHALLOW_DEPTH) return new ShortTextEvent(data, event);
  return event === undefined ? { data } : { data, event };
}

/** True when the event cannot nest deeper than `SHALLOW_DEPTH` levels, known without walking it. */
export function provablyShallow(event: ProviderEvent): boolean {
  return (event as { [SHALLOW]?: true })[SHALLOW] === true;
}

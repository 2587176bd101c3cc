/** Something that emits named events (a Node EventEmitter: `process`, a server response). */
interface Emitter {
  on(name: string, listener: () => void): unknown;
  off(name: string, listener: () => void): unknown;
}

/** Resolves when the first of `names` is emitted, with every listener removed again. */
export function firstEvent(emitter: Emitter, names: readonly string[]): Promise<void> {
  return new Promise<void>((resolve) => {
    const done = (): void => {
      for (const name of names) emitter.off(name, done);
      resolve();
    };
    for (const name of names) emitter.on(name, done);
  });
}

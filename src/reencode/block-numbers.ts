/**
 * The block numbers a client sees, for a re-encoder that holds or inserts blocks (Anthropic, Bedrock,
 * and the text-call stages of Messages and Responses, whose "blocks" are output items). A
 * client numbers content blocks as they show (the Anthropic SDK appends each started block to its
 * list and finds a delta's block by its index), and so does toolwire's decoder: a block gets the
 * next number when it first shows in the output. Blocks after a withheld call so move down and
 * leave no hole, and a block that overtakes a held call (interleaved) numbers before it.
 */
export class BlockNumbers {
  private next = 0;
  private readonly given = new Map<number, number>();

  /** A wire block shows (or starts again at its index): it takes the next number. */
  open(wireIndex: number): number {
    const number = this.next++;
    this.given.set(wireIndex, number);
    return number;
  }

  /** The number a wire block was given, `undefined` while it has not shown. */
  of(wireIndex: number): number | undefined {
    return this.given.get(wireIndex);
  }

  /** A block the re-encoder adds, with no wire block of its own: the next number. */
  insert(): number {
    return this.next++;
  }

  /** A held block is released: the block's own number for its first call, a new one for a call split from it. */
  forHeld(wireIndex: number): number {
    return this.given.has(wireIndex) ? this.insert() : this.open(wireIndex);
  }

  /** A retry spliced into the stream: the client starts over, and so does the numbering. */
  clear(): void {
    this.next = 0;
    this.given.clear();
  }
}

/** A held block's events as they came, each with its block index moved to `number` when that differs from the wire's. */
export function writeHeld<Wire>(events: readonly Wire[], wireIndex: number, number: number, reindexed: (event: Wire, index: number) => Wire, out: Wire[]): void {
  for (const event of events) out.push(number === wireIndex ? event : reindexed(event, number));
}

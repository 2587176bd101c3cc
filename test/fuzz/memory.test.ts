import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { describe, expect, it } from "vitest";
import { createByteDecoder } from "../../src/adapters/bytes.js";
import { supportedProviders } from "../../src/providers/registry.js";
import { renderSpec } from "../../src/testing/generators.js";
import { argumentDelta, withArgumentDelta } from "../../src/testing/shapes.js";
import { concatBytes, encodeWire } from "../../src/testing/wire.js";
import type { DecodedTurn, ProviderEvent, ProviderName } from "../../src/types.js";

/**
 * Memory stays proportional to what a turn keeps, not to the bytes that streamed by: a long
 * stream of tiny deltas (the worst case for per-event overhead) is decoded chunk by chunk, never
 * built whole, and the heap is measured after collections. `gc` is reached through V8 flags,
 * since vitest cannot pass --expose-gc; without it the bound is the generous one of the issue.
 */

function findGc(): (() => void) | null {
  try {
    setFlagsFromString("--expose-gc");
    const gc: unknown = runInNewContext("gc");
    return typeof gc === "function" ? (gc as () => void) : null;
  } catch {
    return null;
  }
}

const gc = findGc();
const MB = 1024 * 1024;

interface TinyStream {
  head: ProviderEvent[];
  delta: (piece: string) => ProviderEvent;
  tail: ProviderEvent[];
  /** Pieces that open and close the streamed value around the repeated "ab". */
  open: string;
  close: string;
}

/** One call whose arguments stream as `{"k":"abab…"}` two characters at a time. */
function tinyArgumentStream(provider: ProviderName): TinyStream | null {
  const events = renderSpec(provider, { text: [], calls: [{ id: "mem1", name: "write", arguments: { k: "ab" } }], fragmentSizes: [1], streamedArgs: false, callPerChunk: true });
  const first = events.findIndex((event) => argumentDelta(provider, event) !== null);
  if (first < 0) return null;
  let last = first;
  while (last + 1 < events.length && argumentDelta(provider, events[last + 1] as ProviderEvent)) last++;
  const template = events[first] as ProviderEvent;
  return {
    head: events.slice(0, first),
    delta: (piece) => withArgumentDelta(provider, template, piece, false),
    tail: events.slice(last + 1),
    open: '{"k":"',
    close: '"}',
  };
}

/** Text streamed two characters at a time (providers whose calls arrive whole). */
function tinyTextStream(provider: ProviderName): TinyStream {
  const marker = "\u0001MARK\u0001";
  const events = renderSpec(provider, { text: [marker], calls: [], fragmentSizes: [1], streamedArgs: false, callPerChunk: true });
  const at = events.findIndex((event) => JSON.stringify(event.data).includes("\\u0001MARK\\u0001"));
  const template = JSON.stringify(events[at]);
  return {
    head: events.slice(0, at),
    delta: (piece) => JSON.parse(template.replace("\\u0001MARK\\u0001", piece)) as ProviderEvent,
    tail: events.slice(at + 1),
    open: "",
    close: "",
  };
}

interface Measured {
  turn: DecodedTurn;
  inputBytes: number;
  /** Largest heap growth seen (after a collection when gc is available). */
  peakGrowth: number;
  seconds: number;
}

function decodeTiny(provider: ProviderName, stream: TinyStream, targetBytes: number, previews = false): Measured {
  const encode = (events: ProviderEvent[]): Uint8Array => encodeWire(provider, events);
  // A block of many identical delta events, pushed again and again in odd-sized slices so that
  // chunk boundaries fall everywhere inside events.
  const deltaBytes = encode([stream.delta("ab")]);
  const perBlock = Math.max(1, Math.floor((256 * 1024) / deltaBytes.length));
  const block = concatBytes(new Array<Uint8Array>(perBlock).fill(deltaBytes));
  const blocks = Math.max(1, Math.ceil(targetBytes / block.length));
  gc?.();
  const base = process.memoryUsage().heapUsed;
  const started = Date.now();
  const decoder = createByteDecoder(provider, { previews });
  let inputBytes = 0;
  let peakGrowth = 0;
  const push = (bytes: Uint8Array): void => {
    for (let at = 0; at < bytes.length; at += 8191) decoder.push(bytes.subarray(at, at + 8191));
    inputBytes += bytes.length;
  };
  push(encode([...stream.head, ...(stream.open ? [stream.delta(stream.open)] : [])]));
  for (let i = 0; i < blocks; i++) {
    push(block);
    if (i % 25 === 24) {
      gc?.();
      peakGrowth = Math.max(peakGrowth, process.memoryUsage().heapUsed - base);
    }
  }
  push(encode([...(stream.close ? [stream.delta(stream.close)] : []), ...stream.tail]));
  const turn = decoder.finish();
  gc?.();
  peakGrowth = Math.max(peakGrowth, process.memoryUsage().heapUsed - base);
  if (process.env.TOOLWIRE_MEMORY_LOG) console.log(provider, { gc: gc !== null, inputMB: inputBytes / MB, peakMB: peakGrowth / MB, keptMB: keptChars(turn) / MB, seconds: (Date.now() - started) / 1000 });
  return { turn, inputBytes, peakGrowth, seconds: (Date.now() - started) / 1000 };
}

/** What the turn legitimately keeps: the arguments text (twice: raw and parsed) and the text. */
function keptChars(turn: DecodedTurn): number {
  return turn.toolCalls.reduce((sum, call) => sum + 2 * call.rawArguments.length, 0) + turn.text.length;
}

function bound(measured: Measured): number {
  // With collections the heap holds what the turn keeps (UTF-16: 2 bytes a character) plus a
  // fixed allowance; without them garbage is counted too, hence the generous 4x.
  return gc ? 2 * keptChars(measured.turn) + measured.inputBytes / 10 + 8 * MB : 4 * measured.inputBytes;
}

describe("memory is proportional to what the turn keeps", () => {
  it("a 50 MB Anthropic stream of two-character argument deltas", () => {
    const stream = tinyArgumentStream("anthropic") as TinyStream;
    const measured = decodeTiny("anthropic", stream, 50 * MB);
    const call = measured.turn.toolCalls[0];
    expect(call?.complete).toBe(true);
    expect(call?.error).toBeNull();
    expect(((call?.arguments as { k: string }).k.length)).toBeGreaterThan(500_000);
    expect(measured.inputBytes).toBeGreaterThanOrEqual(50 * MB);
    expect(measured.peakGrowth, `heap grew ${(measured.peakGrowth / MB).toFixed(1)} MB for ${(measured.inputBytes / MB).toFixed(0)} MB in ${measured.seconds}s`).toBeLessThan(bound(measured));
  });

  it("the same with live previews, 10 MB", () => {
    const measured = decodeTiny("anthropic", tinyArgumentStream("anthropic") as TinyStream, 10 * MB, true);
    expect(measured.turn.toolCalls[0]?.error).toBeNull();
    expect(measured.peakGrowth).toBeLessThan(bound(measured));
  });

  const others = supportedProviders().filter((provider) => provider !== "anthropic");
  it.each(others)("%s, 8 MB of tiny deltas", (provider) => {
    const stream = tinyArgumentStream(provider) ?? tinyTextStream(provider);
    const measured = decodeTiny(provider, stream, 8 * MB);
    expect(measured.turn.status, JSON.stringify(measured.turn.diagnostics.slice(0, 3))).not.toBe("error");
    expect(keptChars(measured.turn)).toBeGreaterThan(0);
    expect(measured.peakGrowth, `heap grew ${(measured.peakGrowth / MB).toFixed(1)} MB for ${(measured.inputBytes / MB).toFixed(0)} MB`).toBeLessThan(bound(measured));
  });
});

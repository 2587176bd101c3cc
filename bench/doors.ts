import { createByteDecoder } from "../src/adapters/bytes.js";
import { collectTurn, decodeStream, decodeStreamBatches } from "../src/adapters/web.js";
import type { CodecEvent, DecodedTurn } from "../src/types.js";
import { baseline, type Normalized, type Protocol } from "./scenarios.js";

/**
 * toolwire's doors, as a user opens them on a fetch body. The `-previews` doors pass
 * `previews: true` and read every delta's preview, as an SDK user receives every snapshot.
 */
export const DOORS = {
  baseline: "eventsource-parser + concatenation + one JSON.parse per call (the floor)",
  push: "push core: createByteDecoder(...).push(chunk) per chunk read",
  "push-previews": "push core with previews: true, every preview read",
  decodeStream: "for await (const event of decodeStream(provider, body))",
  "decodeStream-previews": "decodeStream with previews: true, every preview read",
  "batches-previews": "for await (const batch of decodeStreamBatches(provider, body, {previews: true})), every preview read",
  collectTurn: "await collectTurn(provider, body)",
  "collectTurn-previews": "collectTurn with previews: true",
} as const;

export type DoorName = keyof typeof DOORS;

export function normalizeTurn(turn: DecodedTurn): Normalized {
  for (const call of turn.toolCalls) if (call.error || call.arguments === null) throw new Error(`toolwire failed a benchmark call: ${JSON.stringify(call.error)}`);
  return { text: turn.text, calls: turn.toolCalls.map((call) => ({ name: call.name, arguments: call.arguments })) };
}

/** Counts the previews a consumer looked at, so none can be skipped or computed lazily unseen. */
let previewsRead = 0;

export function previewCount(): number {
  return previewsRead;
}

function readPreview(event: CodecEvent): void {
  if (event.type === "tool_call_delta" && event.preview !== undefined) previewsRead++;
}

async function pushCore(protocol: Protocol, stream: ReadableStream<Uint8Array>, previews: boolean): Promise<Normalized> {
  const decoder = createByteDecoder(protocol, { previews });
  const reader = stream.getReader();
  while (true) {
    const { done, value } = await reader.read();
    if (done) break;
    const events = decoder.push(value);
    if (previews) for (let i = 0; i < events.length; i++) readPreview(events[i] as CodecEvent);
  }
  return normalizeTurn(decoder.finish());
}

async function viaDecodeStream(protocol: Protocol, stream: ReadableStream<Uint8Array>, previews: boolean): Promise<Normalized> {
  let turn: DecodedTurn | null = null;
  for await (const event of decodeStream(protocol, stream, { previews })) {
    if (event.type === "finish") turn = event.turn;
    else if (previews) readPreview(event);
  }
  return normalizeTurn(turn as DecodedTurn);
}

async function viaBatches(protocol: Protocol, stream: ReadableStream<Uint8Array>, previews: boolean): Promise<Normalized> {
  let turn: DecodedTurn | null = null;
  for await (const batch of decodeStreamBatches(protocol, stream, { previews })) {
    for (let i = 0; i < batch.length; i++) {
      const event = batch[i] as CodecEvent;
      if (event.type === "finish") turn = event.turn;
      else if (previews) readPreview(event);
    }
  }
  return normalizeTurn(turn as DecodedTurn);
}

export function door(name: DoorName): (protocol: Protocol, stream: ReadableStream<Uint8Array>) => Promise<Normalized> {
  switch (name) {
    case "baseline":
      return baseline;
    case "push":
      return (protocol, stream) => pushCore(protocol, stream, false);
    case "push-previews":
      return (protocol, stream) => pushCore(protocol, stream, true);
    case "decodeStream":
      return (protocol, stream) => viaDecodeStream(protocol, stream, false);
    case "decodeStream-previews":
      return (protocol, stream) => viaDecodeStream(protocol, stream, true);
    case "batches-previews":
      return (protocol, stream) => viaBatches(protocol, stream, true);
    case "collectTurn":
      return async (protocol, stream) => normalizeTurn(await collectTurn(protocol, stream));
    case "collectTurn-previews":
      return async (protocol, stream) => normalizeTurn(await collectTurn(protocol, stream, { previews: true }));
  }
}

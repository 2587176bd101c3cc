import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { parseRecords, type RecordedStream } from "../../src/framing/records.js";
import { parseYaml } from "../../src/import/cassette.js";
import { replayEvents } from "../../src/replay.js";
import type { DecodedTurn, ProviderName } from "../../src/types.js";
import { requireCorpusDir } from "../helpers/corpus.js";
import { upstreamFile } from "../helpers/testdata.js";
import { REPO_ROOT } from "../import/corpus.js";


/** The recorded streams of `testdata/<provider>/<file>`, or of the upstream corpus file imported under that name. */
export function records(provider: ProviderName, file: string): RecordedStream[] {
  const own = join(REPO_ROOT, "testdata", provider, file);
  if (existsSync(own)) return parseRecords(readFileSync(own, "utf8"));
  return upstreamFile(provider, file).streams;
}

/** Every stream of a testdata file, decoded by the file's provider. */
export function replayFile(provider: ProviderName, file: string): DecodedTurn[] {
  return records(provider, file).map((stream) => replayEvents(stream));
}

/** The raw response bodies of an upstream YAML cassette (VCR.py or go-vcr v2), in interaction order. */
export function cassetteBodies(local: string): Array<string | Uint8Array> {
  const doc = parseYaml(readFileSync(join(requireCorpusDir("upstream"), local), "utf8"), local, []) as { interactions: Array<{ response: { body: unknown } }> };
  return doc.interactions.map(({ response }) => {
    const body = response.body;
    if (typeof body === "string" || body instanceof Uint8Array) return body;
    const inner = (body as { string?: unknown }).string;
    if (typeof inner === "string" || inner instanceof Uint8Array) return inner;
    throw new Error(`${local}: no response body`);
  });
}

export function corpusText(local: string): string {
  return readFileSync(join(requireCorpusDir("upstream"), local), "utf8");
}

/** The facts the recording determines, without toolwire's incidental detail. */
export function callFacts(turn: DecodedTurn) {
  return turn.toolCalls.map((call) => ({ id: call.id, name: call.name, arguments: call.arguments, source: call.source, complete: call.complete }));
}

/** A turn minus its sequence name, to compare a records replay with a raw-body decode. */
export function unnamed(turn: DecodedTurn): Omit<DecodedTurn, "sequence"> {
  const { sequence: _sequence, ...rest } = turn;
  return rest;
}

/** The parsed JSON request bodies of an upstream YAML cassette, in interaction order (null when not JSON). */
export function cassetteRequests(local: string): unknown[] {
  const doc = parseYaml(readFileSync(join(requireCorpusDir("upstream"), local), "utf8"), local, []) as { interactions: Array<{ request: Record<string, unknown> }> };
  return doc.interactions.map(({ request }) => {
    if (request.parsed_body !== undefined) return request.parsed_body;
    const body = typeof request.body === "object" && request.body !== null ? (request.body as { string?: unknown }).string : request.body;
    const text = body instanceof Uint8Array ? new TextDecoder().decode(body) : body;
    if (typeof text !== "string") return null;
    try {
      return JSON.parse(text) as unknown;
    } catch {
      return null;
    }
  });
}

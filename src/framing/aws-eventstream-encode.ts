import { encodeEventStreamMessage } from "./aws-eventstream.js";

const JSON_EVENT_HEADERS = { ":content-type": "application/json", ":message-type": "event" } as const;

/**
 * One AWS event-stream `event` frame with a JSON payload, the way Bedrock writes them: headers
 * `:event-type`, `:content-type` (application/json) and `:message-type` (event), in that order,
 * then the payload; prelude and message CRC32 computed by the framing's own `crc32` (through
 * `encodeEventStreamMessage`), so the decoder side and this side cannot disagree. `body` is
 * written with `JSON.stringify`; pass a string to write a payload text as it is.
 */
export function encodeJsonEventFrame(eventType: string, body: unknown): Uint8Array {
  return encodeEventStreamMessage({ ":event-type": eventType, ...JSON_EVENT_HEADERS }, typeof body === "string" ? body : JSON.stringify(body));
}

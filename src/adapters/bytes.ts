import { createFramer, defaultFraming, type FramingName } from "../framing/framer.js";
import { resolveLimits } from "../limits.js";
import { createDecoder } from "../providers/registry.js";
import type { CodecEvent, DecodedTurn, DecoderOptions, ProviderName } from "../types.js";

/** Options of `createByteDecoder`: the decoder options plus the wire framing. */
export interface ByteDecoderOptions extends DecoderOptions {
  /** Override the provider's wire framing (e.g. `ndjson` for recorded payload-per-line bodies). */
  framing?: FramingName;
}

/** Framing plus decoding as one synchronous push core over raw response bytes. */
export interface ByteDecoder {
  push(chunk: Uint8Array | string): CodecEvent[];
  /** Ends the input and returns the trailing events, the last being `finish`. Idempotent. */
  flush(): CodecEvent[];
  /** @deprecated The former name of `flush`. */
  end(): CodecEvent[];
  finish(): DecodedTurn;
}

/**
 * A decoder fed raw body bytes (SSE, NDJSON, JSON array or AWS event stream, per the provider's
 * framing or `options.framing`): `push(chunk)` → CodecEvents, `finish()` → DecodedTurn. Chunks may
 * be cut anywhere, inside a line or a multi-byte character.
 */
export function createByteDecoder(provider: ProviderName, options: ByteDecoderOptions = {}): ByteDecoder {
  const framer = createFramer(options.framing ?? defaultFraming(provider), { maxLineChars: resolveLimits(options.limits).maxLineChars });
  const decoder = createDecoder(provider, options);
  let reportedFramer = 0;

  const feed = (events: ReturnType<typeof framer.push>): CodecEvent[] => {
    const out: CodecEvent[] = [];
    for (const event of events) decoder.pushInto(event, out);
    return out;
  };

  const framingDiagnostics = (): CodecEvent[] => {
    const found = framer.diagnostics ?? [];
    const fresh = found.slice(reportedFramer);
    reportedFramer = found.length;
    return fresh.map((diagnostic) => ({ type: "diagnostic", diagnostic }));
  };

  let ended = false;
  const flush = (): CodecEvent[] => {
    if (ended) return [];
    ended = true;
    const out = feed(framer.flush());
    for (const event of framingDiagnostics()) out.push(event);
    const trailing = decoder.flush();
    const finishEvent = trailing.find((event) => event.type === "finish");
    if (finishEvent && finishEvent.type === "finish") {
      // Framing findings belong on the turn too, so a stored turn explains itself.
      // A loop, not a spread: spreading a long array overflows the call stack.
      for (const diagnostic of framer.diagnostics ?? []) finishEvent.turn.diagnostics.push(diagnostic);
    }
    for (const event of trailing) out.push(event);
    return out;
  };

  return {
    push(chunk) {
      const out = feed(framer.push(chunk));
      if (framer.diagnostics && framer.diagnostics.length > reportedFramer) for (const event of framingDiagnostics()) out.push(event);
      return out;
    },
    flush,
    end: flush,
    finish() {
      flush();
      return decoder.finish();
    },
  };
}

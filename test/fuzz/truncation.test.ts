import { describe, expect, it } from "vitest";
import { supportedProviders } from "../../src/providers/registry.js";
import { checkPrefix, checkRun, decodeBytesSafely, decodeEventsSafely } from "../../src/testing/invariants.js";
import { encodeWire } from "../../src/testing/wire.js";
import { corpusSources } from "./support.js";

/**
 * Truncation at every point, deterministically, over the whole recorded corpus: every event
 * boundary of every stream (sampled for the longest ones), and byte offsets spread over each
 * stream's wire form. The fuzzer draws cut points at random; this pass leaves none out.
 */

const corpus = corpusSources();
const EVERY_EVENT_UP_TO = 300;
const SAMPLES = 60;

function cutPoints(length: number, every: number, samples: number): number[] {
  if (length <= every) return Array.from({ length: length + 1 }, (_, i) => i);
  return Array.from({ length: samples + 1 }, (_, i) => Math.round((i * length) / samples));
}

describe.each(supportedProviders())("%s: every recorded stream cut short", (provider) => {
  const sources = corpus[provider] ?? [];

  it("at every event boundary: invariants hold and no call is completed with arguments the full stream lacks", () => {
    for (const source of sources) {
      const full = decodeEventsSafely(provider, source.events);
      for (const cut of cutPoints(source.events.length, EVERY_EVENT_UP_TO, SAMPLES)) {
        const prefix = decodeEventsSafely(provider, source.events.slice(0, cut));
        const violations = [...checkRun(prefix), ...checkPrefix(prefix, full)];
        expect(violations.map((v) => `[${v.property}] ${v.message}`), `${source.origin} cut at event ${cut}`).toEqual([]);
      }
    }
  });

  it("at byte offsets across the body: invariants hold", () => {
    for (const source of sources) {
      const bytes = encodeWire(provider, source.events);
      for (const cut of cutPoints(bytes.length, 0, 40)) {
        const run = decodeBytesSafely(provider, [bytes.subarray(0, cut)]);
        expect(checkRun(run).map((v) => `[${v.property}] ${v.message}`), `${source.origin} cut at byte ${cut}`).toEqual([]);
      }
    }
  });
});

import type { ProviderEvent } from "../../src/types.js";

/** Builders for Gemini `GenerateContentResponse` chunks, so tests read like the streams they describe. */
export const g = {
  chunk: (parts: unknown[], extra: { finishReason?: string; usage?: Record<string, unknown>; finishMessage?: string } = {}): ProviderEvent => ({
    data: {
      candidates: [
        {
          content: { role: "model", parts },
          ...(extra.finishReason ? { finishReason: extra.finishReason } : {}),
          ...(extra.finishMessage ? { finishMessage: extra.finishMessage } : {}),
          index: 0,
        },
      ],
      usageMetadata: extra.usage ?? { promptTokenCount: 10, candidatesTokenCount: 5, totalTokenCount: 15 },
      modelVersion: "gemini-test",
      responseId: "resp_1",
    },
  }),
  text: (text: string, extra: Record<string, unknown> = {}) => ({ text, ...extra }),
  call: (name: string, args?: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
    functionCall: { name, ...(args !== undefined ? { args } : {}), ...extra },
  }),
  open: (name: string, extra: Record<string, unknown> = {}) => ({ functionCall: { name, willContinue: true, ...extra } }),
  leaf: (jsonPath: string, value: Record<string, unknown>, more = true) => ({
    functionCall: { partialArgs: [{ jsonPath, ...value }], ...(more ? { willContinue: true } : {}) },
  }),
  close: () => ({ functionCall: {} }),
};

/** One streamed-arguments call as Vertex sends it: opening part, one part per leaf, closing `{}`. */
export function streamedCall(name: string, leaves: Array<[string, Record<string, unknown>]>, close = true): unknown[] {
  return [g.open(name), ...leaves.map(([path, value]) => g.leaf(path, value)), ...(close ? [g.close()] : [])];
}

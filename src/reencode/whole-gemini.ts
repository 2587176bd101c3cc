import { isPlaceholderId } from "../assemble/turn.js";
import { numberField } from "../providers/fields.js";
import type { DecoderOptions, ToolCall } from "../types.js";
import { isPlainObject } from "./common.js";
import { CallPartReader, type CallTrack as CallPartTrack } from "./gemini-calls.js";
import { nestsDeeperThan } from "../providers/codec.js";
import { decodeWhole, eventDepthLimit, picked, settleEntry, type WholeResponseRepair } from "./whole-common.js";

/**
 * Gemini `:generateContent` JSON: one `GenerateContentResponse`, which is exactly one chunk of
 * the stream, decoded as it is. The call parts are followed the way the decoder reads them (as the
 * streamed re-encoder does), and the rules are the streamed ones: a call whose only fault is its id
 * gets toolwire's id on its part (none added on Vertex, `addMissingIds: false`); any other repair
 * makes it one whole part `{functionCall: {id, name, args}}` with the first part's other fields
 * (`thoughtSignature`); a truncated or invalid call loses its parts; a `STOP` turn whose every call
 * was withheld says `MALFORMED_FUNCTION_CALL`.
 */

interface PartRef {
  candidate: number;
  part: number;
}

type CallTrack = CallPartTrack<PartRef>;

/**
 * The call parts of the candidates the decoder reads (index 0), in the order it opens calls, and
 * the call parts left out of the decoded chunk because they nest near the depth at which the
 * decoder would refuse the whole chunk (`tooDeep`): each is withheld alone.
 */
function trackCalls(candidates: readonly unknown[], depthLimit: number): { tracks: CallTrack[]; tooDeep: PartRef[] } {
  const tracks: CallTrack[] = [];
  const tooDeep: PartRef[] = [];
  const calls = new CallPartReader<PartRef, CallTrack>((sentId, ref) => {
    const track: CallTrack = { refs: [ref], sentId, plain: true };
    tracks.push(track);
    return track;
  });
  candidates.forEach((candidate: unknown, position) => {
    if (!isPlainObject(candidate) || (numberField(candidate, "index") ?? position) !== 0) return;
    const content = isPlainObject(candidate.content) ? candidate.content : null;
    const parts = content && Array.isArray(content.parts) ? content.parts : [];
    parts.forEach((part: unknown, at) => {
      if (!isPlainObject(part) || !isPlainObject(part.functionCall)) return;
      const fc = part.functionCall;
      const ref = { candidate: position, part: at };
      if (nestsDeeperThan(part, depthLimit)) {
        tooDeep.push(ref);
        return;
      }
      calls.read(fc, ref);
    });
  });
  return { tracks, tooDeep };
}

/** The candidates with the parts at `refs` left out. */
function withoutParts(candidates: readonly unknown[], refs: readonly PartRef[]): unknown[] {
  if (refs.length === 0) return candidates as unknown[];
  return candidates.map((candidate: unknown, position) => {
    const skip = new Set(refs.filter((ref) => ref.candidate === position).map((ref) => ref.part));
    if (skip.size === 0 || !isPlainObject(candidate) || !isPlainObject(candidate.content) || !Array.isArray(candidate.content.parts)) return candidate;
    return { ...candidate, content: { ...candidate.content, parts: candidate.content.parts.filter((_part: unknown, at) => !skip.has(at)) } };
  });
}

/** Gemini `generateContent` JSON; every object is read (a blocked prompt has no candidates). */
export function repairGeminiWhole(body: Record<string, unknown>, options: DecoderOptions, addMissingIds: boolean): WholeResponseRepair {
  const candidates = Array.isArray(body.candidates) ? body.candidates : [];
  // A part sits six levels into the chunk (chunk, candidates, candidate, content, parts, part).
  const { tracks, tooDeep } = trackCalls(candidates, eventDepthLimit(options) - 8);
  const chunk = { ...picked(body, ["candidates", "usageMetadata", "promptFeedback", "responseId", "modelVersion", "error"]), ...(tooDeep.length > 0 ? { candidates: withoutParts(candidates, tooDeep) } : {}) };
  const decoding = decodeWhole("gemini", [{ data: chunk }], options, (_call, position) => (position < tracks.length ? position : undefined));
  /** Replaced parts (null: removed) and parts inserted after a part, by candidate and part position. */
  const edits = new Map<number, Map<number, { replace?: unknown; after?: unknown[] }>>();
  const edit = (ref: PartRef): { replace?: unknown; after?: unknown[] } => {
    let parts = edits.get(ref.candidate);
    if (!parts) edits.set(ref.candidate, (parts = new Map()));
    let entry = parts.get(ref.part);
    if (!entry) parts.set(ref.part, (entry = {}));
    return entry;
  };
  const partAt = (ref: PartRef): Record<string, unknown> => {
    const candidate = candidates[ref.candidate] as Record<string, unknown>;
    return ((candidate.content as Record<string, unknown>).parts as unknown[])[ref.part] as Record<string, unknown>;
  };
  let delivered = 0;
  let withheld = tooDeep.length;
  for (const ref of tooDeep) {
    edit(ref).replace = null;
    const fc = partAt(ref).functionCall as Record<string, unknown>;
    decoding.tap.report({
      action: "withheld",
      code: "event_too_deep",
      message: `The functionCall part ${ref.part} nests deeper than any call may, so toolwire could not check it; it was not delivered.`,
      ...(typeof fc.id === "string" ? { id: fc.id } : {}),
      ...(typeof fc.name === "string" ? { name: fc.name } : {}),
    });
  }
  tracks.forEach((track, position) => {
    const first = track.refs[0] as PartRef;
    const fc = partAt(first).functionCall as Record<string, unknown>;
    const { calls, runnable, keep } = settleEntry(decoding, position, () => ({ ...(track.sentId !== null ? { id: track.sentId } : {}), ...(typeof fc.name === "string" ? { name: fc.name } : {}), what: `The functionCall part ${first.part}` }));
    withheld += calls.length - runnable.length;
    delivered += runnable.length;
    if (calls.length === 0) {
      if (!keep) for (const ref of track.refs) edit(ref).replace = null;
      return;
    }
    const sentNone = track.sentId === null || isPlaceholderId(track.sentId);
    // The id the client gets: toolwire's, unless none was sent and none may be added (Vertex).
    const idFor = (call: ToolCall): string | null => (sentNone && !addMissingIds ? null : call.id);
    const main = calls[0] as ToolCall;
    if (main.arguments === null) for (const ref of track.refs) edit(ref).replace = null;
    else {
      const id = idFor(main);
      const codes = sentNone && main.providerId === undefined && (id !== null || track.sentId !== null) ? ["call_id_minted"] : [];
      const clean = calls.length === 1 && track.plain && main.complete && main.error === null && main.repairs.every((code) => code === "minted_id");
      if (clean) {
        if (id !== track.sentId) {
          const { id: _sentId, ...functionCall } = fc;
          edit(first).replace = { ...partAt(first), functionCall: id === null ? functionCall : { ...functionCall, id } };
          decoding.tap.rewritten(main, codes);
        }
        return;
      }
      const { functionCall: _sent, ...fields } = partAt(first);
      const signature = main.providerFields?.thoughtSignature;
      if (fields.thoughtSignature === undefined && typeof signature === "string") fields.thoughtSignature = signature;
      edit(first).replace = { functionCall: { ...(id === null ? {} : { id }), name: main.name, args: main.arguments }, ...fields };
      for (const ref of track.refs.slice(1)) edit(ref).replace = null;
      decoding.tap.rewritten(main, codes);
    }
    // Calls the decoder split from this one follow its first part.
    const splits = runnable.filter((call) => call !== main);
    if (splits.length > 0) {
      edit(first).after = splits.map((call) => {
        const id = idFor(call);
        decoding.tap.rewritten(call);
        return { functionCall: { ...(id === null ? {} : { id }), name: call.name, args: call.arguments } };
      });
    }
  });
  const noCallLeft = delivered === 0 && withheld > 0;
  const finishAt = noCallLeft ? candidates.findIndex((candidate: unknown, position) => isPlainObject(candidate) && (numberField(candidate, "index") ?? position) === 0 && candidate.finishReason === "STOP") : -1;
  if (edits.size === 0 && finishAt < 0) return { body, changed: false, turn: decoding.turn, repairs: decoding.tap.repairs };
  const repairedCandidates = candidates.map((candidate: unknown, position) => {
    const partEdits = edits.get(position);
    if (!partEdits && position !== finishAt) return candidate;
    let next = candidate as Record<string, unknown>;
    if (partEdits) {
      const content = next.content as Record<string, unknown>;
      const parts: unknown[] = [];
      (content.parts as unknown[]).forEach((part, at) => {
        const change = partEdits.get(at);
        if (!change || !("replace" in change)) parts.push(part);
        else if (change.replace !== null) parts.push(change.replace);
        if (change?.after) parts.push(...change.after);
      });
      next = { ...next, content: { ...content, parts } };
    }
    if (position === finishAt) {
      next = { ...next, finishReason: "MALFORMED_FUNCTION_CALL" };
      decoding.tap.report({
        action: "normalized",
        code: "finish_reason_without_calls",
        message: "Every tool call of the turn was withheld, so finishReason STOP became MALFORMED_FUNCTION_CALL: the turn is one to retry, not an answer.",
      });
    }
    return next;
  });
  return { body: { ...body, candidates: repairedCandidates }, changed: true, turn: decoding.turn, repairs: decoding.tap.repairs };
}

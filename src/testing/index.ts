/**
 * `toolwire/testing`: the fuzzer's plain building blocks for users' own CI, loadable without
 * fast-check. Invariants are functions over decoded turns; mutation plans are JSON data applied
 * deterministically; specs render one provider-neutral turn in every wire shape; regression files
 * are parsed, written and replayed. The fast-check arbitraries and the fuzz loop are
 * `toolwire/testing/fuzz`. Web-standard: reading and writing files is left to the caller.
 */
export * from "./invariants.js";
export * from "./mutations.js";
export * from "./spec.js";
export * from "./cases.js";
export * from "./regressions.js";
export { encodeWire, encodeSseText, encodeNdjsonText, encodeJsonArrayText, encodeEventStreamBytes, framingsFor, splitBytes, multibyteCutPoints, type WireOptions, type LineEnding } from "./wire.js";
export { argumentDelta, keepAliveEvents, strangeEvents, rewriteArguments } from "./shapes.js";
export { stringifyJson, firstDifference } from "./values.js";

/**
 * `toolwire/testing`: the fuzzer's building blocks for users' own CI. Mutations and generators
 * are fast-check arbitraries (fast-check is then a peer dependency); invariants are plain
 * functions over decoded turns. Web-standard: reading and writing files is left to the caller.
 */
export * from "./invariants.js";
export * from "./mutations.js";
export * from "./generators.js";
export * from "./regressions.js";
export * from "./fuzz.js";
export { encodeWire, encodeSseText, encodeNdjsonText, encodeJsonArrayText, encodeEventStreamBytes, framingsFor, splitBytes, multibyteCutPoints, type WireOptions, type LineEnding } from "./wire.js";
export { argumentDelta, keepAliveEvents, strangeEvents, rewriteArguments } from "./shapes.js";
export { stringifyJson, firstDifference } from "./values.js";

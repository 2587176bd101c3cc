/**
 * `toolwire/testing/fuzz`: fast-check arbitraries of turns, streams and mutation plans, and the
 * fuzz loop that draws cases from them (fast-check is an optional peer dependency, needed here
 * only). Re-exports only; the plain parts are `toolwire/testing`.
 */
export * from "./generators.js";
export { runFuzz, caseArbitrary, roundSeed, type FuzzOptions, type FuzzSummary } from "./fuzz.js";
export { renderTextCall, inlineTextCall, plainText, textCallDocument, wholeMessageTextCall, cutText, INLINE_SYNTAXES, type TextCallSpec, type TextCallDocument } from "./text-calls.js";

/**
 * `toolwire/testing/fuzz`: fast-check arbitraries of valid provider streams, and the fuzz
 * loop that draws cases from them (fast-check is an optional peer dependency, needed here only).
 * Re-exports only; the plain parts (and the types named here) are `toolwire/testing`.
 */
export { generatedStream } from "./generators.js";
export { runFuzz, type FuzzOptions, type FuzzSummary } from "./fuzz.js";

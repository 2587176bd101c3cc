/**
 * `toolwire/testing`: the fuzzer's plain building blocks for users' own CI, loadable without
 * fast-check. Invariants are functions over decoded turns; wire encoders write events as a server
 * would send them; regression files are parsed, written and replayed. The fast-check
 * arbitraries and the fuzz loop are `toolwire/testing/fuzz`. Web-standard: reading and writing
 * files is left to the caller.
 */
export { decodeEventsSafely, decodeBytesSafely, checkRun, type DecodeRun, type RunCheckOptions, type Violation } from "./invariants.js";
export type { FuzzSource, Finding } from "./cases.js";
export { encodeWire, type WireOptions } from "./wire.js";
export type { GeneratedStream } from "./spec.js";
export { parseRegression, formatRegression, replayRegression, regressionFromFinding, RegressionFormatError, type Regression } from "./regressions.js";

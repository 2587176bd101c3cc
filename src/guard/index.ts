/**
 * `toolwire/guard`: what an agent loop puts around tool calls. The loop guard (per-tool failure
 * breaker, repeated identical calls), the outcome ledger (which files a turn did NOT change), and
 * the provider-error classifier (which recovery a 400 calls for).
 */
export { createLoopGuard, type CallDecision, type GuardDecision, type LoopGuard, type LoopGuardOptions } from "./loop-guard.js";
export {
  createFileMutationLedger,
  createOutcomeLedger,
  fileMutationFooter,
  type FileMutationLedger,
  type FileMutationLedgerOptions,
  type OutcomeLedger,
  type OutcomeLedgerOptions,
} from "./outcome-ledger.js";
export { classifyProviderError, type ClassifyOptions, type ProviderErrorClassification, type ProviderErrorReason } from "./provider-errors.js";

/**
 * `toolwire/guard`: what keeps an agent loop sane around the codec. The loop guard stops a model
 * that repeats the same failing call, the outcome ledger remembers what each call did, and the
 * provider-error classifier maps an API error to a recovery. Re-exports only.
 */
export { createLoopGuard, fingerprintOf, type LoopGuard, type LoopGuardOptions, type GuardDecision, type GuardAction, type GuardFailure } from "./loop-guard.js";
export { createOutcomeLedger, normalizePathKey, type OutcomeLedger, type OutcomeEntry, type OutcomeLedgerOptions, type RecordInput } from "./outcome-ledger.js";
export {
  classifyProviderError,
  providerErrorRules,
  type ProviderErrorReason,
  type ProviderErrorClassification,
  type Recovery,
  type ClassifyOptions,
} from "./provider-errors.js";

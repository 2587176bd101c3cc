/**
 * `toolwire/guard`: what an agent loop puts around tool calls. The loop guard (per-tool failure
 * breaker, repeated identical calls), the outcome ledger (which files a turn did NOT change), and
 * the provider-error classifier (which recovery a 400 calls for).
 */
export {
  createLoopGuard,
  exampleCalls,
  fingerprintOf,
  LOOP_GUARD_DEFAULTS,
  type CallBlockReason,
  type CallDecision,
  type GuardAction,
  type GuardDecision,
  type GuardFailure,
  type LoopGuard,
  type LoopGuardOptions,
} from "./loop-guard.js";
export {
  createFileMutationLedger,
  createOutcomeLedger,
  fileMutationFooter,
  mutationTargets,
  normalizePathKey,
  OUTCOME_LEDGER_DEFAULTS,
  v4aPatchTargets,
  type FileMutationLedger,
  type FileMutationLedgerOptions,
  type MutationCall,
  type MutationResult,
  type OutcomeEntry,
  type OutcomeLedger,
  type OutcomeLedgerOptions,
  type RecordInput,
} from "./outcome-ledger.js";
export {
  classifyProviderError,
  LLAMACPP_SCHEMA_ERRORS,
  llamacppSchemaError,
  llamacppStrip,
  providerErrorRules,
  type ClassifyOptions,
  type LlamacppSchemaError,
  type ProviderErrorClassification,
  type ProviderErrorReason,
  type Recovery,
} from "./provider-errors.js";

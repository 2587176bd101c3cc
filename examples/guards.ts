import type { DecodedTurn } from "../src/index.js";
import { createLoopGuard, createOutcomeLedger } from "../src/guard/index.js";
import { validateArguments, type Schema } from "../src/schema/index.js";

/** What a tool did: its output for the model and, for a tool that changes something, the target it changed. */
export interface ToolOutcome {
  output: string;
  ok: boolean;
  target?: string;
  error?: string;
}

type RunTool = (name: string, args: Record<string, unknown>) => Promise<ToolOutcome>;

export async function main(turn: DecodedTurn, schemas: Record<string, Schema>, runToolWithOutcome: RunTool) {
  // #region readme
  // turn: a DecodedTurn; schemas: your tools' parameter schemas by name; runToolWithOutcome(name, args): your tools, each saying what it did to its target.
  const guard = createLoopGuard({ schemas }); // across turns: escalates after 3 failures of a tool in a row, trips after 5
  const ledger = createOutcomeLedger(); // per turn: what each changing call did to its target
  const results: Array<{ id: string; content: string }> = [];
  let stop = false;
  for (const call of turn.toolCalls) {
    // "5" for 5, "true" for true, one value for a list: coerced where the schema says so, and listed.
    const checked = call.arguments === null ? null : validateArguments(schemas[call.name] ?? true, call.arguments, { coerce: true, toolName: call.name });
    if (checked === null || !checked.valid) {
      const decision = guard.failure(call.name, checked ?? call.error ?? "invalid call");
      results.push({ id: call.id, content: decision.message }); // escalated: the required fields and a valid example
      stop ||= decision.trip;
      continue;
    }
    const before = guard.beforeCall(call.name, checked.value); // the same call a third time in a row is not run
    if (before.block) {
      results.push({ id: call.id, content: before.message ?? "blocked" });
      continue;
    }
    const outcome = await runToolWithOutcome(call.name, checked.value as Record<string, unknown>);
    if (outcome.target !== undefined) ledger.record({ tool: call.name, target: outcome.target, ok: outcome.ok, error: outcome.error, callId: call.id });
    if (outcome.ok) {
      guard.success(call.name); // only a call that worked resets the tool's failure count
      results.push({ id: call.id, content: outcome.output });
      continue;
    }
    const decision = guard.failure(call.name, outcome.error ?? outcome.output); // a tool error counts too
    results.push({ id: call.id, content: decision.action === "continue" ? outcome.output : decision.message });
    stop ||= decision.trip;
  }
  // "Files NOT modified this turn (…): - src/b.ts (write_file: permission denied)", or null.
  const footer = ledger.footer();
  // #endregion readme
  return { results, footer, stop, guard };
}

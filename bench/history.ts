import { checkHistory, repairHistory, type HistoryFormat } from "../src/history/index.js";
import { cpuMs } from "./cpu.js";

/**
 * `npm run bench:history`: checkHistory and repairHistory on 10,000-message histories in every
 * format, shaped to hit what used to be quadratic: call/result pairs that all reuse one call id
 * (every repair mints an id), and Gemini calls without ids (paired by name and position). Budget:
 * under 1 s of CPU time per history for check and for repair. Exits 1 when one is over.
 */

const MESSAGES = Number(process.env.BENCH_MESSAGES ?? 10_000);
const BUDGET_MS = 1000;
const PAIRS = MESSAGES / 2;

function anthropic(id: (i: number) => string): unknown[] {
  const out: unknown[] = [];
  for (let i = 0; i < PAIRS; i++) {
    out.push({ role: "assistant", content: [{ type: "tool_use", id: id(i), name: "read", input: { path: `f${i}` } }] });
    out.push({ role: "user", content: [{ type: "tool_result", tool_use_id: id(i), content: `r${i}` }] });
  }
  return [{ role: "user", content: "go" }, ...out.slice(0, MESSAGES - 1)];
}

function openaiChat(id: (i: number) => string): unknown[] {
  const out: unknown[] = [{ role: "user", content: "go" }];
  for (let i = 0; out.length < MESSAGES; i++) {
    out.push({ role: "assistant", content: null, tool_calls: [{ id: id(i), type: "function", function: { name: "read", arguments: `{"path":"f${i}"}` } }] });
    out.push({ role: "tool", tool_call_id: id(i), content: `r${i}` });
  }
  return out.slice(0, MESSAGES);
}

function openaiResponses(id: (i: number) => string): unknown[] {
  const out: unknown[] = [{ role: "user", content: "go" }];
  for (let i = 0; out.length < MESSAGES; i++) {
    out.push({ type: "function_call", call_id: id(i), name: "read", arguments: `{"path":"f${i}"}` });
    out.push({ type: "function_call_output", call_id: id(i), output: `r${i}` });
  }
  return out.slice(0, MESSAGES);
}

function gemini(id: ((i: number) => string) | null): unknown[] {
  const out: unknown[] = [{ role: "user", parts: [{ text: "go" }] }];
  for (let i = 0; out.length < MESSAGES; i++) {
    const ids = id ? { id: id(i) } : {};
    out.push({ role: "model", parts: [{ functionCall: { name: "read", args: { path: `f${i}` }, ...ids } }] });
    out.push({ role: "user", parts: [{ functionResponse: { name: "read", response: { output: `r${i}` }, ...ids } }] });
  }
  return out.slice(0, MESSAGES);
}

function bedrock(id: (i: number) => string): unknown[] {
  const out: unknown[] = [{ role: "user", content: [{ text: "go" }] }];
  for (let i = 0; out.length < MESSAGES; i++) {
    out.push({ role: "assistant", content: [{ toolUse: { toolUseId: id(i), name: "read", input: { path: `f${i}` } } }] });
    out.push({ role: "user", content: [{ toolResult: { toolUseId: id(i), content: [{ text: `r${i}` }] } }] });
  }
  return out.slice(0, MESSAGES);
}

const same = () => "call_dup";
const distinct = (i: number) => `call_${i}`;

const CASES: Array<{ name: string; format: HistoryFormat; messages: unknown[] }> = [
  { name: "anthropic, one id reused", format: "anthropic", messages: anthropic(same) },
  { name: "openai-chat, one id reused", format: "openai-chat", messages: openaiChat(same) },
  { name: "openai-responses, one id reused", format: "openai-responses", messages: openaiResponses(same) },
  { name: "gemini, one id reused", format: "gemini", messages: gemini(same) },
  { name: "gemini, no ids", format: "gemini", messages: gemini(null) },
  { name: "bedrock, one id reused", format: "bedrock", messages: bedrock(same) },
  { name: "anthropic, distinct ids", format: "anthropic", messages: anthropic(distinct) },
  { name: "openai-responses, distinct ids, reversed outputs", format: "openai-responses", messages: reverseOutputs(openaiResponses(distinct)) },
  { name: `anthropic, one turn of ${PAIRS} calls, results misplaced`, format: "anthropic", messages: wideAnthropicTurn() },
  { name: `openai-chat, ${PAIRS} calls without results`, format: "openai-chat", messages: openaiChat(distinct).filter((m) => (m as { role: string }).role !== "tool") },
  { name: `openai-responses, ${PAIRS} calls without outputs`, format: "openai-responses", messages: openaiResponses(distinct).filter((m) => (m as { type?: string }).type !== "function_call_output") },
  { name: `openai-responses, reasoning then ${MESSAGES - 2} calls by item id`, format: "openai-responses", messages: responsesReasoningRun() },
  { name: `gemini, thinking, ${PAIRS - 2} unsigned calls in one turn`, format: "gemini", messages: geminiUnsignedTurn() },
  { name: "gemini, no ids, responses to other names", format: "gemini", messages: geminiCrossedNames() },
];

/** One assistant message with PAIRS calls; the results follow a text block, last call first. */
function wideAnthropicTurn(): unknown[] {
  const calls = Array.from({ length: PAIRS }, (_, i) => ({ type: "tool_use", id: `toolu_${i}`, name: "read", input: { path: `f${i}` } }));
  const results = calls.map((call) => ({ type: "tool_result", tool_use_id: call.id, content: "r" })).reverse();
  return [{ role: "user", content: "go" }, { role: "assistant", content: calls }, { role: "user", content: [{ type: "text", text: "results:" }, ...results] }];
}

/** A reasoning item followed by function_call items sent by item id, thinking on. */
function responsesReasoningRun(): unknown[] {
  const out: unknown[] = [{ role: "user", content: "go" }, { type: "reasoning", id: "rs_1", summary: [], encrypted_content: "e" }];
  for (let i = 0; out.length < MESSAGES; i++) out.push({ type: "function_call", id: `fc_${i}`, call_id: `call_${i}`, name: "read", arguments: "{}" });
  return out;
}

/** Gemini 3 with thinking: one signed call, then a long current turn of calls without signatures. */
function geminiUnsignedTurn(): unknown[] {
  const out: unknown[] = [{ role: "user", parts: [{ text: "go" }] }, { role: "model", parts: [{ functionCall: { name: "read", id: "c", args: {} }, thoughtSignature: "sig" }] }];
  out.push({ role: "user", parts: [{ functionResponse: { name: "read", id: "c", response: { output: "r" } } }] }, { role: "user", parts: [{ text: "again" }] });
  for (let i = 0; out.length < MESSAGES; i++) {
    out.push({ role: "model", parts: [{ functionCall: { name: "read", id: `c${i}`, args: {} } }] });
    out.push({ role: "user", parts: [{ functionResponse: { name: "read", id: `c${i}`, response: { output: "r" } } }] });
  }
  return out.slice(0, MESSAGES);
}

/** Id-less calls to one tool never answered, each followed by a response naming another tool. */
function geminiCrossedNames(): unknown[] {
  const out: unknown[] = [{ role: "user", parts: [{ text: "go" }] }];
  for (let i = 0; out.length < MESSAGES; i++) {
    out.push({ role: "model", parts: [{ functionCall: { name: "read", args: {} } }] });
    out.push({ role: "user", parts: [{ functionResponse: { name: "write", response: { output: "r" } } }] });
  }
  return out.slice(0, MESSAGES);
}

/** Moves every output to the end, in reverse order: each result is far from its call. */
function reverseOutputs(items: unknown[]): unknown[] {
  const outputs = items.filter((item) => (item as { type?: string }).type === "function_call_output");
  return [...items.filter((item) => !outputs.includes(item)), ...outputs.reverse()];
}

let failed = 0;
console.log(`history benchmark (histories of up to ${MESSAGES.toLocaleString("en")} messages, CPU time of one call), node ${process.version}\n`);
for (const c of CASES) {
  // Warm up on a small slice so that the JIT, not the first call, is measured.
  for (let i = 0; i < 3; i++) repairHistory(c.messages.slice(0, 200), c.format);
  let edits = 0;
  const check = cpuMs(() => void checkHistory(c.messages, c.format));
  const repair = cpuMs(() => void (edits = repairHistory(c.messages, c.format).edits.length));
  const ok = check < BUDGET_MS && repair < BUDGET_MS;
  if (!ok) failed++;
  console.log(`  ${c.name.padEnd(58)} check ${check.toFixed(0).padStart(5)} ms  repair ${repair.toFixed(0).padStart(5)} ms (${edits} edits)  ${ok ? "ok" : "OVER"} < ${BUDGET_MS} ms`);
}
console.log(failed === 0 ? `\nall ${CASES.length} histories under ${BUDGET_MS} ms` : `\n${failed} histor${failed === 1 ? "y" : "ies"} over ${BUDGET_MS} ms`);
if (failed > 0) process.exitCode = 1;

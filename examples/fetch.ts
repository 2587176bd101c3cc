import { decodeStream, type DecodedTurn } from "../src/index.js";

type RunTool = (name: string, args: Record<string, unknown>) => Promise<string>;

export async function main(runTool: RunTool, stop: AbortSignal) {
  // #region readme
  // runTool(name, args): your tools; stop: an AbortSignal (a Stop button, a request that went away).
  const baseURL = process.env.ANTHROPIC_BASE_URL ?? "https://api.anthropic.com";
  const response = await fetch(`${baseURL}/v1/messages`, {
    method: "POST",
    headers: { "x-api-key": process.env.ANTHROPIC_API_KEY ?? "", "anthropic-version": "2023-06-01", "content-type": "application/json" },
    body: JSON.stringify({
      model: "claude-sonnet-4-5",
      max_tokens: 1024,
      tools: [{ name: "add", input_schema: { type: "object", properties: { a: { type: "number" }, b: { type: "number" } } } }],
      messages: [{ role: "user", content: "Add 2 and 3." }],
      stream: true,
    }),
  });

  const running = new Map<string, Promise<string>>();
  let turn: DecodedTurn | undefined;
  // A stalled or endless stream ends the turn "incomplete" (open calls truncated), never hangs it.
  for await (const event of decodeStream("anthropic", response, { idleTimeoutMs: 30_000, deadlineMs: 300_000, signal: stop })) {
    if (event.type === "tool_call_delta") {
      // event.delta: the new argument text (pass `previews: true` for a live partial object)
    } else if (event.type === "tool_call_end" && event.call.arguments !== null) {
      // Final as soon as its block closes: start it while the model keeps writing.
      running.set(event.call.id, runTool(event.call.name, event.call.arguments));
    } else if (event.type === "finish") {
      turn = event.turn; // status, finishReason, text, toolCalls, usage, diagnostics
    }
  }
  const results = await Promise.all([...running].map(async ([id, result]) => ({ id, result: await result })));
  // #endregion readme
  return { turn: turn as DecodedTurn, results };
}

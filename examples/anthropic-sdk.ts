import Anthropic from "@anthropic-ai/sdk";
import { collectTurn } from "../src/index.js";

type RunTool = (name: string, args: Record<string, unknown>) => Promise<string>;

export async function main(runTool: RunTool) {
  // #region readme
  // runTool(name, args): your tools. ANTHROPIC_API_KEY (and ANTHROPIC_BASE_URL) come from the environment.
  const anthropic = new Anthropic();
  const stream = await anthropic.messages.create({
    model: "claude-sonnet-4-5",
    max_tokens: 1024,
    tools: [
      { name: "add", input_schema: { type: "object", properties: { a: { type: "number" }, b: { type: "number" } } } },
      { name: "multiply", input_schema: { type: "object", properties: { a: { type: "number" }, b: { type: "number" } } } },
    ],
    messages: [{ role: "user", content: "Add 2 and 3, and multiply 2 and 3." }],
    stream: true,
  });

  // The SDK's raw events, decoded by toolwire (messages.stream() works the same way).
  const turn = await collectTurn("anthropic", stream);
  const results: Anthropic.ToolResultBlockParam[] = [];
  for (const call of turn.toolCalls) {
    if (call.arguments === null) {
      // Truncated or invalid: never run it. The message is written for the model.
      results.push({ type: "tool_result", tool_use_id: call.id, is_error: true, content: call.error?.message ?? "invalid call" });
    } else {
      results.push({ type: "tool_result", tool_use_id: call.id, content: await runTool(call.name, call.arguments) });
    }
  }
  // #endregion readme
  return { turn, results };
}

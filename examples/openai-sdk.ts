import OpenAI from "openai";
import { collectTurn } from "../src/index.js";

type RunTool = (name: string, args: Record<string, unknown>) => Promise<string>;

export async function main(runTool: RunTool) {
  // #region readme
  // runTool(name, args): your tools. OPENAI_API_KEY (and OPENAI_BASE_URL) come from the environment.
  const openai = new OpenAI();
  const parameters = { type: "object", properties: { a: { type: "number" }, b: { type: "number" } } };
  const tools: OpenAI.ChatCompletionFunctionTool[] = ["add", "multiply"].map((name) => ({ type: "function", function: { name, parameters } }));

  // Chat Completions: the SDK's chunks, decoded by toolwire.
  const chunks = await openai.chat.completions.create({
    model: "gpt-4o",
    messages: [{ role: "user", content: "Add 2 and 3, and multiply 2 and 3." }],
    tools,
    stream: true,
  });
  const turn = await collectTurn("openai-chat", chunks);
  const messages: OpenAI.ChatCompletionToolMessageParam[] = [];
  for (const call of turn.toolCalls) {
    const content = call.arguments === null ? `Error: ${call.error?.message}` : await runTool(call.name, call.arguments);
    messages.push({ role: "tool", tool_call_id: call.id, content });
  }

  // The SDK hides `data: [DONE]`. For streams that only [DONE] ends (some OpenAI-compatible
  // servers send no final finish_reason), decode the raw body instead: `.asResponse()`.
  const raw = await openai.chat.completions.create({ model: "gpt-4o", messages: [{ role: "user", content: "Add 2 and 3." }], tools, stream: true }).asResponse();
  const sameTurn = await collectTurn("openai-chat", raw);

  // Responses API: its events, decoded by toolwire's Responses decoder.
  const events = await openai.responses.create({
    model: "gpt-4o",
    input: "Add 2 and 3, and multiply 2 and 3.",
    tools: ["add", "multiply"].map((name) => ({ type: "function" as const, name, parameters, strict: false })),
    stream: true,
  });
  const responsesTurn = await collectTurn("openai-responses", events);
  // #endregion readme
  return { turn, messages, sameTurn, responsesTurn };
}

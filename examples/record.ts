import Anthropic from "@anthropic-ai/sdk";
import { collectTurn, record } from "../src/index.js";
import { fileSink } from "../src/node/index.js";

export async function main() {
  // #region readme
  const anthropic = new Anthropic();
  const stream = await anthropic.messages.create({
    model: "claude-sonnet-4-5",
    max_tokens: 1024,
    messages: [{ role: "user", content: "Add 2 and 3, and multiply 2 and 3." }],
    stream: true,
  });

  // Decodes as usual and writes every event to the file as it arrives: one NDJSON record per
  // event, with the provider and `t` (ms since the start). Headers and keys never reach it.
  const turn = await collectTurn("anthropic", record(stream, await fileSink("recordings/add-and-multiply.ndjson"), { sequence: "add-and-multiply" }));

  // Later: `npx toolwire replay recordings/` decodes it again, and
  // `npx toolwire serve recordings/ --port 8080` serves it back to the SDK
  // (ANTHROPIC_BASE_URL=http://127.0.0.1:8080), paced as recorded with `--pace 1`.
  // #endregion readme
  return turn;
}

import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { expectationPath, expectedStreamOf, type Expectation } from "../src/conformance/expectation.js";
import { parseRecords } from "../src/framing/records.js";
import { replayEvents } from "../src/replay.js";
import { isProviderName, type ProviderName } from "../src/types.js";

/**
 * Drafts `<name>.expected.json` beside each recorded file of the given providers from the
 * current decoder output. A draft is a starting point: read it against the recording, and fix the
 * decoder (not the draft) where they disagree; then set `verifiedBy`. Existing files are kept
 * unless --force is given.
 *
 *   node dist/scripts/write-expectations.js anthropic openai-chat [--force]
 */
const args = process.argv.slice(2);
const force = args.includes("--force");
const providers = args.filter((arg) => !arg.startsWith("--"));
const root = new URL("../../testdata/", import.meta.url).pathname;

for (const provider of providers) {
  if (!isProviderName(provider)) throw new Error(`unknown provider ${provider}`);
  const dir = join(root, provider);
  for (const name of readdirSync(dir).filter((n) => n.endsWith(".ndjson")).sort()) {
    const path = join(dir, name);
    const target = expectationPath(path);
    const previous = existsSync(target) ? (JSON.parse(readFileSync(target, "utf8")) as Expectation) : null;
    if (previous && !force) continue;
    const streams = parseRecords(readFileSync(path, "utf8")).map((stream) => expectedStreamOf(replayEvents(stream, { provider: provider as ProviderName })));
    const expectation: Expectation = { provider: provider as ProviderName, verifiedBy: previous?.verifiedBy ?? "DRAFT: not yet verified", streams };
    writeFileSync(target, JSON.stringify(expectation, null, 2) + "\n");
    console.log(`wrote ${target}`);
  }
}

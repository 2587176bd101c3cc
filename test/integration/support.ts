import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { loadReplayStreams, startReplayServer, type ReplayServer, type ReplayStream } from "../../src/node/replay-server.js";
import { replayEvents } from "../../src/replay.js";
import { PROVIDERS, type DecodedTurn, type Diagnostic, type ProviderName } from "../../src/types.js";
import { TESTDATA, upstreamImported } from "../helpers/testdata.js";

/**
 * Every recorded stream: the project's own (testdata/<provider>/) and, where the upstream corpus is
 * present, its files imported in memory, keyed as the replay server keys them
 * (`<provider>/<file>#<sequence>`). testdata/regressions/ is left out: those are fuzzer-made
 * mutations, not recordings.
 */
export const TESTDATA_STREAMS: ReplayStream[] = [];
const imported = upstreamImported();
const corpusCopy = imported.length > 0 ? mkdtempSync(join(tmpdir(), "toolwire-corpus-streams-")) : null;
for (const file of imported) {
  mkdirSync(join(corpusCopy as string, file.provider), { recursive: true });
  writeFileSync(join(corpusCopy as string, file.out), file.text);
}
for (const provider of PROVIDERS) {
  const dirs = [join(TESTDATA, provider), ...(corpusCopy === null ? [] : [join(corpusCopy, provider)])].filter((dir) => existsSync(dir));
  for (const dir of dirs) for (const stream of await loadReplayStreams([dir])) TESTDATA_STREAMS.push({ ...stream, key: `${provider}/${stream.key}` });
}
if (corpusCopy !== null) rmSync(corpusCopy, { recursive: true, force: true });
// As one folder would list them: by file, sequences in file order (the sort is stable).
const fileOf = (key: string): string => key.split("#")[0] as string;
TESTDATA_STREAMS.sort((a, b) => (fileOf(a.key) < fileOf(b.key) ? -1 : fileOf(a.key) > fileOf(b.key) ? 1 : 0));

export function streamsOf(provider: ProviderName): ReplayStream[] {
  return TESTDATA_STREAMS.filter((stream) => stream.provider === provider);
}

export async function startTestdataServer(): Promise<ReplayServer> {
  return startReplayServer({ streams: TESTDATA_STREAMS });
}

/** JSON round trip: what a stored turn holds, for deep equality across paths. */
export function plain<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}

/** The turn of the recorded file, decoded from its records without any HTTP. */
export function fileTurn(stream: ReplayStream): DecodedTurn {
  return plain(replayEvents(stream, { provider: stream.provider }));
}

/** Selects the stream per request; the SDKs pass it through their `headers` request option. */
export function pick(stream: ReplayStream): { headers: Record<string, string> } {
  return { headers: { "x-toolwire-stream": stream.key } };
}

// The keys are fake and the server is loopback: nothing leaves the machine. Logging is off
// because some recordings are ones the SDKs reject, and they would print their stack to stderr.
export function anthropicClient(server: ReplayServer, apiKey = "sk-ant-toolwire-test"): Anthropic {
  return new Anthropic({ apiKey, baseURL: server.url, maxRetries: 0, timeout: 10_000, logLevel: "off" });
}

export function openaiClient(server: ReplayServer, apiKey = "sk-toolwire-test"): OpenAI {
  return new OpenAI({ apiKey, baseURL: `${server.url}/v1`, maxRetries: 0, timeout: 10_000, logLevel: "off" });
}

export const ANTHROPIC_REQUEST = { model: "claude-test", max_tokens: 1024, messages: [{ role: "user" as const, content: "hi" }] };
export const CHAT_REQUEST = { model: "gpt-test", messages: [{ role: "user" as const, content: "hi" }] };
export const RESPONSES_REQUEST = { model: "gpt-test", input: "hi" };

export function postJson(server: ReplayServer, path: string, stream: ReplayStream, body: unknown = { stream: true }, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${server.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...pick(stream).headers, ...headers },
    body: JSON.stringify(body),
  });
}

/** The turn without the `source_error` diagnostic an SDK's late exception added. */
export function withoutSourceError(turn: DecodedTurn): DecodedTurn {
  return { ...turn, diagnostics: turn.diagnostics.filter((diagnostic: Diagnostic) => diagnostic.code !== "source_error") };
}

export function sourceError(turn: DecodedTurn): string | undefined {
  return turn.diagnostics.find((diagnostic) => diagnostic.code === "source_error")?.message;
}

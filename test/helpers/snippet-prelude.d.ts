/**
 * The placeholders the code blocks in README.md and docs/ use without defining them: the reader's
 * own values (a stream, a response, their tools). test/docs-snippets.test.ts compiles every block
 * with this file; a block may use these names as if it had them. Keep each one typed as a real
 * program would have it, so that the blocks are checked against toolwire's real types.
 *
 * tsconfig.json excludes this file: its globals must not leak into the project's own code.
 */

import type { DecodedTurn, ToolCall } from "../../src/types.js";
import type { Schema } from "../../src/schema/index.js";

declare global {
  /** A provider response body: what `fetch` gives (`response.body`), or an SDK's raw stream. */
  const anthropicStream: ReadableStream<Uint8Array>;
  /** A provider's streamed HTTP response (Chat Completions, unless a block says otherwise). */
  const response: Response;
  /** Raw body chunks read from a socket or a file. */
  const body: Iterable<Uint8Array>;
  /** Provider events the caller framed itself (an SDK's parsed events). */
  const events: ReadonlyArray<{ type: string } & Record<string, unknown>>;
  /** The tools sent with the request (Chat Completions shape). */
  const tools: Array<{ type: "function"; function: { name: string; parameters: Record<string, unknown> } }>;
  /** A conversation history, in the provider's own format. */
  const messages: unknown[];
  /** A decoded turn. */
  const turn: DecodedTurn;
  /** One decoded call of that turn. */
  const call: ToolCall;
  /** A tool's parameter schema. */
  const schema: Schema;
  /** The tools' parameter schemas, by tool name. */
  const schemas: Record<string, Schema>;
  /** A request body as the client sent it. */
  const requestBody: { tools: unknown[] };
  /** A provider error response's status and body. */
  const status: number;
  const errorBody: unknown;
  /** A Stop button, or a request that went away. */
  const stop: AbortSignal;
  /** The reader's tools: run one and return its output for the model. */
  function runTool(name: string, args: Record<string, unknown>): Promise<string>;
  /** The reader's tools, reporting what each changing call did to its target (the guards example). */
  function runToolWithOutcome(name: string, args: Record<string, unknown>): Promise<{ output: string; ok: boolean; target?: string; error?: string }>;
}

export {};

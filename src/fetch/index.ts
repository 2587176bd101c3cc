/**
 * `toolwire/fetch`: `createRepairingFetch`, a `fetch` that repairs requests (tool schemas,
 * history pairing) and responses (re-encoded calls) on the way. Web-standard; loads ajv.
 */
import { ToolwireError } from "../errors.js";
import { classifyProviderError, type ProviderErrorClassification } from "../guard/provider-errors.js";
import type { RepairPolicy } from "../history/pairing.js";
import { isPlainObject } from "../json/shape.js";
import { jsonText } from "../json/stringify.js";
import { createReencoder, repairWholeResponse } from "../reencode/index.js";
import type { RepairReport } from "../reencode/types.js";
import { findTarget } from "../schema/targets/index.js";
import { SCHEMA_TARGETS, type SchemaTarget } from "../schema/targets/types.js";
import type { DecodedTurn, DecoderOptions, ProviderName } from "../types.js";
import { reencodedBody } from "./reencoded-body.js";
import { repairRequestHistory, sanitizeTools, withRequestTools } from "./request.js";
import { isVertexUrl, routeFor, routeOf, targetOf, type Route } from "./routes.js";


/** A `fetch`-shaped function (the global one, or an SDK's). */
export type FetchLike = (input: RequestInfo | URL, init?: RequestInit) => Promise<Response>;

/**
 * Options of the repairing fetch: the fetch to wrap, the protocol and schema target when the URL
 * does not tell, and which repairs to turn off.
 */
export interface RepairingFetchOptions {
  /** The fetch to wrap (default: the global `fetch`). */
  fetch?: FetchLike;
  /** The protocol, when the URL does not tell (default: from the path, e.g. `/v1/messages`). */
  provider?: ProviderName;
  /** The schema target for the request's tools (default: from the host, else from the protocol). */
  target?: SchemaTarget | string;
  /** Turn individual repairs off (all on by default). */
  repairs?: {
    /** Sanitize tool schemas for the target. */
    schemas?: boolean;
    /** Repair tool_use/tool_result pairing in the request's history. */
    history?: boolean;
    /** Decode and re-encode streamed responses, and repair the calls of non-streamed JSON responses. */
    responses?: boolean;
    /** Recover once from a provider error that a repair can fix (llama.cpp grammar, Anthropic orphan tool_use). */
    recovery?: boolean;
  };
  /** Policy for history repairs (defaults: a dangling call gets an error result, an orphan result becomes text). */
  historyPolicy?: RepairPolicy;
  /** Every change made, as it is made. Never receives headers or keys. */
  onRepair?: (report: RepairReport) => void;
  /** A provider error passed to the client, with its classification. */
  onError?: (error: { status: number; provider: ProviderName; classification: ProviderErrorClassification }) => void;
  /** The decoded turn of each response: a streamed one when its body ends, a non-streamed JSON one when it was read. */
  onTurn?: (turn: DecodedTurn, info: { provider: ProviderName; repairs: readonly RepairReport[] }) => void;
  /**
   * Decoder options for the response side (limits). With `textCalls`, Chat Completions, Anthropic
   * Messages, OpenAI Responses and Ollama responses (streamed or not) get the calls the model wrote
   * into its text as the protocol's calls (a server without a tool parser; not Gemini or Bedrock);
   * the tools of each request that offers some replace `textCalls.tools`.
   */
  decoder?: DecoderOptions;
}

/**
 * A `fetch` that puts toolwire between a client and a provider, for clients that take a `fetch`
 * option (the Anthropic and OpenAI SDKs, the AI SDK, LangChain). Web-standard: Node, browsers and
 * edge runtimes.
 *
 * Requests to a known route (`/v1/messages`, `/chat/completions`, `/responses`,
 * `:streamGenerateContent`, `:generateContent`, Bedrock `converse(-stream)` and `invoke(-with-response-stream)`, `/api/chat`) with a JSON body get their tool
 * schemas sanitized for the target and their history's tool pairing repaired in the provider's
 * own format. A provider error that a repair can fix is recovered once: a llama.cpp grammar error
 * strips the keywords it names and resends, an Anthropic "tool_use ids were found without
 * tool_result blocks" repairs the history and resends; any other error is returned as it came and
 * reported with its classification. Streamed Anthropic (also Claude on Bedrock,
 * `invoke-with-response-stream`), Chat Completions, Responses, Ollama, Bedrock ConverseStream and
 * Gemini bodies are re-encoded (see `createReencoder`): the client's own parser sees the calls toolwire decodes.
 * Non-streamed JSON responses of the same routes (`stream` off, Gemini `:generateContent`, Bedrock
 * `converse` and `invoke`, Ollama `stream: false`) are read whole and repaired by
 * `repairWholeResponse` under the same rules; one whose calls were all decoded as sent is returned
 * as it came. Everything else passes through untouched; so do headers, keys included, which are never read.
 */
export function createRepairingFetch(options: RepairingFetchOptions = {}): FetchLike {
  const base: FetchLike = options.fetch ?? ((input, init) => fetch(input, init));
  const enabled = { schemas: true, history: true, responses: true, recovery: true, ...options.repairs };
  const configuredTarget = options.target !== undefined ? (findTarget(options.target)?.name ?? null) : undefined;
  if (options.target !== undefined && configuredTarget === null) throw new ToolwireError("unknown_target", `unknown schema target '${options.target}'; valid targets: ${SCHEMA_TARGETS.join(", ")}`);

  return async (input, init) => {
    const url = typeof input === "string" ? input : input instanceof URL ? input.href : input.url;
    const route: Route | null = options.provider ? routeFor(options.provider, url) : routeOf(url);
    if (!route) return base(input, init);
    const reports: RepairReport[] = [];
    const report = (entry: RepairReport): void => {
      reports.push(entry);
      options.onRepair?.(entry);
    };

    const text = await requestText(input, init);
    let body: Record<string, unknown> | null = null;
    if (text !== null) {
      try {
        const parsed: unknown = JSON.parse(text);
        if (isPlainObject(parsed)) body = parsed;
      } catch {
        // Not JSON: not ours to change.
      }
    }
    const target = configuredTarget ?? targetOf(url, route.provider);
    // Read before the schemas are sanitized: calls in the text are typed by the schemas the client sent.
    const decoder = withRequestTools(options.decoder, body);
    let outgoing = text;
    if (body && isSigned(input, init)) {
      // AWS SigV4 signs the body's hash: an edited body is a request the provider refuses. Tell
      // what would have been repaired, send the request as it was signed, and do not retry.
      const found: RepairReport[] = [];
      const copy = structuredClone(body);
      if (enabled.schemas && target) sanitizeTools(copy, route.provider, target, found);
      if (enabled.history && route.history) repairRequestHistory(copy, route.history, options.historyPolicy ?? {}, found);
      if (found.length > 0) {
        report({
          stage: "request",
          action: "classified",
          code: "signed_request",
          provider: route.provider,
          message: `The request is signed (AWS SigV4), so its body was sent unchanged; these repairs would apply: ${[...new Set(found.map((entry) => entry.code))].join(", ")}. Repair the request before it is signed (e.g. toolwire/history), or use a Bedrock API key (bearer token), which does not sign the body.`,
        });
      }
      body = null;
    }
    if (body) {
      const found: RepairReport[] = [];
      let changed = false;
      if (enabled.schemas && target) changed = sanitizeTools(body, route.provider, target, found) || changed;
      if (enabled.history && route.history) changed = repairRequestHistory(body, route.history, options.historyPolicy ?? {}, found) || changed;
      for (const entry of found) report({ ...entry, provider: route.provider });
      if (changed) outgoing = JSON.stringify(body);
    }
    const send = (payload: string | null): Promise<Response> => base(...withBody(input, init, payload, text));

    let response = await send(outgoing);
    if (!response.ok && response.status >= 400 && response.status < 500 && body && enabled.recovery) {
      const errorText = await response.clone().text();
      const classification = classifyProviderError(response.status, errorText, { headers: response.headers });
      const retry = recover(classification, body, route, options.historyPolicy ?? {});
      if (retry) {
        for (const entry of retry.reports) report({ ...entry, provider: route.provider });
        report({ stage: "recovery", action: "retried", code: classification.reason, provider: route.provider, message: `The provider answered ${response.status} (${classification.reason}); the request was repaired and sent once more.` });
        await response.body?.cancel().catch(() => {});
        response = await send(JSON.stringify(retry.body));
      }
    }
    if (!response.ok) {
      const classification = classifyProviderError(response.status, await response.clone().text(), { headers: response.headers });
      report({ stage: "recovery", action: "classified", code: classification.reason, provider: route.provider, message: `The provider answered ${response.status}: ${classification.reason} (recovery: ${classification.recovery.action}).` });
      options.onError?.({ status: response.status, provider: route.provider, classification });
      return response;
    }
    const contentType = response.headers.get("content-type") ?? "";
    // Gemini streams without `alt=sse` as one JSON array (`application/json`); `:generateContent` answers with one object.
    const streamed =
      contentType.includes("text/event-stream") ||
      (route.provider === "ollama" && contentType.includes("ndjson")) ||
      (route.provider === "gemini" && contentType.includes("json") && route.response !== "whole") ||
      ((route.provider === "bedrock" || route.provider === "anthropic") && contentType.includes("application/vnd.amazon.eventstream"));
    if (!enabled.responses || !route.reencode || !response.body) return response;
    if (!streamed) {
      const json = contentType.includes("json") && !contentType.includes("ndjson");
      if (!json || route.response === "stream") return response;
      return repairWholeBody(response, route, url, { ...options, ...(decoder ? { decoder } : {}) }, reports);
    }
    // Claude on Bedrock: Messages events inside the binary event stream's chunk frames.
    const invokeStream = route.provider === "anthropic" && contentType.includes("application/vnd.amazon.eventstream");
    const reencoder = createReencoder(route.provider, {
      ...decoder,
      ...(invokeStream ? { framing: "aws-eventstream" as const } : {}),
      ...(route.provider === "gemini" ? { addMissingIds: !isVertexUrl(url) } : {}),
    });
    const stream = reencodedBody(response.body, reencoder, (done) => {
      for (const entry of done.repairs) options.onRepair?.(entry);
      if (done.turn) options.onTurn?.(done.turn, { provider: route.provider, repairs: [...reports, ...done.repairs] });
    });
    const headers = new Headers(response.headers);
    headers.delete("content-length");
    headers.delete("content-encoding");
    return new Response(stream, { status: response.status, statusText: response.statusText, headers });
  };
}

/**
 * A non-streamed JSON response: read whole, its calls repaired by `repairWholeResponse`, and
 * delivered as a new response with the repaired JSON, or the response as it came (its bytes
 * untouched) when nothing changed or the body is not JSON.
 */
async function repairWholeBody(response: Response, route: Route, url: string, options: RepairingFetchOptions, reports: readonly RepairReport[]): Promise<Response> {
  let text: string;
  try {
    text = await response.clone().text();
  } catch {
    // The body failed while it was read: the client reads the same failure from the original.
    return response;
  }
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    options.onRepair?.({
      stage: "response",
      action: "classified",
      code: "whole_response_not_json",
      provider: route.provider,
      message: "The response says it is JSON but its body does not parse; it was passed on unchanged, its calls (if any) unchecked.",
    });
    return response;
  }
  const repaired = repairWholeResponse(route.provider, body, { ...options.decoder, addMissingIds: !isVertexUrl(url) });
  for (const entry of repaired.repairs) options.onRepair?.(entry);
  if (repaired.turn) options.onTurn?.(repaired.turn, { provider: route.provider, repairs: [...reports, ...repaired.repairs] });
  if (!repaired.changed) return response;
  await response.body?.cancel().catch(() => {});
  const headers = new Headers(response.headers);
  headers.delete("content-length");
  headers.delete("content-encoding");
  return new Response(jsonText(repaired.body), { status: response.status, statusText: response.statusText, headers });
}

/** The repaired body to resend after an error, or null when no repair applies (or none changed anything). */
function recover(classification: ProviderErrorClassification, body: Record<string, unknown>, route: Route, policy: RepairPolicy): { body: Record<string, unknown>; reports: RepairReport[] } | null {
  const recovery = classification.recovery;
  const copy = structuredClone(body);
  const reports: RepairReport[] = [];
  if (recovery.action === "repair_history" && route.history && classification.reason.startsWith("tool_")) {
    if (!repairRequestHistory(copy, route.history, { ...policy, ...recovery.policy }, reports, "recovery")) return null;
    return { body: copy, reports };
  }
  if (recovery.action === "sanitize_schema" && recovery.target === "llamacpp") {
    // `type` is named when the converter did not recognize a shape: the llamacpp sanitizer rewrites
    // such shapes, and deleting `type` keywords would only make the schema vaguer.
    const strip = (recovery.strip ?? ["pattern", "format"]).filter((keyword) => keyword !== "type");
    if (!sanitizeTools(copy, route.provider, recovery.target, reports, "recovery", strip)) return null;
    return { body: copy, reports };
  }
  return null;
}

/** Whether the request carries an AWS SigV4 signature (which covers the body). */
function isSigned(input: RequestInfo | URL, init: RequestInit | undefined): boolean {
  const headers = new Headers(init?.headers ?? (typeof Request !== "undefined" && input instanceof Request ? input.headers : undefined));
  return (headers.get("authorization") ?? "").startsWith("AWS4-HMAC-SHA256") || headers.has("x-amz-content-sha256");
}

async function requestText(input: RequestInfo | URL, init: RequestInit | undefined): Promise<string | null> {
  const body = init?.body;
  if (typeof body === "string") return body;
  if (body instanceof Uint8Array || body instanceof ArrayBuffer) return new TextDecoder().decode(body);
  if (body === undefined && typeof Request !== "undefined" && input instanceof Request && input.body !== null) return input.clone().text();
  return null;
}

/** The arguments for the base fetch with `payload` as the body (unchanged arguments when nothing was read or changed). */
function withBody(input: RequestInfo | URL, init: RequestInit | undefined, payload: string | null, original: string | null): [RequestInfo | URL, RequestInit | undefined] {
  if (payload === null || (payload === original && !(typeof Request !== "undefined" && input instanceof Request))) return [input, init];
  const headers = new Headers(init?.headers ?? (input instanceof Request ? input.headers : undefined));
  headers.delete("content-length");
  if (typeof Request !== "undefined" && input instanceof Request) {
    return [input.url, { method: input.method, headers, body: payload, signal: init?.signal ?? input.signal, redirect: input.redirect }];
  }
  return [input, { ...init, headers, body: payload }];
}

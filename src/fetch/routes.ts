import type { HistoryFormat } from "../history/model.js";
import type { SchemaTarget } from "../schema/targets/types.js";
import type { ProviderName } from "../types.js";

/** What toolwire knows about a request from its URL. */
export interface Route {
  provider: ProviderName;
  /** The history format of the request body, or null when toolwire does not repair it (Ollama). */
  history: HistoryFormat | null;
  /** Whether the response's calls can be repaired: a stream re-encoded, a whole JSON body rewritten (`repairWholeResponse`). */
  reencode: boolean;
  /**
   * What the URL says about the response: `stream` (`:streamGenerateContent`, Bedrock
   * `converse-stream`, `invoke-with-response-stream`), `whole` (one JSON body: `:generateContent`,
   * Bedrock `converse`, `invoke`), or `either` when the request's `stream` field decides (Messages,
   * Chat, Responses, Ollama): then the response's content type tells.
   */
  response: "stream" | "whole" | "either";
}

/**
 * The protocol of a request from its path (any base path): the routes `toolwire serve` answers.
 * Bedrock `converse-stream` bodies (binary AWS event stream) are re-encoded, `converse` JSON bodies
 * repaired whole. Claude on Bedrock (`invoke-with-response-stream`, `invoke`) speaks Messages: its
 * history is repaired as Anthropic's, its stream re-encoded by the Anthropic re-encoder inside its
 * `chunk` frames, its `invoke` JSON repaired as a whole Messages body.
 */
export function routeOf(url: string): Route | null {
  let path: string;
  try {
    path = new URL(url).pathname;
  } catch {
    path = url.split("?")[0] ?? url;
  }
  if (path.endsWith("/messages")) return { provider: "anthropic", history: "anthropic", reencode: true, response: "either" };
  if (path.endsWith("/chat/completions")) return { provider: "openai-chat", history: "openai-chat", reencode: true, response: "either" };
  if (path.endsWith("/responses")) return { provider: "openai-responses", history: "openai-responses", reencode: true, response: "either" };
  // Both JSON: the streamed form is an array of chunks, `:generateContent` one whole response.
  if (path.endsWith(":streamGenerateContent")) return { provider: "gemini", history: "gemini", reencode: true, response: "stream" };
  if (path.endsWith(":generateContent")) return { provider: "gemini", history: "gemini", reencode: true, response: "whole" };
  const converse = /\/model\/[^/]+\/converse(-stream)?$/.exec(path);
  if (converse) return { provider: "bedrock", history: "bedrock", reencode: true, response: converse[1] ? "stream" : "whole" };
  const invoke = /\/model\/[^/]+\/invoke(-with-response-stream)?$/.exec(path);
  if (invoke) return { provider: "anthropic", history: "anthropic", reencode: true, response: invoke[1] ? "stream" : "whole" };
  if (path.endsWith("/api/chat")) return { provider: "ollama", history: null, reencode: true, response: "either" };
  return null;
}

/** The route for a provider named in the options (the URL still decides Bedrock's invoke form). */
export function routeFor(provider: ProviderName, url: string): Route {
  const fromUrl = routeOf(url);
  if (fromUrl && fromUrl.provider === provider) return fromUrl;
  const history: Record<ProviderName, HistoryFormat | null> = {
    anthropic: "anthropic",
    "openai-chat": "openai-chat",
    "openai-responses": "openai-responses",
    gemini: "gemini",
    bedrock: "bedrock",
    ollama: null,
  };
  return { provider, history: history[provider], reencode: true, response: "either" };
}

/**
 * A Vertex AI URL (`*aiplatform.googleapis.com`, or a `/publishers/<publisher>/models/` path through a
 * proxy): Vertex's FunctionCall has no `id`, so no id may be added to a call sent without one.
 */
export function isVertexUrl(url: string): boolean {
  let host = "";
  let path = url;
  try {
    const parsed = new URL(url);
    host = parsed.hostname.toLowerCase();
    path = parsed.pathname;
  } catch {
    // A relative URL: the path alone tells.
  }
  return host.endsWith("aiplatform.googleapis.com") || path.includes("/publishers/");
}

const HOST_TARGETS: Array<[RegExp, SchemaTarget]> = [
  [/(^|\.)anthropic\.com$/, "anthropic"],
  [/(^|\.)openai\.com$/, "openai"],
  [/(^|\.)openai\.azure\.com$/, "openai"],
  [/(^|\.)generativelanguage\.googleapis\.com$/, "gemini"],
  [/aiplatform\.googleapis\.com$/, "gemini"],
  [/(^|\.)x\.ai$/, "xai"],
  [/(^|\.)moonshot\.(ai|cn)$/, "kimi"],
  [/(^|\.)fireworks\.ai$/, "fireworks"],
  [/^bedrock-runtime\./, "bedrock"],
];

/**
 * The schema target for a request: from the host when it names a provider whose rules toolwire
 * knows, else from the protocol (Chat and Responses: `openai`), else none (Ollama: set `target`).
 */
export function targetOf(url: string, provider: ProviderName): SchemaTarget | null {
  let host = "";
  try {
    host = new URL(url).hostname.toLowerCase();
  } catch {
    // A relative URL: no host to go by.
  }
  for (const [pattern, target] of HOST_TARGETS) if (pattern.test(host)) return target;
  switch (provider) {
    case "anthropic":
      return "anthropic";
    case "openai-chat":
    case "openai-responses":
      return "openai";
    case "gemini":
      return "gemini";
    case "bedrock":
      return "bedrock";
    case "ollama":
      return null;
  }
}

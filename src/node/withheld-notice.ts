import type { Route } from "../fetch/routes.js";
import type { RepairReport } from "../reencode/types.js";
import type { ProviderName } from "../types.js";
import { createNoticeStream, noticeMessageItem, type NoticeStreamForm } from "./notice-stream.js";
import { isPlainObject } from "../json/shape.js";

/**
 * The opt-in withheld-call notice (`toolwire proxy --withheld-notice`): a call toolwire withholds
 * (cut by the output limit, or invalid) would otherwise vanish, and an unchanged client would end
 * the turn as if the model were done. With the notice, the assistant message the client keeps
 * gains a text part saying which call was withheld and why, which the model reads on its next
 * turn. Written for every protocol, streamed and whole (where, per protocol: docs/proxy.md);
 * withheld calls count in the metrics and the log with or without it.
 */

/** A withheld call (not an event the decoder ignored). */
export function isWithheldCall(report: RepairReport): boolean {
  return report.action === "withheld" && (report.callIndex !== undefined || report.id !== undefined || report.name !== undefined);
}

/** The notice's text for the withheld calls among `reports`, or null when there are none. */
export function noticeText(reports: readonly RepairReport[]): string | null {
  const withheld = reports.filter((report) => report.stage === "response" && isWithheldCall(report));
  if (withheld.length === 0) return null;
  const lines = withheld.map((report) => {
    const call = `${report.name ?? "a tool"}${report.id ? ` (id ${report.id})` : ""}`;
    return `- ${call}: ${report.code === "truncated" ? "its arguments were cut off before they were complete" : `its arguments were not valid (${report.code})`}. ${report.message}`;
  });
  return `\n\n[toolwire: ${withheld.length === 1 ? "a tool call" : `${withheld.length} tool calls`} from this turn ${withheld.length === 1 ? "was" : "were"} not run, because ${withheld.length === 1 ? "it" : "they"} did not arrive complete and valid:\n${lines.join("\n")}\nCall ${withheld.length === 1 ? "it" : "them"} again, with complete arguments, if still needed.]`;
}

/**
 * How a response body is written to, from what the repairing fetch made of it (the same tests as
 * `createRepairingFetch`): a stream form, `whole` (one JSON body), or null when the body is not a
 * protocol's (the notice is then not written).
 */
export function noticeForm(route: Route, contentType: string): NoticeStreamForm | "whole" | null {
  const provider = route.provider;
  if (contentType.includes("text/event-stream")) return "sse";
  if (provider === "ollama" && contentType.includes("ndjson")) return "ndjson";
  if (provider === "gemini" && contentType.includes("json") && route.response !== "whole") return "json-array";
  if (contentType.includes("application/vnd.amazon.eventstream")) return provider === "bedrock" || provider === "anthropic" ? "eventstream" : null;
  if (contentType.includes("json") && !contentType.includes("ndjson") && route.response !== "stream") return "whole";
  return null;
}

/**
 * The response with the notice for the withheld calls among `reports()` (`--withheld-notice`): a
 * stream gets it where its client keeps it (read when the body ends, see notice-stream.ts); a
 * whole JSON body is read, and re-sent with the notice when a call was withheld.
 */
export async function withWithheldNotice(response: Response, route: Route, reports: () => readonly RepairReport[]): Promise<Response> {
  if (!response.body || !response.ok) return response;
  const form = noticeForm(route, response.headers.get("content-type") ?? "");
  if (form === null) return response;
  if (form !== "whole") return new Response(response.body.pipeThrough(createNoticeStream(route.provider, form, () => noticeText(reports()))), response);
  const text = noticeText(reports());
  if (text === null) return response;
  return new Response(addNoticeToWhole(route.provider, await response.text(), text), response);
}

/** Appends `text` to a string field, or sets it (without the leading blank lines) when there was none. */
function appended(current: unknown, text: string): string {
  return typeof current === "string" && current !== "" ? `${current}${text}` : text.trimStart();
}

/** A whole (non-streamed) JSON body with the notice added; the body as it was when it is not the protocol's shape. */
export function addNoticeToWhole(provider: ProviderName, body: string, text: string): string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return body;
  }
  if (!isPlainObject(parsed)) return body;
  switch (provider) {
    case "anthropic":
      // Messages: a text block after the last one.
      if (!Array.isArray(parsed.content)) return body;
      parsed.content.push({ type: "text", text });
      break;
    case "openai-chat": {
      // chat.completion: the first choice's message content.
      const choice = Array.isArray(parsed.choices) ? parsed.choices[0] : undefined;
      const message = isPlainObject(choice) ? choice.message : undefined;
      if (!isPlainObject(message)) return body;
      message.content = appended(message.content, text);
      break;
    }
    case "openai-responses":
      // Responses: a message output item after the last item.
      if (!Array.isArray(parsed.output)) return body;
      parsed.output.push(noticeMessageItem(text));
      break;
    case "gemini": {
      // GenerateContentResponse: a text part after the first candidate's last part.
      const candidate = Array.isArray(parsed.candidates) ? parsed.candidates[0] : undefined;
      if (!isPlainObject(candidate)) return body;
      if (!isPlainObject(candidate.content)) candidate.content = { role: "model", parts: [] };
      const content = candidate.content as Record<string, unknown>;
      if (!Array.isArray(content.parts)) content.parts = [];
      (content.parts as unknown[]).push({ text });
      break;
    }
    case "bedrock": {
      // Converse: a text block after the output message's last one.
      const output = parsed.output;
      const message = isPlainObject(output) ? output.message : undefined;
      if (!isPlainObject(message) || !Array.isArray(message.content)) return body;
      message.content.push({ text });
      break;
    }
    case "ollama": {
      // /api/chat with stream: false: the message content.
      if (!isPlainObject(parsed.message)) return body;
      parsed.message.content = appended(parsed.message.content, text);
      break;
    }
  }
  return JSON.stringify(parsed);
}


import type { RepairReport } from "../reencode/types.js";
import type { ProviderName } from "../types.js";

/**
 * The opt-in withheld-call notice (`toolwire proxy --withheld-notice`): a call toolwire withholds
 * (cut by the output limit, or invalid) would otherwise vanish, and an unchanged client would end
 * the turn as if the model were done. With the notice, the assistant message the client keeps
 * gains a text part saying which call was withheld and why, which the model reads on its next
 * turn. Offered for Anthropic Messages and OpenAI Chat Completions, streamed and whole; the other
 * protocols pass as before (the withheld calls still count in the metrics and the log).
 */

/** The protocols the notice is written for. */
export function noticeSupported(provider: ProviderName | null): provider is "anthropic" | "openai-chat" {
  return provider === "anthropic" || provider === "openai-chat";
}

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

const latin1 = new TextDecoder("latin1");
const encoder = new TextEncoder();

/** Where the event that contains `at` starts: after the blank line before it (LF, CRLF or CR streams), or 0. */
function eventStart(text: string, at: number): number {
  for (let i = at - 1; i > 0; i--) {
    const c = text.charCodeAt(i);
    const p = text.charCodeAt(i - 1);
    if ((c === 10 && (p === 10 || (p === 13 && i > 1 && text.charCodeAt(i - 2) === 10))) || (c === 13 && p === 13)) return i + 1;
  }
  return 0;
}

/**
 * A stream after the re-encoder that, when the body ends with withheld calls among `reports()`,
 * writes the notice where the client keeps it: Anthropic, a text block after the last block,
 * before `message_delta`; Chat, a content delta before `[DONE]`. The tail from the terminal
 * event on (`message_delta`, `[DONE]`) is held until the body ends; everything before it passes
 * as it comes. Pieces from the re-encoder hold whole events.
 */
export function createNoticeStream(provider: "anthropic" | "openai-chat", reports: () => readonly RepairReport[]): TransformStream<Uint8Array, Uint8Array> {
  const held: Uint8Array[] = [];
  let maxIndex = -1;
  let chunkFields: { id: unknown; created: unknown; model: unknown } | null = null;
  const terminal = provider === "anthropic" ? /"type"\s*:\s*"message_delta"|^event:\s*message_(?:delta|stop)/m : /^data:\s*\[DONE\]/m;

  const scan = (text: string): void => {
    if (provider === "anthropic") {
      // The data line of each content_block_start, parsed (a line is read once: linear).
      for (let at = text.indexOf("content_block_start"); at >= 0; ) {
        const lineStart = Math.max(text.lastIndexOf("\n", at), text.lastIndexOf("\r", at)) + 1;
        let lineEnd = text.length;
        for (let i = at; i < text.length; i++) {
          const c = text.charCodeAt(i);
          if (c === 10 || c === 13) {
            lineEnd = i;
            break;
          }
        }
        const line = text.slice(lineStart, lineEnd);
        if (line.startsWith("data:")) {
          try {
            const event = JSON.parse(line.slice(5)) as { type?: unknown; index?: unknown };
            if (event.type === "content_block_start" && typeof event.index === "number" && Number.isInteger(event.index)) maxIndex = Math.max(maxIndex, event.index);
          } catch {
            // Not one whole JSON line.
          }
        }
        at = text.indexOf("content_block_start", lineEnd);
      }
    } else if (chunkFields === null) {
      const line = /^data:\s*(\{[^\n\r]*)/m.exec(text);
      if (line) {
        try {
          const chunk = JSON.parse(line[1] as string) as Record<string, unknown>;
          chunkFields = { id: chunk.id, created: chunk.created, model: chunk.model };
        } catch {
          // Not a whole JSON line: try the next piece.
        }
      }
    }
  };

  const notice = (text: string): string => {
    if (provider === "anthropic") {
      const index = maxIndex + 1;
      return [
        `event: content_block_start\ndata: ${JSON.stringify({ type: "content_block_start", index, content_block: { type: "text", text: "" } })}\n\n`,
        `event: content_block_delta\ndata: ${JSON.stringify({ type: "content_block_delta", index, delta: { type: "text_delta", text } })}\n\n`,
        `event: content_block_stop\ndata: ${JSON.stringify({ type: "content_block_stop", index })}\n\n`,
      ].join("");
    }
    const fields = chunkFields ?? { id: "toolwire-notice", created: Math.floor(Date.now() / 1000), model: "" };
    return `data: ${JSON.stringify({ ...fields, object: "chat.completion.chunk", choices: [{ index: 0, delta: { content: text }, finish_reason: null }] })}\n\n`;
  };

  return new TransformStream<Uint8Array, Uint8Array>({
    transform(piece, controller) {
      if (held.length > 0) {
        held.push(piece);
        return;
      }
      const text = latin1.decode(piece);
      const match = terminal.exec(text);
      if (!match) {
        scan(text);
        controller.enqueue(piece);
        return;
      }
      const start = eventStart(text, match.index);
      // latin1: one character per byte, so the offset is the byte offset.
      if (start > 0) {
        scan(text.slice(0, start));
        controller.enqueue(piece.subarray(0, start));
      }
      held.push(piece.subarray(start));
    },
    flush(controller) {
      const text = noticeText(reports());
      if (text !== null) controller.enqueue(encoder.encode(notice(text)));
      for (const piece of held) controller.enqueue(piece);
    },
  });
}

/** A whole (non-streamed) Anthropic or Chat JSON body with the notice added; the body as it was when it is not the expected shape. */
export function addNoticeToWhole(provider: "anthropic" | "openai-chat", body: string, text: string): string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return body;
  }
  if (typeof parsed !== "object" || parsed === null) return body;
  const record = parsed as Record<string, unknown>;
  if (provider === "anthropic") {
    if (!Array.isArray(record.content)) return body;
    record.content.push({ type: "text", text });
    return JSON.stringify(record);
  }
  const choice = Array.isArray(record.choices) ? (record.choices[0] as Record<string, unknown> | undefined) : undefined;
  const message = choice?.message as Record<string, unknown> | undefined;
  if (!message || typeof message !== "object") return body;
  message.content = typeof message.content === "string" ? `${message.content}${text}` : text.trimStart();
  return JSON.stringify(record);
}

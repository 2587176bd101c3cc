import fc from "fast-check";
import { TEXT_CALL_SYNTAXES, type TextCallSyntaxName } from "../text-calls/syntaxes.js";

/**
 * Generators for text with tool calls written into it, one renderer per syntax as the models'
 * chat templates write them. A generated document knows the text and the calls the extractor
 * must find in it, whatever the chunking.
 */

/** A call to write into text. XML-style syntaxes (qwen3-coder, glm) take string values only. */
export interface TextCallSpec {
  syntax: TextCallSyntaxName;
  name: string;
  args: Record<string, unknown>;
  /** A syntax variant (mistral: "array" | "v11"; deepseek: "v3" | "v31"; llama3-json: "tag" | "bare"). */
  variant?: string;
}

/** Text with calls written into it, and what an extractor must read from it. */
export interface TextCallDocument {
  /** The whole text as the model wrote it. */
  text: string;
  /** The text an extractor must pass on (everything but the calls' markup). */
  plainText: string;
  calls: TextCallSpec[];
}

function pythonLiteral(value: unknown): string {
  if (value === null) return "None";
  if (value === true) return "True";
  if (value === false) return "False";
  if (Array.isArray(value)) return `[${value.map(pythonLiteral).join(", ")}]`;
  if (typeof value === "object") {
    return `{${Object.entries(value as Record<string, unknown>)
      .map(([k, v]) => `${JSON.stringify(k)}: ${pythonLiteral(v)}`)
      .join(", ")}}`;
  }
  // JSON strings and numbers are valid Python literals with the same value.
  return JSON.stringify(value);
}

/** The call as the syntax writes it. */
export function renderTextCall(call: TextCallSpec): string {
  const { name, args } = call;
  const json = JSON.stringify(args);
  switch (call.syntax) {
    case "hermes":
      return `<tool_call>\n${JSON.stringify({ name, arguments: args })}\n</tool_call>`;
    case "qwen3-coder":
      return `<tool_call>\n<function=${name}>\n${Object.entries(args)
        .map(([k, v]) => `<parameter=${k}>\n${String(v)}\n</parameter>\n`)
        .join("")}</function>\n</tool_call>`;
    case "glm":
      return `<tool_call>${name}\n${Object.entries(args)
        .map(([k, v]) => `<arg_key>${k}</arg_key>\n<arg_value>${String(v)}</arg_value>\n`)
        .join("")}</tool_call>`;
    case "kimi-k2":
      return `<|tool_calls_section_begin|>\n<|tool_call_begin|>functions.${name}:0<|tool_call_argument_begin|>${json}<|tool_call_end|>\n<|tool_calls_section_end|>`;
    case "mistral":
      return call.variant === "v11" ? `[TOOL_CALLS]${name}[ARGS]${json}` : `[TOOL_CALLS][${JSON.stringify({ name, arguments: args })}]`;
    case "llama3-json":
      return call.variant === "bare" ? JSON.stringify({ name, parameters: args }) : `<|python_tag|>${JSON.stringify({ name, parameters: args })}<|eom_id|>`;
    case "pythonic":
      return `[${name}(${Object.entries(args)
        .map(([k, v]) => `${k}=${pythonLiteral(v)}`)
        .join(", ")})]`;
    case "deepseek":
      return call.variant === "v31"
        ? `<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>${name}<｜tool▁sep｜>${json}<｜tool▁call▁end｜><｜tool▁calls▁end｜>`
        : `<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>${name}\n\`\`\`json\n${json}\n\`\`\`<｜tool▁call▁end｜><｜tool▁calls▁end｜>`;
    case "harmony":
      return `<|start|>assistant<|channel|>commentary to=functions.${name} <|constrain|>json<|message|>${json}<|call|>`;
    case "nemotron":
      return `<TOOLCALL>[${JSON.stringify({ name, arguments: args })}]</TOOLCALL>`;
    case "firefunction":
      return `functools[${JSON.stringify({ name, arguments: args })}]`;
  }
}

/** Syntaxes a call may use in the middle of text (the others only make up a whole message). */
export const INLINE_SYNTAXES: readonly TextCallSyntaxName[] = ["hermes", "qwen3-coder", "glm", "kimi-k2", "mistral", "llama3-json", "deepseek", "harmony"];

const identifier = (): fc.Arbitrary<string> => fc.stringMatching(/^[a-z_][a-z0-9_]{0,11}$/);

/** Markup that must not end a call when it sits inside a JSON string argument. */
const MARKUP = ["</tool_call>", "<|tool_call_end|>", "<｜tool▁call▁end｜>", "<|call|>", "[TOOL_CALLS]", "}", "]", '"', "\\", "\n", "<function=x>", "<tool_call>"];

function jsonArgValue(): fc.Arbitrary<unknown> {
  const leaf = fc.oneof(fc.string({ maxLength: 8 }), fc.constantFrom(...MARKUP), fc.integer(), fc.boolean(), fc.constant(null), fc.double({ noNaN: true, noDefaultInfinity: true }).filter((n) => !Object.is(n, -0)));
  const value = fc.letrec<{ value: unknown }>((tie) => ({
    value: fc.oneof({ depthSize: "small", withCrossShrink: true }, leaf, fc.array(tie("value"), { maxLength: 3 }), fc.dictionary(fc.string({ maxLength: 5 }), tie("value"), { maxKeys: 3 })),
  })).value;
  return value;
}

function jsonArgs(): fc.Arbitrary<Record<string, unknown>> {
  return fc.dictionary(fc.string({ maxLength: 6 }), jsonArgValue(), { maxKeys: 4 });
}

/** Plain string values for XML-style parameters: no `<`, and no newline at either end (the template's own). */
function xmlArgs(): fc.Arbitrary<Record<string, unknown>> {
  const text = fc.stringMatching(/^[^<\n]([^<]{0,10}[^<\n])?$/);
  return fc.dictionary(identifier(), text, { maxKeys: 4 });
}

/** One call in a syntax that may appear inside text. */
export function inlineTextCall(): fc.Arbitrary<TextCallSpec> {
  return fc.constantFrom(...INLINE_SYNTAXES).chain((syntax) => {
    const args = syntax === "qwen3-coder" || syntax === "glm" ? xmlArgs() : jsonArgs();
    const variant = syntax === "mistral" ? fc.constantFrom("array", "v11") : syntax === "deepseek" ? fc.constantFrom("v3", "v31") : fc.constant(undefined);
    return fc.record({ syntax: fc.constant(syntax), name: identifier(), args, variant }).map((spec) => {
      const call: TextCallSpec = { syntax: spec.syntax, name: spec.name, args: spec.args };
      if (spec.variant !== undefined) call.variant = spec.variant;
      return call;
    });
  });
}

const ALL_MARKERS: readonly string[] = TEXT_CALL_SYNTAXES.flatMap((syntax) => [...syntax.markers]);

/**
 * Plain text near markers: prefixes of markers, brackets and pipes, but never a whole marker, and
 * never starting with `{` or `[` (which would make the message a whole-message call candidate).
 */
export function plainText(): fc.Arbitrary<string> {
  const pieces = fc.constantFrom("a", "b ", "\n", " ", "<", ">", "|", "[", "]", "{", "}", "<tool_", "<tool_call", "[TOOL_", "<|tool", "<|", "<｜tool", "<function", "<|channel|>", "<|start|>", "to=functions", "</tool_call>", "é", "😀");
  return fc
    .array(pieces, { maxLength: 12 })
    .map((parts) => parts.join(""))
    .filter((text) => !/^\s*[[{]/.test(text) && !ALL_MARKERS.some((marker) => text.includes(marker)));
}

/** Text with calls in it: text, call, text, call, …, text. */
export function textCallDocument(): fc.Arbitrary<TextCallDocument> {
  return fc.tuple(plainText(), fc.array(fc.tuple(inlineTextCall(), plainText()), { maxLength: 3 })).map(([head, rest]) => {
    let text = head;
    let plain = head;
    const calls: TextCallSpec[] = [];
    rest.forEach(([call, after], k) => {
      text += renderTextCall(call) + after;
      // Whitespace between two calls is no text (servers stream none between calls).
      if (!(k + 1 < rest.length && /^\s*$/.test(after))) plain += after;
      calls.push(call);
    });
    return { text, plainText: plain, calls };
  });
}

/** A whole message that is only calls (pythonic list, or bare Llama JSON). */
export function wholeMessageTextCall(): fc.Arbitrary<TextCallDocument> {
  return fc.oneof(
    fc.record({ name: identifier(), args: jsonArgs() }).map(({ name, args }) => {
      const call: TextCallSpec = { syntax: "llama3-json", name, args, variant: "bare" };
      return { text: renderTextCall(call), plainText: "", calls: [call] };
    }),
    fc.array(fc.record({ name: identifier(), args: fc.dictionary(identifier(), jsonArgValue(), { maxKeys: 3 }) }), { minLength: 1, maxLength: 3 }).map((list) => {
      const calls: TextCallSpec[] = list.map(({ name, args }) => ({ syntax: "pythonic", name, args }));
      const text = `[${calls.map((c) => renderTextCall(c).slice(1, -1)).join(", ")}]`;
      return { text, plainText: "", calls };
    }),
  );
}

/** Cuts `text` into pieces at the given (sorted, deduplicated) positions. */
export function cutText(text: string, cuts: readonly number[]): string[] {
  const positions = [...new Set(cuts.map((c) => Math.max(0, Math.min(text.length, c))))].sort((a, b) => a - b);
  const pieces: string[] = [];
  let last = 0;
  for (const at of positions) {
    if (at > last) pieces.push(text.slice(last, at));
    last = at;
  }
  if (last < text.length) pieces.push(text.slice(last));
  return pieces;
}

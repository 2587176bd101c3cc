/**
 * Call-id rules of the targets behind each format, and deterministic replacement ids.
 *
 * Ids travel between providers (a Kimi `functions.read:0` replayed to Anthropic, a 53-character
 * proxy id replayed to OpenAI) and each target rejects a different set. Replacements depend only on
 * the history, never on time or randomness, so the same history always repairs to the same ids.
 */
import { hashId } from "../util/hash.js";
import type { HistoryFormat } from "./model.js";

/**
 * - `anthropic`: `^[a-zA-Z0-9_-]+$` (messages.N.content.M.tool_use.id pattern).
 * - `openai`: non-empty, at most 40 characters (Chat Completions `tool_calls[].id`).
 * - `bedrock`: 1 to 64 characters of `[a-zA-Z0-9_.:-]` (Converse `toolUseId`; the API reference
 *   shows `[a-zA-Z0-9_-]+`, but Bedrock's own Kimi K2 emits and accepts `functions.name:0`,
 *   vercel/ai#11409).
 * - `kimi`: `functions.<name>:<index>`, the form Kimi K2 expects in replayed history.
 * - `mistral`: exactly 9 characters of `[a-zA-Z0-9]`.
 * - `none`: any non-empty id.
 */
export const ID_RULES = ["anthropic", "openai", "bedrock", "kimi", "mistral", "none"] as const;
/** A tool-call id rule: which ids a target accepts and how a replacement id is minted. */
export type IdRule = (typeof ID_RULES)[number];

/** True when `value` names an id rule (`ID_RULES`). */
export function isIdRule(value: unknown): value is IdRule {
  return typeof value === "string" && (ID_RULES as readonly string[]).includes(value);
}

/** The id rule of a history format's own provider. */
export function defaultIdRule(format: HistoryFormat): IdRule {
  switch (format) {
    case "anthropic":
      return "anthropic";
    case "openai-chat":
      return "openai";
    case "bedrock":
      return "bedrock";
    default:
      return "none";
  }
}

/** What a minted id may depend on: the tool's name and the call's position in the history. */
export interface IdContext {
  /** Name of the called tool (Kimi ids embed it). */
  name: string;
  /** Position of the call among all calls of the history, from 0. */
  ordinal: number;
}

const ANTHROPIC_ID = /^[a-zA-Z0-9_-]+$/;
const BEDROCK_ID = /^[a-zA-Z0-9_.:-]+$/;
const MISTRAL_ID = /^[a-zA-Z0-9]{9}$/;

/** Why `id` is rejected under `rule`, or null when it is accepted. */
export function idProblem(id: string, rule: IdRule, context: IdContext): string | null {
  if (id === "") return "the id is empty";
  switch (rule) {
    case "anthropic":
      return ANTHROPIC_ID.test(id) ? null : "the id must match ^[a-zA-Z0-9_-]+$";
    case "bedrock":
      if (!BEDROCK_ID.test(id)) return "the id must match ^[a-zA-Z0-9_.:-]+$";
      return id.length <= 64 ? null : `the id is ${id.length} characters long; the maximum is 64`;
    case "openai":
      return id.length <= 40 ? null : `the id is ${id.length} characters long; the maximum is 40`;
    case "mistral":
      return MISTRAL_ID.test(id) ? null : "the id must be exactly 9 characters of a-z, A-Z, 0-9";
    case "kimi":
      return isKimiId(id, context.name) ? null : `the id must have the form functions.${context.name}:<index>`;
    case "none":
      return null;
  }
}

function isKimiId(id: string, name: string): boolean {
  const prefix = `functions.${name}:`;
  return id.startsWith(prefix) && /^\d+$/.test(id.slice(prefix.length));
}

/**
 * A replacement for `original` that the rule accepts and that is not in `taken`. Readable where
 * possible (the original with forbidden characters replaced), else a hash of the original and the
 * call's position.
 */
export function mintId(original: string, rule: IdRule, context: IdContext, taken: ReadonlySet<string>): string {
  return mintFrom(original, rule, context, taken, 0).id;
}

function mintFrom(original: string, rule: IdRule, context: IdContext, taken: ReadonlySet<string>, first: number): { id: string; attempt: number } {
  for (let attempt = first; ; attempt++) {
    const candidate = candidateId(original, rule, context, attempt);
    if (!taken.has(candidate) && idProblem(candidate, rule, context) === null) return { id: candidate, attempt };
  }
}

/**
 * Mints ids for one history, each unique among `taken` (which it extends). The rules whose
 * candidates are a sequence (`none`: `id_2`, `id_3`…; `kimi`: `functions.name:N`) resume where the
 * last id minted from the same original (name) stopped, so N calls sharing one id cost O(N), not
 * O(N²). Hashed candidates (the other rules) collide too rarely to need it.
 */
export class IdMinter {
  private readonly resume = new Map<string, number>();

  constructor(
    private readonly rule: IdRule,
    private readonly taken: Set<string>,
  ) {}

  mint(original: string, context: IdContext): string {
    const key = this.rule === "kimi" ? context.name : this.rule === "none" ? original : null;
    const resumeAt = key === null ? 0 : (this.resume.get(key) ?? 0);
    // Kimi candidates count from the call's ordinal: resume at the next number not yet tried.
    const first = this.rule === "kimi" ? Math.max(0, resumeAt - context.ordinal) : resumeAt;
    const { id, attempt } = mintFrom(original, this.rule, context, this.taken, first);
    if (key !== null) this.resume.set(key, this.rule === "kimi" ? context.ordinal + attempt + 1 : attempt + 1);
    this.taken.add(id);
    return id;
  }
}

function candidateId(original: string, rule: IdRule, context: IdContext, attempt: number): string {
  const hashed = hashId(`${original}\u0000${context.name}\u0000${context.ordinal}\u0000${attempt}`);
  switch (rule) {
    case "anthropic":
    case "bedrock": {
      const cleaned = original.replace(/[^a-zA-Z0-9_-]/g, "_");
      const readable = /[a-zA-Z0-9]/.test(cleaned) ? cleaned : "toolu";
      const base = attempt === 0 && readable !== "toolu" ? readable : `${readable}_${hashed}`;
      return rule === "bedrock" && base.length > 64 ? `${base.slice(0, 52)}_${hashed}` : base;
    }
    case "openai":
      return attempt === 0 && original !== "" && original.length <= 40 ? original : `call_${hashed}`;
    case "mistral":
      return hashed.slice(0, 9).padStart(9, "0");
    case "kimi":
      return `functions.${context.name}:${context.ordinal + attempt}`;
    case "none":
      return original === "" ? `call_${hashed}` : `${original}_${attempt + 2}`;
  }
}

/**
 * Replacement ids and the originals they stand for. `toOriginal` is always a function (every new
 * id is unique); `fromOriginal` holds only originals that were replaced everywhere by one id, since
 * a duplicated original maps to several new ids.
 */
export interface IdMap {
  toOriginal: Record<string, string>;
  fromOriginal: Record<string, string>;
}

export function emptyIdMap(): IdMap {
  return { toOriginal: {}, fromOriginal: {} };
}

/** The id the history had before repair, for an id the provider now uses. */
export function originalId(map: IdMap, id: string): string {
  return Object.prototype.hasOwnProperty.call(map.toOriginal, id) ? (map.toOriginal[id] as string) : id;
}

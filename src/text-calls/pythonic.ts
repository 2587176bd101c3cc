import { CallParser, type ParseContext } from "./parsers.js";
import { expectAfterWs, isWs, skipWs } from "./scan.js";
import { isJson } from "../json/equal.js";

const enum P {
  Open,
  CallStart,
  Name,
  ArgStart,
  Key,
  Equals,
  Value,
  AfterCall,
  End,
}

const MAX_IDENT = 256;

function isIdentStart(c: number): boolean {
  return (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95;
}

function isIdent(c: number): boolean {
  return isIdentStart(c) || (c >= 48 && c <= 57) || c === 46;
}

const JSON_NUMBER = /^-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?$/;

/**
 * A Python literal translated to JSON as it streams: strings in either quote become JSON strings,
 * tuples and lists arrays, True/False/None true/false/null. Tokens that have no JSON equivalent are
 * passed through as written, so finalize reports them rather than toolwire guessing.
 */
class PythonLiteral {
  /** Closing brackets of the open containers. */
  private readonly stack: number[] = [];
  private quote = 0;
  private escape = false;
  private hex: string | null = null;
  private token = "";
  private started = false;
  /** The value as JSON so far: checked when the value ends. */
  json = "";

  /** The index of the `,` or `)` that ends the value at depth 0, or -1 when it goes on. */
  feed(s: string, i: number, x: ParseContext): number {
    let out = "";
    let k = i;
    const flush = (): void => {
      if (out.length > 0) {
        x.args(out);
        this.json += out;
      }
      out = "";
    };
    for (; k < s.length; k++) {
      const c = s.charCodeAt(k);
      if (this.quote !== 0) {
        if (this.hex !== null) {
          this.hex += s[k];
          if (this.hex.length === 2) {
            out += `\\u00${this.hex}`;
            this.hex = null;
          }
          continue;
        }
        if (this.escape) {
          this.escape = false;
          const e = s[k] as string;
          if (e === "'") out += "'";
          else if (e === '"') out += '\\"';
          else if (e === "x") this.hex = "";
          else if ("\\nrtbfu/".includes(e)) out += `\\${e}`;
          else out += `\\\\${e === "\n" ? "\\n" : e}`;
          continue;
        }
        if (c === 92) this.escape = true;
        else if (c === this.quote) {
          out += '"';
          this.quote = 0;
        } else if (c === 34) out += '\\"';
        else if (c < 32) out += JSON.stringify(s[k]).slice(1, -1);
        else out += s[k];
        continue;
      }
      if (isIdent(c) || c === 45 || c === 43) {
        this.token += s[k];
        this.started = true;
        continue;
      }
      if (this.token.length > 0) out += this.endToken();
      if (isWs(c)) continue;
      if (c === 39 || c === 34) {
        this.quote = c;
        this.started = true;
        out += '"';
      } else if (c === 91 || c === 40 || c === 123) {
        this.stack.push(c === 123 ? 125 : c === 91 ? 93 : 41);
        this.started = true;
        out += c === 123 ? "{" : "[";
      } else if ((c === 93 || c === 41 || c === 125) && this.stack.length > 0) {
        const close = this.stack.pop() as number;
        out += close === 125 ? "}" : "]";
        if (close !== c) out += s[k];
      } else if (this.stack.length === 0 && (c === 44 || c === 41)) {
        flush();
        return k;
      } else out += s[k];
    }
    flush();
    return -1;
  }

  get empty(): boolean {
    return !this.started;
  }

  private endToken(): string {
    const token = this.token;
    this.token = "";
    if (token === "True") return "true";
    if (token === "False") return "false";
    if (token === "None") return "null";
    if (JSON_NUMBER.test(token)) return token;
    return token;
  }
}


/**
 * `[f(a=1, b="x"), g()]` (Llama 3.2 / Llama 4 pythonic tool calls): as the whole message, after a
 * known tool name, or wrapped in `<|python_start|>…<|python_end|>` (Llama 4; then `wrapped`, and
 * the parser starts after `<|python_start|>`). The list is one unit: its calls are passed on when
 * it closes, and a list that is not valid Python (a value that is no literal) is all text.
 */
export class PythonicParser extends CallParser {
  constructor(private readonly wrapped = false) {
    super();
  }

  private st = P.Open;
  private name = "";
  private key = "";
  private opened = false;
  private value: PythonLiteral | null = null;

  feed(s: string, i: number, x: ParseContext): number {
    while (true) {
      switch (this.st) {
        case P.Open: {
          if (this.wrapped) i = skipWs(s, i);
          if (i >= s.length) return this.more(i);
          if (s.charCodeAt(i) !== 91) return this.reject(i);
          i++;
          this.st = P.CallStart;
          break;
        }
        case P.CallStart: {
          const j = skipWs(s, i);
          if (j === s.length) return this.more(i);
          if (!isIdentStart(s.charCodeAt(j))) return this.reject(j);
          this.name = "";
          this.opened = false;
          this.st = P.Name;
          i = j;
          break;
        }
        case P.Name: {
          let k = i;
          while (k < s.length && isIdent(s.charCodeAt(k)) && this.name.length + (k - i) <= MAX_IDENT) k++;
          this.name += s.slice(i, k);
          if (this.name.length >= MAX_IDENT + 1 || (k < s.length && isIdent(s.charCodeAt(k)))) return this.reject(k);
          if (k === s.length) return this.more(k);
          if (s.charCodeAt(k) !== 40) return this.reject(k);
          i = k + 1;
          this.st = P.ArgStart;
          break;
        }
        case P.ArgStart: {
          const j = skipWs(s, i);
          if (j === s.length) return this.more(i);
          const c = s.charCodeAt(j);
          if (c === 41) {
            if (!this.opened) {
              if (!x.open(this.name, "pythonic")) return this.reject(j);
              x.args("{}");
            } else x.args("}");
            x.close(true);
            this.st = P.AfterCall;
            i = j + 1;
            break;
          }
          if (!isIdentStart(c)) return this.fail(j, x);
          this.key = "";
          this.st = P.Key;
          i = j;
          break;
        }
        case P.Key: {
          let k = i;
          while (k < s.length && isIdent(s.charCodeAt(k)) && this.key.length + (k - i) <= MAX_IDENT) k++;
          this.key += s.slice(i, k);
          if (k < s.length && isIdent(s.charCodeAt(k))) return this.fail(k, x);
          if (k === s.length) return this.more(k);
          i = k;
          this.st = P.Equals;
          break;
        }
        case P.Equals: {
          const j = skipWs(s, i);
          if (j === s.length) return this.more(i);
          if (s.charCodeAt(j) !== 61) return this.fail(j, x);
          if (!this.opened) {
            // The call opens at its first `key=`: `[word(text)]` is prose, not a call.
            if (!x.open(this.name, "pythonic")) return this.reject(j);
            this.opened = true;
            x.args(`{${JSON.stringify(this.key)}: `);
          } else x.args(`, ${JSON.stringify(this.key)}: `);
          this.value = new PythonLiteral();
          this.st = P.Value;
          i = j + 1;
          break;
        }
        case P.Value: {
          const value = this.value as PythonLiteral;
          const end = value.feed(s, i, x);
          if (end < 0) return this.more(s.length);
          if (value.empty || !isJson(value.json)) return this.fail(end, x);
          if (s.charCodeAt(end) === 44) {
            this.st = P.ArgStart;
            i = end + 1;
            break;
          }
          x.args("}");
          x.close(true);
          this.st = P.AfterCall;
          i = end + 1;
          break;
        }
        case P.AfterCall: {
          const r = expectAfterWs(s, i, [",", "]"]);
          if (r.kind === "more") return this.more(i);
          if (r.kind === "none") return this.reject(r.at);
          if (r.which === 0) {
            this.st = P.CallStart;
            i = r.end;
            break;
          }
          if (!this.wrapped) return this.done(r.end);
          this.st = P.End;
          i = r.end;
          break;
        }
        case P.End: {
          const r = expectAfterWs(s, i, ["<|python_end|>"]);
          if (r.kind === "more") return this.more(i);
          return this.done(r.kind === "match" ? r.end : i);
        }
      }
    }
  }

  /** Malformed before the call opened: not a call; after: the call is cut. */
  private fail(i: number, x: ParseContext): number {
    if (this.opened) x.broken();
    return this.reject(i);
  }
}

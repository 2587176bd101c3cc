import { ArgumentsObject, CallParser, type ParseContext } from "./parsers.js";
import { expectAfterWs, isWs, Reader, skipWs } from "./scan.js";
import { isJson } from "../json/shape.js";

const enum PythonicState {
  Open,
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

/**
 * An identifier after optional whitespace: done at the character after it (left for the caller);
 * a reject where no identifier starts, or where it runs past `limit` characters.
 */
class Identifier extends Reader {
  text = "";
  constructor(private readonly limit: number) {
    super();
  }

  feed(s: string, i: number): number {
    if (this.text.length === 0) {
      const j = skipWs(s, i);
      if (j === s.length) return this.more(i);
      if (!isIdentStart(s.charCodeAt(j))) return this.reject(j);
      i = j;
    }
    let k = i;
    while (k < s.length && isIdent(s.charCodeAt(k)) && this.text.length + (k - i) <= MAX_IDENT) k++;
    this.text += s.slice(i, k);
    if (this.text.length > this.limit || (k < s.length && isIdent(s.charCodeAt(k)))) return this.reject(k);
    return k === s.length ? this.more(k) : this.done(k);
  }
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

  private state = PythonicState.Open;
  private key: Identifier | null = null;
  private name = new Identifier(MAX_IDENT);
  private object = new ArgumentsObject();
  private value: PythonLiteral | null = null;

  private nextCall(): void {
    this.name = new Identifier(MAX_IDENT);
    this.object = new ArgumentsObject();
    this.state = PythonicState.Name;
  }

  feed(s: string, i: number, x: ParseContext): number {
    while (true) {
      switch (this.state) {
        case PythonicState.Open: {
          if (this.wrapped) i = skipWs(s, i);
          if (i >= s.length) return this.more(i);
          if (s.charCodeAt(i) !== 91) return this.reject(i);
          i++;
          this.nextCall();
          break;
        }
        case PythonicState.Name: {
          i = this.name.feed(s, i);
          if (this.name.status !== "done") return this.stopWith(this.name, i, x, false);
          if (s.charCodeAt(i) !== 40) return this.reject(i);
          i++;
          this.state = PythonicState.ArgStart;
          break;
        }
        case PythonicState.ArgStart: {
          const j = skipWs(s, i);
          if (j === s.length) return this.more(i);
          if (s.charCodeAt(j) === 41) {
            if (this.object.empty && !x.open(this.name.text, "pythonic")) return this.reject(j);
            this.object.close(x);
            x.close(true);
            this.state = PythonicState.AfterCall;
            i = j + 1;
            break;
          }
          // A key may be one character longer than a name: the limits as they have always been.
          this.key = new Identifier(MAX_IDENT + 1);
          this.state = PythonicState.Key;
          i = j;
          break;
        }
        case PythonicState.Key: {
          const key = this.key as Identifier;
          i = key.feed(s, i);
          if (key.status === "more") return this.more(i);
          if (key.status === "reject") return this.fail(i, x);
          this.state = PythonicState.Equals;
          break;
        }
        case PythonicState.Equals: {
          const j = skipWs(s, i);
          if (j === s.length) return this.more(i);
          if (s.charCodeAt(j) !== 61) return this.fail(j, x);
          // The call opens at its first `key=`: `[word(text)]` is prose, not a call.
          if (this.object.empty && !x.open(this.name.text, "pythonic")) return this.reject(j);
          this.object.key((this.key as Identifier).text, x);
          this.value = new PythonLiteral();
          this.state = PythonicState.Value;
          i = j + 1;
          break;
        }
        case PythonicState.Value: {
          const value = this.value as PythonLiteral;
          const end = value.feed(s, i, x);
          if (end < 0) return this.more(s.length);
          if (value.empty || !isJson(value.json)) return this.fail(end, x);
          i = end + 1;
          if (s.charCodeAt(end) === 44) {
            this.state = PythonicState.ArgStart;
            break;
          }
          this.object.close(x);
          x.close(true);
          this.state = PythonicState.AfterCall;
          break;
        }
        case PythonicState.AfterCall: {
          const r = expectAfterWs(s, i, [",", "]"]);
          if (r.kind === "more") return this.more(i);
          if (r.kind === "none") return this.reject(r.at);
          i = r.end;
          if (r.which === 0) this.nextCall();
          else if (!this.wrapped) return this.done(i);
          else {
            // The list is whole: its calls stand whether or not `<|python_end|>` follows (vLLM's
            // llama4_pythonic reads `<|python_start|>[f()]` at the end of the output as a call).
            x.mark(i);
            this.state = PythonicState.End;
          }
          break;
        }
        case PythonicState.End:
          return this.endAfterOptional(s, i, "<|python_end|>");
      }
    }
  }

  /** Malformed before the call opened: not a call; after: the call is cut. */
  private fail(i: number, x: ParseContext): number {
    if (!this.object.empty) x.broken();
    return this.reject(i);
  }
}

import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import ts from "typescript";

/**
 * Finds every diagnostic, repair and error code src/ emits, by reading the source: the places a
 * code is written are few and fixed, and each is recognized here.
 *
 * - an object literal's `code:` property (Diagnostic objects, call errors, schema issues, the
 *   repairing fetch's and the proxy's reports), whatever expression picks the literal
 *   (`a ? "x" : "y"`, `x ?? "y"`);
 * - the code argument of the helpers that build diagnostics (`warn`, `callDiag`, `once`,
 *   `startDiagnostic`, `diagnostic`, `ignoreAfterEnd`, `fail`; `callDiag(state, code, …)`), history faults and edits (`add`
 *   and `repair` in the pairing code, `edit`), call repairs (`recordRepair`, `repairs: [...]`, and
 *   `push`/`add` on a list named `codes` or `repairs`), and errors (`new ToolwireError(code, …)`,
 *   `new EventStreamError(…, code)`, `new ImportError(…, code)`, `super(code, …)` in an error class);
 * - the string literal types of the unions that name codes (`RepairCode`, `ToolCallErrorCode`,
 *   `IssueCode`, `StopCode`, `EventStreamErrorCode`, `ImportErrorCode`, and `ProviderErrorReason`,
 *   which the repairing fetch and the proxy report as the code of a classified error);
 * - a schema change's or problem's `rule:` in src/schema (the rules of the targets, whose ids are
 *   built in several ways, are listed by the test from `TARGETS` itself);
 * - a variable named `code` or `codes` initialized with literals.
 *
 * A code built from a template (`sse_${type}`, `eventstream_${code}`, `strip_${key}`) is
 * reported by its static prefix.
 */

export interface CodeSite {
  file: string;
  line: number;
  /** How it was found: `code:`, the helper's name, or the union's name. */
  via: string;
  /** The message written next to it, when there is one (a string or template literal). */
  message?: string;
  severity?: string;
}

export interface ScanResult {
  codes: Map<string, CodeSite[]>;
  /** Static prefixes of codes built from templates, with where they are built. */
  prefixes: Map<string, CodeSite[]>;
}

const HELPERS_FIRST_ARG = new Set(["warn", "callDiag", "once", "startDiagnostic", "diagnostic", "ignoreAfterEnd", "fail", "edit", "recordRepair", "ToolwireError"]);
/** Helpers whose name is too common to trust everywhere: only in these files. */
const HELPERS_IN: Record<string, (file: string) => boolean> = {
  once: (file) => file.startsWith("src/providers/"),
  fail: (file) => file.startsWith("src/framing/"),
  add: (file) => file === "src/history/pairing.ts",
  repair: (file) => file === "src/guard/provider-errors.ts",
};
/** Helpers whose code is not their first argument: the index of the code argument. */
const CODE_ARG: Record<string, number> = { callDiag: 1 };
const HELPERS_LAST_ARG_CODE = new Set(["EventStreamError", "ImportError"]);
const CODE_UNIONS = new Set(["RepairCode", "ToolCallErrorCode", "IssueCode", "StopCode", "EventStreamErrorCode", "ImportErrorCode", "ProviderErrorReason"]);
const CODE_LISTS = new Set(["codes", "repairs"]);
/** snake_case codes; schema rules are kebab-case (`top-level-combinators`). */
export const CODE_SHAPE = /^[a-z][a-z0-9]*(?:_[a-z0-9]+)*$/;
export const RULE_SHAPE = /^[a-z][a-z0-9]*(?:-[a-z0-9]+)*$/;

function sourceFiles(root: string): string[] {
  const found: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith(".ts") && !entry.name.endsWith(".d.ts")) found.push(path);
    }
  };
  walk(join(root, "src"));
  return found.sort();
}

/** The string literals an expression can evaluate to, through conditionals, `??`, `||` and parentheses. */
function literals(node: ts.Expression): Array<ts.StringLiteral | ts.NoSubstitutionTemplateLiteral | ts.TemplateExpression> {
  if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node) || ts.isTemplateExpression(node)) return [node];
  if (ts.isParenthesizedExpression(node) || ts.isAsExpression(node) || ts.isSatisfiesExpression(node)) return literals(node.expression);
  if (ts.isConditionalExpression(node)) return [...literals(node.whenTrue), ...literals(node.whenFalse)];
  if (ts.isBinaryExpression(node) && (node.operatorToken.kind === ts.SyntaxKind.QuestionQuestionToken || node.operatorToken.kind === ts.SyntaxKind.BarBarToken)) {
    return [...literals(node.left), ...literals(node.right)];
  }
  if (ts.isArrayLiteralExpression(node)) return node.elements.flatMap((e) => (ts.isSpreadElement(e) ? [] : literals(e)));
  return [];
}

function calleeName(node: ts.CallExpression | ts.NewExpression): string | null {
  const callee = node.expression;
  if (ts.isIdentifier(callee)) return callee.text;
  if (ts.isPropertyAccessExpression(callee)) return callee.name.text;
  if (callee.kind === ts.SyntaxKind.SuperKeyword) return "super";
  return null;
}

function receiverName(node: ts.CallExpression): string | null {
  const callee = node.expression;
  if (!ts.isPropertyAccessExpression(callee)) return null;
  const target = callee.expression;
  if (ts.isIdentifier(target)) return target.text;
  if (ts.isPropertyAccessExpression(target)) return target.name.text;
  return null;
}

function inErrorClass(node: ts.Node): boolean {
  let p: ts.Node | undefined = node.parent;
  while (p && !ts.isClassDeclaration(p) && !ts.isClassExpression(p)) p = p.parent;
  if (!p) return false;
  const heritage = (p as ts.ClassLikeDeclaration).heritageClauses?.flatMap((h) => h.types.map((t) => t.expression.getText())) ?? [];
  return heritage.some((name) => name.endsWith("Error"));
}

function messageOf(args: readonly ts.Expression[], sf: ts.SourceFile): string | undefined {
  for (const arg of args) {
    if (ts.isStringLiteral(arg) || ts.isNoSubstitutionTemplateLiteral(arg)) {
      if (!CODE_SHAPE.test(arg.text) && arg.text.includes(" ")) return arg.text;
    } else if (ts.isTemplateExpression(arg)) {
      return arg.getText(sf).slice(1, -1).replace(/\$\{[^}]*\}/g, "…");
    }
  }
  return undefined;
}

function objectFields(obj: ts.ObjectLiteralExpression, sf: ts.SourceFile): { message?: string; severity?: string } {
  const out: { message?: string; severity?: string } = {};
  for (const prop of obj.properties) {
    if (!ts.isPropertyAssignment(prop) || !ts.isIdentifier(prop.name)) continue;
    const [value] = literals(prop.initializer);
    if (!value) continue;
    const text = ts.isTemplateExpression(value) ? value.getText(sf).slice(1, -1).replace(/\$\{[^}]*\}/g, "…") : value.text;
    if (prop.name.text === "message") out.message = text;
    if (prop.name.text === "severity") out.severity = text;
  }
  return out;
}

export function scanEmittedCodes(root: string): ScanResult {
  const codes = new Map<string, CodeSite[]>();
  const prefixes = new Map<string, CodeSite[]>();
  const record = (lit: ts.StringLiteral | ts.NoSubstitutionTemplateLiteral | ts.TemplateExpression, site: Omit<CodeSite, "line">, sf: ts.SourceFile) => {
    const line = sf.getLineAndCharacterOfPosition(lit.getStart(sf)).line + 1;
    if (ts.isTemplateExpression(lit)) {
      const prefix = lit.head.text;
      if (/^[a-z][a-z0-9_]*_$/.test(prefix)) prefixes.set(prefix, [...(prefixes.get(prefix) ?? []), { ...site, line }]);
      return;
    }
    if (!CODE_SHAPE.test(lit.text)) return;
    codes.set(lit.text, [...(codes.get(lit.text) ?? []), { ...site, line }]);
  };
  for (const path of sourceFiles(root)) {
    const file = relative(root, path).split("\\").join("/");
    const sf = ts.createSourceFile(path, readFileSync(path, "utf8"), ts.ScriptTarget.Latest, true);
    const visit = (node: ts.Node): void => {
      if (ts.isPropertyAssignment(node) && ts.isIdentifier(node.name) && node.name.text === "rule" && file.startsWith("src/schema/")) {
        // A schema change or problem names its rule: `{ rule: "root-object", path, message }`.
        for (const lit of literals(node.initializer)) if (!ts.isTemplateExpression(lit) && RULE_SHAPE.test(lit.text)) codes.set(lit.text, [...(codes.get(lit.text) ?? []), { file, via: "rule:", line: sf.getLineAndCharacterOfPosition(lit.getStart(sf)).line + 1 }]);
      } else if (ts.isPropertyAssignment(node) && ts.isIdentifier(node.name) && (node.name.text === "code" || node.name.text === "repairs")) {
        const fields = ts.isObjectLiteralExpression(node.parent) ? objectFields(node.parent, sf) : {};
        for (const lit of literals(node.initializer)) record(lit, { file, via: `${node.name.text}:`, ...fields }, sf);
      } else if (ts.isCallExpression(node) || ts.isNewExpression(node)) {
        const name = calleeName(node);
        const args = node.arguments ?? ts.factory.createNodeArray<ts.Expression>();
        const allowed = name !== null && ((Object.hasOwn(HELPERS_IN, name) ? (HELPERS_IN[name] as (file: string) => boolean)(file) : true));
        const message = messageOf(args.slice((name !== null && Object.hasOwn(CODE_ARG, name) ? (CODE_ARG[name] as number) : 0) + 1), sf);
        const codeArg = name !== null && Object.hasOwn(CODE_ARG, name) ? (CODE_ARG[name] as number) : 0;
        if (name !== null && allowed && (HELPERS_FIRST_ARG.has(name) || Object.hasOwn(HELPERS_IN, name)) && args[codeArg]) {
          // callDiag(state, code, severity, message) passes the severity itself; once(code, {severity, message}) in an object.
          const severityArg = args.slice(codeArg + 1).find((arg) => ts.isStringLiteral(arg) && ["info", "warning", "error"].includes(arg.text)) as ts.StringLiteral | undefined;
          const objectArg = args.slice(codeArg + 1).find(ts.isObjectLiteralExpression);
          const fields = { ...(message ? { message } : {}), ...(objectArg ? objectFields(objectArg, sf) : {}), ...(severityArg ? { severity: severityArg.text } : {}) };
          for (const lit of literals(args[codeArg] as ts.Expression)) record(lit, { file, via: name, ...fields }, sf);
        } else if (name !== null && HELPERS_LAST_ARG_CODE.has(name) && args[1]) {
          for (const lit of literals(args[1])) record(lit, { file, via: name, ...(messageOf(args.slice(0, 1), sf) ? { message: messageOf(args.slice(0, 1), sf) } : {}) }, sf);
        } else if (name === "super" && args[0] && inErrorClass(node)) {
          for (const lit of literals(args[0])) record(lit, { file, via: "super", ...(message ? { message } : {}) }, sf);
        } else if ((name === "push" || name === "add") && ts.isCallExpression(node) && CODE_LISTS.has(receiverName(node) ?? "")) {
          for (const arg of args) for (const lit of literals(arg)) record(lit, { file, via: `${receiverName(node)}.${name}` }, sf);
        }
      } else if (ts.isTypeAliasDeclaration(node) && CODE_UNIONS.has(node.name.text)) {
        const walkType = (type: ts.TypeNode): void => {
          if (ts.isUnionTypeNode(type)) type.types.forEach(walkType);
          else if (ts.isLiteralTypeNode(type) && ts.isStringLiteral(type.literal)) record(type.literal, { file, via: node.name.text }, sf);
        };
        walkType(node.type);
      } else if (ts.isVariableDeclaration(node) && ts.isIdentifier(node.name) && (node.name.text === "code" || node.name.text === "codes") && node.initializer) {
        for (const lit of literals(node.initializer)) record(lit, { file, via: `const ${node.name.text}` }, sf);
      }
      ts.forEachChild(node, visit);
    };
    visit(sf);
  }
  return { codes, prefixes };
}

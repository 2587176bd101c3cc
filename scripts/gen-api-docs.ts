import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import ts from "typescript";
import { attachedDoc, documentedNode, loadSurface, resolveExport, type EntryPoint, type Surface } from "./api-surface.js";
import { isEntryPoint, repoRootFrom } from "./readme-region.js";

/**
 * Writes the API reference, docs/api/, from the TSDoc in src/: one page per entry point of
 * package.json `exports` (every export with its kind, its signature as the compiler prints it, its
 * doc comment and its members' docs, in the order the entry file exports them) and a README with
 * the table of entry points. The surface test regenerates it in memory and fails when it is stale.
 *
 *   npm run docs:api                  # rewrite docs/api/
 *   npm run docs:api -- --check       # exit 1 when docs/api/ is out of date
 */

/** The reference's folder, relative to the repository's root. */
export const API_DIR = "docs/api";

/** The command that rewrites the reference (named in the stale-page message). */
export const API_COMMAND = "npm run docs:api";

/** Signatures longer than this are wrapped (one parameter, or one union member, a line). */
const WIDTH = 100;

const FENCE = "```ts nocompile: signatures, not code";

/** The page of an entry point: `toolwire` → index.md, `toolwire/testing/fuzz` → testing-fuzz.md. */
export function pageOf(entry: string): string {
  return entry === "toolwire" ? "index.md" : `${entry.slice("toolwire/".length).replace(/\//g, "-")}.md`;
}

const printer = ts.createPrinter({ removeComments: true, newLine: ts.NewLineKind.LineFeed });

/** A node as the printer writes it, indented by two spaces a level instead of four. */
function print(node: ts.Node, source: ts.SourceFile): string {
  return printer
    .printNode(ts.EmitHint.Unspecified, node, source)
    .replace(/^( {4})+/gm, (indent) => " ".repeat(indent.length / 2))
    .replace(/; \}/g, " }");
}

/** A printed type on one line when it fits in `width` there (the printer spreads every object type over lines). */
function compact(text: string, width = 64): string {
  if (!text.includes("\n")) return text;
  const line = text.replace(/\s*\n\s*/g, " ").replace(/;\s*\}/g, " }").replace(/,\s*\)/g, ")");
  return line.length <= width ? line : text;
}

const NODE_FLAGS = ts.NodeBuilderFlags.NoTruncation | ts.NodeBuilderFlags.UseAliasDefinedOutsideCurrentScope | ts.NodeBuilderFlags.IgnoreErrors;

/** A type as the checker writes it at `where` (for declarations that do not write theirs). */
function typeText(checker: ts.TypeChecker, type: ts.Type, where: ts.Node): string {
  const node = checker.typeToTypeNode(type, where, NODE_FLAGS);
  return node ? print(node, where.getSourceFile()) : checker.typeToString(type, where, ts.TypeFormatFlags.NoTruncation);
}

/**
 * A signature (`name<T>(a: A, b?: B): R`), its parameters one a line when it is too wide. Types
 * are printed as the source writes them; the checker writes only those the source leaves out
 * (an inferred result, an untyped parameter with a default).
 */
function signatureText(checker: ts.TypeChecker, signature: ts.Signature, name: string, where: ts.SignatureDeclaration, prefix = ""): string {
  const source = where.getSourceFile();
  const typeParameters = where.typeParameters ? `<${where.typeParameters.map((p) => print(p, source)).join(", ")}>` : "";
  const parameters = where.parameters.map((parameter) => {
    const optional = parameter.questionToken || parameter.initializer ? "?" : "";
    const type = parameter.type ? print(parameter.type, source) : typeText(checker, checker.getTypeAtLocation(parameter), parameter);
    return `${parameter.dotDotDotToken ? "..." : ""}${print(parameter.name, source)}${optional}: ${compact(type)}`;
  });
  const returns = ts.isConstructorDeclaration(where) ? "" : `: ${where.type ? print(where.type, source) : typeText(checker, signature.getReturnType(), where)}`;
  const returnsText = compact(returns);
  const head = `${prefix}${name}${typeParameters}`;
  const flat = `${head}(${parameters.join(", ")})${returnsText}`;
  if ((flat.length <= WIDTH && !flat.includes("\n")) || parameters.length === 0) return flat;
  return `${head}(\n${parameters.map((p) => `  ${p.replace(/\n/g, "\n  ")},`).join("\n")}\n)${returnsText}`;
}

/** The most literal members a `typeof`-derived union is written out with. */
const MAX_SPELLED_UNION = 30;

/**
 * `type X = A | B | …`, one member a line when it is too wide. A type computed from a value
 * (`(typeof PROVIDERS)[number]`) is written as the union of literals it stands for, when short.
 */
function aliasText(checker: ts.TypeChecker, declaration: ts.TypeAliasDeclaration): string {
  const source = declaration.getSourceFile();
  const typeParameters = declaration.typeParameters ? `<${declaration.typeParameters.map((p) => print(p, source)).join(", ")}>` : "";
  const head = `type ${declaration.name.text}${typeParameters} =`;
  let members: string[] | null = ts.isUnionTypeNode(declaration.type) ? declaration.type.types.map((member) => print(member, source)) : null;
  let body = print(declaration.type, source);
  let computed = false;
  const findQuery = (node: ts.Node): ts.TypeQueryNode | undefined => (ts.isTypeQueryNode(node) ? node : ts.forEachChild(node, findQuery));
  const query = declaration.typeParameters ? undefined : findQuery(declaration.type);
  if (query) {
    const type = checker.getTypeAtLocation(declaration.name);
    const literals = type.isUnion() ? type.types : [type];
    if (literals.length <= MAX_SPELLED_UNION && literals.every((member) => member.isLiteral())) {
      // The checker's order of union members is the order it happened to meet them: order them as
      // the value they come from writes them, so the page does not depend on what was checked first.
      let value = checker.getSymbolAtLocation(ts.isQualifiedName(query.exprName) ? query.exprName.right : query.exprName);
      if (value && value.flags & ts.SymbolFlags.Alias) value = checker.getAliasedSymbol(value);
      const text = value?.valueDeclaration?.getText() ?? "";
      const written = literals.map((member) => checker.typeToString(member));
      const at = (literal: string) => (text.includes(literal) ? text.indexOf(literal) : Number.MAX_SAFE_INTEGER);
      members = written.sort((a, b) => at(a) - at(b) || (a < b ? -1 : a > b ? 1 : 0));
      computed = true;
      body = members.join(" | ");
    }
  }
  const note = computed ? `  // ${print(declaration.type, source)}` : "";
  if (`${head} ${body}`.length <= WIDTH && !body.includes("\n")) return `${head} ${body}${note}`;
  if (members) return `${head}${note}\n${members.map((member) => `  | ${member.replace(/\n/g, "\n    ")}`).join("\n")}`;
  return `${head} ${body}`;
}

/** The interfaces an interface extends that no entry point exports: their members are shown with it. */
function hiddenBases(checker: ts.TypeChecker, declaration: ts.InterfaceDeclaration, exported: ReadonlySet<ts.Symbol>): ts.InterfaceDeclaration[] {
  const out: ts.InterfaceDeclaration[] = [];
  for (const clause of declaration.heritageClauses ?? []) {
    for (const base of clause.types) {
      let symbol = checker.getSymbolAtLocation(base.expression);
      if (symbol && symbol.flags & ts.SymbolFlags.Alias) symbol = checker.getAliasedSymbol(symbol);
      if (!symbol || exported.has(symbol)) continue;
      for (const inherited of symbol.declarations ?? []) {
        if (ts.isInterfaceDeclaration(inherited)) out.push(...hiddenBases(checker, inherited, exported), inherited);
      }
    }
  }
  return out;
}

/** `interface X<T> extends Y { … }` with its members' types (and those of bases no entry point exports), without comments. */
function interfaceText(checker: ts.TypeChecker, declaration: ts.InterfaceDeclaration, exported: ReadonlySet<ts.Symbol>): string {
  const source = declaration.getSourceFile();
  const typeParameters = declaration.typeParameters ? `<${declaration.typeParameters.map((p) => print(p, source)).join(", ")}>` : "";
  const heritage = (declaration.heritageClauses ?? []).map((clause) => print(clause, source).trim()).join(" ");
  const lines = declaration.members.map((member) => print(member, source));
  for (const base of hiddenBases(checker, declaration, exported)) {
    lines.push(`// from ${base.name.text}:`, ...base.members.map((member) => print(member, base.getSourceFile())));
  }
  const head = `interface ${declaration.name.text}${typeParameters}${heritage ? ` ${heritage}` : ""}`;
  return lines.length === 0 ? `${head} {}` : `${head} {\n${lines.map((line) => `  ${line.replace(/\n/g, "\n  ")}`).join("\n")}\n}`;
}

function isPublicMember(member: ts.ClassElement): boolean {
  const flags = ts.getCombinedModifierFlags(member as ts.Declaration);
  if (flags & (ts.ModifierFlags.Private | ts.ModifierFlags.Protected)) return false;
  return !(member.name && ts.isPrivateIdentifier(member.name));
}

/** `class X extends Y { constructor(…); member: T; method(…): R; }`: the public side only. */
function classText(checker: ts.TypeChecker, declaration: ts.ClassDeclaration): string {
  const source = declaration.getSourceFile();
  const heritage = (declaration.heritageClauses ?? []).map((clause) => print(clause, source).trim()).join(" ");
  const lines: string[] = [];
  for (const member of declaration.members) {
    if (!isPublicMember(member)) continue;
    const isStatic = ts.getCombinedModifierFlags(member as ts.Declaration) & ts.ModifierFlags.Static ? "static " : "";
    const isReadonly = ts.getCombinedModifierFlags(member as ts.Declaration) & ts.ModifierFlags.Readonly ? "readonly " : "";
    if (ts.isConstructorDeclaration(member)) {
      for (const parameter of parameterProperties(member)) {
        const readonly = ts.getCombinedModifierFlags(parameter) & ts.ModifierFlags.Readonly ? "readonly " : "";
        const type = parameter.type ? print(parameter.type, source) : typeText(checker, checker.getTypeAtLocation(parameter), parameter);
        lines.push(`${readonly}${parameter.name.getText()}: ${type};`);
      }
      const signature = checker.getSignatureFromDeclaration(member);
      if (signature) lines.push(`${signatureText(checker, signature, "constructor", member)};`);
    } else if (ts.isMethodDeclaration(member) && member.body) {
      const signature = checker.getSignatureFromDeclaration(member);
      if (signature) lines.push(`${isStatic}${signatureText(checker, signature, member.name.getText(source), member)};`);
    } else if (ts.isPropertyDeclaration(member)) {
      const type = member.type ? print(member.type, source) : typeText(checker, checker.getTypeAtLocation(member), member);
      lines.push(`${isStatic}${isReadonly}${member.name.getText(source)}${member.questionToken ? "?" : ""}: ${type};`);
    } else if (ts.isGetAccessorDeclaration(member)) {
      const type = member.type ? print(member.type, source) : typeText(checker, checker.getTypeAtLocation(member), member);
      lines.push(`${isStatic}get ${member.name.getText(source)}(): ${type};`);
    }
  }
  const head = `class ${declaration.name?.text ?? "default"}${heritage ? ` ${heritage}` : ""}`;
  return lines.length === 0 ? `${head} {}` : `${head} {\n${lines.map((line) => `  ${line.replace(/\n/g, "\n  ")}`).join("\n")}\n}`;
}

/** A doc comment's text with `{@link X}` written as code. */
function plain(comment: string | ts.NodeArray<ts.JSDocComment> | undefined): string {
  return (ts.getTextOfJSDocComment(comment) ?? "")
    .replace(/\{@link(?:code|plain)?\s+([^}|\s]+)(?:\s*\|\s*([^}]*)|\s+([^}]*))?\}/g, (_, target: string, label?: string, text?: string) => {
      const shown = (label ?? text ?? "").trim();
      return shown ? `${shown} (\`${target}\`)` : `\`${target}\``;
    })
    .trim();
}

interface Doc {
  text: string;
  params: Array<{ name: string; text: string }>;
  returns: string | null;
  throws: string[];
  examples: string[];
  deprecated: string | null;
  see: string[];
}

/** The doc comment attached to a node, with its tags. */
function docOf(node: ts.Node): Doc | null {
  const doc = attachedDoc(node);
  if (!doc) return null;
  const result: Doc = { text: plain(doc.comment), params: [], returns: null, throws: [], examples: [], deprecated: null, see: [] };
  for (const tag of doc.tags ?? []) {
    const text = plain(tag.comment);
    if (ts.isJSDocParameterTag(tag)) result.params.push({ name: tag.name.getText(), text: text.replace(/^-\s*/, "") });
    else if (ts.isJSDocReturnTag(tag)) result.returns = text;
    else if (ts.isJSDocDeprecatedTag(tag)) result.deprecated = text;
    else if (tag.tagName.text === "throws") result.throws.push(text);
    else if (tag.tagName.text === "example") result.examples.push(text);
    else if (tag.tagName.text === "see") result.see.push(text);
  }
  return result;
}

/** A symbol's doc comment: the first of its declarations that has one, with a function's parameters' own comments as `@param`s. */
function symbolDoc(symbol: ts.Symbol): Doc | null {
  for (const declaration of symbol.declarations ?? []) {
    const doc = docOf(documentedNode(declaration));
    if (!doc) continue;
    if (ts.isFunctionDeclaration(declaration)) {
      for (const parameter of declaration.parameters) {
        const name = parameter.name.getText();
        const own = docOf(parameter);
        if (own?.text && !doc.params.some((param) => param.name === name)) doc.params.push({ name, text: own.text });
      }
    }
    return doc;
  }
  return null;
}

type Kind = "function" | "class" | "interface" | "type" | "const" | "enum" | "namespace";

function kindOf(symbol: ts.Symbol): Kind {
  if (symbol.flags & ts.SymbolFlags.Class) return "class";
  if (symbol.flags & ts.SymbolFlags.Function) return "function";
  if (symbol.flags & ts.SymbolFlags.Interface) return "interface";
  if (symbol.flags & ts.SymbolFlags.TypeAlias) return "type";
  if (symbol.flags & ts.SymbolFlags.Enum) return "enum";
  if (symbol.flags & ts.SymbolFlags.Variable) return "const";
  return "namespace";
}

/** ` = value` for a constant whose value is plain data (no calls, no functions) and short; else "". */
function valueText(declaration: ts.VariableDeclaration): string {
  const value = declaration.initializer;
  if (!value) return "";
  let plainData = true;
  const visit = (node: ts.Node): void => {
    if (ts.isCallExpression(node) || ts.isNewExpression(node) || ts.isFunctionLike(node)) plainData = false;
    else ts.forEachChild(node, visit);
  };
  visit(value);
  const text = print(ts.isAsExpression(value) ? value.expression : value, declaration.getSourceFile());
  return plainData && text.split("\n").length <= 16 && text.length <= 600 ? ` = ${text}` : "";
}

/** The types a declaration's signature names (one level) that no entry point exports: they are written out under it. */
function hiddenTypes(checker: ts.TypeChecker, root: string, declaration: ts.Declaration, exported: ReadonlySet<ts.Symbol>): Array<ts.TypeAliasDeclaration | ts.InterfaceDeclaration> {
  const found: Array<ts.TypeAliasDeclaration | ts.InterfaceDeclaration> = [];
  const seen = new Set<ts.Symbol>();
  const visit = (node: ts.Node): void => {
    if (ts.isTypeReferenceNode(node) || ts.isExpressionWithTypeArguments(node)) {
      const at = ts.isTypeReferenceNode(node) ? node.typeName : node.expression;
      let symbol = checker.getSymbolAtLocation(at);
      if (symbol && symbol.flags & ts.SymbolFlags.Alias) symbol = checker.getAliasedSymbol(symbol);
      if (symbol && !seen.has(symbol) && !exported.has(symbol) && symbol.flags & (ts.SymbolFlags.TypeAlias | ts.SymbolFlags.Interface)) {
        seen.add(symbol);
        const own = symbol.declarations?.find((d): d is ts.TypeAliasDeclaration | ts.InterfaceDeclaration => (ts.isTypeAliasDeclaration(d) || ts.isInterfaceDeclaration(d)) && d.getSourceFile().fileName.startsWith(join(root, "src")));
        // An interface extended by the declaration is already written out with it (hiddenBases).
        const extended = ts.isExpressionWithTypeArguments(node) && ts.isInterfaceDeclaration(declaration);
        if (own && !extended) found.push(own);
      }
    }
    if (ts.isFunctionLike(node) && "body" in node && node.body) {
      // A function's signature only, not its body.
      for (const part of [...(node.typeParameters ?? []), ...node.parameters, ...(node.type ? [node.type] : [])]) visit(part);
      return;
    }
    if (ts.isClassElement(node) && !isPublicMember(node)) return;
    if (ts.isVariableDeclaration(node)) {
      if (node.type) visit(node.type);
      return;
    }
    ts.forEachChild(node, visit);
  };
  visit(declaration);
  if (ts.isInterfaceDeclaration(declaration)) for (const base of hiddenBases(checker, declaration, exported)) ts.forEachChild(base, visit);
  return found;
}

/** The hidden types under a declaration: written out, or, when an earlier export of the page did, pointed at. */
function hiddenTypesText(checker: ts.TypeChecker, hidden: ReadonlyArray<ts.TypeAliasDeclaration | ts.InterfaceDeclaration>, exported: ReadonlySet<ts.Symbol>, writtenUnder: ReadonlyMap<ts.Declaration, string>): string {
  if (hidden.length === 0) return "";
  const texts = hidden.map((declaration) => {
    const under = writtenUnder.get(declaration);
    if (under !== undefined) return `// ${declaration.name.text}: written out under ${under}, above`;
    return ts.isTypeAliasDeclaration(declaration) ? aliasText(checker, declaration) : interfaceText(checker, declaration, exported);
  });
  return `\n\n// Not exported, named above:\n${texts.join("\n")}`;
}

/** The hidden types of every declaration of a symbol, each once. */
function hiddenTypesOf(checker: ts.TypeChecker, root: string, symbol: ts.Symbol, exported: ReadonlySet<ts.Symbol>): Array<ts.TypeAliasDeclaration | ts.InterfaceDeclaration> {
  return [...new Set((symbol.declarations ?? []).flatMap((declaration) => hiddenTypes(checker, root, declaration, exported)))];
}

/** The declaration text of an export, as it is shown in its code block. */
function declarationText(checker: ts.TypeChecker, symbol: ts.Symbol, name: string, exported: ReadonlySet<ts.Symbol>): string {
  const declarations = symbol.declarations ?? [];
  const blocks: string[] = [];
  for (const declaration of declarations) {
    if (ts.isFunctionDeclaration(declaration)) {
      // Overloads: each signature once; the implementation's only when it is the only one.
      if (declaration.body && declarations.some((other) => other !== declaration && ts.isFunctionDeclaration(other))) continue;
      const signature = checker.getSignatureFromDeclaration(declaration);
      if (signature) blocks.push(signatureText(checker, signature, name, declaration, "function "));
    } else if (ts.isInterfaceDeclaration(declaration)) {
      blocks.push(interfaceText(checker, declaration, exported));
    } else if (ts.isTypeAliasDeclaration(declaration)) {
      blocks.push(aliasText(checker, declaration));
    } else if (ts.isClassDeclaration(declaration)) {
      blocks.push(classText(checker, declaration));
    } else if (ts.isVariableDeclaration(declaration)) {
      const source = declaration.getSourceFile();
      const type = declaration.type ? print(declaration.type, source) : typeText(checker, checker.getTypeAtLocation(declaration), declaration);
      // An `as const` value is its type: writing it twice tells nothing.
      const asConst = !declaration.type && declaration.initializer && ts.isAsExpression(declaration.initializer) && declaration.initializer.type.getText() === "const";
      const value = asConst ? "" : valueText(declaration);
      const tuple = /^readonly \[(.*)\]$/.exec(type);
      const shownType = tuple && `const ${name}: ${type}`.length > WIDTH ? `readonly [\n${(tuple[1] as string).split(", ").map((element) => `  ${element},`).join("\n")}\n]` : type;
      blocks.push(`const ${name}: ${shownType}${value === ` = ${type}` ? "" : value}`);
    } else if (ts.isEnumDeclaration(declaration)) {
      blocks.push(print(declaration, declaration.getSourceFile()).replace(/^export (declare )?/, ""));
    }
  }
  return blocks.join("\n\n");
}

interface MemberDoc {
  name: string;
  text: string;
  deprecated: string | null;
}

/**
 * The documented members of an interface, class or object type: their own doc comments, nested
 * object types' members as `outer.inner`, and the members of each object in a union.
 */
function memberDocs(checker: ts.TypeChecker, declaration: ts.Declaration, exported: ReadonlySet<ts.Symbol>, owner = ""): MemberDoc[] {
  const out: MemberDoc[] = [];
  const seen = new Set<string>();
  const add = (name: string, doc: Doc | null) => {
    if (!doc || (!doc.text && doc.deprecated === null)) return;
    const key = `${name}\u0000${doc.text}`;
    if (seen.has(key)) return;
    seen.add(key);
    out.push({ name, text: doc.text, deprecated: doc.deprecated });
  };
  const visitType = (type: ts.TypeNode | undefined, prefix: string, depth: number) => {
    if (!type || depth > 3) return;
    if (ts.isLiteralTypeNode(type)) add(`${owner ? `${owner} ` : ""}${print(type, type.getSourceFile())}`, leadingDoc(type, type.parent));
    else if (ts.isTypeLiteralNode(type)) visitMembers(type.members, prefix, depth);
    else if (ts.isUnionTypeNode(type) || ts.isIntersectionTypeNode(type)) for (const member of type.types) visitType(member, prefix, depth);
    else if (ts.isParenthesizedTypeNode(type)) visitType(type.type, prefix, depth);
    else if (ts.isArrayTypeNode(type)) visitType(type.elementType, prefix ? `${prefix.slice(0, -1)}[].` : prefix, depth);
  };
  const visitMembers = (members: ts.NodeArray<ts.TypeElement | ts.ClassElement>, prefix: string, depth: number) => {
    for (const member of members) {
      if (ts.isClassElement(member) && !isPublicMember(member)) continue;
      if (!member.name && !ts.isConstructorDeclaration(member)) continue;
      if (ts.isConstructorDeclaration(member)) {
        for (const parameter of parameterProperties(member)) add(`${prefix}${parameter.name.getText()}`, docOf(parameter));
        continue;
      }
      if (!member.name) continue;
      const name = `${prefix}${member.name.getText(member.getSourceFile())}`;
      add(ts.isMethodSignature(member) || ts.isMethodDeclaration(member) ? `${name}()` : name, docOf(member));
      if ((ts.isPropertySignature(member) || ts.isPropertyDeclaration(member)) && member.type) visitType(member.type, `${name}.`, depth + 1);
    }
  };
  const start = owner ? `${owner}.` : "";
  if (ts.isInterfaceDeclaration(declaration)) {
    visitMembers(declaration.members, start, 0);
    for (const base of hiddenBases(checker, declaration, exported)) visitMembers(base.members, start, 0);
  } else if (ts.isClassDeclaration(declaration)) visitMembers(declaration.members, start, 0);
  else if (ts.isTypeAliasDeclaration(declaration)) visitType(declaration.type, start, 0);
  else if (ts.isVariableDeclaration(declaration) && declaration.type) visitType(declaration.type, start, 0);
  return out;
}

/**
 * The `/** … *\/` right before a member of a union of literals, which TypeScript does not attach
 * to it: the last doc comment between the previous member (or the union's start) and this one.
 */
function leadingDoc(node: ts.Node, union: ts.Node): Doc | null {
  const text = node.getSourceFile().text;
  const siblings = ts.isUnionTypeNode(union) ? union.types : null;
  const index = siblings ? siblings.indexOf(node as ts.TypeNode) : -1;
  const from = index > 0 && siblings ? (siblings[index - 1] as ts.Node).end : union.pos;
  const between = text.slice(from, node.getStart());
  const docs = [...between.matchAll(/\/\*\*([\s\S]*?)\*\//g)];
  const last = docs[docs.length - 1];
  if (!last) return null;
  const body = (last[1] as string)
    .split("\n")
    .map((line) => line.replace(/^\s*\* ?/, ""))
    .join("\n")
    .trim();
  return body ? { text: body, params: [], returns: null, throws: [], examples: [], deprecated: null, see: [] } : null;
}

/** A constructor's public parameter properties (`constructor(readonly line: number)`). */
function parameterProperties(constructor: ts.ConstructorDeclaration): ts.ParameterDeclaration[] {
  return constructor.parameters.filter((parameter) => {
    const flags = ts.getCombinedModifierFlags(parameter);
    return ts.isIdentifier(parameter.name) && flags & (ts.ModifierFlags.Readonly | ts.ModifierFlags.Public) && !(flags & (ts.ModifierFlags.Private | ts.ModifierFlags.Protected));
  });
}

/** GitHub's anchor of a heading, numbered like GitHub's when it repeats on the page. */
function anchorer(): (heading: string) => string {
  const used = new Map<string, number>();
  return (heading) => {
    const base = heading
      .trim()
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, "")
      .replace(/\s/g, "-");
    const count = used.get(base) ?? 0;
    used.set(base, count + 1);
    return count === 0 ? base : `${base}-${count}`;
  };
}

/** The first sentence of a doc comment, on one line (for the tables); short sentences take the next one along. */
export function firstSentence(text: string, atLeast = 0): string {
  let rest = (text.split(/\n\s*\n/)[0] ?? "").replace(/\s*\n\s*/g, " ").trim();
  let out = "";
  while (rest !== "") {
    const sentence = /^(.*?[.!?])(?:\s+(?=[A-Z])|$)/.exec(rest);
    const next = sentence ? (sentence[1] as string) : rest;
    out = out === "" ? next : `${out} ${next}`;
    rest = rest.slice(sentence ? sentence[0].length : rest.length).trim();
    if (out.length >= atLeast) break;
  }
  return out.replace(/:$/, ".");
}

const cell = (text: string) => text.replace(/\|/g, "\\|");

/** The doc comment that opens a file: a leading `/** … *\/` or `//` lines, or a `/** … *\/` followed by a blank line. */
function moduleDoc(source: ts.SourceFile): string {
  const text = source.text;
  const leading = ts.getLeadingCommentRanges(text, 0) ?? [];
  const first = leading[0];
  if (first && first.kind === ts.SyntaxKind.SingleLineCommentTrivia) {
    const lines: string[] = [];
    for (const range of leading) {
      if (range.kind !== ts.SyntaxKind.SingleLineCommentTrivia) break;
      lines.push(text.slice(range.pos + 2, range.end).trim());
    }
    return lines.join("\n");
  }
  const block = /\/\*\*([\s\S]*?)\*\//g;
  for (let match = block.exec(text); match; match = block.exec(text)) {
    const atStart = text.slice(0, match.index).trim() === "";
    if (atStart || /^\s*\n\s*\n/.test(text.slice(match.index + match[0].length))) {
      return (match[1] as string)
        .split("\n")
        .map((line) => line.replace(/^\s*\* ?/, ""))
        .join("\n")
        .replace(/\*\\\//g, "*/")
        .trim();
    }
  }
  return "";
}

/** The `//` comment right above an export statement of the entry file: the title of the group it opens. */
function groupTitle(source: ts.SourceFile, statement: ts.Statement, skip: string): string | null {
  const ranges = ts.getLeadingCommentRanges(source.text, statement.pos) ?? [];
  const lines = ranges.filter((range) => range.kind === ts.SyntaxKind.SingleLineCommentTrivia).map((range) => source.text.slice(range.pos + 2, range.end).trim());
  const title = lines.join(" ").trim().replace(/\.$/, "");
  return title === "" || title === skip.replace(/\n/g, " ") ? null : title;
}

interface Group {
  title: string;
  exports: ts.Symbol[];
}

/** The entry's exports grouped under the `//` comments of its export statements, in export order. */
function groups(entry: EntryPoint, skip: string): Group[] {
  const titleOf = new Map<string, string>();
  for (const statement of entry.source.statements) {
    if (!ts.isExportDeclaration(statement) || !statement.exportClause || !ts.isNamedExports(statement.exportClause)) continue;
    const title = groupTitle(entry.source, statement, skip);
    const first = statement.exportClause.elements[0];
    if (title && first) titleOf.set(first.name.text, title);
  }
  const out: Group[] = [];
  for (const symbol of entry.exports) {
    const title = titleOf.get(symbol.name);
    const current = out[out.length - 1];
    if (title || !current) out.push({ title: title ?? "Exports", exports: [symbol] });
    else current.exports.push(symbol);
  }
  return out;
}

/** A doc comment as Markdown: the text, then its parameters, result, throws, examples and see-alsos. */
function docMarkdown(doc: Doc): string[] {
  const lines: string[] = [];
  if (doc.deprecated !== null) lines.push(`> **Deprecated.** ${doc.deprecated}`.trimEnd(), "");
  if (doc.text) lines.push(doc.text, "");
  if (doc.params.length > 0) lines.push("Parameters:", "", ...doc.params.map((param) => `- \`${param.name}\`${param.text ? `: ${param.text.replace(/\n\s*/g, "\n  ")}` : ""}`), "");
  if (doc.returns) lines.push(`Returns: ${doc.returns}`, "");
  for (const text of doc.throws) lines.push(`Throws: ${text}`, "");
  for (const example of doc.examples) lines.push("Example:", "", example, "");
  for (const text of doc.see) lines.push(`See: ${text}`, "");
  return lines;
}

/** One entry point's page. */
export function renderEntryPage(surface: Surface, entry: EntryPoint, exported: ReadonlySet<ts.Symbol> = exportedSymbols(surface)): string {
  const { checker, root } = surface;
  const about = moduleDoc(entry.source);
  const anchor = anchorer();
  const lines = [`# \`${entry.name}\``, "", `<!-- Generated by scripts/gen-api-docs.ts from the TSDoc in src/: do not edit by hand; run \`${API_COMMAND}\`. -->`, ""];
  if (about) lines.push(about, "");
  lines.push(`Source: \`${relative(root, entry.file)}\`. ${entry.exports.length} exports, in the order the entry point exports them. [All entry points](README.md).`, "");
  const sections = groups(entry, about);
  /** Each type no entry point exports is written out once a page, under the first export that names it. */
  const writtenUnder = new Map<ts.Declaration, string>();
  const body: string[] = [];
  const contents: string[] = ["| export | kind | summary |", "|---|---|---|"];
  for (const section of sections) {
    if (sections.length > 1) {
      anchor(section.title);
      body.push(`## ${section.title}`, "");
      contents.push(`| **${cell(section.title)}** | | |`);
    }
    for (const alias of section.exports) {
      const name = alias.name;
      const symbol = resolveExport(checker, alias);
      const kind = kindOf(symbol);
      const doc = symbolDoc(symbol);
      const heading = `\`${name}\``;
      contents.push(`| [${heading}](#${anchor(heading)}) | ${kind} | ${cell(doc ? firstSentence(doc.text) : "")} |`);
      body.push(`${sections.length > 1 ? "###" : "##"} ${heading}`, "");
      const declaration = symbol.declarations?.[0];
      const where = declaration ? relative(root, declaration.getSourceFile().fileName) : "";
      body.push(`*${kind}*${where ? `, defined in \`${where}\`` : ""}`, "");
      const hidden = hiddenTypesOf(checker, root, symbol, exported);
      body.push(FENCE, declarationText(checker, symbol, name, exported) + hiddenTypesText(checker, hidden, exported, writtenUnder), "```", "");
      if (doc) body.push(...docMarkdown(doc));
      else body.push("*(no doc comment)*", "");
      const members = [
        ...(symbol.declarations ?? []).flatMap((declaration) => memberDocs(checker, declaration, exported)),
        ...hidden.filter((type) => !writtenUnder.has(type)).flatMap((type) => memberDocs(checker, type, exported, type.name.text)),
      ];
      for (const type of hidden) if (!writtenUnder.has(type)) writtenUnder.set(type, name);
      if (members.length > 0) {
        body.push("Members:", "");
        for (const member of members) {
          const text = `${member.deprecated !== null ? `**Deprecated.** ${member.deprecated} ` : ""}${member.text}`.trim().replace(/\n/g, "\n  ");
          body.push(`- \`${member.name}\`: ${text}`);
        }
        body.push("");
      }
    }
  }
  lines.push("## Contents", "", ...contents, "", ...body);
  return `${lines.join("\n").replace(/\n{3,}/g, "\n\n").trimEnd()}\n`;
}

/** docs/api/README.md: the entry points, one line each. */
export function renderApiIndex(surface: Surface): string {
  const total = surface.entries.reduce((sum, entry) => sum + entry.exports.length, 0);
  const lines = [
    "# API reference",
    "",
    `<!-- Generated by scripts/gen-api-docs.ts from the TSDoc in src/: do not edit by hand; run \`${API_COMMAND}\`. -->`,
    "",
    `Every public export of toolwire (${total} over ${surface.entries.length} entry points), with its signature as the`,
    "TypeScript compiler prints it and its doc comment. Generated from the TSDoc in `src/`; a test",
    "fails when an export has no doc comment or when these pages are out of date. The guides in",
    "[docs/](../) explain how the pieces fit together; start with the [README](../../README.md).",
    "",
    "| entry point | exports | what it is |",
    "|---|---|---|",
  ];
  for (const entry of surface.entries) {
    lines.push(`| [\`${entry.name}\`](${pageOf(entry.name)}) | ${entry.exports.length} | ${cell(capitalized(firstSentence(moduleDoc(entry.source).replace(/^`[^`]+`:\s*/, ""), 60)))} |`);
  }
  return `${lines.join("\n")}\n`;
}

const capitalized = (text: string) => text.charAt(0).toUpperCase() + text.slice(1);

/** Every symbol some entry point exports (re-exports resolved). */
function exportedSymbols(surface: Surface): Set<ts.Symbol> {
  return new Set(surface.entries.flatMap((entry) => entry.exports.map((symbol) => resolveExport(surface.checker, symbol))));
}

/** Every page of docs/api/, by file name. */
export function renderApiDocs(surface: Surface): Map<string, string> {
  const pages = new Map<string, string>([["README.md", renderApiIndex(surface)]]);
  const exported = exportedSymbols(surface);
  for (const entry of surface.entries) pages.set(pageOf(entry.name), renderEntryPage(surface, entry, exported));
  return pages;
}

/** The files of docs/api/ that differ from `pages` (missing, changed or not generated). */
export function staleApiPages(root: string, pages: ReadonlyMap<string, string>): string[] {
  const dir = join(root, API_DIR);
  const present = existsSync(dir) ? readdirSync(dir) : [];
  const stale = [...pages].filter(([name, text]) => !present.includes(name) || readFileSync(join(dir, name), "utf8") !== text).map(([name]) => name);
  return [...stale, ...present.filter((name) => !pages.has(name))].sort();
}

/** Rewrites docs/api/ (removing pages no entry point has); returns the files it changed. */
export function writeApiDocs(root: string, pages: ReadonlyMap<string, string>): string[] {
  const dir = join(root, API_DIR);
  const stale = staleApiPages(root, pages);
  mkdirSync(dir, { recursive: true });
  for (const name of stale) {
    const text = pages.get(name);
    if (text === undefined) rmSync(join(dir, name));
    else writeFileSync(join(dir, name), text);
  }
  return stale;
}

if (isEntryPoint(import.meta.url)) {
  const root = repoRootFrom(import.meta.url);
  const started = performance.now();
  const pages = renderApiDocs(loadSurface(root));
  const check = process.argv.includes("--check");
  const changed = check ? staleApiPages(root, pages) : writeApiDocs(root, pages);
  const took = `${Math.round(performance.now() - started)} ms`;
  if (check && changed.length > 0) {
    process.stderr.write(`${API_DIR}: out of date (${changed.join(", ")}); run ${API_COMMAND}\n`);
    process.exitCode = 1;
  } else {
    process.stdout.write(`${API_DIR}: ${changed.length === 0 ? "up to date" : `${check ? "stale" : "wrote"} ${changed.join(", ")}`} (${pages.size} pages, ${took})\n`);
  }
}

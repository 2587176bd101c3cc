import { readFileSync } from "node:fs";
import { join } from "node:path";
import ts from "typescript";

/**
 * The public surface as the TypeScript compiler sees it: the entry points of package.json
 * `exports`, mapped to their sources in src/, read by one program. Shared by the API reference
 * generator (scripts/gen-api-docs.ts) and the surface test (test/package/surface.test.ts), so that
 * the names the test checks are the names the reference documents.
 */

/** One entry point: its import specifier, its source file and its exports in the order they are exported. */
export interface EntryPoint {
  /** The import specifier: `toolwire`, `toolwire/schema`, … */
  name: string;
  /** The source file, absolute. */
  file: string;
  source: ts.SourceFile;
  /** The exported symbols, as exported (aliases unresolved), in the entry file's order. */
  exports: ts.Symbol[];
}

/** The program of every entry point, its checker and the entry points in package.json order. */
export interface Surface {
  root: string;
  program: ts.Program;
  checker: ts.TypeChecker;
  entries: EntryPoint[];
}

interface Manifest {
  exports: Record<string, string | { import?: { default?: string } }>;
}

/** Entry point name → source file (absolute), in package.json order; entries outside dist/esm (the bundles built from src/) are left out. */
export function entryFiles(root: string): Map<string, string> {
  const manifest = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as Manifest;
  const entries = new Map<string, string>();
  for (const [subpath, target] of Object.entries(manifest.exports)) {
    const built = typeof target === "string" ? target : target.import?.default;
    if (built === undefined || !built.startsWith("./dist/esm/")) continue;
    entries.set(subpath === "." ? "toolwire" : `toolwire/${subpath.slice(2)}`, join(root, "src", built.slice("./dist/esm/".length).replace(/\.js$/, ".ts")));
  }
  return entries;
}

/** Builds the one program over every entry point (most of the cost: a few seconds). */
export function loadSurface(root: string): Surface {
  const files = entryFiles(root);
  const options: ts.CompilerOptions = {
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2022,
    lib: ["lib.es2023.d.ts", "lib.dom.d.ts", "lib.dom.iterable.d.ts"],
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    types: ["node"],
  };
  const program = ts.createProgram([...files.values()], options);
  const checker = program.getTypeChecker();
  const entries: EntryPoint[] = [];
  for (const [name, file] of files) {
    const source = program.getSourceFile(file);
    const module = source && checker.getSymbolAtLocation(source);
    if (!source || !module) throw new Error(`${name}: ${file} not found`);
    entries.push({ name, file, source, exports: inExportOrder(source, checker.getExportsOfModule(module)) });
  }
  return { root, program, checker, entries };
}

/** The symbols sorted by where the entry file exports them (statement by statement, name by name). */
function inExportOrder(source: ts.SourceFile, symbols: readonly ts.Symbol[]): ts.Symbol[] {
  const position = new Map<string, number>();
  const place = (name: string, at: number) => {
    if (!position.has(name)) position.set(name, at);
  };
  for (const statement of source.statements) {
    if (ts.isExportDeclaration(statement) && statement.exportClause && ts.isNamedExports(statement.exportClause)) {
      for (const element of statement.exportClause.elements) place(element.name.text, element.getStart());
    } else if (ts.isVariableStatement(statement)) {
      for (const declaration of statement.declarationList.declarations) if (ts.isIdentifier(declaration.name)) place(declaration.name.text, statement.getStart());
    } else if ("name" in statement && statement.name && ts.isIdentifier(statement.name as ts.Node)) {
      place((statement.name as ts.Identifier).text, statement.getStart());
    }
  }
  // Names from `export *` (none today) go last, in the checker's order.
  return symbols
    .map((symbol, index) => ({ symbol, at: position.get(symbol.name) ?? source.end + index }))
    .sort((a, b) => a.at - b.at)
    .map((entry) => entry.symbol);
}

/** The symbol an export stands for (re-exports followed). */
export function resolveExport(checker: ts.TypeChecker, symbol: ts.Symbol): ts.Symbol {
  return symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
}

/** The node a declaration's doc comment is attached to: a `const x = …` is documented on its statement. */
export function documentedNode(declaration: ts.Declaration): ts.Node {
  return ts.isVariableDeclaration(declaration) ? declaration.parent.parent : declaration;
}

/**
 * The doc comment of a node: the last `/** … *\/` right above it. One separated from it by a blank
 * line is the file's opening comment, not the declaration's (TypeScript would show it anyway).
 */
export function attachedDoc(node: ts.Node): ts.JSDoc | null {
  const docs = ts.getJSDocCommentsAndTags(node).filter(ts.isJSDoc);
  const last = docs[docs.length - 1];
  if (!last) return null;
  return /\n[ \t]*\r?\n/.test(node.getSourceFile().text.slice(last.end, node.getStart())) ? null : last;
}

/** Whether at least one declaration of the (resolved) symbol carries a doc comment with some text. */
export function isDocumented(symbol: ts.Symbol): boolean {
  return (symbol.declarations ?? []).some((declaration) => {
    const doc = attachedDoc(documentedNode(declaration));
    return doc !== null && (ts.getTextOfJSDocComment(doc.comment) ?? "").trim() !== "";
  });
}

/** Entry point name → its exports without a doc comment, sorted. */
export function undocumentedExports(surface: Surface): Map<string, string[]> {
  const missing = new Map<string, string[]>();
  for (const entry of surface.entries) {
    missing.set(entry.name, entry.exports.filter((exported) => !isDocumented(resolveExport(surface.checker, exported))).map((exported) => exported.name).sort());
  }
  return missing;
}

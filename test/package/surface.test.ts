import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { describe, expect, it } from "vitest";

/**
 * Every name a user can import has JSDoc: the entry points are read from package.json `exports`,
 * and for each exported symbol (after following re-exports) at least one declaration must carry a
 * doc comment. Members of interfaces and classes are not checked here; the exported name is.
 */

const ROOT = fileURLToPath(new URL("../../", import.meta.url));

interface Manifest {
  exports: Record<string, string | { import?: { default?: string } }>;
}

function entryFiles(): Map<string, string> {
  const manifest = JSON.parse(readFileSync(`${ROOT}package.json`, "utf8")) as Manifest;
  const entries = new Map<string, string>();
  for (const [subpath, target] of Object.entries(manifest.exports)) {
    const built = typeof target === "string" ? target : target.import?.default;
    if (built === undefined || !built.startsWith("./dist/src/")) continue;
    entries.set(subpath === "." ? "toolwire" : `toolwire/${subpath.slice(2)}`, `${ROOT}src/${built.slice("./dist/src/".length).replace(/\.js$/, ".ts")}`);
  }
  return entries;
}

function undocumented(): Map<string, string[]> {
  const entries = entryFiles();
  const options: ts.CompilerOptions = { module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext, target: ts.ScriptTarget.ES2022, strict: true, noEmit: true, skipLibCheck: true, types: ["node"] };
  const program = ts.createProgram([...entries.values()], options);
  const checker = program.getTypeChecker();
  const missing = new Map<string, string[]>();
  for (const [entry, file] of entries) {
    const source = program.getSourceFile(file);
    const module = source && checker.getSymbolAtLocation(source);
    if (!module) throw new Error(`${entry}: ${file} not found`);
    const names: string[] = [];
    for (const exported of checker.getExportsOfModule(module)) {
      const symbol = exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported;
      const documented = (symbol.declarations ?? []).some((declaration) => {
        // A `const x = …` is documented on its statement.
        const node = ts.isVariableDeclaration(declaration) ? declaration.parent.parent : declaration;
        return ts.getJSDocCommentsAndTags(node).length > 0;
      });
      if (!documented) names.push(exported.name);
    }
    missing.set(entry, names.sort());
  }
  return missing;
}

describe("public exports", () => {
  it("every entry point's exports have JSDoc", { timeout: 120_000 }, () => {
    const missing = undocumented();
    expect(missing.size).toBeGreaterThanOrEqual(7);
    const report = [...missing].filter(([, names]) => names.length > 0).map(([entry, names]) => `${entry}: ${names.join(", ")}`);
    expect(report, `exports without JSDoc:\n${report.join("\n")}`).toEqual([]);
  });
});

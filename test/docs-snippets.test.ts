import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { describe, expect, it } from "vitest";

/**
 * Every ```ts / ```typescript block in README.md and docs/**\/*.md compiles under `strict`, with
 * `toolwire`, `toolwire/schema`, … resolved to src/, and the reader's own values (a stream, their
 * tools) declared once in test/helpers/snippet-prelude.d.ts. One Program compiles them all.
 *
 * A block that is not meant to compile (a signature listing) is fenced ```ts nocompile, followed
 * by its reason on the same line: ```ts nocompile: signatures, not code.
 */

const ROOT = fileURLToPath(new URL("../", import.meta.url));
const PRELUDE = join(ROOT, "test", "helpers", "snippet-prelude.d.ts");
const SNIPPET_DIR = join(ROOT, "test", ".snippets");

export interface Snippet {
  page: string;
  /** 1-based line of the block's first code line in the page. */
  line: number;
  code: string;
}

export interface Exempt {
  page: string;
  line: number;
  reason: string;
}

function pages(): string[] {
  const found = ["README.md"];
  const walk = (dir: string) => {
    for (const entry of readdirSync(join(ROOT, dir), { withFileTypes: true })) {
      if (entry.isDirectory()) walk(`${dir}/${entry.name}`);
      else if (entry.name.endsWith(".md")) found.push(`${dir}/${entry.name}`);
    }
  };
  walk("docs");
  return found.sort();
}

/** The TypeScript blocks of a Markdown page, and the ones exempt from compiling (with their reasons). */
export function extractSnippets(page: string, text: string): { snippets: Snippet[]; exempt: Exempt[]; unexplained: number[] } {
  const snippets: Snippet[] = [];
  const exempt: Exempt[] = [];
  const unexplained: number[] = [];
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)(`{3,}|~{3,})\s*(\S*)\s*(.*)$/.exec(lines[i] as string);
    if (!open) continue;
    const fence = open[2] as string;
    const lang = (open[3] as string).toLowerCase();
    const info = (open[4] as string).trim();
    let end = i + 1;
    while (end < lines.length && !(lines[end] as string).trimStart().startsWith(fence)) end++;
    if (lang === "ts" || lang === "typescript") {
      if (info.startsWith("nocompile")) {
        const reason = info.slice("nocompile".length).replace(/^[:\s]+/, "").trim();
        if (reason === "") unexplained.push(i + 1);
        else exempt.push({ page, line: i + 1, reason });
      } else {
        snippets.push({ page, line: i + 2, code: lines.slice(i + 1, end).join("\n") });
      }
    }
    i = end;
  }
  return { snippets, exempt, unexplained };
}

const ENTRY_POINTS: Record<string, string> = {
  toolwire: "src/index.ts",
  "toolwire/schema": "src/schema/index.ts",
  "toolwire/history": "src/history/index.ts",
  "toolwire/guard": "src/guard/index.ts",
  "toolwire/fetch": "src/fetch/index.ts",
  "toolwire/node": "src/node/index.ts",
  "toolwire/testing": "src/testing/index.ts",
  "toolwire/testing/fuzz": "src/testing/fuzzing.ts",
};

/** Compiles the snippets in one Program; returns the diagnostics located in the pages. */
export function compileSnippets(snippets: readonly Snippet[]): string[] {
  const options: ts.CompilerOptions = {
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.ESNext,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    // No DOM: a placeholder such as `stop` must not resolve to a browser global.
    lib: ["lib.es2023.d.ts"],
    types: ["node"],
    strict: true,
    noUncheckedIndexedAccess: true,
    esModuleInterop: true,
    skipLibCheck: true,
    resolveJsonModule: true,
    noEmit: true,
    allowImportingTsExtensions: true,
    baseUrl: ROOT,
    paths: Object.fromEntries(Object.entries(ENTRY_POINTS).map(([name, file]) => [name, [file]])),
    typeRoots: [join(ROOT, "node_modules", "@types")],
  };
  const files = new Map<string, Snippet>();
  snippets.forEach((snippet, n) => {
    const name = `${snippet.page.replace(/[^A-Za-z0-9]+/g, "_")}_${snippet.line}_${n}.ts`;
    files.set(join(SNIPPET_DIR, name), snippet);
  });
  const host = ts.createCompilerHost(options);
  const getSourceFile = host.getSourceFile.bind(host);
  host.getSourceFile = (fileName, languageVersion, onError, shouldCreate) => {
    const snippet = files.get(fileName);
    // `export {}` makes every block a module (top-level await, no globals shared between blocks).
    if (snippet) return ts.createSourceFile(fileName, `${snippet.code}\nexport {};\n`, languageVersion, true);
    return getSourceFile(fileName, languageVersion, onError, shouldCreate);
  };
  const fileExists = host.fileExists.bind(host);
  host.fileExists = (fileName) => files.has(fileName) || fileExists(fileName);
  const readFile = host.readFile.bind(host);
  host.readFile = (fileName) => {
    const snippet = files.get(fileName);
    return snippet ? `${snippet.code}\nexport {};\n` : readFile(fileName);
  };
  const program = ts.createProgram({ rootNames: [PRELUDE, ...files.keys()], options, host });
  const problems: string[] = [];
  for (const [fileName, snippet] of files) {
    const source = program.getSourceFile(fileName);
    if (!source) {
      problems.push(`${snippet.page}:${snippet.line}: not compiled`);
      continue;
    }
    for (const d of [...program.getSyntacticDiagnostics(source), ...program.getSemanticDiagnostics(source)]) {
      const { line } = d.start === undefined ? { line: 0 } : source.getLineAndCharacterOfPosition(d.start);
      problems.push(`${snippet.page}:${snippet.line + line}: TS${d.code} ${ts.flattenDiagnosticMessageText(d.messageText, "\n")}`);
    }
  }
  for (const d of program.getSemanticDiagnostics(program.getSourceFile(PRELUDE))) {
    problems.push(`${relative(ROOT, PRELUDE)}: TS${d.code} ${ts.flattenDiagnosticMessageText(d.messageText, "\n")}`);
  }
  return problems;
}

describe("code blocks in README.md and docs/", () => {
  const all = pages().map((page) => ({ page, ...extractSnippets(page, readFileSync(join(ROOT, page), "utf8")) }));
  const snippets = all.flatMap((p) => p.snippets);
  // A page that must fail, compiled in the same Program: a type error, and a toolwire call with a
  // provider that does not exist (proving the entry points resolve to src/ with their real types).
  const sample = extractSnippets(
    "x.md",
    '# x\n\n```ts\nconst text = "text";\nconst n: number = text;\n```\n\n```ts nocompile: a signature\nf(x)\n```\n\n```typescript\nimport { collectTurn } from "toolwire";\nawait collectTurn("no-such-provider", response);\n```\n',
  );
  let problems: string[] | undefined;
  const compiled = () => (problems ??= compileSnippets([...snippets, ...sample.snippets]));

  it("finds the blocks, and every exempt block says why", () => {
    expect(snippets.filter((s) => s.page === "README.md").length).toBeGreaterThan(0);
    expect(all.flatMap((p) => p.unexplained.map((line) => `${p.page}:${line}`)), "a ```ts nocompile block needs its reason on the fence line").toEqual([]);
    expect(sample.snippets.map((s) => s.line)).toEqual([4, 13]);
    expect(sample.exempt).toEqual([{ page: "x.md", line: 8, reason: "a signature" }]);
  });

  it("compile under strict, with toolwire's entry points resolved to src/", () => {
    expect(compiled().filter((p) => !p.startsWith("x.md:")).join("\n")).toBe("");
  });

  it("a block that does not compile is reported at its page and line", () => {
    const failures = compiled().filter((p) => p.startsWith("x.md:"));
    expect(failures).toHaveLength(2);
    expect(failures[0]).toMatch(/^x\.md:5: TS2322 /);
    expect(failures[1]).toMatch(/^x\.md:14: TS2345 .*no-such-provider/);
  });
});

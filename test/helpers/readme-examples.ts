import { readFileSync } from "node:fs";

/**
 * The README's code examples are the `// #region readme` parts of examples/*.ts, with their
 * imports, as the package's users write them ("toolwire", "toolwire/node", "toolwire/guard"…). The README marks
 * each with `<!-- example: examples/<name>.ts -->` right before its ```ts block.
 */

export const EXAMPLES = ["examples/anthropic-sdk.ts", "examples/openai-sdk.ts", "examples/fetch.ts", "examples/record.ts", "examples/guards.ts"] as const;

const IMPORTS: Record<string, string> = {
  "../src/index.js": "toolwire",
  "../src/node/index.js": "toolwire/node",
  "../src/schema/index.js": "toolwire/schema",
  "../src/history/index.js": "toolwire/history",
  "../src/guard/index.js": "toolwire/guard",
};

export function readmeSnippet(root: URL, file: string): string {
  const lines = readFileSync(new URL(file, root), "utf8").split("\n");
  const imports = lines
    .filter((line) => line.startsWith("import "))
    .map((line) => line.replace(/from "([^"]+)";$/, (whole, path: string) => (IMPORTS[path] ? `from "${IMPORTS[path]}";` : whole)));
  const start = lines.findIndex((line) => line.trim() === "// #region readme");
  const end = lines.findIndex((line) => line.trim() === "// #endregion readme");
  if (start < 0 || end < start) throw new Error(`${file}: no '// #region readme' … '// #endregion readme'`);
  const body = lines.slice(start + 1, end);
  const indent = Math.min(...body.filter((line) => line.trim() !== "").map((line) => line.length - line.trimStart().length));
  return [...imports, "", ...body.map((line) => line.slice(indent))].join("\n").trimEnd();
}

/** The ```ts block after each `<!-- example: … -->` marker in the README, by file. */
export function readmeBlocks(readme: string): Map<string, string> {
  const blocks = new Map<string, string>();
  const pattern = /<!--\s*example:\s*(\S+)\s*-->\s*\n```ts\n([\s\S]*?)\n```/g;
  for (const match of readme.matchAll(pattern)) blocks.set(match[1] as string, (match[2] as string).trimEnd());
  return blocks;
}

export function readmeSection(root: URL): string {
  return EXAMPLES.map((file) => `<!-- example: ${file} -->\n\`\`\`ts\n${readmeSnippet(root, file)}\n\`\`\``).join("\n\n");
}

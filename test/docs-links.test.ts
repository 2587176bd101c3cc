import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

/**
 * The README is a front door to the guides in docs/: every relative link in README.md and in
 * docs/**\/*.md must lead to a file that exists (and, with a #fragment, to a heading in it), so
 * that the links resolve in a clone and in the installed package alike (docs/ ships with it).
 */

const ROOT = fileURLToPath(new URL("../", import.meta.url));

function pages(): string[] {
  const found = [join(ROOT, "README.md")];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (entry.isDirectory()) walk(join(dir, entry.name));
      else if (entry.name.endsWith(".md")) found.push(join(dir, entry.name));
    }
  };
  walk(join(ROOT, "docs"));
  return found;
}

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens. */
function anchors(markdown: string): Set<string> {
  const out = new Set<string>();
  let fenced = false;
  for (const line of markdown.split("\n")) {
    if (/^\s*(```|~~~)/.test(line)) fenced = !fenced;
    const heading = fenced ? null : /^#{1,6}\s+(.*)$/.exec(line);
    if (heading) {
      out.add(
        (heading[1] as string)
          .trim()
          .toLowerCase()
          .replace(/[^\p{L}\p{N}\s_-]/gu, "")
          .replace(/\s/g, "-"),
      );
    }
  }
  return out;
}

/** Relative links outside code: `[text](target)`. */
function links(markdown: string): string[] {
  const prose = markdown.replace(/^(```|~~~)[\s\S]*?^\1/gm, "").replace(/`[^`\n]*`/g, "");
  return [...prose.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1] as string).filter((target) => !/^[a-z]+:/i.test(target) && !target.startsWith("#"));
}

describe("links in README.md and docs/", () => {
  it("lead to files that exist, and to headings that exist", () => {
    const broken: string[] = [];
    let count = 0;
    for (const page of pages()) {
      const text = readFileSync(page, "utf8");
      for (const target of links(text)) {
        count++;
        const [path, fragment] = target.split("#") as [string, string | undefined];
        const file = join(dirname(page), decodeURIComponent(path));
        if (!existsSync(file)) broken.push(`${relative(ROOT, page)}: ${target} (no such file)`);
        else if (fragment && file.endsWith(".md") && !anchors(readFileSync(file, "utf8")).has(fragment)) broken.push(`${relative(ROOT, page)}: ${target} (no such heading)`);
      }
    }
    expect(count).toBeGreaterThan(20);
    expect(broken).toEqual([]);
    expect(links("[a](b.md) `[c](d.md)` [e](https://x.y) [f](#g)")).toEqual(["b.md"]);
  });

  it("the README links every guide in docs/", () => {
    const readme = readFileSync(join(ROOT, "README.md"), "utf8");
    const guides = readdirSync(join(ROOT, "docs")).filter((name) => name.endsWith(".md"));
    expect(guides.filter((name) => !readme.includes(`](docs/${name}`))).toEqual([]);
  });
});

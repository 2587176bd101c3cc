import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { currentNamedRegion, markers, REGIONS, renderGuardSection, renderToolShapes, replaceNamedRegion, updateGuardRegions } from "../../scripts/gen-guard-section.js";
import { LLAMACPP_SCHEMA_ERRORS } from "../../src/guard/provider-errors.js";
import { TOOL_SHAPES } from "../../src/schema/tool-shape.js";

// Each region lives in its guide (docs/guards.md, docs/schemas.md), linked from the README.
const guide = (file: string) => {
  const path = fileURLToPath(new URL(`../../${file}`, import.meta.url));
  return existsSync(path) ? readFileSync(path, "utf8") : "";
};

describe("guard section and tool shapes (docs/guards.md, docs/schemas.md)", () => {
  it("show every guard rule with its defaults, every llama.cpp error text and every tool shape", () => {
    const guards = renderGuardSection();
    for (const text of ["escalateAfter: 3", "tripAfter: 5", "maxIdenticalCalls: 3", "`write_file`", "`patch`", "*** Update File:", "*** Add File:", "*** Delete File:", "at most 10 files", "HTTP 400 only"]) {
      expect(guards).toContain(text);
    }
    for (const entry of LLAMACPP_SCHEMA_ERRORS) expect(guards).toContain(entry.strip.map((k) => `\`${k}\``).join(", "));
    const shapes = renderToolShapes();
    for (const shape of Object.keys(TOOL_SHAPES)) expect(shapes).toContain(`| \`${shape}\` |`);
  });

  it("replaces only the text between a region's markers, and updates a file in place", () => {
    const { start, end } = markers("guards");
    expect(replaceNamedRegion(`a\n${start}\nold\n${end}\nb`, "guards", "NEW")).toBe(`a\n${start}\nNEW\n${end}\nb`);
    expect(replaceNamedRegion("none", "guards", "NEW")).toBeNull();
    const file = join(mkdtempSync(join(tmpdir(), "toolwire-guards-")), "README.md");
    writeFileSync(file, REGIONS.map((r) => `${markers(r.name).start}\n${markers(r.name).end}`).join("\n\n") + "\n");
    expect(updateGuardRegions(file, { check: true })).toBe("out-of-date");
    expect(updateGuardRegions(file)).toBe("updated");
    expect(updateGuardRegions(file, { check: true })).toBe("up-to-date");
    writeFileSync(file, "no markers");
    expect(updateGuardRegions(file)).toBe("no-markers");
  });

  it.each(REGIONS.map((r) => [r.name, r] as const))("the %s region in its guide equals the generated text — if this fails, run: npm run build && node dist/scripts/gen-guard-section.js", (name, region) => {
    expect(currentNamedRegion(guide(region.file), name), `${region.file}'s ${name} region is out of date`).toBe(region.render());
  });
});

import { createHash } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { expect, it } from "vitest";
import { parseManifest } from "../../scripts/import-corpus.js";
import { describeCorpus } from "../helpers/corpus.js";

/**
 * The upstream corpus (beside the checkout, never in the repository) is other projects' files byte for byte. MANIFEST.md lists, for every
 * stream file, its size and the upstream git blob id (the first 12 hex digits), so the copy is
 * checked against the upstream repository's own record of the bytes. The licence and notice
 * files carry no id in the manifest: they are checked to be present for every repository folder.
 */

/** `git hash-object`: sha1 of "blob <length>\0" followed by the bytes. */
function gitBlobId(bytes: Uint8Array): string {
  return createHash("sha1").update(`blob ${bytes.length}\0`).update(bytes).digest("hex");
}

const LICENSE_FILES = new Set(["UPSTREAM_LICENSE", "UPSTREAM_NOTICE"]);
describeCorpus("upstream", "the upstream corpus is the manifest's bytes", (CORPUS) => {
  const manifest = parseManifest(readFileSync(join(CORPUS, "MANIFEST.md"), "utf8"));
  const folders = readdirSync(CORPUS, { withFileTypes: true }).filter((entry) => entry.isDirectory()).map((entry) => entry.name).sort();
  const files = folders.flatMap((folder) => readdirSync(join(CORPUS, folder)).sort().map((name) => `${folder}/${name}`));

  it("the manifest lists 57 files, each with a size and a blob id", () => {
    expect(manifest.size).toBe(57);
    for (const row of manifest.values()) {
      expect(row.blob, row.local).toMatch(/^[0-9a-f]{12,40}$/);
      expect(Number.isInteger(row.bytes) && row.bytes > 0, row.local).toBe(true);
    }
  });

  it.each([...manifest.values()].map((row) => [row.local, row] as const))("%s has the upstream git blob id", (local, row) => {
    const bytes = new Uint8Array(readFileSync(join(CORPUS, local)));
    expect(bytes.length).toBe(row.bytes);
    expect(gitBlobId(bytes).slice(0, row.blob.length)).toBe(row.blob);
  });

  it("holds nothing the manifest does not list, besides licences and notices", () => {
    const unlisted = files.filter((file) => !manifest.has(file) && !LICENSE_FILES.has(file.split("/")[1] as string));
    expect(unlisted).toEqual([]);
    expect(readdirSync(CORPUS).filter((name) => !folders.includes(name))).toEqual(["MANIFEST.md"]);
  });

  it("every repository folder carries its UPSTREAM_LICENSE (and fantasy its Apache-2.0 NOTICE)", () => {
    for (const folder of folders) expect(files, folder).toContain(`${folder}/UPSTREAM_LICENSE`);
    expect(files).toContain("charmbracelet__fantasy/UPSTREAM_NOTICE");
    const repos = new Set([...manifest.keys()].map((local) => local.split("/")[0]));
    expect([...repos].sort()).toEqual(folders);
  });
});

import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";

/**
 * Run only by scripts/interop-node22.sh (test/interop/vitest.config.ts includes it): the interop
 * tests there must run with what the script says, not silently with the dev dependencies, so this
 * checks where the modules came from.
 */

const interopDir = process.env.TOOLWIRE_INTEROP_DIR as string;
const fromInterop = createRequire(join(interopDir, "package.json"));

function versionOf(name: string): string {
  return (JSON.parse(readFileSync(fromInterop.resolve(`${name}/package.json`), "utf8")) as { version: string }).version;
}

describe("the interop run", () => {
  it("runs on Node 22 or later", () => {
    expect(Number(process.versions.node.split(".")[0])).toBeGreaterThanOrEqual(22);
  });

  it("imports ai 7 and its providers from the interop folder", async () => {
    expect(versionOf("ai")).toMatch(/^7\./);
    expect(versionOf("@ai-sdk/openai")).toMatch(/^4\./);
    expect(versionOf("@ai-sdk/amazon-bedrock")).toMatch(/^5\./);
    // ai/test's LanguageModelV4 mock exists from ai 7 on: the tests' `ai` is the interop folder's.
    expect("MockLanguageModelV4" in (await import("ai/test"))).toBe(true);
  });

  it("imports openai 7 as openai-v7", async () => {
    const specifier = "openai-v7/version";
    expect(((await import(/* @vite-ignore */ specifier)) as { VERSION: string }).VERSION).toMatch(/^7\./);
  });

  it("imports toolwire from the packed package's build, not from src/", async () => {
    const built = pathToFileURL(join(interopDir, "node_modules", "toolwire", "dist", "src", "adapters", "ai-sdk.js")).href;
    const fromTests = await import("../../src/adapters/ai-sdk.js");
    expect(fromTests.toolwireMiddleware).toBe(((await import(/* @vite-ignore */ built)) as typeof fromTests).toolwireMiddleware);
  });
});

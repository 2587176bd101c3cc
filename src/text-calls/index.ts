// Tool calls written into text: the public surface (re-exported by the root entry).
export { extractTextCalls, createTextCallExtractor, TextCallExtractor, LONGEST_MARKER, type TextCallSink, type ExtractedTextCall } from "./extractor.js";
export { resolveTextCallOptions, TextCallOptionsError, type TextCallSetting, type TextCallOptions, type TextCallTool, type ResolvedTextCallOptions, type ParamKind } from "./options.js";
export { TEXT_CALL_SYNTAXES, TEXT_CALL_SYNTAX_NAMES, isTextCallSyntaxName, type TextCallSyntax, type TextCallSyntaxName } from "./syntaxes.js";
export { failedGenerationOf } from "./router.js";

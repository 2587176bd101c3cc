// Tool calls written into text: the public surface (re-exported by the root entry).
export { extractTextCalls, type ExtractedTextCall } from "./extractor.js";
export { TextCallOptionsError, type TextCallSetting, type TextCallOptions } from "./options.js";
export { type TextCallSyntaxName } from "./syntaxes.js";

import { fileURLToPath } from "node:url";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { isDocumented, loadSurface, resolveExport, undocumentedExports, type Surface } from "../../scripts/api-surface.js";
import { API_COMMAND, API_DIR, pageOf, renderApiDocs, staleApiPages } from "../../scripts/gen-api-docs.js";

/**
 * The public surface: every name a user can import, over the entry points of package.json
 * `exports`. One program of the TypeScript compiler reads them all (a few seconds), and:
 * - every exported symbol (after following re-exports) carries a doc comment on at least one
 *   declaration (members of interfaces and classes are not checked here; the exported name is);
 * - docs/api/, the API reference generated from those comments (scripts/gen-api-docs.ts), is up
 *   to date;
 * - each entry point exports exactly the names listed in SURFACE below, so a new export fails
 *   until it is documented (its TSDoc, and `npm run docs:api`) and listed here;
 * - the whole surface stays within MAX_EXPORTS names;
 * - the named types of every exported function's parameters and result are exported too (a user
 *   can write the type of what they pass and get).
 */

const ROOT = fileURLToPath(new URL("../../", import.meta.url));

/** The most names all entry points may export together. */
const MAX_EXPORTS = 160;

/** Each entry point's exports, sorted. Adding one: TSDoc on it, `npm run docs:api`, and here. */
const SURFACE: Record<string, readonly string[]> = {
  toolwire: [
    "ByteDecoder",
    "ByteDecoderOptions",
    "CodecEvent",
    "ContentBlock",
    "DEFAULT_IDLE_TIMEOUT_MS",
    "DEFAULT_LIMITS",
    "DecodeStreamOptions",
    "DecodedTurn",
    "DecoderLimits",
    "DecoderOptions",
    "Diagnostic",
    "ExtractedTextCall",
    "PROVIDERS",
    "ProviderDetectionError",
    "ProviderEvent",
    "ProviderName",
    "RecordFormatError",
    "RecordOptions",
    "RecordSink",
    "RecordedStream",
    "Recording",
    "Reencoder",
    "ReencoderOptions",
    "RepairCode",
    "RepairReport",
    "StreamSource",
    "StreamingDecoder",
    "TextCallOptions",
    "TextCallOptionsError",
    "TextCallSetting",
    "TextCallSyntaxName",
    "TooDeepError",
    "ToolCall",
    "ToolCallError",
    "ToolCallErrorCode",
    "ToolwireError",
    "TruncationCause",
    "UnsupportedProviderError",
    "Usage",
    "WholeResponseRepair",
    "collectTurn",
    "createByteDecoder",
    "createDecoder",
    "createReencoder",
    "createReencodingStream",
    "decodeStream",
    "decodeStreamBatches",
    "detectProvider",
    "extractTextCalls",
    "isToolwireError",
    "parseRecords",
    "record",
    "repairWholeResponse",
    "replayEvents",
  ],
  "toolwire/schema": [
    "Coercion",
    "CoercionKind",
    "InvalidToolsError",
    "SCHEMA_TARGETS",
    "SanitizeOptions",
    "SanitizeResult",
    "SanitizeToolsResult",
    "Schema",
    "SchemaCompileError",
    "SchemaProblem",
    "SchemaTarget",
    "TargetName",
    "ToolDefinitionGivenError",
    "UnknownTargetError",
    "UnsupportedPatternError",
    "ValidateOptions",
    "ValidationIssue",
    "ValidationResult",
    "checkSchema",
    "coerceArguments",
    "restoreToolArguments",
    "sanitizeSchema",
    "sanitizeTools",
    "validateArguments",
  ],
  "toolwire/history": [
    "ConvertResult",
    "Edit",
    "EncodeTurnOptions",
    "EncodedTurn",
    "Fault",
    "HISTORY_FORMATS",
    "HistoryFormat",
    "HistoryOptions",
    "MAX_HISTORY_DEPTH",
    "Message",
    "RepairPolicy",
    "RepairResult",
    "ToolResultInput",
    "checkHistory",
    "convertHistory",
    "encodeToolResults",
    "encodeTurn",
    "fromNeutral",
    "repairHistory",
    "toNeutral",
  ],
  "toolwire/guard": [
    "CallDecision",
    "ClassifyOptions",
    "FileMutationLedger",
    "FileMutationLedgerOptions",
    "GuardDecision",
    "LoopGuard",
    "LoopGuardOptions",
    "OutcomeLedger",
    "OutcomeLedgerOptions",
    "ProviderErrorClassification",
    "ProviderErrorReason",
    "classifyProviderError",
    "createFileMutationLedger",
    "createLoopGuard",
    "createOutcomeLedger",
    "fileMutationFooter",
  ],
  "toolwire/fetch": ["FetchLike", "RepairingFetchOptions", "createRepairingFetch"],
  "toolwire/node": [
    "FileSinkOptions",
    "ProxyConfig",
    "ProxyLogRecord",
    "ProxyOptions",
    "ProxyRoute",
    "ProxyServer",
    "ReplayLoadError",
    "ReplayServer",
    "ReplayServerOptions",
    "createProxyHandler",
    "createUpstreamFetch",
    "fileSink",
    "loadProxyConfig",
    "parseProxyConfig",
    "startProxy",
    "startReplayServer",
  ],
  "toolwire/ai-sdk": ["ToolwireCallMetadata", "ToolwireLanguageModelMiddleware", "ToolwireMiddlewareOptions", "aiSdkProviderOf", "toolwireMiddleware"],
  "toolwire/testing": [
    "DecodeRun",
    "Finding",
    "FuzzSource",
    "GeneratedStream",
    "Regression",
    "RegressionFormatError",
    "RunCheckOptions",
    "Violation",
    "WireOptions",
    "checkRun",
    "decodeBytesSafely",
    "decodeEventsSafely",
    "encodeWire",
    "formatRegression",
    "parseRegression",
    "regressionFromFinding",
    "replayRegression",
  ],
  "toolwire/testing/fuzz": ["FuzzOptions", "FuzzSummary", "generatedStream", "runFuzz"],
};

let surface: Surface | undefined;

/** One program for every test here: building it is most of the cost. */
function load(): Surface {
  return (surface ??= loadSurface(ROOT));
}

/** Entry point → its exported symbols, as exported (aliases unresolved). */
function exportsByEntry(): Map<string, ts.Symbol[]> {
  return new Map(load().entries.map((entry) => [entry.name, entry.exports]));
}

/** The named types (aliases, interfaces, classes) a type is written with, at its top level and in its type arguments. */
function namedTypes(checker: ts.TypeChecker, type: ts.Type, out: Set<ts.Symbol>, depth = 0): void {
  if (depth > 3 || type.flags & ts.TypeFlags.TypeParameter) return;
  if (type.aliasSymbol) {
    out.add(type.aliasSymbol);
    for (const argument of type.aliasTypeArguments ?? []) namedTypes(checker, argument, out, depth + 1);
    return;
  }
  if (!(type.flags & ts.TypeFlags.Object)) return;
  const symbol = type.getSymbol();
  if (symbol && symbol.flags & (ts.SymbolFlags.Interface | ts.SymbolFlags.Class)) out.add(symbol);
  if ((type as ts.ObjectType).objectFlags & ts.ObjectFlags.Reference) for (const argument of checker.getTypeArguments(type as ts.TypeReference)) namedTypes(checker, argument, out, depth + 1);
}

describe("public exports", () => {
  it("every entry point's exports have JSDoc", { timeout: 120_000 }, () => {
    const missing = undocumentedExports(load());
    expect(missing.size).toBeGreaterThanOrEqual(7);
    const report = [...missing].filter(([, names]) => names.length > 0).map(([entry, names]) => `${entry}: ${names.join(", ")}`);
    expect(report, `exports without JSDoc:\n${report.join("\n")}`).toEqual([]);
  });

  it("an export without a doc comment (or with an empty one) counts as undocumented", () => {
    const text = [
      "/** Documented. */ export function a() {}",
      "export function b() {}",
      "/** */ export interface C {}",
      "// A line comment is not a doc comment.",
      "export type D = string;",
      "/** Documented on its statement. */ export const e = 1;",
      "export const f = 1;",
      "/** A file's opening comment, apart from the declaration by a blank line. */",
      "",
      "export interface G {}",
    ].join("\n");
    const source = ts.createSourceFile("/sample.ts", text, ts.ScriptTarget.ES2022, true);
    const host = ts.createCompilerHost({ noLib: true });
    host.getSourceFile = (name) => (name === "/sample.ts" ? source : undefined);
    host.fileExists = (name) => name === "/sample.ts";
    const program = ts.createProgram({ rootNames: ["/sample.ts"], options: { noLib: true, noEmit: true }, host });
    const checker = program.getTypeChecker();
    const module = checker.getSymbolAtLocation(source);
    const documented = checker.getExportsOfModule(module as ts.Symbol).map((symbol) => [symbol.name, isDocumented(symbol)]);
    expect(Object.fromEntries(documented)).toEqual({ a: true, b: false, C: false, D: false, e: true, f: false, G: false });
  });

  it(`${API_DIR}/ is generated from the TSDoc (if this fails, run: ${API_COMMAND})`, { timeout: 120_000 }, () => {
    const pages = renderApiDocs(load());
    expect([...pages.keys()].sort()).toEqual(["README.md", ...load().entries.map((entry) => pageOf(entry.name))].sort());
    const stale = staleApiPages(ROOT, pages);
    expect(stale, `${API_DIR}/ is out of date (${stale.join(", ")}): run ${API_COMMAND}`).toEqual([]);
  });

  it("each entry point exports exactly its listed names", { timeout: 120_000 }, () => {
    const exports = exportsByEntry();
    expect([...exports.keys()].sort()).toEqual(Object.keys(SURFACE).sort());
    const report: string[] = [];
    for (const [entry, symbols] of exports) {
      const actual = new Set(symbols.map((symbol) => symbol.name));
      const listed = new Set(SURFACE[entry] ?? []);
      const added = [...actual].filter((name) => !listed.has(name)).sort();
      const removed = [...listed].filter((name) => !actual.has(name)).sort();
      if (added.length > 0) report.push(`${entry} exports ${added.join(", ")}, not listed: document it (TSDoc, then ${API_COMMAND}) and add it to SURFACE, or import it from its own module instead`);
      if (removed.length > 0) report.push(`${entry} no longer exports ${removed.join(", ")}: remove it from SURFACE and run ${API_COMMAND}`);
    }
    expect(report, report.join("\n")).toEqual([]);
  });

  it(`the surface stays within ${MAX_EXPORTS} names`, { timeout: 120_000 }, () => {
    const exports = exportsByEntry();
    const total = [...exports.values()].reduce((sum, symbols) => sum + symbols.length, 0);
    expect(total, `${total} exports over ${exports.size} entry points`).toBeLessThanOrEqual(MAX_EXPORTS);
    expect(Object.values(SURFACE).reduce((sum, names) => sum + names.length, 0)).toBeLessThanOrEqual(MAX_EXPORTS);
  });

  it("the named types of exported functions' parameters and results are exported", { timeout: 120_000 }, () => {
    const { checker } = load();
    const exports = exportsByEntry();
    const exported = new Set([...exports.values()].flat().map((symbol) => resolveExport(checker, symbol)));
    const fromSrc = (symbol: ts.Symbol): boolean => (symbol.declarations ?? []).some((declaration) => declaration.getSourceFile().fileName.startsWith(`${ROOT}src/`));
    const report: string[] = [];
    for (const [entry, symbols] of exports) {
      for (const symbol of symbols) {
        const fn = resolveExport(checker, symbol);
        const declaration = fn.declarations?.[0];
        if (!(fn.flags & ts.SymbolFlags.Function) || !declaration) continue;
        const used = new Set<ts.Symbol>();
        for (const signature of checker.getTypeOfSymbolAtLocation(fn, declaration).getCallSignatures()) {
          for (const parameter of signature.getParameters()) namedTypes(checker, checker.getTypeOfSymbolAtLocation(parameter, declaration), used);
          namedTypes(checker, signature.getReturnType(), used);
        }
        const missing = [...used].filter((type) => fromSrc(type) && !exported.has(type)).map((type) => type.name);
        if (missing.length > 0) report.push(`${entry}: ${symbol.name} takes or returns ${missing.join(", ")}, which no entry point exports`);
      }
    }
    expect(report, report.join("\n")).toEqual([]);
  });
});

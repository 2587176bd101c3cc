import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { describe, expect, it } from "vitest";

/**
 * The public surface: every name a user can import, over the entry points of package.json
 * `exports`. One program of the TypeScript compiler reads them all (a few seconds), and:
 * - every exported symbol (after following re-exports) carries a doc comment on at least one
 *   declaration (members of interfaces and classes are not checked here; the exported name is);
 * - each entry point exports exactly the names listed in SURFACE below, so a new export fails
 *   until it is documented (its TSDoc, and a line in the API reference) and listed here;
 * - the whole surface stays within MAX_EXPORTS names;
 * - the named types of every exported function's parameters and result are exported too (a user
 *   can write the type of what they pass and get).
 */

const ROOT = fileURLToPath(new URL("../../", import.meta.url));

/** The most names all entry points may export together. */
const MAX_EXPORTS = 160;

/** Each entry point's exports, sorted. Adding one: TSDoc on it, a line in the API reference, and here. */
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

interface Manifest {
  exports: Record<string, string | { import?: { default?: string } }>;
}

function entryFiles(): Map<string, string> {
  const manifest = JSON.parse(readFileSync(`${ROOT}package.json`, "utf8")) as Manifest;
  const entries = new Map<string, string>();
  for (const [subpath, target] of Object.entries(manifest.exports)) {
    const built = typeof target === "string" ? target : target.import?.default;
    if (built === undefined || !built.startsWith("./dist/src/")) continue;
    entries.set(subpath === "." ? "toolwire" : `toolwire/${subpath.slice(2)}`, `${ROOT}src/${built.slice("./dist/src/".length).replace(/\.js$/, ".ts")}`);
  }
  return entries;
}

interface Surface {
  checker: ts.TypeChecker;
  /** Entry point → its exported symbols, as exported (aliases unresolved). */
  exports: Map<string, ts.Symbol[]>;
}

let surface: Surface | undefined;

/** One program for every test here: building it is most of the cost. */
function load(): Surface {
  if (surface) return surface;
  const entries = entryFiles();
  const options: ts.CompilerOptions = { module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext, target: ts.ScriptTarget.ES2022, strict: true, noEmit: true, skipLibCheck: true, types: ["node"] };
  const program = ts.createProgram([...entries.values()], options);
  const checker = program.getTypeChecker();
  const exports = new Map<string, ts.Symbol[]>();
  for (const [entry, file] of entries) {
    const source = program.getSourceFile(file);
    const module = source && checker.getSymbolAtLocation(source);
    if (!module) throw new Error(`${entry}: ${file} not found`);
    exports.set(entry, checker.getExportsOfModule(module));
  }
  surface = { checker, exports };
  return surface;
}

function target(checker: ts.TypeChecker, symbol: ts.Symbol): ts.Symbol {
  return symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
}

function undocumented(): Map<string, string[]> {
  const { checker, exports } = load();
  const missing = new Map<string, string[]>();
  for (const [entry, symbols] of exports) {
    const names: string[] = [];
    for (const exported of symbols) {
      const symbol = target(checker, exported);
      const documented = (symbol.declarations ?? []).some((declaration) => {
        // A `const x = …` is documented on its statement.
        const node = ts.isVariableDeclaration(declaration) ? declaration.parent.parent : declaration;
        return ts.getJSDocCommentsAndTags(node).length > 0;
      });
      if (!documented) names.push(exported.name);
    }
    missing.set(entry, names.sort());
  }
  return missing;
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
    const missing = undocumented();
    expect(missing.size).toBeGreaterThanOrEqual(7);
    const report = [...missing].filter(([, names]) => names.length > 0).map(([entry, names]) => `${entry}: ${names.join(", ")}`);
    expect(report, `exports without JSDoc:\n${report.join("\n")}`).toEqual([]);
  });

  it("each entry point exports exactly its listed names", { timeout: 120_000 }, () => {
    const { exports } = load();
    expect([...exports.keys()].sort()).toEqual(Object.keys(SURFACE).sort());
    const report: string[] = [];
    for (const [entry, symbols] of exports) {
      const actual = new Set(symbols.map((symbol) => symbol.name));
      const listed = new Set(SURFACE[entry] ?? []);
      const added = [...actual].filter((name) => !listed.has(name)).sort();
      const removed = [...listed].filter((name) => !actual.has(name)).sort();
      if (added.length > 0) report.push(`${entry} exports ${added.join(", ")}, not listed: document it (TSDoc and the API reference) and add it to SURFACE, or import it from its own module instead`);
      if (removed.length > 0) report.push(`${entry} no longer exports ${removed.join(", ")}: remove it from SURFACE and the API reference`);
    }
    expect(report, report.join("\n")).toEqual([]);
  });

  it(`the surface stays within ${MAX_EXPORTS} names`, { timeout: 120_000 }, () => {
    const { exports } = load();
    const total = [...exports.values()].reduce((sum, symbols) => sum + symbols.length, 0);
    expect(total, `${total} exports over ${exports.size} entry points`).toBeLessThanOrEqual(MAX_EXPORTS);
    expect(Object.values(SURFACE).reduce((sum, names) => sum + names.length, 0)).toBeLessThanOrEqual(MAX_EXPORTS);
  });

  it("the named types of exported functions' parameters and results are exported", { timeout: 120_000 }, () => {
    const { checker, exports } = load();
    const exported = new Set([...exports.values()].flat().map((symbol) => target(checker, symbol)));
    const fromSrc = (symbol: ts.Symbol): boolean => (symbol.declarations ?? []).some((declaration) => declaration.getSourceFile().fileName.startsWith(`${ROOT}src/`));
    const report: string[] = [];
    for (const [entry, symbols] of exports) {
      for (const symbol of symbols) {
        const fn = target(checker, symbol);
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

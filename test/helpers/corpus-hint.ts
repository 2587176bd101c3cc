/** Shared by the corpus helper and the summary reporter (which must not import vitest's test API). */
export const CORPUS_HINT = "set TOOLWIRE_CORPUS to a directory holding upstream/, peer/ and text-calls-peer/ (CI uses ../shared/corpus)";
export const CORPUS_SKIP_MARK = "[corpus absent]";

import { ToolwireError } from "../errors.js";

import type { RecordedStream } from "../framing/records.js";
import type { ProviderName } from "../types.js";

export type ImportErrorCode =
  /** The bytes are none of the container formats the importer knows. */
  | "unrecognized_format"
  /** The container was recognized but is broken (bad YAML, bad trace lengths, corrupt frames…). */
  | "malformed"
  /** A compressed body importFile cannot read synchronously (importRecording can), or a coding DecompressionStream does not know. */
  | "compressed";

/** An upstream fixture that cannot be imported; `code` says why. */
export class ImportError extends ToolwireError {
  declare readonly code: ImportErrorCode;

  constructor(
    message: string,
    code: ImportErrorCode,
    /** The file name the error is about, as given to importFile. */
    readonly file: string,
  ) {
    super(code, `${file}: ${message}`);
  }
}

export interface ImportOptions {
  /** Stamped on every stream; otherwise the provider is inferred where the container says (request URL, framing) or left null. */
  provider?: ProviderName;
}

export interface ImportResult {
  /** Container format name: sse, json-array, json-lines, records, eventstream, eventstream-base64, go-vcr-v2, vcr.py, httprr-v1, har, ddapm-test-agent, genai-replay. */
  format: string;
  streams: RecordedStream[];
  /** What the conversion dropped or inferred, for the file's `#` header. */
  notes: string[];
}

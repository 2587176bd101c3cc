import { describe, expect, it } from "vitest";
import { detectFormat, importFile } from "../../src/import/index.js";
import { importError, utf8 } from "./corpus.js";

describe("unrecognized and unreadable input", () => {
  it("names the file and the formats it expected", () => {
    const error = importError("notes.txt", utf8("Hello, this is just prose.\nNothing to see.\n"));
    expect(error.code).toBe("unrecognized_format");
    expect(error.file).toBe("notes.txt");
    expect(error.message).toMatch(/^notes\.txt: unrecognized format: expected one of raw SSE text, JSON per line/);
  });

  it("rejects binary that is not an event stream", () => {
    const error = importError("blob.bin", new Uint8Array([0, 1, 2, 3, 0xff, 0xfe, 0x80, 0x81, 9, 9, 9, 9, 9, 9, 9, 9, 9]));
    expect(error.code).toBe("unrecognized_format");
  });

  it("rejects gzip-compressed files with a clear message", () => {
    const error = importError("stream.sse.gz", new Uint8Array([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3]));
    expect(error.code).toBe("compressed");
    expect(error.message).toContain("gzip-compressed");
  });

  it("rejects base64 that is not an event stream", () => {
    const error = importError("x.eventstream.base64.txt", utf8("AAAA"));
    expect(error.code).toBe("malformed");
    expect(error.message).toMatch(/truncated/);
    expect(importError("x.eventstream.base64.txt", utf8("not base64 at all!")).message).toMatch(/outside the base64 alphabet/);
  });

  it("detects formats from content when the name does not say", () => {
    expect(detectFormat("a.txt", utf8("event: ping\ndata: {}\n\n"))).toBe("sse");
    expect(detectFormat("a.txt", utf8(": comment\n\ndata: {}\n\n"))).toBe("sse");
    expect(detectFormat("a", utf8("httprr trace v1\n"))).toBe("httprr-v1");
    expect(detectFormat("a.txt", utf8("---\nversion: 2\ninteractions: []\n"))).toBe("yaml-cassette");
    expect(detectFormat("a.txt", utf8("# c\n{\"sequence\":\"s\",\"data\":{}}\n"))).toBe("records");
    expect(detectFormat("a.txt", utf8("{\"type\":\"ping\"}\n"))).toBe("json-lines");
    expect(detectFormat("a.txt", utf8("hello"))).toBeNull();
  });
});

describe("content sniffing of base64", () => {
  it("takes base64 text for an event stream only when it decodes to a valid prelude", async () => {
    const { encodeEventStreamMessage } = await import("../../src/framing/aws-eventstream.js");
    const frame = encodeEventStreamMessage({ ":event-type": "messageStop", ":message-type": "event" }, "{}");
    const text = btoa(String.fromCharCode(...frame));
    expect(detectFormat("dump.txt", utf8(text + "\n"))).toBe("eventstream-base64");
    expect(importFile("dump.txt", utf8(text)).streams[0]?.events).toEqual([{ event: "messageStop", data: {} }]);
  });
});

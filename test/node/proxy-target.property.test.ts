import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { connectionTokens, normalizePath, resolveTarget } from "../../src/node/proxy-http.js";

/**
 * The request-target rules as invariants: whatever the client sends as a target, the URL the
 * proxy fetches is on the upstream's origin, under its base path (and under the route's prefix
 * when one is stripped), with no dot segment left; or the target is refused.
 */

const pieces = ["/", "/", "/", ".", "..", "%2e", "%2E", "%2e%2e", "\\", "?", "#", "a", "v1", "messages", ":", "@", "//", "%2f", "http:", "x.example", " ", "%00", "~"];
const target = fc.array(fc.constantFrom(...pieces), { maxLength: 16 }).map((parts) => parts.join(""));

describe("resolveTarget", () => {
  it("never leaves the upstream's origin or base path", () => {
    const upstream = new URL("https://api.example.com/base/v1");
    fc.assert(
      fc.property(target, (raw) => {
        const url = resolveTarget(raw, upstream);
        if (!(url instanceof URL)) return;
        expect(url.origin).toBe(upstream.origin);
        expect(url.pathname === "/base/v1" || url.pathname.startsWith("/base/v1/")).toBe(true);
        expect(url.pathname.split("/")).not.toContain("..");
      }),
      { numRuns: 2000 },
    );
  });

  it("with a stripped prefix, a target under the prefix maps under the upstream's base path", () => {
    const upstream = new URL("http://127.0.0.1:8000/");
    fc.assert(
      fc.property(target, (raw) => {
        const url = resolveTarget(`/vllm${raw.startsWith("/") ? raw : `/${raw}`}`, upstream, "/vllm");
        if (!(url instanceof URL)) return;
        expect(url.origin).toBe(upstream.origin);
      }),
      { numRuns: 1000 },
    );
  });

  it("only origin-form targets are taken, and a normalized path has no dot segment", () => {
    fc.assert(
      fc.property(target, (raw) => {
        const path = normalizePath(raw);
        if (!raw.startsWith("/")) expect(typeof path).toBe("object");
        if (typeof path === "string") {
          expect(path.startsWith("/")).toBe(true);
          expect(path.split("/")).not.toContain("..");
          expect(path.split("/")).not.toContain(".");
        }
      }),
      { numRuns: 2000 },
    );
  });

  it("examples", () => {
    const upstream = new URL("https://api.openai.com");
    expect(resolveTarget("pany://x/v1/chat/completions", upstream)).toHaveProperty("refused");
    expect(resolveTarget("http://other/v1", upstream)).toHaveProperty("refused");
    expect(resolveTarget("*", upstream)).toHaveProperty("refused");
    expect(resolveTarget("/v1/../../etc", upstream)).toHaveProperty("refused");
    expect((resolveTarget("/v1/chat/completions?x=1", upstream) as URL).href).toBe("https://api.openai.com/v1/chat/completions?x=1");
    expect((resolveTarget("/a/./b/../c", upstream) as URL).pathname).toBe("/a/c");
  });
});

describe("connectionTokens", () => {
  it("lower-cases, trims and drops empty tokens, over repeated headers", () => {
    expect([...connectionTokens(["close, X-Foo", " ,keep-alive,,"])]).toEqual(["close", "x-foo", "keep-alive"]);
    expect(connectionTokens(undefined).size).toBe(0);
  });
});

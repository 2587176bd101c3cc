import { readdirSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { createGeminiReencoder, createReencoder } from "../../src/reencode/index.js";
import { JsonArraySplitter } from "../../src/framing/json-array.js";
import { concatBytes } from "../../src/testing/wire.js";
import type { ProviderEvent } from "../../src/types.js";
import { cassetteBodies } from "../corpus/support.js";
import { regressionFiles } from "../fuzz/support.js";
import { corpusDir, describeCorpus } from "../helpers/corpus.js";
import { testdataFiles } from "../helpers/testdata.js";
import { bodyOf, check, decode, type Form } from "./gemini-support.js";
import { reencode, sseBody } from "./support.js";
import { cyclicPieces } from "../helpers/pieces.js";

/**
 * Gemini `streamGenerateContent` re-encoded, in both wire forms (SSE and the streamed JSON array):
 * decoding the output gives exactly the runnable calls toolwire decodes from the input (ids,
 * names, arguments, signatures), each well-formed; text and thoughts are kept; a stream that
 * needed no fix comes out byte for byte; chunking never changes the output.
 */

const encoder = new TextEncoder();
const decoder = new TextDecoder();

const recorded = [
  ...testdataFiles("gemini").flatMap((file) => file.streams.map((stream) => ({ key: `testdata/gemini/${file.name}#${stream.sequence ?? ""}`, events: stream.events }))),
  ...regressionFiles()
    // Open ones are known bugs: test/fuzz/regressions.test.ts checks that they still fail.
    .filter((file) => file.regression.provider === "gemini" && file.regression.status !== "open")
    .map((file) => ({ key: `testdata/regressions/${file.name}`, events: file.regression.mutated })),
];

describe.each(recorded.map((c) => [c.key, c] as const))("re-encoding %s", (_key, { events }) => {
  for (const form of ["sse", "json"] as const) {
    it(`${form}: toolwire's runnable calls, well-formed; unchanged when nothing needed a fix; chunking does not matter`, () => {
      const body = bodyOf(form, events);
      const { output } = check(form, body);
      expect(reencode("gemini", body, [1, 3, 17]).output).toEqual(output);
    });
  }
});

const upstream = corpusDir("upstream");
const cassettes = (upstream === null ? [] : readdirSync(upstream))
  .flatMap((dir) => {
    try {
      return readdirSync(join(upstream as string, dir)).map((name) => `${dir}/${name}`);
    } catch {
      return [];
    }
  })
  .filter((local) => /Google(Common)?__(gemini|vertex-gemini)|test_google__/.test(local) && local.endsWith(".yaml"));

describeCorpus("upstream", "re-encoding the upstream Gemini cassettes (raw SSE bodies, CRLF)", () => {
  it("finds them", () => expect(cassettes.length).toBeGreaterThanOrEqual(4));
  for (const local of cassettes) {
    it(local, () => {
      for (const raw of cassetteBodies(local)) {
        const body = typeof raw === "string" ? encoder.encode(raw) : raw;
        const { output } = check("sse", body);
        expect(reencode("gemini", body, [7, 2, 64]).output).toEqual(output);
      }
    });
  }
});

const chunk = (parts: unknown[], extra: Record<string, unknown> = {}): ProviderEvent => ({ data: { candidates: [{ content: { role: "model", parts }, index: 0, ...extra }], responseId: "resp-1", modelVersion: "gemini-test" } });
const finish = (reason: string): ProviderEvent => ({ data: { candidates: [{ content: { role: "model", parts: [{ text: "" }] }, finishReason: reason, index: 0 }], usageMetadata: { promptTokenCount: 5, candidatesTokenCount: 7, totalTokenCount: 12 }, responseId: "resp-1" } });
const call = (name: string, args: unknown, more: Record<string, unknown> = {}) => ({ functionCall: { name, ...(args !== undefined ? { args } : {}), ...more } });

function partsOut(form: Form, text: string): Array<Record<string, unknown>> {
  const payloads: unknown[] = form === "sse" ? text.split(/\r?\n\r?\n/).filter((block) => block.startsWith("data: ")).map((block) => JSON.parse(block.slice(6))) : (JSON.parse(text) as unknown[]);
  return payloads.flatMap((payload) => ((payload as { candidates?: Array<{ content?: { parts?: Array<Record<string, unknown>> } }> }).candidates ?? []).flatMap((candidate) => candidate.content?.parts ?? []));
}

function finishOut(form: Form, text: string): string[] {
  const payloads: unknown[] = form === "sse" ? text.split(/\r?\n\r?\n/).filter((block) => block.startsWith("data: ")).map((block) => JSON.parse(block.slice(6))) : (JSON.parse(text) as unknown[]);
  return payloads.flatMap((payload) => ((payload as { candidates?: Array<{ finishReason?: string }> }).candidates ?? []).flatMap((candidate) => (candidate.finishReason ? [candidate.finishReason] : [])));
}

describe.each(["sse", "json"] as const)("Gemini quirks (%s)", (form) => {
  it("calls without ids get the ids toolwire minted (the client's ids are the turn's)", () => {
    const { text, repairs, original } = check(form, bodyOf(form, [chunk([{ text: "Adding." }]), chunk([call("add", { a: 1 }), call("add", { a: 2 })]), finish("STOP")]));
    const ids = partsOut(form, text).flatMap((part) => (part.functionCall ? [(part.functionCall as { id?: string }).id] : []));
    expect(ids).toEqual(original.toolCalls.map((c) => c.id));
    expect(ids.every((id) => id?.startsWith("gemini_tw_"))).toBe(true);
    expect(repairs.map((r) => [r.action, r.code])).toEqual([
      ["rewritten", "call_id_minted"],
      ["rewritten", "call_id_minted"],
    ]);
  });

  it("calls sent with ids pass byte for byte", () => {
    const { repairs } = check(form, bodyOf(form, [chunk([call("add", { a: 1 }, { id: "c1" }), call("mul", { a: 2 }, { id: "c2" })]), finish("STOP")]));
    expect(repairs).toEqual([]);
  });

  it("a placeholder id (\"null\") is replaced", () => {
    const { text } = check(form, bodyOf(form, [chunk([call("add", { a: 1 }, { id: "null" })]), finish("STOP")]));
    expect(partsOut(form, text)[0]?.functionCall).toMatchObject({ name: "add", args: { a: 1 }, id: expect.stringMatching(/^gemini_tw_/) });
  });

  it("duplicate ids are made unique, and a call resent in a later chunk stays the decoder's second call", () => {
    const { text, again } = check(form, bodyOf(form, [chunk([call("add", { a: 1 }, { id: "k" }), call("add", { a: 2 }, { id: "k" })]), chunk([call("add", { a: 1 }, { id: "k" })]), finish("STOP")]));
    expect(again.toolCalls.map((c) => c.id)).toEqual(["k", "k_tw2", "k_tw3"]);
    expect(partsOut(form, text).map((part) => (part.functionCall as { id?: string } | undefined)?.id).filter(Boolean)).toEqual(["k", "k_tw2", "k_tw3"]);
  });

  it("args sent as a JSON string become the object; the part's thoughtSignature is kept", () => {
    const { text, repairs } = check(form, bodyOf(form, [chunk([{ ...call("add", '{"a":1}', { id: "c1" }), thoughtSignature: "c2ln" }]), finish("STOP")]));
    expect(partsOut(form, text)[0]).toEqual({ functionCall: { id: "c1", name: "add", args: { a: 1 } }, thoughtSignature: "c2ln" });
    expect(repairs).toEqual([expect.objectContaining({ action: "rewritten", code: "source_final", id: "c1" })]);
  });

  it("thought parts, signatures, usage and grounding pass untouched beside a fixed call", () => {
    const events = [
      chunk([{ text: "Let me think", thought: true }, { text: "", thoughtSignature: "c2lnMQ==" }]),
      chunk([{ ...call("look", { q: "x" }), thoughtSignature: "c2lnMg==" }], { groundingMetadata: { webSearchQueries: ["x"] } }),
      finish("STOP"),
    ];
    const { text, again } = check(form, bodyOf(form, events));
    const parts = partsOut(form, text);
    expect(parts[0]).toEqual({ text: "Let me think", thought: true });
    expect(parts[1]).toEqual({ text: "", thoughtSignature: "c2lnMQ==" });
    expect(parts[2]).toMatchObject({ thoughtSignature: "c2lnMg==", functionCall: { name: "look", args: { q: "x" } } });
    expect(text).toContain('"groundingMetadata":{"webSearchQueries":["x"]}');
    expect(again.toolCalls[0]?.providerFields?.thoughtSignature).toBe("c2lnMg==");
  });

  it("a call whose args are not an object is withheld; with no call left, STOP says MALFORMED_FUNCTION_CALL", () => {
    const { text, repairs, again } = check(form, bodyOf(form, [chunk([call("add", [1, 2], { id: "c1" })]), finish("STOP")]));
    expect(partsOut(form, text).some((part) => part.functionCall)).toBe(false);
    expect(finishOut(form, text)).toEqual(["MALFORMED_FUNCTION_CALL"]);
    expect(repairs.map((r) => [r.action, r.code])).toEqual([
      ["withheld", "not_object"],
      ["normalized", "finish_reason_without_calls"],
    ]);
    expect(again.finishReason).toBe("error");
  });

  it("an invalid call beside a good one: only the invalid one is withheld, STOP stays", () => {
    const { text } = check(form, bodyOf(form, [chunk([call("add", "nope", { id: "c1" }), call("mul", { a: 1 }, { id: "c2" })]), finish("STOP")]));
    expect(partsOut(form, text).map((part) => (part.functionCall as { id?: string } | undefined)?.id).filter(Boolean)).toEqual(["c2"]);
    expect(finishOut(form, text)).toEqual(["STOP"]);
  });

  it("MAX_TOKENS inside a string args is truncated and withheld; MAX_TOKENS stays", () => {
    const { text, repairs } = check(form, bodyOf(form, [chunk([call("write", '{"path":"a.txt","text":"hel', { id: "c1" })]), finish("MAX_TOKENS")]));
    expect(partsOut(form, text).some((part) => part.functionCall)).toBe(false);
    expect(finishOut(form, text)).toEqual(["MAX_TOKENS"]);
    expect(repairs).toEqual([expect.objectContaining({ action: "withheld", code: "truncated", id: "c1" })]);
  });

  const streamed = (cut: "none" | "max_tokens" | "eof"): ProviderEvent[] => [
    chunk([{ text: "Checking." }]),
    chunk([{ ...call("getWeather", undefined, { id: "w1", willContinue: true }), thoughtSignature: "c2ln" }]),
    chunk([{ functionCall: { partialArgs: [{ jsonPath: "$.location", stringValue: "Bos", willContinue: true }], willContinue: true } }]),
    chunk([{ functionCall: { partialArgs: [{ jsonPath: "$.location", stringValue: "ton" }], willContinue: true } }]),
    ...(cut === "none" ? [chunk([{ functionCall: {} }]), finish("STOP")] : cut === "max_tokens" ? [finish("MAX_TOKENS")] : []),
  ];

  it("streamed arguments (partialArgs) pass as sent when the call is whole", () => {
    const { repairs, again } = check(form, bodyOf(form, streamed("none")));
    expect(repairs).toEqual([]);
    expect(again.toolCalls).toMatchObject([{ id: "w1", name: "getWeather", arguments: { location: "Boston" } }]);
  });

  it("a streamed call cut by MAX_TOKENS or by the end of the stream is withheld, the text before it delivered", () => {
    for (const cut of ["max_tokens", "eof"] as const) {
      const { text, repairs, again } = check(form, bodyOf(form, streamed(cut)));
      expect(again.toolCalls).toEqual([]);
      expect(again.text).toBe("Checking.");
      expect(partsOut(form, text).some((part) => part.functionCall)).toBe(false);
      expect(repairs).toEqual([expect.objectContaining({ action: "withheld", code: "truncated", name: "getWeather" })]);
    }
  });

  it("a streamed call without an id gets one on its first part; its leaves stay as sent", () => {
    const events = streamed("none").map((event) => JSON.parse(JSON.stringify(event).replace('"id":"w1",', "")) as ProviderEvent);
    const { text, original } = check(form, bodyOf(form, events));
    const parts = partsOut(form, text).filter((part) => part.functionCall);
    expect(parts).toHaveLength(4);
    expect(parts[0]).toMatchObject({ functionCall: { name: "getWeather", willContinue: true, id: original.toolCalls[0]?.id }, thoughtSignature: "c2ln" });
  });

  it("forwards what is decided at once: text before a call, a whole call, and holds a streamed call until it ends", () => {
    const reencoder = createReencoder("gemini");
    const events = streamed("none");
    const pieces = form === "sse" ? events.map((event) => sseBody("gemini", [event])) : events.map((event, i) => (i === 0 ? "[" : ",\r\n") + JSON.stringify(event.data));
    const out = pieces.map((piece) => decoder.decode(concatBytes(reencoder.push(encoder.encode(piece)))));
    expect(out[0]).toContain("Checking.");
    // The array's separators may go ahead of a held element; nothing else does.
    for (const held of out.slice(1, 4)) expect(held.replace(/[,\s]/g, "")).toBe("");
    expect(out[4]).toContain("getWeather");
    expect(out[4]).toContain('"stringValue":"ton"');
    expect(out[5]).toContain("STOP");
  });
});

describe("Gemini re-encoding, any chunk boundary", () => {
  const events = [chunk([{ text: "Hi é ✓" }]), chunk([call("add", "{\"a\":1}"), call("mul", { b: [1, 2] }, { id: "m" })]), finish("STOP")];
  for (const form of ["sse", "json"] as const) {
    it(`${form}: splitting the body at every byte gives the same output`, () => {
      const body = bodyOf(form, events);
      const whole = reencode("gemini", body).output;
      for (let at = 0; at <= body.length; at++) {
        const reencoder = createReencoder("gemini");
        const output = concatBytes([...reencoder.push(body.subarray(0, at)), ...reencoder.push(body.subarray(at)), ...reencoder.end()]);
        expect(output, `split at ${at}`).toEqual(whole);
      }
    });
  }

  it("CRLF SSE, leading white space, comments and an array's own separators are kept", () => {
    const sse = `\r\n: keep-alive\r\n\r\ndata: ${JSON.stringify(chunk([{ text: "a" }]).data)}\r\n\r\ndata: ${JSON.stringify(finish("STOP").data)}\r\n\r\n`;
    expect(decoder.decode(reencode("gemini", encoder.encode(sse), [5]).output)).toBe(sse);
    const array = ` [${JSON.stringify(chunk([{ text: "a" }]).data)}\n,\r\n${JSON.stringify(finish("STOP").data)}\n]\n`;
    expect(decoder.decode(reencode("gemini", encoder.encode(array), [5]).output)).toBe(array);
    const single = JSON.stringify({ error: { code: 429, message: "quota", status: "RESOURCE_EXHAUSTED" } });
    expect(decoder.decode(reencode("gemini", encoder.encode(single), [3]).output)).toBe(single);
  });

  it("an unchanged SSE event is forwarded as its own bytes, even bytes that are not UTF-8", () => {
    const head = encoder.encode('data: {"candidates":[{"content":{"role":"model","parts":[{"text":"caf');
    const tail = encoder.encode(`"}]},"index":0}]}\n\ndata: ${JSON.stringify(finish("STOP").data)}\n\n`);
    const body = concatBytes([head, Uint8Array.of(0xc3), tail]);
    for (const sizes of [[body.length], [1], [5, 2]]) expect(reencode("gemini", body, sizes).output).toEqual(body);
  });

  it("a chunk the decoder ignores (too deep) is not forwarded, and the calls after it keep their own ids", () => {
    let deep: unknown = 1;
    for (let i = 0; i < 2000; i++) deep = [deep];
    const events = [chunk([call("a", { x: 1 }), call("b", { deep })]), chunk([call("c", { y: 2 })]), finish("STOP")];
    for (const form of ["sse", "json"] as const) {
      const { text, repairs, again } = check(form, bodyOf(form, events));
      expect(again.toolCalls.map((c) => c.name)).toEqual(["c"]);
      expect(text).not.toContain('"name":"a"');
      expect(repairs).toContainEqual(expect.objectContaining({ action: "withheld", code: "event_too_deep" }));
      if (form === "json") expect((JSON.parse(text) as unknown[])[0]).toEqual({});
    }
  });

  it("the JSON-array splitter gives back every character, whatever the chunking", () => {
    fc.assert(
      fc.property(
        fc.array(fc.jsonValue({ maxDepth: 3 }), { maxLength: 5 }),
        fc.constantFrom(",", ",\r\n", "\n,\r\n", " , "),
        fc.array(fc.integer({ min: 1, max: 9 }), { minLength: 1, maxLength: 4 }),
        (values, separator, sizes) => {
          const text = `[${values.map((value) => JSON.stringify(value)).join(separator)}]`;
          const bytes = encoder.encode(text);
          const splitter = new JsonArraySplitter();
          const pieces = [];
          for (const piece of cyclicPieces(bytes, sizes)) pieces.push(...splitter.push(piece));
          pieces.push(...splitter.flush());
          expect(pieces.map((piece) => piece.raw).join("")).toBe(text);
          expect(pieces.flatMap((piece) => (piece.kind === "element" ? [piece.event.data] : []))).toEqual(values.map((value) => JSON.parse(JSON.stringify(value)) as unknown));
        },
      ),
    );
  });
});

describe("Gemini re-encoding of arbitrary part sequences", () => {
  // Parts built from every field the decoder reads, with wrong types too: the re-encoder's view of
  // which part belongs to which call must agree with the decoder's, whatever arrives.
  const scalar = fc.oneof(fc.constant(null), fc.boolean(), fc.integer({ min: -2, max: 2 }), fc.constantFrom("", "x", "null", "id-1", "{}", '{"a":1}', "[1]", '{"a":'));
  const leaf = fc.record(
    { jsonPath: fc.oneof(fc.constantFrom("$.a", "$.b", "$.a.b", "$.l[0]", "$.l[1]", "$", "a"), scalar), stringValue: fc.oneof(fc.string({ maxLength: 4 }), scalar), numberValue: scalar, willContinue: fc.boolean() },
    { requiredKeys: [] },
  );
  const functionCall = fc.record(
    {
      name: fc.oneof(fc.constantFrom("f", "g"), scalar),
      id: fc.oneof(fc.constantFrom("c1", "c2", "null"), scalar),
      args: fc.oneof(fc.dictionary(fc.constantFrom("a", "b"), fc.integer(), { maxKeys: 2 }), scalar, fc.array(fc.integer(), { maxLength: 2 })),
      willContinue: fc.oneof(fc.boolean(), scalar),
      partialArgs: fc.oneof(fc.array(leaf, { maxLength: 3 }), scalar),
    },
    { requiredKeys: [] },
  );
  const part = fc.oneof(
    fc.record({ functionCall, thoughtSignature: fc.constantFrom("s1", "s2") }, { requiredKeys: ["functionCall"] }),
    fc.record({ text: fc.string({ maxLength: 5 }), thought: fc.boolean() }, { requiredKeys: ["text"] }),
    scalar,
  );
  const candidate = fc.record(
    { content: fc.record({ role: fc.constant("model"), parts: fc.array(part, { maxLength: 3 }) }), finishReason: fc.constantFrom("STOP", "MAX_TOKENS", "SAFETY"), index: fc.constantFrom(0, 0, 0, 1) },
    { requiredKeys: ["content"] },
  );
  const event = fc.oneof(
    { weight: 8, arbitrary: fc.record({ candidates: fc.array(candidate, { minLength: 1, maxLength: 2 }), responseId: fc.constant("r") }, { requiredKeys: ["candidates"] }) },
    { weight: 1, arbitrary: fc.constant({ error: { code: 500, message: "boom", status: "INTERNAL" } }) },
  );

  it("decode(re-encode(body)) holds exactly toolwire's runnable calls, in both forms and any chunking", () => {
    fc.assert(
      fc.property(fc.array(event, { minLength: 1, maxLength: 6 }), fc.constantFrom<Form>("sse", "json"), fc.array(fc.integer({ min: 1, max: 40 }), { minLength: 1, maxLength: 3 }), (events, form, sizes) => {
        check(form, bodyOf(form, events.map((data) => ({ data }))), sizes);
      }),
      { numRuns: 300 },
    );
  });
});

describe("Gemini on Vertex (addMissingIds: false): no id where Vertex sent none", () => {
  // Vertex rejects `id` in a history's functionCall parts, so a call sent without an id must reach
  // the client without one; every other fix still applies.
  function vertex(form: Form, events: ProviderEvent[]) {
    const body = bodyOf(form, events);
    const reencoder = createGeminiReencoder({ addMissingIds: false });
    const output = concatBytes([...reencoder.push(body), ...reencoder.end()]);
    const original = decode(form, body);
    const again = decode(form, output);
    const minted = (id: string) => (id.startsWith("gemini_tw_") ? "(minted)" : id);
    expect(again.toolCalls.map((c) => ({ id: minted(c.id), name: c.name, arguments: c.arguments }))).toEqual(
      original.toolCalls.filter((c) => c.arguments !== null).map((c) => ({ id: minted(c.id), name: c.name, arguments: c.arguments })),
    );
    for (const c of again.toolCalls) expect(c).toMatchObject({ complete: true, repairs: [], error: null });
    return { body: decoder.decode(body), text: decoder.decode(output), repairs: reencoder.repairs };
  }

  for (const form of ["sse", "json"] as const) {
    it(`${form}: calls without ids pass byte for byte; fixed calls get no id; placeholder ids are dropped; duplicates still made unique`, () => {
      for (const stream of testdataFiles("gemini").flatMap((file) => file.streams)) {
        const { body, text, repairs } = vertex(form, stream.events);
        if (repairs.length === 0) expect(text).toBe(body);
      }
      const plain = vertex(form, [chunk([call("add", { a: 1 }), call("mul", { a: 2 })]), finish("STOP")]);
      expect(plain.text).toBe(plain.body);
      const fixed = vertex(form, [chunk([call("add", '{"a":1}'), call("t", { z: 1 }, { id: "null" })]), finish("STOP")]);
      expect(partsOut(form, fixed.text).flatMap((part) => (part.functionCall ? [part.functionCall] : []))).toEqual([
        { name: "add", args: { a: 1 } },
        { name: "t", args: { z: 1 } },
      ]);
      const duplicates = vertex(form, [chunk([call("add", { a: 1 }, { id: "k" }), call("add", { a: 2 }, { id: "k" })]), finish("STOP")]);
      expect(partsOut(form, duplicates.text).flatMap((part) => (part.functionCall ? [(part.functionCall as { id?: string }).id] : []))).toEqual(["k", "k_tw2"]);
    });
  }
});

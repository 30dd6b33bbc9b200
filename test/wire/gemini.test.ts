import { describe, expect, test } from "bun:test";
import { createParser } from "eventsource-parser";
import { GatewayError } from "../../src/errors.ts";
import type { ChatRequest, StreamEvent } from "../../src/ir.ts";
import { decodeRequest } from "../../src/wire/gemini/decode-request.ts";
import { encodeRequest } from "../../src/wire/gemini/encode-request.ts";
import { errorBody, geminiError, statusWord } from "../../src/wire/gemini/errors.ts";
import { fromFinishReason, toFinishReason } from "../../src/wire/gemini/finish-reason.ts";
import { decodeReply, encodeReply } from "../../src/wire/gemini/reply.ts";
import { carriedSignature, recalledSignature, rememberSignature, signaturePart } from "../../src/wire/gemini/signatures.ts";
import { streamDecoder, streamEncoder } from "../../src/wire/gemini/stream.ts";
import { fromGemini, toGemini, usageIn } from "../../src/wire/gemini/usage.ts";
import { decodeBatchEmbed, decodeEmbedRequest, encodeBatchEmbed, encodeEmbeddings } from "../../src/wire/gemini/embeddings.ts";
import type { Upstream } from "../../src/wire/upstream-errors.ts";

/** The Gemini wire module, function by function, on payloads recorded from the API (test/wire/fixtures/gemini). */
const up: Upstream = { label: "Gemini upstream 'gem'", url: "http://gemini", credentials: "api_key in [upstreams.gem]" };
const fixture = (name: string) => Bun.file(new URL(`./fixtures/gemini/${name}`, import.meta.url));
const sseData = async (name: string) => {
  const data: unknown[] = [];
  const parser = createParser({ onEvent: (e) => void data.push(JSON.parse(e.data)) });
  parser.feed(await fixture(name).text());
  return data;
};

describe("replies from Gemini", () => {
  test("text: usage with the cache read and the thoughts counted as output", async () => {
    const reply = decodeReply(await fixture("reply-text.json").json(), up);
    expect(reply).toEqual({
      id: "Xk8oaPO6Hp2s1dkP-9LQsQ4",
      content: [{ type: "text", text: "The capital of France is **Paris**." }],
      finish: { reason: "stop", raw: "STOP" },
      usage: { input: { total: 2080, cacheRead: 2043, cacheWrite: 0 }, output: 9 + 28 },
    });
  });

  test("parallel function calls: ids made up, the first one's signature carried before it and remembered", async () => {
    const reply = decodeReply(await fixture("reply-function-call.json").json(), up);
    expect(reply.finish).toEqual({ reason: "tool_calls", raw: "STOP" });
    const [carrier, first, second] = reply.content;
    expect(carrier).toEqual(signaturePart("CiIBVKhc7oDKkS7ZyDbyZ9L3Q6QhI2uWmQ6pXzRz1cFqk2dF"));
    expect(first).toMatchObject({ type: "tool_call", name: "get_weather", arguments: '{"location":"Paris","unit":"celsius"}' });
    expect(second).toMatchObject({ type: "tool_call", name: "get_time" });
    const id = (first as { id: string }).id;
    expect(id).toStartWith("call_gmn_");
    expect(recalledSignature(id)).toBe("CiIBVKhc7oDKkS7ZyDbyZ9L3Q6QhI2uWmQ6pXzRz1cFqk2dF");
    expect(recalledSignature((second as { id: string }).id)).toBeUndefined();
  });

  test("thought summaries are reasoning; a text part's signature is carried; MAX_TOKENS is length", async () => {
    const reply = decodeReply(await fixture("reply-thoughts.json").json(), up);
    expect(reply.content).toEqual([
      { type: "reasoning", text: "**Weighing the options**\n\nThe user asks for a short answer." },
      signaturePart("EvYBCvMBAdHtim8tThoughtSig"),
      { type: "text", text: "Forty-two." },
    ]);
    expect(reply.finish).toEqual({ reason: "length", raw: "MAX_TOKENS" });
  });

  test("a blocked prompt: no candidate, content_filter with Gemini's reason", async () => {
    const reply = decodeReply(await fixture("reply-blocked.json").json(), up);
    expect(reply).toMatchObject({ content: [], finish: { reason: "content_filter", raw: "PROHIBITED_CONTENT" } });
  });

  test("replies of the wrong shape are the upstream failing (503), never a 500", () => {
    for (const body of [null, [], { candidates: {} }, { candidates: [{ content: { parts: [{ functionCall: { args: {} } }] } }] }, {}]) {
      expect(() => decodeReply(body, up)).toThrow(GatewayError);
    }
  });

  test("a stream: start, text deltas, the signature, usage as counted so far, the finish", async () => {
    const decode = streamDecoder(up);
    const events = (await sseData("stream.chunks.txt")).flatMap((chunk) => decode(chunk));
    expect(events[0]).toEqual({ type: "start", id: "streamed01" });
    expect(events.filter((e) => e.type === "text").map((e) => (e as { text: string }).text).join("")).toBe("Why did the chicken cross the road? To get to the other side.");
    expect(events).toContainEqual({ type: "reasoning", text: "", signature: "gemini:CiQBVKhc7l2StreamSig" });
    expect(events.at(-2)).toEqual({ type: "usage", usage: { input: { total: 9, cacheRead: 4, cacheWrite: 0 }, output: 42 } });
    expect(events.at(-1)).toEqual({ type: "finish", finish: { reason: "stop", raw: "STOP" } });
    expect(usageIn(await fixture("stream.chunks.txt").text())).toEqual({ input: { total: 9, cacheRead: 4, cacheWrite: 0 }, output: 42 });
  });

  test("a function call streams whole: its name, then all its arguments; an error chunk fails the stream", async () => {
    const decode = streamDecoder(up);
    const events = decode(await fixture("reply-function-call.json").json());
    expect(events.filter((e) => e.type === "tool_call" || e.type === "tool_args").map((e) => e.type)).toEqual(["tool_call", "tool_args", "tool_call", "tool_args"]);
    expect(events.at(-1)).toEqual({ type: "finish", finish: { reason: "tool_calls", raw: "STOP" } });
    expect(() => decode({ error: { code: 500, message: "Internal error encountered.", status: "INTERNAL" } })).toThrow("failed in the middle of its reply");
  });
});

describe("requests to Gemini", () => {
  const request: ChatRequest = {
    system: ["Be brief."],
    messages: [
      { role: "user", content: [{ type: "text", text: "What is in this picture?" }, { type: "image", mediaType: "image/png", data: "iVBORw0KGgo=" }] },
      { role: "system", content: [{ type: "text", text: "Answer in French." }] },
      { role: "assistant", content: [{ type: "reasoning", text: "Claude's own thinking", signature: "EqQBClaudeSig" }, { type: "text", text: "Je regarde." }, { type: "tool_call", id: "toolu_1", name: "zoom", arguments: '{"factor":2}' }] },
      { role: "user", content: [{ type: "tool_result", toolCallId: "toolu_1", content: "a cat", isError: false }] },
      { role: "user", content: [{ type: "text", text: "And now?" }] },
    ],
    maxTokens: 500, temperature: 1.2, topP: 0.9, topK: 40, stop: ["END"],
    tools: [{ name: "zoom", parameters: { type: "object", properties: { factor: { type: "number" } }, additionalProperties: false } }],
    toolChoice: { type: "tool", name: "zoom" },
    stream: false, includeUsage: true, fileIds: [], responseFormat: { type: "json_object" }, thinking: true,
  };

  test("the whole IR as a generateContent body", () => {
    expect(encodeRequest(request, "Gemini upstream 'gem'", "gemini-2.5-pro")).toEqual({
      contents: [
        { role: "user", parts: [{ text: "What is in this picture?" }, { inlineData: { mimeType: "image/png", data: "iVBORw0KGgo=" } }] },
        // Another family's reasoning stays out; a call with no signature to a model before Gemini 3 goes as it is.
        { role: "model", parts: [{ text: "Je regarde." }, { functionCall: { id: "toolu_1", name: "zoom", args: { factor: 2 } } }] },
        // The tool's result and the next question are one user turn: Gemini alternates.
        { role: "user", parts: [{ functionResponse: { id: "toolu_1", name: "zoom", response: { output: "a cat" } } }, { text: "And now?" }] },
      ],
      systemInstruction: { parts: [{ text: "Be brief.\n\nAnswer in French." }] },
      tools: [{ functionDeclarations: [{ name: "zoom", parametersJsonSchema: { type: "object", properties: { factor: { type: "number" } }, additionalProperties: false } }] }],
      toolConfig: { functionCallingConfig: { mode: "ANY", allowedFunctionNames: ["zoom"] } },
      generationConfig: { maxOutputTokens: 500, temperature: 1.2, topP: 0.9, topK: 40, stopSequences: ["END"], responseMimeType: "application/json", thinkingConfig: { includeThoughts: true } },
    });
  });

  test("signatures go back where Gemini put them: on the call, on signed thought text; Gemini 3 gets the skip value for an unsigned first call", () => {
    rememberSignature("call_kept", "SigKeptInProcess");
    const turn = (content: ChatRequest["messages"][number]["content"]): ChatRequest => ({ ...request, tools: undefined, toolChoice: undefined, responseFormat: undefined, thinking: undefined, system: [], messages: [{ role: "user", content: [{ type: "text", text: "q" }] }, { role: "assistant", content }] });
    const model = (r: ChatRequest, m: string) => (encodeRequest(r, "g", m).contents as { parts: unknown[] }[])[1]!.parts;
    expect(model(turn([{ type: "tool_call", id: "call_kept", name: "f", arguments: "{}" }]), "gemini-3-pro-preview")).toEqual([{ functionCall: { id: "call_kept", name: "f", args: {} }, thoughtSignature: "SigKeptInProcess" }]);
    expect(model(turn([signaturePart("S1"), { type: "reasoning", text: "thinking aloud" }, { type: "text", text: "done" }]), "gemini-2.5-pro")).toEqual([{ text: "thinking aloud", thought: true, thoughtSignature: "S1" }, { text: "done" }]);
    expect(model(turn([{ type: "tool_call", id: "a", name: "f", arguments: "{}" }, { type: "tool_call", id: "b", name: "g", arguments: "{}" }]), "gemini-3-flash")).toEqual([
      { functionCall: { id: "a", name: "f", args: {} }, thoughtSignature: "skip_thought_signature_validator" },
      { functionCall: { id: "b", name: "g", args: {} } },
    ]);
  });

  test("what only its own family reads is refused, naming it; remote images too", () => {
    expect(() => encodeRequest({ ...request, unsupported: ["tools[0] (the server tool web_search)"] }, "Gemini upstream 'gem'", "gemini-2.5-pro")).toThrow("web_search");
    const remote: ChatRequest = { ...request, messages: [{ role: "user", content: [{ type: "image_url", url: "https://example.com/cat.png" }] }] };
    expect(() => encodeRequest(remote, "Gemini upstream 'gem'", "gemini-2.5-pro")).toThrow("Remote image URLs");
  });
});

describe("a Gemini client's side", () => {
  test("Gemini CLI's body -> IR: signatures carried, responses matched to calls, OpenAPI schemas as JSON Schema", async () => {
    const ir = decodeRequest(await fixture("request-gemini-cli.json").json(), "gemini-2.5-pro", true);
    expect(ir).toMatchObject({ model: "gemini-2.5-pro", stream: true, system: ["You are an interactive CLI agent."], maxTokens: 8192, temperature: 0, topP: 1, toolChoice: { type: "auto" }, thinking: true });
    expect(ir.messages[1]!.content).toEqual([
      { type: "reasoning", text: "I'll list them." },
      signaturePart("CiIBsigFromCli"),
      { type: "tool_call", id: "call-1", name: "list_directory", arguments: '{"path":"."}' },
    ]);
    expect(ir.messages[2]!.content).toEqual([{ type: "tool_result", toolCallId: "call-1", content: "a.txt\nb.txt" }]);
    expect(ir.tools![1]!.parameters).toEqual({ type: "object", properties: { absolute_path: { type: ["string", "null"] } }, required: ["absolute_path"] });
    expect(ir.unsupported).toBeUndefined();
  });

  test("calls without ids are answered by name, in order; Google Search and cached content are named as unsupported", () => {
    const ir = decodeRequest({
      contents: [
        { role: "model", parts: [{ functionCall: { name: "f", args: { n: 1 } } }, { functionCall: { name: "f", args: { n: 2 } } }] },
        { role: "user", parts: [{ functionResponse: { name: "f", response: { error: "boom" } } }, { functionResponse: { name: "f", response: { a: 1 } } }] },
      ],
      tools: [{ googleSearch: {} }],
      cachedContent: "cachedContents/abc",
    });
    const [a, b] = ir.messages[0]!.content as { id: string }[];
    expect(ir.messages[1]!.content).toEqual([{ type: "tool_result", toolCallId: a!.id, content: "boom", isError: true }, { type: "tool_result", toolCallId: b!.id, content: '{"a":1}' }]);
    expect(ir.unsupported).toEqual(["tools[0].googleSearch", "cachedContent"]);
    expect(() => decodeRequest({})).toThrow("contents");
    expect(() => decodeRequest({ contents: [{ role: "robot", parts: [] }] })).toThrow(GatewayError);
  });

  test("a reply as GenerateContentResponse: signatures back on their parts, the client's finish word, usage", () => {
    rememberSignature("toolu_9", "SigOfToolu9");
    const body = encodeReply({
      id: "r1",
      content: [{ type: "reasoning", text: "hmm", signature: "EqClaude" }, { type: "text", text: "Calling." }, { type: "tool_call", id: "toolu_9", name: "f", arguments: '{"x":1}' }],
      finish: { reason: "tool_calls", raw: "tool_use" },
      usage: { input: { total: 30, cacheRead: 10, cacheWrite: 5 }, output: 4 },
    }, "gemini-2.5-pro");
    expect(body).toEqual({
      candidates: [{ content: { role: "model", parts: [{ text: "hmm", thought: true }, { text: "Calling." }, { functionCall: { id: "toolu_9", name: "f", args: { x: 1 } }, thoughtSignature: "SigOfToolu9" }] }, finishReason: "STOP", index: 0 }],
      usageMetadata: { promptTokenCount: 30, candidatesTokenCount: 4, totalTokenCount: 34, cachedContentTokenCount: 10 },
      modelVersion: "gemini-2.5-pro",
      responseId: "r1",
    });
  });

  test("a stream as Gemini writes it: a chunk per delta, calls whole, the finish with the usage last", () => {
    const encoder = streamEncoder("gemini-2.5-pro");
    const events: StreamEvent[] = [
      { type: "start", id: "x", usage: { input: { total: 50, cacheRead: 0, cacheWrite: 0 } } },
      { type: "reasoning", text: "Let me see." },
      { type: "text", text: "Sure" },
      { type: "reasoning", text: "", signature: "gemini:SigA" },
      { type: "tool_call", index: 0, id: "c1", name: "f" },
      { type: "tool_args", index: 0, text: '{"a":' },
      { type: "tool_args", index: 0, text: "1}" },
      { type: "finish", finish: { reason: "tool_calls", raw: "tool_calls" } },
      { type: "usage", usage: { output: 7 } },
    ];
    const chunks = [...events.flatMap((e) => encoder.event(e)), ...encoder.end()].map((e) => e.data as { candidates: { content: { parts: unknown[] }; finishReason?: string }[]; usageMetadata?: unknown });
    expect(chunks.map((c) => c.candidates[0]!.content.parts)).toEqual([
      [{ text: "Let me see.", thought: true }],
      [{ text: "Sure" }],
      [{ functionCall: { id: "c1", name: "f", args: { a: 1 } }, thoughtSignature: "SigA" }],
      [],
    ]);
    expect(chunks.at(-1)).toMatchObject({ candidates: [{ finishReason: "STOP" }], usageMetadata: { promptTokenCount: 50, candidatesTokenCount: 7, totalTokenCount: 57 } });
    expect(encoder.error(new GatewayError(503, "service_unavailable_error", "gone"))).toEqual([{ data: { error: { code: 503, message: "gone", status: "UNAVAILABLE" } } }]);
  });
});

describe("finish reasons, usage, errors, embeddings", () => {
  test("finish reasons both ways, the raw word kept", () => {
    expect(fromFinishReason("SAFETY")).toEqual({ reason: "content_filter", raw: "SAFETY" });
    expect(fromFinishReason("MALFORMED_FUNCTION_CALL")).toEqual({ reason: "other", raw: "MALFORMED_FUNCTION_CALL" });
    expect(fromFinishReason("SOMETHING_NEW")).toEqual({ reason: "other", raw: "SOMETHING_NEW" });
    expect(toFinishReason({ reason: "other", raw: "RECITATION" })).toBe("RECITATION");
    expect(toFinishReason({ reason: "length", raw: "max_tokens" })).toBe("MAX_TOKENS");
    expect(toFinishReason({ reason: "content_filter", raw: "refusal" })).toBe("SAFETY");
    expect(toFinishReason({ reason: "stop_sequence", raw: "stop_sequence" })).toBe("STOP");
  });

  test("usage: the prompt with its cache and tool-use prompt; thoughts are output", () => {
    expect(fromGemini({ promptTokenCount: 100, toolUsePromptTokenCount: 20, cachedContentTokenCount: 60, candidatesTokenCount: 5, thoughtsTokenCount: 50 })).toEqual({ input: { total: 120, cacheRead: 60, cacheWrite: 0 }, output: 55 });
    expect(fromGemini(undefined)).toBeUndefined();
    expect(toGemini({ input: { total: 10, cacheRead: 0, cacheWrite: 0 }, output: 2 })).toEqual({ promptTokenCount: 10, candidatesTokenCount: 2, totalTokenCount: 12 });
  });

  test("Google's envelope: status words by status; errors read from Gemini mapped as the contract says", () => {
    const words = [400, 401, 403, 404, 429, 500, 503, 504].map(statusWord);
    expect(words).toEqual(["INVALID_ARGUMENT", "UNAUTHENTICATED", "PERMISSION_DENIED", "NOT_FOUND", "RESOURCE_EXHAUSTED", "INTERNAL", "UNAVAILABLE", "DEADLINE_EXCEEDED"]);
    expect(errorBody(new GatewayError(404, "not_found_error", "Model 'x' not found"))).toEqual({ error: { code: 404, message: "Model 'x' not found", status: "NOT_FOUND" } });
    const overflow = new GatewayError(400, "invalid_request_error", "too long", { overflow: { tokens: 2000, limit: 1000 } });
    expect(errorBody(overflow)).toEqual({ error: { code: 400, message: "The input token count (2000) exceeds the maximum number of tokens allowed (1000).", status: "INVALID_ARGUMENT" } });
    const envelope = (code: number, status: string, message: string) => JSON.stringify({ error: { code, message, status } });
    expect(geminiError(up, 503, envelope(503, "UNAVAILABLE", "The model is overloaded."), null)).toMatchObject({ status: 503, retryable: true });
    expect(geminiError(up, 504, envelope(504, "DEADLINE_EXCEEDED", "Deadline expired."), null)).toMatchObject({ status: 504, retryable: true });
    expect(geminiError(up, 404, envelope(404, "NOT_FOUND", "models/gemini-9 is not found"), null)).toMatchObject({ status: 404, retryable: false });
    expect(geminiError(up, 403, envelope(403, "PERMISSION_DENIED", "Permission denied"), null)).toMatchObject({ status: 502, retryable: false });
    // Google sometimes wraps the envelope in a list.
    expect(geminiError(up, 400, `[${envelope(400, "INVALID_ARGUMENT", "Bad thing")}]`, null, true)).toMatchObject({ status: 400, message: "Bad thing" });
  });

  test("embeddings both ways", () => {
    expect(encodeBatchEmbed({ texts: ["a"], tokens: false, inputType: "clustering" }, "text-embedding-004")).toEqual({ requests: [{ model: "models/text-embedding-004", content: { parts: [{ text: "a" }] }, taskType: "CLUSTERING" }] });
    expect(decodeBatchEmbed({ embeddings: [{ values: [1, 2] }] }, up, 1)).toEqual({ vectors: [[1, 2]], inputTokens: 0 });
    expect(() => decodeBatchEmbed({ embeddings: [] }, up, 1)).toThrow(GatewayError);
    expect(decodeEmbedRequest({ requests: [{ content: { parts: [{ text: "x" }] }, taskType: "RETRIEVAL_QUERY", outputDimensionality: 8 }] }, "m", true)).toEqual({ model: "m", texts: ["x"], tokens: false, dimensions: 8, inputType: "search_query" });
    expect(encodeEmbeddings({ vectors: [[1]], inputTokens: 1 }, false)).toEqual({ embedding: { values: [1] } });
  });

  test("the signature map is bounded: the least recently used goes first", () => {
    rememberSignature("oldest", "s0");
    for (let i = 0; i < 5000; i++) rememberSignature(`fill-${i}`, "s");
    expect(recalledSignature("oldest")).toBeUndefined();
    expect(recalledSignature("fill-4999")).toBe("s");
    expect(carriedSignature({ type: "reasoning", text: "", signature: "EqClaudeSig" })).toBeUndefined();
  });
});

test("a model turn left empty (only Claude's thinking) goes, and the user turns around it join", () => {
  const body = encodeRequest({
    system: [], stream: false, includeUsage: true, fileIds: [],
    messages: [
      { role: "user", content: [{ type: "text", text: "a" }] },
      { role: "assistant", content: [{ type: "reasoning", text: "hidden", signature: "EqClaude" }] },
      { role: "user", content: [{ type: "text", text: "b" }] },
    ],
  }, "g", "gemini-2.5-pro");
  expect(body.contents).toEqual([{ role: "user", parts: [{ text: "a" }, { text: "b" }] }]);
});

test("thought summaries are asked for only from models that think", () => {
  const request: ChatRequest = { system: [], stream: false, includeUsage: true, fileIds: [], thinking: true, messages: [{ role: "user", content: [{ type: "text", text: "a" }] }] };
  expect(encodeRequest(request, "g", "gemini-2.5-flash").generationConfig).toEqual({ thinkingConfig: { includeThoughts: true } });
  expect(encodeRequest(request, "g", "gemini-3-pro-preview").generationConfig).toEqual({ thinkingConfig: { includeThoughts: true } });
  expect(encodeRequest(request, "g", "gemini-2.0-flash").generationConfig).toBeUndefined();
});

test("a Gemini client's body through the IR and back to Gemini: its signature, calls and responses kept", async () => {
  const ir = decodeRequest(await fixture("request-gemini-cli.json").json(), "gemini-3-pro-preview");
  const body = encodeRequest(ir, "g", "gemini-3-pro-preview");
  expect(body.contents).toEqual([
    { role: "user", parts: [{ text: "List the files here." }] },
    { role: "model", parts: [{ functionCall: { id: "call-1", name: "list_directory", args: { path: "." } }, thoughtSignature: "CiIBsigFromCli" }] },
    { role: "user", parts: [{ functionResponse: { id: "call-1", name: "list_directory", response: { output: "a.txt\nb.txt" } } }] },
  ]);
});

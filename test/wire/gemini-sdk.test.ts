import { afterAll, beforeEach, describe, expect, test } from "bun:test";
import { ApiError, FunctionCallingConfigMode, GoogleGenAI, Type } from "@google/genai";
import { GatewayError } from "../../src/errors.ts";
import type { ChatReply, ChatRequest, StreamEvent } from "../../src/ir.ts";
import { sseText } from "../../src/lib/sse.ts";
import { decodeRequest } from "../../src/wire/gemini/decode-request.ts";
import { errorBody } from "../../src/wire/gemini/errors.ts";
import { encodeModelList } from "../../src/wire/gemini/models.ts";
import { geminiKey, geminiPath } from "../../src/wire/gemini/path.ts";
import { encodeReply } from "../../src/wire/gemini/reply.ts";
import { streamEncoder } from "../../src/wire/gemini/stream.ts";

/**
 * The client side of the Gemini wire module checked by Google's own SDK: what `@google/genai`
 * sends decodes into the IR, and what the module writes (replies, streams, errors) the SDK reads.
 * A small server here plays the front door with nothing but the wire module.
 */
const state: { reply?: ChatReply; events?: StreamEvent[]; error?: GatewayError; decoded?: ChatRequest; path?: string } = {};
beforeEach(() => {
  for (const key of Object.keys(state)) delete state[key as keyof typeof state];
});
const server = Bun.serve({
  hostname: "127.0.0.1",
  port: 0,
  async fetch(request) {
    const url = new URL(request.url);
    state.path = url.pathname + url.search;
    if (request.method === "GET" && /^\/v1(beta)?\/models$/.test(url.pathname)) {
      return Response.json(encodeModelList(["gemini-2.5-pro", "gemini-2.5-flash", "gemini-embedding-001"], Number(url.searchParams.get("pageSize")), url.searchParams.get("pageToken")));
    }
    const match = /^\/v1(beta)?\/models\/([^:]+):(\w+)$/.exec(url.pathname)!;
    const [model, method] = [match[2]!, match[3]!];
    state.decoded = decodeRequest(await request.json(), model, method === "streamGenerateContent");
    if (state.error) return Response.json(errorBody(state.error), { status: state.error.status });
    if (method === "streamGenerateContent") {
      const encoder = streamEncoder(model);
      return new Response(sseText([...state.events!.flatMap((e) => encoder.event(e)), ...encoder.end()]), { headers: { "content-type": "text/event-stream" } });
    }
    return Response.json(encodeReply(state.reply!, model));
  },
});
afterAll(() => server.stop(true));
const ai = new GoogleGenAI({ apiKey: "parley-key", httpOptions: { baseUrl: `http://127.0.0.1:${server.port}` } });

describe("@google/genai against the Gemini wire module", () => {
  test("generateContent: the SDK's body decodes into the IR; the reply reads as text, calls and usage", async () => {
    state.reply = {
      id: "resp-1",
      content: [{ type: "text", text: "Let me check." }, { type: "reasoning", text: "", signature: "gemini:SigForCall" }, { type: "tool_call", id: "call-7", name: "get_weather", arguments: '{"city":"Paris"}' }],
      finish: { reason: "tool_calls", raw: "tool_use" },
      usage: { input: { total: 120, cacheRead: 100, cacheWrite: 0 }, output: 9 },
    };
    const response = await ai.models.generateContent({
      model: "gemini-2.5-pro",
      contents: "Weather in Paris?",
      config: {
        systemInstruction: "Be brief.",
        temperature: 0.2,
        maxOutputTokens: 256,
        tools: [{ functionDeclarations: [{ name: "get_weather", description: "Weather", parameters: { type: Type.OBJECT, properties: { city: { type: Type.STRING } }, required: ["city"] } }] }],
        toolConfig: { functionCallingConfig: { mode: FunctionCallingConfigMode.ANY } },
        thinkingConfig: { includeThoughts: true },
      },
    });
    expect(state.path).toMatch(/^\/v1(beta)?\/models\/gemini-2.5-pro:generateContent$/);
    expect(state.decoded).toMatchObject({
      model: "gemini-2.5-pro", system: ["Be brief."], temperature: 0.2, maxTokens: 256, toolChoice: { type: "required" }, thinking: true,
      messages: [{ role: "user", content: [{ type: "text", text: "Weather in Paris?" }] }],
      tools: [{ name: "get_weather", parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } }],
    });
    expect(response.text).toBe("Let me check.");
    expect(response.functionCalls).toEqual([{ id: "call-7", name: "get_weather", args: { city: "Paris" } }]);
    expect(response.candidates![0]!.content!.parts![1]!.thoughtSignature).toBe("SigForCall");
    expect(response.candidates![0]!.finishReason).toBe("STOP" as never);
    expect(response.usageMetadata).toMatchObject({ promptTokenCount: 120, cachedContentTokenCount: 100, candidatesTokenCount: 9, totalTokenCount: 129 });
    expect(response.responseId).toBe("resp-1");
  });

  test("the SDK's history (a call with its signature, its response) comes back into the IR", async () => {
    state.reply = { content: [{ type: "text", text: "It is sunny." }], finish: { reason: "stop", raw: "end_turn" } };
    const response = await ai.models.generateContent({
      model: "gemini-3-pro-preview",
      contents: [
        { role: "user", parts: [{ text: "Weather in Paris?" }] },
        { role: "model", parts: [{ functionCall: { id: "call-7", name: "get_weather", args: { city: "Paris" } }, thoughtSignature: "SigForCall" }] },
        { role: "user", parts: [{ functionResponse: { id: "call-7", name: "get_weather", response: { output: "sunny" } } }] },
      ],
    });
    expect(response.text).toBe("It is sunny.");
    expect(state.decoded!.messages[1]!.content).toEqual([{ type: "reasoning", text: "", signature: "gemini:SigForCall" }, { type: "tool_call", id: "call-7", name: "get_weather", arguments: '{"city":"Paris"}' }]);
    expect(state.decoded!.messages[2]!.content).toEqual([{ type: "tool_result", toolCallId: "call-7", content: "sunny" }]);
  });

  test("generateContentStream reads the stream as Gemini writes it", async () => {
    state.events = [
      { type: "start", usage: { input: { total: 40, cacheRead: 0, cacheWrite: 0 } } },
      { type: "text", text: "Hel" },
      { type: "text", text: "lo" },
      { type: "tool_call", index: 0, id: "c1", name: "f" },
      { type: "tool_args", index: 0, text: '{"x":true}' },
      { type: "finish", finish: { reason: "tool_calls", raw: "tool_calls" } },
      { type: "usage", usage: { output: 3 } },
    ];
    const stream = await ai.models.generateContentStream({ model: "gemini-2.5-flash", contents: "Hi" });
    let text = "";
    const calls: unknown[] = [];
    let last: { finishReason?: unknown; usage?: unknown } = {};
    for await (const chunk of stream) {
      text += chunk.text ?? "";
      calls.push(...(chunk.functionCalls ?? []));
      last = { finishReason: chunk.candidates?.[0]?.finishReason, usage: chunk.usageMetadata };
    }
    expect(state.path).toMatch(/:streamGenerateContent\?alt=sse$/);
    expect(state.decoded!.stream).toBe(true);
    expect(text).toBe("Hello");
    expect(calls).toEqual([{ id: "c1", name: "f", args: { x: true } }]);
    expect(last).toEqual({ finishReason: "STOP", usage: { promptTokenCount: 40, candidatesTokenCount: 3, totalTokenCount: 43 } });
  });

  test("errors in Google's envelope reach the SDK as ApiError with their status", async () => {
    state.error = new GatewayError(429, "rate_limit_error", "Upstream is rate limiting requests.");
    const error = await ai.models.generateContent({ model: "gemini-2.5-flash", contents: "Hi" }).catch((e) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect(error.status).toBe(429);
    expect(error.message).toContain("RESOURCE_EXHAUSTED");
    expect(error.message).toContain("rate limiting");
  });

  test("models.list reads every page of Gemini's list", async () => {
    const pager = await ai.models.list({ config: { pageSize: 2 } });
    const names: string[] = [];
    for await (const model of pager) names.push(model.name!);
    expect(names).toEqual(["models/gemini-2.5-pro", "models/gemini-2.5-flash", "models/gemini-embedding-001"]);
  });

  test("paths and keys as the SDK and Gemini CLI send them", () => {
    expect(geminiPath("/v1beta/models/gemini-2.5-pro:streamGenerateContent")).toEqual({ version: "v1beta", model: "gemini-2.5-pro", method: "streamGenerateContent" });
    expect(geminiPath("/v1/models/gemini-2.5-pro:countTokens")).toEqual({ version: "v1", model: "gemini-2.5-pro", method: "countTokens" });
    expect(geminiPath("/v1/chat/completions")).toBeUndefined();
    const url = new URL("http://x/v1beta/models?key=k-query");
    expect(geminiKey(new Headers({ "x-goog-api-key": "k-header" }), url)).toBe("k-header");
    expect(geminiKey(new Headers(), url)).toBe("k-query");
    expect(geminiKey(new Headers({ authorization: "Bearer k-bearer" }), new URL("http://x/"))).toBe("k-bearer");
  });
});

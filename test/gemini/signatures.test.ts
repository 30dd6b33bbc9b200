/**
 * Multi-turn tool use with Gemini 3 through parley (contract 23): the fake Gemini signs each function
 * call and, as Gemini 3 does, answers 400 to a later turn that sends the call back without its
 * thoughtSignature. Clients of every dialect get the second turn answered; Claude never sees a
 * Gemini signature.
 */
import { afterAll, beforeEach, expect, test } from "bun:test";
import { GoogleGenAI, Type, type Content } from "@google/genai";
import { TEST_KEY } from "../lib/app.ts";
import { readSse } from "../lib/gateway.ts";
import { reply } from "../lib/fake-gemini.ts";
import { startGoogleGateway } from "../lib/google-gateway.ts";

const gateway = await startGoogleGateway({ UPSTREAM_RETRIES: "0", RATE_LIMIT_RPM: "0" });
afterAll(() => gateway.stop());
beforeEach(() => gateway.reset());
const base = gateway.listen();
const MODEL = "gemini-3-pro-preview";
const weather = (city: string) => reply([{ functionCall: { name: "get_weather", args: { city } } }], "STOP", MODEL);
const OPENAI_TOOLS = [{ type: "function", function: { name: "get_weather", parameters: { type: "object", properties: { city: { type: "string" } } } } }];
const auth = { authorization: `Bearer ${TEST_KEY}`, "content-type": "application/json" };
const post = (path: string, body: unknown, headers: Record<string, string> = auth) => fetch(`${base}${path}`, { method: "POST", headers, body: JSON.stringify(body) });
/** The call as Gemini got it back on the second turn. */
const sentBack = () => gateway.gemini.last().body.contents[1].parts.find((p: any) => p.functionCall);

test("an OpenAI client: parley keeps the signature against the call's id, and the second turn is answered", async () => {
  gateway.gemini.next({ kind: "json", body: weather("Oslo") });
  const first = { model: MODEL, tools: OPENAI_TOOLS, messages: [{ role: "user", content: "Weather in Oslo?" }] };
  const answer = await (await post("/v1/chat/completions", first)).json();
  const message = answer.choices[0].message;
  expect(JSON.stringify(message)).not.toContain("thoughtSignature");
  const second = await post("/v1/chat/completions", { ...first, messages: [...first.messages, message, { role: "tool", tool_call_id: message.tool_calls[0].id, content: "5°C" }] });
  expect(second.status).toBe(200);
  expect(sentBack().thoughtSignature).toBe(gateway.gemini.signatures.get('get_weather:{"city":"Oslo"}'));
});

test("an OpenAI client that streamed the first turn", async () => {
  gateway.gemini.next({ kind: "stream", chunks: [weather("Rome")] });
  const first = { model: MODEL, stream: true, tools: OPENAI_TOOLS, messages: [{ role: "user", content: "Weather in Rome?" }] };
  const events = await readSse(await post("/v1/chat/completions", first));
  const call = events.map((e) => (e.data as any)?.choices?.[0]?.delta?.tool_calls?.[0]).find((c) => c?.id);
  const message = { role: "assistant", content: null, tool_calls: [{ id: call.id, type: "function", function: { name: "get_weather", arguments: '{"city":"Rome"}' } }] };
  const second = await post("/v1/chat/completions", { ...first, stream: false, messages: [...first.messages, message, { role: "tool", tool_call_id: call.id, content: "20°C" }] });
  expect(second.status).toBe(200);
  expect(sentBack().thoughtSignature).toBe(gateway.gemini.signatures.get('get_weather:{"city":"Rome"}'));
});

test("an Anthropic client: the signature rides in a thinking block of its own history", async () => {
  gateway.gemini.next({ kind: "json", body: weather("Lima") });
  const headers = { ...auth, "anthropic-version": "2023-06-01" };
  const first = { model: MODEL, max_tokens: 100, tools: [{ name: "get_weather", input_schema: { type: "object" } }], messages: [{ role: "user", content: "Weather in Lima?" }] };
  const answer = await (await post("/v1/messages", first, headers)).json();
  expect(answer.content.map((b: any) => b.type)).toEqual(["thinking", "tool_use"]);
  const toolUse = answer.content[1];
  const second = await post("/v1/messages", { ...first, messages: [...first.messages, { role: "assistant", content: answer.content }, { role: "user", content: [{ type: "tool_result", tool_use_id: toolUse.id, content: "22°C" }] }] }, headers);
  expect(second.status).toBe(200);
  expect(sentBack().thoughtSignature).toBe(gateway.gemini.signatures.get('get_weather:{"city":"Lima"}'));
});

const GEMINI_TOOLS = [{ functionDeclarations: [{ name: "get_weather", parameters: { type: Type.OBJECT, properties: { city: { type: Type.STRING } } } }] }];

test("a Gemini client (the SDK): its own history carries the signature, to Gemini and to Vertex", async () => {
  const ai = new GoogleGenAI({ apiKey: TEST_KEY, httpOptions: { baseUrl: base } });
  for (const [fake, city] of [[gateway.gemini, "Oslo"], [gateway.vertex.gemini, "Bonn"]] as const) {
    // The first turn goes to the Gemini API or, when it is down, to Vertex.
    if (fake !== gateway.gemini) gateway.gemini.next({ kind: "error", status: 503, message: "down" }, { kind: "error", status: 503, message: "down" });
    fake.next({ kind: "json", body: weather(city) });
    const contents: Content[] = [{ role: "user", parts: [{ text: `Weather in ${city}?` }] }];
    const first = await ai.models.generateContent({ model: MODEL, contents, config: { tools: GEMINI_TOOLS } });
    const call = first.candidates![0]!.content!;
    expect(call.parts![0]!.thoughtSignature).toBeString();
    const history = [...contents, call, { role: "user", parts: [{ functionResponse: { name: "get_weather", response: { temp: 5 } } }] }];
    const second = await ai.models.generateContent({ model: MODEL, contents: history, config: { tools: GEMINI_TOOLS } });
    expect(second.text).toBe("Hello from Gemini");
    expect(fake.last().body.contents[1].parts[0].thoughtSignature).toBe(call.parts![0]!.thoughtSignature!);
  }
});

test("a Gemini client's signed history sent to Claude: the signature stays out of what Claude gets", async () => {
  const ai = new GoogleGenAI({ apiKey: TEST_KEY, httpOptions: { baseUrl: base } });
  const history: Content[] = [
    { role: "user", parts: [{ text: "Weather in Oslo?" }] },
    { role: "model", parts: [{ functionCall: { id: "c1", name: "get_weather", args: { city: "Oslo" } }, thoughtSignature: "c2lnLWZyb20tZ2VtaW5p" }] },
    { role: "user", parts: [{ functionResponse: { id: "c1", name: "get_weather", response: { temp: 5 } } }] },
  ];
  const answer = await ai.models.generateContent({ model: "claude-sonnet-4-5", contents: history, config: { tools: GEMINI_TOOLS } });
  expect(answer.text).toBe("Hello from Anthropic");
  const sent = JSON.stringify(gateway.anthropic.last().body.messages);
  expect(sent).toContain("tool_use");
  expect(sent).not.toContain("thinking");
  expect(sent).not.toContain("c2lnLWZyb20tZ2VtaW5p");
});

import { afterAll, beforeEach, expect, test } from "bun:test";
import type { Json } from "../../src/lib/read.ts";
import { geminiKind } from "../../src/providers/gemini/kind.ts";
import type { Upstream } from "../../src/providers/kind.ts";
import type { GeminiSettings } from "../../src/providers/gemini/settings.ts";
import { anthropic } from "../../src/wire/anthropic/codec.ts";
import { rememberSignature } from "../../src/wire/gemini/signatures.ts";
import { openaiChat } from "../../src/wire/openai-chat/codec.ts";
import { FAKE_GEMINI_KEY, reply, startFakeGemini } from "../lib/fake-gemini.ts";

/**
 * A function call's thoughtSignature goes back to Gemini whatever the client's dialect (contract 23):
 * two turns of a tool call through each client codec and the gemini kind, against a fake Gemini that
 * refuses a call sent back without the signature it gave.
 */
const fake = await startFakeGemini();
afterAll(() => fake.stop());
beforeEach(() => fake.reset());
const upstream: Upstream<GeminiSettings> = { name: "gem", kind: "gemini" as never, settings: geminiKind.settings({ api_key: FAKE_GEMINI_KEY, base_url: fake.url }), discover: true, timeoutMs: 5000, retries: 0, headers: {}, origin: {} };
const provider = await geminiKind.build(upstream);
const signal = new AbortController().signal;
const MODEL = "gemini-3-pro-preview";
const weather = (city: string) => reply([{ functionCall: { name: "get_weather", args: { city } } }], "STOP", MODEL);
const sentCall = () => fake.last().body.contents[1].parts[0];
/** Forgets every signature kept in this process (a restart, another gateway), so only the client's own history carries it. */
const forgetKept = () => {
  for (let i = 0; i < 5000; i++) rememberSignature(`evict-${i}`, "x");
};

test("an Anthropic client (Claude Code): the signature rides in its thinking block, with nothing kept in parley", async () => {
  fake.next({ kind: "json", body: weather("Paris") });
  const tools = [{ name: "get_weather", input_schema: { type: "object", properties: { city: { type: "string" } } } }];
  const first: Json = { model: MODEL, max_tokens: 100, tools, messages: [{ role: "user", content: "Weather in Paris?" }] };
  const answer = anthropic.encodeReply(await provider.complete(anthropic.decodeRequest(first), MODEL, signal), MODEL) as Json;
  const content = answer.content as Json[];
  expect(content.map((b) => b.type)).toEqual(["thinking", "tool_use"]);
  forgetKept();
  const second: Json = { ...first, messages: [...(first.messages as Json[]), { role: "assistant", content }, { role: "user", content: [{ type: "tool_result", tool_use_id: content[1]!.id, content: "18°C" }] }] };
  const final = await provider.complete(anthropic.decodeRequest(JSON.parse(JSON.stringify(second))), MODEL, signal);
  expect(final.content).toEqual([{ type: "text", text: "Hello from Gemini" }]);
  expect(sentCall().thoughtSignature).toBe(fake.signatures.get('get_weather:{"city":"Paris"}'));
});

test("an OpenAI client (Chat Completions): no place for it in the dialect, so parley keeps it against the call's id", async () => {
  fake.next({ kind: "json", body: weather("Oslo") });
  const tools = [{ type: "function", function: { name: "get_weather", parameters: { type: "object", properties: { city: { type: "string" } } } } }];
  const first: Json = { model: MODEL, tools, messages: [{ role: "user", content: "Weather in Oslo?" }] };
  const answer = openaiChat.encodeReply(await provider.complete(openaiChat.decodeRequest(first), MODEL, signal), MODEL) as Json;
  const message = (answer.choices as Json[])[0]!.message as Json;
  const call = (message.tool_calls as Json[])[0]!;
  const second: Json = { ...first, messages: [...(first.messages as Json[]), message, { role: "tool", tool_call_id: call.id, content: "5°C" }] };
  await provider.complete(openaiChat.decodeRequest(JSON.parse(JSON.stringify(second))), MODEL, signal);
  expect(sentCall().thoughtSignature).toBe(fake.signatures.get('get_weather:{"city":"Oslo"}'));
});

import {
  AccessDeniedException, BedrockRuntimeClient, ConverseCommand, ConverseStreamCommand, InvokeModelCommand,
  InvokeModelWithResponseStreamCommand, ResourceNotFoundException, ServiceUnavailableException, ThrottlingException,
  ValidationException, type ConverseStreamOutput, type Message, type Tool,
} from "@aws-sdk/client-bedrock-runtime";
import { NodeHttpHandler } from "@smithy/node-http-handler";
import { afterAll, beforeEach, describe, expect, test } from "bun:test";
import { converseEvents, converseReply } from "../lib/fake-bedrock.ts";
import { startGateway, TEST_KEY } from "../lib/gateway.ts";
import { recordsOf } from "../usage/lib.ts";

/**
 * The AWS SDK's Bedrock Runtime client pointed at a listening parley (contract 17), with a parley
 * key as its bearer token (AWS_BEARER_TOKEN_BEDROCK), against Bedrock (passed through), OpenAI and the mock.
 */
const gateway = await startGateway({ UPSTREAM_RETRIES: "0", RATE_LIMIT_RPM: "0", API_KEYS: "reader=sk-models-only-00000001:models" });
const endpoint = gateway.listen();
const clientWith = (token: string) =>
  new BedrockRuntimeClient({ endpoint, region: "us-east-1", token: { token }, authSchemePreference: ["httpBearerAuth"], requestHandler: new NodeHttpHandler(), maxAttempts: 1 });
const client = clientWith(TEST_KEY);
afterAll(() => gateway.stop());
beforeEach(() => gateway.reset());

const CLAUDE = "us.anthropic.claude-sonnet-4-5-20250929-v1:0";
const NOVA = "amazon.nova-micro-v1:0";
const hello: Message[] = [{ role: "user", content: [{ text: "Hello" }] }];
const claudeBody = (extra: Record<string, unknown> = {}) =>
  JSON.stringify({ anthropic_version: "bedrock-2023-05-31", max_tokens: 100, messages: [{ role: "user", content: "Hello" }], ...extra });
const decode = (bytes: Uint8Array | undefined) => JSON.parse(new TextDecoder().decode(bytes));

async function conversed(stream: AsyncIterable<ConverseStreamOutput>) {
  const events: ConverseStreamOutput[] = [];
  for await (const event of stream) events.push(event);
  const text = events.map((e) => e.contentBlockDelta?.delta?.text ?? "").join("");
  return { events, text };
}

describe.each([
  ["Bedrock (passed through)", NOVA, "Hello from Converse"],
  ["OpenAI", "gpt-4o", "Hello from OpenAI"],
  ["the mock", "mock", "Hello"],
])("Converse to %s", (_name, modelId, expected) => {
  test("Converse answers in Converse's shape, with usage", async () => {
    const reply = await client.send(new ConverseCommand({ modelId, system: [{ text: "Be brief." }], messages: hello, inferenceConfig: { maxTokens: 50 } }));
    expect(reply.output?.message?.role).toBe("assistant");
    expect(reply.output?.message?.content?.map((b) => b.text).join("")).toStartWith(expected);
    expect(reply.stopReason).toBe("end_turn");
    expect(reply.usage?.outputTokens).toBeGreaterThan(0);
  });

  test("ConverseStream streams its events in order, ending with metadata", async () => {
    const reply = await client.send(new ConverseStreamCommand({ modelId, messages: hello }));
    const { events, text } = await conversed(reply.stream!);
    expect(text).toStartWith(expected);
    expect(Object.keys(events[0]!)).toEqual(["messageStart"]);
    expect(events.at(-2)?.messageStop?.stopReason).toBe("end_turn");
    expect(events.at(-1)?.metadata?.usage?.outputTokens).toBeGreaterThan(0);
  });
});

describe.each([
  ["Bedrock (passed through)", CLAUDE, "Hello from Claude"],
  ["OpenAI", "gpt-4o", "Hello from OpenAI"],
  ["the mock", "mock", "Hello"],
])("InvokeModel with a Claude body to %s", (_name, modelId, expected) => {
  test("InvokeModel answers with Claude's message", async () => {
    const reply = await client.send(new InvokeModelCommand({ modelId, body: claudeBody(), contentType: "application/json" }));
    const message = decode(reply.body);
    expect(message.type).toBe("message");
    expect(message.content.map((b: { text?: string }) => b.text ?? "").join("")).toStartWith(expected);
    expect(message.stop_reason).toBe("end_turn");
  });

  test("InvokeModelWithResponseStream sends Claude's events as chunks", async () => {
    const reply = await client.send(new InvokeModelWithResponseStreamCommand({ modelId, body: claudeBody(), contentType: "application/json" }));
    const events: { type: string; delta?: { text?: string } }[] = [];
    for await (const part of reply.body!) if (part.chunk) events.push(decode(part.chunk.bytes));
    expect(events[0]!.type).toBe("message_start");
    expect(events.at(-1)!.type).toBe("message_stop");
    expect(events.map((e) => e.delta?.text ?? "").join("")).toStartWith(expected);
  });
});

describe("to a Bedrock upstream, the call is passed through", () => {
  test("the body goes up byte for byte, re-signed with the upstream's credentials; the answer comes back as sent", async () => {
    const body = claudeBody({ temperature: 0.5, anthropic_beta: ["context-1m-2025-08-07"], "  odd key ": { nested: [1, 2] } });
    gateway.bedrock.next({ kind: "json", body: { id: "msg_x", type: "message", role: "assistant", model: "claude", content: [{ type: "text", text: "hi" }], stop_reason: "end_turn", stop_sequence: null, usage: { input_tokens: 3, output_tokens: 1 }, extra: "kept" } });
    const reply = await client.send(new InvokeModelCommand({ modelId: CLAUDE, body, contentType: "application/json" }));
    const [received] = gateway.bedrock.received;
    expect(received!.text).toBe(body);
    expect(received!.modelId).toBe(CLAUDE);
    expect(received!.action).toBe("invoke");
    expect(received!.headers.get("authorization")).toStartWith("AWS4-HMAC-SHA256 Credential=AKIAFAKEFAKEFAKE/");
    expect(gateway.bedrock.refused).toEqual([]);
    expect(decode(reply.body).extra).toBe("kept");
  });

  test("an ARN as the model id, URL-encoded in the path, reaches Bedrock as that ARN", async () => {
    const arn = "arn:aws:bedrock:us-east-1:123456789012:application-inference-profile/nova-team";
    await client.send(new ConverseCommand({ modelId: arn, messages: hello }));
    expect(gateway.bedrock.received[0]!.modelId).toBe(arn);
    expect(gateway.bedrock.received[0]!.action).toBe("converse");
  });

  test("a body no converter reads (Nova's own) still goes to Bedrock; to another upstream it is a ValidationException", async () => {
    const body = JSON.stringify({ messages: [{ role: "user", content: [{ text: "Hello" }] }], inferenceConfig: { maxTokens: 10 } });
    gateway.bedrock.next({ kind: "json", body: { output: { message: { role: "assistant", content: [{ text: "nova" }] } }, stopReason: "end_turn", usage: { inputTokens: 1, outputTokens: 1 } } });
    const reply = await client.send(new InvokeModelCommand({ modelId: NOVA, body }));
    expect(decode(reply.body).output.message.content[0].text).toBe("nova");
    expect(gateway.bedrock.received[0]!.text).toBe(body);
    const refused = await client.send(new InvokeModelCommand({ modelId: "gpt-4o", body })).catch((e) => e);
    expect(refused).toBeInstanceOf(ValidationException);
    expect(refused.message).toContain("use Converse");
  });

  test("Bedrock's throttling, as the stream's first frame, reaches the client as a ThrottlingException", async () => {
    gateway.bedrock.next({ kind: "stream", events: converseEvents(), exceptionAfter: 0, exception: "throttlingException" });
    const error = await client.send(new ConverseStreamCommand({ modelId: NOVA, messages: hello })).catch((e) => e);
    expect(error).toBeInstanceOf(ThrottlingException);
  });

  test("a stream that breaks midway ends with an exception frame the SDK raises", async () => {
    gateway.bedrock.next({ kind: "stream", events: converseEvents(["a", "b", "c", "d"]), breakAfter: 3, gapMs: 30 });
    const reply = await client.send(new ConverseStreamCommand({ modelId: NOVA, messages: hello }));
    const seen: string[] = [];
    const error = await (async () => {
      for await (const event of reply.stream!) seen.push(event.contentBlockDelta?.delta?.text ?? "");
    })().catch((e) => e);
    expect(seen.join("")).toBe("ab");
    expect(error?.name).toBe("ServiceUnavailableException");
  });

  test("a ValidationException from Bedrock keeps Bedrock's words", async () => {
    gateway.bedrock.next({ kind: "error", status: 400, type: "ValidationException", message: "messages.0: field required" });
    const error = await client.send(new ConverseCommand({ modelId: NOVA, messages: hello })).catch((e) => e);
    expect(error).toBeInstanceOf(ValidationException);
    expect(error.message).toBe("messages.0: field required");
  });
});

describe("converted routes", () => {
  const weather: Tool = { toolSpec: { name: "get_weather", description: "Weather", inputSchema: { json: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } } } };

  test("tool use round trip with Converse against OpenAI: the call, then its result", async () => {
    gateway.openai.next({ kind: "reply", toolCalls: [{ id: "call_1", name: "get_weather", arguments: '{"city":"Paris"}' }] });
    const first = await client.send(new ConverseCommand({ modelId: "gpt-4o", messages: [{ role: "user", content: [{ text: "Weather in Paris?" }] }], toolConfig: { tools: [weather] } }));
    expect(first.stopReason).toBe("tool_use");
    const use = first.output!.message!.content!.find((b) => b.toolUse)!.toolUse!;
    expect(use).toEqual({ toolUseId: "call_1", name: "get_weather", input: { city: "Paris" } });
    const second = await client.send(new ConverseCommand({
      modelId: "gpt-4o",
      toolConfig: { tools: [weather] },
      messages: [
        { role: "user", content: [{ text: "Weather in Paris?" }] },
        first.output!.message!,
        { role: "user", content: [{ toolResult: { toolUseId: "call_1", content: [{ text: "sunny" }] } }] },
      ],
    }));
    expect(second.stopReason).toBe("end_turn");
    const sent = gateway.openai.received[1]!.body;
    expect(sent.tools[0].function.name).toBe("get_weather");
    expect(sent.messages.at(-1)).toEqual({ role: "tool", tool_call_id: "call_1", content: "sunny" });
  });

  test("a streamed tool call with ConverseStream: contentBlockStart names it, deltas carry its input", async () => {
    gateway.openai.next({ kind: "stream", chunks: [], toolCalls: [{ id: "call_2", name: "get_weather", arguments: ['{"city":', '"Oslo"}'] }] });
    const reply = await client.send(new ConverseStreamCommand({ modelId: "gpt-4o", messages: hello, toolConfig: { tools: [weather] } }));
    const { events } = await conversed(reply.stream!);
    const start = events.find((e) => e.contentBlockStart)!.contentBlockStart!;
    expect(start.start?.toolUse).toEqual({ toolUseId: "call_2", name: "get_weather" });
    const input = events.filter((e) => e.contentBlockDelta?.delta?.toolUse).map((e) => e.contentBlockDelta!.delta!.toolUse!.input).join("");
    expect(JSON.parse(input)).toEqual({ city: "Oslo" });
    expect(events.find((e) => e.messageStop)?.messageStop?.stopReason).toBe("tool_use");
  });

  test("an image, the system text and the inference settings of a Converse request reach OpenAI", async () => {
    const png = new Uint8Array([137, 80, 78, 71, 13, 10, 26, 10]);
    await client.send(new ConverseCommand({
      modelId: "gpt-4o",
      system: [{ text: "Be brief." }],
      inferenceConfig: { maxTokens: 42, temperature: 0.3, stopSequences: ["END"] },
      messages: [{ role: "user", content: [{ text: "What is this?" }, { image: { format: "png", source: { bytes: png } } }] }],
    }));
    const sent = gateway.openai.received[0]!.body;
    expect(sent.messages[0]).toEqual({ role: "system", content: "Be brief." });
    expect(sent.messages[1].content[1].image_url.url).toBe(`data:image/png;base64,${Buffer.from(png).toString("base64")}`);
    expect(sent.max_tokens ?? sent.max_completion_tokens).toBe(42);
    expect([sent.temperature, sent.stop]).toEqual([0.3, ["END"]]);
  });

  test("tool use with the mock", async () => {
    const reply = await client.send(new ConverseCommand({ modelId: "mock/tools", messages: hello, toolConfig: { tools: [weather] } }));
    expect(reply.stopReason).toBe("tool_use");
    expect(reply.output!.message!.content!.find((b) => b.toolUse)!.toolUse!.name).toBe("get_weather");
  });

  test("a converted stream that breaks midway ends with an exception frame the SDK raises", async () => {
    gateway.openai.next({ kind: "stream", chunks: ["a", "b", "c"], breakAfter: 3, gapMs: 30 });
    const reply = await client.send(new ConverseStreamCommand({ modelId: "gpt-4o", messages: hello }));
    const seen: string[] = [];
    const error = await (async () => {
      for await (const event of reply.stream!) seen.push(event.contentBlockDelta?.delta?.text ?? "");
    })().catch((e) => e);
    expect(seen.join("")).toBe("ab");
    expect(error?.name).toBe("ServiceUnavailableException");
  });

  test("the same for InvokeModelWithResponseStream", async () => {
    gateway.openai.next({ kind: "stream", chunks: ["a", "b", "c"], breakAfter: 3, gapMs: 30 });
    const reply = await client.send(new InvokeModelWithResponseStreamCommand({ modelId: "gpt-4o", body: claudeBody() }));
    const error = await (async () => {
      for await (const _ of reply.body!);
    })().catch((e) => e);
    expect(error?.name).toBe("ServiceUnavailableException");
  });
});

describe("typed errors", () => {
  test("an unknown model is a ResourceNotFoundException", async () => {
    const error = await client.send(new ConverseCommand({ modelId: "no-such-model", messages: hello })).catch((e) => e);
    expect(error).toBeInstanceOf(ResourceNotFoundException);
    expect(error.$metadata.httpStatusCode).toBe(404);
  });

  test("a wrong key is an AccessDeniedException; a key without the chat scope too", async () => {
    expect(await clientWith("sk-wrong-key-000000000000").send(new ConverseCommand({ modelId: "gpt-4o", messages: hello })).catch((e) => e)).toBeInstanceOf(AccessDeniedException);
    const scoped = await clientWith("sk-models-only-00000001").send(new ConverseCommand({ modelId: "gpt-4o", messages: hello })).catch((e) => e);
    expect(scoped).toBeInstanceOf(AccessDeniedException);
    expect(scoped.message).toContain("'chat' scope");
  });

  test("a body that is no Converse request is a ValidationException", async () => {
    const error = await client.send(new ConverseCommand({ modelId: "gpt-4o", messages: [{ role: "system" as "user", content: [{ text: "x" }] }] })).catch((e) => e);
    expect(error).toBeInstanceOf(ValidationException);
  });

  test("the upstream's 429 is a ThrottlingException, its 503 a ServiceUnavailableException", async () => {
    gateway.openai.next({ kind: "error", status: 429, message: "slow down" });
    expect(await client.send(new ConverseCommand({ modelId: "gpt-4o", messages: hello })).catch((e) => e)).toBeInstanceOf(ThrottlingException);
    gateway.openai.next({ kind: "error", status: 503, message: "down" });
    expect(await client.send(new ConverseCommand({ modelId: "gpt-4o", messages: hello })).catch((e) => e)).toBeInstanceOf(ServiceUnavailableException);
  });

  test("a signed request, with no INGRESS_AWS_CREDENTIALS set, is refused with a word on bearer keys", async () => {
    const signed = new BedrockRuntimeClient({ endpoint, region: "us-east-1", credentials: { accessKeyId: "AKIAINGRESS", secretAccessKey: "s" }, requestHandler: new NodeHttpHandler(), maxAttempts: 1 });
    const error = await signed.send(new ConverseCommand({ modelId: "gpt-4o", messages: hello })).catch((e) => e);
    expect(error).toBeInstanceOf(AccessDeniedException);
    expect(error.message).toContain("bearer");
  });
});

test("usage is recorded for Bedrock operations as for every chat endpoint", async () => {
  await client.send(new ConverseCommand({ modelId: "gpt-4o", messages: hello }));
  gateway.bedrock.next({ kind: "json", body: converseReply() });
  await client.send(new ConverseCommand({ modelId: NOVA, messages: hello }));
  const reply = await client.send(new ConverseStreamCommand({ modelId: NOVA, messages: hello }));
  await conversed(reply.stream!);
  const invoked = await client.send(new InvokeModelWithResponseStreamCommand({ modelId: CLAUDE, body: claudeBody() }));
  for await (const _ of invoked.body!);
  const records = await recordsOf(gateway.config, () => gateway.call("/v1/usage"));
  const mine = records.filter((r) => r.endpoint.startsWith("/model/")).slice(-4);
  expect(mine.map((r) => [r.endpoint, r.model_requested, r.input_tokens, r.output_tokens, r.outcome])).toEqual([
    ["/model/{modelId}/converse", "gpt-4o", 11, 7, "ok"],
    ["/model/{modelId}/converse", NOVA, 15, 6, "ok"],
    ["/model/{modelId}/converse-stream", NOVA, 15, 6, "ok"],
    // Bedrock's invocation metrics on the passed-through stream's last chunk.
    ["/model/{modelId}/invoke-with-response-stream", CLAUDE, 13, 5, "ok"],
  ]);
});

test("GET /inference-profiles and /foundation-models answer in Bedrock's shape from what parley routes", async () => {
  const headers = { authorization: `Bearer ${TEST_KEY}` };
  // Claude Code in Bedrock mode asks this first.
  const profiles = await (await fetch(`${endpoint}/inference-profiles?type=SYSTEM_DEFINED`, { headers })).json();
  const ids = profiles.inferenceProfileSummaries.map((p: { inferenceProfileId: string }) => p.inferenceProfileId);
  expect(ids).toContain(CLAUDE);
  expect(profiles.inferenceProfileSummaries[0]).toMatchObject({ status: "ACTIVE", type: "SYSTEM_DEFINED", models: [expect.objectContaining({ modelArn: expect.stringContaining(":foundation-model/") })] });
  expect((await (await fetch(`${endpoint}/inference-profiles?type=APPLICATION`, { headers })).json()).inferenceProfileSummaries).toEqual([]);
  const models = await (await fetch(`${endpoint}/foundation-models`, { headers })).json();
  expect(models.modelSummaries.map((m: { modelId: string }) => m.modelId)).toContain("claude-sonnet-4-5-20250929");
  const missing = await fetch(`${endpoint}/inference-profiles/nope`, { headers });
  expect(missing.status).toBe(404);
  expect(missing.headers.get("x-amzn-errortype")).toStartWith("ResourceNotFoundException");
});

describe("a passthrough keeps the client's Bedrock headers", () => {
  test("a guardrail, its version, trace and latency reach Bedrock (a guardrail left behind would be silently off)", async () => {
    gateway.bedrock.next({ kind: "json", body: { inputTextTokenCount: 3, results: [{ tokenCount: 2, outputText: "hi", completionReason: "FINISH" }] } });
    await client.send(new InvokeModelCommand({ modelId: "amazon.titan-text-express-v1", body: JSON.stringify({ inputText: "hi" }), contentType: "application/json", guardrailIdentifier: "gr-123", guardrailVersion: "1", trace: "ENABLED", performanceConfigLatency: "optimized" }));
    const sent = gateway.bedrock.received.at(-1)!.headers;
    expect({ id: sent.get("x-amzn-bedrock-guardrailidentifier"), version: sent.get("x-amzn-bedrock-guardrailversion"), trace: sent.get("x-amzn-bedrock-trace") }).toEqual({ id: "gr-123", version: "1", trace: "ENABLED" });
  });
});

test("Converse fields only Bedrock can honour are refused on a converted route, never dropped (a guardrail would be off)", async () => {
  const error = await client.send(new ConverseCommand({ modelId: "mock", messages: [{ role: "user", content: [{ text: "hi" }] }], guardrailConfig: { guardrailIdentifier: "gr-1", guardrailVersion: "1" } })).catch((e) => e);
  expect(error).toBeInstanceOf(ValidationException);
  expect(error.message).toContain("guardrailConfig");
  const system = await client.send(new ConverseCommand({ modelId: "mock", messages: [{ role: "user", content: [{ text: "hi" }] }], system: [{ text: 7 as unknown as string }] })).catch((e) => e);
  expect(system).toBeInstanceOf(ValidationException);
});
